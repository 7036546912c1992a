"""Flat retrieval: LongMemEval's memory design axes as one configurable index (Wu et al., ICLR
2025, arXiv 2410.10813, sec. 5; the authors' ``src/retrieval/run_retrieval.py`` and
``src/generation/run_generation.py``).

Implemented: every observed session becomes values of the chosen granularity (``value``):
``session`` (the whole session; its key is the concatenation of its user turns, as
``process_item_flat_index`` indexes a session) or ``round`` (a user turn with the assistant reply
after it; its key is the user turn, as the authors index turns and expand a retrieved turn into
its round). ``key: value_userfact`` expands each key with user facts extracted from the value
(the paper's "fact-augmented key expansion", README join mode ``merge``). Recall ranks the values
for the question by cosine of the configured embedder (``retriever: dense``) or BM25
(``retriever: bm25``, rank-bm25 on word tokens, as their ``flat-bm25``) and keeps the top ``k``.
``time_aware: true`` first narrows the search to values dated inside the time range the question
names relative to its date (the paper's time-aware query expansion), falling back to every value
when the question names none or nothing lies inside. The recall renders the kept values as the
authors' ``nl`` history, sorted by date: ``### Session i:`` / ``Session Date:`` / ``Session
Content:`` blocks with ``role: content`` lines.

Deviations:
- User facts are extracted offline: the user's first-person sentences of the value (the authors
  prompt an LLM per session or turn and cache the facts). A documented no-LLM stand-in.
- The time range is inferred by rules ("N days/weeks/months ago", "last week/month/year",
  "yesterday", "in <month>") where the authors prompt an LLM and match timestamped events
  extracted by an LLM; values are matched by their session date.
- Their retrievers (Stella V5 1.5B, Contriever, gte-Qwen2-7B) are not here: the configured
  embedder (MiniLM offline) or BM25.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.memory.blocks.prompts import PromptStyle
from recallbench.records import Episode, MemoryItem, Query, Recall, Session, Turn
from recallbench.text import tokenize

VALUES = ("session", "round")
KEYS = ("value", "value_userfact")
RETRIEVERS = ("dense", "bm25")
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"  # the release's dates, as the reader sees them
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.I)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b")
_LAST = re.compile(r"\b(?:last|past|previous)\s+(day|week|month|year)\b")
_MONTHS = "january february march april may june july august september october november december"
_MONTHS_LIST = _MONTHS.split()
_IN_MONTH = re.compile(r"\b(?:in|during|of)\s+(" + "|".join(_MONTHS_LIST) + r")\b")
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def user_facts(turns: list[Turn], user: str = "user") -> list[str]:
    """The user's first-person sentences (the offline user facts of a value)."""
    out: list[str] = []
    for t in turns:
        if t.speaker != user:
            continue
        out += [s for s in _SENTENCE.split(t.text.strip()) if _FIRST_PERSON.search(s)]
    return out


