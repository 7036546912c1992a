"""What a run's memory did: records written, updated, deleted and retrieved, per session.

Derived generically from what every run folder holds (``runner``), so no memory method has to
report it: the store after every session (``memory/<episode>.jsonl``, one ``{"after_session",
"items"}`` row per observed session, the method's ``snapshot()``) and the predictions' recall
size (``meta["n_recalled"]``, written by the response, qa, teafarm and lamp1 protocols).

Between two consecutive snapshots of one episode, by ``item_id``:

- **written**: an id seen for the first time;
- **deleted**: a live id that disappeared or was retired (``attrs["status"]`` set to anything
  but ``active``: TimeRAG's ``deleted``/``decayed`` records stay in its store);
- **updated**: a live id whose text or kind changed, or a retired id that became live again;
- **store**: the live items after the session.

Attribute-only changes (LUFY strengths, retrieval counters) are not updates: the text the
generator can be shown did not change. A method that rewrites a record under a new id counts
one deletion and one write. **retrieved** sums the items recalls returned, **recalls** counts
them and **empty_recalls** those that returned nothing (a memory that never answers).

The summary entry (``summary.json`` ``memory``) has ``totals`` and ``per_session`` (session
index -> counts summed over episodes, with the number of ``episodes`` that observed it), so a
table can say "wrote 0 records" or "the two rows' memories did the same" from the run folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.records import MemoryItem, Prediction

__all__ = ["COUNTS", "activity_of_run", "memory_activity", "read_snapshots", "session_changes"]

COUNTS = ("written", "updated", "deleted", "store", "retrieved", "recalls", "empty_recalls")
METHOD = (
    "diff of the memory/<episode>.jsonl snapshots by item id (written, updated, deleted, live "
    "store) and the predictions' n_recalled (retrieved items per recall)"
)

Snapshot = tuple[int, Sequence[MemoryItem]]


def _live(item: MemoryItem) -> bool:
    status = item.attrs.get("status")
    return status is None or status == "active"


def session_changes(
    before: Mapping[str, MemoryItem], after: Mapping[str, MemoryItem]
) -> dict[str, int]:
    """Written, updated, deleted and live-store counts from one snapshot to the next."""
    written = sum(1 for k in after if k not in before)
    deleted = updated = 0
    for key, old in before.items():
        new = after.get(key)
        if _live(old) and (new is None or not _live(new)):
            deleted += 1
        elif new is not None and _live(new):
            changed = (old.text, old.kind) != (new.text, new.kind)
            updated += int(changed or not _live(old))
    store = sum(1 for item in after.values() if _live(item))
    return {"written": written, "updated": updated, "deleted": deleted, "store": store}


def _empty(episodes: int = 0) -> dict[str, int]:
    return {"episodes": episodes, **dict.fromkeys(COUNTS, 0)}


def memory_activity(
    snapshots: Mapping[str, Sequence[Snapshot]], predictions: Iterable[Prediction]
) -> dict[str, Any]:
    """The ``memory`` entry of summary.json from per-episode snapshots and the predictions."""
    per_session: dict[int, dict[str, int]] = {}
    for rows in snapshots.values():
        before: dict[str, MemoryItem] = {}
        for index, items in sorted(rows, key=lambda r: r[0]):
            after = {item.item_id: item for item in items}
            got = per_session.setdefault(index, _empty())
            got["episodes"] += 1
            for key, value in session_changes(before, after).items():
                got[key] += value
            before = after
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
    last = max((i for i, g in per_session.items() if g["episodes"]), default=None)
    totals["store"] = per_session[last]["store"] if last is not None else 0  # after the last
    return {
        "totals": totals,
        "per_session": {str(i): per_session[i] for i in sorted(per_session)},
        "method": METHOD,
    }


def read_snapshots(memory_dir: Path) -> dict[str, list[Snapshot]]:
    """Read ``memory/<episode>.jsonl`` files: {file stem: [(after_session, items)]}."""
    out: dict[str, list[Snapshot]] = {}
    for path in sorted(Path(memory_dir).glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        out[path.stem] = [
            (int(row["after_session"]), [MemoryItem.from_dict(i) for i in row.get("items") or ()])
            for row in rows
        ]
    return out


def activity_of_run(run_dir: str | Path, predictions: Iterable[Prediction]) -> dict[str, Any]:
    """The memory activity of a run folder (its ``memory/`` snapshots) and its predictions."""
    return memory_activity(read_snapshots(Path(run_dir) / "memory"), predictions)
