"""Persona-Chat / ConvAI2 (Zhang et al., ACL 2018; Dinan et al. 2019) in ParlAI's text format.

Files: ``<data_dir>/persona_chat/**/<file>`` (``file`` default
``valid_self_original_no_cands.txt``; searched recursively, e.g. ``data/ConvAI2/``). Each line is
``<n> <content>``; ``n`` restarts at 1 for every dialogue and otherwise grows by one. Content is

- ``your persona: <fact>`` (the "self" speaker's persona) or ``partner's persona: <fact>``
  (``both`` variants), always before the exchanges;
- an exchange ``<partner utterance>\\t<self utterance>`` (``_no_cands`` files), or with candidates
  ``<partner>\\t<self>\\t<reward>\\t<c1>|<c2>|...`` (4 tab fields, the last candidate is the gold).

One Episode per dialogue, one Session: turns alternate ``partner``/``self`` (a partner text of
``__SILENCE__``, used when self opens, is skipped); candidates are kept in the self turn's
``labels["candidates"]``. ``Session.gold["persona"] = {"self": [...], "partner": [...]}`` (partner
only when the file has it), repeated in ``Episode.meta["persona"]``. Ids:
``<file stem>/<dialogue number>`` (1-based, file order), e.g.
``valid_self_original_no_cands/3``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.clock import EPOCH
from recallbench.datasets._common import display, make_turns, session_id
from recallbench.errors import ConfigError, DataNotFoundError, DatasetFormatError
from recallbench.records import Episode, Session

FOLDER = Path("persona_chat")
DEFAULT_FILE = "valid_self_original_no_cands.txt"
SPEAKERS = ("partner", "self")
SILENCE = "__SILENCE__"
_LINE = re.compile(r"(\d+) (.*)")
_PERSONA = {"your persona:": "self", "partner's persona:": "partner"}


@dataclass
class _Dialogue:
    line: int
    persona: dict[str, list[str]] = field(default_factory=lambda: {"self": [], "partner": []})
    turns: list[tuple[str, str]] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)


def load(data_dir: Path, file: str | Path = DEFAULT_FILE) -> list[Episode]:
    """Load one ParlAI Persona-Chat text file as one single-session Episode per dialogue."""
    data_dir = Path(data_dir)
    path = _find(data_dir, Path(file))
    name = display(path, data_dir)
    dialogues = _parse(path.read_text(encoding="utf-8").splitlines(), name)
    episodes = []
    for number, d in enumerate(dialogues, start=1):
        episode_id = f"{path.stem}/{number}"
        sid = session_id(episode_id, 1)
        persona = {k: v for k, v in d.persona.items() if v or k == "self"}
        session = Session(sid, 1, EPOCH, make_turns(sid, d.turns, d.labels), {"persona": persona})
        meta = {"persona": persona, "source": f"{name} line {d.line}", "file": path.name}
        episodes.append(Episode(episode_id, "persona_chat", SPEAKERS, (session,), (), meta))
    return episodes


def _find(data_dir: Path, file: Path) -> Path:
    """Resolve ``file``: a path, a path under ``persona_chat/``, or a unique name below it."""
    folder = data_dir / FOLDER
    direct = file if file.is_absolute() else folder / file
    if direct.is_file():
        return direct
    matches = sorted(folder.rglob(file.name)) if folder.is_dir() and not file.is_absolute() else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ConfigError(
            f"persona_chat: {file.name!r} matches several files, pass a path relative to "
            f"{display(folder, data_dir)}/: {[display(p, data_dir) for p in matches]}"
        )
    available = (
        sorted(display(p, data_dir) for p in folder.rglob("*.txt")) if folder.is_dir() else []
    )
    raise DataNotFoundError(
        f"persona_chat: {file} not found under {display(folder, data_dir)}/ "
        f"(available: {available or 'none'})"
    )


def _parse(lines: list[str], name: str) -> list[_Dialogue]:
    dialogues: list[_Dialogue] = []
    previous = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        where = f"{name} line {number}"
        m = _LINE.fullmatch(line)
        if not m:
            raise DatasetFormatError(f"{where}: expected '<n> <text>', got {line[:60]!r}")
        n, content = int(m.group(1)), m.group(2)
        if n == 1:
            dialogues.append(_Dialogue(number))
        elif not dialogues or n != previous + 1:
            raise DatasetFormatError(
                f"{where}: line number {n} should be 1 (new dialogue) or {previous + 1}"
            )
        previous = n
        _add(dialogues[-1], content, where)
    return dialogues


def _add(d: _Dialogue, content: str, where: str) -> None:
    for prefix, who in _PERSONA.items():
        if content.startswith(prefix):
            if d.turns:
                raise DatasetFormatError(f"{where}: persona line after the dialogue started")
            d.persona[who].append(content[len(prefix) :].strip())
            return
    fields = content.split("\t")
    if len(fields) not in (2, 4):
        raise DatasetFormatError(
            f"{where}: expected 2 tab-separated fields (partner, self) or 4 (partner, self, "
            f"reward, candidates), got {len(fields)}"
        )
    partner, own = fields[0], fields[1]
    label: dict[str, Any] = {}
    if len(fields) == 4:
        candidates = fields[3].split("|")
        if candidates[-1] != own:
            raise DatasetFormatError(
                f"{where}: the last candidate should be the self utterance {own!r}, "
                f"got {candidates[-1]!r}"
            )
        label["candidates"] = candidates
    if partner != SILENCE:
        d.turns.append(("partner", partner))
        d.labels.append({})
    d.turns.append(("self", own))
    d.labels.append(label)
