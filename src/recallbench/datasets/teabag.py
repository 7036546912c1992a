"""TeaBag: TeaFarm's counterfactual QA set (THEANINE, Ong et al., NAACL 2025, arXiv 2406.10996,
App. D: 100 MSC/CC episodes of 5 sessions, 2 counterfactual questions and 2 synthesized sessions 6
per episode).

The Hub release (``LangAGI-Lab/teafarm``) could not be inspected here, so this module defines our
own JSON Lines interchange format (full description: ``docs/teabag_format.md``), one line per
question::

    {"qid": "cc-episode-7-q1", "episode_id": "episode-7", "source_dataset": "cc",
     "speaker": "Neighbors A",                 # who ASKS (the agent answers as the other speaker)
     "question": "...", "answer": "...",        # counterfactual question, correct answer
     "session6": [{"speaker": "Neighbors A", "text": "..."}, ...],   # optional, ends with question
     "sessions": [{"dialogue": ["..."], "speakers": ["..."],          # inline episode, or ...
                   "time_interval": "A few days after", "summary": "...", "start": "ISO time"}],
     "source_options": {"split": "test"}}      # ... a reference: no "sessions"; the episode is
                                               # load(source_dataset, data_dir, **source_options)
                                               # [episode_id]

Inline sessions use the flattened schema's parallel lists (``datasets/_flat.py``). Session starts:
every session's ``start`` when all have one; otherwise ``clock.phrase_gap`` of ``time_interval``
(sessions 2..n) with ``clock.UNKNOWN_GAP`` where it is missing (listed in
``meta["time"]["assumed_before"]``).

``load`` groups lines by ``episode_id`` into Episodes (dataset ``"teabag"``) holding the sessions
and one QAItem per line: ``kind="teafarm"``, ``answers=(answer,)``, ``after_session`` = last
session, ``meta = {"speaker", "responder", "session6", "source_dataset"}``. ``write_teabag`` writes
items in this format (the TeaFarm protocol saves its generated questions with it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from recallbench.clock import UNKNOWN_GAP, ClockError, from_gaps, phrase_gap
from recallbench.datasets._common import display, get, iter_jsonl, require_file, strings
from recallbench.datasets._flat import build_episode, pairs
from recallbench.errors import DatasetFormatError
from recallbench.io import write_jsonl_rows
from recallbench.records import Episode, QAItem
from recallbench.store import JSONValue

DEFAULT_FILE = Path("teabag/teabag.jsonl")
SOURCES = ("msc", "cc")
_REQUIRED = ("qid", "episode_id", "source_dataset", "speaker", "question", "answer")


@dataclass(frozen=True)
class TeaBagItem:
    """One counterfactual question in the interchange format (one JSON line)."""

    qid: str
    episode_id: str
    source_dataset: str
    speaker: str
    question: str
    answer: str
    session6: tuple[dict[str, str], ...] = ()
    sessions: tuple[dict[str, JSONValue], ...] | None = None
    source_options: dict[str, JSONValue] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, object], where: str = "teabag item") -> TeaBagItem:
        """Validate one line's object and build the item (errors name ``where``)."""
        d = dict(d)
        values = [get(d, key, str, where) for key in _REQUIRED]
        if values[2] not in SOURCES:
            raise DatasetFormatError(
                f"{where}: source_dataset should be one of {list(SOURCES)}, got {values[2]!r}"
            )
        session6: list[dict[str, str]] = []
        turns = d.get("session6") or []
        if not isinstance(turns, list):
            raise DatasetFormatError(f"{where}: 'session6' should be a list")
        for j, turn in enumerate(turns):
            at = f"{where} session6[{j}]"
            session6.append(
                {"speaker": get(turn, "speaker", str, at), "text": get(turn, "text", str, at)}
            )
        sessions = d.get("sessions")
        if sessions is not None:
            if not isinstance(sessions, list) or not sessions:
                raise DatasetFormatError(f"{where}: 'sessions' should be a non-empty list")
            if d.get("source_options"):
                raise DatasetFormatError(
                    f"{where}: give either inline 'sessions' or 'source_options', not both"
                )
            sessions = tuple(
                _check_session(s, f"{where} sessions[{i}]") for i, s in enumerate(sessions)
            )
        options = d.get("source_options") or {}
        if not isinstance(options, dict):
            raise DatasetFormatError(f"{where}: 'source_options' should be an object")
        qid, episode_id, source_dataset, speaker, question, answer = values
        return cls(
            qid,
            episode_id,
            source_dataset,
            speaker,
            question,
            answer,
            tuple(session6),
            sessions,
            dict(options),
        )

    def to_dict(self) -> dict[str, JSONValue]:
        """Return the JSON line's object (``sessions``/``source_options`` only when set)."""
        d = asdict(self)
        d["session6"] = list(self.session6)
        if self.sessions is None:
            del d["sessions"]
        else:
            d["sessions"] = list(self.sessions)
            del d["source_options"]
        return d