def time_range(question: str, now: datetime | None) -> tuple[datetime, datetime] | None:
    """The dates a question points at, relative to ``now`` (None: it names no range)."""
    if now is None:
        return None
    text = question.lower()
    if m := _AGO.search(text):
        n = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        days = n * _DAYS[m.group(2)]
        slack = max(2, days // 4)
        return now - timedelta(days=days + slack), now - timedelta(days=max(days - slack, 0))
    if m := _LAST.search(text):
        return now - timedelta(days=2 * _DAYS[m.group(1)]), now
    if "yesterday" in text:
        return now - timedelta(days=2), now
    if m := _IN_MONTH.search(text):
        month = _MONTHS_LIST.index(m.group(1)) + 1
        year = now.year if month <= now.month else now.year - 1
        start = datetime(year, month, 1)
        end = datetime(year + (month == 12), month % 12 + 1, 1)
        return start, end
    return None


def render_history(items: list[MemoryItem]) -> str:
    """The authors' ``nl`` history of the kept values, sorted by date."""
    blocks = []
    ordered = sorted(items, key=lambda i: (i.created or datetime.min, i.item_id))
    for n, item in enumerate(ordered, start=1):
        date = item.created.strftime(DATE_FORMAT) if item.created else ""
        blocks.append(f"\n### Session {n}:\nSession Date: {date}\nSession Content:\n{item.text}\n")
    return "".join(blocks)


class FlatRetrieval(BaselineMethod):
    """LongMemEval's flat index: values of one granularity, optional fact keys, top-k recall."""

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        value: str = "round",
        key: str = "value",
        retriever: str = "dense",
        k: int = 10,
        time_aware: bool = False,
        prompt_style: PromptStyle = "theanine",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        for name, got, allowed in (
            ("value", value, VALUES),
            ("key", key, KEYS),
            ("retriever", retriever, RETRIEVERS),
        ):
            if got not in allowed:
                raise ConfigError(f"flat_retrieval {name}: {got!r} is not one of {allowed}")
        if int(k) < 1:
            raise ConfigError(f"flat_retrieval k: must be >= 1, got {k}")
        self.value, self.key, self.retriever = value, key, retriever
        self.k, self.time_aware = int(k), bool(time_aware)
        self._items: list[MemoryItem] = []
        self._keys: list[str] = []

    def _clear(self) -> None:
        self._items, self._keys = [], []

    def _values(self, session: Session) -> list[tuple[list[Turn], str]]:
        """(turns of the value, its key text) for each value of ``session``."""
        turns, user = list(session.turns), self._user()
        if self.value == "session":
            users = " ".join(t.text for t in turns if t.speaker == user)
            return [(turns, users)] if turns else []
        out = []
        for j, t in enumerate(turns):
            if t.speaker != user:
                continue
            nxt = turns[j + 1] if j + 1 < len(turns) and turns[j + 1].speaker != user else None
            out.append(([t] + ([nxt] if nxt else []), t.text))
        return out

    def _user(self) -> str:
        """The user's speaker name: the episode's first speaker (LongMemEval: "user")."""
        return self.speakers[0] if self.speakers else "user"

    def _key(self, turns: list[Turn], key: str) -> tuple[str, list[str]]:
        facts = user_facts(turns, self._user()) if self.key == "value_userfact" else []
        return " ".join([key, *facts]).strip(), facts

    def prefetch_texts(self, episode: Episode) -> list[str]:
        """Every key ``observe`` writes for ``episode`` (dense: recall embeds them; BM25: none)."""
        self.speakers = episode.speakers
        if self.retriever != "dense":
            return []
        return [self._key(t, k)[0] for s in episode.sessions for t, k in self._values(s)]

    def _write(self, session: Session) -> None:
        for j, (turns, key) in enumerate(self._values(session)):
            text, facts = self._key(turns, key)
            self._keys.append(text)
            self._items.append(
                MemoryItem(
                    item_id=f"{session.session_id}/v{j}",
                    text="\n\n".join(f"{t.speaker}: {t.text.strip()}" for t in turns),
                    kind="session" if self.value == "session" else "round",
                    created=session.start,
                    source_ids=tuple(t.turn_id for t in turns),
                    attrs={"facts": facts} if facts else {},
                )
            )

    def _scores(self, question: str, pool: list[int]) -> np.ndarray:
        keys = [self._keys[i] for i in pool]
        if self.retriever == "bm25":
            from rank_bm25 import BM25Okapi

            corpus = [tokenize(k.lower(), "word") or [""] for k in keys]
            return np.asarray(BM25Okapi(corpus).get_scores(tokenize(question.lower(), "word")))
        vectors = self.embedder.encode([question, *keys])
        return np.asarray(vectors[1:] @ vectors[0])

    def recall(self, query: Query) -> Recall:
        """The top-k values for the question (inside its time range when ``time_aware``)."""
        self.check_episode(query)
        question = query.question or " ".join(t.text for t in query.history[-1:])
        pool = list(range(len(self._items)))
        span = time_range(question, query.now) if self.time_aware else None
        if span is not None:
            inside = [i for i in pool if (c := self._items[i].created) and span[0] <= c <= span[1]]
            pool = inside or pool
        info: dict[str, object] = {"method": "FlatRetrieval", "values": len(self._items)}
        if span is not None:
            info["time_range"] = [span[0].isoformat(), span[1].isoformat()]
        if not pool or not question.strip():
            return Recall((), "", dict(info))
        scores = self._scores(question, pool)
        order = sorted(range(len(pool)), key=lambda j: (-float(scores[j]), pool[j]))[: self.k]
        items = [self._items[pool[j]] for j in order]
        info["searched"] = len(pool)
        return Recall(tuple(items), render_history(items), dict(info))

    def snapshot(self) -> list[MemoryItem]:
        """Every value written so far."""
        return list(self._items)
