"""Build LUFY Table 1 and CareCall Table 1 from a data root (``scripts/dataset_stats.py``).

Loading (``build_table``) is separate from laying out cells (``lufy_table1_cells``,
``carecall_table1_cells``), so the layout is tested on hand-made episodes.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from recallbench.datasets import LOADERS, load
from recallbench.datasets.carecall import DEFAULT_FILE
from recallbench.datasets.stats import (
    CareCallStats,
    ConversationStats,
    carecall_stats,
    conversation_stats,
)
from recallbench.errors import did_you_mean
from recallbench.tables.render import Cell, reference_table, render

__all__ = [
    "FOLDERS",
    "TABLES",
    "DataNotFoundError",
    "build_table",
    "carecall_table1_cells",
    "lufy_table1_cells",
]

# loader name -> its folder under the data root (as in ../shared/data and download.py)
FOLDERS = {
    "lufy": "lufy",
    "msc": "msc",
    "cc": "conversation_chronicles",
    "carecall": "carecall_mem",
    "gvd": "gvd",
    "persona_chat": "persona_chat",
    "teabag": "teabag",
}
# Who talks in each dataset (LUFY Table 1 "Conv. Setting"), from the datasets' own papers.
SETTINGS = {
    "lufy": "Human-Chatbot",
    "msc": "Human-Human",
    "cc": "Chatbot-Chatbot",
    "carecall": "Human-Chatbot",
    "gvd": "Chatbot-Chatbot",  # ChatGPT played the users (MemoryBank, Zhong et al. 2023)
    "persona_chat": "Human-Human",
}
EXTRA_LABELS = {
    "gvd": "GVD / MemoryBank (Zhong et al., 2023)",
    "persona_chat": "Persona-Chat (Zhang et al., 2018)",
    "teabag": "TeaBag (Ong et al., 2025)",
}
TOKENIZER_NOTES = {
    "word": "runs of Unicode word characters (regex \\w+; punctuation dropped, I'm = 2 words)",
    "whitespace": "whitespace split after stripping (Korean: eojeol; punctuation attached)",
}
NO_MODEL = {"Generator": "none (dataset statistics)", "Judge": "none", "Embedder": "none"}


class DataNotFoundError(FileNotFoundError):
    """The data root lacks the dataset a table needs."""


def _require(data_dir: Path, name: str, target: str) -> None:
    if not (data_dir / FOLDERS[name]).is_dir():
        raise DataNotFoundError(
            f"{data_dir} has no {FOLDERS[name]}/ folder, which {target} needs. Fetch the data with "
            f"`make data` (needs internet), or point at an existing copy: "
            f"`make reproduce-table-{target.replace('_table', '-')} DATA_DIR=/path/to/data` "
            f"(or export RECALLBENCH_DATA_DIR=/path/to/data)."
        )


def lufy_table1_cells(
    loaded: Mapping[str, ConversationStats],
    reference: Mapping[str, Any],
    alt: Mapping[str, ConversationStats] | None = None,
) -> list[Cell]:
    """Lay out LUFY Table 1: the paper's rows first (ours n/a where not loaded), then extras.

    ``loaded`` maps dataset names to stats with the main tokenizer; ``alt`` (optional) to stats
    of the same episodes with a second tokenizer, shown last in a column without paper values.
    """
    labels: dict[str, str] = dict(reference["labels"])
    values: dict[str, dict[str, Any]] = reference["values"]
    alt_tok = next(iter(alt.values())).tokenizer if alt else None
    cells = []
    for key in list(labels) + [name for name in loaded if name not in labels]:
        stats, paper = loaded.get(key), values.get(key, {})
        label = labels.get(key) or EXTRA_LABELS.get(key, key)
        n = stats.conversations if stats else None
        for column, metric in (("Avg. Turns", "avg_turns"), ("Avg. Words", "avg_words")):
            ours = getattr(stats, metric) if stats else None
            cells.append(Cell(label, column, metric, ours, paper.get(metric), n, 1))
        setting = SETTINGS.get(key) if stats else None
        cells.append(Cell(label, "Conv. Setting", "setting", setting, paper.get("setting"), n))
        if alt_tok is not None:
            other = alt.get(key)
            column, metric = f"Avg. Words ({alt_tok} tokens)", f"avg_words_{alt_tok}"
            cells.append(Cell(label, column, metric, other and other.avg_words, None, n, 1))
    return cells


CARECALL_ROWS = [
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


def carecall_table1_cells(
    stats: Mapping[str, CareCallStats], reference: Mapping[str, Any]
) -> list[Cell]:
    """Lay out CareCall Table 1: the paper's rows x (all sessions, then each session index)."""
    values: dict[str, dict[str, Any]] = reference["values"]
    paper_all = values.get("all", {})
    main = "CareCall_mem (all sessions)"
    everything = stats.get("all")
    cells = [
        Cell(
            "Sessions",
            main,
            "sessions",
            everything and everything.sessions,
            paper_all.get("sessions"),
            everything and everything.sessions,
        )
    ]
    indices = sorted(
        {int(k.split("_")[1]) for k in stats if k != "all"}
        | {int(k.split("_")[1]) for k in values if k != "all"}
    )
    for k in indices:
        group = stats.get(f"session_{k}")
        ours = group.sessions if group else 0
        paper = values.get(f"session_{k}", {}).get("sessions")
        cells.append(Cell(f"Session {k}", main, f"session_{k}_sessions", ours, paper, ours))
    groups = [("all", main)] + [(f"session_{k}", f"Session {k}") for k in indices]
    for label, metric, digits in CARECALL_ROWS:
        for key, column in groups:
            group = stats.get(key)
            ours = getattr(group, metric) if group else None
            paper = values.get(key, {}).get(metric)
            cells.append(Cell(label, column, metric, ours, paper, group and group.sessions, digits))
    for key, column in groups[1:]:
        n = stats[key].sessions if key in stats else None
        cells.append(Cell("Sessions", column, "sessions", n, None, n))
    return cells


