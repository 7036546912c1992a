"""The panel's judges: any answer judge (the lexical one) and an LLM under a prompt variant.

Every panel judge turns ``JudgeInput``s into ``recallbench.verdict.Verdict``s, the one verdict
shape of every protocol and judge (``run_panel`` sets their ``judge`` to the panel judge's
label): ``score`` is the credit in [0, 1], ``label`` 2 when the judge called the answer a
don't-know. ``AnswerJudge`` wraps a ``judges.Judge`` (lexical, or the LUFY C.1 ``LLMJudge``)
with its 1 / 0 / 2 labels; ``PromptJudge`` runs a prompt variant (``judgepanel.variants``) on
an LLM through the normal LLM layer (cached, usage recorded under the variant's task name and
on each verdict), its label graded from its credit (``verdict.graded_label``). On an offline
backend a variant without an offline twin for the run's protocol is unavailable: every verdict
is an ``UNAVAILABLE`` one (score None) and ``describe()`` says why; no rule stands in for an
LLM.

Whether a judge can say don't-know at all is the judge's (``PanelJudge.has_dont_know``), not a
verdict's: a prompt without that label (CAIM's, Fig. 29, Mem0's J, ours) gives labels 1 and 0,
and the panel's statistics read an uncredited answer of such a judge as unanswered when
``judges.lexical.is_dont_know`` says so (``judgepanel.stats``).

Judges are built by the cli (``cli/judge_panel.py``) from judge and generator configs and
handed over as objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from recallbench.judgepanel.variants import JudgeInput, Variant
from recallbench.judges import Judge, JudgeItem
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import TaskResult
from recallbench.verdict import INCORRECT, UNAVAILABLE, JSONValue, Verdict, graded_label


class PanelJudge(Protocol):
    """What the panel uses of a judge."""

    label: str

    @property
    def has_dont_know(self) -> bool:
        """Whether the judge can label an answer don't-know (module docstring)."""
        ...

    def verdicts(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        """Judge every item, in order."""
        ...

    def describe(self) -> dict[str, JSONValue]:
        """What produced the verdicts (for the table header and panel.json)."""
        ...


class AnswerJudge:
    """A ``judges.Judge`` (labels 1 correct / 0 incorrect / 2 don't-know) in the panel."""

    # every judges.Judge has the don't-know label (a binary one just never gives it)
    has_dont_know = True

    def __init__(self, judge: Judge, label: str | None = None) -> None:
        self.judge = judge
        self.label = label or judge.name

    def verdicts(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        asked = [JudgeItem(i.question, i.reference, i.answer) for i in items]
        return self.judge.judge_many(asked)

    def describe(self) -> dict[str, JSONValue]:
        return {"label": self.label, **self.judge.describe(), "has_dont_know": self.has_dont_know}


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

    @property
    def has_dont_know(self) -> bool:
        """Whether the variant's prompt has a don't-know label (LUFY C.1's 2)."""
        return self.variant.dont_know is not None

    def verdicts(self, items: Sequence[JudgeInput]) -> list[Verdict]:
        if not self.available:
            return [self._verdict(INCORRECT, failure=self._unavailable()) for _ in items]
        fields = [self.variant.fields(i) for i in items]
        results = self.llm.run_many(self.variant.task, fields, progress=False) if fields else []
        return [self._graded(r) for r in results]

    def _graded(self, result: TaskResult[Any]) -> Verdict:
        """The verdict of one reply: its credit and the label graded from it."""
        credit = self.variant.credit(result.value)
        said = self.variant.dont_know is not None and self.variant.dont_know(result.value)
        return self._verdict(
            graded_label(credit, said),
            score=credit,
            raw=result.raw,
            parsed=result.failure is None,
            failure=result.failure,
            usage=result.usage_dict(),
        )

    def _verdict(self, label: int, **fields: Any) -> Verdict:
        """A verdict of this judge: who judged (label, backend, model, prompt) and ``fields``."""
        return Verdict(
            label=label,
            judge=self.label,
            backend=self.llm.backend.name,
            model=self.llm.model,
            prompt=self.variant.source,
            **fields,
        )

    def _unavailable(self) -> str:
        """Why the variant cannot judge here (``UNAVAILABLE`` verdicts and the table note)."""
        scope = self.variant.twin_for if self.variant.task.offline is not None else None
        return (
            f"{UNAVAILABLE}: the {self.llm.backend.name} backend has no offline twin of "
            f"prompt {self.variant.name}"
            + (f" for {self.protocol} runs (its twin fits {', '.join(scope)})" if scope else "")
            + " (an LLM is needed)"
        )

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
        out["has_dont_know"] = self.has_dont_know
        if not self.available:
            out["note"] = self._unavailable()
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
