"""Every protocol that judges answers writes the one verdict shape (``recallbench.verdict``).

Each protocol runs on its fixture through ``cli.run`` (extractive generator, hashing embedder;
``locomo_import`` through ``recallbench import-answers``), then every judged prediction of its
``predictions.jsonl`` must read through its kind's typed meta (``recallbench.payloads``) and hold, under ``meta["judge"]``, the whole new shape (so readers of
either older shape find their keys), parse as a ``Verdict``, and say what that protocol means:
the C.1 lexical label of the answer (qa), Mem0's J with no don't-know (locomo), TeaFarm's
counterfactual check (teafarm). ``qa_gvd``'s answers also carry CAIM's graded verdicts in
``meta["caim"]``: one such verdict per metric (``judges.caim.caim_verdicts``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from recallbench import cli
from recallbench.cli import compose_job, run
from recallbench.judges import LexicalJudge
from recallbench.judges.caim import CAIM_METRICS, caim_verdicts
from recallbench.judges.mem0_j import ACCURACY_SOURCE
from recallbench.payloads import KINDS, meta_of
from recallbench.protocols.teafarm import JUDGE_TASK, lexical_verdict
from recallbench.records import Prediction, read_jsonl
from recallbench.verdict import CORRECT, DONT_KNOW, INCORRECT, UNAVAILABLE, Verdict, verdict_of

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
OFFLINE = ["embedder=hashing", "generator=extractive", "progress=false", "wandb.mode=disabled"]
SHAPE = {"label", "correct", "score", "raw", "parsed", "failure", "usage", "info", "judge"}
JOBS = {
    "qa_lufy": ["dataset=lufy", "memory=naive_rag", "protocol=qa_lufy", "+judge=lexical"],
    "qa_gvd": [
        "dataset=gvd",
        "memory=memorybank_gvd",
        "protocol=qa_gvd",
        "+judge=lexical",
        f"dataset.options.answer_key={FIXTURES / 'gvd' / 'answer_key_en.jsonl'}",
    ],
    "locomo_qa": ["dataset=locomo", "memory=full_history", "protocol=locomo_qa", "+judge=mem0_j"],
    "teafarm": ["dataset=msc", "memory=memory_retrieval", "protocol=teafarm"],
}


def _job(tmp: Path, name: str) -> Path:
    cfg, _ = compose_job(
        [f"paths.results_dir={tmp}", f"dataset.data_dir={FIXTURES}", *OFFLINE, *JOBS[name]]
    )
    folder = run(cfg, name, {})
    assert folder is not None
    return folder


def _import(tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Path:
    answers = FIXTURES / "locomo_import" / "answers" / "audit.json"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "recallbench",
            "import-answers",
            str(answers),
            "--format",
            "locomo-audit",
            "--name",
            "a",
            f"paths.data_dir={FIXTURES / 'locomo_import'}",
            f"paths.results_dir={tmp}",
            "progress=false",
            "wandb.mode=disabled",
        ],
    )
    capsys.readouterr()
    try:
        cli.main()
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    return Path(capsys.readouterr().out.strip().splitlines()[-1])


def _qa(p: Prediction, v: Verdict) -> None:  # LUFY C.1 by the lexical judge
    question, reference = str(p.meta["question"]), p.reference or ""
    assert v.judge == "lexical" and v.raw == str(v.label) and v.prompt is None
    assert v.label == LexicalJudge().label(question, reference, p.output)[0]


def _j(p: Prediction, v: Verdict) -> None:  # Mem0's J: CORRECT or WRONG, no don't-know
    assert v.label in (CORRECT, INCORRECT) and v.judge == "mem0_j"
    assert (v.backend, v.prompt, v.parsed) == ("extractive", ACCURACY_SOURCE, True)
    assert json.loads(v.raw)["label"] == ("CORRECT" if v.correct else "WRONG")


def _teafarm(p: Prediction, v: Verdict) -> None:  # Fig. 29: the counterfactual check
    assert v.label in (CORRECT, INCORRECT) and v.judge == JUDGE_TASK.name
    assert (v.backend, v.prompt) == ("extractive", JUDGE_TASK.source)
    assert v.correct is lexical_verdict(str(p.meta["question"]), p.reference or "", p.output)[0]


MEANING: dict[str, tuple[str, Callable[[Prediction, Verdict], None]]] = {
    "qa_lufy": ("answer", _qa),
    "qa_gvd": ("answer", _qa),
    "locomo_qa": ("answer", _j),
    "locomo_import": ("answer", _j),
    "teafarm": ("teafarm", _teafarm),
}


@pytest.mark.parametrize("protocol", list(MEANING))
def test_predictions_carry_the_one_verdict_shape(protocol, tmp_path, monkeypatch, capsys):
    if protocol == "locomo_import":
        folder = _import(tmp_path, monkeypatch, capsys)
    else:
        folder = _job(tmp_path, protocol)
    kind, means = MEANING[protocol]
    every = read_jsonl(folder / "predictions.jsonl", Prediction)
    for p in every:  # and every meta reads typed, with no key outside its kind's inventory
        assert set(meta_of(p, KINDS[p.kind])) <= set(KINDS[p.kind].__annotations__), p.kind
    preds = [p for p in every if p.kind == kind]
    judged = [(p, verdict_of(p)) for p in preds]
    judged = [(p, v) for p, v in judged if v is not None]
    assert judged and len(judged) >= len(preds) * 0.5, (len(judged), len(preds))
    labels = set()
    for p, v in judged:
        assert SHAPE <= set(p.meta["judge"]), sorted(p.meta["judge"])
        assert v.to_dict() == p.meta["judge"]  # nothing but the one shape is written
        assert v.correct == (v.label == CORRECT) and v.score == float(v.correct)
        means(p, v)
        labels.add(v.label)
    assert labels - {DONT_KNOW}, f"{protocol}: no answer was judged correct or incorrect"
    for p in preds:  # unjudged answers are locomo's category 5 (LoCoMo's rule), nothing else
        if verdict_of(p) is None:
            assert protocol.startswith("locomo") and p.meta["category"] == 5


def test_qa_gvd_caim_verdicts_are_the_one_shape(tmp_path):
    folder = _job(tmp_path, "qa_gvd")
    answers = [
        p for p in read_jsonl(folder / "predictions.jsonl", Prediction) if p.kind == "answer"
    ]
    assert answers
    available = set()
    for p in answers:
        group = caim_verdicts(p)
        assert group is not None and set(p.meta["caim"]) == {"verdicts", "info"}, p.pred_id
        assert set(group.verdicts) == set(CAIM_METRICS)
        for metric, v in group.verdicts.items():
            stored = p.meta["caim"]["verdicts"][metric]
            assert SHAPE <= set(stored) and v.to_dict() == stored  # the one shape, nothing else
            assert v.judge == "caim_lexical" and v.info["metric"] == metric
            if v.available:
                assert v.failure is None and v.label == (CORRECT if v.score == 1.0 else INCORRECT)
                available.add(metric)
            else:
                assert v.failed(UNAVAILABLE) and v.score is None
        assert not group.verdicts["contextual_coherence"].available  # no lexical proxy
    assert available == set(CAIM_METRICS) - {"contextual_coherence"}
