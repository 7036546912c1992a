"""Protocol ``locomo_qa``: LoCoMo's question answering (Maharana et al. 2024, sec. 4.1 / 5.1).

Replay: the method observes the conversation's sessions in order; each question is asked once,
after the last session (LoCoMo's setting; ``ask_after: last``) or, as an option, right after the
session holding its last evidence turn (``ask_after: evidence``; a question without evidence is
asked after the last session). Asking is a probe: the method recalls for the original question
(``Query`` with the question, empty history) and must not change its store
(``check_unperturbed``); the generator answers from the recalled memory with LoCoMo's own RAG
prompt (``task_eval/evaluate_gpts.py``: the retrieved context, a blank line, ``QA_PROMPT``),
with the authors' per-category question: category 2 gets "Use DATE of CONVERSATION to answer
with an approximate date.", category 5 becomes their two-option question "Select the correct
answer: (a) {} (b) {}." between "Not mentioned in the conversation" and the bait answer, in an
order drawn per question (seeded by the question id, where the authors used ``random``), sent
with ``QA_PROMPT_CAT_5``; a reply "a"/"(a)" (or b) is mapped back to its option text as their
``get_cat_5_answer`` does. ``oracle_context`` (default false) answers from the gold evidence
turns instead (the reader ceiling of failure attribution).

Scores (``protocols.locomo.score_locomo``): ``f1`` (LoCoMo's answer F1 per category, all five),
``j`` (Mem0's judge on categories 1-4 as Mem0 reports it; category 5 is not judged), ``b1`` and
``f1_mem0`` (Mem0's BLEU-1 and its token-set F1, categories 1-4: ``_mem0_scores``),
``recall_at_5``/``recall_at_10``/``evidence_recall`` (evidence turns among the first k / all
recalled items' sources), each pooled and per category (``subsets``: the category names and
``answerable`` = categories 1-4), with episode-clustered intervals (10 conversations: 10
clusters, so intervals are wide) and the per-episode sums for paired tests.

Timing (per stage, for ``summary["latency"]`` and ``recallbench view``): each session's memory
construction (``observe_s`` on its ``memory`` record: ``observe`` plus an equal share of the
episode's ``prefetch_episode``), each question's recall (``recall_s``: its ``recall`` plus an
equal share of its batch's ``prefetch``) and answer generation (``generate_s``: see
``_generate_timing``). The judge's time is not part of any stage.

Deviations:
- The authors' RAG retrieves dialog turns, observations or session summaries with its own
  retriever; here the memory method's recall is the context (that is the point of the protocol).
- A question without evidence (4 in the release) is not scored for recall. The authors'
  per-question scorer gives it 1, their aggregate (``evaluation_stats.py``) counts it 0 (it
  divides by every question but adds recall only for those with evidence): ``_scoring``.
- Malformed evidence ids are repaired or dropped by the loader (``datasets.locomo`` quirks
  ``evidence_joined``/``evidence_repaired``/``evidence_missing``: 9 questions of the release).
  The authors' code compares the raw id strings with the retrieved dia ids, so a malformed id is
  never recalled there; here a repaired id can be, and a dropped one leaves the denominator:
  recall differs from theirs on those 9 questions.
- The authors' offline stand-in does not exist: on the extractive backend the reader is the
  recalled item sharing most content words with the question ("Not mentioned in the
  conversation" when none does), and category 5 picks the bait only when its words are in that
  item: a documented no-LLM baseline, never a GPT number.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, ClassVar

from recallbench.datasets import needs
from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges import Judge, JudgeItem
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import PromptTask
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import (
    EpisodeResult,
    EvalProtocol,
    add_judge_usage,
    memory_state,
    refuse_unknown,
    reply_text,
)
from recallbench.protocols.evidence import EvidenceLocator
from recallbench.protocols.locomo._errata import errata_meta
from recallbench.protocols.locomo._score import METRICS, LocomoSummary, score_locomo
from recallbench.protocols.locomo._tasks import (
    ADVERSARIAL_TASK,
    ANSWER_TASK,
    CHOICE,
    NOT_MENTIONED,
    TEMPORAL_SUFFIX,
    ask_session,
    choice_answer,
    options_for,
)
from recallbench.protocols.qa import Probe, ask_fields
from recallbench.protocols.response import prompt_hash
from recallbench.records import Episode, Prediction, QAItem, Score


class LocomoQAProtocol(EvalProtocol):
    """Ask each LoCoMo question once and score F1, J and recall@k per category."""

    name = "locomo_qa"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge"}
    ASK_AFTER = ("last", "evidence")

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("locomo_qa metric", names, METRICS)

    def __init__(
        self,
        judge: Judge | None = None,
        ask_after: str = "last",
        session_minutes: float = 30.0,
        max_tokens: int = 32,
        temperature: float = 0.0,
        seed: int | None = 0,
        check_unperturbed: bool = True,
        oracle_context: bool = False,
    ) -> None:
        if judge is None:
            raise ConfigError("protocol locomo_qa needs a judge: add judge=mem0_j (+judge=...)")
        if ask_after not in self.ASK_AFTER:
            raise did_you_mean("locomo_qa ask_after", str(ask_after), self.ASK_AFTER)
        self.judge = judge
        self.ask_after = ask_after
        self.session_length = timedelta(minutes=float(session_minutes))
        decoding = {"max_tokens": int(max_tokens), "temperature": float(temperature), "seed": seed}
        self.tasks = {
            key: PromptTask(**{**{f: getattr(t, f) for f in t.__dataclass_fields__}, **decoding})
            for key, t in (("answer", ANSWER_TASK), ("adversarial", ADVERSARIAL_TASK))
        }
        self.check_unperturbed = bool(check_unperturbed)
        self.oracle_context = bool(oracle_context)
        self.locator = EvidenceLocator.of({"mode": "given"})
        self._run_llm: LLMClient | None = None

    def needs(self) -> frozenset[str]:
        """Questions with answers (LoCoMo's QA items)."""
        return frozenset({needs.QA_ITEMS, needs.QA_ANSWERS})

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` and ask every question after its session."""
        self._run_llm = llm
        result = EpisodeResult()
        method.reset(episode)
        started = time.perf_counter()
        method.prefetch_episode(episode)
        prefetch_share = (time.perf_counter() - started) / max(len(episode.sessions), 1)
        last = max(s.index for s in episode.sessions)
        due: dict[int, list[QAItem]] = {}
        for qa in episode.qa:
            due.setdefault(ask_session(qa, self.ask_after, last), []).append(qa)
        for session in episode.sessions:
            started = time.perf_counter()
            method.observe(session)
            observe_s = time.perf_counter() - started + prefetch_share
            before = list(method.snapshot())
            state = memory_state(episode, session.index, before, None)
            meta = {**state.meta, "observe_s": round(observe_s, 6)}
            result.predictions.append(dataclasses.replace(state, meta=meta))
            asked = due.get(session.index, [])
            if asked:
                now = session.start + self.session_length if session.start else None
                result.predictions.extend(
                    self._ask(Probe(episode, session.index, now, asked), method, llm)
                )
            after = list(method.snapshot())
            if self.check_unperturbed and after != before:
                raise RuntimeError(
                    f"{type(method).__name__} changed its memory while answering LoCoMo "
                    f"questions ({episode.episode_id}, after session {session.index})"
                )
            result.snapshots.append((session.index, after))
        return result

    def _ask(self, probe: Probe, method: MemoryMethod, llm: LLMClient) -> list[Prediction]:
        locator = self.locator if self.oracle_context else None
        asker = probe.episode.speakers[0]
        got = ask_fields(probe, asker, method, locator, method_fields=not self.oracle_context)
        rows: list[dict[str, Any]] = []
        for qa, (_, recall, _, fields, recall_s) in zip(probe.asked, got, strict=True):
            row: dict[str, Any] = {"qa": qa, "recall": recall, "fields": fields}
            row["recall_s"] = recall_s
            if qa.meta.get("category") == 5:
                row["options"] = options_for(qa)
                bait_is = "a" if row["options"]["a"] != NOT_MENTIONED else "b"
                choice = CHOICE.format(row["options"]["a"], row["options"]["b"])
                fields.update(question=qa.question + choice, bait=row["options"][bait_is])
                fields["bait_is"] = bait_is
            else:
                suffix = TEMPORAL_SUFFIX if qa.meta.get("category") == 2 else ""
                fields["question"] = qa.question + suffix
            rows.append(row)
        for key in ("answer", "adversarial"):
            group = [r for r in rows if ("options" in r) == (key == "adversarial")]
            started = time.perf_counter()
            results = llm.run_many(self.tasks[key], [r["fields"] for r in group], progress=False)
            share = (time.perf_counter() - started) / max(len(group), 1)
            for r, res in zip(group, results, strict=True):
                r["result"], r["messages"] = res, self.tasks[key].render(**r["fields"])
                r["generate"] = _generate_timing(res.latency_s, res.cached, share)
        return self._judged(probe.episode, probe.session_index, rows)

    def _judged(self, episode: Episode, index: int, rows: list[dict[str, Any]]) -> list[Prediction]:
        for r in rows:
            reply = reply_text(r["result"]).strip()
            r["output"] = choice_answer(reply, r["options"]) if "options" in r else reply
        judged = [r for r in rows if "options" not in r]
        verdicts = self.judge.judge_many(
            [JudgeItem(r["qa"].question, r["qa"].answers[0], r["output"]) for r in judged]
        )
        for r, v in zip(judged, verdicts, strict=True):
            r["verdict"] = v.to_dict()
        return [_prediction(episode, index, r) for r in rows]

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], LocomoSummary]:
        """Per-answer scores and the summary (``score_locomo``), with the judge described."""
        self.check_metrics(metric_names)
        scores, summary = score_locomo(predictions)
        summary["judge"] = {**self.judge.describe(), **summary.get("judge", {})}
        add_judge_usage(summary, self.judge, self._run_llm)
        return scores, summary


def _generate_timing(latency_s: float, cached: bool, share: float) -> dict[str, Any]:
    """The answer stage's seconds of one question: the call's own latency when the backend
    measured one (an API or local model call that was not a cache hit), else its equal share of
    its batch's wall time (the extractive reader, cache hits); ``generate_timed`` says which."""
    if latency_s > 0 and not cached:
        return {"generate_s": round(latency_s, 6), "generate_timed": "call"}
    return {"generate_s": round(share, 6), "generate_timed": "batch_share"}


def _prediction(episode: Episode, index: int, row: dict[str, Any]) -> Prediction:
    qa, recall, res = row["qa"], row["recall"], row["result"]
    category = int(qa.meta.get("category", 0))
    meta: dict[str, Any] = {
        "qa_id": qa.qa_id,
        "question": qa.question,
        "category": category,
        "question_session": qa.after_session,
        "evidence": list(qa.evidence),
        "recalled_sources": [list(item.source_ids) for item in recall.items],
        "n_recalled": len(recall.items),
        "raw_reply": reply_text(res),
        "recall_s": round(row["recall_s"], 6),
        **row["generate"],
        "subsets": [qa.kind] + (["answerable"] if category != 5 else []),
    }
    if "verdict" in row:
        meta["judge"] = row["verdict"]
    if "options" in row:
        meta["options"] = row["options"]
    meta.update(errata_meta(episode, qa))
    if recall.info.get("method") == "oracle":
        meta["oracle"] = recall.info.get("evidence")
    return Prediction(
        pred_id=f"{qa.qa_id}/after_s{index}",
        episode_id=episode.episode_id,
        session_index=index,
        kind="answer",
        prompt_hash=prompt_hash(row["messages"]),
        output=row["output"],
        reference=qa.answers[0] if qa.answers else "",
        recalled=recall.source_ids(),
        usage=res.usage_dict(),
        failure=res.failure,
        meta=meta,
    )
