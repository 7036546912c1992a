"""LongMemEval dataset statistics (``conf/experiment/longmemeval_table5.yaml``, ``runs: null``).

Builder ``dataset_table``: each variant present under the data root (``variants`` option; oracle
and s by default) loaded with ``datasets.longmemeval`` and measured: questions, the question
types, abstention questions, sessions per history (mean, min, max), turns and words per history
(words: ``recallbench.text.tokenize(..., "word")``), distinct sessions and turns (by the
release's ids), and the questions of the release the copy lacks (computed against the oracle
file). The authors' own figures (their README: 500 questions per file; S "roughly consumes 115k
tokens (~40 history sessions) for Llama 3"; M "roughly 500 sessions") are in the notes, not
beside the cells: they are approximate and in Llama 3 tokens, not words.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean

from recallbench.datasets import longmemeval
from recallbench.records import Episode
from recallbench.run.provenance import episodes_sha256
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec, data_label
from recallbench.text import tokenize

NOTES = [
    "The authors' README (xiaowu0162/LongMemEval): 500 evaluation instances per file; "
    "longmemeval_s: the chat history 'roughly consumes 115k tokens (~40 history sessions) for "
    "Llama 3'; longmemeval_m: 'roughly 500 sessions'. Their token counts use Llama 3's "
    "tokenizer; words here are runs of word characters: not comparable, not printed as a "
    "difference.",
    "Distinct sessions and turns count the release's ids (a filler session recurs across "
    "histories); turns are all turns, user and assistant.",
]


def variant_stats(episodes: list[Episode]) -> dict[str, float]:
    """The statistics of one loaded variant (keys are the table's metric names)."""
    kinds = Counter(e.qa[0].kind for e in episodes)
    sessions = [len(e.sessions) for e in episodes]
    turns = [sum(len(s.turns) for s in e.sessions) for e in episodes]
    words = [
        sum(len(tokenize(t.text, "word")) for s in e.sessions for t in s.turns) for e in episodes
    ]
    out: dict[str, float] = {
        "questions": len(episodes),
        "abstention": sum(1 for e in episodes if e.qa[0].meta.get("abstention")),
        **{f"type:{k}": kinds.get(k, 0) for k in longmemeval.QUESTION_TYPES},
        "sessions_mean": mean(sessions) if sessions else 0.0,
        "sessions_min": min(sessions, default=0),
        "sessions_max": max(sessions, default=0),
        "turns_mean": mean(turns) if turns else 0.0,
        "words_mean": mean(words) if words else 0.0,
        "distinct_sessions": len(
            {s.session_id.rsplit("/", 1)[1] for e in episodes for s in e.sessions}
        ),
        "distinct_turns": len(
            {t.labels.get("lme_id") for e in episodes for s in e.sessions for t in s.turns}
        ),
        "missing": len(episodes[0].meta.get("missing") or []) if episodes else 0,
    }
    return out


ROWS = [
    ("Questions", "questions", 0),
    *[(f"Type {k}", f"type:{k}", 0) for k in longmemeval.QUESTION_TYPES],
    ("Abstention questions (_abs)", "abstention", 0),
    ("Sessions per history (mean)", "sessions_mean", 1),
    ("Sessions per history (min)", "sessions_min", 0),
    ("Sessions per history (max)", "sessions_max", 0),
    ("Turns per history (mean)", "turns_mean", 1),
    ("Words per history (mean)", "words_mean", 0),
    ("Distinct sessions", "distinct_sessions", 0),
    ("Distinct turns", "distinct_turns", 0),
    ("Questions of the release missing here", "missing", 0),
]


def dataset_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of the LongMemEval statistics from ``longmemeval/`` under ``ctx.data_dir``."""
    data_dir = ctx.need_data_dir()
    variants = [str(v) for v in spec.option("variants", ["oracle", "s"])]
    cells: list[Cell] = []
    labels: list[str] = []
    counts: list[str] = []
    notes = list(NOTES)
    for variant in variants:
        episodes = longmemeval.load(data_dir, variant)
        stats = variant_stats(episodes)
        column = f"{variant} ({longmemeval.FILES[variant]})"
        for label, key, digits in ROWS:
            cells.append(Cell(label, column, key, stats[key], None, None, digits, len(episodes)))
        counts.append(f"{len(episodes):,} ({variant})")
        labels.append(
            data_label("longmemeval", {"variant": variant}, episodes_sha256(episodes), data_dir)
        )
        missing = episodes[0].meta.get("missing") or []
        if missing:
            notes.append(
                f"{variant}: this copy lacks {len(missing)} questions of the release: {', '.join(missing)}"
            )
    header = {
        "generator": "none (dataset statistics)",
        "judge": "none",
        "embedder": "none",
        "data": "; ".join(labels),
        "words": "tokenizer 'word' = runs of Unicode word characters",
        "episodes": "; ".join(counts),
    }
    return BuiltTable(cells, header=header, notes=notes, show_n=False, corner="Statistics")
