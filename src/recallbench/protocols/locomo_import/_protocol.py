"""Protocol ``locomo_import``: a published LoCoMo answer file replayed as an ordinary run.

``recallbench import-answers FILE --format F --name NAME`` runs this protocol through the run
layer (``run.runner.Runner``), so an imported run is a run folder like any other. ``prepare``
reads the file (``_formats``), checks its sha256 against the one the command computed, and
matches every answer to the loaded release's question (``_match``); ``run_episode`` emits one
``answer`` prediction per matched question of the episode, the published answer as output,
judged by the run's judge (``judge=mem0_j``: its offline twin on the extractive backend, the
real prompt with an endpoint) and the lexical judge; ``score`` is ``locomo.score_locomo``, the
LoCoMo runs' own scoring (F1, B1, Mem0's F1, J, per category and ``answerable`` = Overall 1-4),
plus the latency percentiles when the source has them.

Metrics beyond the LoCoMo protocol's: ``j_lexical`` (the offline lexical judge) and, for the
shipped verdicts of a source named ``<s>`` (``audit``, ``zep``, ``mem0``, ``shipped``),
``j_<s>_<k>`` per judgment k, ``j_<s>`` their per-question mean (its mean over questions is
the per-run mean the sources publish) and ``j_<s>_majority`` (more than half of the judgments);
``agree_<judge>`` and ``kappa_<judge>``: each offline judge against that majority
(``_agreement``).

Deviations:
- The memory method is not replayed (the answers are given); the run's ``memory`` choice
  (``no_memory``) is a placeholder and the run has no memory snapshots.
- Recall@k is not scored: the files carry no retrieved context (the evidence stays in
  ``meta["gold_evidence"]``).
- The entailment judge is not offered: offline it is unavailable (no NLI model ships,
  ``judges.entailment``), so it has no offline verdicts to add.
- Category 5 is not imported: every published file leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from recallbench.datasets import needs
from recallbench.datasets.download import sha256_file
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.judges import CORRECT, Judge, JudgeItem
from recallbench.judges.lexical import LexicalJudge
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import EpisodeResult, EvalProtocol, add_judge_usage, refuse_unknown
from recallbench.protocols.locomo import (
    METRICS,
    RELEASE_KEY,
    LocomoSummary,
    errata_meta,
    score_locomo,
)
from recallbench.protocols.locomo_import._agreement import agreement_entries
from recallbench.protocols.locomo_import._formats import (
    CATEGORY_NAMING,
    FORMATS,
    JUDGE_OF,
    read_answer_file,
)
from recallbench.protocols.locomo_import._match import Matched, match_answers, merge_latency
from recallbench.records import Episode, Prediction, Score
from recallbench.verdict import JSONValue


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes (hex): the one the downloads are checked with."""
    return sha256_file(Path(path))


def shipped_values(source: str, verdicts: Sequence[bool]) -> dict[str, float]:
    """Per-judgment credit, the mean and the majority of a question's shipped verdicts."""
    if not verdicts:
        return {}
    out = {f"{source}_{k}": float(v) for k, v in enumerate(verdicts, start=1)}
    out[source] = sum(verdicts) / len(verdicts)
    out[f"{source}_majority"] = float(sum(verdicts) * 2 > len(verdicts))
    return out


class ImportSummary(LocomoSummary, total=False):
    """A ``locomo_import`` run's summary: ``locomo_qa``'s, the source's naming and latency."""

    imported: dict[str, JSONValue]  # the shipped judge's metric, the source's category naming
    latency_ms: dict[str, JSONValue]  # the source's per-answer latency: p50, p95, n


