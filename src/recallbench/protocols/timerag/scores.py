"""Scores of the ``timerag`` protocol (TimeRAG-Memory sec. 3.2-3.3 and 4; Tables IV-VI, VIII, XI).

The paper names its metrics but not how a written memory is matched to a gold fact, which fact a
turn's retrieval should find, or how PersonaConsF1 is computed. The readings below are this
project's; each is a pure function pinned by hand-computed tests (``tests/protocols``).

Words: ``content`` = the Porter stems of ``text.content_words`` (letters only, dialogue stopwords
dropped), as a set. Speaker names ("Speaker 1", "self", ...) are removed from a memory's text
before matching, and compared separately when both sides name a speaker.

- **Writing P/R/F1** (Table IV): after each observed session, the method's written memory (its
  snapshot items, without ``status: deleted``; a structured record counts by its ``value``, any
  other item by its text) is matched one-to-one to the gold facts known so far
  (MSC: the running persona summary after that session; Persona-Chat: the given personas): a pair
  matches when the content-word F1 of (memory, fact) is at least ``match_threshold`` (0.5); pairs
  are taken greedily by descending F1 (ties: memory order, then fact order). Precision = matched
  memories / memories, recall = matched facts / facts, pooled over every (episode, session) of the
  run (micro), F1 from the pooled P and R.
- **Retrieval Recall@k / MRR** (Table V): a turn's relevance target is the set of gold facts known
  before its session whose content words appear in the reference reply (at least
  ``target_min_overlap`` = 2 words and at least ``target_threshold`` = 0.5 of the fact's words):
  "the gold fact the reference reply uses". A recalled item (in the method's recall order) is
  relevant when it contains at least ``target_threshold`` of some target fact's content words.
  Recall@k = 1 when a relevant item is among the first k, MRR = 1 / rank of the first relevant
  item (0 when none); turns without a target are not scored (their number is reported).
- **PersonaConsF1** (Table VI): per response, the best content-word F1 between the response and
  one persona statement of the responding speaker (the paper: "a lexical overlap proxy with the
  persona/profile statements"); mean over responses whose speaker has statements.
- **ContradRate** (Tables VI, VIII, IX): share of judged responses labelled contradictory for some
  premise by the NLI judge (``judges.nli``); unavailable offline.
- **Efficiency** (Table XI): ``ctx_tokens`` = prompt tokens of the generation call (the backend's
  count: the endpoint's usage, or the local estimate offline); ``latency_ms`` = recall plus
  generation wall time of the turn, over turns whose call was not a cache hit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from recallbench.metrics.summary import Summary
from recallbench.payloads import MemoryWriteMeta, meta_of, response_meta
from recallbench.records import Prediction, Score
from recallbench.text import content_words, porter_stem

MATCH_THRESHOLD = 0.5
TARGET_THRESHOLD = 0.5
TARGET_MIN_OVERLAP = 2


def content(text: str, drop: Iterable[str] = ()) -> frozenset[str]:
    """Porter stems of the content words of ``text``, without the words of the names in ``drop``."""
    return _content(text, tuple(drop))


@lru_cache(maxsize=1 << 16)  # the same gold facts are matched again at every turn of an episode
def _content(text: str, drop: tuple[str, ...]) -> frozenset[str]:
    names = {w for name in drop for w in content_words(name)}
    return frozenset(porter_stem(w) for w in content_words(text) if w not in names)


def word_f1(a: frozenset[str], b: frozenset[str]) -> float:
    """F1 of two word sets (0 when either is empty)."""
    common = len(a & b)
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


def containment(fact: frozenset[str], text: frozenset[str]) -> float:
    """Share of the fact's words present in ``text`` (0 for an empty fact)."""
    return len(fact & text) / len(fact) if fact else 0.0


def match_written(
    memories: Sequence[tuple[str | None, frozenset[str]]],
    facts: Sequence[tuple[str | None, frozenset[str]]],
    threshold: float = MATCH_THRESHOLD,
) -> list[tuple[int, int, float]]:
    """Greedy one-to-one matching of (speaker, words) memories to gold facts by descending F1.

    A speaker of None matches any speaker. Returns (memory index, fact index, F1) triples.
    """
    pairs = []
    for i, (ms, mw) in enumerate(memories):
        for j, (fs, fw) in enumerate(facts):
            if ms is not None and fs is not None and ms != fs:
                continue
            f1 = word_f1(mw, fw)
            if f1 >= threshold:
                pairs.append((-f1, i, j))
    used_m, used_f, out = set(), set(), []
    for neg, i, j in sorted(pairs):
        if i not in used_m and j not in used_f:
            used_m.add(i)
            used_f.add(j)
            out.append((i, j, -neg))
    return sorted(out)


