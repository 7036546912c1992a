"""The panel's judges: any answer judge (the lexical one) and an LLM under a prompt variant.

Every panel judge turns ``JudgeInput``s into ``PanelVerdict``s: credit in [0, 1] (None when
the judge is unavailable), whether it called the answer a don't-know, the raw text and a
failure. ``AnswerJudge`` wraps a ``judges.Judge`` (lexical, or the LUFY C.1 ``LLMJudge``) with
its 1 / 0 / 2 labels; ``PromptJudge`` runs a prompt variant (``judgepanel.variants``) on an LLM
through the normal LLM layer (cached, usage recorded under the variant's task name). On an
offline backend a variant without an offline twin for the run's protocol is unavailable: every
verdict is None and ``describe()`` says why; no rule stands in for an LLM.

Judges are built by the cli (``cli/judge_panel.py``) from judge and generator configs and
handed over as objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from recallbench.judgepanel.variants import JudgeInput, Variant
from recallbench.judges import Judge, JudgeItem
from recallbench.llm.protocol import LLMClient
from recallbench.verdict import JSONValue


@dataclass(frozen=True)
class PanelVerdict:
    """One judged answer: credit in [0, 1] or None (unavailable), don't-know, raw reply.

    ``dont_know`` is None when the judge has no don't-know label (the panel's statistics then
    read an uncredited answer as unanswered when ``judges.lexical.is_dont_know`` says so).
    """

    credit: float | None
    dont_know: bool | None = None
    raw: str = ""
    failure: str | None = None


class PanelJudge(Protocol):
    """What the panel uses of a judge."""

    label: str

    def verdicts(self, items: Sequence[JudgeInput]) -> list[PanelVerdict]:
        """Judge every item, in order."""
        ...

    def describe(self) -> dict[str, JSONValue]:
        """What produced the verdicts (for the table header and panel.json)."""
        ...


class AnswerJudge:
    """A ``judges.Judge`` (labels 1 correct / 0 incorrect / 2 don't-know) in the panel."""

    def __init__(self, judge: Judge, label: str | None = None) -> None:
        self.judge = judge
        self.label = label or judge.name

    def verdicts(self, items: Sequence[JudgeInput]) -> list[PanelVerdict]:
        asked = [JudgeItem(i.question, i.reference, i.answer) for i in items]
        return [
            PanelVerdict(v.credit, v.dont_know, v.raw, v.failure)
            for v in self.judge.judge_many(asked)
        ]

    def describe(self) -> dict[str, JSONValue]:
        return {"label": self.label, **self.judge.describe()}


class PromptJudge:
    """An LLM judging with one prompt variant (``judgepanel.variants``)."""

    def __init__(
        self,
        llm: LLMClient,
        variant: Variant,
        label: str | None = None,
        protocol: str | None = None,
    ) -> None:
        self.llm = llm
        self.variant = variant
        self.label = label or f"{llm.backend.name}:{llm.model}/{variant.name}"
        self.protocol = protocol  # the run's protocol (whether an offline twin fits its items)

    @property
    def available(self) -> bool:
        """False on an offline backend when the variant has no offline twin for the run's
        protocol (``Variant.twin_fits``)."""
        return not self.llm.backend.offline or self.variant.twin_fits(self.protocol)

    @property
    def status(self) -> str:
        """``llm`` (a model answers), ``offline twin`` (a rule does) or ``unavailable``."""
        if not self.available:
            return "unavailable"
        return "offline twin" if self.llm.backend.offline else "llm"

    def verdicts(self, items: Sequence[JudgeInput]) -> list[PanelVerdict]:
        if not self.available:
            return [PanelVerdict(None, failure="unavailable offline") for _ in items]
        fields = [self.variant.fields(i) for i in items]
        results = self.llm.run_many(self.variant.task, fields, progress=False) if fields else []
        said = self.variant.dont_know
        return [
            PanelVerdict(
                self.variant.credit(r.value),
                None if said is None else said(r.value),
                r.raw,
                r.failure,
            )
            for r in results
        ]

    def describe(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "label": self.label,
            "name": "llm",
            "backend": self.llm.backend.name,
            "model": self.llm.model,
            "variant": self.variant.name,
            "prompt": self.variant.source,
        }
        bucket = self.llm.usage.tasks.get(self.variant.task.name)
        if bucket is not None:  # calls, tokens, cost and failures of this variant's task
            out["usage"] = bucket.to_dict()
        out["status"] = self.status
        if not self.available:
            scope = self.variant.twin_for if self.variant.task.offline is not None else None
            out["note"] = (
                f"unavailable: the {self.llm.backend.name} backend has no offline twin of "
                f"prompt {self.variant.name}"
                + (f" for {self.protocol} runs (its twin fits {', '.join(scope)})" if scope else "")
                + " (an LLM is needed)"
            )
        elif self.llm.backend.offline:
            out["note"] = (
                f"{self.llm.backend.name} backend: verdicts are the offline twin of "
                f"{self.variant.name} (a lexical rule), not an LLM's"
            )
        return out


def prompt_judges(
    llm: LLMClient,
    variants: Sequence[Variant],
    label: str | None = None,
    protocol: str | None = None,
) -> list[PromptJudge]:
    """One ``PromptJudge`` per variant on ``llm`` for a run of ``protocol``; labels
    ``<label>/<variant>``."""
    base = label or f"{llm.backend.name}:{llm.model}"
    return [PromptJudge(llm, v, f"{base}/{v.name}", protocol) for v in variants]
