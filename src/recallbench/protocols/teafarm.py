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
twins of ``protocols/teafarm_tasks.py``: a documented no-LLM stand-in, not GPT-4.

Deviations: the paper's step-1 summarization prompt is not printed (ours, or gold summaries);
the session-(n+1) start is the last session's start plus ``gap_days`` (the paper gives none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from recallbench.datasets.teabag import (
    SOURCES,
    TeaBagItem,
    inline_sessions,
    read_teabag,
    write_teabag,
)
from recallbench.errors import ConfigError, did_you_mean
from recallbench.llm.types import LLMClient
from recallbench.memory import MemoryMethod, render_history, strip_speaker
from recallbench.protocols.base import EvalProtocol
from recallbench.protocols.response import EpisodeResult, prompt_hash
from recallbench.protocols.teafarm_tasks import (
    JUDGE_TASK,
    QUESTION_TASK,
    SESSION6_TASK,
    SUMMARY_TASK,
    third_person,
)
from recallbench.records import Episode, Prediction, Query, Score, Turn
from recallbench.text import content_words

TEAFARM_METRICS = ("success_rate",)


def _gold_summary(session) -> str:
    """The session's gold summary, else its per-speaker session persona (MSC) in the third
    person, else "" (then the summary task runs)."""
    summary = session.gold.get("summary")
    if summary:
        return " ".join(summary) if isinstance(summary, list) else str(summary)
    persona = session.gold.get("persona_session")
    if isinstance(persona, dict):
        return " ".join(third_person(f, who) for who, facts in persona.items() for f in facts)
    return ""


