"""The protocol contract: ``EvalProtocol``, the base class of every evaluation protocol.

A protocol turns an episode plus a memory method into predictions (``run_episode``) and scores
them (``score``). The runner drives it in this order::

    protocol.prepare(episodes)                      # once, before any episode (default: nothing)
    for episode in episodes:                        # a fresh memory method per episode
        result = protocol.run_episode(episode, method, llm)
    protocol.run_extra(make_method, llm)            # items outside any episode (default: none)
    protocol.score(predictions, metric_names)       # default: reference-based metrics

``check_metrics(metric_names)`` (a classmethod) is the protocol's one rule of which metric names
it reports: the checks before a command's first job call it on every job's metrics
(``cli.checks``) and ``score`` calls it again, so a name refused is refused before any replay.

Every hook but ``run_episode`` has a default here, so the runner calls each one directly: a
protocol overrides what it needs (``memory_ops`` classifies labelled pairs in ``run_extra``; most
protocols have their own ``score``). Two helpers the judged protocols share: ``reply_text`` (what
a judge reads of a reply) and ``add_judge_usage`` (a judge's own LLM usage in the summary); the QA
protocols (``qa``, ``locomo``) record the memory after each session with ``memory_state``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from recallbench.metrics.summary import Summary
from recallbench.records import JSON, Episode, MemoryItem, Prediction, Query, Score
from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from recallbench.llm.protocol import LLMClient
    from recallbench.llm.task import TaskResult
    from recallbench.memory import MemoryMethod


@dataclass
class EpisodeResult:
    """Predictions of one episode and the memory snapshot after each session."""

    predictions: list[Prediction] = field(default_factory=list)
    snapshots: list[tuple[int, list[MemoryItem]]] = field(default_factory=list)


class EvalProtocol(ABC):
    """Base class of the protocols in ``recallbench.protocols`` (see the module docstring).

    Subclasses set ``name`` (the ``name:`` of the ``conf/protocol`` configs whose ``_target_``
    they are) and implement ``run_episode``; the constructor takes the config's keys as keyword
    arguments. ``MODELS`` maps a constructor argument to the config group of the model it is
    (``judge``, ``caim_judge``, ``generator``, ``embedder``): ``cli`` builds it from the nested
    config and passes the object, so no protocol constructs an LLM, judge or embedder itself.
    """

    name: ClassVar[str]
    MODELS: ClassVar[dict[str, str]] = {}

    def needs(self) -> frozenset[str]:
        """The facts about the data this protocol needs (``recallbench.datasets.needs``; none)."""
        return frozenset()

    def provenance(self) -> dict[str, JSON]:
        """What run.json records of the protocol's own inputs (``imported``; default: none)."""
        return {}

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a metric name this protocol cannot report: an ``UnknownChoiceError`` naming
        it with the options (default: the reference-based metrics, ``metrics.get_metric``).

        A classmethod, so the checks call it before any job builds its protocol."""
        from recallbench.metrics import get_metric

        for name in names:
            get_metric(name)

    def refuses(self, method: MemoryMethod) -> str | None:
        """Why this protocol cannot evaluate ``method`` (an ability it lacks); None: it can."""
        return None

    def prepare(self, episodes: Sequence[Episode]) -> None:  # noqa: B027 (optional hook)
        """Fit anything the protocol needs from the episodes before replay (default: nothing)."""

    def fixed_queries(self, episode: Episode) -> Sequence[Query]:
        """The queries replaying ``episode`` will recall that its data alone fixes, in replay
        order (default: none). The runner embeds what methods embed of them
        (``MemoryMethod.query_texts``) before the replay, with the texts the episodes fix."""
        return ()

    @abstractmethod
    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` through ``method`` (reset first) and return its predictions."""

    def run_extra(
        self, make_method: Callable[[], MemoryMethod], llm: LLMClient
    ) -> list[Prediction]:
        """Return predictions that belong to no episode (default: none).

        ``make_method`` builds a fresh memory method, so a protocol without such items costs
        no method.
        """
        return []

    def finish(self, predictions: Sequence[Prediction]) -> list[Prediction]:
        """Complete the replayed predictions with work done best in one batch across episodes
        (lamp1: the features' encode), before they are written and scored (default: as they
        are). A prediction that has it already (read back on resume) is kept as it is."""
        return list(predictions)

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], Summary]:
        """Return per-item scores and the run summary (default: the reference-based metrics of
        ``metric_names`` over ``Prediction.reference``, per session: ``metrics.scoring``)."""
        from recallbench.metrics.scoring import score_predictions  # heavy: only when scoring

        self.check_metrics(metric_names)
        return score_predictions(predictions, metric_names)


def refuse_unknown(kind: str, names: Sequence[str], options: Collection[str]) -> None:
    """``check_metrics`` of a protocol with its own metric names: the first name not among
    ``options`` is an ``UnknownChoiceError`` ("unknown qa metric 'bleu1'. Did you mean ...")."""
    from recallbench.errors import did_you_mean

    for name in names:
        if name not in options:
            raise did_you_mean(kind, name, options)


def reply_text(result: TaskResult[object]) -> str:
    """The reply a judge reads: the parsed value when it is text, else the raw reply."""
    return result.value if isinstance(result.value, str) else result.raw


class JudgedSummary(Summary, total=False):
    """The summary of a protocol whose answers a judge scores (``qa``, ``qa_gvd``, ``locomo``,
    ``locomo_import``): ``Summary`` and the keys they write."""

    judge: dict[str, JSONValue]  # the judge's description and its failure counts
    judge_usage: dict[str, JSONValue]  # a judge with its own LLM (``add_judge_usage``)
    answer_failures: int  # answers whose call failed
    aggregation: str  # how per-session and pooled values are formed


def add_judge_usage(summary: JudgedSummary, judge: object, run_llm: object) -> None:
    """Put the usage of a judge with its own LLM (``judge.generator`` set) in
    ``summary["judge_usage"]``; a judge on the run's LLM (``run_llm``) is in ``usage.json``."""
    judge_llm = getattr(judge, "llm", None)
    if judge_llm is not None and judge_llm is not run_llm:
        summary["judge_usage"] = judge_llm.usage.to_dict()


def memory_state(
    episode: Episode, index: int, items: Sequence[MemoryItem], retention: dict[str, JSON] | None
) -> Prediction:
    """The ``memory`` prediction of session ``index``: how many items the memory holds, and (for a
    method that forgets: ``retention``) how many it created and still retains."""
    meta: dict[str, Any] = {"n_items": len(items)}
    if retention is not None:
        meta.update(created=int(retention["created"]), retained=int(retention["retained"]))
    return Prediction(
        pred_id=f"{episode.episode_id}/s{index}/memory",
        episode_id=episode.episode_id,
        session_index=index,
        kind="memory",
        prompt_hash="",
        output="",
        meta=meta,
    )