def _check_session(s: object, where: str) -> dict[str, JSONValue]:
    if not isinstance(s, dict):
        raise DatasetFormatError(f"{where}: expected an object, got {type(s).__name__}")
    pairs(get(s, "dialogue", list, where), get(s, "speakers", list, where), "session", where)
    for key in ("time_interval", "start"):
        if key in s and not isinstance(s[key], str):
            raise DatasetFormatError(f"{where}: {key!r} should be a string")
    if "summary" in s and not isinstance(s["summary"], str):
        strings(s["summary"], "summary", where)
    return dict(s)


def inline_sessions(episode: Episode) -> tuple[dict[str, JSONValue], ...]:
    """Return an episode's sessions in the inline form (dialogue, speakers, start, summary)."""
    out = []
    for s in episode.sessions:
        d: dict[str, JSONValue] = {
            "dialogue": [t.text for t in s.turns],
            "speakers": [t.speaker for t in s.turns],
        }
        if s.start is not None:
            d["start"] = s.start.isoformat()
        if "summary" in s.gold:
            d["summary"] = s.gold["summary"]
        out.append(d)
    return tuple(out)


def read_teabag(path: str | Path, data_dir: Path | None = None) -> list[TeaBagItem]:
    """Read and validate a TeaBag JSONL file; qids must be unique."""
    path = Path(path)
    root = data_dir if data_dir is not None else path.parent
    items, seen = [], dict[str, str]()
    for where, record in iter_jsonl(path, root):
        item = TeaBagItem.from_dict(record, where)
        if item.qid in seen:
            raise DatasetFormatError(
                f"{where}: duplicate qid {item.qid!r} (first at {seen[item.qid]})"
            )
        seen[item.qid] = where
        items.append(item)
    return items


def write_teabag(path: str | Path, items: Iterable[TeaBagItem | Mapping[str, object]]) -> int:
    """Validate ``items`` and write them as TeaBag JSONL atomically; return the count."""
    rows = [
        (
            item
            if isinstance(item, TeaBagItem)
            else TeaBagItem.from_dict(item, f"write_teabag item {i}")
        )
        for i, item in enumerate(items)
    ]
    write_jsonl_rows(path, (item.to_dict() for item in rows))
    return len(rows)


def load(data_dir: Path, file: str | Path = DEFAULT_FILE) -> list[Episode]:
    """Load a TeaBag JSONL file into Episodes with ``teafarm`` QAItems (see module docstring)."""
    data_dir = Path(data_dir)
    path = Path(file)
    path = require_file(path if path.is_absolute() else data_dir / path, data_dir, "TeaBag")
    groups: dict[str, list[TeaBagItem]] = {}
    for item in read_teabag(path, data_dir):
        groups.setdefault(item.episode_id, []).append(item)
    cache: dict[str, dict[str, Episode]] = {}
    return [_episode(items, data_dir, display(path, data_dir), cache) for items in groups.values()]


