"""CAIM's verdicts on one answer: one ``recallbench.verdict.Verdict`` per graded metric.

``Prediction.meta["caim"]`` (protocol ``qa_gvd``) holds ``CaimVerdicts.to_dict()``:
``{"verdicts": {metric: Verdict.to_dict()}, "info": {...}}``, the one verdict shape of issue 47
per metric, and the question's judge detail (``info``: the lexical judge's coverages, eligible
items and whether the reply declined; ``unkeyed`` when no key covers the question) that belongs
to the question, not to one metric. Every reader gets it with ``caim_verdicts(prediction)``.

Each metric's ``Verdict``:
    score: the metric's value (0 / 0.5 / 1; retrieval 0 / 1). None when the metric is
        unavailable (coherence offline; a metric an LLM judge was not asked) or not applicable
        (retrieval and storage of an unanswerable question; every metric of an unkeyed one): an
        ``UNAVAILABLE`` verdict whose ``failure`` says which ("unavailable: ...").
    label: ``graded_label(score)``: 1 when the metric gives full marks, else 0 (0 also on an
        unavailable verdict, where it means nothing). CAIM's rubrics have no don't-know label
        (a declined answer is scored by ``response_correctness``), so never 2. Readers use the
        score; the label is there so that every verdict reads the same way.
    raw, parsed, failure, usage: the LLM judge's reply to that metric's rubric, whether it
        parsed, the call's failure (``llm.task``: the score is then the rubric's fallback 0, as
        before) and its usage; the lexical judge's raw is the score as text (empty on an
        unanswerable question, as before) and it has no usage.
    judge: ``caim_lexical`` or ``caim_llm``; ``info``: ``{"metric": <metric>}``, so a verdict
        read on its own still names its metric; backend, model, prompt: the LLM judge's.

Older shape read (``CaimVerdicts.from_dict``; tested in tests/protocols/test_caim_verdicts.py):
``CaimVerdict.to_dict()`` before issue 47, ``{scores: {metric: float|None}, raw: {metric: str},
failures: {metric: str}, info}``. A None score reads as an unavailable verdict ("unavailable:
no score (older meta.caim)"), a failure as the verdict's failure, ``parsed`` False when it is a
parse failure; the judge is not recorded there (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recallbench.llm.task import PARSE_FAILURE
from recallbench.records import Prediction
from recallbench.verdict import UNAVAILABLE, JSONValue, Verdict, graded_label

OLD_UNAVAILABLE = f"{UNAVAILABLE}: no score (older meta.caim)"


def metric_verdict(
    metric: str,
    score: float | None,
    judge: str,
    why: str = "",
    *,
    raw: str = "",
    parsed: bool = True,
    failure: str | None = None,
    usage: dict[str, JSONValue] | None = None,
    llm: tuple[str, str, str] | None = None,
) -> Verdict:
    """One metric's verdict: ``score``, or None with ``why`` it is unavailable (docstring).

    ``llm``: the LLM judge's (backend, model, prompt source).
    """
    info: dict[str, JSONValue] = {"metric": metric}
    if score is None:
        if not why:
            raise ValueError(f"CAIM metric {metric!r} has no score: say why it is unavailable")
        return Verdict(0, failure=f"{UNAVAILABLE}: {why}", score=None, judge=judge, info=info)
    backend, model, prompt = llm or (None, None, None)
    return Verdict(
        graded_label(score),
        raw=raw,
        parsed=parsed,
        failure=failure,
        usage=usage or {},
        info=info,
        score=score,
        judge=judge,
        backend=backend,
        model=model,
        prompt=prompt,
    )


@dataclass(frozen=True)
class CaimVerdicts:
    """The CAIM verdicts of one answered question, by metric, and the question's judge detail."""

    verdicts: dict[str, Verdict]
    info: dict[str, JSONValue] = field(default_factory=dict)

    @property
    def scores(self) -> dict[str, float | None]:
        """Each metric's score (None: unavailable or not applicable)."""
        return {m: v.score for m, v in self.verdicts.items()}

    @property
    def failures(self) -> dict[str, str]:
        """The judge's failures by metric (a failed call or parse; unavailable ones are not)."""
        return {m: v.failure for m, v in self.verdicts.items() if v.failure and v.available}

    def score(self, metric: str) -> float | None:
        """``metric``'s score; None when unavailable, not applicable or not scored at all."""
        verdict = self.verdicts.get(metric)
        return None if verdict is None else verdict.score

    def to_dict(self) -> dict[str, JSONValue]:
        """Return the JSON-ready dict stored in ``Prediction.meta["caim"]``."""
        verdicts: dict[str, JSONValue] = {m: v.to_dict() for m, v in self.verdicts.items()}
        return {"verdicts": verdicts, "info": dict(self.info)}

    @classmethod
    def from_dict(cls, d: Mapping[str, JSONValue]) -> CaimVerdicts:
        """Read this shape or the older ``{scores, raw, failures, info}`` (module docstring)."""
        if not isinstance(d, Mapping):
            raise ValueError(f"CAIM verdicts must be a JSON object, got {type(d).__name__}")
        info = _object(d, "info")
        if "verdicts" in d:
            return cls(
                {m: Verdict.from_dict(_as_object(v, m)) for m, v in _items(d, "verdicts")}, info
            )
        if "scores" in d:
            raw, failures = _object(d, "raw"), _object(d, "failures")
            return cls({m: _old(m, v, raw, failures) for m, v in _items(d, "scores")}, info)
        raise ValueError(
            f"CAIM verdicts need 'verdicts' (or the older 'scores'), got keys {sorted(d)}"
        )


def _old(
    metric: str, score: JSONValue, raw: Mapping[str, JSONValue], failures: Mapping[str, JSONValue]
) -> Verdict:
    if score is None:
        return Verdict(0, failure=OLD_UNAVAILABLE, score=None, info={"metric": metric})
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError(f"CAIM score of {metric!r} should be a number or null, got {score!r:.60}")
    failure = failures.get(metric)
    failure = None if failure is None else str(failure)
    return Verdict(
        graded_label(float(score)),
        raw=str(raw.get(metric) or ""),
        parsed=not (failure or "").startswith(PARSE_FAILURE),
        failure=failure,
        score=float(score),
        info={"metric": metric},
    )


def _object(d: Mapping[str, JSONValue], key: str) -> dict[str, JSONValue]:
    return _as_object(d.get(key) or {}, key)


def _as_object(value: JSONValue, key: str) -> dict[str, JSONValue]:
    if not isinstance(value, dict):
        raise ValueError(f"CAIM verdicts: {key!r} should be a JSON object, got {value!r:.60}")
    return value


def _items(d: Mapping[str, JSONValue], key: str) -> list[tuple[str, JSONValue]]:
    return list(_object(d, key).items())


def caim_verdicts(prediction: Prediction) -> CaimVerdicts | None:
    """The CAIM verdicts on ``prediction`` (``meta["caim"]``), None when CAIM did not judge it.

    Reads the new shape and the older one; a ValueError naming the prediction on anything else.
    """
    stored = prediction.meta.get("caim")
    if stored is None:
        return None
    try:
        return CaimVerdicts.from_dict(stored)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"prediction {prediction.pred_id}: meta.caim: {exc}") from exc
