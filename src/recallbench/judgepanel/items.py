"""Read what the panel re-scores from a run folder: the run's judged answers and memory lines.

A run of protocol ``qa`` (LUFY), ``qa_gvd`` (GVD / CAIM), ``teafarm`` (THEANINE), ``locomo_qa`` or
``locomo_import`` stores one
prediction per judged answer (``kind`` ``answer`` or ``teafarm``) with the question
(``meta.question``), the gold answer (``reference``) and the answer (``output``). Answers whose
gold answer is empty (GVD's unanswerable questions, whose right answer is a refusal) are left
out and counted: no probe can be built from a gold answer that does not exist; so are
LoCoMo's adversarial (category 5) questions, whose reference is the refusal option. LoCoMo runs
(``locomo_qa``) and published answer files imported as runs (``locomo_import``) are read the
same way. Memory lines
(distractors of the verbose probes) are the texts of each episode's store after its last
session (``memory/<episode>.jsonl``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.judgepanel.probes import Question
from recallbench.records import MemoryItem, Prediction, in_memory
from recallbench.run.read import CONFIG_FILE, PREDICTIONS_FILE, RunConfig, RunRecord

PROTOCOLS = ("qa", "qa_gvd", "teafarm", "locomo_qa", "locomo_import")
KINDS = {
    "qa": "answer",
    "qa_gvd": "answer",
    "teafarm": "teafarm",
    "locomo_qa": "answer",
    "locomo_import": "answer",  # a published answer file (``protocols.locomo_import``)
}


@dataclass(frozen=True)
class RunAnswer:
    """One judged answer of the run and the question it answers."""

    pred_id: str
    episode_id: str
    session_index: int
    question: Question
    answer: str


@dataclass(frozen=True)
class RunItems:
    """The run's answers, its distinct questions (first ask of each) and what was left out."""

    protocol: str
    answers: list[RunAnswer]
    questions: list[Question]
    skipped_no_reference: int


def run_protocol(config: RunConfig, run_dir: Path) -> str:
    """The protocol name a run was made with; an error unless the panel can re-score it."""
    name = str(config.protocol.name)
    if name not in PROTOCOLS:
        raise ConfigError(
            f"{run_dir}/{CONFIG_FILE}: protocol {name!r}; judge-panel re-scores runs of a "
            f"QA-style protocol ({', '.join(PROTOCOLS)})"
        )
    return name


def _question_id(p: Prediction) -> str:
    return str(p.meta.get("qa_id") or p.meta.get("qid") or p.pred_id)


def read_items(run: RunRecord, protocol: str) -> RunItems:
    """Read the run's judged answers (module docstring)."""
    path = run.path / PREDICTIONS_FILE
    if PREDICTIONS_FILE in run.missing:
        raise DatasetFormatError(f"{path}: missing; is {run.path} a finished run folder?")
    kind = KINDS[protocol]
    answers: list[RunAnswer] = []
    questions: dict[str, Question] = {}
    skipped = 0
    for p in run.predictions:
        if p.kind != kind:
            continue
        if "question" not in p.meta:
            raise DatasetFormatError(f"{path}: prediction {p.pred_id} has no meta.question")
        if not (p.reference or "").strip() or p.meta.get("category") == 5:
            skipped += 1  # LoCoMo's category 5: its "answer" is the refusal option, no gold
            continue
        qid = _question_id(p)
        key = qid if qid.startswith(p.episode_id) else f"{p.episode_id}/{qid}"
        q = questions.setdefault(
            key, Question(key, p.episode_id, str(p.meta["question"]), str(p.reference))
        )
        answers.append(RunAnswer(p.pred_id, p.episode_id, p.session_index, q, p.output))
    if not answers:
        raise DatasetFormatError(
            f"{path}: no judged {kind!r} prediction with a gold answer to re-score"
        )
    return RunItems(protocol, answers, list(questions.values()), skipped)


def memory_lines(run: RunRecord, episodes: Sequence[str]) -> dict[str, list[str]]:
    """Each episode's memory texts after its last session, the items still in memory
    (``records.in_memory``; none when the run kept no store)."""
    decayed = run.config.memory.decayed_recallable
    out: dict[str, list[str]] = {}
    for episode in episodes:
        last: tuple[MemoryItem, ...] = ()
        after = None
        for snapshot in run.snapshots_of(episode):
            if after is None or snapshot.after_session >= after:
                after, last = snapshot.after_session, snapshot.items
        if after is not None:
            out[episode] = [item.text for item in last if in_memory(item, decayed)]
    return out
