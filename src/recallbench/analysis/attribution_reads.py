"""What failure attribution reads of a run folder besides its predictions: the store after every
session (``memory/<episode>.jsonl``), the episodes as replayed (``episodes/``, else the dataset
of ``config.yaml``) and the protocol block of ``config.yaml`` (``analysis.attribution``); and
the facts of a turn-evidence item and its outcome, built the same way for every protocol
(``turn_facts``, ``outcome_of``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.analysis.runs import RunInfo
from recallbench.io import safe_name
from recallbench.judges.lexical import is_dont_know
from recallbench.metrics.attribution import ItemFacts
from recallbench.records import Episode, MemoryItem, Prediction, decayed_recallable, in_memory

Stores = dict[int, list[MemoryItem]]


def live(item: MemoryItem, decayed: bool = False) -> bool:
    """True for an item in memory that a recall can return (``records.in_memory``; ``decayed``:
    the run's method recalls decayed records, ``decayed_of(run)``)."""
    return in_memory(item, decayed)


def decayed_of(run: RunInfo) -> bool:
    """Whether the run's method recalls decayed records (``records.decayed_recallable``)."""
    return decayed_recallable(run.config)


def carried(store: Sequence[MemoryItem], gone: bool = False, decayed: bool = False) -> set[str]:
    """The turn ids the live items of ``store`` carry (their provenance); ``gone``: also the
    items marked gone (still in the snapshot: written, then forgotten)."""
    return {s for item in store if gone or live(item, decayed) for s in item.source_ids}


def read_stores(run_dir: Path, episode_id: str) -> Stores:
    """The run's store after every session of ``episode_id`` ({} when none was written)."""
    path = run_dir / "memory" / f"{safe_name(episode_id)}.jsonl"
    if not path.exists():
        return {}
    out: Stores = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "after_session" not in row or not isinstance(row.get("items"), list):
            raise ValueError(f"{path} line {n}: expected after_session and an items list")
        out[int(row["after_session"])] = [MemoryItem.from_dict(i) for i in row["items"]]
    return out


def read_episodes(run: RunInfo, episode_ids: Sequence[str]) -> dict[str, Episode]:
    """The episodes the run replayed, from ``episodes/`` (else reloaded from its dataset)."""
    folder = run.path / "episodes"
    out = {}
    for eid in episode_ids:
        path = folder / f"{safe_name(eid)}.json"
        if path.exists():
            out[eid] = Episode.from_dict(json.loads(path.read_text(encoding="utf-8")))
    missing = [e for e in episode_ids if e not in out]
    if missing:
        from recallbench.protocols.qa_gvd.scores import load_run_episodes

        loaded = load_run_episodes(run.path)
        out.update({e: loaded[e] for e in missing if e in loaded})
    lost = [e for e in episode_ids if e not in out]
    if lost:
        raise ValueError(f"{run.path}: episode {lost[0]!r} is neither in episodes/ nor the dataset")
    return out


def protocol_config(run: RunInfo) -> dict[str, Any]:
    """The run's protocol block of ``config.yaml``."""
    block = run.config.get("protocol") or {}
    return dict(block) if isinstance(block, Mapping) else {}


def is_oracle(run: RunInfo) -> bool:
    """True for an oracle-context run (``protocol.oracle_context``)."""
    return bool(protocol_config(run).get("oracle_context"))


def turn_facts(
    pred: Prediction,
    credit: float,
    outcome: str,
    found: tuple[tuple[str, ...], str],
    stores: Stores,
    at: int,
    others: Mapping[str, float],
    decayed: bool = False,
) -> ItemFacts:
    """Facts of a turn-evidence item: the store after session ``at`` and every earlier one
    (``decayed``: the method recalls decayed records)."""
    units, unknown = found
    store = stores.get(at, [])
    ever = set().union(*(carried(items, gone=True) for s, items in stores.items() if s <= at))
    evidence = set(units)
    return ItemFacts(
        pred.pred_id,
        pred.episode_id,
        credit,
        outcome,
        units,
        frozenset(carried(store, decayed=decayed) & evidence),
        frozenset(ever & evidence),
        frozenset(set(pred.recalled) & evidence),
        dict(others),
        unknown,
    )


def outcome_of(credit: float, output: str) -> str:
    """An item's outcome: correct (full credit), partial, dont_know (an abstention) or wrong."""
    if credit >= 1:
        return "correct"
    if credit > 0:
        return "partial"
    return "dont_know" if is_dont_know(output) else "wrong"
