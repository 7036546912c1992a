"""Read the LoCoMo audit's ``errors.json`` as errata (``dial481/locomo-audit``, CC BY-NC 4.0).

Format (``shared/data/locomo_audit/SOURCE.md``): a list of entries ``{"question_id":
"locomo_<i>_qa<j>", "question", "golden_answer", "category", "error_type", "cited_evidence",
"correct_evidence", "reasoning", "correct_answer"}``; ``i`` is the conversation's position in
the release's order (conv-26, conv-30, ... conv-50), ``j`` the index of the question in that
conversation's full ``qa`` list. Each entry is checked against the release (question text and
answer, as strings after whitespace normalization) and becomes a ``flag`` carrying its
``error_type``, an ``evidence`` correction when ``correct_evidence`` differs from
``cited_evidence`` and, when ``correct_answer`` differs from ``golden_answer``, what its ``use``
says (``resources/locomo_audit_keys.yaml``, one per such entry of the audit, by ``question_id``
and the sha1 of the normalised ``correct_answer``; another file in the audit's format may give
``use`` in the entry itself; an entry with neither is refused):

- ``answer``: the new reference is ``correct_answer``; ``strip``: the same with every
  parenthesised span removed (citations "(D17:12)", glosses, asides); ``first``: as ``strip``,
  then the text before the first ". " or ";" (an answer followed by a remark). The result must
  hold no parenthesis and no dia id, or the entry is refused (``reduce_answer``);
- ``release``: the correction restates the release's answer with a remark: no answer change;
- ``no_key``: the correction is a remark, not an answer: the question has no usable key
  (``no_key``: under errata F1 and B1 leave it out; J keeps it, flagged);
- ``evidence_only``: the only use of a ``WRONG_CITATION`` entry (its answer is right), and only
  of one: the evidence moves, the answer does not.

Score-changing: every ``error_type`` but ``WRONG_CITATION`` (the audit's 99
"score-corrupting" entries; a wrong citation changes recall only).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, QAItem

AUDIT_FILE = "errors.json"
KEYS_FILE = Path(__file__).resolve().parents[1] / "resources" / "locomo_audit_keys.yaml"
USES = ("answer", "strip", "first", "release", "no_key", "evidence_only")
_PARENS = re.compile(r"\s*\([^()]*\)")
_CITATION = re.compile(r"\bD\d+:\d+")
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
    use: str | None = None  # the audit's: how its correct_answer is used (USES)


def _norm(value: Any) -> str:
    return " ".join(str(value).split())


def _sha1(text: str) -> str:
    return hashlib.sha1(_norm(text).encode("utf-8")).hexdigest()


def reduce_answer(text: str, use: str) -> str:
    """The reference a correction's text gives under ``use`` ``answer``, ``strip`` or ``first``."""
    out = _norm(text)
    if use in ("strip", "first"):
        while (shorter := _PARENS.sub("", out)) != out:  # inner spans first
            out = shorter
        out = re.sub(r"\s+([,.;:])", r"\1", _norm(out))
    if use == "first":
        out = re.split(r"\.\s|;", out, maxsplit=1)[0]
    return out.strip().rstrip(".").strip()


def read_uses(path: Path = KEYS_FILE) -> dict[tuple[str, str], str]:
    """The committed ``use`` of each audit correction, by (question_id, sha1 of its text)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("audit_keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DatasetFormatError(f"{path}: expected a mapping with an 'audit_keys' list")
    out = {}
    for k, e in enumerate(entries):
        where = f"{path} audit_keys[{k}]"
        if not isinstance(e, dict) or {"question_id", "correct_answer_sha1", "use"} - set(e):
            raise DatasetFormatError(f"{where}: needs question_id, correct_answer_sha1, use")
        if e["use"] not in USES:
            raise DatasetFormatError(f"{where}: use should be one of {USES}, got {e['use']!r}")
        out[(str(e["question_id"]), str(e["correct_answer_sha1"]))] = str(e["use"])
    return out


def read_audit(
    path: Path, episodes: Sequence[Episode], origin: str, uses: Path = KEYS_FILE
) -> list[Fix]:
    """Return the fixes of an audit ``errors.json`` for ``episodes`` (the full release, in order).

    ``uses``: the file saying how each correction's ``correct_answer`` is used (module doc).
    """
    if not path.is_file():
        raise DatasetFormatError(f"{path}: LoCoMo audit errata file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, list):
        raise DatasetFormatError(f"{path}: expected a list of audit entries")
    known = read_uses(uses)
    out: list[Fix] = []
    for k, entry in enumerate(data):
        out += _entry_fixes(entry, f"{path} entry {k}", episodes, origin, known)
    return out


def _entry_fixes(
    entry: Any,
    where: str,
    episodes: Sequence[Episode],
    origin: str,
    known: dict[tuple[str, str], str],
) -> list[Fix]:
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
    use = None
    if _norm(entry["correct_answer"]) != _norm(entry["golden_answer"]):
        use = _use(entry, where, known)
    out = [Fix(qa.qa_id, "flag", kind, origin, source, changing, kind, use)]
    if use in ("answer", "strip", "first"):
        new = reduce_answer(str(entry["correct_answer"]), use)
        if not new or "(" in new or ")" in new or _CITATION.search(new):
            raise DatasetFormatError(
                f"{where}: use {use!r} leaves {new!r}, not an answer (no parenthesis or dia id "
                f"allowed): classify it release or no_key ({KEYS_FILE.name})"
            )
        if new != _norm(entry["golden_answer"]):
            out.append(Fix(qa.qa_id, "answer", new, origin, source, changing, kind, use))
    elif use == "no_key":
        out.append(Fix(qa.qa_id, "no_key", True, origin, source, changing, kind, use))
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


def _use(entry: dict[str, Any], where: str, known: dict[tuple[str, str], str]) -> str:
    """How a differing ``correct_answer`` is used: the entry's ``use`` or the committed one."""
    qid, kind = str(entry["question_id"]), str(entry["error_type"])
    use = entry.get("use") or known.get((qid, _sha1(str(entry["correct_answer"]))))
    if use is None:
        raise DatasetFormatError(
            f"{where}: its correct_answer differs from golden_answer but has no use (one of "
            f"{USES}): add it to {KEYS_FILE.name} or give 'use' in the entry"
        )
    if use not in USES:
        raise DatasetFormatError(f"{where}: use should be one of {USES}, got {use!r}")
    if (use == "evidence_only") != (kind == RECALL_ONLY):
        raise DatasetFormatError(
            f"{where}: use {use!r} with error_type {kind}: a {RECALL_ONLY} entry's answer is "
            "right (use evidence_only), and only such an entry moves the evidence alone"
        )
    return str(use)
