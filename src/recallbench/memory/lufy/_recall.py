"""The LUFY-family store's read side (``_store.LufyFamilyMemory``): recall and the response prompt.

``StoreRecall`` (a mixin of ``LufyFamilyMemory``) retrieves the memories above the cosine
threshold ranked by cosine plus the method's ``score_bonus``, counts R1/R2 (LUFY sec. 2), and
renders what the answerer sees: LUFY Fig. 4 (``RESPONSE_PROMPT``, verbatim) and the QA prompt
fields. It reads the attributes the store's constructor and ``reset`` set (``embedder``,
``threshold``, ``top_k``, ``recent_turns``, ``live_writes``, ``profile_in_recall``, ``_entries``,
``_vectors``, ``_clock``), the store's ``score_bonus``, ``_item`` and ``check_episode``, and
``EntryWriter``'s ``_pairs``, ``_write_pairs`` and ``_profile_items``. ``_store``'s module
docstring describes retrieval and the live-writes deviation.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from recallbench.clock import EPOCH
from recallbench.memory._base import Message, render_history
from recallbench.memory.lufy._entries import Entry
from recallbench.memory.lufy._tasks import (
    NO_INFO,
    bullets,
)
from recallbench.records import Query, Recall

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


class StoreRecall:
    """Recall from the store and render the response prompt (see the module docstring)."""

    def recall(self, query: Query) -> Recall:
        """Retrieve the top-2 memories; update R1/R2 unless ``query`` is a probe.

        ``Recall.items``: the R1 memory (if any) then the profile facts; ``Recall.text``: the R1
        memory (the prompt's "Relevant Memory"); ``info``: R1/R2 ids and their scores.
        """
        self.check_episode(query)
        probe = query.question is not None
        now = query.now or self._clock or EPOCH
        if not probe and self.live_writes:
            done = query.history[: max(len(query.history) - self.recent_turns, 0)]
            self._write_pairs(self._pairs(done), query.session_index, now)
        text = query.question if probe else (query.history[-1].text if query.history else "")
        ranked = self._retrieve(text or "", now)
        if not probe and ranked:
            ranked[0][0].r1 += 1
            ranked[0][0].last_access = now
            for entry, _, _ in ranked[1:]:
                entry.r2 += 1
        items = [self._item(ranked[0][0], now)] if ranked else []
        if self.profile_in_recall:
            items += self._profile_items()
        info = {
            "probe": probe,
            "r1": ranked[0][0].item_id if ranked else None,
            "r2": [e.item_id for e, _, _ in ranked[1:]],
            "cosine": [round(c, 4) for _, c, _ in ranked],
            "score": [round(s, 4) for _, _, s in ranked],
        }
        return Recall(tuple(items), ranked[0][0].text if ranked else "", info)

    def answer_prompt_fields(self, query: Query, recall: Recall) -> dict[str, str]:
        """Give the QA answerer what the chatbot sees: the Key Summary and the Relevant Memory."""
        profile = [i.text for i in recall.items if i.kind == "profile"]
        parts = [f"Relevant memory: {recall.text}"] if recall.text else []
        if profile:
            parts.append("Key summary of past conversations:\n" + bullets(profile))
        return {"memory": "\n\n".join(parts)}

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """Render LUFY Fig. 4 with the profile, the last 5 turns and the R1 memory."""
        profile = [i.text for i in recall.items if i.kind == "profile"]
        recent = render_history(query.history[-self.recent_turns :]) if query.history else NO_INFO
        text = RESPONSE_PROMPT.format(
            key_summary=bullets(profile) if profile else NO_INFO,
            recent_utterances=recent,
            related_memory=recall.text or NO_INFO,
        )
        return [{"role": "user", "content": text}]

    def _retrieve(self, text: str, now: datetime) -> list[tuple[Entry, float, float]]:
        if not text.strip() or not self._entries:
            return []
        matrix = np.stack([self._vectors[e.item_id] for e in self._entries])
        cosines = matrix @ self.embedder.encode([text])[0]
        found = [
            (e, float(c), float(c) + self.score_bonus(e, now))
            for e, c in zip(self._entries, cosines, strict=True)
            if c >= self.threshold
        ]
        found.sort(key=lambda x: (-x[2], -x[1], x[0].order))
        return found[: self.top_k]