def relevance_targets(
    facts: Sequence[frozenset[str]],
    reference: frozenset[str],
    threshold: float = TARGET_THRESHOLD,
    min_overlap: int = TARGET_MIN_OVERLAP,
) -> list[int]:
    """Indices of the facts the reference reply uses (see the module docstring)."""
    return [
        j
        for j, fw in enumerate(facts)
        if len(fw & reference) >= min_overlap and containment(fw, reference) >= threshold
    ]


def relevant_ranks(
    items: Sequence[frozenset[str]],
    targets: Sequence[frozenset[str]],
    threshold: float = TARGET_THRESHOLD,
) -> list[int]:
    """1-based ranks of the recalled items that contain some target fact."""
    return [
        rank
        for rank, iw in enumerate(items, 1)
        if any(containment(t, iw) >= threshold for t in targets)
    ]


def recall_at(ranks: Sequence[int], k: int) -> float:
    """1.0 when a relevant item is ranked within the first ``k``."""
    return float(any(r <= k for r in ranks))


def reciprocal_rank(ranks: Sequence[int]) -> float:
    """1 / the first relevant rank (0 when no recalled item is relevant)."""
    return 1.0 / min(ranks) if ranks else 0.0


def persona_consistency(response: frozenset[str], statements: Sequence[frozenset[str]]) -> float:
    """The best content-word F1 between the response and one persona statement."""
    return max((word_f1(response, s) for s in statements), default=0.0)


# -- the run summary -------------------------------------------------------------------------

METRICS = (
    "write_precision",
    "write_recall",
    "write_f1",
    "recall_at_1",
    "recall_at_5",
    "mrr",
    "persona_cons_f1",
    "contrad_rate",
    "ctx_tokens",
    "latency_ms",
)


def _response_value(p: Prediction, name: str) -> float | None:
    """The value of a per-response measure, or None when it does not apply to ``p``."""
    meta = response_meta(p)
    if name in ("recall_at_1", "recall_at_5", "mrr"):
        if (retrieval := meta.get("retrieval")) is None:
            return None
        ranks = retrieval["ranks"]
        return reciprocal_rank(ranks) if name == "mrr" else recall_at(ranks, int(name[-1]))
    if name == "persona_cons_f1":
        return None if (cons := meta.get("persona_cons")) is None else float(cons)
    if name == "contrad_rate":
        return None if (said := meta.get("contradiction")) is None else float(bool(said))
    if name == "ctx_tokens":
        return float(p.usage.get("prompt_tokens") or 0)
    if p.usage.get("cached"):  # latency_ms: a cache hit measures the cache, not the system
        return None
    return 1000.0 * (float(meta.get("recall_s", 0.0)) + float(meta.get("generate_s", 0.0)))


def score_timerag(
    predictions: Sequence[Prediction], metric_names: Sequence[str]
) -> tuple[list[Score], Summary]:
    """Reference metrics of the responses plus the TimeRAG metrics (module docstring)."""
    from recallbench.llm.task import CALL_FAILURE
    from recallbench.metrics.bootstrap import clustered_entry
    from recallbench.metrics.scoring import score_predictions

    responses = [p for p in predictions if p.kind == "response"]
    scores, summary = score_predictions(responses, [m for m in metric_names if m not in METRICS])
    metrics = summary["metrics"]
    scored = [p for p in responses if not (p.failure or "").startswith(CALL_FAILURE)]
    sets = [p for p in predictions if p.kind == "memory_write"]
    for name in (m for m in metric_names if m in METRICS):
        if name.startswith("write_"):
            written = [meta_of(p, MemoryWriteMeta) for p in sets]
            stats: list[list[float]] = [[m["matched"], m["written"], m["facts"]] for m in written]
            spec = {"fn": "set_prf", "which": name[len("write_") :]}
            applied = list(zip(sets, stats, strict=True))
        else:
            spec = {"fn": "ratio"}
            values = [(p, _response_value(p, name)) for p in scored]
            applied = [(p, [v, 1.0]) for p, v in values if v is not None]
            scores += [Score(p.pred_id, name, row[0]) for p, row in applied]
        if not applied:  # nothing this measure applies to (e.g. no gold facts): n/a, never a 0
            metrics[name] = {"n": 0, "note": "nothing to score"}
            if name == "contrad_rate":
                why = {w for p in scored if (w := response_meta(p).get("nli_unavailable"))}
                metrics[name] = {
                    "n": 0,
                    "unavailable": "; ".join(sorted(why)) or "no response was judged",
                }
        else:
            rows = [(p.episode_id, p.session_index, row) for p, row in applied]
            metrics[name] = clustered_entry(rows, spec)
        if name in ("recall_at_1", "recall_at_5", "mrr"):
            metrics[name]["n_without_target"] = len(scored) - len(applied)
    return scores, summary