class LocomoImportProtocol(EvalProtocol):
    """Replay a published answer file's answers as predictions and score them as LoCoMo's."""

    name = "locomo_import"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge"}

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("locomo_import metric", names, METRICS)

    def __init__(
        self,
        file: str | None = None,
        format: str | None = None,
        sha256: str | None = None,
        latency_file: str | None = None,
        system: str | None = None,
        judge: Judge | None = None,
        seed: int | None = 0,  # the run's seed (every protocol receives it; nothing is drawn)
    ) -> None:
        if format is not None and format not in FORMATS:
            raise did_you_mean("protocol locomo_import format", str(format), FORMATS)
        if judge is None:
            raise ConfigError("protocol locomo_import needs a judge: add judge=mem0_j")
        self.file = Path(file) if file else None
        self.format, self.sha256 = str(format or "jsonl"), sha256
        self._given = bool(file and format)
        self.latency_file = Path(latency_file) if latency_file else None
        self.system = system
        self.judge = judge
        self.lexical = LexicalJudge()
        self.source = JUDGE_OF[self.format]
        self.matched: dict[str, list[Matched]] = {}
        self.how: dict[str, Any] = {}
        self._run_llm: LLMClient | None = None

    def needs(self) -> frozenset[str]:
        """Questions with answers (LoCoMo's QA items)."""
        return frozenset({needs.QA_ITEMS, needs.QA_ANSWERS})

    def prepare(self, episodes: Sequence[Episode]) -> None:
        """Read the file, check its sha256 and match every answer to the release's question."""
        if self.file is None or not self._given:
            raise ConfigError(
                f"protocol locomo_import needs file= and format= (one of {', '.join(FORMATS)}); "
                "use `recallbench import-answers FILE --format F --name NAME`"
            )
        sha = file_sha256(self.file)
        if self.sha256 and sha != self.sha256:
            raise DatasetFormatError(
                f"{self.file}: sha256 {sha[:12]}... but the command hashed {self.sha256[:12]}...: "
                "the file changed during the import"
            )
        answers = read_answer_file(self.file, self.format)
        if self.latency_file is not None:
            answers = merge_latency(answers, read_answer_file(self.latency_file, self.format))
        matched, self.how = match_answers(episodes, answers)
        self.matched = {}
        for m in matched:
            self.matched.setdefault(m.episode.episode_id, []).append(m)
        self.sha256 = sha

    def provenance(self) -> dict[str, JSONValue]:
        """What run.json records of the imported file (``imported``)."""
        out: dict[str, Any] = {
            "file": str(self.file),
            "sha256": self.sha256,
            "format": self.format,
            "system": self.system,
            "matching": self.how,
            "shipped_judge": f"j_{self.source}",
            "category_naming": {str(k): v for k, v in CATEGORY_NAMING[self.format].items()},
        }
        if self.latency_file is not None:
            out["latency_file"] = {"file": str(self.latency_file)}
            out["latency_file"]["sha256"] = file_sha256(self.latency_file)
        return out

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """One prediction per published answer of this episode, judged by the run's judges."""
        self._run_llm = llm
        rows = self.matched.get(episode.episode_id, [])
        items = [JudgeItem(m.qa.question, m.qa.answers[0], m.answer.answer) for m in rows]
        ours = self.judge.judge_many(items)
        lexical = self.lexical.judge_many(items)
        last = max(s.index for s in episode.sessions)
        predictions = [
            self._prediction(m, last, v.to_dict(), float(lex.label == CORRECT))
            for m, v, lex in zip(rows, ours, lexical, strict=True)
        ]
        return EpisodeResult(predictions=predictions)

    def _prediction(
        self, m: Matched, last: int, verdict: dict[str, JSONValue], lexical: float
    ) -> Prediction:
        qa, a = m.qa, m.answer
        category = int(qa.meta["category"])
        judges = {"lexical": lexical, **shipped_values(self.source, a.verdicts)}
        meta: dict[str, Any] = {
            "qa_id": qa.qa_id,
            "question": qa.question,
            "category": category,
            "question_session": qa.after_session,
            "gold_evidence": list(qa.evidence),
            "subsets": [qa.kind, "answerable"],
            "judge": verdict,
            "judges": judges,
            "imported": {"item": a.item_id, "where": a.where},
            **errata_meta(m.episode, qa),
        }
        if a.verdicts:  # the source judged against the release's (uncorrected) answer
            meta["shipped"] = {"judge": f"j_{self.source}", "key": RELEASE_KEY}
        if a.duration_ms is not None:
            meta["duration_ms"] = a.duration_ms
        return Prediction(
            pred_id=f"{qa.qa_id}/after_s{last}",
            episode_id=m.episode.episode_id,
            session_index=last,
            kind="answer",
            prompt_hash=f"imported:{(self.sha256 or '')[:9]}",
            output=a.answer,
            reference=qa.answers[0] if qa.answers else "",
            meta=meta,
        )

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], ImportSummary]:
        """LoCoMo's scoring (``score_locomo``) plus latency; recall is not scored (no context)."""
        self.check_metrics(metric_names)
        scores, scored = score_locomo(predictions)
        summary: ImportSummary = {**scored}
        unscored = [k for k, v in summary["metrics"].items() if not v["n"]]  # recall: no context
        summary["metrics"] = {k: v for k, v in summary["metrics"].items() if k not in unscored}
        summary["metrics"].update(agreement_entries(predictions, self.source))
        summary["judge"] = {**self.judge.describe(), **summary.get("judge", {})}
        add_judge_usage(summary, self.judge, self._run_llm)
        summary["imported"] = {
            "shipped_judge": f"j_{self.source}",
            "category_naming": {str(k): v for k, v in CATEGORY_NAMING[self.format].items()},
        }
        latency = [float(p.meta["duration_ms"]) for p in predictions if "duration_ms" in p.meta]
        if latency:
            p50, p95 = np.percentile(latency, [50, 95])
            summary["latency_ms"] = {"p50": float(p50), "p95": float(p95), "n": len(latency)}
        return scores, summary
