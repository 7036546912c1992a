"""LoCoMo scores under errata: the clean subset, the ceiling and verdicts on the release's key.

A run under errata (``dataset.options.errata``, ``datasets.locomo``) scores F1, B1 and recall
against the corrected answers and evidence (the predictions' references are the corrected
ones); a question an erratum marks ``no_key`` (its correction is a remark, not an answer) has no
usable key: F1, B1, Mem0's F1 and ``ceiling_f1`` leave it out, J keeps it (flagged, so out of
``clean``). Besides, ``score_locomo`` reports, from each prediction's ``errata_meta``:

- ``clean``: a subset of every metric: the questions of categories 1-4 that no source flags as
  score-changing (for the audit, its 99 entries that are not ``WRONG_CITATION``);
- ``ceiling``: a metric whose value per question of categories 1-4 is 0 when a source flags it
  as score-changing, else 1: what a perfect system (one that gives the corrected answer) scores
  against the uncorrected key when every flagged answer counts as lost, the audit's rule
  (1,441 / 1,540 = 93.57% for the audit alone); per category in its subsets;
- ``ceiling_f1``: LoCoMo's F1 (``locomo_f1``) of the corrected answer against the release's one,
  per question of categories 1-4 (1 when the answer was not corrected);
- ``errata.release_key_verdicts``: verdicts judged against the release's (uncorrected) answer on
  a question whose answer was corrected. Such a verdict (an imported one, marked
  ``{"key": "release"}`` by its importer: the run's ``judge`` or its ``shipped`` verdicts,
  ``j_<source>``) cannot be re-judged offline against the corrected answer: it is kept as
  judged and the metric's ``key`` (``metrics.j.key``, ``metrics.j_audit.key``, its per-judgment
  and majority metrics) says so; ``clean`` is unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recallbench.payloads import ErratumMeta, answer_meta
from recallbench.protocols.locomo._scoring import locomo_f1
from recallbench.records import Episode, Prediction, QAItem
from recallbench.verdict import JSONValue, verdict_of

CLEAN = "clean"
RELEASE_KEY = "release"  # a verdict's "key": judged against the release's uncorrected answer


def errata_meta(episode: Episode, qa: QAItem) -> dict[str, JSONValue]:
    """The prediction meta of ``qa`` that scoring under errata reads (empty without errata).

    ``errata``: the run's errata sources; ``erratum``: the item's corrections and flags.
    Importers of published answers add it the same way, so their runs get the same summary.
    """
    sources = (episode.meta.get("errata") or {}).get("sources")
    if not sources:
        return {}
    out: dict[str, Any] = {"errata": list(sources)}
    if "erratum" in qa.meta:
        out["erratum"] = qa.meta["erratum"]
    return out


def _erratum(p: Prediction) -> ErratumMeta:
    return answer_meta(p).get("erratum") or {}


def score_changing(p: Prediction) -> bool:
    """Does a source flag this prediction's question as score-changing?"""
    return _erratum(p).get("score_changing", False)


def no_key(p: Prediction) -> bool:
    """Does an erratum say this question has no usable answer key (F1 and B1 leave it out)?"""
    return "no_key" in _erratum(p).get("fields", {})


def clean_subsets(p: Prediction) -> list[str]:
    """``["clean"]`` for a category 1-4 question of a run under errata no source flags, else []."""
    meta = answer_meta(p)
    if not meta.get("errata") or meta["category"] == 5 or score_changing(p):
        return []
    return [CLEAN]


def ceiling_values(p: Prediction) -> dict[str, float]:
    """The per-question ceiling values (see the module doc); empty outside errata or category 5."""
    meta = answer_meta(p)
    if not meta.get("errata") or meta["category"] == 5:
        return {}
    if no_key(p):
        return {"ceiling": 0.0 if score_changing(p) else 1.0}
    answer = _erratum(p).get("fields", {}).get("answer")
    f1 = (
        1.0
        if answer is None
        else locomo_f1(meta["category"], str(answer["new"]), str(answer["old"]))
    )
    return {"ceiling": 0.0 if score_changing(p) else 1.0, "ceiling_f1": f1}


def release_key_judges(p: Prediction) -> list[str]:
    """The metrics whose verdict on ``p`` was judged against a release answer the errata corrected.

    ``j`` when the run's verdict says ``"key": "release"``; an imported run's shipped verdicts
    (``meta["shipped"]``: their metric, e.g. ``j_audit``, and ``"key": "release"``).
    """
    if "answer" not in _erratum(p).get("fields", {}):
        return []
    verdict = verdict_of(p)
    out = ["j"] if verdict is not None and verdict.key == RELEASE_KEY else []
    shipped = answer_meta(p).get("shipped")
    return out + ([shipped["judge"]] if shipped and shipped["key"] == RELEASE_KEY else [])


def release_key_verdict(p: Prediction) -> bool:
    """Was a verdict on this prediction judged against a release answer the errata corrected?"""
    return bool(release_key_judges(p))


def errata_summary(answers: Sequence[Prediction]) -> dict[str, JSONValue] | None:
    """The summary's ``errata`` block (None when the run used no errata)."""
    under = [p for p in answers if answer_meta(p).get("errata")]
    if not under:
        return None
    conflicts = {c for p in under for c in _erratum(p).get("conflicts", [])}
    return {
        "sources": list(under[0].meta["errata"]),
        "corrected_or_flagged": sum(1 for p in under if "erratum" in p.meta),
        "score_changing": sum(1 for p in under if score_changing(p)),
        "clean": sum(1 for p in under if clean_subsets(p)),
        "no_key": sum(1 for p in under if no_key(p)),
        "conflicts": list[JSONValue](sorted(conflicts)),
        "release_key_verdicts": sum(1 for p in under if release_key_verdict(p)),
    }
