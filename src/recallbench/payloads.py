"""Typed ``Prediction.meta`` per kind: what each protocol writes there, key by key.

``Prediction.meta`` stays a JSON mapping on disk (the predictions file is unchanged both ways:
old folders read, and a new file holds the same key names); in code each kind has a TypedDict,
read through ``meta_of(prediction, Kind)`` (or ``answer_meta``, ``response_meta``,
``memory_meta``), which checks the prediction's kind and the JSON type of every key it knows
and fails in one line naming the prediction, the key and what was expected. Keys a kind does
not list are kept (a method or a later version may add some). ``to_json`` is the inverse.
The verdict under ``judge`` has its own record: ``recallbench.verdict`` (``verdict_of``).

Inventory (``grep -rn 'meta\\[\\|meta={\\|meta.update' src/recallbench/protocols``), by kind:

- ``answer``: ``qa_lufy``/``qa_gvd`` (``protocols/qa/_qa.py``): qa_id, question,
  question_session, user, n_recalled, judge, oracle; ``qa_gvd`` adds caim, recalled_items.
  ``locomo_qa`` (``protocols/locomo/_protocol.py``): qa_id, question, category,
  question_session, evidence, recalled_sources, n_recalled, raw_reply, recall_s, generate_s,
  generate_timed, subsets, judge, options, oracle, errata, erratum. ``locomo_import``: qa_id,
  question, category, question_session, gold_evidence, subsets, judge, judges, imported,
  shipped, duration_ms, errata, erratum.
- ``response`` (``response_*``, ``protocols/response/_response.py``): speaker, n_recalled,
  recall_text, recall_s, generate_s, context, subsets; ``response_timerag`` adds retrieval,
  persona_cons, premises, nli, contradiction, nli_unavailable.
- ``memory`` (memory state after a session, ``protocols/base.memory_state``): n_items, created,
  retained; ``locomo_qa`` adds observe_s, ``qa_gvd`` n_words.
- ``timing`` (``response_*``): observe_s.
- ``teafarm``: qid, question, asker, responder, session6, source_dataset, question_source,
  recall_text, n_recalled, memory_changed_by_recall, oracle, judge; ``teafarm_generation``:
  step.
- ``lamp1``: features, n_recalled, ctx_tokens, latency_s.
- ``memory_set`` (``memory_ops``): memory, summary, predicted, gold, has_pairs, precision,
  recall, f1, labels, ops, derived_ops, charngram, rule; ``memory_pair``: source, excluded,
  raw_label.
- ``memory_write`` (``response_timerag``): matched, written, facts, matches.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    TypedDict,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from recallbench.records import Prediction
from recallbench.verdict import JSONValue

__all__ = [
    "KINDS",
    "AnswerMeta",
    "MemoryStateMeta",
    "ResponseMeta",
    "TeaFarmMeta",
    "answer_meta",
    "memory_meta",
    "meta_of",
    "response_meta",
    "to_json",
]


class OracleMeta(TypedDict, total=False):
    """``protocols.evidence.Evidence.to_dict``: the gold evidence an oracle run recalled."""

    turn_ids: list[str]
    how: str
    unknown: str


class CaimMeta(TypedDict, total=False):
    """``judges.caim.CaimVerdicts.to_dict``: CAIM's four graded metrics of one answer, each a
    ``Verdict.to_dict()``; read with ``judges.caim.caim_verdicts`` (which also reads the older
    ``{scores, raw, failures, info}`` of ``CaimVerdict`` before issue 47)."""

    verdicts: dict[str, dict[str, JSONValue]]  # metric -> recallbench.verdict.Verdict.to_dict()
    info: dict[str, JSONValue]


class FieldFix(TypedDict):
    """One corrected field of a LoCoMo question (``datasets._locomo_errata``)."""

    old: JSONValue
    new: JSONValue
    source: str


class ErratumMeta(TypedDict, total=False):
    """A LoCoMo question's corrections and flags under errata (``QAItem.meta["erratum"]``)."""

    fields: dict[str, FieldFix]
    sources: list[str]
    score_changing: bool
    error_type: str
    use: str  # the audit's: how its correct_answer was used (datasets._locomo_audit.USES)
    conflicts: list[str]


class ShippedMeta(TypedDict):
    """An imported run's shipped verdicts: their metric and the answer key they judged."""

    judge: str
    key: str


class AnswerMeta(TypedDict, total=False):
    """An answer to a probing question (qa, qa_gvd, locomo_qa, locomo_import)."""

    qa_id: str
    question: str
    question_session: int
    user: str
    n_recalled: int
    judge: dict[str, JSONValue]  # recallbench.verdict.Verdict.to_dict()
    oracle: JSONValue  # OracleMeta (qa), the recall's evidence (locomo_qa)
    caim: CaimMeta
    recalled_items: list[dict[str, JSONValue]]
    category: int
    evidence: list[str]
    gold_evidence: list[str]
    recalled_sources: list[list[str]]
    raw_reply: str
    recall_s: float
    generate_s: float
    generate_timed: Literal["call", "batch_share"]
    subsets: list[str]
    options: JSONValue
    errata: list[str]
    erratum: ErratumMeta
    judges: dict[str, float]
    imported: dict[str, JSONValue]
    shipped: ShippedMeta
    duration_ms: float


