"""Protocol ``memory_ops``: Bae et al.'s memory-operation evaluation (Keep Me Updated!, sec. 5.1).

Set level (their Table 3 "Set F1"): for every session k of an episode followed by session k+1,
M = the memory stored before k, S = the summary of k, gold M' = the memory stored before k+1
(human-selected from M and S, sec. 3.2.2); the method's classifier labels every (m_i, s_j) pair
and Algorithm 1 gives the predicted M'. Sentences match exactly after whitespace normalization
(``memory_update.set_prf``); the paper says only "sentence-level F1 between gold M' and the
predicted one", and annotators select sentences rather than write them (on the public sample 144
of 145 gold sentences are copies; the one fused sentence can never be matched). ``set_f1`` is
the mean per-transition F1 over transitions with at least one pair (M and S non-empty: the
paper annotates pairs); ``set_f1_all`` also counts transitions with M = {} (M' = S, trivial).

Pairwise level (Table 3 "Pairwise Acc."): 4-class accuracy on labelled pairs
(``datasets.memory_pairs``: the paper's Table 7, our own Korean and English pairs), only on
pairs the classifier was not fit on: the English offline rule's thresholds were set on Table 7,
so it is never scored there; an LLM is not scored on Table 7 pairs that the Fig. 25 prompt shows
as examples. Excluded counts are recorded.

Operation distribution (Table 2 shape), derived: the public data has no pair labels, so each
pair's gold operation is read off the gold M' by which of m_i, s_j survive: both -> APPEND,
only m_i -> PASS, only s_j -> REPLACE, neither -> DELETE (marked ``derived``; it attributes a
sentence's fate to every pair it is in, so it overstates non-APPEND operations).

Held-out thresholds: with ``fit: cv`` the character n-gram rule's thresholds are refit per fold
(``prepare``: episodes sorted by id, fold = position mod ``folds``; each fold is scored with
thresholds fit on the other folds' transitions), so the rule's set F1 is never measured on the
transitions it was fit on. ``fit: none`` uses the method's configured thresholds.

Deviations:
- The paper's 300 annotated test pairs and their set annotation are not public; this runs on the
  released memories of the public sample (10 episodes, 35 transitions, 25 with pairs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from recallbench.datasets import memory_pairs, needs
from recallbench.errors import ConfigError, did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory import HasUpdater, MemoryMethod
from recallbench.memory.memory_update import (
    ENGLISH_FIT_ON,
    TO_ALGORITHM1,
    MemoryUpdater,
    fit_charngram,
    set_prf,
    transitions,
)
from recallbench.protocols.base import EvalProtocol, refuse_unknown
from recallbench.protocols.memory_ops.scores import METRICS, MemoryOpsSummary, score_memory_ops
from recallbench.protocols.response import EpisodeResult
from recallbench.records import Episode, Prediction, Score
from recallbench.text import normalize_sentence

FITS = ("cv", "none")
_HANGUL_START, _HANGUL_END = "\uac00", "\ud7a3"


def derived_operation(m_kept: bool, s_kept: bool) -> str:
    """The gold operation of a pair read off the gold M' (module docstring)."""
    return {(True, True): "A", (True, False): "P", (False, True): "R", (False, False): "D"}[
        (m_kept, s_kept)
    ]


def pairs_of(episodes: Sequence[Episode]) -> list[tuple[str, str]]:
    """Every (memory, summary) sentence pair of the episodes' transitions, in order."""
    return [(m, s) for t in transitions(episodes) for m in t.memory for s in t.summary]


def _hangul(text: str) -> bool:
    return any(_HANGUL_START <= ch <= _HANGUL_END for ch in text)