def _try_load(name: str, data_dir: Path, options: Mapping[str, Any]) -> tuple[Any, str | None]:
    """Load dataset ``name``; return (episodes, None) or (None, why it is not available)."""
    if not (data_dir / FOLDERS[name]).is_dir():
        return None, f"no {FOLDERS[name]}/ folder"
    if importlib.util.find_spec(f"recallbench.datasets.{LOADERS[name]}") is None:
        return None, "no loader"
    try:
        episodes = load(name, data_dir, **options)
    except (FileNotFoundError, ValueError) as exc:  # absent or malformed files: say which
        return None, str(exc).splitlines()[0][:160]
    return (episodes, None) if episodes else (None, "no episodes")


def _build_lufy(data_dir: Path, out_dir: Path, tokenizer: str, options: dict) -> dict[str, Path]:
    _require(data_dir, "lufy", "lufy_table1")
    reference = reference_table("lufy", 1)
    other = "whitespace" if tokenizer == "word" else "word"
    loaded, alt, missing = {}, {}, {}
    for name in FOLDERS:
        episodes, why = (
            (load("lufy", data_dir, **options), None)
            if name == "lufy"
            else _try_load(name, data_dir, {})
        )
        if episodes is None:
            missing[name] = why
            continue
        loaded[name] = conversation_stats(episodes, tokenizer, name)
        alt[name] = conversation_stats(episodes, other, name)
    counts = ", ".join(
        f"{k} {v.conversations:,} ({v.sessions:,} sessions)" for k, v in loaded.items()
    )
    header = NO_MODEL | {
        "Data": str(data_dir),
        "Words": f"tokenizer '{tokenizer}' = {TOKENIZER_NOTES[tokenizer]}",
        "Episodes (conversations)": counts,
        "Not available here": "; ".join(f"{k}: {v}" for k, v in missing.items()) or "none",
    }
    notes = [
        "Source: " + " ".join(reference["source"].split()),
        "A conversation is one Episode (LUFY: one user's 4 sessions with one system, 17 users x "
        "3 systems); turns = utterances of both speakers.",
        "MSC: ours = the ParlAI test files in the data dir (each episode's highest msc_dialogue "
        "session, extended by msc_personasummary; a copy without the session_4/5 dialogue files "
        "gives 4-session episodes, ParlAI's msc_v0.1 has 5); the paper's MSC numbers come from "
        "its source (Xu et al., 2022), not from these episodes.",
        "CareCall: ours = the public Korean sample (2-5 sessions per episode); the paper's row "
        "is CareCall_mem (5 sessions x 20.90 turns x 4.93 words, Bae et al. Table 1).",
        "Conversation Chronicles: ours = the test split when present. Daily Dialog and SODA have "
        "no loader in recallbench (n/a).",
        "Conv. Setting (ours) = who produced the loaded data, as its own paper states; it is a "
        "property of the source, not computed.",
    ]
    cells = lufy_table1_cells(loaded, reference, alt)
    title = "LUFY Table 1: average turns and words per conversation"
    return render(
        cells,
        paper="lufy",
        table=1,
        title=title,
        header=header,
        out_dir=out_dir,
        notes=notes,
        corner="Dataset",
    )


