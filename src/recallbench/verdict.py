"""One verdict on one answer, whatever judged it: ``Prediction.meta["judge"]``.

Every protocol that judges answers (``qa``, ``qa_gvd``, ``locomo_qa``, ``locomo_import``,
``teafarm``) and every answer judge (``lexical``, ``llm``, ``mem0_j``, ``longmemeval``) writes
this one shape; every reader gets a ``Verdict`` with ``verdict_of(prediction)`` (or ``Verdict.from_dict``).
CAIM's graded judges (``judges.caim``) write one per metric under ``meta["caim"]``, read with
``judges.caim.caim_verdicts(prediction)`` (``judges/_caim_verdicts.py``: each field's use).

Fields (``to_dict`` writes all of them, so a reader of any older shape's keys still finds its
keys in a new file):
    label: 1 correct, 0 incorrect, 2 don't-know (LUFY App. C.1; a yes/no judge uses 1 and 0).
    correct: ``label == 1`` (written for readers of TeaFarm's old shape; never read back).
    score: the credit the verdict gives, in [0, 1]: ``float(correct)`` for a label judge. A
        graded judge (the judge panel's prompt variants, e.g. CAIM's 0 / 0.5 / 1) gives its credit
        here and the label ``graded_label`` derives from it: 2 when it said don't-know, 1 when
        the credit is 1, else 0. None only on an unavailable verdict (below).
    raw: the judge's raw output (an LLM reply, a lexical judge's label as text).
    parsed: False when ``raw`` was unparseable and ``label`` is the documented fallback.
    failure: why parsing or the call failed (None on success; starts with the failure kind).
        ``UNAVAILABLE`` ("unavailable: ..."): no judge could give a verdict (the judge panel's
        LLM prompt without an offline twin on an offline backend). Such a verdict has
        ``score`` None (``available`` False; ``credit`` raises) and label 0, which means nothing:
        readers skip it; nothing is credited or counted for it.
    usage: token and cost usage of the judge call (empty for offline judges).
    info: judge-specific detail (the lexical judge's matched tokens ...).
    judge: who judged (the judge's name, e.g. ``llm``, ``mem0_j``, ``teafarm``), None when the
        writer did not say (older files).
    backend, model: the judge's LLM backend and model (TeaFarm names them per verdict).
    prompt: the judge prompt's source (``PromptTask.source``), None when not recorded.
    key: the answer key judged against: ``"release"`` marks a LoCoMo verdict made on the
        release's uncorrected answer (``protocols.locomo._errata``); None: the run's own key.

Older shapes read (``from_dict``), each tested in tests/test_verdict.py:
    1. ``Verdict.to_dict()`` of ``judges.base`` before issue 47, written by ``qa``/``qa_gvd``
       (``protocols/qa/_qa.py``), ``locomo_qa`` (``row["verdict"]`` in
       ``protocols/locomo/_protocol.py``) and ``locomo_import``: ``{label, raw, parsed,
       failure, usage, info}``.
    2. TeaFarm's (``protocols/teafarm/_teafarm.py``): ``{correct, raw, parsed, failure, usage,
       backend, model, prompt}``; label = 1 when correct, else 0.
    3. The judge panel's per-item verdict (``judgepanel``, ``verdicts.jsonl`` before issue 47):
       ``{credit, dont_know, raw, failure}``; label ``graded_label(credit, dont_know)``, score =
       credit; credit None (an unavailable judge) reads as an ``UNAVAILABLE`` verdict.
       ``dont_know`` None (a judge without a don't-know label) reads as False: whether a judge
       has that label is the judge's, not a verdict's (``judgepanel.judges.PanelJudge``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

# A JSON value, recursively (what json.loads returns).
JSONValue: TypeAlias = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]

CORRECT = 1
INCORRECT = 0
DONT_KNOW = 2
LABELS = (CORRECT, INCORRECT, DONT_KNOW)
UNAVAILABLE = "unavailable"  # the failure kind of a verdict no judge could give (docstring)

__all__ = [
    "CORRECT",
    "DONT_KNOW",
    "INCORRECT",
    "LABELS",
    "UNAVAILABLE",
    "JSONValue",
    "Verdict",
    "graded_label",
    "require_verdict",
    "verdict_of",
]

_OPTIONAL = ("judge", "backend", "model", "prompt", "key")


@dataclass(frozen=True)
class Verdict:
    """One judged answer (module docstring for every field)."""

    label: int
    raw: str = ""
    parsed: bool = True
    failure: str | None = None
    usage: dict[str, JSONValue] = field(default_factory=dict)
    info: dict[str, JSONValue] = field(default_factory=dict)
    score: float | None = None
    judge: str | None = None
    backend: str | None = None
    model: str | None = None
    prompt: str | None = None
    key: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.label, bool) or self.label not in LABELS:
            raise ValueError(f"verdict label must be one of {LABELS}, got {self.label!r}")
        if self.failed(UNAVAILABLE):
            if self.score is not None:
                raise ValueError(f"an unavailable verdict has no score, got {self.score!r}")
        elif self.score is None:
            object.__setattr__(self, "score", float(self.label == CORRECT))
        elif not (isinstance(self.score, int | float) and math.isfinite(self.score)):
            raise ValueError(f"verdict score must be a finite number, got {self.score!r}")

    @property
    def correct(self) -> bool:
        """Whether the judge accepted the answer (label 1)."""
        return self.label == CORRECT

    @property
    def dont_know(self) -> bool:
        """Whether the judge read the answer as a don't-know (label 2)."""
        return self.label == DONT_KNOW

    @property
    def available(self) -> bool:
        """Whether a judge gave this verdict (False: an ``UNAVAILABLE`` one, score None)."""
        return self.score is not None

    @property
    def credit(self) -> float:
        """The score as a float; a ValueError on an unavailable verdict, which has none."""
        if self.score is None:
            raise ValueError(f"an unavailable verdict has no credit ({self.failure})")
        return float(self.score)

    def failed(self, kind: str) -> bool:
        """Whether the verdict's failure is of ``kind`` (``llm.task``'s failure prefixes)."""
        return (self.failure or "").startswith(kind)

    def to_dict(self) -> dict[str, JSONValue]:
        """Return the JSON-ready dict stored in ``Prediction.meta["judge"]``."""
        out: dict[str, JSONValue] = {
            "label": self.label,
            "correct": self.correct,
            "score": self.score,
            "raw": self.raw,
            "parsed": self.parsed,
            "failure": self.failure,
            "usage": dict(self.usage),
            "info": dict(self.info),
        }
        out.update({k: getattr(self, k) for k in _OPTIONAL if getattr(self, k) is not None})
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, JSONValue]) -> Verdict:
        """Read a verdict written in this shape or any older one (module docstring)."""
        if not isinstance(d, Mapping):
            raise ValueError(f"a verdict must be a JSON object, got {type(d).__name__}")
        label, score = _label_and_score(d)
        failure = None if d.get("failure") is None else str(d["failure"])
        if score is None and "credit" in d and not (failure or "").startswith(UNAVAILABLE):
            failure = f"{UNAVAILABLE}: {failure or 'no credit'}"  # the panel's credit None
        optional = {k: None if d.get(k) is None else str(d[k]) for k in _OPTIONAL}
        return cls(
            label=label,
            raw="" if d.get("raw") is None else str(d["raw"]),
            parsed=bool(d.get("parsed", True)),
            failure=failure,
            usage=_object(d, "usage"),
            info=_object(d, "info"),
            score=score,
            **optional,
        )


