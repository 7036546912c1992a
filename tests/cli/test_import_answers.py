"""``recallbench import-answers``: fixture answer files in the four formats become run folders
that reproduce the figures built into them, and bad files fail in one line, exit 2, no folder.

The fixture data root ``data/fixtures/locomo_import/`` holds two LoCoMo conversations in the
release's format (``26.json``, ``30.json``: 12 category 1-4 questions) and answer files written
by hand from the documented formats (``answers/``). Their verdicts were chosen so that the
audit file's three runs score 8/12, 7/12 and 6/12 (per-run mean 58.33, majority 7/12), Zep's
grades are run 1 (66.67), Mem0's ``llm_score`` run 2 (58.33), Memobase's (Mem0's shape, its
conversations out of order) 8/12 (66.67: category numbers 1 1/1, 2 1/3, 3 1/1, 4 5/7) and the
jsonl's verdicts run 3 (50.00); Zep's latencies have p50 1050 ms and p95 2505 ms (numpy's linear percentile).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from recallbench import cli
from recallbench.analysis import find_runs, load_summaries

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures" / "locomo_import"
ANSWERS = FIXTURES / "answers"


@pytest.fixture
def importer(monkeypatch, capsys, tmp_path):
    """Call ``recallbench import-answers <argv>`` in-process: (status, stdout, stderr)."""

    def call(*argv: str, data: Path = FIXTURES) -> tuple[int, str, str]:
        args = ["recallbench", "import-answers", *argv]
        args += [f"paths.data_dir={data}", f"paths.results_dir={tmp_path / 'results'}"]
        args += ["progress=false", "wandb.mode=disabled"]
        monkeypatch.setattr(sys, "argv", args)
        capsys.readouterr()
        status = 0
        try:
            cli.main()
        except SystemExit as exc:
            status = int(exc.code or 0)
        got = capsys.readouterr()
        return status, got.out, got.err

    return call


def _summary(out: str) -> tuple[Path, dict]:
    folder = Path(out.strip().splitlines()[-1])
    return folder, json.loads((folder / "summary.json").read_text())


def _value(summary: dict, metric: str, subset: str | None = None) -> float:
    entry = summary["metrics"][metric]
    return round(100 * (entry["subsets"][subset] if subset else entry)["value"], 2)


def test_audit_file_reproduces_its_per_run_means(importer):
    status, out, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a"
    )
    assert status == 0, err
    folder, summary = _summary(out)
    assert folder.name == "a" and folder.parent.parent.name == "imported"
    published = json.loads((ANSWERS / "audit.json").read_text())["accuracy"]
    assert _value(summary, "j_audit") == round(100 * published, 2) == 58.33
    assert [_value(summary, f"j_audit_{k}") for k in (1, 2, 3)] == [66.67, 58.33, 50.0]
    assert _value(summary, "j_audit_majority") == 58.33
    assert _value(summary, "j_audit", "single_hop") == 61.9  # (1+1+1+0+1/3+0+1) / 7
    assert summary["metrics"]["j_audit"]["ci95"][0] <= summary["metrics"]["j_audit"]["value"]
    assert {"f1", "b1", "f1_mem0", "j", "j_lexical"} <= set(summary["metrics"])
    assert "recall_at_5" not in summary["metrics"]  # no retrieved context: not scored
    run = json.loads((folder / "run.json").read_text())
    sha = hashlib.sha256((ANSWERS / "audit.json").read_bytes()).hexdigest()
    assert run["imported"]["sha256"] == sha and run["imported"]["format"] == "locomo-audit"
    assert run["imported"]["matching"]["matched"] == 12
    assert run["imported"]["matching"]["text_checked"] == 12
    usage = json.loads((folder / "usage.json").read_text())
    assert "answer" not in usage.get("by_stage", {})  # no answering call: the answers are given
    assert len((folder / "predictions.jsonl").read_text().splitlines()) == 12


def test_zep_grades_with_latency(importer):
    status, out, err = importer(
        str(ANSWERS / "zep_grades.json"),
        "--format",
        "zep",
        "--name",
        "z",
        "--latency",
        str(ANSWERS / "zep_responses.json"),
    )
    assert status == 0, err
    folder, summary = _summary(out)
    assert _value(summary, "j_zep") == 66.67
    assert summary["latency_ms"] == pytest.approx({"p50": 1050.0, "p95": 2505.0, "n": 12})
    run = json.loads((folder / "run.json").read_text())
    assert run["imported"]["category_naming"]["2"] == "Open Domain"  # Zep's naming of 2
    assert run["imported"]["matching"]["scheme"] == "order"


@pytest.mark.parametrize(
    ("name", "fmt", "metric", "expected"),
    [("mem0.json", "mem0", "j_mem0", 58.33), ("answers.jsonl", "jsonl", "j_shipped", 50.0)],
)
def test_mem0_and_jsonl(importer, name, fmt, metric, expected):
    status, out, err = importer(str(ANSWERS / name), "--format", fmt, "--name", "m")
    assert status == 0, err
    _, summary = _summary(out)
    assert _value(summary, metric) == expected


def test_memobase_file_keeps_its_verdicts_and_naming_and_gets_our_f1(importer):
    status, out, err = importer(
        str(ANSWERS / "memobase.json"), "--format", "memobase", "--name", "memobase"
    )
    assert status == 0, err
    folder, summary = _summary(out)
    assert _value(summary, "j_memobase") == 66.67
    by_number = {  # the release's numbers (ours: 1 multi_hop, 2 temporal, 3 open, 4 single)
        1: _value(summary, "j_memobase", "multi_hop"),
        2: _value(summary, "j_memobase", "temporal"),
        3: _value(summary, "j_memobase", "open_domain"),
        4: _value(summary, "j_memobase", "single_hop"),
    }
    assert by_number == {1: 100.0, 2: 33.33, 3: 100.0, 4: 71.43}
    # F1 and B1 per item by our scorer (the file's own f1_score/bleu_score, 0 here, are not read)
    assert summary["metrics"]["f1"]["n"] == summary["metrics"]["b1"]["n"] == 12
    assert summary["metrics"]["f1"]["value"] > 0
    run = json.loads((folder / "run.json").read_text())
    assert run["imported"]["category_naming"] == {
        "1": "single_hop",
        "2": "temporal",
        "3": "multi_hop",
        "4": "open_domain",
    }
    assert run["imported"]["shipped_judge"] == "j_memobase"
    assert run["imported"]["matching"]["scheme"] == "order"


def test_imported_run_is_read_by_the_analysis_frames(importer, tmp_path):
    status, _, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a"
    )
    assert status == 0, err
    runs = find_runs(tmp_path / "results", "imported")
    assert [r.job for r in runs] == ["a"]
    frame = load_summaries(runs)
    row = frame[(frame.metric == "j_audit") & (frame.session == "all")]
    assert round(100 * float(row.value.iloc[0]), 2) == 58.33


def _damaged(tmp_path: Path, name: str, edit) -> Path:
    data = json.loads((ANSWERS / name).read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _truncated(tmp_path: Path) -> Path:
    path = tmp_path / "audit.json"
    path.write_text((ANSWERS / "audit.json").read_text()[:700])
    return path


def _question(d: dict) -> None:
    d["detailed_results"]["locomo_exp_user_0"][2]["question"] = "Would Ada like a cat park?"


def _duplicate(d: dict) -> None:
    items = d["detailed_results"]["locomo_exp_user_0"]
    items.append(dict(items[0]))


def _missing(d: dict) -> None:
    del d["detailed_results"]["locomo_exp_user_1"]


def _category(d: dict) -> None:
    d["detailed_results"]["locomo_exp_user_0"][1]["category"] = "7"


def _wrong_category(d: dict) -> None:
    d["detailed_results"]["locomo_exp_user_0"][1]["category"] = "3"


BAD = {
    "truncated": (_truncated, "locomo-audit", ["audit.json", "line", "invalid JSON"]),
    "wrong format": (lambda t: ANSWERS / "audit.json", "zep", ["audit.json", "--format"]),
    "json as jsonl": (
        lambda t: ANSWERS / "mem0.json",
        "jsonl",
        ["mem0.json line 1", "--format mem0"],
    ),
    "unknown format": (lambda t: ANSWERS / "audit.json", "locomo_audit", ["locomo-audit"]),
    "question text": (
        lambda t: _damaged(t, "audit.json", _question),
        "locomo-audit",
        ["audit.json", "locomo_0_qa2", "does not match", "locomo/conv-26/q2"],
    ),
    "duplicated": (
        lambda t: _damaged(t, "audit.json", _duplicate),
        "locomo-audit",
        ["audit.json", "locomo_exp_user_0[10]", "answered twice", "locomo_exp_user_0[0]"],
    ),
    "missing conversation": (
        lambda t: _damaged(t, "audit.json", _missing),
        "locomo-audit",
        ["audit.json", "conversation 1 (conv-30) missing"],
    ),
    "unknown category": (
        lambda t: _damaged(t, "audit.json", _category),
        "locomo-audit",
        ["audit.json", "locomo_exp_user_0[1]", "unknown category '7'"],
    ),
    "category mismatch": (
        lambda t: _damaged(t, "audit.json", _wrong_category),
        "locomo-audit",
        ["audit.json", "locomo_0_qa1", "category 3", "is category 2"],
    ),
    "id beyond the release": (
        lambda t: _damaged(
            t,
            "audit.json",
            lambda d: d["detailed_results"]["locomo_exp_user_1"][0].update(
                question_id="locomo_1_qa9"
            ),
        ),
        "locomo-audit",
        ["audit.json", "locomo_exp_user_1[0]", "question index 9 of conv-30", "locomo/conv-30/q9"],
    ),
    "memobase verdict": (
        lambda t: _damaged(t, "memobase.json", lambda d: d["0"][3].update(llm_score=2)),
        "memobase",
        ["memobase.json", "'0'[3]", "'llm_score' should be 0 or 1, got 2"],
    ),
    "memobase answer missing": (
        lambda t: _damaged(t, "memobase.json", lambda d: d["1"][1].pop("response")),
        "memobase",
        ["memobase.json", "'1'[1]", "'response' missing"],
    ),
    "memobase question text": (
        lambda t: _damaged(t, "memobase.json", lambda d: d["0"][4].update(question="What?")),
        "memobase",
        ["memobase.json", "'0'[4]", "does not match"],
    ),
    "memobase as zep": (lambda t: ANSWERS / "memobase.json", "zep", ["looks like a mem0 file"]),
    "zep order overflow": (
        lambda t: _damaged(
            t,
            "zep_grades.json",
            lambda d: d["locomo_experiment_user_1"].append(dict(d["locomo_experiment_user_1"][0])),
        ),
        "zep",
        ["zep_grades.json", "locomo_experiment_user_1[2]", "does not exist"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_file_is_one_line_exit_2_and_no_folder(importer, tmp_path, case):
    make, fmt, words = BAD[case]
    path = make(tmp_path)
    status, out, err = importer(str(path), "--format", fmt, "--name", "bad")
    lines = [line for line in err.splitlines() if line.startswith("recallbench")]
    assert status == 2, err
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    runs = tmp_path / "results" / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.rglob("*"))


def test_answers_to_conversations_not_loaded_are_counted(importer, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(FIXTURES, data)
    status, out, err = importer(
        str(ANSWERS / "audit.json"),
        "--format",
        "locomo-audit",
        "--name",
        "one",
        "dataset.options.conversations=conv-26",
        data=data,
    )
    assert status == 0, err
    folder, summary = _summary(out)
    run = json.loads((folder / "run.json").read_text())
    assert run["imported"]["matching"]["other_conversations"] == 2
    assert summary["metrics"]["j_audit"]["n"] == 10


def test_judge_panel_reads_an_imported_run(importer, tmp_path, monkeypatch, capsys):
    status, out, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a"
    )
    assert status == 0, err
    folder, summary = _summary(out)
    monkeypatch.setattr(
        sys, "argv", ["recallbench", "judge-panel", str(folder), "--probes", "gold"]
    )
    cli.main()
    panel = json.loads((folder / "judge_panel" / "panel.json").read_text())
    assert panel["protocol"] == "locomo_import" and panel["headline_metric"] == "recall"
    status_of = {j["label"]: j.get("status", "rule") for j in panel["judges"]}
    assert status_of["extractive:extractive/mem0_j"] == "offline twin"  # J's twin fits LoCoMo
    acc = panel["acceptance"]["extractive:extractive/mem0_j"]["answers"]["value"]
    assert acc == pytest.approx(summary["metrics"]["j"]["value"])  # the run's own J, again
    assert "mem0_j *" in (folder / "judge_panel" / "judge_panel.md").read_text()  # its paper's


def test_offline_judges_agreement_with_the_shipped_majority(importer):
    from sklearn.metrics import cohen_kappa_score

    status, out, err = importer(
        str(ANSWERS / "audit.json"), "--format", "locomo-audit", "--name", "a"
    )
    assert status == 0, err
    folder, summary = _summary(out)
    rows = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    ours = [float(r["meta"]["judge"]["label"] == 1) for r in rows]
    theirs = [r["meta"]["judges"]["audit_majority"] for r in rows]
    same = sum(x == y for x, y in zip(ours, theirs, strict=True)) / len(rows)
    assert summary["metrics"]["agree_j"]["value"] == pytest.approx(same)
    assert summary["metrics"]["kappa_j"]["value"] == pytest.approx(cohen_kappa_score(ours, theirs))
    assert summary["metrics"]["kappa_j"]["ci95"] is not None  # conversations resampled
    assert set(summary["metrics"]["agree_j_lexical"]["subsets"]) >= {"answerable", "single_hop"}


def test_judge_panel_locomo_table_selects_imported_runs_by_name(importer, tmp_path, monkeypatch):
    for name, fmt, job in [
        ("audit.json", "locomo-audit", "audit-gpt-4o-mini-cot"),
        ("zep_grades.json", "zep", "zep"),
    ]:
        status, _, err = importer(str(ANSWERS / name), "--format", fmt, "--name", job)
        assert status == 0, err
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    cli.table_main(["judge_panel_locomo", "--results", str(tmp_path / "results")])
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in (tmp_path / "results" / "tables" / "judge_panel_locomo.md")
        .read_text()
        .splitlines()
        if line.startswith("| ") and "[" in line
    }
    assert rows["gpt-4o-mini cot (audit)"][0].startswith("58.33 [")  # the file's per-run mean
    assert rows["Zep"][1].startswith("66.67 [") and rows["Zep"][0] == "n/a"
    assert "gpt-4.1-mini cot (audit)" not in rows  # not imported: no numbers
