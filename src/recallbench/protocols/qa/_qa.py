"""Protocol ``qa``: probing questions after every session, judged 1 / 0 / 2 (LUFY sec. 5.4).

For each episode the memory method observes the sessions in order. After ``observe(session)``
(where LUFY-family methods forget, so the questions meet the post-forgetting store) every
question created up to that session (``QAItem.after_session <= session.index``) is asked: the
method recalls for a probe ``Query`` (question set, empty history; methods must not change their
state for it, which ``check_unperturbed`` verifies by comparing the store before and after), the
generator answers from the recalled memory (``QA_ANSWER_TASK``), and a judge labels the answer
1 correct / 0 incorrect / 2 don't-know (LUFY App. C.1). The method never sees the label answer:
only the judge does, after the method has answered.

After every session the method's ``retention()`` (cumulative created / retained memories) is
recorded as a ``memory`` prediction. Scores (precision / recall / F1 per session and per
question-session, retention): ``recallbench.protocols.qa.scores``.

Replay (``replay_turns``, default on): before observing a session, the method recalls for every
reply of the other speaker with the dialogue so far, as the live chatbot did before replying; no
reply is generated (the logs hold the real ones). Retrieval-driven state (LUFY R1/R2 counters,
MemoryBank's recall counts, live writes) thus evolves as in the user study.

Settings (``conf/protocol/qa*.yaml``): ``judge`` (a ``conf/judge`` mapping), ``sessions`` (ask
after these 1-based sessions; null: all), ``user_index`` (index in ``Episode.speakers`` of the
person the questions are about; LUFY: -1, the user), ``session_minutes`` (simulated length of a
session: the probe's ``now``), ``max_tokens``, ``temperature``, ``check_unperturbed``,
``replay_turns``; ``oracle_context`` (default false): answer from the question's gold evidence
turns instead of the method's recall (``protocols.evidence.oracle_recall``, located by
``evidence``, a ``{mode, scope, threshold}`` mapping of ``protocols.evidence.EvidenceLocator``,
default ``auto`` in the question's session), recorded in ``meta["oracle"]``: the reader ceiling
of failure attribution (``analysis.attribution``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import ClassVar

from recallbench.datasets import needs
from recallbench.errors import ConfigError
from recallbench.judges import Judge, JudgeItem
from recallbench.llm.protocol import LLMClient
from recallbench.llm.task import PromptTask
from recallbench.memory import HasRetention, MemoryMethod, replay_recalls
from recallbench.protocols.base import (
    EvalProtocol,
    JudgedSummary,
    add_judge_usage,
    memory_state,
    refuse_unknown,
    reply_text,
)
from recallbench.protocols.evidence import EvidenceLocator
from recallbench.protocols.qa._ask import Probe, ask_fields
from recallbench.protocols.qa.scores import QA_METRICS, score_qa
from recallbench.protocols.response import EpisodeResult, prompt_hash
from recallbench.records import (
    JSON,
    Episode,
    MemoryItem,
    Prediction,
    QAItem,
    Score,
    Session,
)
from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import content_stems
from recallbench.text import light_stem as stem

# Ours: LUFY asks "each model the full set of questions" (sec. 5.4) but prints no answering
# prompt. This one keeps the chatbot's voice while asking for an answer about the user, since the
# C.1 judge gives 0 to answers that use "I" as the subject.
QA_ANSWER_PROMPT = (
    "You are {bot}, a chatbot who has talked with {user} before. Answer the question about "
    "{user} using only your memory of those conversations below. Answer in one short sentence "
    "about {user}, in the third person. If the memory does not contain the answer, reply "
    "exactly: I don't know.\n\n"
    "Memory:\n{memory}\n\n"
    "Question: {question}\n"
    "Answer:"
)
QA_ANSWER_SOURCE = "ours (LUFY sec. 5.4 prints no answering prompt)"
DONT_KNOW_ANSWER = "I don't know."


def offline_answer(
    question: str, items: Sequence[str] = (), names: Sequence[str] = (), **_: object
) -> str:
    """Answer without an LLM: the recalled item sharing most content words with the question.

    Ties go to the earlier item (the method's ranking). "I don't know." when nothing was
    recalled or no recalled item shares a content word with the question (what the answering
    prompt asks an LLM to say when the memory lacks the answer). ``names`` (the speakers) do not
    count as overlap: every utterance of the user names the user.
    """
    skip = {stem(w) for name in names for w in words(name)}
    asked = {stem(w) for w in content(words(question))} - skip
    best, best_overlap = DONT_KNOW_ANSWER, 0
    for text in items:
        overlap = len(asked & content_stems(text))
        if overlap > best_overlap:
            best, best_overlap = text, overlap
    return best


QA_ANSWER_TASK = PromptTask(
    name="qa.answer",
    template=QA_ANSWER_PROMPT,
    offline=offline_answer,
    fallback="",
    stage="answer",
    max_tokens=64,
    temperature=0.0,
    source=QA_ANSWER_SOURCE,
)


class QAProtocol(EvalProtocol):
    """Ask every question created so far after each session and judge the answers."""

    name = "qa"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge"}  # built by the cli from conf/judge

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("qa metric", names, QA_METRICS)

    def __init__(
        self,
        judge: Judge | None = None,
        sessions: Sequence[int] | None = None,
        user_index: int = -1,
        session_minutes: float = 30.0,
        max_tokens: int = 64,
        temperature: float = 0.0,
        check_unperturbed: bool = True,
        replay_turns: bool = True,
        seed: int | None = 0,
        oracle_context: bool = False,
        evidence: Mapping[str, JSON] | None = None,
    ) -> None:
        if judge is None:
            raise ConfigError(
                "protocol qa needs a judge: add judge=lexical or judge=llm "
                "(+judge=... when the config has no judge group yet)"
            )
        self.judge = judge
        self.sessions = None if sessions is None else {int(s) for s in sessions}
        self.user_index = int(user_index)
        self.session_length = timedelta(minutes=float(session_minutes))
        self.task = PromptTask(
            **{
                **{f: getattr(QA_ANSWER_TASK, f) for f in QA_ANSWER_TASK.__dataclass_fields__},
                "max_tokens": int(max_tokens),
                "temperature": float(temperature),
                "seed": seed,
            }
        )
        self.check_unperturbed = check_unperturbed
        self.replay_turns = replay_turns
        self.oracle_context = bool(oracle_context)
        self.locator = EvidenceLocator.of(evidence)
        self._run_llm: LLMClient | None = None

    def needs(self) -> frozenset[str]:
        """Questions with gold answers to judge against."""
        return frozenset({needs.QA_ITEMS, needs.QA_ANSWERS})

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` through ``method``, asking and judging after every session."""
        judge, self._run_llm = self.judge, llm
        result = EpisodeResult()
        method.reset(episode)
        method.prefetch_episode(episode)
        for session in episode.sessions:
            if self.replay_turns:
                self._replay(episode, session, method)
            method.observe(session)
            before = list(method.snapshot())
            result.predictions.append(self._memory_state(episode, session.index, method, before))
            if self.sessions is None or session.index in self.sessions:
                now = session.start + self.session_length if session.start else None
                asked = [q for q in episode.qa if q.after_session <= session.index]
                answers = self._answer(Probe(episode, session.index, now, asked), method, llm)
                result.predictions.extend(self._judge_all(answers, asked, judge))
            after = list(method.snapshot())
            if self.check_unperturbed and after != before:
                raise RuntimeError(
                    f"{type(method).__name__} changed its memory while answering probe "
                    f"questions ({episode.episode_id}, after session {session.index}): "
                    "evaluation must not perturb memory (QAProtocol.check_unperturbed)"
                )
            result.snapshots.append((session.index, after))
        return result

    def _replay(self, episode: Episode, session: Session, method: MemoryMethod) -> None:
        """Recall before every reply of the non-user speaker, as the live system did.

        No reply is generated (the logs hold the real ones): this only lets retrieval-driven
        state (LUFY R1/R2, MemoryBank's recall counts, live writes) evolve as in the study.
        """
        replay_recalls(method, episode, session, episode.speakers[self.user_index])

    def _memory_state(
        self, episode: Episode, index: int, method: MemoryMethod, items: list[MemoryItem]
    ) -> Prediction:
        """The session's memory prediction (a hook: ``qa_gvd`` adds the words stored)."""
        retention = method.retention() if isinstance(method, HasRetention) else None
        return memory_state(episode, index, items, retention)

    def _answer(self, probe: Probe, method: MemoryMethod, llm: LLMClient) -> list[dict[str, JSON]]:
        episode, index, _, asked = probe
        user = episode.speakers[self.user_index]
        others = [s for s in episode.speakers if s != user]
        bot = others[0] if others else "the assistant"
        rows, fields = [], []
        locator = self.locator if self.oracle_context else None
        got = ask_fields(probe, user, method, locator)
        for qa, (_, recall, oracle, memory_fields, _) in zip(asked, got, strict=True):
            fields.append({**memory_fields, "question": qa.question, "user": user, "bot": bot})
            rows.append(
                {
                    "qa": qa,
                    "recall": recall,
                    "index": index,
                    "user": user,
                    "episode_id": episode.episode_id,
                    **({} if oracle is None else {"oracle": oracle.to_dict()}),
                }
            )
        results = llm.run_many(self.task, fields, progress=False) if fields else []
        for row, res, f in zip(rows, results, fields, strict=True):
            row["result"] = res
            row["messages"] = self.task.render(**f)
        return rows

    def _judge_all(
        self, rows: list[dict[str, JSON]], asked: list[QAItem], judge: Judge
    ) -> list[Prediction]:
        items = [
            JudgeItem(r["qa"].question, " / ".join(r["qa"].answers), reply_text(r["result"]))
            for r in rows
        ]
        verdicts = judge.judge_many(items)
        out = []
        for row, item, verdict in zip(rows, items, verdicts, strict=True):
            qa, res, recall = row["qa"], row["result"], row["recall"]
            out.append(
                Prediction(
                    pred_id=f"{qa.qa_id}/after_s{row['index']}",
                    episode_id=row["episode_id"],
                    session_index=row["index"],
                    kind="answer",
                    prompt_hash=prompt_hash(row["messages"]),
                    output=item.answer,
                    reference=item.label_answer,
                    recalled=recall.source_ids(),
                    usage=res.usage_dict(),
                    failure=res.failure,
                    meta={
                        "qa_id": qa.qa_id,
                        "question": qa.question,
                        "question_session": qa.after_session,
                        "user": row["user"],
                        "n_recalled": len(recall.items),
                        "judge": verdict.to_dict(),
                        **({"oracle": row["oracle"]} if "oracle" in row else {}),
                    },
                )
            )
        return out

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], JudgedSummary]:
        """Return per-answer scores and the run summary (``scores.score_qa``).

        A judge with its own LLM (``judge.generator`` set) has its usage and cost in
        ``summary["judge_usage"]``; a judge on the run's LLM is in the run's ``usage.json``.
        """
        self.check_metrics(metric_names)
        scores, summary = score_qa(predictions, self.judge.describe())
        add_judge_usage(summary, self.judge, self._run_llm)
        return scores, summary
