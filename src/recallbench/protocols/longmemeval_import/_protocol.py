"""Protocol ``longmemeval_import``: the LongMemEval authors' hypothesis file as an ordinary run.

``recallbench import-answers FILE --format longmemeval --name NAME`` runs this protocol through
the run layer, so an imported run is a run folder like any other. ``prepare`` reads the file
(``_formats``), checks its sha256 against the one the command computed and matches every
hypothesis to the loaded question with its ``question_id`` (``QAItem.meta["question_id"]``,
``datasets.longmemeval``); ``run_episode`` emits one ``answer`` per matched question, the
hypothesis as output, judged by the run's judge (``judge=longmemeval``: the authors' prompts;
on the extractive backend their offline twin, ``judges.longmemeval``).

Scores (``_score``): ``accuracy`` and ``task_averaged`` of the run's judge and, for a judged file
(``autoeval_label`` on every line), the same of the shipped labels, ``accuracy_autoeval`` and
``task_averaged_autoeval``: per question type (subsets), overall, abstention (subset
``abstention``), as ``print_qa_metrics.py`` computes them (``_metrics.qa_report`` is that
computation on the file alone; the tests check the two agree). ``agree_j`` and ``kappa_j``: the
run's judge against the shipped labels, question by question (Cohen's kappa of the pooled 2x2
table; ``protocols.locomo_import.agreement_entries``, the LoCoMo referee's code). Under errata
(``errata: default``, ``datasets.longmemeval_errata``) every metric gains the ``clean`` subset.

Deviations:
- No memory is replayed (the answers are given); the run's ``memory`` (``no_memory``) is a
  placeholder and the run has no memory snapshots; no retrieval metric (no ranking shipped).
- Hypotheses whose question is not loaded (another variant's id, a filtered dataset) are left
  out and counted (``imported.matching``), where ``evaluate_qa.py`` skips them with a warning;
  a file none of whose ids is loaded is an error.
- A shipped label whose model is not ``gpt-4o-2024-08-06`` is kept and the model recorded
  (``print_qa_metrics.py`` asserts that model).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from recallbench.datasets import needs
from recallbench.datasets.download import sha256_file
from recallbench.datasets.longmemeval_errata import Errata, load_errata
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.judges import Judge
from recallbench.judges.longmemeval import PAPER_MODEL, LongMemEvalItem
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import (
    EpisodeResult,
    EvalProtocol,
    add_judge_usage,
    refuse_unknown,
)
from recallbench.protocols.locomo import RELEASE_KEY
from recallbench.protocols.locomo_import import shipped_values
from recallbench.protocols.longmemeval_import._formats import (
    FORMAT,
    Hypothesis,
    HypothesisFile,
    read_hypotheses,
)
from recallbench.protocols.longmemeval_import._score import (
    METRICS,
    SOURCE,
    LongMemEvalImportSummary,
    score_import,
)
from recallbench.records import JSON, Episode, Prediction, QAItem, Score

SHOWN = 10  # ids listed in run.json of the hypotheses left out (their count is always given)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes (hex)."""
    return sha256_file(Path(path))


