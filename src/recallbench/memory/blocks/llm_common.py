"""Shared pieces of the LLM-era baselines of THEANINE sec. 3.2 (RSum-LLM, MemoChat, COMEDY).

- ``stems``/``jaccard``: crude stemmed content words, the offline twins' notion of "same topic";
- ``trace``: provenance of an abstractive memory line (the candidate texts it overlaps most);
- ``parse_options``/``choose_options``: numbered-option selection replies and their offline twin;
- ``LLMBaseline``: the response prompt switch (the paper's own prompt or THEANINE Fig. 24) and
  per-task fallback counters.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Literal

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import ParseError, TaskResult
from recallbench.memory._base import Message, render_history
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.memory.blocks.prompts import response_messages
from recallbench.records import Episode, Query, Recall
from recallbench.text import content_words
from recallbench.text import crude_stem as stem

ResponseStyle = Literal["paper", "theanine"]
RESPONSE_STYLES = ("paper", "theanine")
_NUMBER = re.compile(r"\d+")
_NONE = re.compile(r"\b(?:noto|none|nothing|no relevant|not related)\b", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\(?\d+[.):]|\[\d+\])\s*")


def stems(text: str) -> set[str]:
    """Return the stemmed content words of ``text``."""
    return {stem(w.split("'")[0]) for w in content_words(text)}


def jaccard(a: str, b: str) -> float:
    """Return the Jaccard similarity of the stemmed content words of ``a`` and ``b``."""
    sa, sb = stems(a), stems(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def bullet_lines(text: str) -> list[str]:
    """Return the non-empty lines of ``text`` with list bullets and numbering removed."""
    return [line for line in (_BULLET.sub("", raw).strip() for raw in text.splitlines()) if line]


def load_json(reply: str) -> object:
    """Return the first JSON list (else object) in ``reply``, leniently (a Python literal when
    only ``ast.literal_eval`` reads it: tuples may appear).

    Prose and code fences around it, trailing commas and Python-style single quotes are
    tolerated; raises ParseError when there is nothing loadable.
    """
    for open_, close in (("[", "]"), ("{", "}")):
        start, end = reply.find(open_), reply.rfind(close)
        if 0 <= start < end:
            text = _TRAILING_COMMA.sub(r"\1", reply[start : end + 1])
            try:
                return json.loads(text)
            except ValueError:
                pass
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError):
                continue
    raise ParseError(f"no JSON list or object in reply {reply[:80]!r}")


def trace(
    text: str, candidates: list[tuple[str, tuple[str, ...]]], default: tuple[str, ...]
) -> tuple[str, ...]:
    """Return the source ids of the candidates sharing the most stems with ``text``.

    ``candidates`` are ``(text, source_ids)`` of what the line may come from (earlier memories,
    turns of the session); with no shared stem, ``default`` (e.g. every observed turn).
    """
    target = stems(text)
    overlaps = [len(target & stems(cand)) for cand, _ in candidates]
    best = max(overlaps, default=0)
    if best == 0:
        return default
    ids = (
        sid for (_, sids), o in zip(candidates, overlaps, strict=True) if o == best for sid in sids
    )
    return tuple(dict.fromkeys(ids))


def parse_options(reply: str, n_options: int, none_option: int | None = None) -> tuple[int, ...]:
    """Parse a selection reply into 0-based option indices (empty: nothing relevant).

    Accepts MemoChat's ``2#5`` and drifts such as ``Options 2 and 5.``, ``[2, 5]`` or
    ``Task Result: 2#5``; numbers outside ``1..n_options`` are dropped. ``none_option`` (the
    1-based number of a NOTO option) or a NOTO/none word means nothing. Raises ParseError when
    the reply names no valid option and no "none".
    """
    text = reply.split("Task Result:")[-1]
    numbers = [int(n) for n in _NUMBER.findall(text)]
    chosen = tuple(dict.fromkeys(n - 1 for n in numbers if 1 <= n <= n_options))
    if chosen:
        return chosen
    if _NONE.search(text) or (none_option is not None and none_option in numbers):
        return ()
    raise ParseError(f"no option in 1..{n_options} in reply {reply[:80]!r}")


def choose_options(query: str, options: list[str], max_selected: int) -> tuple[int, ...]:
    """Offline selection: the options sharing stems with ``query``, most shared first (<= k)."""
    target = stems(query)
    scored = [(len(target & stems(text)), i) for i, text in enumerate(options)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return tuple(sorted(i for _, i in ranked[:max_selected]))


def render_options(options: list[str]) -> str:
    """Render options as ``(n) text`` lines, numbered from 1."""
    return "\n".join(f"({n}) {text}" for n, text in enumerate(options, 1))


def partner(speakers: tuple[str, ...], speaker: str) -> str:
    """Return the first speaker other than ``speaker`` (``"the user"`` when there is none)."""
    return next((s for s in speakers if s != speaker), "the user")


class LLMBaseline(BaselineMethod):
    """Response prompt switch and fallback counters of the LLM-era baselines.

    Subclasses set ``RESPONSE_PROMPT`` (fields ``memory``, ``dialogue``, ``speaker``,
    ``partner``) and ``TASKS`` (names of their LLM steps, for the failure counters).
    """

    RESPONSE_PROMPT = ""
    TASKS: tuple[str, ...] = ()

    def __init__(
        self, llm: LLMClient, embedder: TextEmbedder, *, response_prompt: ResponseStyle = "paper"
    ):
        super().__init__(llm, embedder, prompt_style="theanine")
        if response_prompt not in RESPONSE_STYLES:
            raise ConfigError(
                f"response_prompt {response_prompt!r} unknown (options: {', '.join(RESPONSE_STYLES)})"
            )
        self.response_prompt = response_prompt
        self.failures = dict.fromkeys(self.TASKS, 0)

    def reset(self, episode: Episode) -> None:
        """Start ``episode`` with an empty store and zero failure counts."""
        self.failures = dict.fromkeys(self.TASKS, 0)
        super().reset(episode)

    def query_texts(self, queries: Sequence[Query]) -> Sequence[str]:
        """None: the LLM (offline: shared stems) selects, the embedder never reads a query."""
        return ()

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Return the paper's response prompt (or THEANINE Fig. 24) filled with ``recall.text``."""
        if self.response_prompt == "theanine":
            return response_messages("theanine", recall.text, query)
        text = self.RESPONSE_PROMPT.format(
            memory=recall.text or "(none)",
            dialogue=render_history(query.history),
            speaker=query.speaker,
            partner=partner(self.speakers, query.speaker),
        )
        return [{"role": "user", "content": text}]

    def _count(self, task: str, result: TaskResult[object]) -> bool:
        """Count a failed (call or parse) ``result`` of ``task``; return whether it succeeded."""
        if not result.parsed:
            self.failures[task] += 1
        return bool(result.parsed)