class MemoryOpsProtocol(EvalProtocol):
    """Set F1 of Algorithm 1 on CareCall_mem transitions and pairwise accuracy on labelled pairs.

    Args:
        pair_sources: ``datasets.memory_pairs`` sources scored pairwise.
        fit: ``cv`` (refit the character rule per fold) or ``none``.
        folds: number of folds for ``fit: cv``.
    """

    name = "memory_ops"

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("memory_ops metric", names, METRICS)

    def __init__(
        self,
        pair_sources: Sequence[str] = ("table7", "own_ko", "own_en"),
        fit: str = "cv",
        folds: int = 2,
        metrics: Sequence[str] | None = None,
        seed: int | None = 0,
    ) -> None:
        if fit not in FITS:
            raise ConfigError(f"memory_ops: fit {fit!r} unknown (options: {', '.join(FITS)})")
        if folds < 2:
            raise ConfigError(f"memory_ops: folds must be >= 2, got {folds}")
        for source in pair_sources:
            if source not in memory_pairs.SOURCES:
                raise did_you_mean("memory-pair source", source, memory_pairs.SOURCES)
        self.pair_sources = tuple(pair_sources)
        self.fit = fit
        self.folds = int(folds)
        self.seed = seed
        self.fits: list[dict[str, Any]] = []
        self._thresholds: dict[str, dict[str, float]] = {}
        self._pending: list[tuple[str, str]] | None = None  # every episode's pairs (prepare)
        self._pending_lock = threading.Lock()

    # --- held-out thresholds -------------------------------------------------------------

    def prepare(self, episodes: Sequence[Episode]) -> None:
        """With ``fit: cv``, fit the character rule's thresholds per fold (module docstring);
        keep every episode's (memory, summary) pairs for the first episode's embedding call."""
        self.fits, self._thresholds = [], {}
        self._pending = pairs_of(episodes)
        if self.fit != "cv":
            return
        ids = sorted(ep.episode_id for ep in episodes)
        fold_of = {eid: i % self.folds for i, eid in enumerate(ids)}
        for fold in range(self.folds):
            train = [ep for ep in episodes if fold_of[ep.episode_id] != fold]
            data = transitions(train)
            if not data:
                raise ConfigError(
                    f"memory_ops: fold {fold} has no training transitions "
                    f"({len(episodes)} episodes for {self.folds} folds)"
                )
            fitted, f1 = fit_charngram(data)
            tested = [eid for eid in ids if fold_of[eid] == fold]
            self.fits.append(
                {"fold": fold, "thresholds": fitted, "train_f1": f1, "test_episodes": tested}
            )
            self._thresholds.update(dict.fromkeys(tested, fitted))

    def needs(self) -> frozenset[str]:
        """The gold memory before every session (the M -> M' transitions)."""
        return frozenset({needs.gold("memory")})

    def refuses(self, method: MemoryMethod) -> str | None:
        """A method without a memory updater (``HasUpdater``) has no operations to score."""
        if isinstance(method, HasUpdater):
            return None
        return f"{type(method).__name__} has no memory updater (HasUpdater)"

    def _updater(self, method: MemoryMethod, episode_id: str | None) -> MemoryUpdater | None:
        if not isinstance(method, HasUpdater):
            raise ConfigError(
                f"memory_ops needs a memory method with a memory updater (memory_update, "
                f"memory_retrieval, session_summaries), got {type(method).__name__}"
            )
        updater = method.updater
        fitted = self._thresholds.get(episode_id or "")
        if updater is not None and fitted is not None:
            updater = updater.with_charngram(fitted)
        return updater

    # --- set level ------------------------------------------------------------------------

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Predict M' for every transition of ``episode`` and score it against the gold M'."""
        result = EpisodeResult()
        updater = self._updater(method, episode.episode_id)
        if updater is not None:  # the first episode: every episode's and labelled pair's
            updater.prefetch(self._prefetched(episode, updater, llm))
        for t in transitions([episode]):
            if updater is None:  # APPEND only
                predicted = [*t.memory, *t.summary]
                labels = {
                    (i, j): "APPEND" for i in range(len(t.memory)) for j in range(len(t.summary))
                }
            else:
                predicted, labels = updater.update_texts(t.memory, t.summary)
            gold = {normalize_sentence(g) for g in t.gold}
            derived = {
                (i, j): derived_operation(
                    normalize_sentence(m) in gold, normalize_sentence(s) in gold
                )
                for i, m in enumerate(t.memory)
                for j, s in enumerate(t.summary)
            }
            p, r, f = set_prf(predicted, t.gold)
            result.predictions.append(
                Prediction(
                    pred_id=f"{episode.episode_id}/S{t.session_index}/memory_ops",
                    episode_id=episode.episode_id,
                    session_index=t.session_index,
                    kind="memory_set",
                    prompt_hash="",
                    output="\n".join(predicted),
                    reference="\n".join(t.gold),
                    meta={
                        "memory": list(t.memory),
                        "summary": list(t.summary),
                        "predicted": predicted,
                        "gold": list(t.gold),
                        "has_pairs": t.has_pairs,
                        "precision": p,
                        "recall": r,
                        "f1": f,
                        "labels": [[i, j, v] for (i, j), v in sorted(labels.items())],
                        "ops": [TO_ALGORITHM1[v] for _, v in sorted(labels.items())],
                        "derived_ops": [v for _, v in sorted(derived.items())],
                        "charngram": None if updater is None else updater.charngram,
                        "rule": "append" if updater is None else updater.offline_rule,
                    },
                )
            )
        return result

    def _prefetched(
        self, episode: Episode, updater: MemoryUpdater, llm: LLMClient
    ) -> list[tuple[str, str]]:
        """The pairs to embed in one call before ``episode``'s transitions: its own, and for
        the first episode after ``prepare`` every episode's and every held-out labelled pair's
        too (issue 55 item 7: one call for the run, not one per episode and source; the methods
        of a run share one embedder and its memory)."""
        own = pairs_of([episode])
        with self._pending_lock:
            pending, self._pending = self._pending, None
        if pending is None:
            return own
        labelled = [
            (p.memory, p.summary)
            for _, kept in self._labelled(updater, llm)
            for p, why in kept
            if why is None
        ]
        return [*pending, *labelled, *own]

    # --- pairwise level -------------------------------------------------------------------

    def held_out(
        self, pair: memory_pairs.Pair, updater: MemoryUpdater | None, llm: LLMClient
    ) -> str | None:
        """Return why ``pair`` cannot test this classifier, or None when it is held out."""
        if updater is None:
            return None
        if not llm.backend.offline:
            prompt = updater.task.template
            if pair.memory in prompt and pair.summary in prompt:
                return "a few-shot example of the Fig. 25 prompt"
            return None
        rule = updater.offline_rule
        if rule == "auto":
            rule = "charngram" if _hangul(pair.memory + pair.summary) else "english"
        if rule == "english" and pair.source in ENGLISH_FIT_ON:
            return "the English rule's thresholds were set on these pairs"
        return None

    def _labelled(
        self, updater: MemoryUpdater | None, llm: LLMClient
    ) -> list[tuple[str, list[tuple[memory_pairs.Pair, str | None]]]]:
        """Each source's labelled pairs with why each cannot test ``updater`` (None: held out)."""
        return [
            (source, [(p, self.held_out(p, updater, llm)) for p in memory_pairs.load(source)])
            for source in self.pair_sources
        ]

    def run_extra(
        self, make_method: Callable[[], MemoryMethod], llm: LLMClient
    ) -> list[Prediction]:
        """Classify the labelled pairs the classifier was not fit on (one prediction each)."""
        updater = self._updater(make_method(), None)
        out: list[Prediction] = []
        for source, kept in self._labelled(updater, llm):
            test = [p for p, why in kept if why is None]
            if updater is None:
                labels = ["APPEND"] * len(test)
            else:
                labels = [r.value for r in updater.classify([(p.memory, p.summary) for p in test])]
            got = dict(zip((p.pair_id for p in test), labels, strict=True))
            for p, why in kept:
                label = got.get(p.pair_id)
                out.append(
                    Prediction(
                        pred_id=f"{p.pair_id}/pair",
                        episode_id=f"pairs:{source}",
                        session_index=0,
                        kind="memory_pair",
                        prompt_hash="",
                        output="" if label is None else ("REPLACE" if label == "CHANGE" else label),
                        reference=p.label,
                        meta={"source": source, "excluded": why, "raw_label": label},
                    )
                )
        return out

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], MemoryOpsSummary]:
        """Set F1, pairwise accuracy and operation shares (``scores.py``)."""
        self.check_metrics(metric_names)
        scores, summary = score_memory_ops(predictions)
        summary["fits"] = self.fits
        summary["fit"] = self.fit
        return scores, summary
