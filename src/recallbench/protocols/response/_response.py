"""Protocol ``response``: next-utterance generation on target sessions.

For each episode the memory method observes every session before the first target session; then,
for every turn of the responding speaker in each target session, the method recalls for the
dialogue so far and the generator produces the next utterance from the method's own prompt. The
reference is the dataset's real next turn. After each session the method observes it, so later
target sessions see earlier ones only through memory (THEANINE sec. 3, CareCall sec. 5.2).

Settings (``conf/protocol/response*.yaml``):
- ``target_sessions``: 1-based session indices (THEANINE: 3-5; CareCall: 2-5). Sessions the
  episode lacks are skipped (an MSC copy without the session_5 dialogue files has 4 sessions;
  ParlAI's msc_v0.1 has session 5 for valid/test, and ``make data`` fetches it).
- ``responder``: ``all`` (every turn after the first, THEANINE: ~3.6K turns for 100 episodes x
  3 sessions) or a speaker name (CareCall: ``system``, the bot).
- ``store_context``: keep the method's rendered prompt (its messages' contents joined by blank
  lines) in ``meta["context"]``, so conditioned metrics score the reference given exactly what
  the generator saw: CareCall's PPL is p(c_{t+1} | D_t, M) (sec. 4.1, Eq. 1).
- ``batch_turns`` (default true): on an API backend, the responses of one session are generated
  side by side (up to ``generator.concurrency`` calls in flight): every recall and prompt of the
  session is built first, in turn order (a recall sees the dataset's turns, never a generated
  reply, so nothing else changes), then the calls run concurrently and are recorded in turn
  order. Results equal a turn-by-turn run. In-process backends (extractive, hf, gguf) always go
  turn by turn: their offline reply may read the method's state at the time of the turn.
- ``memory_turn_threshold``: mark a turn as a "memory turn" (``meta["subsets"]``) when at least
  this share of the character bigrams of some sentence of the session's stored memory
  (``gold["memory"]``, the memory before the session) occurs in the reference reply. CareCall's
  Table 4 "Memory turns" are annotated turns that use memory explicitly (22.4% of test turns);
  the public data has no such labels, so this lexical proxy stands in (0.3 on the public sample
  marks 10.4% of the bot turns of sessions 2-5; below 0.3 the matches are mostly generic words
  such as 잘 or 예정). The same turns are marked in every memory setting.
- ``oracle_context`` (default false): replace the method's recall by the turn's gold evidence
  (``oracle``: a protocol that knows what a reply needs, ``protocols.timerag``'s gold facts),
  shown through the method's own prompt; the method does not recall at all. The plain response
  protocol has no gold evidence and refuses it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from recallbench.datasets import needs
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import TaskResult
from recallbench.llm.types import Message
from recallbench.memory import MemoryMethod, prefetch_queries, reply_queries
from recallbench.parallel import ordered_map
from recallbench.protocols.base import EpisodeResult, EvalProtocol
from recallbench.records import Episode, MemoryItem, Prediction, Query, Recall, Session, Turn
from recallbench.text import char_ngrams

# (query, recall, prompt messages, seconds recall took) and (recall, messages, recall seconds,
# the generator's result, seconds generation took): one response on its way to a Prediction.
Recalled = tuple[Query, Recall, list[Message], float]
Generated = tuple[Recall, list[Message], float, TaskResult[Any], float]

MEMORY_TURNS = "memory_turns"


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """Return a short stable hash of chat messages (for provenance in predictions)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def render_context(messages: list[dict[str, str]]) -> str:
    """The prompt as one text: the messages' contents joined by blank lines."""
    return "\n\n".join(m["content"] for m in messages if m.get("content"))


def uses_memory(reply: str, memory: list[str], threshold: float) -> bool:
    """True when some memory sentence has >= ``threshold`` of its character bigrams in ``reply``."""
    got = char_ngrams(reply)
    for sentence in memory:
        grams = char_ngrams(sentence)
        if grams and len(grams & got) / len(grams) >= threshold:
            return True
    return False


