"""THEANINE Fig. 5 (left): G-Eval head-to-head of retrieved-memory helpfulness, ours vs baselines.

For the same dialogue contexts, two runs (two memory methods on the same dataset, protocol
``response``) recalled memories; the G-Eval judge (``recallbench.judges.geval``, Fig. 26) picks
the more helpful MEMORY for answering the last utterance. Each context is judged twice with the
memories' order swapped to cancel position bias; the two verdicts give A 1 (win), 0.5 (tie) or 0
(loss) point each, and the context counts as A's win when A's points sum above 1, a loss below
1, a tie at exactly 1 (e.g. a win in one order and a loss in the other is a tie). Raw judge
outputs are kept.

Input: each run folder's predictions (``run.read``) with the recalled memory text in
``Prediction.meta["recall_text"]`` (recorded by the response protocol), paired on ``pred_id``;
the dialogue context is rebuilt from the episodes (the turn before which the response was made).

    result = compare_runs(run_a, run_b, llm, max_episodes=5)   # paper: 5 episodes
    result.summary  -> {"win": .., "tie": .., "loss": .., "n": .., "sign_test_p": ..}

Builder ``geval_table`` of ``conf/experiment/theanine_figure5.yaml`` (``runs: theanine_table1``):
option ``ours`` selects our runs, rows the baselines, columns the datasets; the judge LLM is the
generator given to the table command (the paper: GPT-4); option ``max_episodes`` (default 5).
Raw rows go to ``results/geval/<experiment>/<column>/geval_<a>_vs_<b>.jsonl``.

Deviations: the paper reports win/tie/loss without saying how it handled order; the swap rule
above is ours. Fig. 5 prints its numbers only as bars and does not list its baselines in the
text: the reference has no values and we compare against every retrieval baseline of Table 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.analysis import select
from recallbench.io import safe_name, write_json, write_jsonl_rows
from recallbench.judges.geval import GEVAL_SOURCE, GEVAL_TASK
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import TaskResult
from recallbench.records import Episode, Prediction, Turn
from recallbench.run.read import PREDICTIONS_FILE, RunRecord, read_run
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec
from recallbench.tables.engine import reference_values
from recallbench.tables.entry import Entry, parse_entry
from recallbench.tables.render import reference_value

EMPTY_MEMORY = "(no memory)"


@dataclass
class GEvalResult:
    """Per-context rows (raw judge outputs of both orders) and win/tie/loss rates of A vs B."""

    name_a: str
    name_b: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``geval_<a>_vs_<b>.jsonl`` (rows) and ``.json`` (summary) into ``out_dir``."""
        out = Path(out_dir)
        stem_ = f"geval_{self.name_a}_vs_{self.name_b}"
        write_json(out / f"{stem_}.json", self.summary)
        write_jsonl_rows(out / f"{stem_}.jsonl", self.rows)
        return out / f"{stem_}.json"


def _recall_text(pred: Prediction, where: str) -> str:
    if "recall_text" not in pred.meta:
        raise KeyError(
            f"{where}: prediction {pred.pred_id!r} has no meta['recall_text'] (keys: "
            f"{sorted(pred.meta)}); G-Eval needs the recalled memory text: rerun with a "
            "response protocol that records it"
        )
    return str(pred.meta["recall_text"]).strip() or EMPTY_MEMORY


def _contexts(episodes: Sequence[Episode]) -> dict[str, tuple[str, tuple[Turn, ...]]]:
    """turn id -> (episode id, the session's turns before it)."""
    out = {}
    for ep in episodes:
        for session in ep.sessions:
            for j, turn in enumerate(session.turns):
                out[turn.turn_id] = (ep.episode_id, session.turns[:j])
    return out


