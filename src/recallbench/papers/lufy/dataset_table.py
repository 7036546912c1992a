"""LUFY Table 1: average turns and words per conversation of LUFY and the other datasets.

Builder ``dataset_table`` (``conf/experiment/lufy_table1.yaml``, ``runs: null``): every dataset
found under the data root is loaded and measured (``recallbench.datasets.stats``); the paper's
rows come first (ours ``n/a`` where a dataset is not here), then the extra datasets. Options:
``tokenizer`` (default ``word``: closest to the paper's word counts on the real data; the other
tokenizer is shown in a last column) and ``options`` (loader options of the LUFY dataset).
Loading is separate from laying out (``table1_cells``), so the layout is tested on hand-made
episodes.
"""

from __future__ import annotations

from collections.abc import Mapping

from recallbench.datasets import FOLDERS, load, require_folder, try_load
from recallbench.datasets.stats import TOKENIZER_NOTES, ConversationStats, conversation_stats
from recallbench.errors import did_you_mean
from recallbench.records import Episode
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
NOTES = [
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


def table1_cells(
    loaded: Mapping[str, ConversationStats],
    reference: Mapping[str, JSONValue],
    alt: Mapping[str, ConversationStats] | None = None,
) -> list[Cell]:
    """Lay out LUFY Table 1: the paper's rows first (ours n/a where not loaded), then extras.

    ``loaded`` maps dataset names to stats with the main tokenizer; ``alt`` (optional) to stats
    of the same episodes with a second tokenizer, shown last in a column without paper values.
    """
    given, values = reference["labels"], reference["values"]
    if not isinstance(given, dict) or not isinstance(values, dict):
        raise ValueError("papers/lufy/reference.yaml table1: labels and values: expected mappings")
    labels = {k: str(v) for k, v in given.items()}
    alt_tok = next(iter(alt.values())).tokenizer if alt else None
    cells = []
    for key in list(labels) + [name for name in loaded if name not in labels]:
        stats = loaded.get(key)
        label = labels.get(key) or EXTRA_LABELS.get(key, key)
        n = stats.conversations if stats else None
        for column, metric in (("Avg. Turns", "avg_turns"), ("Avg. Words", "avg_words")):
            ours = getattr(stats, metric) if stats else None
            paper = reference_value(values, key, metric)
            cells.append(Cell(label, column, metric, ours, paper, n, 1, episodes=n))
        setting = SETTINGS.get(key) if stats else None
        cells.append(
            Cell(
                label,
                "Conv. Setting",
                "setting",
                setting,
                reference_value(values, key, "setting"),
                n,
                episodes=n,
            )
        )
        if alt is not None and alt_tok is not None:
            other = alt.get(key)
            column, metric = f"Avg. Words ({alt_tok} tokens)", f"avg_words_{alt_tok}"
            words = other.avg_words if other else None
            cells.append(Cell(label, column, metric, words, None, n, 1, episodes=n))
    return cells


def dataset_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of LUFY Table 1 from the datasets under ``ctx.data_dir``."""
    tokenizer = str(spec.option("tokenizer", "word"))
    if tokenizer not in TOKENIZER_NOTES:
        raise spec.error("tokenizer", str(did_you_mean("tokenizer", tokenizer, TOKENIZER_NOTES)))
    data_dir = ctx.need_data_dir()
    require_folder(data_dir, "lufy", f"{spec.experiment} (make reproduce-table-lufy-1)")
    reference = reference_table("lufy", spec.id)
    other = "whitespace" if tokenizer == "word" else "word"
    loaded: dict[str, ConversationStats] = {}
    alt: dict[str, ConversationStats] = {}
    missing: dict[str, str] = {}
    hashes: dict[str, str] = {}
    episodes: list[Episode] | None
    why: str | None
    for name in FOLDERS:
        if name == "lufy":
            episodes, why = load("lufy", data_dir, **dict(spec.option("options", {}))), None
        else:
            episodes, why = try_load(name, data_dir)
        if episodes is None:
            missing[name] = " ".join(str(why).replace(str(data_dir), "<data dir>").split())
            continue
        hashes[name] = data_label(name, None, episodes_sha256(episodes), data_dir)
        loaded[name] = conversation_stats(episodes, tokenizer, name)
        alt[name] = conversation_stats(episodes, other, name)
    counts = ", ".join(
        f"{k} {v.conversations:,} ({v.sessions:,} sessions)" for k, v in loaded.items()
    )
    header = {
        "generator": "none (dataset statistics)",
        "judge": "none",
        "embedder": "none",
        "data": ", ".join(hashes.values()),
        "words": f"tokenizer '{tokenizer}' = {TOKENIZER_NOTES[tokenizer]}",
        "episodes": counts,
        "not available here": "; ".join(f"{k}: {v}" for k, v in missing.items()) or "none",
    }
    notes = ["Source: " + " ".join(reference["source"].split()), *NOTES]
    cells = table1_cells(loaded, reference, alt)
    return BuiltTable(cells, header=header, notes=notes, corner="Dataset")
