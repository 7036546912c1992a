"""LongMemEval cost and latency per stage (``conf/experiment/longmemeval_table4.yaml``).

Builder ``cost_table``: one row per finished ``longmemeval_qa`` run the table reads (the newest
per job of the tags in ``runs:``), labelled by method and variant; columns per stage, from the
run's own files: seconds per question of memory construction (the ``memory`` record's
``observe_s``: ``prefetch_episode`` and every ``observe``), of recall (``recall_s``) and of
answering (``generate_s``: the reader's call, and the Chain-of-Note notes when read so), the
embedding stage's seconds over the run (``usage.json`` compute: ``embeddings`` and
``embedder_load``), tokens per question of each
LLM stage (``usage.json`` ``by_stage``: memory writing, answering, judging; prompt + completion,
as the backend counts them: offline, SmolLM2's BPE over the rendered prompt) and the run's wall
time (``run.json``). Seconds are this machine's, two cores shared with other jobs: they order
the methods, they are no benchmark of them.
"""

from __future__ import annotations

from statistics import mean

from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

COLUMNS = [
    ("Questions", "questions", 0),
    ("Memory s/q", "memory_s", 3),
    ("Recall s/q", "recall_s", 4),
    ("Answer s/q", "answer_s", 4),
    ("Embedding s (run)", "embeddings_s", 1),
    ("Memory tokens/q", "memory_tokens", 0),
    ("Answer tokens/q", "answer_tokens", 0),
    ("Judge tokens/q", "judge_tokens", 0),
    ("Wall min (run)", "wall_min", 1),
]


def run_costs(run: RunRecord) -> dict[str, float]:
    """The cost columns of one run (missing files give 0, a missing field is not guessed)."""
    answers = [p for p in run.predictions if p.kind == "answer"]
    memory = [p for p in run.predictions if p.kind == "memory"]
    n = max(len(answers), 1)

    def avg(values: list[float]) -> float:
        return mean(values) if values else 0.0

    usage = run.usage
    out = {
        "questions": float(len(answers)),
        "memory_s": avg([float(p.meta.get("observe_s", 0.0)) for p in memory]),
        "recall_s": avg([float(p.meta.get("recall_s", 0.0)) for p in answers]),
        "answer_s": avg([float(p.meta.get("generate_s", 0.0)) for p in answers]),
        "embeddings_s": 0.0,
        "memory_tokens": 0.0,
        "answer_tokens": 0.0,
        "judge_tokens": 0.0,
        "wall_min": 0.0,
    }
    if usage is not None:
        seconds = usage.raw.get("compute")
        if isinstance(seconds, dict) and isinstance(seconds.get("seconds"), dict):
            timed = seconds["seconds"]  # the stage: its encodes and lookups, and the model's load
            out["embeddings_s"] = float(
                timed.get("embeddings", 0.0) + timed.get("embedder_load", 0.0)
            )
        for stage in ("memory", "answer", "judge"):
            bucket = usage.stage(stage)
            tokens = bucket.count("prompt_tokens") + bucket.count("completion_tokens")
            out[f"{stage}_tokens"] = tokens / n
    started, finished = run.provenance.log.started_unix, run.provenance.log.finished_unix
    if started is not None and finished is not None:
        out["wall_min"] = (finished - started) / 60
    return out


def cost_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of the cost table from the finished runs of ``runs:``."""
    cells: list[Cell] = []
    row_runs: dict[str, list[RunRecord]] = {}  # each row's run: methods side by side, untested
    runs = sorted(
        ctx.runs,
        key=lambda r: (str(r.config.value("dataset.options.variant")), str(r.choice("memory"))),
    )
    for run in runs:
        variant = str(run.config.value("dataset.options.variant") or "oracle")
        limit = run.config.value("dataset.options.limit")
        row = f"{run.choice('memory')} ({variant}{f', first {limit}' if limit else ''})"
        costs = run_costs(run)
        row_runs[row] = [run]
        episodes = int(costs["questions"])
        for label, key, digits in COLUMNS:
            cells.append(Cell(row, label, key, costs[key], None, None, digits, episodes))
    notes = [
        "Seconds are wall time on this machine (2 cores shared with other jobs; each session's "
        "load and niceness: the table's notes): they order the stages and methods, they are no "
        "benchmark; the extractive reader and judge take microseconds where an API model takes "
        "seconds.",
        "Tokens: prompt + completion per question of each stage as the backend counts them "
        "(offline: SmolLM2's BPE over the rendered prompts, what an API call would be sent).",
        "Memory s/q: the episode's whole memory construction (prefetch_episode and every "
        "observe); an S history has ~48 sessions, an oracle one ~2.",
        "A call answered from the LLM cache (a prompt an earlier run already sent: variants of "
        "one method often recall the same items) takes no model time, so a later run's answer and "
        "judge seconds can be far below an earlier one's; tokens count every call.",
    ]
    return BuiltTable(
        cells, notes=notes, show_n=False, corner="Method (variant)", row_runs=row_runs
    )
