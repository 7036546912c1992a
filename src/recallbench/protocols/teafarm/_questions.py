"""TeaFarm's questions (``protocols.teafarm``): taken from TeaBag items, a saved TeaBag file, or
generated (session summaries, Fig. 27 questions, the Fig. 28 synthesized session), and saved.

``QuestionSource`` is the collaborator of ``TeaFarmProtocol`` that finds or makes an episode's
``Question``s; it holds the settings it needs (summary source, TeaBag file, the sampled Fig. 27
and Fig. 28 tasks) and takes the question LLM per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

from recallbench.datasets.teabag import (
    SOURCES,
    TeaBagItem,
    inline_sessions,
    read_teabag,
    write_teabag,
)
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import PromptTask, TaskResult
from recallbench.memory import render_history, strip_speaker
from recallbench.protocols.teafarm._tasks import (
    SUMMARY_TASK,
    third_person,
)
from recallbench.records import Episode, Prediction, Session
from recallbench.text import content_words

History = Sequence[Session]


class Question(TypedDict):
    """One counterfactual question with its synthesized session n+1 (``session6``)."""

    qid: str
    asker: str
    responder: str
    question: str
    answer: str
    source_dataset: str
    source: str  # where it came from (TeaBag, a file, the generator that wrote it)
    session6: list[tuple[str, str]]  # (speaker, text), ending with the question


def _gold_summary(session: Session) -> str:
    """The session's gold summary, else its per-speaker session persona (MSC) in the third
    person, else "" (then the summary task runs)."""
    summary = session.gold.get("summary")
    if summary:
        return " ".join(summary) if isinstance(summary, list) else str(summary)
    persona = session.gold.get("persona_session")
    if isinstance(persona, dict):
        return " ".join(third_person(f, who) for who, facts in persona.items() for f in facts)
    return ""


@dataclass(frozen=True)
class QuestionSource:
    """Where TeaFarm's questions come from (see the module docstring).

    Args:
        summaries: ``gold`` (the dataset's summaries when present) or ``llm``.
        teabag_file: TeaBag file read for saved questions and appended with generated ones.
        question_task, session6_task: the Fig. 27 and Fig. 28 tasks (sampled, seeded).
    """

    summaries: Literal["gold", "llm"]
    teabag_file: Path | None
    question_task: PromptTask[dict[str, str] | None]
    session6_task: PromptTask[list[tuple[str, str]] | None]

    def questions(
        self, episode: Episode, history: History, qllm: LLMClient
    ) -> tuple[list[Question], list[Prediction]]:
        """Return the episode's questions (TeaBag items, the saved file, or generated) and the
        predictions recording failed generation steps."""
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

    def _from_items(
        self,
        episode: Episode,
        history: History,
        items: list[TeaBagItem],
        source: str,
        qllm: LLMClient,
    ) -> list[Question]:
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
    def _question(
        qid: str,
        asker: str,
        responder: str,
        question: str,
        answer: str,
        source_dataset: str,
        source: str,
    ) -> Question:
        return {
            "qid": qid,
            "asker": asker,
            "responder": responder,
            "question": question,
            "answer": answer,
            "source_dataset": source_dataset,
            "source": source,
            "session6": [],
        }

    def _generate(
        self, episode: Episode, history: History, source_dataset: str, qllm: LLMClient
    ) -> tuple[list[Question], list[Prediction]]:
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
        failed: list[Prediction] = []
        for q in questions:
            q["session6"], fail = self._session6(episode, history, q, qllm)
            failed.extend([self._failed(episode, history, "session6", fail)] if fail else [])
        self._save(episode, source_dataset, questions)
        return questions, failed

    def _summaries(self, episode: Episode, history: History, qllm: LLMClient) -> list[str]:
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

    def _session6(
        self, episode: Episode, history: History, q: Question, qllm: LLMClient
    ) -> tuple[list[tuple[str, str]], TaskResult[Any] | None]:
        """Synthesize session n+1 (Fig. 28); it always ends with the question (repaired if not).

        Returns the turns and, when the reply was unusable, the failed result (else None).
        """
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

    def _save(self, episode: Episode, source_dataset: str, questions: list[Question]) -> None:
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

    @staticmethod
    def _failed(episode: Episode, history: History, step: str, res: TaskResult[Any]) -> Prediction:
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
