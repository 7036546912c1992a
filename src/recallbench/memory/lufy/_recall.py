"""The LUFY-family store's read side (``_store.LufyFamilyMemory``): retrieval and the prompts.

Functions over an ``_entries.EntryStore``: ``retrieve`` ranks the memories above the cosine
threshold by cosine plus the method's bonus, ``count_retrievals`` updates R1/R2 (LUFY sec. 2),
``recall_info`` records what was found, and ``response_messages`` / ``answer_fields`` render
what the answerer sees: LUFY Fig. 4 (``RESPONSE_PROMPT``, verbatim) and the QA prompt fields.
``_store``'s module docstring describes retrieval and the live-writes deviation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.memory._base import Message, render_history
from recallbench.memory.lufy._entries import Entry, EntryStore, Pair, pair_text, user_pairs
from recallbench.memory.lufy._tasks import NO_INFO, bullets
from recallbench.records import Episode, Query, Recall, Turn
from recallbench.store import JSONValue

# LUFY Fig. 4 ("Prompt for generating chatbot responses"), verbatim; the placeholders
# {key\_summary}, {recent\_utterances}, {related\_memory} are unescaped for str.format.
RESPONSE_PROMPT = (
    "You will be provided with 3 pieces of information:\n\n"
    "1. Key Summary: A summary of past conversations .\n"
    "2. Recent Utterances: The latest exchanges between you and the user.\n"
    "3. Relevant Memory: The memory most pertinent to the current conversation.\n\n"
    "Using these details, you are tasked with generating an effective response. Ensure that your "
    "reply maintains a casual tone to mimic a genuine interaction with a friend.\n\n"
    "Here's the information:\n\n"
    "- Key Summary of Past Conversations: {key_summary}\n"
    "- Recent Utterances: {recent_utterances}\n"
    "- Memory Relevant to Current Conversation: {related_memory}"
)
RESPONSE_SOURCE = "LUFY (Sumida et al. 2024) Fig. 4, verbatim"


def retrieval_text(query: Query) -> str:
    """The text a recall retrieves with: the question of a probe, else the last turn."""
    if query.question is not None:
        return query.question
    return query.history[-1].text if query.history else ""


def live_history(query: Query, recent_turns: int) -> tuple[Turn, ...]:
    """The turns of a non-probe query whose pairs a live-writing recall writes first."""
    return query.history[: max(len(query.history) - recent_turns, 0)]


def recall_texts(
    store: EntryStore, queries: Sequence[Query], recent_turns: int, live_writes: bool
) -> list[str]:
    """Every text that recalling ``queries`` in order embeds (pairs written live, then the
    retrieval texts), each once: what ``prefetch`` embeds in one batch, so each recall finds its
    vectors in the embedder's cache (nothing changes beyond the float noise of batching)."""
    texts: list[str] = []
    for query in queries:
        if query.question is None and live_writes:
            pairs = user_pairs(live_history(query, recent_turns), store.user)
            texts += [pair_text(p) for p in pairs if p[0].turn_id not in store.known]
        texts.append(retrieval_text(query))
    return [t for t in dict.fromkeys(texts) if t.strip()]


Ranked = tuple[Entry, float, float]  # (entry, cosine, cosine + bonus), best first


def retrieve(
    store: EntryStore,
    embedder: TextEmbedder,
    text: str,
    now: datetime,
    *,
    threshold: float,
    top_k: int,
    bonus: Callable[[Entry, datetime], float],
) -> list[Ranked]:
    """Return the top-k entries with cosine >= threshold, by cosine + bonus (ties: older first)."""
    if not text.strip() or not store.entries:
        return []
    matrix = np.stack([store.vectors[e.item_id] for e in store.entries])
    cosines = matrix @ embedder.encode([text])[0]
    found = [
        (e, float(c), float(c) + bonus(e, now))
        for e, c in zip(store.entries, cosines, strict=True)
        if c >= threshold
    ]
    found.sort(key=lambda x: (-x[2], -x[1], x[0].order))
    return found[:top_k]


def count_retrievals(ranked: list[Ranked], now: datetime) -> None:
    """R1 += 1 and access time reset for the shown memory; R2 += 1 for the others retrieved."""
    if not ranked:
        return
    ranked[0][0].r1 += 1
    ranked[0][0].last_access = now
    for entry, _, _ in ranked[1:]:
        entry.r2 += 1


def recall_info(ranked: list[Ranked], probe: bool) -> dict[str, JSONValue]:
    """Return ``Recall.info``: whether it was a probe, the R1/R2 ids, cosines and scores."""
    return {
        "probe": probe,
        "r1": ranked[0][0].item_id if ranked else None,
        "r2": [e.item_id for e, _, _ in ranked[1:]],
        "cosine": [round(c, 4) for _, c, _ in ranked],
        "score": [round(s, 4) for _, _, s in ranked],
    }


def answer_fields(recall: Recall) -> dict[str, str]:
    """Give the QA answerer what the chatbot sees: the Key Summary and the Relevant Memory."""
    profile = [i.text for i in recall.items if i.kind == "profile"]
    parts = [f"Relevant memory: {recall.text}"] if recall.text else []
    if profile:
        parts.append("Key summary of past conversations:\n" + bullets(profile))
    return {"memory": "\n\n".join(parts)}


def response_messages(query: Query, recall: Recall, recent_turns: int) -> list[Message]:
    """Render LUFY Fig. 4 with the profile, the last ``recent_turns`` turns and the R1 memory."""
    profile = [i.text for i in recall.items if i.kind == "profile"]
    recent = render_history(query.history[-recent_turns:]) if query.history else NO_INFO
    text = RESPONSE_PROMPT.format(
        key_summary=bullets(profile) if profile else NO_INFO,
        recent_utterances=recent,
        related_memory=recall.text or NO_INFO,
    )
    return [{"role": "user", "content": text}]


def episode_texts(episode: Episode, pairs: Sequence[Pair]) -> list[str]:
    """What replaying ``episode`` embeds that its data already fixes, each once: the text of
    every utterance pair ``observe`` writes, every user turn (the retrieval text of a replayed
    reply, LUFY's arousal input) and every question (what a QA protocol retrieves with)."""
    texts = [pair_text(p) for p in pairs] + [user_turn.text for user_turn, _ in pairs]
    texts += [qa.question for qa in episode.qa]
    return [t for t in dict.fromkeys(texts) if t.strip()]
