"""RSum-LLM: a memory pool recursively rewritten by the LLM after every session, no retrieval.

Paper: Wang et al., "Recursively Summarizing Enables Long-Term Dialogue Memory in Large Language
Models", arXiv:2308.15022 (2023; Neurocomputing 2025). Memory iteration M_i = LLM(S_i, M_{i-1}):
after session i the LLM reads the previous memory and the session and writes an updated memory
of both speakers' personality information; responses are generated from the whole memory plus
the current context (no retrieval module). Baseline "RSum-LLM" of THEANINE (Ong et al., NAACL
2025) sec. 3.2, which used the original prompts with gpt-3.5-turbo-0125.

Implemented: ``RSUM_UPDATE_TASK`` (stage ``memory``) once per observed session with the previous
pool; the reply becomes the new pool (MemoryItems of kind ``summary``; sentences carried over
verbatim keep their id, creation time and provenance, new ones are traced to the previous pool and
the session's turns). ``recall`` returns the whole pool. Offline twin: the session's extractive
summary merged into the previous pool; a new sentence replaces a similar older one (stemmed
Jaccard >= ``dedup_threshold``), and over ``max_sentences`` the oldest are dropped.

Deviations:
- The prompts are reconstructions from the paper's description (the original prompt text is not
  in our files): previous memory + session -> updated memory of both speakers' persona
  information, bounded length; response from memory + context. Wording, the section markers
  ``[Previous Memory]``/``[Dialogue Session]``/``[Updated Memory]`` and the one-sentence-per-line
  output format are ours; the 20-sentence bound and the 100-word response limit are our reading
  of the paper's setup, not checked against its prompt.
- A reply longer than ``max_sentences`` is cut to the first ``max_sentences`` (counted in
  ``truncated``); an unparseable reply keeps the previous pool (counted in ``failures``).
- Provenance of abstractive sentences is approximate (most-overlapping earlier sentence or turn).
"""

from __future__ import annotations

import re

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory._base import render_history
from recallbench.memory.blocks.llm_common import (
    LLMBaseline,
    ResponseStyle,
    bullet_lines,
    jaccard,
    trace,
)
from recallbench.memory.blocks.summarize import extractive_summary
from recallbench.records import MemoryItem, Query, Recall, Session
from recallbench.text import words

# Reconstruction after Wang et al. (2023) sec. 3 "memory iteration" (the original prompt is not in
# our files; see Deviations).
RSUM_UPDATE_PROMPT = (
    "You are an advanced AI language model that keeps a memory of a long-term conversation "
    "between {speakers}. You will receive the previous memory and a new dialogue session. "
    "Update the memory as follows:\n"
    "1. Read the previous memory and keep the personality information it holds about each "
    "speaker (persona, preferences, experiences, relationships, plans).\n"
    "2. Find the new or changed personality information in the dialogue session.\n"
    "3. Combine old and new information: add what is new, revise what the session changed or "
    "contradicted, and merge repetitions.\n"
    "4. Write the updated memory as short sentences, one per line, each naming the speaker it is "
    "about, and no more than {max_sentences} sentences.\n\n"
    "[Previous Memory]\n{previous_memory}\n\n"
    "[Dialogue Session]\n{dialogue}\n\n"
    "[Updated Memory]"
)
RSUM_UPDATE_SOURCE = "reconstruction after Wang et al. 2023 sec. 3 (memory iteration)"

RSUM_RESPONSE_PROMPT = (
    "You are an advanced AI language model designed to engage in personality-based "
    "conversations. You are {speaker}, talking with {partner}. You will be given a memory of "
    "both speakers' personality information from your previous conversations and the current "
    "dialogue context. Write {speaker}'s next response: natural and conversational, consistent "
    "with the memory where it is relevant, and within 100 words.\n\n"
    "[Memory]\n{memory}\n\n"
    "[Current Context]\n{dialogue}\n\n"
    "[Response]\n{speaker}:"
)
RSUM_RESPONSE_SOURCE = "reconstruction after Wang et al. 2023 sec. 3 (memory-based response)"