def pair_predictions(
    preds_a: Sequence[Prediction], preds_b: Sequence[Prediction], where: tuple[str, str]
) -> list[tuple[Prediction, Prediction]]:
    """Pair ``response`` predictions of two runs on ``pred_id`` (the same dialogue context)."""
    by_b = {p.pred_id: p for p in preds_b if p.kind == "response"}
    pairs = [(p, by_b[p.pred_id]) for p in preds_a if p.kind == "response" and p.pred_id in by_b]
    if not pairs:
        raise ValueError(f"{where[0]} and {where[1]} share no response predictions (pred_id)")
    return pairs


def _kept(
    pairs: Sequence[tuple[Prediction, Prediction]],
    contexts: dict[str, tuple[str, tuple[Turn, ...]]],
    max_episodes: int | None,
    where: tuple[str, str],
) -> list[tuple[Prediction, Prediction, tuple[Turn, ...]]]:
    """(A, B, history before the response) of the pairs in the first ``max_episodes`` episodes."""
    kept, seen = [], list[str]()
    for a, b in pairs:
        if max_episodes is not None and a.episode_id not in seen:
            if len(seen) >= max_episodes:
                continue
            seen.append(a.episode_id)
        turn_id = a.pred_id.rsplit("/", 1)[0]
        if turn_id not in contexts:
            raise KeyError(f"{where[0]}: {a.pred_id!r}: turn {turn_id!r} not in the episodes")
        kept.append((a, b, contexts[turn_id][1]))
    return kept


def _fields(
    a: Prediction, b: Prediction, history: tuple[Turn, ...], where: tuple[str, str]
) -> list[dict[str, Any]]:
    """The Fig. 26 fields of one context in both orders (A first, then B first)."""
    mem_a, mem_b = _recall_text(a, where[0]), _recall_text(b, where[1])
    base = {
        "speaker": a.meta.get("speaker", "speaker"),
        "current_dialogue_context": "\n".join(f"{t.speaker}: {t.text}" for t in history),
        "last_utterance": history[-1].text if history else "",
        "context": " ".join(t.text for t in history),
    }
    return [
        {**base, "memory1": mem_a, "memory2": mem_b},
        {**base, "memory1": mem_b, "memory2": mem_a},
    ]


def compare(
    pairs: Sequence[tuple[Prediction, Prediction]],
    episodes: Sequence[Episode],
    llm: LLMClient,
    *,
    names: tuple[str, str] = ("a", "b"),
    max_episodes: int | None = None,
    where: tuple[str, str] = ("run a", "run b"),
) -> GEvalResult:
    """Judge every paired context in both orders and aggregate win/tie/loss of A."""
    kept = _kept(pairs, _contexts(episodes), max_episodes, where)
    fields = [f for a, b, history in kept for f in _fields(a, b, history, where)]
    results = llm.run_many(GEVAL_TASK, fields, progress=False) if fields else []
    result = GEvalResult(*names)
    for i, (a, _b, _h) in enumerate(kept):
        result.rows.append(_row(a, results[2 * i], results[2 * i + 1]))
    result.summary = summarize(result.rows, names, llm)
    return result


_POINTS_AS_1 = {"1": 1.0, "tie": 0.5, "2": 0.0}


def _row(
    a: Prediction, first: TaskResult[str | None], swapped: TaskResult[str | None]
) -> dict[str, Any]:
    choices = [first.value, swapped.value]
    if first.value is None or swapped.value is None:
        outcome = "unjudged"
    else:
        points = _POINTS_AS_1[first.value] + (1.0 - _POINTS_AS_1[swapped.value])
        outcome = "win" if points > 1 else ("loss" if points < 1 else "tie")
    return {
        "pred_id": a.pred_id,
        "episode_id": a.episode_id,
        "session_index": a.session_index,
        "outcome_a": outcome,
        "choice_a_first": choices[0],
        "choice_b_first": choices[1],
        "raw_a_first": first.raw,
        "raw_b_first": swapped.raw,
        "failures": [r.failure for r in (first, swapped) if r.failure],
    }


