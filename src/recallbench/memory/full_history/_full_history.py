"""Full dialogue history: every past session's dialogue, truncated from the front to fit.

Papers: THEANINE (Ong et al., NAACL 2025) sec. 3.2 / Table 1 baseline "All Dialogue History";
Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of EMNLP
2022, sec. 5.2 "History accumulate": "all previous sessions concatenated before D_t", with inputs
longer than the maximum sequence length (2,048) "truncated from the front" (App. B.2).

Implemented: ``observe`` keeps each finished session verbatim. ``recall`` renders all past
sessions (``Session i:`` headers, ``speaker: text`` lines) and drops turns from the FRONT until
the prompt fits: budget = context length (``context_length`` or ``llm.context_length``) minus
the tokens of the response prompt with an empty memory (template + current session) minus
``reply_tokens``; tokens are counted with ``llm.count_tokens`` (each line once, and the
rendered history once per history and first kept turn, not per question). Recalled items are the kept turns
in consecutive pairs (kind ``utterance_pair``), so ``source_ids`` show exactly what the
generator saw.

Deviations:
- Bae et al. truncate the whole input (which may cut into D_t); we never cut the current
  session, only the history, and reserve room for the reply.
"""

from __future__ import annotations

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.memory.blocks.prompts import PromptStyle, response_messages
from recallbench.records import MemoryItem, Query, Recall, Session, Turn


class FullHistory(BaselineMethod):
    """All past dialogue before the current session, truncated from the front.

    Args:
        context_length: token limit of the generator input (``None``: ``llm.context_length``;
            Bae et al. App. B.2: 2048).
        reply_tokens: tokens reserved for the reply.
        prompt_style: ``theanine`` (Fig. 24, history as its Memory) or ``carecall``.
    """

    memory_label = "Previous sessions"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        context_length: int | None = None,
        reply_tokens: int = 256,
        prompt_style: PromptStyle = "theanine",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if context_length is not None and context_length < 1:
            raise ConfigError(f"context_length must be >= 1 or null, got {context_length}")
        if reply_tokens < 0:
            raise ConfigError(f"reply_tokens must be >= 0, got {reply_tokens}")
        self.context_length = context_length
        self.reply_tokens = reply_tokens
        self._sessions: list[Session] = []
        self._tokens: dict[str, int] = {}
        self._history_counts: dict[tuple[int, int], int] = {}  # (turns, start) -> tokens

    def _clear(self) -> None:
        self._sessions = []
        self._tokens = {}
        self._history_counts = {}

    def _write(self, session: Session) -> None:
        self._sessions.append(session)
        self._history_counts = {}  # another history: its counts are keyed anew

    def recall(self, query: Query) -> Recall:
        """Return the most recent past turns that fit the generator's context."""
        self.check_episode(query)
        limit = self.context_length or int(self.llm.context_length)
        frame = "\n".join(
            m["content"] for m in response_messages(self.prompt_style, "", query, self.memory_label)
        )
        budget = limit - self.llm.count_tokens(frame) - self.reply_tokens
        past = [(s, t) for s in self._sessions for t in s.turns]
        start = self._first_fitting(past, budget)
        tokens = self._history_tokens(past, start)
        while start < len(past) and tokens > budget:
            start += 1  # the per-line estimate can be off by a few tokens at joins
            tokens = self._history_tokens(past, start)
        kept = past[start:]
        text = _render(kept)
        info = {
            "method": "FullHistory",
            "context_length": limit,
            "budget_tokens": budget,
            "history_tokens": tokens,
            "kept_turns": len(kept),
            "dropped_turns": start,
        }
        return Recall(tuple(_pairs(kept)), text, info)

    def _first_fitting(self, past: list[tuple[Session, Turn]], budget: int) -> int:
        """Return the index of the earliest turn such that everything after it fits."""
        used, start = 0, len(past)
        for k in range(len(past) - 1, -1, -1):
            session, turn = past[k]
            cost = self._count(turn.turn_id, f"{turn.speaker}: {turn.text}") + 1
            if k == len(past) - 1 or past[k + 1][0] is not session:  # first turn seen of it
                cost += self._count(f"header:{session.session_id}", _header(session)) + 1
            if used + cost > budget:
                break
            used, start = used + cost, k
        return start

    def _history_tokens(self, past: list[tuple[Session, Turn]], start: int) -> int:
        """Exact tokens of the history rendered from turn ``start``, counted once per history
        and start: every question after the same sessions reads the same history (LoCoMo
        asks ~200 of them), so its 16k-token text is not tokenized again per question."""
        key = (len(past), start)
        if key not in self._history_counts:
            text = _render(past[start:])
            self._history_counts[key] = self.llm.count_tokens(text) if text else 0
        return self._history_counts[key]

    def _count(self, key: str, text: str) -> int:
        if key not in self._tokens:
            self._tokens[key] = self.llm.count_tokens(text)
        return self._tokens[key]

    def snapshot(self) -> list[MemoryItem]:
        """Return the whole stored history (untruncated), as turn pairs."""
        return _pairs([(s, t) for s in self._sessions for t in s.turns])


def _header(session: Session) -> str:
    return f"Session {session.index}:"


def _render(turns: list[tuple[Session, Turn]]) -> str:
    lines: list[str] = []
    for k, (session, turn) in enumerate(turns):
        if k == 0 or turns[k - 1][0] is not session:
            lines.append(_header(session))
        lines.append(f"{turn.speaker}: {turn.text}")
    return "\n".join(lines)


def _pairs(turns: list[tuple[Session, Turn]]) -> list[MemoryItem]:
    """Group consecutive turns of the same session two by two into items."""
    groups: list[list[tuple[Session, Turn]]] = []
    for session, turn in turns:
        if groups and groups[-1][0][0] is session and len(groups[-1]) < 2:
            groups[-1].append((session, turn))
        else:
            groups.append([(session, turn)])
    return [
        MemoryItem(
            item_id=f"{group[0][1].turn_id}/pair",
            text="\n".join(f"{t.speaker}: {t.text}" for _, t in group),
            kind="utterance_pair",
            created=group[0][0].start,
            source_ids=tuple(t.turn_id for _, t in group),
            attrs={"session": group[0][0].index},
        )
        for group in groups
    ]