class RetrievalMeta(TypedDict):
    """TimeRAG's retrieval record of one response: relevant targets and their ranks."""

    targets: int
    ranks: list[int]


class ResponseMeta(TypedDict, total=False):
    """A generated response in place of a dialogue turn (response_*)."""

    speaker: str
    n_recalled: int
    recall_text: str
    recall_s: float
    generate_s: float
    context: str
    subsets: list[str]
    retrieval: RetrievalMeta | None
    persona_cons: float | None
    premises: list[str]
    nli: list[str | None]
    contradiction: bool | None
    nli_unavailable: str


class MemoryStateMeta(TypedDict, total=False):
    """The memory after a session (qa, qa_gvd): items held, created and retained."""

    n_items: int
    created: int
    retained: int
    n_words: int
    observe_s: float


class TeaFarmMeta(TypedDict, total=False):
    """A reply to a TeaFarm counterfactual question."""

    qid: str
    question: str
    asker: str
    responder: str
    session6: list[list[str]]
    source_dataset: str
    question_source: str
    recall_text: str
    n_recalled: int
    memory_changed_by_recall: bool
    oracle: OracleMeta
    judge: dict[str, JSONValue]  # recallbench.verdict.Verdict.to_dict()


class TimingMeta(TypedDict, total=False):
    observe_s: float


class GenerationMeta(TypedDict, total=False):
    step: str


class Lamp1Meta(TypedDict, total=False):
    features: list[float]
    n_recalled: int
    ctx_tokens: int
    latency_s: float


class MemorySetMeta(TypedDict, total=False):
    memory: list[str]
    summary: list[str]
    predicted: list[str]
    gold: list[str]
    has_pairs: bool
    precision: float | None
    recall: float | None
    f1: float | None
    labels: list[list[JSONValue]]
    ops: list[str]
    derived_ops: list[str]
    charngram: JSONValue
    rule: str


class MemoryPairMeta(TypedDict, total=False):
    source: str
    excluded: str | None
    raw_label: str | None


class MemoryWriteMeta(TypedDict, total=False):
    matched: int
    written: int
    facts: int
    matches: list[list[JSONValue]]


KINDS: dict[str, type] = {
    "answer": AnswerMeta,
    "response": ResponseMeta,
    "memory": MemoryStateMeta,
    "timing": TimingMeta,
    "teafarm": TeaFarmMeta,
    "teafarm_generation": GenerationMeta,
    "lamp1": Lamp1Meta,
    "memory_set": MemorySetMeta,
    "memory_pair": MemoryPairMeta,
    "memory_write": MemoryWriteMeta,
}
M = TypeVar("M")
_ANY_JSON = {str, int, float, bool, type(None)}


def _fits(value: JSONValue, hint: Any) -> bool:
    """Whether a JSON value fits a type hint (JSON's int counts as a float, never a bool)."""
    origin = get_origin(hint)
    if hint is Any or _ANY_JSON <= set(get_args(hint)):  # JSONValue (get_type_hints copies it)
        return True
    if origin is Union or origin is types.UnionType:
        return any(_fits(value, h) for h in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if hint is type(None):
        return value is None
    if is_typeddict(hint):
        return isinstance(value, dict) and not _wrong(value, hint)
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(v, get_args(hint)[1]) for v in value.values())
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _wrong(meta: Mapping[str, JSONValue], shape: type) -> str | None:
    """The first key of ``meta`` that does not fit ``shape``, with what was expected."""
    for key, hint in _hints(shape).items():
        if key in meta and not _fits(meta[key], hint):
            return f"meta.{key} should be {_name(hint)}, got {meta[key]!r:.80}"
    return None


@functools.cache
def _hints(shape: type) -> dict[str, Any]:
    return get_type_hints(shape)


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def meta_of(prediction: Prediction, shape: type[M]) -> M:
    """``prediction.meta`` typed as ``shape`` (a TypedDict of ``KINDS``), checked key by key.

    Raises ValueError naming the prediction when its kind has another shape or a key's JSON
    type is not the one ``shape`` declares.
    """
    expected = [k for k, v in KINDS.items() if v is shape]
    if prediction.kind not in expected:
        raise ValueError(
            f"prediction {prediction.pred_id}: kind {prediction.kind!r} has no "
            f"{shape.__name__} (that is the meta of kind {' or '.join(expected) or '?'})"
        )
    wrong = _wrong(prediction.meta, shape)
    if wrong:
        raise ValueError(f"prediction {prediction.pred_id} ({prediction.kind}): {wrong}")
    return cast(M, prediction.meta)


def answer_meta(prediction: Prediction) -> AnswerMeta:
    return meta_of(prediction, AnswerMeta)


def response_meta(prediction: Prediction) -> ResponseMeta:
    return meta_of(prediction, ResponseMeta)


def memory_meta(prediction: Prediction) -> MemoryStateMeta:
    return meta_of(prediction, MemoryStateMeta)


def to_json(meta: Mapping[str, object]) -> dict[str, object]:
    """The on-disk form of a typed meta: the same keys, a plain dict (``Prediction.meta``)."""
    return dict(meta)
