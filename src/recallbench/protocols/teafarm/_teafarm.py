"""Protocol ``teafarm``: counterfactual questions after the history (THEANINE sec. 5, App. C/D).

Per episode (THEANINE Fig. 11): (1) summarize sessions 1..n in order (with ``summaries: gold``
the dataset's gold summary, or MSC's per-session persona facts in the third person, when
present; else ``SUMMARY_TASK``); (2)-(3) generate two
counterfactual questions with correct answers, one from each speaker's perspective (Fig. 27,
T=0.75, seeded so the call is cacheable); (4) synthesize a session n+1 of 10-15 utterances that
ends with the question (Fig. 28); (5) replay sessions 1..n into the memory method, recall for
the session-(n+1) dialogue and generate the answerer's reply with the method's own prompt;
(6) judge it with Fig. 29 -> success rate (Correct = not fooled by the premise).

Questions come, in this order, from the episode's ``teafarm`` QAItems (a loaded TeaBag file),
from ``teabag_file`` when it already holds the episode, or are generated and then appended to
``teabag_file`` (TeaBag interchange format, ``datasets/teabag.py``) for reuse. Every prediction
names its question source (``meta["question_source"]``): the table says which generator made
the questions. With the ``extractive`` backend the generators and the judge are the offline
twins in ``protocols/teafarm/_offline.py``: a documented no-LLM stand-in, not GPT-4.

Oracle context (``oracle_context: true``, not in the paper): the reply is generated from the
question's evidence turns instead of the method's recall (the turns of sessions 1..n that carry
the correct answer's key words, ``protocols.evidence`` with ``evidence`` settings, default
``answer_turns`` over the history), rendered by the method's own prompt; ``meta["oracle"]``
records them. Failure attribution reads it as the method's reader ceiling.

Deviations: the paper's step-1 summarization prompt is not printed (ours, or gold summaries);
the session-(n+1) start is the last session's start plus ``gap_days`` (the paper gives none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal

from recallbench.errors import ConfigError, did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.metrics.summary import Summary
from recallbench.payloads import TeaFarmMeta, meta_of
from recallbench.protocols.base import EvalProtocol, refuse_unknown
from recallbench.protocols.evidence import Evidence, EvidenceLocator, oracle_recall
from recallbench.protocols.response import EpisodeResult, prompt_hash
from recallbench.protocols.teafarm._questions import History, Question, QuestionSource
from recallbench.protocols.teafarm._tasks import (
    JUDGE_TASK,
    QUESTION_TASK,
    SESSION6_TASK,
)
from recallbench.records import Episode, Prediction, QAItem, Query, Score, Turn
from recallbench.verdict import CORRECT, INCORRECT, JSONValue, Verdict, require_verdict

TEAFARM_METRICS = ("success_rate",)


class TeaFarmSummary(Summary, total=False):
    """A ``teafarm`` run's summary: the success rate and where its questions and verdicts came
    from (question sources, judges, failure counts)."""

    teafarm: dict[str, JSONValue]


class TeaFarmProtocol(EvalProtocol):
    """Ask counterfactual questions at the end of a synthesized next session and judge replies."""

    name = "teafarm"
    # separate LLMs as in the paper (GPT-4 questions and judge); null configs: the run's LLM
    MODELS: ClassVar[dict[str, str]] = {
        "question_generator": "generator",
        "judge_generator": "generator",
    }

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("teafarm metric", names, TEAFARM_METRICS)

    def __init__(
        self,
        summaries: Literal["gold", "llm"] = "gold",
        teabag_file: str | None = None,
        history_sessions: int | None = 5,
        gap_days: float = 7.0,
        question_generator: LLMClient | None = None,
        judge_generator: LLMClient | None = None,
        max_tokens: int = 128,
        temperature: float = 0.0,
        question_temperature: float = 0.75,
        seed: int | None = 0,
        oracle_context: bool = False,
        evidence: Mapping[str, Any] | None = None,
    ) -> None:
        if summaries not in ("gold", "llm"):
            raise did_you_mean("teafarm summaries", summaries, ("gold", "llm"))
        self.history_sessions = history_sessions
        self.gap = timedelta(days=float(gap_days))
        self.question_llm, self.judge_llm = question_generator, judge_generator
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        self.oracle_context = bool(oracle_context)
        self.locator = EvidenceLocator.of(evidence, mode="answer_turns", scope="history")
        t, sampled_seed = float(question_temperature), 0 if seed is None else seed
        self.question_source = QuestionSource(
            summaries,
            Path(teabag_file) if teabag_file else None,
            dataclasses.replace(QUESTION_TASK, temperature=t, seed=sampled_seed),
            dataclasses.replace(SESSION6_TASK, temperature=t, seed=sampled_seed),
        )

    # -- the episode -----------------------------------------------------------------------

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Generate or load the questions, replay the history, answer and judge."""
        if len(episode.speakers) != 2:
            raise ConfigError(
                f"teafarm needs two-speaker episodes; {episode.episode_id} has {episode.speakers}"
            )
        history = (
            episode.sessions[: self.history_sessions] if self.history_sessions else episode.sessions
        )
        result = EpisodeResult()
        qllm = self.question_llm or llm
        questions, failed = self.question_source.questions(episode, history, qllm)
        result.predictions.extend(failed)
        method.reset(episode)
        for session in history:
            method.observe(session)
            result.snapshots.append((session.index, list(method.snapshot())))
        judge_llm = self.judge_llm or llm
        for q in questions:
            result.predictions.append(self._answer(episode, history, q, method, llm, judge_llm))
        return result

    def _answer(
        self,
        episode: Episode,
        history: History,
        q: Question,
        method: MemoryMethod,
        llm: LLMClient,
        judge_llm: LLMClient,
    ) -> Prediction:
        last = history[-1]
        index = last.index + 1
        turns = tuple(
            Turn(f"{q['qid']}/s{index}/{j}", speaker, text)
            for j, (speaker, text) in enumerate(q["session6"])
        )
        now = last.start + self.gap if last.start else None
        query = Query(episode.episode_id, index, turns, q["responder"], now)
        before = list(method.snapshot())
        oracle = self.evidence(episode, history, q) if self.oracle_context else None
        recall = method.recall(query) if oracle is None else oracle_recall(episode, oracle, now)
        messages = method.prompt(query, recall)
        res = llm.chat(
            messages,
            name="response",
            stage="answer",
            offline=lambda: method.offline_response(query, recall),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )
        response = res.value if isinstance(res.value, str) else res.raw
        verdict = judge_llm.run(
            JUDGE_TASK, query=q["question"], answer=q["answer"], response=response
        )
        return Prediction(
            pred_id=f"{q['qid']}/teafarm",
            episode_id=episode.episode_id,
            session_index=index,
            kind="teafarm",
            prompt_hash=prompt_hash(messages),
            output=response,
            reference=q["answer"],
            recalled=recall.source_ids(),
            usage=res.usage_dict(),
            failure=res.failure,
            meta={
                "qid": q["qid"],
                "question": q["question"],
                "asker": q["asker"],
                "responder": q["responder"],
                "session6": [list(t) for t in q["session6"]],
                "source_dataset": q["source_dataset"],
                "question_source": q["source"],
                "recall_text": recall.text,
                "n_recalled": len(recall.items),
                "memory_changed_by_recall": list(method.snapshot()) != before,
                **({} if oracle is None else {"oracle": oracle.to_dict()}),
                "judge": Verdict(
                    label=CORRECT if verdict.value else INCORRECT,
                    raw=verdict.raw,
                    parsed=verdict.failure is None,
                    failure=verdict.failure,
                    usage=verdict.usage_dict(),
                    judge=JUDGE_TASK.name,
                    backend=judge_llm.backend.name,
                    model=judge_llm.model,
                    prompt=JUDGE_TASK.source,
                ).to_dict(),
            },
        )

    def evidence(self, episode: Episode, history: History, q: Question) -> Evidence:
        """The turns of the history that carry ``q``'s correct answer (``self.locator``)."""
        qa = QAItem(q["qid"], q["question"], (q["answer"],), history[-1].index)
        return self.locator.locate(episode, qa, q["responder"], history)

    # -- scoring ---------------------------------------------------------------------------

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], TeaFarmSummary]:
        """Success rate (Correct / judged questions), overall and per source dataset.

        Intervals are episode-clustered bootstrap CIs (``metrics.bootstrap``): an episode's
        counterfactual questions share its summaries and its memory.
        """
        from recallbench.metrics.bootstrap import Additive, ci_fields

        self.check_metrics(metric_names)
        judged = [p for p in predictions if p.kind == "teafarm"]
        verdicts = [require_verdict(p) for p in judged]
        metas = [meta_of(p, TeaFarmMeta) for p in judged]
        scores = [
            Score(p.pred_id, "success_rate", float(v.correct))
            for p, v in zip(judged, verdicts, strict=True)
        ]

        def stat(pairs: Sequence[tuple[Prediction, float]]) -> Additive | None:
            rows = [[v, 1.0] for _, v in pairs]
            ids = [p.episode_id for p, _ in pairs]
            return Additive.from_items(ids, rows, {"fn": "ratio"}) if rows else None

        values = [s.value for s in scores]
        mean = sum(values) / len(values) if values else 0.0
        per_source: dict[str, list[tuple[Prediction, float]]] = {}
        for p, v in zip(judged, values, strict=True):
            per_source.setdefault(meta_of(p, TeaFarmMeta)["source_dataset"], []).append((p, v))
        entry = {
            "value": mean,
            "mean": mean,
            "n": len(values),
            "per_source": {
                k: {
                    "value": sum(v for _, v in pv) / len(pv),
                    "n": len(pv),
                    **ci_fields(stat(pv), full=False),
                }
                for k, pv in per_source.items()
            },
            "session_mean": mean,
            **ci_fields(stat(list(zip(judged, values, strict=True)))),
        }
        entry["session_mean_ci95"] = entry["ci95"]
        summary: TeaFarmSummary = {
            "metrics": {"success_rate": entry},
            "teafarm": {
                "question_sources": [*sorted({m["question_source"] for m in metas})],
                "judges": [*sorted({f"{v.backend}:{v.model}" for v in verdicts})],
                "judge_parse_failures": sum(not v.parsed for v in verdicts),
                "generation_failures": sum(p.kind == "teafarm_generation" for p in predictions),
                "recall_changed_memory": sum(m["memory_changed_by_recall"] for m in metas),
            },
        }
        return scores, summary
