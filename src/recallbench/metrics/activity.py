"""What a run's memory did: records written, updated, deleted and retrieved, per session.

Derived generically from what every run folder holds (``runner``), so no memory method has to
report it: the store after every session (``memory/<episode>.jsonl``, one ``{"after_session",
"items"}`` row per observed session, the method's ``snapshot()``) and the predictions' recall
size (``meta["n_recalled"]``, written by the response, qa, teafarm and lamp1 protocols).

Between two consecutive snapshots of one episode, by ``item_id``, with one meaning of "in
memory" (``records.in_memory``: not ``retained: false``, not deleted, not decayed when the
method's recall skips decayed records, the caller's ``decayed``: ``run.read`` reads it from
the run's config):

- **written**: an id seen for the first time;
- **deleted**: an id in memory that disappeared or left memory (LUFY's forgetting, TimeRAG's
  ``deleted``/``decayed`` records stay in its store), and a new id already out of memory
  (written and forgotten in the same session: counted in both);
- **updated**: an id in memory whose text or kind changed, or one that came back into memory;
- **returned**: of the updated, the ids that came back into memory (a retired record recalled
  again); so per episode ``store = written - deleted + returned`` summed over its sessions;
- **store**: the items in memory after the session.

Attribute-only changes (LUFY strengths, retrieval counters) are not updates: the text the
generator can be shown did not change. A method that rewrites a record under a new id counts
one deletion and one write. **retrieved** sums the items recalls returned, **recalls** counts
them and **empty_recalls** those that returned nothing (a memory that never answers).

The summary entry (``summary.json`` ``memory``) has ``totals`` and ``per_session`` (session
index -> counts summed over episodes, with the number of ``episodes`` that observed it), so a
table can say "wrote 0 records" or "the two rows' memories did the same" from the run folder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from recallbench.records import MemoryItem, Prediction, in_memory

__all__ = [
    "COUNTS",
    "METHOD",
    "memory_activity",
    "session_changes",
]

COUNTS = (
    "written",
    "updated",
    "deleted",
    "returned",
    "store",
    "retrieved",
    "recalls",
    "empty_recalls",
)
METHOD = (
    "diff of the memory/<episode>.jsonl snapshots by item id (written, updated, deleted, store: "
    "items in memory by records.in_memory; total store: each episode's last store, summed) and "
    "the predictions' n_recalled (retrieved items per recall)"
)

Snapshot = tuple[int, Sequence[MemoryItem]]


def session_changes(
    before: Mapping[str, MemoryItem], after: Mapping[str, MemoryItem], decayed: bool = False
) -> dict[str, int]:
    """Written, updated, deleted and store counts from one snapshot to the next.

    ``decayed``: the method recalls decayed records (``records.in_memory``).
    """
    written = deleted = updated = returned = 0
    for key, fresh in after.items():
        if key not in before:
            written += 1
            deleted += int(not in_memory(fresh, decayed))  # written and forgotten at once
    for key, old in before.items():
        new = after.get(key)
        was = in_memory(old, decayed)
        if new is None or not in_memory(new, decayed):
            deleted += int(was)
        else:
            updated += int((old.text, old.kind) != (new.text, new.kind) or not was)
            returned += int(not was)
    store = sum(1 for item in after.values() if in_memory(item, decayed))
    return {
        "written": written,
        "updated": updated,
        "deleted": deleted,
        "returned": returned,
        "store": store,
    }


def _empty(episodes: int = 0) -> dict[str, int]:
    return {"episodes": episodes, **dict.fromkeys(COUNTS, 0)}


def memory_activity(
    snapshots: Mapping[str, Sequence[Snapshot]],
    predictions: Iterable[Prediction],
    decayed: bool = False,
) -> dict[str, Any]:
    """The ``memory`` entry of summary.json from per-episode snapshots and the predictions.

    The total ``store`` sums each episode's own last store, so episodes that end at different
    sessions all count. ``decayed``: the method recalls decayed records.
    """
    per_session: dict[int, dict[str, int]] = {}
    last_store = 0
    for rows in snapshots.values():
        before: dict[str, MemoryItem] = {}
        changes = {"store": 0}
        for index, items in sorted(rows, key=lambda r: r[0]):
            after = {item.item_id: item for item in items}
            got = per_session.setdefault(index, _empty())
            got["episodes"] += 1
            changes = session_changes(before, after, decayed)
            for key, value in changes.items():
                got[key] += value
            before = after
        last_store += changes["store"]
    for p in predictions:
        recalled = p.meta.get("n_recalled")
        if isinstance(recalled, int) and not isinstance(recalled, bool):
            got = per_session.setdefault(p.session_index, _empty())
            got["retrieved"] += recalled
            got["recalls"] += 1
            got["empty_recalls"] += int(recalled == 0)
    totals = _empty(len(snapshots))
    for got in per_session.values():
        for key in COUNTS:
            totals[key] += got[key]
    totals["store"] = last_store
    return {
        "totals": totals,
        "per_session": {str(i): per_session[i] for i in sorted(per_session)},
        "method": METHOD,
    }
