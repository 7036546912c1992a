"""What failure attribution reads of a run folder besides its predictions (through
``run.read``): the store after every session, the episodes as replayed (else reloaded from the
run's dataset) and the run's protocol settings (``analysis.attribution``); and
the facts of a turn-evidence item and its outcome, built the same way for every protocol
(``turn_facts``, ``outcome_of``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recallbench.judges.lexical import is_dont_know
from recallbench.metrics.attribution import ItemFacts
from recallbench.records import Episode, MemoryItem, Prediction, in_memory
from recallbench.run.read import RunRecord

Stores = dict[int, list[MemoryItem]]


def live(item: MemoryItem, decayed: bool = False) -> bool:
    """True for an item in memory that a recall can return (``records.in_memory``; ``decayed``:
    the run's method recalls decayed records, ``decayed_of(run)``)."""
    return in_memory(item, decayed)


def decayed_of(run: RunRecord) -> bool:
    """Whether the run's method recalls decayed records (``records.decayed_recallable``)."""
    return run.config.memory.decayed_recallable


def carried(store: Sequence[MemoryItem], gone: bool = False, decayed: bool = False) -> set[str]:
    """The turn ids the live items of ``store`` carry (their provenance); ``gone``: also the
    items marked gone (still in the snapshot: written, then forgotten)."""
    return {s for item in store if gone or live(item, decayed) for s in item.source_ids}


def read_stores(run: RunRecord, episode_id: str) -> Stores:
    """The run's store after every session of ``episode_id`` ({} when none was written)."""
    return {s.after_session: list(s.items) for s in run.snapshots_of(episode_id)}


def read_episodes(run: RunRecord, episode_ids: Sequence[str]) -> dict[str, Episode]:
    """The episodes the run replayed, from ``episodes/`` (else reloaded from its dataset)."""
    return run.episodes_for(episode_ids)


def protocol_config(run: RunRecord) -> dict[str, Any]:
    """The run's protocol settings (its config's ``protocol`` block)."""
    return dict(run.config.protocol.settings)


def is_oracle(run: RunRecord) -> bool:
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
