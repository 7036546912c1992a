"""Failure attribution read from hand-built run folders (``analysis.attribution``).

A tiny two-session episode, hand-made memory snapshots and judged predictions in the files the
runner writes; every question's right class is known by construction.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from recallbench.analysis import runs_in
from recallbench.analysis.attribution import known_accuracy, run_items
from recallbench.io import safe_name
from recallbench.judges.caim import CaimVerdicts, metric_verdict
from recallbench.metrics.attribution import classify, summarize
from recallbench.records import Episode, MemoryItem, Prediction, QAItem, Session, Turn

EP = "toy/Ann"
T = {
    "s1": [("Bot", "What do you like to eat?"), ("Ann", "I love ramen above all."),
           ("Bot", "Yum."), ("Ann", "I also play the violin.")],
    "s2": [("Bot", "How was your week?"), ("Ann", "I adopted a cat named Miso."),
           ("Bot", "Cute!"), ("Ann", "I started working at a bakery.")],
}  # fmt: skip
QA = [
    QAItem(f"{EP}/s1/q1", "What food does Ann love?", ("Ramen",), 1),
    QAItem(f"{EP}/s1/q2", "Which instrument does Ann play?", ("The violin",), 1),
    QAItem(f"{EP}/s2/q1", "What is the name of Ann's cat?", ("Miso",), 2),
    QAItem(f"{EP}/s2/q2", "Where does Ann work?", ("A bakery",), 2),
    QAItem(f"{EP}/s2/q3", "What is Ann's favourite colour?", ("Blue",), 2),
]


def tid(session: str, j: int) -> str:
    return f"{EP}/{session}/t{j}"


def episode() -> Episode:
    sessions = tuple(
        Session(
            f"{EP}/{s}",
            i,
            datetime(2024, 1, i),
            tuple(Turn(tid(s, j), sp, text) for j, (sp, text) in enumerate(T[s])),
        )
        for i, s in enumerate(T, 1)
    )
    return Episode(EP, "toy", ("Bot", "Ann"), sessions, tuple(QA))


def mem(name: str, *sources: str, **attrs) -> dict:
    return MemoryItem(name, name, "utterance_pair", None, sources, attrs).to_dict()


# after s1: the ramen and violin turns are stored; after s2 the violin memory is forgotten
# (LUFY keeps the last forgetting's victims in the snapshot with retained: false), the cat turn
# is stored, the bakery turn never is
SNAPSHOTS = [
    {"after_session": 1, "items": [mem("m1", tid("s1", 1)), mem("m2", tid("s1", 3))]},
    {
        "after_session": 2,
        "items": [
            mem("m1", tid("s1", 1)),
            mem("m2", tid("s1", 3), retained=False),
            mem("m3", tid("s2", 1)),
            mem("profile"),  # no provenance: carries nothing
        ],
    },
]
# (question, asked after, judge label, recalled turn ids, caim correctness) -> expected class
CASES = [
    (0, 1, 1, [tid("s1", 1)], 1.0, None),
    (1, 1, 0, [tid("s1", 3)], 0.0, "reader_error"),
    (0, 2, 0, [], 0.0, "not_retrieved"),
    (1, 2, 2, [], 0.0, "not_in_memory"),  # forgotten, answered "I don't know"
    (2, 2, 0, [tid("s2", 1)], 0.0, "reader_error"),
    (3, 2, 0, [], 0.0, "not_in_memory"),  # never written
    (4, 2, 0, [], 0.0, "evidence_unknown"),
]


def write_run(root: Path, protocol: dict, preds: list[Prediction], tag: str = "t") -> Path:
    run = root / "runs" / tag / "20240101-000000" / "job"
    for sub in ("memory", "episodes"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    (run / "run.json").write_text(json.dumps({"status": "finished", "n_episodes": 1}))
    config = {"choices": {"judge": "lexical", "memory": "toy"}, "protocol": protocol}
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    name = safe_name(EP)
    rows = "\n".join(json.dumps(s) for s in SNAPSHOTS)
    (run / "memory" / f"{name}.jsonl").write_text(rows + "\n")
    (run / "episodes" / f"{name}.json").write_text(episode().to_json())
    (run / "predictions.jsonl").write_text("".join(p.to_json() + "\n" for p in preds))
    return run


def answer(k: int, after: int, label: int, recalled: list[str], caim: float | None) -> Prediction:
    qa = QA[k]
    output = "I don't know." if label == 2 else "something"
    meta: dict = {"qa_id": qa.qa_id, "question_session": qa.after_session}
    meta["judge"] = {"label": label, "raw": str(label), "parsed": True}
    if caim is not None:
        verdict = metric_verdict("response_correctness", caim, "caim_lexical")
        meta["caim"] = CaimVerdicts({"response_correctness": verdict}).to_dict()
    pid = f"{qa.qa_id}/after_s{after}"
    return Prediction(pid, EP, after, "answer", "h", output, "ref", tuple(recalled), meta=meta)


@pytest.fixture
def qa_run(tmp_path):
    preds = [answer(k, s, lab, rec, None) for k, s, lab, rec, _, _ in CASES]
    preds.append(Prediction(f"{EP}/s2/memory", EP, 2, "memory", "", ""))  # not an item
    write_run(tmp_path, {"name": "qa", "user_index": -1}, preds)
    return runs_in(tmp_path)[0]


def test_every_class_on_a_hand_built_episode(qa_run):
    items, info = run_items(qa_run)
    assert info.protocol == "qa" and info.judges == ("C.1 lexical",) and info.cover == "all"
    assert len(items) == len(CASES)
    got = {i.item_id: classify(i) for i in items}
    for k, after, _, _, _, expected in CASES:
        verdict = got[f"{QA[k].qa_id}/after_s{after}"]
        assert (verdict.cls if verdict else None) == expected, (k, after)
    reasons = {a.item_id: a.reason for a in got.values() if a and a.cls == "not_in_memory"}
    assert reasons == {
        f"{QA[1].qa_id}/after_s2": "forgotten",
        f"{QA[3].qa_id}/after_s2": "never_written",
    }
    # the located evidence is the turn that carries the label answer, in the question's session
    by_id = {i.item_id: i for i in items}
    assert by_id[f"{QA[1].qa_id}/after_s2"].evidence == (tid("s1", 3),)
    assert by_id[f"{QA[1].qa_id}/after_s2"].outcome == "dont_know"
    assert by_id[f"{QA[4].qa_id}/after_s2"].unknown.startswith("no turn covers")


def test_a_memory_dropped_in_the_session_it_was_written_in_was_forgotten(qa_run):
    # the bakery turn written during s2 and marked gone by s2's own forgetting: the snapshot
    # keeps it (retained: false), so it was written, then forgotten, not never written
    snapshots = [dict(s, items=list(s["items"])) for s in SNAPSHOTS]
    snapshots[1]["items"].append(mem("m4", tid("s2", 3), retained=False))
    path = qa_run.path / "memory" / f"{safe_name(EP)}.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in snapshots) + "\n")
    items, _ = run_items(qa_run)
    bakery = next(i for i in items if i.item_id == f"{QA[3].qa_id}/after_s2")
    got = classify(bakery)
    assert got is not None and (got.cls, got.reason) == ("not_in_memory", "forgotten")


def test_summary_and_accuracy_of_the_run(qa_run):
    items, _ = run_items(qa_run)
    s = summarize(items)
    assert s["failures"] == 6 and s["accuracy"]["value"] == pytest.approx(1 / 7)
    assert s["shares"]["not_in_memory"]["value"] == pytest.approx(2 / 6)
    assert s["shares"]["reader_error"]["count"] == 2
    # accuracy on the items with known evidence leaves the colour question out
    assert known_accuracy(items)["value"] == pytest.approx(1 / 6)


def test_gvd_runs_have_two_judges_and_caim_decides(tmp_path):
    # CAIM gives 0.5 where the C.1 judge says correct: a judge disagreement
    cases = [(0, 2, 1, [], 0.5), (2, 2, 0, [tid("s2", 1)], 0.0), (2, 2, 1, [], 1.0)]
    preds = [answer(k, s, lab, rec, c) for k, s, lab, rec, c in cases]
    preds[2] = Prediction("x", EP, 2, "answer", "h", "o", "r", meta={**preds[2].meta})
    protocol = {"name": "qa_gvd", "user_index": -1, "caim_judge": {"name": "lexical"}}
    run = runs_in(write_run(tmp_path, protocol, preds))[0]
    items, info = run_items(run)
    assert info.judges == ("CAIM lexical", "C.1 lexical")
    first, second, third = (classify(i) for i in items)
    assert first is not None and first.cls == "judge_disagreement" and first.outcome == "partial"
    assert second is not None and second.cls == "reader_error"
    assert third is None
    # the C.1 judge as the primary one: the first item is then correct, CAIM contests it
    items, info = run_items(run, primary="judge")
    assert info.judges[0] == "C.1 lexical" and classify(items[0]) is None


def test_unanswerable_questions_have_unknown_evidence(tmp_path):
    qa = QAItem(f"{EP}/s2/q9", "What is Ann's pet?", (), 2, meta={"answerable": False})
    QA.append(qa)
    try:
        pred = answer(len(QA) - 1, 2, 0, [], 0.0)
        run = runs_in(write_run(tmp_path, {"name": "qa_gvd", "user_index": -1}, [pred]))[0]
        (item,), _ = run_items(run)
    finally:
        QA.pop()
    got = classify(item)
    assert got is not None and got.cls == "evidence_unknown" and "unanswerable" in got.reason


def test_other_protocols_are_refused(tmp_path):
    run = runs_in(write_run(tmp_path, {"name": "response"}, []))[0]
    with pytest.raises(ValueError, match="no items with known evidence"):
        run_items(run)


# -- TimeRAG: gold facts as evidence, through a real run folder ------------------------------

FACT = "I have two dogs."


def persona_episode() -> Episode:
    speakers = ("Speaker 1", "Speaker 2")
    one = [(speakers[1], "Hello! What is new?"), (speakers[0], "I have two dogs now.")]
    two = [(speakers[1], "What did you do today?"), (speakers[0], "I walked my two dogs.")]
    sessions = tuple(
        Session(
            f"p/s{i}",
            i,
            datetime(2024, 1, i),
            tuple(Turn(f"p/s{i}/t{j}", sp, text) for j, (sp, text) in enumerate(turns)),
            {"persona": {speakers[0]: [FACT], speakers[1]: []}},
        )
        for i, turns in enumerate((one, two), start=1)
    )
    return Episode("p", "msc", speakers, sessions)


def timerag_run(root: Path, method: str, oracle: bool = False):
    from recallbench.embed import HashingEmbedder
    from recallbench.llm import build_llm
    from recallbench.memory.no_memory import NoMemory
    from recallbench.memory.timerag import TimeRAG
    from recallbench.protocols.timerag import TimeRAGProtocol
    from recallbench.run.runner import Runner

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    emb = HashingEmbedder(dim=256)
    make = {"timerag": lambda: TimeRAG(llm, emb), "no_memory": lambda: NoMemory(llm, emb)}[method]
    protocol = {"name": "timerag", "oracle_context": oracle}
    config = {"choices": {"memory": method, "dataset": "msc"}, "protocol": protocol}
    tag = f"{method}-{oracle}"
    run_dir = root / "runs" / tag / "20240101-000000" / method
    proto = TimeRAGProtocol(target_sessions=[2], oracle_context=oracle)
    Runner(run_dir, protocol=proto, make_method=make, llm=llm, config=config, progress=False).run(
        [persona_episode()]
    )
    return runs_in(run_dir)[0]


def test_timerag_replies_are_attributed_by_gold_facts(tmp_path):
    (kept,), info = run_items(timerag_run(tmp_path, "timerag"))
    assert info.cover == "any" and kept.evidence == (f"Speaker 1: {FACT}",)
    # TimeRAG wrote the fact, kept it and retrieved it; the offline reply copies the recalled
    # line sharing words with "What did you do today?": none does, so it misses the fact
    assert kept.held == kept.recalled == frozenset(kept.evidence)
    got = classify(kept, "any")
    assert got is not None and got.cls == "reader_error"
    (missed,), _ = run_items(timerag_run(tmp_path, "no_memory"))
    got = classify(missed, "any")
    assert got is not None and (got.cls, got.reason) == ("not_in_memory", "never_written")
    (oracle,), info = run_items(timerag_run(tmp_path, "no_memory", oracle=True))
    assert info.oracle and oracle.recalled == frozenset(oracle.evidence)


def _decay_all(run_dir: Path, recency_filter: bool) -> None:
    """Mark every record of the run's snapshots decayed; set the run's recency filter."""
    for path in (run_dir / "memory").glob("*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in rows:
            for item in row["items"]:
                item["attrs"]["status"] = "decayed"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    config["memory"] = {"recency_filter": recency_filter}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.mark.parametrize(
    ("recency_filter", "expected"),
    [(True, ("not_in_memory", "forgotten")), (False, ("reader_error", ""))],
)
def test_decayed_facts_are_in_memory_only_when_recall_reads_them(
    tmp_path, recency_filter, expected
):
    # TimeRAG's decayed records stay in its snapshot: with the default recency filter a recall
    # skips them (the fact was written, then forgotten); w/o Recency Filter it can return them
    run = timerag_run(tmp_path, "timerag")
    _decay_all(run.path, recency_filter)
    (item,), _ = run_items(runs_in(run.path)[0])
    got = classify(item, "any")
    assert got is not None and (got.cls, got.reason) == expected