class LongMemEvalImportProtocol(EvalProtocol):
    """Replay a LongMemEval hypothesis file as predictions; score the shipped labels and ours."""

    name = "longmemeval_import"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge"}

    def __init__(
        self,
        file: str | None = None,
        format: str = FORMAT,
        sha256: str | None = None,
        system: str | None = None,
        errata: str | None = None,
        judge: Judge | None = None,
        seed: int | None = 0,  # the run's seed (every protocol receives it; nothing is drawn)
    ) -> None:
        if format != FORMAT:
            raise ConfigError(
                f"protocol longmemeval_import reads format {FORMAT!r}, got {format!r}"
            )
        if judge is None:
            raise ConfigError("protocol longmemeval_import needs a judge: add judge=longmemeval")
        self.file = Path(file) if file else None
        self.sha256, self.system, self.judge = sha256, system, judge
        self.errata: Errata = load_errata(errata)
        self.read: HypothesisFile | None = None
        self.matched: dict[str, tuple[QAItem, Hypothesis]] = {}
        self.how: dict[str, Any] = {}
        self._run_llm: LLMClient | None = None

    def needs(self) -> frozenset[str]:
        """Questions with answers."""
        return frozenset({needs.QA_ITEMS, needs.QA_ANSWERS})

    def prepare(self, episodes: Sequence[Episode]) -> None:
        """Read the file, check its sha256 and match every hypothesis to a loaded question."""
        if self.file is None:
            raise ConfigError(
                "protocol longmemeval_import needs file=; use `recallbench import-answers FILE "
                "--format longmemeval --name NAME`"
            )
        sha = file_sha256(self.file)
        if self.sha256 and sha != self.sha256:
            raise DatasetFormatError(
                f"{self.file}: sha256 {sha[:12]}... but the command hashed {self.sha256[:12]}...: "
                "the file changed during the import"
            )
        self.read = read_hypotheses(self.file)
        self.matched, self.how = _match(episodes, self.read)
        self.sha256 = sha

    def provenance(self) -> dict[str, JSON]:
        """What run.json records of the imported file (``imported``)."""
        read = self.read
        return {
            "file": str(self.file),
            "sha256": self.sha256,
            "format": FORMAT,
            "system": self.system,
            "matching": self.how,
            "labelled": bool(read and read.labelled),
            "label_models": list(read.models) if read else [],
            "paper_judge": PAPER_MODEL,
            "shipped_judge": f"accuracy_{SOURCE}",
            "errata": self.errata.spec,
        }

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """One prediction per hypothesis of this episode's question, judged by the run's judge."""
        self._run_llm = llm
        rows = [self.matched[q.qa_id] for q in episode.qa if q.qa_id in self.matched]
        items = [
            LongMemEvalItem(qa.question, qa.answers[0], h.hypothesis, qa.kind, _abstention(qa))
            for qa, h in rows
        ]
        verdicts = self.judge.judge_many(items) if items else []
        last = max(s.index for s in episode.sessions)
        predictions = [
            self._prediction(episode, last, qa, h, v.to_dict())
            for (qa, h), v in zip(rows, verdicts, strict=True)
        ]
        return EpisodeResult(predictions=predictions)

    def _prediction(
        self, episode: Episode, last: int, qa: QAItem, h: Hypothesis, verdict: dict[str, JSON]
    ) -> Prediction:
        abstention = _abstention(qa)
        qid = h.question_id
        subsets = [qa.kind, *(["abstention"] if abstention else []), *self.errata.subsets(qid)]
        meta: dict[str, Any] = {
            "qa_id": qa.qa_id,
            "question": qa.question,
            "question_id": qid,
            "question_type": qa.kind,
            "abstention": abstention,
            "question_session": last,
            "evidence": list(qa.evidence),
            "subsets": subsets,
            "judge": verdict,
            "imported": {"item": qid, "where": h.where, "label_model": h.label_model},
            **self.errata.meta(qid),
        }
        if h.label is not None:  # the authors' judge read the release's answer key
            meta["judges"] = shipped_values(SOURCE, (h.label,))
            meta["shipped"] = {"judge": f"accuracy_{SOURCE}", "key": RELEASE_KEY}
        return Prediction(
            pred_id=f"{qa.qa_id}/after_s{last}",
            episode_id=episode.episode_id,
            session_index=last,
            kind="answer",
            prompt_hash=f"imported:{(self.sha256 or '')[:9]}",
            output=h.hypothesis,
            reference=qa.answers[0] if qa.answers else "",
            meta=meta,
        )

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name outside ``METRICS`` (the checks call it before any job runs)."""
        refuse_unknown("longmemeval_import metric", names, METRICS)

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], LongMemEvalImportSummary]:
        """Accuracy of the run's judge and of the shipped labels, their agreement (``_score``)."""
        self.check_metrics(metric_names)
        scores, summary = score_import(predictions)
        summary["judge"] = {**self.judge.describe(), **summary.get("judge", {})}
        add_judge_usage(summary, self.judge, self._run_llm)
        asked = {str(p.meta.get("question_id")) for p in predictions if p.kind == "answer"}
        summary["imported"] = {
            "shipped_judge": f"accuracy_{SOURCE}",
            "label_models": list(self.read.models) if self.read else [],
            "paper_judge": PAPER_MODEL,
        }
        if self.errata.spec is not None:
            summary["errata"] = self.errata.describe(asked)
        return scores, summary


def _abstention(qa: QAItem) -> bool:
    """The question's abstention flag (the loader's; else the authors' rule on the id)."""
    flag = qa.meta.get("abstention")
    if isinstance(flag, bool):
        return flag
    return "_abs" in str(qa.meta.get("question_id", ""))


def _match(
    episodes: Sequence[Episode], read: HypothesisFile
) -> tuple[dict[str, tuple[QAItem, Hypothesis]], dict[str, Any]]:
    """Match hypotheses to the loaded questions by ``question_id``; say how it went."""
    by_id: dict[str, QAItem] = {}
    for episode in episodes:
        for qa in episode.qa:
            qid = qa.meta.get("question_id")
            if qid is None:
                raise DatasetFormatError(
                    f"{read.path.name}: the dataset's {qa.qa_id} has no question_id: "
                    "import-answers --format longmemeval needs dataset=longmemeval"
                )
            by_id[str(qid)] = qa
    matched = {
        by_id[h.question_id].qa_id: (by_id[h.question_id], h)
        for h in read.hypotheses
        if h.question_id in by_id
    }
    left_out = [h.question_id for h in read.hypotheses if h.question_id not in by_id]
    if not matched:
        raise DatasetFormatError(
            f"{read.path.name}: none of its {len(read.hypotheses)} question ids is a loaded "
            f"LongMemEval question (first: {read.hypotheses[0].question_id!r}, at "
            f"{read.hypotheses[0].where}): another benchmark's file, or questions filtered out"
        )
    how = {
        "scheme": "id",
        "rule": "question_id equals the loaded question's question_id",
        "answers": len(read.hypotheses),
        "matched": len(matched),
        "not_loaded": len(left_out),
        "not_loaded_ids": left_out[:SHOWN],
        "unanswered": len(by_id) - len(matched),
    }
    return matched, how
