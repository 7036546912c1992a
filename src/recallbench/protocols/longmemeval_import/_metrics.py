"""QA accuracy as the authors' ``print_qa_metrics.py`` computes it, from labels and types alone.

``qa_report(labels, types)``: per question type the share of yes labels and the count (their
"Evaluation results by task"), ``task_averaged`` (the mean of the per-type accuracies),
``overall`` (the share over every labelled question) and ``abstention`` (over the questions
whose id contains ``_abs``). Deviation: a type without questions is left out of the task
average (theirs takes ``np.mean([])``, nan, and prints nan); its accuracy is reported as None.

``reference_types(path)`` reads the question types from an official data file (``.json``,
``.json.xz``, ``.json.gz``): the small reader this check needs of the raw file, independent of
the dataset loader, so the import's summary can be compared with a report computed from the
files alone (``tests/protocols/longmemeval_import``).
"""

from __future__ import annotations

import gzip
import json
import lzma
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from recallbench.errors import DatasetFormatError
from recallbench.judges.longmemeval import is_abstention

# print_qa_metrics.py's type2acc keys, in its order.
REPORT_TYPES = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)


@dataclass(frozen=True)
class QAReport:
    """What ``print_qa_metrics.py`` prints (accuracies as shares in [0, 1])."""

    per_type: dict[str, tuple[float | None, int]]
    task_averaged: float
    overall: float
    abstention: tuple[float, int]


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def qa_report(labels: Mapping[str, bool], types: Mapping[str, str]) -> QAReport:
    """The authors' QA metrics of ``labels`` (question id -> yes) with ``types`` (id -> type)."""
    by_type: dict[str, list[int]] = {t: [] for t in REPORT_TYPES}
    abstention: list[int] = []
    for qid, label in labels.items():
        qtype = types.get(qid)
        if qtype not in by_type:
            raise DatasetFormatError(
                f"question {qid}: type {qtype!r} is not one of {', '.join(REPORT_TYPES)}"
            )
        by_type[qtype].append(int(label))
        if is_abstention(qid):
            abstention.append(int(label))
    per_type = {t: (_mean(v) if v else None, len(v)) for t, v in by_type.items()}
    present = [acc for acc, n in per_type.values() if acc is not None]
    every = [x for v in by_type.values() for x in v]
    return QAReport(
        per_type=per_type,
        task_averaged=sum(present) / len(present) if present else 0.0,
        overall=_mean(every),
        abstention=(_mean(abstention), len(abstention)),
    )


def _open_text(path: Path) -> str:
    if path.name.endswith(".xz"):
        with lzma.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    return path.read_text(encoding="utf-8")


def reference_types(path: str | Path) -> dict[str, str]:
    """Question id -> question type of an official LongMemEval file (errors name the item)."""
    path = Path(path)
    try:
        data = json.loads(_open_text(path))
    except (OSError, EOFError, lzma.LZMAError, json.JSONDecodeError) as exc:
        raise DatasetFormatError(f"{path}: not a readable LongMemEval file ({exc})") from None
    if not isinstance(data, list):
        raise DatasetFormatError(f"{path}: expected a JSON list of instances")
    out: dict[str, str] = {}
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or not {"question_id", "question_type"} <= set(rec):
            raise DatasetFormatError(f"{path} [{i}]: 'question_id' or 'question_type' missing")
        out[str(rec["question_id"])] = str(rec["question_type"])
    return out