def _episode(
    items: list[TeaBagItem], data_dir: Path, name: str, cache: dict[str, dict[str, Episode]]
) -> Episode:
    first = items[0]
    where = f"{name} qid {first.qid!r}"
    for other in items[1:]:
        same = (other.source_dataset, other.sessions, other.source_options)
        if same != (first.source_dataset, first.sessions, first.source_options):
            raise DatasetFormatError(
                f"{name} qid {other.qid!r}: episode {first.episode_id!r} is described differently "
                f"than at qid {first.qid!r} (source_dataset, sessions and source_options must match)"
            )
    if first.sessions is not None:
        base = _inline_episode(first, where)
    else:
        base = _referenced(first, data_dir, where, cache)
    qa = tuple(_qa(item, base, f"{name} qid {item.qid!r}") for item in items)
    meta = dict(base.meta, source_dataset=first.source_dataset, source_options=first.source_options)
    return Episode(first.episode_id, "teabag", base.speakers, base.sessions, qa, meta)


def _inline_episode(item: TeaBagItem, where: str) -> Episode:
    sessions = item.sessions or ()
    utterances = [
        pairs(s["dialogue"], s["speakers"], f"session {i + 1}", where)
        for i, s in enumerate(sessions)
    ]
    assumed: list[int] = []
    if all("start" in s for s in sessions):
        try:
            starts = [datetime.fromisoformat(str(s["start"])) for s in sessions]
        except ValueError as exc:
            raise DatasetFormatError(f"{where}: bad session 'start': {exc}") from None
    else:
        gaps = []
        for index, s in enumerate(sessions[1:], start=2):
            if "time_interval" in s:
                try:
                    gaps.append(phrase_gap(str(s["time_interval"])))
                except ClockError as exc:
                    raise DatasetFormatError(
                        f"{where}: session {index} time_interval: {exc}"
                    ) from None
            else:
                gaps.append(UNKNOWN_GAP)
                assumed.append(index)
        starts = from_gaps(gaps)
    gold = []
    for s in sessions:
        summary = s.get("summary")
        gold.append(
            {}
            if summary is None
            else {"summary": [summary] if isinstance(summary, str) else summary}
        )
    meta = {"time": {"assumed_before": assumed}}
    return build_episode(item.episode_id, "teabag", utterances, starts, gold, meta)


def _referenced(
    item: TeaBagItem, data_dir: Path, where: str, cache: dict[str, dict[str, Episode]]
) -> Episode:
    from recallbench.datasets import load as load_dataset  # the registry imports this module

    key = json.dumps([item.source_dataset, item.source_options], sort_keys=True)
    if key not in cache:
        episodes = load_dataset(item.source_dataset, data_dir, **item.source_options)
        cache[key] = {e.episode_id: e for e in episodes}
    found = cache[key].get(item.episode_id)
    if found is None:
        raise DatasetFormatError(
            f"{where}: episode {item.episode_id!r} not found in {item.source_dataset} "
            f"with options {item.source_options} ({len(cache[key])} episodes loaded)"
        )
    return found


def _qa(item: TeaBagItem, episode: Episode, where: str) -> QAItem:
    speakers = episode.speakers
    for who in [item.speaker] + [t["speaker"] for t in item.session6]:
        if who not in speakers:
            raise DatasetFormatError(
                f"{where}: speaker {who!r} is not a speaker of episode {item.episode_id!r} "
                f"(speakers: {list(speakers)})"
            )
    others = [s for s in speakers if s != item.speaker]
    meta = {
        "speaker": item.speaker,
        "responder": others[0] if len(others) == 1 else None,
        "session6": list(item.session6),
        "source_dataset": item.source_dataset,
    }
    after = episode.sessions[-1].index if episode.sessions else 0
    return QAItem(item.qid, item.question, (item.answer,), after, (), "teafarm", meta)
