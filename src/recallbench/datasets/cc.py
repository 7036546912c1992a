"""Conversation Chronicles (Jang, Boo, Kim, EMNLP 2023, arXiv 2310.13420).

One JSON object per episode in the flattened schema (``datasets/_flat.py``) plus ``relationship``
(e.g. ``"Neighbors"``), ``time_interval`` (five phrases; the first is ``"Start"``, each later one is
the time since the previous session, e.g. ``"A few hours after"``) and ``summary`` (one string per
session, the dataset's chronological summary). Speakers are named after the relationship
(``"Neighbors A"``/``"Neighbors B"``).

Sources: ``source="local"`` (default) reads ``<data_dir>/conversation_chronicles/{split}.jsonl``
(the Hub's own file names: ``train``, ``valid``, ``test``); ``source="hub"`` calls
``datasets.load_dataset("jihyoung/ConversationChronicles")`` (needs internet or a warm cache).

Mapping: ``Episode.episode_id`` = ``dataID``; ``Session.gold["summary"]`` = ``[summary[i]]`` (one
string, not split into sentences); ``Session.start`` from ``clock.phrase_gap`` over
``time_interval[1:]`` starting at ``clock.EPOCH``; ``Episode.meta``: ``relationship``,
``time_interval`` (raw phrases), ``split``, ``source``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from recallbench.clock import ClockError, from_gaps, phrase_gap
from recallbench.datasets._common import get, iter_jsonl, require_file, strings
from recallbench.datasets._flat import build_episode, flat_sessions
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode

HUB_ID = "jihyoung/ConversationChronicles"
FOLDER = Path("conversation_chronicles")
# local file stem -> Hub split name (the Hub builder maps valid.jsonl to "validation")
SPLITS = {"train": "train", "valid": "validation", "validation": "validation", "test": "test"}


def load(
    data_dir: Path,
    split: str = "test",
    source: Literal["local", "hub"] = "local",
    limit: int | None = None,
    path: str | Path | None = None,
) -> list[Episode]:
    """Load Conversation Chronicles episodes.

    Args:
        data_dir: data root holding ``conversation_chronicles/``.
        split: ``train``, ``valid`` (alias ``validation``) or ``test``.
        source: ``local`` JSONL files or the Hugging Face ``hub``.
        limit: keep only the first ``limit`` episodes (reading stops there).
        path: a JSONL file to read instead of ``conversation_chronicles/{split}.jsonl``.
    """
    data_dir = Path(data_dir)
    if split not in SPLITS:
        raise ConfigError(f"cc: unknown split {split!r} (options: train, valid, test)")
    if limit is not None and limit < 0:
        raise ConfigError(f"cc: limit must be >= 0, got {limit}")
    stem = "valid" if SPLITS[split] == "validation" else split
    if source == "hub":
        records = _hub_records(split)
    elif source == "local":
        file = Path(path) if path is not None else FOLDER / f"{stem}.jsonl"
        file = require_file(
            file if file.is_absolute() else data_dir / file, data_dir, "Conversation Chronicles"
        )
        records = iter_jsonl(file, data_dir)
    else:
        raise ConfigError(f"cc: unknown source {source!r} (options: 'local', 'hub')")
    episodes: list[Episode] = []
    for where, record in records:
        if limit is not None and len(episodes) >= limit:
            break
        episodes.append(episode_from_record(record, where, split=stem))
    return episodes


def episode_from_record(
    record: Mapping[str, object], where: str, split: str | None = None
) -> Episode:
    """Turn one Conversation Chronicles record into an Episode (see the module docstring)."""
    episode_id = get(record, "dataID", str, where)
    sessions = flat_sessions(record, where)
    n = len(sessions)
    intervals = strings(get(record, "time_interval", list, where), "time_interval", where)
    summary = strings(get(record, "summary", list, where), "summary", where)
    for name, values in (("time_interval", intervals), ("summary", summary)):
        if len(values) != n:
            raise DatasetFormatError(
                f"{where}: {name!r} has {len(values)} entries for {n} sessions (expected {n})"
            )
    try:
        gaps = [phrase_gap(phrase) for phrase in intervals[1:]]
    except ClockError as exc:
        raise DatasetFormatError(f"{where}: time_interval: {exc}") from None
    meta = {
        "relationship": get(record, "relationship", str, where),
        "time_interval": intervals,
        "split": split,
        "source": where,
    }
    gold = [{"summary": [text]} for text in summary]
    return build_episode(episode_id, "cc", sessions, from_gaps(gaps), gold, meta)


def _hub_records(split: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield records of the Hub dataset; offline without a cache it fails at once, clearly."""
    import datasets  # heavy import, only for users who ask for the Hub

    hub_split = SPLITS[split]
    try:
        rows: Iterable[dict[str, Any]] = datasets.load_dataset(HUB_ID, split=hub_split)
    except (ConnectionError, OSError) as exc:
        raise ConnectionError(
            f"cc: cannot load {HUB_ID!r} split {hub_split!r} from the Hugging Face Hub ({exc}). "
            "Offline mode (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) or no network, and no cached "
            "copy: download it where you have internet (make data) and use source='local' with "
            "conversation_chronicles/{train,valid,test}.jsonl under the data dir."
        ) from exc
    for i, row in enumerate(rows):
        yield f"{HUB_ID} {hub_split} row {i}", dict(row)
