"""Read the LongMemEval authors' hypothesis files, judged or not (``--format longmemeval``).

Shapes (``src/evaluation/evaluate_qa.py`` of xiaowu0162/LongMemEval):

- a hypothesis file: one ``{"question_id", "hypothesis"}`` per line (JSONL), or a JSON list of
  them (the authors read the lines first and fall back to ``json.load``);
- their judged output (``<hyp_file>.eval-results-<model>``): the same objects with
  ``"autoeval_label": {"model": "gpt-4o-2024-08-06", "label": true}``. ``label`` is read as a
  boolean; 0 and 1 are accepted too (files written by other harnesses, e.g. nambok/mentedb,
  store the integer). Other keys are ignored.

A file is either labelled on every line or on none (``print_qa_metrics.py`` needs every label);
a question answered twice is an error. Every error is one line naming the file, the line (or
the list index) and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recallbench.errors import DatasetFormatError

FORMAT = "longmemeval"


@dataclass(frozen=True)
class Hypothesis:
    """One answer of the file: its question, the answer, and the authors' judge label if any."""

    where: str  # "<file> line <n>" or "<file> [<i>]": for error messages
    question_id: str
    hypothesis: str
    label: bool | None = None
    label_model: str | None = None


@dataclass(frozen=True)
class HypothesisFile:
    """A hypothesis file read: its answers in file order and whether they carry labels."""

    path: Path
    hypotheses: tuple[Hypothesis, ...]
    labelled: bool
    models: tuple[str, ...]  # the autoeval_label models, sorted


def _fail(where: str, message: str) -> DatasetFormatError:
    return DatasetFormatError(f"{where}: {message}")


def _label(raw: Any, where: str) -> tuple[bool, str]:
    if not isinstance(raw, dict):
        raise _fail(
            where, f"'autoeval_label' should be an object {{model, label}}, got {raw!r:.60}"
        )
    for key in ("model", "label"):
        if key not in raw:
            raise _fail(where, f"'autoeval_label.{key}' missing (keys: {sorted(raw)})")
    model, label = raw["model"], raw["label"]
    if not isinstance(model, str):
        raise _fail(where, f"'autoeval_label.model' should be a string, got {model!r:.60}")
    if not isinstance(label, bool) and label not in (0, 1):
        raise _fail(where, f"'autoeval_label.label' should be true/false (or 1/0), got {label!r}")
    return bool(label), model


def _record(rec: Any, where: str) -> Hypothesis:
    if not isinstance(rec, dict):
        raise _fail(where, f"expected an object {{question_id, hypothesis}}, got {rec!r:.60}")
    for key in ("question_id", "hypothesis"):
        if key not in rec:
            raise _fail(where, f"{key!r} missing (keys: {sorted(rec)[:8]})")
    qid, hyp = rec["question_id"], rec["hypothesis"]
    if not isinstance(qid, str) or not qid.strip():
        raise _fail(where, f"'question_id' should be a non-empty string, got {qid!r:.60}")
    if isinstance(hyp, bool) or not isinstance(hyp, str | int | float):
        raise _fail(where, f"'hypothesis' should be a string, got {hyp!r:.60}")
    if "autoeval_label" not in rec:
        return Hypothesis(where, qid, str(hyp))
    label, model = _label(rec["autoeval_label"], where)
    return Hypothesis(where, qid, str(hyp), label, model)


def _records(path: Path, name: str) -> list[Hypothesis]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):  # a JSON list (the authors' fallback)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _fail(
                f"{name} line {exc.lineno} column {exc.colno}",
                f"invalid JSON ({exc.msg}): truncated or not a hypothesis file",
            ) from None
        return [_record(rec, f"{name} [{i}]") for i, rec in enumerate(data)]
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(
                where, f"invalid JSON ({exc.msg}): expected one object per line (or a JSON list)"
            ) from None
        out.append(_record(rec, where))
    return out


def read_hypotheses(path: str | Path) -> HypothesisFile:
    """Read a hypothesis file (labelled or not); errors name the file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise DatasetFormatError(f"{path}: no such hypothesis file")
    name = path.name
    hyps = _records(path, name)
    if not hyps:
        raise _fail(name, "no hypotheses read (expected {question_id, hypothesis} objects)")
    seen: dict[str, str] = {}
    for h in hyps:
        if h.question_id in seen:
            raise _fail(
                h.where, f"question {h.question_id} answered twice (first at {seen[h.question_id]})"
            )
        seen[h.question_id] = h.where
    labelled = [h for h in hyps if h.label is not None]
    if labelled and len(labelled) < len(hyps):
        gap = next(h for h in hyps if h.label is None)
        raise _fail(
            gap.where,
            f"'autoeval_label' missing, but {len(labelled)} of the {len(hyps)} lines have one "
            "(a judged file labels every line)",
        )
    models = tuple(sorted({h.label_model for h in labelled if h.label_model is not None}))
    return HypothesisFile(path, tuple(hyps), bool(labelled), models)