def _build_carecall(data_dir: Path, out_dir: Path, tokenizer: str, options: dict) -> dict:
    _require(data_dir, "carecall", "carecall_table1")
    reference = reference_table("carecall", 1)
    episodes = load("carecall", data_dir, **options)
    stats = carecall_stats(episodes, tokenizer)
    header = NO_MODEL | {
        "Data": f"{data_dir} (carecall_mem, file {options.get('file', DEFAULT_FILE)})",
        "Words": f"tokenizer '{tokenizer}' = {TOKENIZER_NOTES[tokenizer]}",
        "Episodes": f"{len(episodes):,} ({stats['all'].sessions:,} sessions)",
    }
    notes = [
        "Source: " + " ".join(reference["source"].split()),
        "Ours = the public sample unless another file was given: interactive-step episodes "
        "only; the paper's counts include the preliminary-step sessions 1 and 2 (Section 3.2.1).",
        "Distinct-n = distinct n-grams (within one utterance or sentence) / total words. Memory "
        "sentences = gold memory before the session; blank sentences are not counted.",
        "Degenerate sessions of the sample (a single utterance, no memory or summary) are kept.",
        "Distinct-n and unique words grow or shrink with corpus size: a 45-session sample is "
        "not comparable to the full dataset on these rows.",
        "n per column = the Sessions row (also per cell in the csv).",
    ]
    cells = carecall_table1_cells(stats, reference)
    title = "CareCall Table 1: statistics of CareCall_mem"
    return render(
        cells,
        paper="carecall",
        table=1,
        title=title,
        header=header,
        out_dir=out_dir,
        notes=notes,
        show_n=False,
        corner="Statistics",
    )


TABLES: dict[str, tuple[Callable[..., dict[str, Path]], str]] = {
    "lufy_table1": (_build_lufy, "word"),
    "carecall_table1": (_build_carecall, "whitespace"),
}


def build_table(
    name: str,
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    tokenizer: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Compute table ``name`` from ``data_dir``, render it to ``out_dir``, return the paths.

    ``tokenizer`` defaults per table (LUFY: ``word``, CareCall: ``whitespace``); ``options`` go
    to the main dataset's loader (e.g. ``file=`` for the full CareCall_mem file).
    """
    if name not in TABLES:
        raise did_you_mean("table", name, TABLES)
    builder, default_tok = TABLES[name]
    tokenizer = tokenizer or default_tok
    if tokenizer not in TOKENIZER_NOTES:
        raise did_you_mean("tokenizer", tokenizer, TOKENIZER_NOTES)
    return builder(Path(data_dir), Path(out_dir), tokenizer, dict(options or {}))
