"""What a probe question is asked with: the recall (the method's, or in an oracle run the
question's evidence turns) and the answer prompt's memory fields. Shared by ``qa`` (and so
``qa_gvd``) and ``locomo_qa``, which add the question and their own fields.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import NamedTuple

from recallbench.memory import HasAnswerPromptFields, MemoryMethod
from recallbench.protocols.evidence import Evidence, EvidenceLocator, oracle_recall
from recallbench.records import Episode, QAItem, Query, Recall

NO_MEMORY_TEXT = "(nothing recalled)"


class Probe(NamedTuple):
    """The questions ``asked`` after session ``session_index`` of ``episode``, at time ``now``."""

    episode: Episode
    session_index: int
    now: datetime | None
    asked: list[QAItem]


class Asked(NamedTuple):
    """One question's recall, its located evidence (oracle runs only), the prompt's fields and
    the seconds its recall took (its own ``recall`` call plus an equal share of the batch's
    ``prefetch``; an oracle recall's own time)."""

    query: Query
    recall: Recall
    oracle: Evidence | None
    fields: dict[str, object]
    recall_s: float


def ask_fields(
    probe: Probe,
    asker: str,
    method: MemoryMethod,
    locator: EvidenceLocator | None = None,
    *,
    method_fields: bool = True,
) -> list[Asked]:
    """Recall for every question of ``probe`` as ``asker`` puts it.

    Without ``locator`` the method recalls (prefetching all questions first); with it, the
    question's evidence turns are the recall (``oracle_recall``). ``fields``: ``memory`` (the
    method's own ``answer_prompt_fields`` when it has them and ``method_fields``, else the
    recall's text; ``NO_MEMORY_TEXT`` when empty), ``items`` and ``names``.
    """
    episode, index, now, asked = probe
    queries = [Query(episode.episode_id, index, (), asker, now, qa.question) for qa in asked]
    started = time.perf_counter()
    if locator is None:
        method.prefetch(queries)
    prefetch_share = (time.perf_counter() - started) / max(len(queries), 1)
    out = []
    for qa, query in zip(asked, queries, strict=True):
        started = time.perf_counter()
        oracle = None if locator is None else locator.locate(episode, qa, asker)
        recall = method.recall(query) if oracle is None else oracle_recall(episode, oracle, now)
        recall_s = time.perf_counter() - started + prefetch_share
        extra = (
            method.answer_prompt_fields(query, recall)
            if method_fields and isinstance(method, HasAnswerPromptFields)
            else {"memory": recall.text}
        )
        fields: dict[str, object] = {
            **extra,
            "memory": extra.get("memory") or NO_MEMORY_TEXT,
            "items": [item.text for item in recall.items],
            "names": list(episode.speakers),
        }
        out.append(Asked(query, recall, oracle, fields, recall_s))
    return out