class TeaFarmProtocol(EvalProtocol):
    """Ask counterfactual questions at the end of a synthesized next session and judge replies."""

    name = "teafarm"

    def __init__(
        self,
        summaries: str = "gold",
        teabag_file: str | None = None,
        history_sessions: int | None = 5,
        gap_days: float = 7.0,
        question_generator: Mapping[str, Any] | None = None,
        judge_generator: Mapping[str, Any] | None = None,
        cache_path: str | None = None,
        max_tokens: int = 128,
        temperature: float = 0.0,
        question_temperature: float = 0.75,
        seed: int | None = 0,
    ) -> None:
        if summaries not in ("gold", "llm"):
            raise did_you_mean("teafarm summaries", summaries, ("gold", "llm"))
        self.summaries = summaries
        self.teabag_file = Path(teabag_file) if teabag_file else None
        self.history_sessions = history_sessions
        self.gap = timedelta(days=float(gap_days))
        self.gen_cfg, self.judge_cfg, self.cache_path = (
            question_generator,
            judge_generator,
            cache_path,
        )
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        sampled = {"temperature": float(question_temperature), "seed": 0 if seed is None else seed}
        self.question_task = dataclasses.replace(QUESTION_TASK, **sampled)
        self.session6_task = dataclasses.replace(SESSION6_TASK, **sampled)
        self._llms: dict[str, Any] = {}

    # -- collaborators ---------------------------------------------------------------------

    def _llm(self, role: str, cfg: Mapping[str, Any] | None, run_llm):
        """The run's LLM, or a separate one (e.g. GPT-4 for questions / judging as in the paper)."""
        if cfg is None:
            return run_llm
        if role not in self._llms:
            from recallbench.llm import build_llm

            self._llms[role] = build_llm(
                dict(cfg), Path(self.cache_path) if self.cache_path else None
            )
        return self._llms[role]

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
        questions, failed = self._questions(episode, history, self._llm("q", self.gen_cfg, llm))
        result.predictions.extend(failed)
        method.reset(episode)
        for session in history:
            method.observe(session)
            result.snapshots.append((session.index, list(method.snapshot())))
        judge_llm = self._llm("judge", self.judge_cfg, llm)
        for q in questions:
            result.predictions.append(self._answer(episode, history, q, method, llm, judge_llm))
        return result

    def _answer(self, episode, history, q: dict, method, llm, judge_llm) -> Prediction:
        last = history[-1]
        index = last.index + 1
        turns = tuple(
            Turn(f"{q['qid']}/s{index}/{j}", speaker, text)
            for j, (speaker, text) in enumerate(q["session6"])
        )
        now = last.start + self.gap if last.start else None
        query = Query(episode.episode_id, index, turns, q["responder"], now)
        before = list(method.snapshot())
        recall = method.recall(query)
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
                "judge": {
                    "correct": bool(verdict.value),
                    "raw": verdict.raw,
                    "parsed": verdict.failure is None,
                    "failure": verdict.failure,
                    "usage": verdict.usage_dict(),
                    "backend": judge_llm.backend.name,
                    "model": judge_llm.model,
                    "prompt": JUDGE_TASK.source,
                },
            },
        )

    # -- questions: TeaBag items, the saved file, or generation ----------------------------

    def _questions(self, episode: Episode, history, qllm) -> tuple[list[dict], list[Prediction]]:
        source_dataset = str(episode.meta.get("source_dataset") or episode.dataset)
        loaded = [qa for qa in episode.qa if qa.kind == "teafarm"]
        if loaded:
            items = [
                TeaBagItem(
                    qa.qa_id,
                    episode.episode_id,
                    source_dataset,
                    qa.meta["speaker"],
                    qa.question,
                    qa.answers[0],
                    tuple(qa.meta.get("session6") or ()),
                )
                for qa in loaded
            ]
            return self._from_items(episode, history, items, "TeaBag (dataset)", qllm), []
        saved = self._saved(episode.episode_id)
        if saved:
            where = f"TeaBag file {self.teabag_file}"
            return self._from_items(episode, history, saved, where, qllm), []
        return self._generate(episode, history, source_dataset, qllm)

    def _saved(self, episode_id: str) -> list[TeaBagItem]:
        if self.teabag_file is None or not self.teabag_file.exists():
            return []
        return [i for i in read_teabag(self.teabag_file) if i.episode_id == episode_id]

    def _from_items(self, episode, history, items, source: str, qllm) -> list[dict]:
        out = []
        for item in items:
            responder = next(s for s in episode.speakers if s != item.speaker)
            q = self._question(
                item.qid,
                item.speaker,
                responder,
                item.question,
                item.answer,
                item.source_dataset,
                source,
            )
            session6 = [(t["speaker"], t["text"]) for t in item.session6]
            q["session6"] = session6 or self._session6(episode, history, q, qllm)[0]
            out.append(q)
        return out

    @staticmethod
    def _question(qid, asker, responder, question, answer, source_dataset, source) -> dict:
        return {
            "qid": qid,
            "asker": asker,
            "responder": responder,
            "question": question,
            "answer": answer,
            "source_dataset": source_dataset,
            "source": source,
        }

    def _generate(self, episode, history, source_dataset: str, qllm):
        s1, s2 = episode.speakers
        summaries = self._summaries(episode, history, qllm)
        res = qllm.run(
            self.question_task,
            speaker1=s1,
            speaker2=s2,
            summaries="\n".join(summaries),
            summary_list=summaries,
        )
        where = f"{qllm.backend.name}:{qllm.model} (Fig. 27, T={self.question_task.temperature})"
        if res.value is None:
            return [], [self._failed(episode, history, "questions", res)]
        parts = {k: strip_speaker(v, episode.speakers) for k, v in res.value.items()}
        questions = [
            self._question(
                f"{episode.episode_id}-q1", s1, s2, parts["q1"], parts["a1"], source_dataset, where
            ),
            self._question(
                f"{episode.episode_id}-q2", s2, s1, parts["q2"], parts["a2"], source_dataset, where
            ),
        ]
        failed = []
        for q in questions:
            q["session6"], fail = self._session6(episode, history, q, qllm)
            failed.extend([self._failed(episode, history, "session6", fail)] if fail else [])
        self._save(episode, source_dataset, questions)
        return questions, failed

    def _summaries(self, episode, history, qllm) -> list[str]:
        s1, s2 = episode.speakers
        out = []
        for session in history:
            gold = _gold_summary(session)
            if self.summaries == "gold" and gold:
                out.append(gold)
                continue
            res = qllm.run(
                SUMMARY_TASK,
                speaker1=s1,
                speaker2=s2,
                dialogue=render_history(session.turns),
                dialogue_turns=[[t.speaker, t.text] for t in session.turns],
            )
            out.append(str(res.value))
        return out

    def _session6(self, episode, history, q: dict, qllm) -> tuple[list[tuple[str, str]], Any]:
        """Synthesize session n+1 (Fig. 28); it always ends with the question (repaired if not)."""
        last = history[-1]
        topic = max(content_words(render_history(last.turns)), key=len, default="that")
        res = qllm.run(
            self.session6_task,
            Question=f"{q['asker']}: {q['question']}",
            session5=render_history(last.turns),
            asker=q["asker"],
            responder=q["responder"],
            question=q["question"],
            topic=topic,
        )
        turns = [t for t in res.value or () if t[0] in episode.speakers]
        if not turns or turns[-1] != (q["asker"], q["question"]):
            if turns and turns[-1][0] == q["asker"]:
                turns.pop()  # a paraphrased last utterance: use the question itself
            turns.append((q["asker"], q["question"]))
        return turns, (res if res.value is None else None)

    def _save(self, episode: Episode, source_dataset: str, questions: list[dict]) -> None:
        if self.teabag_file is None:
            return
        if source_dataset not in SOURCES:
            raise ConfigError(
                f"teafarm: TeaBag files hold {list(SOURCES)} episodes; {episode.episode_id} is "
                f"from {source_dataset!r}: set protocol.teabag_file=null for this dataset"
            )
        sessions = inline_sessions(episode)
        new = [
            TeaBagItem(
                q["qid"],
                episode.episode_id,
                source_dataset,
                q["asker"],
                q["question"],
                q["answer"],
                tuple({"speaker": s, "text": t} for s, t in q["session6"]),
                sessions,
            )
            for q in questions
        ]
        old = read_teabag(self.teabag_file) if self.teabag_file.exists() else []
        keep = [i for i in old if i.episode_id != episode.episode_id]
        write_teabag(self.teabag_file, keep + new)

    def _failed(self, episode, history, step: str, res) -> Prediction:
        return Prediction(
            pred_id=f"{episode.episode_id}/teafarm-{step}",
            episode_id=episode.episode_id,
            session_index=history[-1].index + 1,
            kind="teafarm_generation",
            prompt_hash="",
            output=res.raw,
            usage=res.usage_dict(),
            failure=res.failure or f"{step} unusable",
            meta={"step": step},
        )

    # -- scoring ---------------------------------------------------------------------------

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], dict]:
        """Success rate (Correct / judged questions), overall and per source dataset.

        Intervals are episode-clustered bootstrap CIs (``metrics.bootstrap``): an episode's
        counterfactual questions share its summaries and its memory.
        """
        from recallbench.metrics.bootstrap import Additive, ci_fields

        for name in metric_names:
            if name not in TEAFARM_METRICS:
                raise did_you_mean("teafarm metric", name, TEAFARM_METRICS)
        judged = [p for p in predictions if p.kind == "teafarm"]
        scores = [
            Score(p.pred_id, "success_rate", float(p.meta["judge"]["correct"])) for p in judged
        ]

        def stat(pairs: Sequence[tuple[Prediction, float]]) -> Additive | None:
            rows = [[v, 1.0] for _, v in pairs]
            ids = [p.episode_id for p, _ in pairs]
            return Additive.from_items(ids, rows, {"fn": "ratio"}) if rows else None

        values = [s.value for s in scores]
        mean = sum(values) / len(values) if values else 0.0
        per_source: dict[str, list[tuple[Prediction, float]]] = {}
        for p, v in zip(judged, values, strict=True):
            per_source.setdefault(p.meta["source_dataset"], []).append((p, v))  # type: ignore[arg-type]
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
        summary = {
            "metrics": {"success_rate": entry},
            "teafarm": {
                "question_sources": sorted({p.meta["question_source"] for p in judged}),
                "judges": sorted(
                    {f"{p.meta['judge']['backend']}:{p.meta['judge']['model']}" for p in judged}
                ),
                "judge_parse_failures": sum(not p.meta["judge"]["parsed"] for p in judged),
                "generation_failures": sum(p.kind == "teafarm_generation" for p in predictions),
                "recall_changed_memory": sum(p.meta["memory_changed_by_recall"] for p in judged),
            },
        }
        return scores, summary