def graded_label(score: float, dont_know: bool = False) -> int:
    """The label of a graded credit: 2 when the judge said don't-know, 1 for full credit, else 0."""
    return DONT_KNOW if dont_know else CORRECT if score == 1.0 else INCORRECT


def _object(d: Mapping[str, JSONValue], key: str) -> dict[str, JSONValue]:
    value = d.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"a verdict's {key!r} should be a JSON object, got {value!r:.60}")
    return dict(value)


def _number(d: Mapping[str, JSONValue], key: str) -> float | None:
    value = d.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a verdict's {key!r} should be a number, got {value!r:.60}")
    return float(value)


def _label_and_score(d: Mapping[str, JSONValue]) -> tuple[int, float | None]:
    score = _number(d, "score")
    if "label" in d:
        label = d["label"]
        if isinstance(label, bool) or not isinstance(label, int):
            raise ValueError(f"verdict label must be one of {LABELS}, got {label!r:.60}")
        return label, score
    if "correct" in d:  # TeaFarm's shape
        return (CORRECT if d["correct"] else INCORRECT), score
    if "credit" in d:  # the judge panel's shape; credit None: an unavailable judge
        credit = _number(d, "credit")
        if credit is None:
            return INCORRECT, None
        return graded_label(credit, bool(d.get("dont_know"))), credit
    raise ValueError(
        f"a verdict needs 'label' (or an older shape's 'correct' or 'credit'), got keys {sorted(d)}"
    )


class _HasMeta(Protocol):
    @property
    def meta(self) -> Mapping[str, JSONValue]: ...

    @property
    def pred_id(self) -> str: ...


def verdict_of(prediction: _HasMeta) -> Verdict | None:
    """The judge's verdict on ``prediction`` (``meta["judge"]``), None when it was not judged.

    Raises ValueError naming the prediction when the stored verdict has no known shape.
    """
    stored = prediction.meta.get("judge")
    if stored is None:
        return None
    if not isinstance(stored, dict):
        kind = type(stored).__name__
        raise ValueError(
            f"prediction {prediction.pred_id}: meta.judge should be a JSON object, got {kind}"
        )
    try:
        return Verdict.from_dict(stored)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"prediction {prediction.pred_id}: meta.judge: {exc}") from exc


def require_verdict(prediction: _HasMeta) -> Verdict:
    """``verdict_of(prediction)``; a ValueError naming the prediction when it was not judged."""
    verdict = verdict_of(prediction)
    if verdict is None:
        raise ValueError(f"prediction {prediction.pred_id} has no judge verdict (meta.judge)")
    return verdict
