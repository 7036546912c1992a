"""CareCall_mem (Bae et al., Findings of EMNLP 2022, "Keep Me Updated! Memory Management in
Long-term Conversations"; data (c) NAVER Corp., non-commercial research only).

Files: ``<data_dir>/carecall_mem/data/<file>``; ``file`` defaults to the public sample
``carecall-memory-sample.json`` (Korean); the full request-form file and the English
``carecall-memory_en_auto_translated.json`` share the schema. A session object::

    {"guid": "interactive-35-S1",                  # interactive-<episode>-S<session index>
     "dialogue": [{"role": "system"|"user", "text": "..."}, ...],   # system = the CareCall bot
     "memory": ["..."],                            # memory about the user BEFORE this session
     "summary": ["..."]}                           # new information from THIS session

Quirks handled:

- Nesting: the README says "a list of sessions" but the sample is a list of episodes, each a list
  of sessions. Both are accepted (also mixed); loose sessions are grouped by the guid prefix
  before ``-S<n>``. Sessions of one episode are ordered by that index.
- Session index from the guid (``-S<n>``), not from list position; gaps are kept.
- Degenerate sessions (``interactive-687-S1``/``-S2``: a single system utterance and empty
  memory/summary) are kept and listed in ``meta["degenerate_sessions"]``;
  ``skip_degenerate=True`` drops them (and episodes left empty).

Mapping: ``Session.gold = {"memory": [...], "summary": [...]}``; speakers ``system``/``user``
(``meta["bot"] = "system"``); no timestamps in the data, so the clock is regular with
``clock.CARECALL_GAP`` (paper: 1-2 weeks apart), session n at ``EPOCH + (n-1) * gap``.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from recallbench.clock import CARECALL_GAP, EPOCH
from recallbench.datasets._common import (
    check_known_count,
    display,
    get,
    make_turns,
    read_json,
    require_file,
    strings,
)
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, Session

FOLDER = Path("carecall_mem/data")
DEFAULT_FILE = "carecall-memory-sample.json"
KNOWN_SAMPLE_EPISODES = 10  # the public sample (45 sessions)
ROLES = ("system", "user")
_GUID = re.compile(r"(?P<episode>.+)-S(?P<index>\d+)")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def load(
    data_dir: Path,
    file: str | Path = DEFAULT_FILE,
    skip_degenerate: bool = False,
    gap_days: float | None = None,
) -> list[Episode]:
    """Load CareCall_mem episodes from ``carecall_mem/data/<file>`` (or an absolute path).

    Args:
        data_dir: data root holding ``carecall_mem/``.
        file: file name inside ``carecall_mem/data/`` or a path.
        skip_degenerate: drop sessions with fewer than two utterances.
        gap_days: simulated days between consecutive session indices (default
            ``clock.CARECALL_GAP``, 10.5 days).
    """
    data_dir = Path(data_dir)
    gap = CARECALL_GAP if gap_days is None else timedelta(days=gap_days)
    path = Path(file)
    if not path.is_absolute() and len(path.parts) == 1:
        path = FOLDER / path
    path = require_file(path if path.is_absolute() else data_dir / path, data_dir, "CareCall")
    name = display(path, data_dir)
    data = read_json(path, data_dir)
    if not isinstance(data, list):
        raise DatasetFormatError(
            f"{name}: expected a JSON list of episodes (lists of sessions) or of sessions, "
            f"got {type(data).__name__}"
        )
    groups = _group(data, name)
    if path.name == DEFAULT_FILE:
        check_known_count(len(groups), KNOWN_SAMPLE_EPISODES, name, "episodes")
    episodes = []
    for episode_id, sessions in groups.items():
        episode = _episode(episode_id, sessions, name, skip_degenerate, gap)
        if episode.sessions:
            episodes.append(episode)
    return episodes


def _group(data: list[Any], name: str) -> dict[str, dict[int, tuple[str, dict[str, Any]]]]:
    """Return {episode id: {session index: (where, session)}} in file order."""
    groups: dict[str, dict[int, tuple[str, dict[str, Any]]]] = {}
    for i, item in enumerate(data):
        if isinstance(item, list):  # the sample's nesting: one list per episode
            members = [(f"{name} episode {i} session {j}", s) for j, s in enumerate(item)]
            nested = True
        elif isinstance(item, dict):  # the README's flat list of sessions
            members, nested = [(f"{name} session {i}", item)], False
        else:
            raise DatasetFormatError(
                f"{name} item {i}: expected a session object or a list of them, "
                f"got {type(item).__name__}"
            )
        seen: set[str] = set()
        for where, session in members:
            guid = get(session, "guid", str, where)
            m = _GUID.fullmatch(guid)
            if not m:
                raise DatasetFormatError(
                    f"{where}: guid {guid!r} should look like 'interactive-35-S1' (<episode>-S<n>)"
                )
            episode_id, index = m.group("episode"), int(m.group("index"))
            seen.add(episode_id)
            if nested and len(seen) > 1:
                raise DatasetFormatError(
                    f"{where}: guid {guid!r} belongs to another episode than "
                    f"{sorted(seen - {episode_id})} listed before it in the same episode list"
                )
            slots = groups.setdefault(episode_id, {})
            if index in slots:
                raise DatasetFormatError(
                    f"{where}: duplicate session {guid!r} (first at {slots[index][0]})"
                )
            slots[index] = (f"{where} ({guid})", session)
    return groups


def _episode(
    episode_id: str,
    sessions: dict[int, tuple[str, dict[str, Any]]],
    name: str,
    skip_degenerate: bool,
    gap: timedelta,
) -> Episode:
    out, degenerate = [], []
    for index in sorted(sessions):
        where, record = sessions[index]
        guid = record["guid"]
        utterances = []
        for j, turn in enumerate(get(record, "dialogue", list, where)):
            at = f"{where} dialogue[{j}]"
            role = get(turn, "role", str, at)
            if role not in ROLES:
                raise DatasetFormatError(f"{at}: role should be 'system' or 'user', got {role!r}")
            utterances.append((role, get(turn, "text", str, at)))
        gold = {
            "memory": strings(get(record, "memory", list, where), "memory", where),
            "summary": strings(get(record, "summary", list, where), "summary", where),
        }
        if len(utterances) < 2:
            degenerate.append(guid)
            if skip_degenerate:
                continue
        start = EPOCH + (index - 1) * gap
        out.append(Session(guid, index, start, make_turns(guid, utterances), gold))
    text = " ".join(t.text for s in out for t in s.turns)
    meta = {
        "bot": "system",
        "user": "user",
        "source": name,
        "language": "ko" if _HANGUL.search(text) else "en",
        "degenerate_sessions": degenerate,
        "gap_s": gap.total_seconds(),
    }
    return Episode(episode_id, "carecall", ROLES, tuple(out), (), meta)
