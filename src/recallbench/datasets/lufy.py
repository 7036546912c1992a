"""Load the LUFY dataset (Sumida et al. 2024) from its tree of annotated xlsx workbooks.

Format (``shared/data/lufy/SOURCE.md``; upstream GitHub ``ryuichi-sumida/LUFY``, ``Dataset/``):
``lufy/Dataset/{System}/{User}/Session{n}/Annotator{k}.xlsx``, System in LUFY, MemoryBank,
Naive RAG. Sheet ``Conversation``: header ``important? | speaker | utterance``, bot rows
``(None, 'Luke', text)``, user rows ``(0|1, user, text)`` (this annotator's importance label),
blank separator rows. Sheet ``Questions``: header ``Q_A | Questions``, then rows Q1, A1, Q2, A2,
Q3, A3. The annotator files of a session are copies of one conversation with different labels.

Records: one Episode per (system, user), id ``lufy/{system}/{user}``; one Session per
``Session{n}`` folder (4 in the real data) on consecutive simulated days (``clock.LUFY_GAP``);
turns ``.../s{n}/t{i}`` (``i`` = 0-based utterance position; the bot speaks first); each user turn
has ``labels["importance"] = {"0": 1, "1": 0, "2": 0}`` (annotator -> label); the session's QA
pairs are QAItems ``.../s{n}/q{1..3}`` with ``after_session = n``.

Canonical copy rule: turn and QA text come from the canonical annotator's file (option
``canonical_annotator``, default 0). Another annotator's labels are aligned to it by position
only when that copy has the same number of utterances with the same speaker sequence; otherwise
its labels are left out for that session. Every disagreement is listed in
``Episode.meta["mismatches"]`` with its kind: ``turn_count`` / ``speakers`` (labels dropped),
``turn_text`` (labels kept; the text differs after whitespace normalization), ``qa_text``
(canonical QA kept), ``missing_file`` (annotator seen in other sessions only).

Quirks handled (all seen in the real files):
- columns are read by position, never by header name: ``Naive RAG/James/Session3/Annotator1.xlsx``
  calls column A ``Unnamed: 0``; ``MemoryBank/William/Session3/Annotator2.xlsx`` has 18 extra
  ``Unnamed: 3..20`` columns (one cell holds a lone space) - columns after C are ignored;
- separator rows (no speaker) are skipped even when an annotator filled the label column down
  (label 0 on separator and bot rows in 27 files, e.g. ``Naive RAG/Mason/Session*/Annotator0``);
  labels on bot rows are ignored;
- a missing separator row (``LUFY/Ella/Session2/Annotator0.xlsx`` row 50, with a stray bot label);
- bot rows without text (7 turns, e.g. ``LUFY/Logan/Session3`` rows 59, 62 and 74, where the bot
  failed to answer) stay as turns with empty text, listed in ``meta["empty_turns"]``;
- leading/trailing spaces (2,225 utterance cells) are stripped; the only text difference between
  annotator copies (``LUFY/Isabella/Session4/Annotator2.xlsx``, turn 17) is such spaces;
- ``Questions`` sheets with extra ``Unnamed: 2..`` columns and free-text annotator comments after
  A3 or beside a QA row (9 files, e.g. ``MemoryBank/Noah/Session4/Annotator0.xlsx``; a pasted
  answer fragment in cell R7 of ``MemoryBank/James/Session4/Annotator1.xlsx``) -> kept in
  ``meta["annotator_comments"]`` as ``{session, annotator, cell, text}``, never in QA text;
- QA text that differs between copies (the bot called "Naomi" instead of "Luke" in
  ``MemoryBank/Mia/Session3``, ``MemoryBank/Mia/Session4`` and ``MemoryBank/William/Session3``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from recallbench import clock
from recallbench.datasets._common import check_known_count
from recallbench.datasets._lufy_xlsx import BOT, _Copy, _read_copies, _rel, _Utterance
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

SYSTEMS = ("LUFY", "MemoryBank", "Naive RAG")
LAYOUT = "lufy/Dataset/{System}/{User}/Session{n}/Annotator{k}.xlsx"

_SESSION = re.compile(r"Session(\d+)")


def load(
    data_dir: Path,
    system: str | Iterable[str] | None = None,
    users: str | Iterable[str] | None = None,
    canonical_annotator: int | str = 0,
) -> list[Episode]:
    """Load LUFY episodes from ``data_dir/lufy/Dataset``.

    Args:
        data_dir: data root holding ``lufy/``.
        system: one of ``SYSTEMS`` or a list of them; None loads all three (51 episodes).
        users: a user name or list of names to keep; None keeps every user.
        canonical_annotator: annotator whose copy gives the text (see module docstring).
    """
    data_dir = Path(data_dir)
    root = data_dir / "lufy" / "Dataset"
    if not root.is_dir():
        raise DatasetFormatError(f"{root}: folder not found (expected {LAYOUT})")
    canon = str(canonical_annotator)
    episodes = []
    for name in _select(system, SYSTEMS, "LUFY system"):
        system_dir = root / name
        if not system_dir.is_dir():
            raise DatasetFormatError(f"{_rel(system_dir, data_dir)}: folder missing ({LAYOUT})")
        found = sorted(p.name for p in system_dir.iterdir() if _visible_dir(p))
        if users is None:
            check_known_count(len(found), KNOWN_USERS, _rel(system_dir, data_dir), "users")
        for user in _select(users, found, f"user of LUFY system {name!r}"):
            episodes.append(_load_episode(data_dir, system_dir / user, name, user, canon))
    return episodes


KNOWN_USERS = 17  # per system in the released Dataset/ (51 episodes over the three systems)


def _select(value: str | Iterable[str] | None, options: Iterable[str], kind: str) -> list[str]:
    options = list(options)
    if value is None:
        return options
    wanted = [value] if isinstance(value, str) else [str(v) for v in value]
    for name in wanted:
        if name not in options:
            raise ConfigError(did_you_mean(kind, name, options).args[0])
    return [o for o in options if o in wanted]


def _visible_dir(path: Path) -> bool:
    return path.is_dir() and not path.name.startswith(".")


def _load_episode(data_dir: Path, user_dir: Path, system: str, user: str, canon: str) -> Episode:
    folders = _session_folders(data_dir, user_dir)
    base = f"lufy/{system}/{user}"
    copies = {n: _read_copies(data_dir, folder, user) for n, folder in folders}
    annotators = sorted({a for c in copies.values() for a in c}, key=int)
    meta: dict[str, Any] = {
        "system": system,
        "user": user,
        "annotators": annotators,
        "canonical_annotator": canon,
        "mismatches": [],
        "annotator_comments": [],
        "empty_turns": [],
    }
    sessions, qa = [], []
    starts = clock.regular(len(folders), clock.LUFY_GAP)
    for (n, folder), start in zip(folders, starts, strict=True):
        by_annotator = copies[n]
        if canon not in by_annotator:
            raise DatasetFormatError(
                f"{_rel(folder, data_dir)}: canonical Annotator{canon}.xlsx missing "
                f"(found: {sorted(f'Annotator{a}.xlsx' for a in by_annotator)})"
            )
        for missing in sorted(set(annotators) - set(by_annotator), key=int):
            meta["mismatches"].append({"session": n, "annotator": missing, "kind": "missing_file"})
        session = _build_session(f"{base}/s{n}", n, start, by_annotator, canon, meta)
        sessions.append(session)
        qa.extend(_qa_items(f"{base}/s{n}", n, by_annotator, canon, meta))
        for annotator, copy in by_annotator.items():
            for comment in copy.comments:
                entry = {"session": n, "annotator": annotator}
                meta["annotator_comments"].append(entry | comment)
    return Episode(base, "lufy", (BOT, user), tuple(sessions), tuple(qa), meta)


def _session_folders(data_dir: Path, user_dir: Path) -> list[tuple[int, Path]]:
    folders = sorted(
        (int(m.group(1)), p)
        for p in user_dir.iterdir()
        if _visible_dir(p) and (m := _SESSION.fullmatch(p.name))
    )
    numbers = [n for n, _ in folders]
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise DatasetFormatError(
            f"{_rel(user_dir, data_dir)}: expected folders Session1..SessionN without gaps, "
            f"found {[f'Session{n}' for n in numbers]}"
        )
    return folders


def _norm(text: str) -> str:
    return " ".join(text.split())


def _alignment(
    canon: tuple[_Utterance, ...], other: tuple[_Utterance, ...]
) -> dict[str, Any] | None:
    """Return why ``other`` cannot be aligned to ``canon`` by position, or None if it can."""
    if len(other) != len(canon):
        return {"kind": "turn_count", "expected": len(canon), "found": len(other)}
    for i, (a, b) in enumerate(zip(canon, other, strict=True)):
        if a.speaker != b.speaker:
            return {"kind": "speakers", "turn": i, "expected": a.speaker, "found": b.speaker}
    return None


def _build_session(
    sid: str, n: int, start: Any, copies: dict[str, _Copy], canon: str, meta: dict[str, Any]
) -> Session:
    canonical = copies[canon].utterances
    aligned = []
    for annotator in sorted(copies, key=int):
        other = copies[annotator].utterances
        problem = None if annotator == canon else _alignment(canonical, other)
        if problem:
            meta["mismatches"].append({"session": n, "annotator": annotator} | problem)
            continue
        aligned.append(annotator)
        differs = [
            f"{sid}/t{i}"
            for i, (a, b) in enumerate(zip(canonical, other, strict=True))
            if _norm(a.text) != _norm(b.text)
        ]
        if differs:
            entry = {"session": n, "annotator": annotator, "kind": "turn_text", "turns": differs}
            meta["mismatches"].append(entry)
    turns = []
    for i, utt in enumerate(canonical):
        labels = {}
        if utt.speaker != BOT:
            labels["importance"] = {a: copies[a].utterances[i].label for a in aligned}
        turns.append(Turn(f"{sid}/t{i}", utt.speaker, utt.text, labels))
        if not utt.text:
            meta["empty_turns"].append(f"{sid}/t{i}")
    return Session(sid, n, start, tuple(turns))


def _qa_items(
    sid: str, n: int, copies: dict[str, _Copy], canon: str, meta: dict[str, Any]
) -> list[QAItem]:
    canonical = copies[canon].qa
    for annotator in sorted(copies, key=int):
        items = [
            f"{kind}{i}"
            for i, (a, b) in enumerate(zip(canonical, copies[annotator].qa, strict=True), start=1)
            for kind, x, y in (("Q", a[0], b[0]), ("A", a[1], b[1]))
            if _norm(x) != _norm(y)
        ]
        if items:
            entry = {"session": n, "annotator": annotator, "kind": "qa_text", "items": items}
            meta["mismatches"].append(entry)
    return [
        QAItem(f"{sid}/q{i}", question, (answer,), after_session=n)
        for i, (question, answer) in enumerate(canonical, start=1)
    ]