def summarize(
    rows: Sequence[dict[str, Any]], names: tuple[str, str], llm: LLMClient
) -> dict[str, Any]:
    """Win / tie / loss rates of A (unjudged contexts excluded) and a two-sided sign test."""
    from scipy.stats import binomtest

    judged = [r["outcome_a"] for r in rows if r["outcome_a"] != "unjudged"]
    n = len(judged)
    counts = {k: judged.count(k) for k in ("win", "tie", "loss")}
    decided = counts["win"] + counts["loss"]
    p = binomtest(counts["win"], decided, 0.5).pvalue if decided else 1.0
    return {
        "a": names[0],
        "b": names[1],
        "n": n,
        "unjudged": len(rows) - n,
        **{k: (v / n if n else 0.0) for k, v in counts.items()},
        "counts": counts,
        "sign_test_p": float(p),
        "episodes": len({r["episode_id"] for r in rows}),
        "judge": {
            "backend": llm.backend.name,
            "model": llm.model,
            "prompt": GEVAL_SOURCE,
            "order": "both orders; A's points summed (see module docstring)",
        },
    }


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    llm: LLMClient,
    episodes: Sequence[Episode] | None = None,
    *,
    max_episodes: int | None = None,
) -> GEvalResult:
    """Compare two run folders; episodes default to run A's dataset (its config)."""
    a, b = read_run(run_a, need_record=False), read_run(run_b, need_record=False)
    where = (str(a.path / PREDICTIONS_FILE), str(b.path / PREDICTIONS_FILE))
    pairs = pair_predictions(a.predictions, b.predictions, where)
    if episodes is None:
        episodes = list(a.dataset_episodes().values())
    names = (_run_name(a), _run_name(b))
    return compare(pairs, episodes, llm, names=names, max_episodes=max_episodes, where=where)


def _run_name(run: RunRecord) -> str:
    return run.choice("memory") or run.job


def _newest(runs: Sequence[RunRecord], *selectors: Mapping[str, object]) -> RunRecord | None:
    for sel in selectors:
        runs = select(runs, sel)
    return max(runs, key=lambda r: r.stamp) if runs else None


def _comparison(
    spec: TableSpec,
    ctx: TableContext,
    llm: LLMClient,
    column: Entry,
    row: Entry,
) -> tuple[GEvalResult | None, list[RunRecord]]:
    ours_row = parse_entry(spec.option("ours"), "ours", spec.error)  # the row of our method
    ours = _newest(ctx.runs, ours_row.select, column.select)
    theirs = _newest(ctx.runs, row.select, column.select)
    if ours is None or theirs is None:
        return None, [r for r in (ours, theirs) if r]
    result = compare_runs(ours.path, theirs.path, llm, max_episodes=spec.option("max_episodes", 5))
    out = Path(ctx.results_dir) / "geval" / spec.experiment / safe_name(column.label)
    result.write(out)
    return result, [ours, theirs]


def geval_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Fig. 5 (left): win / tie / loss (%) of ours against each row's runs."""
    llm = ctx.need("make_llm")()
    reference = reference_values(spec)
    cells, notes, used = [], [], {}
    for column in spec.need("columns"):
        for row in spec.need("rows"):
            result, runs = _comparison(spec, ctx, llm, column, row)
            used.update({r.path: r for r in runs})
            summary = result.summary if result else {}
            for metric, mspec in spec.need("metrics").items():
                value = summary.get(metric) if summary.get("n") else None
                ours = None if value is None else value * mspec.scale_or(1)
                paper = reference_value(reference, row.label, column.label, metric)
                label = mspec.label_or(metric)
                digits = mspec.digits_or(1)
                cells.append(
                    Cell(
                        row.label,
                        column.label,
                        label,
                        ours,
                        paper,
                        summary.get("n", 0),
                        digits,
                    )
                )
            if result:
                notes.append(
                    f"{column.label} {row.label}: {summary['counts']}, "
                    f"{summary['unjudged']} unjudged, sign test p = {summary['sign_test_p']:.3g}"
                )
    header = {"G-Eval judge": f"{llm.backend.name}:{llm.model} ({GEVAL_SOURCE})"}
    return BuiltTable(cells, runs=list(used.values()), header=header, notes=notes)
