"""Read the LoCoMo audit's ``errors.json`` as errata (``dial481/locomo-audit``, CC BY-NC 4.0).

Format (``shared/data/locomo_audit/SOURCE.md``): a list of entries ``{"question_id":
"locomo_<i>_qa<j>", "question", "golden_answer", "category", "error_type", "cited_evidence",
"correct_evidence", "reasoning", "correct_answer"}``; ``i`` is the conversation's position in
the release's order (conv-26, conv-30, ... conv-50), ``j`` the index of the question in that
conversation's full ``qa`` list. Each entry is checked against the release (question text and
answer, as strings after whitespace normalization) and becomes: an ``answer`` correction when
``correct_answer`` differs from ``golden_answer``, an ``evidence`` correction when
``correct_evidence`` differs from ``cited_evidence``, and a ``flag`` carrying its
``error_type``. Score-changing: every ``error_type`` but ``WRONG_CITATION`` (the audit's 99
"score-corrupting" entries; a wrong citation changes recall only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, QAItem

AUDIT_FILE = "errors.json"
RECALL_ONLY = "WRONG_CITATION"
KEYS: tuple[str, ...] = ("question_id", "question", "golden_answer", "error_type")
KEYS += ("cited_evidence", "correct_evidence", "correct_answer")
_ID = re.compile(r"locomo_(\d+)_qa(\d+)")


# A correction's new value: an answer or speaker swap (str), evidence ids, a category, a drop.
Correction = str | list[str] | int | bool


class Fix(NamedTuple):
    """One correction of one question by one source (``field`` ``flag``: a flag only)."""

    qa_id: str
    field: str
    new: Correction
    origin: str
    source: str
    score_changing: bool
    error_type: str | None


def _norm(value: Any) -> str:
    return " ".join(str(value).split())


def read_audit(path: Path, episodes: Sequence[Episode], origin: str) -> list[Fix]:
    """Return the fixes of an audit ``errors.json`` for ``episodes`` (the full release, in order)."""
    if not path.is_file():
        raise DatasetFormatError(f"{path}: LoCoMo audit errata file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, list):
        raise DatasetFormatError(f"{path}: expected a list of audit entries")
    out: list[Fix] = []
    for k, entry in enumerate(data):
        out += _entry_fixes(entry, f"{path} entry {k}", episodes, origin)
    return out


def _entry_fixes(entry: Any, where: str, episodes: Sequence[Episode], origin: str) -> list[Fix]:
    if not isinstance(entry, dict):
        raise DatasetFormatError(f"{where}: expected a mapping, got {type(entry).__name__}")
    if missing := [k for k in KEYS if k not in entry]:
        raise DatasetFormatError(f"{where}: missing {missing} (keys: {sorted(entry)})")
    qid = str(entry["question_id"])
    where = f"{where} ({qid})"
    qa, eid = _question(qid, where, episodes)
    if _norm(entry["question"]) != _norm(qa.question):
        raise DatasetFormatError(f"{where}: its question is not the text of {qa.qa_id}")
    if _norm(entry["golden_answer"]) != _norm(qa.answers[0] if qa.answers else ""):
        raise DatasetFormatError(f"{where}: its golden_answer is not the answer of {qa.qa_id}")
    kind = str(entry["error_type"])
    source = f"{origin}: {kind} ({qid})"
    changing = kind != RECALL_ONLY
    out = [Fix(qa.qa_id, "flag", kind, origin, source, changing, kind)]
    if _norm(entry["correct_answer"]) != _norm(entry["golden_answer"]):
        new = _norm(entry["correct_answer"])
        out.append(Fix(qa.qa_id, "answer", new, origin, source, changing, kind))
    cited, correct = (_ids(entry[k], where, k) for k in ("cited_evidence", "correct_evidence"))
    if cited != correct:
        turns = {t.turn_id for ep in episodes if ep.episode_id == eid for t in ep.turns()}
        unknown = [d for d in correct if f"{eid}/{d}" not in turns]
        if unknown:
            raise DatasetFormatError(f"{where}: correct_evidence names no turn: {unknown}")
        out.append(Fix(qa.qa_id, "evidence", correct, origin, source, changing, kind))
    return out


def _question(qid: str, where: str, episodes: Sequence[Episode]) -> tuple[QAItem, str]:
    m = _ID.fullmatch(qid)
    if m is None:
        raise DatasetFormatError(f"{where}: question_id should be like 'locomo_0_qa12'")
    i, j = int(m.group(1)), int(m.group(2))
    if i >= len(episodes):
        raise DatasetFormatError(
            f"{where}: conversation {i} is not loaded ({len(episodes)} conversations)"
        )
    ep = episodes[i]
    by_id = {q.qa_id: q for q in ep.qa}
    qa = by_id.get(f"{ep.episode_id}/q{j}")
    if qa is None:
        raise DatasetFormatError(f"{where}: {ep.meta['sample_id']} has no question {j}")
    return qa, ep.episode_id


def _ids(value: Any, where: str, key: str) -> list[str]:
    if not isinstance(value, list):
        raise DatasetFormatError(f"{where}: {key} should be a list of dia ids")
    return [str(v) for v in value]