def _usage(res: TaskResult[object]) -> dict[str, Any]:
    return {
        "prompt_tokens": res.prompt_tokens,
        "completion_tokens": res.completion_tokens,
        "cost_usd": res.cost_usd,
        "latency_s": round(res.latency_s, 4),
        "cached": res.cached,
    }


class ResponseProtocol(EvalProtocol):
    """Replay an episode and generate the responder's turns of the target sessions."""

    name = "response"

    def __init__(
        self,
        target_sessions: list[int] | tuple[int, ...] = (3, 4, 5),
        responder: str = "all",
        max_tokens: int = 128,
        temperature: float = 0.0,
        seed: int | None = 0,
        store_context: bool = False,
        memory_turn_threshold: float | None = None,
        batch_turns: bool = True,
        oracle_context: bool = False,
    ) -> None:
        if memory_turn_threshold is not None and not 0 < memory_turn_threshold <= 1:
            raise ValueError(
                f"response: memory_turn_threshold must be in (0, 1], got {memory_turn_threshold}"
            )
        self.store_context = bool(store_context)
        self.batch_turns = bool(batch_turns)
        self.oracle_context = bool(oracle_context)
        self.memory_turn_threshold = memory_turn_threshold
        self.target_sessions = tuple(int(s) for s in target_sessions)
        self.responder = responder
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed

    def needs(self) -> frozenset[str]:
        """The first target session (an episode without one gives no response to score)."""
        return frozenset({needs.session(min(self.target_sessions))})

    def targets(self, episode: Episode) -> list[int]:
        """Return the target session indices this episode actually has."""
        have = {s.index for s in episode.sessions}
        return [i for i in self.target_sessions if i in have]

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` through ``method`` and return its predictions and snapshots."""
        result = EpisodeResult()
        episode = self.view(episode)
        targets = set(self.targets(episode))
        method.reset(episode)
        method.prefetch_episode(episode)
        prefetch_queries(method, self._queries(episode))  # the episode's queries in one call
        for session in episode.sessions:
            if session.index in targets:
                queries = reply_queries(episode, session, self._responds)
                method.prefetch([query for _, query in queries])  # e.g. one batch of query vectors
                workers = self._turn_workers(llm, len(queries))
                if workers > 1:  # every recall in order first, then the calls side by side
                    jobs = [self._recall(method, episode, turn, query) for turn, query in queries]
                    done = ordered_map(lambda job: self._generate(method, llm, *job), jobs, workers)
                    generated = [res for _, res in done]
                else:  # recall and answer turn by turn (offline replies may read the state)
                    generated = [
                        self._generate(method, llm, *self._recall(method, episode, turn, query))
                        for turn, query in queries
                    ]
                preds = [
                    self._mark(self._record(turn, query, episode, *out), session)
                    for (turn, query), out in zip(queries, generated, strict=True)
                ]
                self.session_done(episode, session, preds, llm)
                result.predictions.extend(preds)
            started = time.perf_counter()
            method.observe(session)
            result.predictions.append(
                _timing(episode.episode_id, session, time.perf_counter() - started)
            )
            snapshot = list(method.snapshot())
            result.snapshots.append((session.index, snapshot))
            result.predictions.extend(self.observed(episode, session, snapshot))
        return result

    def fixed_queries(self, episode: Episode) -> list[Query]:
        """Every reply's query of the target sessions: its history is the dataset's turns, never
        a generated reply, so the data fixes it (none with ``oracle_context``: no recall)."""
        return self._queries(self.view(episode))

    def _queries(self, viewed: Episode) -> list[Query]:
        """``fixed_queries`` of an episode as this protocol replays it (``view``)."""
        if self.oracle_context:
            return []
        targets = set(self.targets(viewed))
        return [
            query
            for session in viewed.sessions
            if session.index in targets
            for _, query in reply_queries(viewed, session, self._responds)
        ]

    # Hooks for protocols built on this one (``protocols.timerag``); the defaults do nothing.

    def view(self, episode: Episode) -> Episode:
        """The episode as this protocol replays it (default: unchanged)."""
        return episode

    def annotate(self, pred: Prediction, episode: Episode, query: Query, recall: Recall) -> None:
        """Add protocol-specific facts about one response to ``pred.meta`` (default: none)."""

    def session_done(
        self, episode: Episode, session: Session, preds: list[Prediction], llm: LLMClient
    ) -> None:
        """Called with a target session's predictions, before the method observes it."""

    def observed(
        self, episode: Episode, session: Session, snapshot: list[MemoryItem]
    ) -> list[Prediction]:
        """Extra records after the method observed ``session`` (default: none)."""
        return []

    def oracle(self, episode: Episode, turn: Turn, query: Query) -> Recall:
        """The gold evidence of the reply ``turn`` as a recall (``oracle_context``)."""
        raise ConfigError(
            f"protocol {self.name} knows no gold evidence for a reply: oracle_context=true "
            "needs a protocol that does (timerag: the gold facts the reply uses)"
        )

    def _mark(self, pred: Prediction, session: Session) -> Prediction:
        """Add the memory-turn subset (``memory_turn_threshold``) to a prediction's meta."""
        if self.memory_turn_threshold is None:
            return pred
        memory = [str(m) for m in session.gold.get("memory") or []]
        if uses_memory(pred.reference or "", memory, self.memory_turn_threshold):
            pred.meta["subsets"] = [MEMORY_TURNS]
        return pred

    def _responds(self, speaker: str) -> bool:
        return self.responder == "all" or speaker == self.responder

    def _turn_workers(self, llm: LLMClient, n: int) -> int:
        """Responses of one session generated at once: the API backend's concurrency, else 1."""
        if not self.batch_turns or not llm.backend.is_async:
            return 1
        return max(1, min(llm.backend.concurrency, n))

    def _recall(self, method: MemoryMethod, episode: Episode, turn: Turn, query: Query) -> Recalled:
        """The method's recall (the oracle's with ``oracle_context``) and prompt for ``query``
        (the reply ``turn``), with the time recall took."""
        started = time.perf_counter()
        recall = self.oracle(episode, turn, query) if self.oracle_context else method.recall(query)
        messages = method.prompt(query, recall)
        return query, recall, messages, time.perf_counter() - started

    def _generate(
        self,
        method: MemoryMethod,
        llm: LLMClient,
        query: Query,
        recall: Recall,
        messages: list[Message],
        recall_s: float,
    ) -> Generated:
        """The generator's reply to ``messages`` (and the recall facts it is recorded with)."""
        started = time.perf_counter()
        offline: Callable[[], str] = lambda: method.offline_response(query, recall)  # noqa: E731
        res = llm.chat(
            messages,
            name="response",
            stage="answer",
            offline=offline,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )
        return recall, messages, recall_s, res, time.perf_counter() - started

    def _record(
        self,
        turn: Turn,
        query: Query,
        episode: Episode,
        recall: Recall,
        messages: list[Message],
        recall_s: float,
        res: TaskResult[Any],
        generate_s: float,
    ) -> Prediction:
        pred = Prediction(
            pred_id=f"{turn.turn_id}/response",
            episode_id=query.episode_id,
            session_index=query.session_index,
            kind="response",
            prompt_hash=prompt_hash(messages),
            output=res.value if isinstance(res.value, str) else res.raw,
            reference=turn.text,
            recalled=recall.source_ids(),
            usage=_usage(res),
            failure=res.failure,
            meta={
                "speaker": turn.speaker,
                "n_recalled": len(recall.items),
                "recall_text": recall.text,
                "recall_s": round(recall_s, 6),
                "generate_s": round(generate_s, 6),
                **({"context": render_context(messages)} if self.store_context else {}),
            },
        )
        self.annotate(pred, episode, query, recall)
        return pred


def _timing(episode_id: str, session: Session, seconds: float) -> Prediction:
    """A record of the memory-construction time of one session (no reference: never scored)."""
    return Prediction(
        pred_id=f"{session.session_id}/observe",
        episode_id=episode_id,
        session_index=session.index,
        kind="timing",
        prompt_hash="",
        output="",
        meta={"observe_s": round(seconds, 6)},
    )
