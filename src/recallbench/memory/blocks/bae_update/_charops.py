"""An offline pairwise memory-operation classifier that is honest on Korean (and English).

Bae et al. (Findings of EMNLP 2022, sec. 4.3) classify every (memory m, summary s) pair into
PASS / REPLACE / APPEND / DELETE with a fine-tuned Korean T5. Offline we have neither that model
nor a Korean NLI model; English MiniLM cosines between unrelated Korean sentences are 0.64-0.88
and English stemmers do not apply. This rule uses only character bigrams inside words
(``recallbench.text.char_ngrams``), which match Korean stems across particles and endings:

1. the same sentence, or containment |m & s| / |s| >= ``pass_contain`` (m already holds s)
   -> PASS;
2. overlap |m & s| / min(|m|, |s|) >= ``related`` (same topic):
   the summary reports a resolution (``RESOLVED`` cues: 나음, 회복, 괜찮아짐, recovered, gone
   ...) that the memory does not, with at least ``delete_shared`` shared bigrams -> DELETE;
   otherwise the newer sentence wins -> REPLACE;
3. otherwise -> APPEND.

Thresholds are fit, never set by hand: ``fit_charngram(transitions)`` grid-searches ``GRID`` for
the best mean set F1 of Algorithm 1's M' against the gold M' over memory transitions
(``transitions(episodes)``: memory before session k, summary of k, memory before k+1). The
shipped defaults ``CHARNGRAM_DEFAULTS`` were fit on all 35 transitions of the public
CareCall_mem sample (``CHARNGRAM_FIT`` gives the command); a test score of this rule on that
data must therefore come from cross-validation (the ``memory_ops`` protocol fits per fold).

Deviations:
- A lexical rule in place of Bae et al.'s fine-tuned T5 (NLI transfer); it has no world
  knowledge ("Not sick" ~ "no particular health issues" share no bigram).
- Fit on set F1 of the released memories (the sample has no pair labels), not on pair labels.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from recallbench.memory.blocks.bae_update._algorithm1 import algorithm1
from recallbench.records import Episode
from recallbench.text import char_ngrams, normalize_sentence

# Fit on all 35 transitions of the public CareCall_mem sample (10 Korean episodes):
#   python scripts/fit_charngram.py <data_dir>
# -> mean set F1 0.893 (a fit, not a test score; APPEND-only scores 0.884 on the same 35).
# delete_shared = 1000 means "never DELETE": on the sample no DELETE setting improved set F1.
CHARNGRAM_DEFAULTS: dict[str, float] = {"pass_contain": 0.7, "related": 0.6, "delete_shared": 1000}
CHARNGRAM_FIT = (
    "fit_charngram over all 35 transitions of carecall_mem/data/carecall-memory-sample.json "
    "(python scripts/fit_charngram.py <data_dir>): mean set F1 0.893"
)
GRID: dict[str, tuple[float, ...]] = {
    "pass_contain": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "related": (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8, 1.01),
    "delete_shared": (1, 2, 3, 4, 1000),
}
RESOLVED = re.compile(
    r"나음|나았|낫다|회복|완치|괜찮아|좋아짐|좋아졌|사라짐|사라졌|없어짐|없어졌|끝남|끝났|그만|퇴원|"
    r"recover\w*|\bbetter\b|\bgone\b|heal\w*|\bcured?\b|\bfinish\w*|\bno longer\b|\banymore\b|"
    r"\bstopped\b|\bresolved\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PairFeatures:
    """What the rule reads from one (memory, summary) pair."""

    same: bool
    contain: float  # |m & s| / |s|
    overlap: float  # |m & s| / min(|m|, |s|)
    shared: int
    resolves: bool  # the summary reports a resolution the memory does not


def features(memory: str, summary: str, n: int = 2) -> PairFeatures:
    """Return the character n-gram features of a (memory, summary) pair."""
    m, s = char_ngrams(memory, n), char_ngrams(summary, n)
    shared = len(m & s)
    return PairFeatures(
        same=normalize_sentence(memory).lower() == normalize_sentence(summary).lower(),
        contain=shared / len(s) if s else 0.0,
        overlap=shared / min(len(m), len(s)) if m and s else 0.0,
        shared=shared,
        resolves=bool(RESOLVED.search(summary)) and not RESOLVED.search(memory),
    )


def decide(f: PairFeatures, thresholds: Mapping[str, float]) -> str:
    """Return "P", "R", "A" or "D" for pair features under ``thresholds``."""
    if f.same or f.contain >= thresholds["pass_contain"]:
        return "P"
    if f.overlap >= thresholds["related"]:
        if f.resolves and f.shared >= thresholds["delete_shared"]:
            return "D"
        return "R"
    return "A"


_NAMES = {"P": "PASS", "R": "REPLACE", "A": "APPEND", "D": "DELETE"}


def charngram_operation(*, memory: str, summary: str, thresholds: Mapping[str, float]) -> str:
    """The offline reply (``Relation: <LABEL>`` + why) of the Fig. 25 task for one pair."""
    f = features(memory, summary)
    label = _NAMES[decide(f, thresholds)]
    why = f"char-bigram containment {f.contain:.2f}, overlap {f.overlap:.2f}, shared {f.shared}"
    return f"Relation: {label}\nExplanation: {why}"


# --- set-level evaluation and fitting --------------------------------------------------------


@dataclass(frozen=True)
class Transition:
    """Memory before session k, the summary of session k and the memory before session k+1."""

    episode_id: str
    session_index: int
    memory: tuple[str, ...]
    summary: tuple[str, ...]
    gold: tuple[str, ...]

    @property
    def has_pairs(self) -> bool:
        return bool(self.memory) and bool(self.summary)


def transitions(episodes: Iterable[Episode]) -> list[Transition]:
    """Return the (M, S, gold M') triples of consecutive sessions k, k+1 of every episode.

    Sessions carry ``gold["memory"]`` (before the session) and ``gold["summary"]``; a pair of
    sessions counts only when their indices are consecutive (a gap has no gold M').
    """
    out = []
    for ep in episodes:
        sessions = sorted(ep.sessions, key=lambda s: s.index)
        for a, b in itertools.pairwise(sessions):
            if b.index != a.index + 1:
                continue
            out.append(
                Transition(
                    ep.episode_id,
                    a.index,
                    tuple(a.gold.get("memory") or ()),
                    tuple(a.gold.get("summary") or ()),
                    tuple(b.gold.get("memory") or ()),
                )
            )
    return out


def set_prf(predicted: Iterable[str], gold: Iterable[str]) -> tuple[float, float, float]:
    """Precision, recall, F1 of two sentence sets; sentences match exactly after
    ``normalize_sentence``. Two empty sets score (1, 1, 1); one empty set scores 0 F1."""
    p = {normalize_sentence(x) for x in predicted}
    g = {normalize_sentence(x) for x in gold}
    if not p and not g:
        return 1.0, 1.0, 1.0
    tp = len(p & g)
    prec = tp / len(p) if p else 0.0
    rec = tp / len(g) if g else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if tp else 0.0)


def set_f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """Sentence-level F1 between a predicted and a gold memory (``set_prf``)."""
    return set_prf(predicted, gold)[2]


def predict_with(t: Transition, ops: Mapping[tuple[int, int], str]) -> list[str]:
    """M' of a transition under given pair operations (Algorithm 1)."""
    kept_m, kept_s = algorithm1(len(t.memory), len(t.summary), ops)
    return [t.memory[i] for i in kept_m] + [t.summary[j] for j in kept_s]


def fit_charngram(
    data: Sequence[Transition], grid: Mapping[str, Sequence[float]] | None = None
) -> tuple[dict[str, float], float]:
    """Grid-search the thresholds with the best mean set F1 over ``data``.

    Ties keep the first setting in grid order (lowest values first). Returns (thresholds, F1).
    """
    if not data:
        raise ValueError("fit_charngram: no transitions to fit on")
    grid = dict(grid or GRID)
    names = ("pass_contain", "related", "delete_shared")
    missing = [k for k in names if k not in grid]
    if missing:
        raise ValueError(f"fit_charngram: the grid lacks {missing}")
    feats = [
        {(i, j): features(m, s) for i, m in enumerate(t.memory) for j, s in enumerate(t.summary)}
        for t in data
    ]
    best: tuple[float, dict[str, float]] | None = None
    for values in itertools.product(*(grid[k] for k in names)):
        th = dict(zip(names, values, strict=True))
        score = sum(
            set_f1(predict_with(t, {k: decide(f, th) for k, f in fs.items()}), t.gold)
            for t, fs in zip(data, feats, strict=True)
        ) / len(data)
        if best is None or score > best[0] + 1e-12:
            best = (score, th)
    assert best is not None
    return best[1], best[0]
