"""Reply shapes of CAIM's tasks that depend on the call (the items a reply may name), and the
rows of candidate memories the prompts show (``ThoughtEntry``, ``render_items``)."""

from __future__ import annotations

from typing import TypedDict

from recallbench.llm.shapes import Pattern


def index_pattern(n: int) -> str:
    """Regex of one item number in 1..``n``: a grammar then cannot name an item past the list
    (SmolLM2 under a ``\\d{1,3}`` grammar answered ``[201]`` for 3 items: bench/structured.py)."""
    return "(" + "|".join(str(i) for i in range(n, 0, -1)) + ")"


def relevance_reply(n: int) -> Pattern:
    """Up to ``min(n, 20)`` bracketed item numbers of the ``n`` candidates, or nothing."""
    if n < 1:
        return Pattern("")
    item = rf"\[{index_pattern(n)}\]"
    return Pattern(rf"({item}(, ?{item}){{0,{min(n, 20) - 1}}})?")


class ThoughtEntry(TypedDict):
    """A CAIM memory as the prompts show it: its tags, thought and timestamp(s)."""

    tags: list[str]
    thought: str
    timestamp: str
    timestamps: list[str]


def render_items(entries: list[ThoughtEntry]) -> str:
    """Render candidate memories as numbered Table 1 rows: ``[n] tags | thought | timestamp``."""
    return "\n".join(
        f"[{i}] {','.join(e['tags'])} | {e['thought']} | {e['timestamp']}"
        for i, e in enumerate(entries, 1)
    )
