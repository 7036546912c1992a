"""Protocol ``longmemeval_qa``: LongMemEval's question answering (Wu et al., ICLR 2025).

Replay: the method observes the question's haystack sessions in time order (the loader's
order), then the question is asked once, after the last session, at the question's date
(``Query.now`` = ``question_date``). Asking is a probe: the method recalls for the question and
must not change its store (``check_unperturbed``). The reader answers from the recalled memory
with the paper's reading prompt (``_tasks``; ``reading`` as the authors' README names it:
``direct``, ``con``: the "step by step" prompt that extracts the relevant information first,
``con_separate``: first the authors' Chain-of-Note reading note for every recalled item (one
call each, the item's date as its session date), then the step-by-step prompt over the notes,
as their ``--con true``), the question's date filled in as "Current Date". The judge (``judge``
group; ``judge=longmemeval``: the authors' five yes/no prompts chosen by question type and
abstention) labels each answer.

What each answer records (``meta``): ``question_id``, ``question_type``, ``abstention``,
``judge`` (the verdict), ``retrieval`` = ``{"sessions": [ranked session ids], "turns": [ranked
user-turn ids], "granularity": "turn" | "session"}`` in the release's ids (a method that
retrieves nothing, or whose recall is not a ranking: ``unranked``, records nothing), and
``retrieval_gold`` (the relevant ids and corpus sizes, ``_retrieval.Gold``) and
``missing_questions`` (the release's questions this data copy lacks: the loader's ``missing``,
named in every summary of the variant). Ranked sessions /
turns are the sessions / user turns of the recalled items' sources in recall order, each once;
the granularity is "turn" when every recalled item's sources hold at most one user turn (a turn
or a round), else "session" (summaries, facts gathered from several turns).

Scores (``_score``): accuracy (pooled, per question type, abstention), task-averaged accuracy
and the retrieval metrics ``session_*@5/10``, ``turn_*@5/10/50`` (``_retrieval``).

Errata (``errata``: null, ``default`` or a file, ``datasets.longmemeval_errata``, as
``longmemeval_import`` reads them): no answer key is rewritten; a question that no applying,
score-changing entry lists is in the ``clean`` subset of every metric, a listed one records its
entry (``meta["erratum"]``) and the summary says which questions the run flagged (``errata``).

Memory records: one ``memory`` prediction and one snapshot per episode, after the last session
(an S haystack has ~48 sessions per question: a snapshot after each would write ~24,000 store
copies per run); ``observe_s`` is the whole replay's construction time.

Deviations:
- The authors' pipeline retrieves with its own retriever over its own index and formats the
  retrieved sessions or rounds itself (``history_format`` json or nl); here the memory method's
  recall and its own rendering of it are the history (the point of a memory harness).
- Chain-of-Note notes are written per recalled memory item, not per retrieved session or round.
- The authors truncate the history to the reader's context window by tokens; here the method
  decides what it recalls (``full_history`` keeps the latest turns that fit the generator's
  context).
- Offline (extractive backend) the reader and the notes are our twins (``_tasks``): a
  documented no-LLM baseline, never a GPT number.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from recallbench.datasets import needs
from recallbench.datasets.longmemeval import DATE_FORMAT, QUESTION_TYPES
from recallbench.datasets.longmemeval_errata import Errata, load_errata
from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges import Judge
from recallbench.judges.longmemeval import LongMemEvalItem
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import (
    EpisodeResult,
    EvalProtocol,
    add_judge_usage,
    memory_state,
    refuse_unknown,
    reply_text,
)
from recallbench.protocols.longmemeval._retrieval import gold_of
from recallbench.protocols.longmemeval._score import (
    METRICS,
    LongMemEvalSummary,
    score_longmemeval,
)
from recallbench.protocols.longmemeval._tasks import CON_TASK, READINGS, SESSION_BLOCK, read_task
from recallbench.protocols.qa import Asked, Probe, ask_fields
from recallbench.protocols.response import prompt_hash
from recallbench.records import Episode, Prediction, Recall, Score


class LongMemEvalQAProtocol(EvalProtocol):
    """Ask each LongMemEval question once, after its haystack, and judge the answer."""

    name = "longmemeval_qa"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge"}

    def __init__(
        self,
        judge: Judge | None = None,
        reading: str = "con",
        max_tokens: int = 200,
        temperature: float = 0.0,
        seed: int | None = 0,
        check_unperturbed: bool = True,
        unranked: Sequence[str] = (
            "FullHistory",
            "NoMemory",
            "RSumLLM",
            "SessionSummaries",
            "AllMemories",
        ),
        errata: str | None = None,
    ) -> None:
        if judge is None:
            raise ConfigError(
                "protocol longmemeval_qa needs a judge: add judge=longmemeval (+judge=...)"
            )
        if reading not in READINGS:
            raise did_you_mean("longmemeval_qa reading", str(reading), READINGS)
        self.judge = judge
        self.reading = reading
        self.chain_of_note = READINGS[reading][1]
        self.task = read_task(reading, int(max_tokens), float(temperature), seed)
        self.check_unperturbed = bool(check_unperturbed)
        self.unranked = frozenset(str(u) for u in unranked)
        self.errata: Errata = load_errata(errata)
        self._run_llm: LLMClient | None = None

    def needs(self) -> frozenset[str]:
        """Questions with answers."""
        return frozenset({needs.QA_ITEMS, needs.QA_ANSWERS})

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay the haystack, then ask the question at its date."""
        self._run_llm = llm
        result = EpisodeResult()
        method.reset(episode)
        started = time.perf_counter()
        method.prefetch_episode(episode)
        for session in episode.sessions:
            method.observe(session)
        observe_s = time.perf_counter() - started
        last = max(s.index for s in episode.sessions)
        before = list(method.snapshot())
        state = memory_state(episode, last, before, None)
        result.predictions.append(
            dataclasses.replace(state, meta={**state.meta, "observe_s": round(observe_s, 6)})
        )
        now = _question_date(episode)
        asked = ask_fields(Probe(episode, last, now, list(episode.qa)), "user", method)
        result.predictions.extend(self._answer(episode, last, asked, method, llm))
        after = list(method.snapshot())
        if self.check_unperturbed and after != before:
            raise RuntimeError(
                f"{type(method).__name__} changed its memory while answering {episode.episode_id}"
            )
        result.snapshots.append((last, after))
        return result

    def _answer(
        self,
        episode: Episode,
        index: int,
        asked: list[Asked],
        method: MemoryMethod,
        llm: LLMClient,
    ) -> list[Prediction]:
        out = []
        for row in asked:
            qa = row.query
            item = next(q for q in episode.qa if q.question == qa.question)
            fields = dict(row.fields)
            fields["date"] = (qa.now or _question_date(episode)).strftime(DATE_FORMAT)
            fields["question"] = item.question
            notes_s = 0.0
            if self.chain_of_note:
                started = time.perf_counter()
                fields["memory"] = self._notes(row.recall, fields, llm)
                notes_s = time.perf_counter() - started
            started = time.perf_counter()
            res = llm.run(self.task, **fields)
            generate_s = time.perf_counter() - started + notes_s
            output = reply_text(res).strip()
            meta: dict[str, Any] = {
                "qa_id": item.qa_id,
                "question": item.question,
                "question_id": str(item.meta["question_id"]),
                "question_type": item.kind,
                "abstention": bool(item.meta["abstention"]),
                "question_session": index,
                "evidence": list(item.evidence),
                "recalled_sources": [list(i.source_ids) for i in row.recall.items],
                "n_recalled": len(row.recall.items),
                "raw_reply": res.raw,
                "recall_s": round(row.recall_s, 6),
                "generate_s": round(generate_s, 6),
                "generate_timed": "call",
                "subsets": [
                    item.kind,
                    *(["abstention"] if item.meta["abstention"] else []),
                    *self.errata.subsets(str(item.meta["question_id"])),
                ],
                **self.errata.meta(str(item.meta["question_id"])),
                "retrieval_gold": gold_of(episode).to_dict(),
                "missing_questions": [str(q) for q in episode.meta.get("missing") or []],
            }
            ranked = self._ranked(episode, row.recall)
            if ranked is not None:
                meta["retrieval"] = ranked
            messages = self.task.render(**fields)
            out.append(
                Prediction(
                    pred_id=f"{item.qa_id}/after_s{index}",
                    episode_id=episode.episode_id,
                    session_index=index,
                    kind="answer",
                    prompt_hash=prompt_hash(messages),
                    output=output,
                    reference=item.answers[0],
                    recalled=row.recall.source_ids(),
                    usage=res.usage_dict(),
                    failure=res.failure,
                    meta=meta,
                )
            )
        return self._judged(out)

    def _notes(self, recall: Recall, fields: dict[str, object], llm: LLMClient) -> str:
        """Chain-of-Note: one reading note per recalled item, sorted by date, as sessions."""
        rows = [
            {
                "session_date": i.created.strftime(DATE_FORMAT) if i.created else "",
                "content": i.text,
                "date": fields["date"],
                "question": fields["question"],
            }
            for i in recall.items
        ]
        results = llm.run_many(CON_TASK, rows, progress=False) if rows else []
        notes = sorted(
            (
                (str(r["session_date"]), reply_text(res).strip())
                for r, res in zip(rows, results, strict=True)
            ),
            key=lambda x: x[0],
        )
        return "".join(
            SESSION_BLOCK.format(k + 1, d, "\n" + json.dumps({"session_summary": n}))
            for k, (d, n) in enumerate(notes)
        )

    def _ranked(self, episode: Episode, recall: Recall) -> dict[str, Any] | None:
        if not recall.items or str(recall.info.get("method", "")) in self.unranked:
            return None
        turns = {t.turn_id: t.labels for s in episode.sessions for t in s.turns}
        sessions: list[str] = []
        ranked_turns: list[str] = []
        granular = True
        for item in recall.items:
            labels = [turns[s] for s in item.source_ids if s in turns]
            users = [lab for lab in labels if lab["role"] == "user"]
            granular = granular and len(users) <= 1
            for lab in labels:
                if lab["lme_session"] not in sessions:
                    sessions.append(str(lab["lme_session"]))
            for lab in users:
                if lab["lme_id"] not in ranked_turns:
                    ranked_turns.append(str(lab["lme_id"]))
        if not sessions:
            return None
        return {
            "sessions": sessions,
            "turns": ranked_turns,
            "granularity": "turn" if granular else "session",
        }

    def _judged(self, predictions: list[Prediction]) -> list[Prediction]:
        items = [
            LongMemEvalItem(
                p.meta["question"],
                p.reference or "",
                p.output,
                str(p.meta["question_type"]),
                bool(p.meta["abstention"]),
            )
            for p in predictions
        ]
        verdicts = self.judge.judge_many(items)
        return [
            dataclasses.replace(p, meta={**p.meta, "judge": v.to_dict()})
            for p, v in zip(predictions, verdicts, strict=True)
        ]

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name outside ``METRICS`` (the checks call it before any job runs)."""
        refuse_unknown("longmemeval_qa metric", names, METRICS)

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], LongMemEvalSummary]:
        """Per-answer scores and the summary (``score_longmemeval``), with the judge described."""
        self.check_metrics(metric_names)
        scores, summary = score_longmemeval(predictions)
        summary["judge"] = {**self.judge.describe(), **summary.get("judge", {})}
        add_judge_usage(summary, self.judge, self._run_llm)
        if self.errata.spec is not None:
            asked = {str(p.meta.get("question_id")) for p in predictions if p.kind == "answer"}
            summary["errata"] = self.errata.describe(asked)
        return scores, summary


def _question_date(episode: Episode) -> datetime:
    """When the question is asked (the loader's ``meta["question_date"]``, ISO)."""
    return datetime.fromisoformat(str(episode.meta["question_date"]))


__all__ = ["QUESTION_TYPES", "LongMemEvalQAProtocol"]
