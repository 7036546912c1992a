"""A new protocol: replay every session but the last, then answer the last session's second turn.

In the project: ``src/recallbench/protocols/next_reply/`` and ``conf/protocol/next_reply.yaml``
(``_target_: recallbench.protocols.next_reply.NextReply``, ``name: next_reply``, ``max_tokens``).
"""

from __future__ import annotations

from recallbench.llm import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import EpisodeResult, EvalProtocol
from recallbench.protocols.response import prompt_hash
from recallbench.records import Episode, Prediction, Query


class NextReply(EvalProtocol):
    name = "next_reply"

    def __init__(self, max_tokens: int = 64, seed: int | None = 0) -> None:
        self.max_tokens, self.seed = max_tokens, seed

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        result = EpisodeResult()
        method.reset(episode)
        *past, last = episode.sessions
        for session in past:
            method.observe(session)
            result.snapshots.append((session.index, method.snapshot()))
        opener, reply = last.turns[0], last.turns[1]
        query = Query(episode.episode_id, last.index, (opener,), reply.speaker, last.start)
        recall = method.recall(query)
        messages = method.prompt(query, recall)
        res = llm.chat(
            messages,
            name="response",
            stage="next_reply",
            offline=lambda: method.offline_response(query, recall),
            max_tokens=self.max_tokens,
            seed=self.seed,
        )
        result.predictions.append(
            Prediction(
                f"{episode.episode_id}/next",
                episode.episode_id,
                last.index,
                "response",
                prompt_hash(messages),
                res.value or "",
                reference=reply.text,
                recalled=tuple(item.item_id for item in recall.items),
            )
        )
        return result
