"""The report of real runs: the dialogue as replayed, each predicted turn with the real turn, its
per-item scores and the memory it recalled, the store after each session, problems, a sweep's
runs table, and a comparison ordered by the largest per-item difference. Values are checked
against the run's own files, read here independently of recallbench.view."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from recallbench.records import Episode, Prediction, read_jsonl
from recallbench.view import compare_runs, episode_views, load_run, write_report
from recallbench.view.html import anchor, num


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _scores(run_dir: Path) -> dict[tuple[str, str], float]:
    rows = [json.loads(line) for line in (run_dir / "scores.jsonl").open(encoding="utf-8")]
    return {(r["pred_id"], r["metric"]): r["value"] for r in rows}


def test_the_runner_keeps_the_replayed_dialogue(view_runs):
    run_dir = view_runs["memory_retrieval"]
    preds = read_jsonl(run_dir / "predictions.jsonl", Prediction)
    episodes = [
        Episode.from_dict(json.loads(p.read_text()))
        for p in sorted((run_dir / "episodes").glob("*.json"))
    ]
    assert {e.episode_id for e in episodes} == {p.episode_id for p in preds}
    turns = {t.turn_id: t.text for e in episodes for t in e.turns()}
    responses = [p for p in preds if p.kind == "response"]
    # every response stands in for a real turn of the dialogue, whose text is its reference
    assert responses and all(turns[p.pred_id.rpartition("/")[0]] == p.reference for p in responses)


def test_each_predicted_turn_shows_its_reference_scores_and_recalled_memory(view_runs):
    run_dir = view_runs["memory_retrieval"]
    run = load_run(run_dir)
    scores = _scores(run_dir)
    views = episode_views(run)
    seen = 0
    for ep in views:
        for session in ep.sessions:
            earlier = {t.turn_id for s in ep.sessions if s.index < session.index for t in s.turns}
            for turn in session.turns:
                for entry in turn.entries:
                    seen += 1
                    assert entry.pred.reference == turn.text
                    want = {m: v for (pid, m), v in scores.items() if pid == entry.pred.pred_id}
                    assert entry.scores == want and "rouge_l" in want
                    # memory retrieval recalls turns of earlier sessions only, never the future
                    assert entry.recalled and set(entry.recalled) <= earlier
    assert seen == sum(p.kind == "response" for p in run.predictions)
    html = write_report(run_dir, run_dir.parent / "one.html")
    soup = _soup(html)
    pred = next(e for ep in views for s in ep.sessions for t in s.turns for e in t.entries)
    box = soup.find(id=anchor(pred.pred.pred_id, "r1-p"))
    assert box is not None and pred.pred.output in box.get_text()
    assert f"rouge_l {num(pred.scores['rouge_l'])}" in box.get_text(" ")
    links = box.select("details.recall a[href]")
    assert [a.get_text() for a in links] == list(pred.recalled)
    for link in links:  # each recalled id links to the turn it came from, which is on the page
        target = soup.find(id=link["href"][1:])
        assert target is not None and target.find(class_="who") is not None


def test_the_store_after_each_session_is_the_runs_snapshot(view_runs):
    run_dir = view_runs["memory_retrieval"]
    run = load_run(run_dir)
    for ep in episode_views(run):
        path = run_dir / "memory" / f"{ep.episode_id}.jsonl"
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        stored = {s.index: [m.item_id for m in s.store] for s in ep.sessions if s.store is not None}
        assert stored == {r["after_session"]: [i["item_id"] for i in r["items"]] for r in rows}


def test_report_is_self_contained_and_escapes_what_the_model_wrote(run_copy):
    run_dir = run_copy("full_history")
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"kind": "response"' in line)
    bad = json.loads(lines[i])
    bad["output"] = '<script>alert("x")</script><img src="https://example.com/x.png">'
    bad["failure"] = "APITimeoutError: the endpoint did not answer"
    lines[i] = json.dumps(bad)
    (run_dir / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    text = write_report(run_dir, run_dir / "r.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(text, "html.parser")
    assert len(soup.find_all("script")) == 1 and not soup.find_all("img")
    assert "&lt;script&gt;alert" in text
    assert not soup.select("link, script[src], iframe, object")
    assert "url(" not in text and "@import" not in text
    problems = soup.select("ul.problems a")
    assert [a.get_text() for a in problems] == [
        f"{bad['pred_id']}: failed: APITimeoutError: the endpoint did not answer"
    ]
    assert soup.find(id=problems[0]["href"][1:]) is not None


def test_a_run_without_its_dialogue_shows_the_turns_its_predictions_quote(run_copy):
    run_dir = run_copy("memory_retrieval")
    shutil.rmtree(run_dir / "episodes")
    run = load_run(run_dir)
    assert "episodes/" in run.missing
    sessions = [s for ep in episode_views(run) for s in ep.sessions if s.turns]
    assert sessions and all(s.quoted_only for s in sessions)
    assert all(t.text == t.entries[0].pred.reference for s in sessions for t in s.turns)


def test_comparison_puts_the_largest_difference_first(view_runs):
    a, b = load_run(view_runs["full_history"]), load_run(view_runs["memory_retrieval"])
    sa, sb = _scores(a.info.path), _scores(b.info.path)
    cmp = compare_runs(a, b, "rouge_l")
    by_hand = {
        pid: sb[pid, "rouge_l"] - sa[pid, "rouge_l"]
        for pid, metric in sa
        if metric == "rouge_l" and (pid, "rouge_l") in sb
    }
    assert [abs(p.delta) for p in cmp.pairs] == sorted(map(abs, by_hand.values()), reverse=True)
    assert cmp.pairs[0].delta == pytest.approx(max(by_hand.values(), key=abs))
    # an item both runs answered alike scores alike
    assert all(p.delta == 0 for p in cmp.pairs if not p.differs)
    assert cmp.counts["paired"] == len(by_hand)
    assert cmp.counts["B better"] == sum(d > 0 for d in by_hand.values())
    html = write_report(
        a.info.path, a.info.path.parent / "c.html", compare=b.info.path, metric="rouge_l"
    )
    deltas = [d["data-delta"] for d in _soup(html).select("details.pairitem")]
    assert [float(d) for d in deltas] == pytest.approx([p.delta for p in cmp.pairs])


def test_sweep_report_lists_its_runs_with_the_keys_that_vary(view_runs):
    sweep = view_runs["full_history"].parent
    soup = _soup(write_report(sweep, sweep / "sweep.html"))
    heads = [th.get_text() for th in soup.select("table.runs th")]
    assert "memory" in heads and "dataset" not in heads  # msc in both: in the 'same' line
    rows = {
        tr.select("td")[0].get_text(): tr.select("td")[heads.index("memory")].get_text()
        for tr in soup.select("table.runs tbody tr")
    }
    assert rows == {"msc-full_history": "full_history", "msc-memory_retrieval": "memory_retrieval"}
    assert len(soup.select("section.run")) == 2
    assert "dataset=msc" in soup.select_one("#sweep p").get_text()


def test_an_interrupted_run_shows_what_its_finished_episodes_wrote(run_copy):
    run_dir = run_copy("memory_retrieval")
    items = sorted((run_dir / "items").glob("*.jsonl"))
    for name in ("predictions.jsonl", "scores.jsonl", "summary.json"):
        (run_dir / name).unlink()
    items[0].unlink()  # this episode did not finish
    run = load_run(run_dir)
    assert set(run.missing) >= {"predictions.jsonl", "scores.jsonl", "summary.json"}
    expected = [p for path in items[1:] for p in read_jsonl(path, Prediction)]
    assert list(run.predictions) == expected and run.scores == {}
    soup = _soup(write_report(run_dir, run_dir / "r.html"))
    assert "no summary.json (the run did not finish)" in soup.select_one("table.metrics").get_text()
    assert "not in this folder: summary.json, predictions.jsonl, scores.jsonl" in soup.get_text()


def test_a_stage_no_record_timed_reads_not_timed_never_zero(run_copy):
    run_dir = run_copy("full_history")
    timed = write_report(run_dir, run_dir / "t.html").read_text(encoding="utf-8")
    line = next(
        p.get_text(" ", strip=True)
        for p in _soup(run_dir / "t.html").find_all("p")
        if "memory construction" in p.get_text()
    )
    assert "not timed" not in timed and "recall not timed" not in line
    lines = []
    for raw in (run_dir / "predictions.jsonl").read_text().splitlines():
        rec = json.loads(raw)  # as a run whose protocol timed no recall and no generation
        rec["meta"] = {k: v for k, v in rec["meta"].items() if k not in ("recall_s", "generate_s")}
        lines.append(json.dumps(rec))
    (run_dir / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    write_report(run_dir, run_dir / "r.html")
    line = next(
        p.get_text(" ", strip=True)
        for p in _soup(run_dir / "r.html").find_all("p")
        if "memory construction" in p.get_text()
    )
    assert "recall not timed" in line and "generation not timed" in line
    assert "memory construction not timed" not in line and "0.0 ms" not in line.split("·")[4]


def test_the_store_marks_what_left_memory(run_copy):
    # the first item of every snapshot set retained: false (LUFY's forgetting) and the second
    # decayed (TimeRAG with its recency filter): both shown, marked gone, not counted in memory
    run_dir = run_copy("memory_retrieval")
    for path in (run_dir / "memory").glob("*.jsonl"):
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        for row in rows:
            gone = ({"retained": False}, {"status": "decayed"})
            for item, attrs in zip(row["items"], gone, strict=False):  # stores may be short
                item["attrs"] = {**item.get("attrs", {}), **attrs}
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sessions = [s for ep in episode_views(load_run(run_dir)) for s in ep.sessions if s.store]
    assert sessions
    for s in sessions:
        assert s.gone == {m.item_id for m in s.store[:2]}
    soup = _soup(write_report(run_dir, run_dir / "r.html"))
    first = soup.select("details.store summary")[0].get_text()
    n = len(sessions[0].store)
    assert f"({n - min(n, 2)} in memory, {min(n, 2)} gone" in first
