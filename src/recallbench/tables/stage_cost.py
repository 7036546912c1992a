"""Cost and latency per stage of a QA protocol's runs: LongMemEval's (``longmemeval_table4``)
and LoCoMo's (``locomo_cost``).

Builder ``cost_table``: one row per finished run the table reads (the newest per job of the tags
in ``runs:``), labelled by method (and LongMemEval's variant); columns per stage, from the run's
own files: seconds of memory construction per episode (the ``memory`` records' ``observe_s``:
``prefetch_episode`` and every ``observe``, summed over the episode), of recall per question
(``recall_s``) and of answering per question (``generate_s``: the reader's call, and the
Chain-of-Note notes when read so), the embedding stage's seconds over the run (``usage.json``
compute: ``embeddings`` and ``embedder_load``), tokens of each LLM stage (``usage.json``
``by_stage``: memory writing per episode, answering and judging per question; prompt +
completion, as the backend counts them: offline, SmolLM2's BPE over the rendered prompt) and the
run's wall time (``run.json``). Seconds are this machine's, two cores shared with other jobs:
they order the methods, they are no benchmark of them.

Option ``per``: ``question`` (LongMemEval: an episode is one question, so every column is per
question, as table 4 has always printed it) or ``conversation`` (LoCoMo: an episode is a
conversation of about 200 questions; memory columns per conversation, with its LLM calls, and the
number of conversations).

One builder for both protocols because their runs write the same files; the LongMemEval table
had it first (``papers/longmemeval``), LoCoMo's cost table (issue 56) reads the same fields.
"""

from __future__ import annotations

from statistics import mean

from recallbench.run.read import RunRecord
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

PER_QUESTION = [
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
PER_CONVERSATION = [
    ("Conversations", "episodes", 0),
    ("Questions", "questions", 0),
    ("Memory s/conv", "memory_s", 1),
    ("Memory LLM calls/conv", "memory_calls", 0),
    ("Memory tokens/conv", "memory_tokens", 0),
    ("Recall s/q", "recall_s", 4),
    ("Answer s/q", "answer_s", 4),
    ("Answer tokens/q", "answer_tokens", 0),
    ("Judge tokens/q", "judge_tokens", 0),
    ("Embedding s (run)", "embeddings_s", 1),
    ("Wall min (run)", "wall_min", 1),
]
COLUMNS = {"question": PER_QUESTION, "conversation": PER_CONVERSATION}


def run_costs(run: RunRecord) -> dict[str, float]:
    """The cost columns of one run (missing files give 0, a missing field is not guessed):
    memory per episode, answering and judging per question."""
    answers = [p for p in run.predictions if p.kind == "answer"]
    memory = [p for p in run.predictions if p.kind == "memory"]
    n = max(len(answers), 1)
    episodes = len({p.episode_id for p in run.predictions})
    per_episode = max(episodes, 1)

    def avg(values: list[float]) -> float:
        return mean(values) if values else 0.0

    usage = run.usage
    out = {
        "episodes": float(episodes),
        "questions": float(len(answers)),
        "memory_s": sum(float(p.meta.get("observe_s", 0.0)) for p in memory) / per_episode,
        "recall_s": avg([float(p.meta.get("recall_s", 0.0)) for p in answers]),
        "answer_s": avg([float(p.meta.get("generate_s", 0.0)) for p in answers]),
        "embeddings_s": 0.0,
        "memory_calls": 0.0,
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
        for stage, per in (("memory", per_episode), ("answer", n), ("judge", n)):
            bucket = usage.stage(stage)
            tokens = bucket.count("prompt_tokens") + bucket.count("completion_tokens")
            out[f"{stage}_tokens"] = tokens / per
        out["memory_calls"] = usage.stage("memory").count("calls") / per_episode
    started, finished = run.provenance.log.started_unix, run.provenance.log.finished_unix
    if started is not None and finished is not None:
        out["wall_min"] = (finished - started) / 60
    return out


def _row(run: RunRecord) -> str:
    """The method, and LongMemEval's variant (and ``limit``, or the ``episodes`` sampled)
    when the dataset has one."""
    variant = run.config.value("dataset.options.variant")
    limit = run.config.value("dataset.options.limit")
    sampled = run.config.value("episodes")
    if variant is None and limit is None:
        return str(run.choice("memory"))
    subset = f", first {limit}" if limit else (f", {sampled} sampled" if sampled else "")
    return f"{run.choice('memory')} ({variant or 'oracle'}{subset})"


def cost_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of the cost table from the finished runs of ``runs:`` (option ``per``)."""
    per = str(spec.option("per", "question"))
    if per not in COLUMNS:
        raise spec.error("options.per", f"{per!r}: expected one of {sorted(COLUMNS)}")
    cells: list[Cell] = []
    row_runs: dict[str, list[RunRecord]] = {}  # each row's run: methods side by side, untested
    runs = sorted(
        ctx.runs,
        key=lambda r: (str(r.config.value("dataset.options.variant")), str(r.choice("memory"))),
    )
    resumed: list[str] = []  # a resumed run's wall is its last attempt's; its items hold all
    threaded: list[str] = []  # embedding seconds beyond the wall: several threads' seconds added
    for run in runs:
        row = _row(run)
        costs = run_costs(run)
        row_runs[row] = [run]
        if (run.provenance.log.attempt or 1) > 1:
            resumed.append(f"{row} (attempt {run.provenance.log.attempt})")
        elif costs["wall_min"] and costs["embeddings_s"] > costs["wall_min"] * 60:
            threaded.append(
                f"{row} ({costs['embeddings_s']:,.0f} s in {costs['wall_min']:.1f} min)"
            )
        episodes = int(costs["questions"])
        for label, key, digits in COLUMNS[per]:
            cells.append(Cell(row, label, key, costs[key], None, None, digits, episodes))
    episode = (
        "an S history has ~48 sessions, an oracle one ~2"
        if per == "question"
        else ("a LoCoMo conversation has 19-32 sessions and 369-689 turns")
    )
    notes = [
        "Seconds are wall time on this machine (2 cores shared with other jobs; each session's "
        "load and niceness: the table's notes): they order the stages and methods, they are no "
        "benchmark; the extractive reader and judge take microseconds where an API model takes "
        "seconds.",
        "Tokens: prompt + completion of each stage as the backend counts them "
        "(offline: SmolLM2's BPE over the rendered prompts, what an API call would be sent).",
        f"Memory s: the episode's whole memory construction (prefetch_episode and every "
        f"observe); {episode}.",
        "A call answered from the LLM cache (a prompt an earlier run already sent: variants of "
        "one method often recall the same items) takes no model time, so a later run's answer and "
        "judge seconds can be far below an earlier one's; tokens count every call.",
    ]
    if resumed:
        notes.append(
            "Resumed runs: "
            + ", ".join(resumed)
            + ": Wall min is the last attempt's only; the per-episode and per-question seconds "
            "come from the items of every attempt."
        )
    if threaded:
        notes.append(
            "Embedding s exceeds the run's wall: "
            + ", ".join(threaded)
            + ": its encodes were timed on several threads at once, whose seconds add (the "
            "meter is per thread), waits for the model's lock included; the stage took at most "
            "the wall, and its misses and tokens (usage.json) are exact."
        )
    return BuiltTable(
        cells,
        notes=notes,
        show_n=False,
        corner=f"Method{' (variant)' if per == 'question' else ''}",
        row_runs=row_runs,
    )