EMPTY_MEMORY = "(empty)"
_MARKERS = re.compile(r"\[?updated memory\]?:?", re.IGNORECASE)
_META = re.compile(
    r"\b(?:memory|memories)\b.*\b(?:unchanged|the same|no (?:new|update|change)|not need)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def parse_memory(reply: str) -> tuple[str, ...]:
    """Parse an update reply into memory sentences (after the last "Updated Memory" marker).

    Bullets and numbering are dropped, a one-paragraph reply is split into sentences, headers
    (``...:``), one-word fragments and remarks about the memory itself ("The memory remains the
    same.") are skipped. Raises ParseError when no sentence is left.
    """
    body = _MARKERS.split(reply)[-1]
    lines = bullet_lines(body)
    if len(lines) == 1:
        lines = [s.strip() for s in _SENTENCE_END.split(lines[0]) if s.strip()]
    out = tuple(
        line
        for line in lines
        if len(words(line)) >= 2 and not line.endswith(":") and not _META.search(line)
    )
    if not out:
        raise ParseError(f"no memory sentence in reply {reply[:80]!r}")
    return out


def offline_update(
    *,
    previous_memory: str,
    dialogue: str,
    max_sentences: int,
    dedup_threshold: float = 0.5,
    per_session: int = 8,
    **_: object,
) -> str:
    """Offline memory iteration: merge the session's extractive summary into the previous pool.

    Each new sentence replaces the most similar older sentence when their stemmed Jaccard is at
    least ``dedup_threshold`` (newer information wins), else it is appended; over
    ``max_sentences`` the oldest sentences are dropped. Returns the reply an LLM would give.
    """
    pool = [] if previous_memory == EMPTY_MEMORY else bullet_lines(previous_memory)
    new = extractive_summary(dialogue=dialogue, max_sentences=per_session).splitlines()
    for sentence in new:
        scores = [jaccard(sentence, old) for old in pool]
        best = max(range(len(pool)), key=lambda i: (scores[i], -i), default=None)
        if best is not None and scores[best] >= dedup_threshold:
            del pool[best]
        pool.append(sentence)
    pool = pool[-max_sentences:]
    return "[Updated Memory]\n" + "\n".join(f"- {s}" for s in pool)


class RSumLLM(LLMBaseline):
    """Recursively summarize every session into one bounded memory pool; show all of it.

    Args:
        llm, embedder: collaborators (the embedder is unused: no retrieval module).
        max_sentences: bound of the memory pool (prompt and hard cut).
        dedup_threshold, per_session: offline twin (replacement similarity, sentences per
            session of the extractive summary).
        response_prompt: ``paper`` (reconstructed RSum response prompt) or ``theanine`` (Fig. 24).
    """

    RESPONSE_PROMPT = RSUM_RESPONSE_PROMPT
    TASKS = ("update",)

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        max_sentences: int = 20,
        dedup_threshold: float = 0.5,
        per_session: int = 8,
        response_prompt: ResponseStyle = "paper",
    ) -> None:
        super().__init__(llm, embedder, response_prompt=response_prompt)
        if max_sentences < 1 or per_session < 1:
            raise ConfigError(
                f"max_sentences, per_session must be >= 1: {max_sentences}, {per_session}"
            )
        if not 0.0 < dedup_threshold <= 1.0:
            raise ConfigError(f"dedup_threshold must be in (0, 1], got {dedup_threshold}")
        self.max_sentences = max_sentences
        self.update_task = PromptTask(
            name="rsum.update_memory",
            template=RSUM_UPDATE_PROMPT,
            parse=parse_memory,
            offline=lambda **f: offline_update(
                **f, dedup_threshold=dedup_threshold, per_session=per_session
            ),
            fallback=None,
            stage="memory",
            max_tokens=512,
            source=RSUM_UPDATE_SOURCE,
            # structured outputs: one sentence per line, at most max_sentences lines
            reply=Pattern(rf"\n?[^\n]{{3,200}}(\n[^\n]{{3,200}}){{0,{max_sentences - 1}}}"),
        )
        self._pool: list[MemoryItem] = []
        self.version = 0
        self.truncated = 0

    def _clear(self) -> None:
        self._pool, self.version, self.truncated = [], 0, 0

    def _write(self, session: Session) -> None:
        previous = "\n".join(item.text for item in self._pool) or EMPTY_MEMORY
        result = self.llm.run(
            self.update_task,
            speakers=" and ".join(self.speakers),
            max_sentences=self.max_sentences,
            previous_memory=previous,
            dialogue=render_history(session.turns),
        )
        if not self._count("update", result) or result.value is None:
            return  # keep the previous pool
        sentences = list(result.value)
        if len(sentences) > self.max_sentences:
            self.truncated += 1
            sentences = sentences[: self.max_sentences]
        self.version += 1
        self._pool = self._rebuild(sentences, session)

    def _rebuild(self, sentences: list[str], session: Session) -> list[MemoryItem]:
        """Turn the new pool's sentences into items, keeping unchanged ones as they were."""
        kept = {" ".join(words(item.text)): item for item in self._pool}
        candidates = [(item.text, item.source_ids) for item in self._pool]
        candidates += [(t.text, (t.turn_id,)) for t in session.turns]
        pool: list[MemoryItem] = []
        seen: set[str] = set()
        for j, sentence in enumerate(sentences):
            key = " ".join(words(sentence))
            if key in seen:
                continue  # a sentence repeated in one reply is one memory
            seen.add(key)
            old = kept.get(key)
            if old is not None:
                pool.append(old)
                continue
            pool.append(
                MemoryItem(
                    item_id=f"{self.episode_id}/rsum/v{self.version}m{j}",
                    text=sentence,
                    kind="summary",
                    created=session.start,
                    source_ids=trace(sentence, candidates, self.observed_ids()),
                    attrs={"session": session.index, "version": self.version},
                )
            )
        return pool

    def recall(self, query: Query) -> Recall:
        """Return the whole memory pool (RSum-LLM has no retrieval module)."""
        self.check_episode(query)
        info = {
            "method": "RSumLLM",
            "store_size": len(self._pool),
            "version": self.version,
            "truncated": self.truncated,
            "failures": dict(self.failures),
        }
        return Recall(tuple(self._pool), "\n".join(item.text for item in self._pool), info)

    def snapshot(self) -> list[MemoryItem]:
        """Return the current memory pool."""
        return list(self._pool)
