"""Mem0's LoCoMo recall@k under its two source credits, paired on the same recalls (issue 44).

``memory=mem0`` credits a memory with both turns of its two-turn write batch (``credit: batch``,
the default) or with the one turn its text came from (``credit: source_turn``,
``memory/mem0/_credit.py``). A ``locomo_qa`` run made with ``memory.credit=source_turn``
records, per question, each recalled memory's one source turn (``meta["recalled_sources"]``),
and its snapshots keep every memory's batch (``attrs["batch_turn_ids"]``). Mapping each source
turn back to its batch gives exactly what the batch credit records for the same recalls, so
both recall@k values come from one run's ranking and are paired question by question: the
difference is the credit's alone. When a run made with the batch credit is given too, its
recorded sources are compared with the mapped ones (``agreement``): equal when the two runs
recalled the same memories in the same order (the credit does not touch writing or search).

Per category, ``answerable`` (1-4) and ``all``: n questions with evidence (``locomo_qa`` scores
recall only for those), recall@k under each credit, and source_turn - batch with its
episode-clustered paired bootstrap CI and paired permutation p (``metrics.bootstrap``; 10
conversations: 10 clusters). ``versus`` sets both credits against another ``locomo_qa`` run's
recorded recall@k on the same questions (``scores.jsonl``), with the same paired test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallbench.metrics.bootstrap import RATIO, Additive, paired_test
from recallbench.protocols.locomo import recall_at
from recallbench.records import Prediction
from recallbench.run.read import SCORES_FILE, read_run

Batches = dict[str, tuple[str, ...]]  # turn id -> the turn ids of its write batch
ALL = "all"


def read_batches(run_dir: Path) -> Batches:
    """Every written turn's batch, from the snapshots of a ``credit=source_turn`` run."""
    out: Batches = {}
    for episode_id, snapshots in read_run(run_dir, need_record=False).snapshots.items():
        for snapshot in snapshots:
            for item in snapshot.items:
                batch = item.attrs.get("batch_turn_ids")
                if not isinstance(batch, list):
                    raise ValueError(
                        f"{run_dir}: episode {episode_id!r} session {snapshot.after_session}: "
                        f"item {item.item_id!r} has no batch_turn_ids "
                        "(expected a run made with memory=mem0 memory.credit=source_turn)"
                    )
                out.update((str(turn), tuple(str(t) for t in batch)) for turn in batch)
    if not out:
        raise ValueError(f"{run_dir}: no memory snapshots with batch_turn_ids under memory/")
    return out


def batch_sources(p: Prediction, batches: Batches) -> list[list[str]]:
    """The batch credit of ``p``'s recalled memories (each source turn's batch, in order)."""
    out = []
    for sources in p.meta.get("recalled_sources") or []:
        missing = [s for s in sources if s not in batches]
        if missing:
            raise KeyError(f"{p.pred_id}: recalled turn {missing[0]!r} is in no snapshot's batch")
        out.append([t for s in sources for t in batches[s]])
    return out


def answers(run_dir: Path) -> list[Prediction]:
    """The run's answer predictions (read through ``read_run``)."""
    return [p for p in read_run(run_dir, need_record=False).predictions if p.kind == "answer"]


def paired_rows(
    preds: Sequence[Prediction], batches: Batches, k: int | None
) -> list[tuple[str, list[str], float, float]]:
    """(episode, subsets, recall@k by source turn, by batch) of each question with evidence."""
    rows = []
    for p in preds:
        evidence = p.meta.get("evidence") or []
        turn = recall_at(evidence, p.meta.get("recalled_sources") or [], k)
        batch = recall_at(evidence, batch_sources(p, batches), k)
        if turn is not None and batch is not None:
            subsets = [*map(str, p.meta.get("subsets") or ()), ALL]
            rows.append((p.episode_id, subsets, turn, batch))
    return rows


def compare(rows: Sequence[tuple[str, list[str], float, float]]) -> dict[str, dict[str, Any]]:
    """Per subset: n, recall under each credit and the paired difference (source_turn - batch)."""
    out: dict[str, dict[str, Any]] = {}
    for subset in sorted({s for _, subs, _, _ in rows for s in subs}):
        group = [r for r in rows if subset in r[1]]
        clusters = [r[0] for r in group]
        turn = Additive.from_items(clusters, [[r[2], 1.0] for r in group], RATIO)
        batch = Additive.from_items(clusters, [[r[3], 1.0] for r in group], RATIO)
        test = paired_test(turn, batch)
        out[subset] = {
            "n": len(group),
            "source_turn": turn.value(),
            "batch": batch.value(),
            "changed": sum(1 for r in group if r[2] != r[3]),
            **test.to_dict(),
        }
    return out


def agreement(
    preds: Sequence[Prediction], committed: Sequence[Prediction], batches: Batches
) -> tuple[int, int, list[str]]:
    """(same, shared, differing pred ids): mapped batch sources vs a batch run's recorded ones."""
    theirs: Mapping[str, Prediction] = {p.pred_id: p for p in committed}
    shared = [p for p in preds if p.pred_id in theirs]
    differ = [
        p.pred_id
        for p in shared
        if batch_sources(p, batches) != theirs[p.pred_id].meta.get("recalled_sources")
    ]
    return len(shared) - len(differ), len(shared), differ


def recorded_recall(run_dir: Path, k: int) -> dict[str, float]:
    """Another run's recorded ``recall_at_<k>`` per question (its ``scores.jsonl``)."""
    metric = f"recall_at_{k}"
    scores = read_run(run_dir, need_record=False).scores
    out = {s.pred_id: float(s.value) for s in scores if s.metric == metric}
    if not out:
        raise ValueError(
            f"{run_dir / SCORES_FILE}: no {metric} scores (expected a locomo_qa run scored at k={k})"
        )
    return out


def versus(
    preds: Sequence[Prediction], batches: Batches, k: int, other: Mapping[str, float], subset: str
) -> dict[str, dict[str, Any]]:
    """Each credit minus ``other``'s recall@k on the questions of ``subset`` both scored."""
    keep = [p for p in preds if p.pred_id in other and subset in (p.meta.get("subsets") or ())]
    rows = paired_rows(keep, batches, k)
    scored = [p for p in keep if p.meta.get("evidence")]
    clusters = [r[0] for r in rows]
    theirs = Additive.from_items(clusters, [[other[p.pred_id], 1.0] for p in scored], RATIO)
    out = {}
    for name, values in (("source_turn", [r[2] for r in rows]), ("batch", [r[3] for r in rows])):
        ours = Additive.from_items(clusters, [[v, 1.0] for v in values], RATIO)
        test = paired_test(ours, theirs)
        out[name] = {"n": len(rows), "value": ours.value(), "other": theirs.value()}
        out[name] |= test.to_dict()
    return out
