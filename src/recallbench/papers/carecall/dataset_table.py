"""Keep Me Updated! (CareCall) Table 1: statistics of CareCall_mem.

Builder ``dataset_table`` (``conf/experiment/carecall_table1.yaml``, ``runs: null``): the
CareCall_mem file under the data root, measured per session index and overall
(``recallbench.datasets.stats.carecall_stats``). Options: ``tokenizer`` (default
``whitespace``: the Korean eojeol) and ``options`` (loader options, e.g. ``file:`` for the full
data instead of the public sample). Loading is separate from laying out (``table1_cells``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from recallbench.datasets import load, require_folder
from recallbench.datasets.carecall import DEFAULT_FILE
from recallbench.datasets.stats import TOKENIZER_NOTES, CareCallStats, carecall_stats
from recallbench.errors import did_you_mean
from recallbench.run.provenance import episodes_sha256
from recallbench.tables import (
    BuiltTable,
    Cell,
    TableContext,
    TableSpec,
    data_label,
    reference_table,
)
from recallbench.tables.render import reference_value
from recallbench.verdict import JSONValue

ROWS = [
    ("Turns", "turns", 0),
    ("Avg. turns per session", "avg_turns_per_session", 2),
    ("Avg. words per turn", "avg_words_per_turn", 2),
    ("Unique words for all turns", "unique_words", 0),
    ("Distinct-1 for all turns", "distinct1", 4),
    ("Distinct-2 for all turns", "distinct2", 4),
    ("Avg. memory sentences per session |M|", "avg_memory_sentences", 2),
    ("Avg. summary sentences per session |S|", "avg_summary_sentences", 2),
    ("Avg. words per summary sentence", "avg_words_per_summary_sentence", 2),
    ("Distinct-1 for all summary sentences", "summary_distinct1", 4),
    ("Distinct-2 for all summary sentences", "summary_distinct2", 4),
]
MAIN = "CareCall_mem (all sessions)"
NOTES = [
    "Ours = the public sample unless another file was given: interactive-step episodes "
    "only; the paper's counts include the preliminary-step sessions 1 and 2 (Section 3.2.1).",
    "Distinct-n = distinct n-grams (within one utterance or sentence) / total words. Memory "
    "sentences = gold memory before the session; blank sentences are not counted.",
    "Degenerate sessions of the sample (a single utterance, no memory or summary) are kept.",
    "Distinct-n and unique words grow or shrink with corpus size: a 45-session sample is "
    "not comparable to the full dataset on these rows.",
    "n per column = the Sessions row (also per cell in the csv).",
]


def _session_cells(
    stats: Mapping[str, CareCallStats],
    values: Mapping[str, object],
    indices: Sequence[int],
) -> list[Cell]:
    everything = stats.get("all")
    sessions = everything.sessions if everything else None
    paper_all = reference_value(values, "all", "sessions")
    cells = [Cell("Sessions", MAIN, "sessions", sessions, paper_all, sessions)]
    for k in indices:
        group = stats.get(f"session_{k}")
        ours = group.sessions if group else 0
        paper = reference_value(values, f"session_{k}", "sessions")
        cells.append(Cell(f"Session {k}", MAIN, f"session_{k}_sessions", ours, paper, ours))
    return cells


def table1_cells(
    stats: Mapping[str, CareCallStats], reference: Mapping[str, JSONValue]
) -> list[Cell]:
    """Lay out CareCall Table 1: the paper's rows x (all sessions, then each session index)."""
    values = reference["values"]
    if not isinstance(values, dict):
        raise ValueError(
            f"papers/carecall/reference.yaml table1: values: expected a mapping, got {values!r:.60}"
        )
    indices = sorted(
        {int(k.split("_")[1]) for k in stats if k != "all"}
        | {int(k.split("_")[1]) for k in values if k != "all"}
    )
    cells = _session_cells(stats, values, indices)
    groups = [("all", MAIN)] + [(f"session_{k}", f"Session {k}") for k in indices]
    for label, metric, digits in ROWS:
        for key, column in groups:
            group = stats.get(key)
            ours = getattr(group, metric) if group else None
            paper = reference_value(values, key, metric)
            cells.append(
                Cell(label, column, metric, ours, paper, group.sessions if group else None, digits)
            )
    for key, column in groups[1:]:
        n = stats[key].sessions if key in stats else None
        cells.append(Cell("Sessions", column, "sessions", n, None, n))
    return cells


def dataset_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of CareCall Table 1 from ``carecall_mem/`` under ``ctx.data_dir``."""
    tokenizer = str(spec.option("tokenizer", "whitespace"))
    if tokenizer not in TOKENIZER_NOTES:
        raise spec.error("tokenizer", str(did_you_mean("tokenizer", tokenizer, TOKENIZER_NOTES)))
    options = dict(spec.option("options", {}))
    data_dir = ctx.need_data_dir()
    require_folder(data_dir, "carecall", f"{spec.experiment} (make reproduce-table-carecall-1)")
    reference = reference_table("carecall", spec.id)
    episodes = load("carecall", data_dir, **options)
    stats = carecall_stats(episodes, tokenizer)
    header = {
        "generator": "none (dataset statistics)",
        "judge": "none",
        "embedder": "none",
        "data": data_label(
            "carecall_mem",
            {"file": options.get("file", DEFAULT_FILE), **options},
            episodes_sha256(episodes),
            data_dir,
        ),
        "words": f"tokenizer '{tokenizer}' = {TOKENIZER_NOTES[tokenizer]}",
        "episodes": f"{len(episodes):,} ({stats['all'].sessions:,} sessions)",
    }
    notes = ["Source: " + " ".join(reference["source"].split()), *NOTES]
    # every cell describes all loaded episodes (the whole-dataset check of tables.comparability)
    cells = [replace(c, episodes=len(episodes)) for c in table1_cells(stats, reference)]
    return BuiltTable(cells, header=header, notes=notes, show_n=False, corner="Statistics")
