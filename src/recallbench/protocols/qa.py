"""Protocol ``qa``: probing questions after every session, judged 1 / 0 / 2 (LUFY sec. 5.4).

For each episode the memory method observes the sessions in order. After ``observe(session)``
(where LUFY-family methods forget, so the questions meet the post-forgetting store) every
question created up to that session (``QAItem.after_session <= session.index``) is asked: the
method recalls for a probe ``Query`` (question set, empty history; methods must not change their
state for it, which ``check_unperturbed`` verifies by comparing the store before and after), the
generator answers from the recalled memory (``QA_ANSWER_TASK``), and a judge labels the answer
1 correct / 0 incorrect / 2 don't-know (LUFY App. C.1). The method never sees the label answer:
only the judge does, after the method has answered.

Scores (``score``), LUFY Table 11 and Tables 16-18: for session ``s`` and the questions created
after session ``q`` (a "question-session"), precision P = correct / (correct + incorrect) (0
when nothing was answered), recall R = correct / asked, F1 = 2PR / (P + R) (0 when P + R = 0).
``per_session[s]`` is the mean over the question-sessions q <= s (this reproduces Table 11 from
Tables 16-18), F1 from that P and R; ``session_mean`` is the mean over sessions (the tables'
"Avg."); ``value`` pools every judgment of the run (micro average). After every session the
method's ``retention()`` (cumulative created / retained memories) is recorded as a ``memory``
prediction and summarized as ``retained``, ``created`` and ``retention_rate`` (LUFY Table 3:
means over episodes of the per-episode values).

Replay (``replay_turns``, default on): before observing a session, the method recalls for every
reply of the other speaker with the dialogue so far, as the live chatbot did before replying; no
reply is generated (the logs hold the real ones). Retrieval-driven state (LUFY R1/R2 counters,
MemoryBank's recall counts, live writes) thus evolves as in the user study.

Settings (``conf/protocol/qa*.yaml``): ``judge`` (a ``conf/judge`` mapping), ``sessions`` (ask
after these 1-based sessions; null: all), ``user_index`` (index in ``Episode.speakers`` of the
person the questions are about; LUFY: -1, the user), ``session_minutes`` (simulated length of a
session: the probe's ``now``), ``max_tokens``, ``temperature``, ``check_unperturbed``,
``replay_turns``, ``warm_embeddings`` (batch-embed each session's turns and due questions with
``method.embedder`` first, so the one-text-at-a-time recalls hit its cache: speed only).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges import CORRECT, DONT_KNOW, INCORRECT, Judge, JudgeItem, build_judge
from recallbench.judges.lexical import content, stem, words
from recallbench.llm.task import CALL_FAILURE, PARSE_FAILURE, PromptTask
from recallbench.protocols.response import EpisodeResult, prompt_hash
from recallbench.records import Episode, MemoryItem, Prediction, QAItem, Query, Recall, Score

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
NO_MEMORY_TEXT = "(nothing recalled)"

QA_METRICS = (
    "precision",
    "recall",
    "f1",
    "dont_know_rate",
    "retained",
    "created",
    "retention_rate",
)


def offline_answer(
    question: str, items: Sequence[str] = (), names: Sequence[str] = (), **_: Any
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
        overlap = len(asked & {stem(w) for w in content(words(text))})
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


def prf(correct: int, incorrect: int, asked: int) -> tuple[float, float, float]:
    """Return LUFY precision, recall and F1 (each 0 when undefined)."""
    answered = correct + incorrect
    precision = correct / answered if answered else 0.0
    recall = correct / asked if asked else 0.0
    return precision, recall, f1(precision, recall)


def f1(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall (0 when both are 0)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


class QAProtocol:
    """Ask every question created so far after each session and judge the answers."""

    name = "qa"

    def __init__(
        self,
        judge: Mapping[str, Any] | None = None,
        sessions: Sequence[int] | None = None,
        user_index: int = -1,
        session_minutes: float = 30.0,
        max_tokens: int = 64,
        temperature: float = 0.0,
        check_unperturbed: bool = True,
        replay_turns: bool = True,
        warm_embeddings: bool = False,
        seed: int | None = 0,
    ) -> None:
        if judge is None:
            raise ConfigError(
                "protocol qa needs a judge: add judge=lexical or judge=llm "
                "(+judge=... when the config has no judge group yet)"
            )
        self.judge_cfg = dict(judge)
        self.sessions = None if sessions is None else {int(s) for s in sessions}
        self.user_index = int(user_index)
        self.session_length = timedelta(minutes=float(session_minutes))
        self.task = PromptTask(**{
            **{f: getattr(QA_ANSWER_TASK, f) for f in QA_ANSWER_TASK.__dataclass_fields__},
            "max_tokens": int(max_tokens), "temperature": float(temperature), "seed": seed,
        })  # fmt: skip
        self.check_unperturbed = check_unperturbed
        self.replay_turns = replay_turns
        self.warm_embeddings = warm_embeddings
        self._judge: Judge | None = None

    def judge_for(self, llm) -> Judge:
        """Build the judge once (an ``llm`` judge without a generator uses the run's LLM)."""
        if self._judge is None:
            self._judge = build_judge(self.judge_cfg, llm=llm)
        return self._judge

    def run_episode(self, episode: Episode, method, llm) -> EpisodeResult:
        """Replay ``episode`` through ``method``, asking and judging after every session."""
        judge = self.judge_for(llm)
        result = EpisodeResult()
        method.reset(episode)
        for session in episode.sessions:
            if self.warm_embeddings:
                self._warm(episode, session, method)
            if self.replay_turns:
                self._replay(episode, session, method)
            method.observe(session)
            before = list(method.snapshot())
            result.predictions.append(self._memory_state(episode, session.index, method, before))
            if self.sessions is None or session.index in self.sessions:
                now = session.start + self.session_length if session.start else None
                asked = [q for q in episode.qa if q.after_session <= session.index]
                answers = self._answer(episode, session.index, now, asked, method, llm)
                result.predictions.extend(self._judge_all(answers, asked, judge))
            after = list(method.snapshot())
            if self.check_unperturbed and after != before:
                raise RuntimeError(
                    f"{type(method).__name__} changed its memory while answering probe "
                    f"questions ({episode.episode_id}, after session {session.index}): "
                    "evaluation must not perturb memory (notes/API.md)"
                )
            result.snapshots.append((session.index, after))
        return result

    def _warm(self, episode: Episode, session, method) -> None:
        """Embed the session's turns and the questions due after it in one batch.

        Replay and probe recalls embed one text at a time; the embedder caches per text, so
        this turns ~100 single forward passes per session into one batch. Pure speed: results
        are the same up to float rounding between batched and single encoding.
        """
        embedder = getattr(method, "embedder", None)
        if embedder is None or not hasattr(embedder, "encode"):
            return
        texts = [t.text for t in session.turns if t.text.strip()]
        texts += [q.question for q in episode.qa if q.after_session <= session.index]
        if texts:
            embedder.encode(list(dict.fromkeys(texts)))

    def _replay(self, episode: Episode, session, method) -> None:
        """Recall before every reply of the non-user speaker, as the live system did.

        No reply is generated (the logs hold the real ones): this only lets retrieval-driven
        state (LUFY R1/R2, MemoryBank's recall counts, live writes) evolve as in the study.
        """
        user = episode.speakers[self.user_index]
        for j, turn in enumerate(session.turns):
            if j and turn.speaker != user:
                query = Query(episode.episode_id, session.index, session.turns[:j], turn.speaker,
                              session.start)  # fmt: skip
                method.recall(query)

    def _memory_state(self, episode: Episode, index: int, method, items: list[MemoryItem]):
        retention = method.retention() if hasattr(method, "retention") else None
        meta: dict[str, Any] = {"n_items": len(items)}
        if retention is not None:
            meta.update(created=int(retention["created"]), retained=int(retention["retained"]))
        return Prediction(
            pred_id=f"{episode.episode_id}/s{index}/memory",
            episode_id=episode.episode_id,
            session_index=index,
            kind="memory",
            prompt_hash="",
            output="",
            meta=meta,
        )

    def _answer(self, episode, index, now, asked: list[QAItem], method, llm) -> list[dict]:
        user = episode.speakers[self.user_index]
        others = [s for s in episode.speakers if s != user]
        bot = others[0] if others else "the assistant"
        rows, fields = [], []
        for qa in asked:
            query = Query(episode.episode_id, index, (), user, now, qa.question)
            recall: Recall = method.recall(query)
            extra = method.answer_prompt_fields(query, recall) if hasattr(
                method, "answer_prompt_fields"
            ) else {"memory": recall.text}  # fmt: skip
            memory = extra.get("memory") or NO_MEMORY_TEXT
            fields.append({
                **extra, "memory": memory, "question": qa.question, "user": user, "bot": bot,
                "items": [item.text for item in recall.items], "names": list(episode.speakers),
            })  # fmt: skip
            rows.append({"qa": qa, "recall": recall, "index": index, "user": user,
                         "episode_id": episode.episode_id})  # fmt: skip
        results = llm.run_many(self.task, fields, progress=False) if fields else []
        for row, res, f in zip(rows, results, fields, strict=True):
            row["result"] = res
            row["messages"] = self.task.render(**f)
        return rows

    def _judge_all(self, rows: list[dict], asked: list[QAItem], judge: Judge) -> list[Prediction]:
        items = [
            JudgeItem(r["qa"].question, " / ".join(r["qa"].answers), _text(r["result"]))
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
                    },
                )
            )
        return out

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], dict]:
        """Return per-answer scores and the run summary (see the module docstring)."""
        for name in metric_names:
            if name not in QA_METRICS:
                raise did_you_mean("qa metric", name, QA_METRICS)
        return score_qa(
            predictions, self._judge.describe() if self._judge else dict(self.judge_cfg)
        )


def _text(result) -> str:
    return result.value if isinstance(result.value, str) else result.raw


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _entry(per_session: dict[str, dict], value: float, n: int, **extra: Any) -> dict[str, Any]:
    means = [v["value"] for v in per_session.values()]
    return {"value": value, "n": n, "session_mean": _mean(means), "per_session": per_session,
            **extra}  # fmt: skip


def _qa_metrics(answers: Sequence[Prediction]) -> dict[str, dict]:
    counts: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    slot = {CORRECT: 0, INCORRECT: 1, DONT_KNOW: 2}
    for p in answers:
        counts[(p.session_index, int(p.meta["question_session"]))][
            slot[p.meta["judge"]["label"]]
        ] += 1
    by_session: dict[int, list[tuple[int, list[int]]]] = defaultdict(list)
    for (s, q), c in sorted(counts.items()):
        by_session[s].append((q, c))
    out: dict[str, dict] = {m: {"per_session": {}, "per_question_session": {}} for m in
                            ("precision", "recall", "f1", "dont_know_rate")}  # fmt: skip
    for s, groups in by_session.items():
        ps, rs, asked_s, dk_s = [], [], 0, 0
        for q, (c, i, d) in groups:
            p, r, f = prf(c, i, c + i + d)
            ps.append(p)
            rs.append(r)
            asked_s, dk_s = asked_s + c + i + d, dk_s + d
            key, n = f"{s}/{q}", c + i + d
            cell = {"n": n, "correct": c, "incorrect": i, "dont_know": d}
            for metric, v in (
                ("precision", p),
                ("recall", r),
                ("f1", f),
                ("dont_know_rate", d / n),
            ):
                out[metric]["per_question_session"][key] = {"value": v, **cell}
        p_s, r_s = _mean(ps), _mean(rs)
        for metric, v in (("precision", p_s), ("recall", r_s), ("f1", f1(p_s, r_s)),
                          ("dont_know_rate", dk_s / asked_s if asked_s else 0.0)):  # fmt: skip
            out[metric]["per_session"][str(s)] = {"value": v, "n": asked_s}
    tot = [sum(c[k] for c in counts.values()) for k in range(3)]
    n = sum(tot)
    p, r, f = prf(tot[0], tot[1], n)
    pooled = {"precision": p, "recall": r, "f1": f, "dont_know_rate": tot[2] / n if n else 0.0}
    return {
        m: _entry(
            out[m]["per_session"], pooled[m], n, per_question_session=out[m]["per_question_session"]
        )  # fmt: skip
        for m in pooled
    }


def _retention_metrics(states: Sequence[Prediction]) -> dict[str, dict]:
    by_session: dict[int, list[dict]] = defaultdict(list)
    for p in states:
        if "created" in p.meta:
            by_session[p.session_index].append(p.meta)
    if not by_session:
        return {}
    out: dict[str, dict] = {}
    for metric in ("retained", "created", "retention_rate"):
        per_session = {}
        for s, metas in sorted(by_session.items()):
            if metric == "retention_rate":
                values = [m["retained"] / m["created"] for m in metas if m["created"]]
            else:
                values = [float(m[metric]) for m in metas]
            per_session[str(s)] = {"value": _mean(values), "n": len(values)}
        last = per_session[str(max(by_session))]
        out[metric] = _entry(per_session, last["value"], last["n"],
                             aggregation="mean over episodes; value = last session")  # fmt: skip
    return out


def _failed(verdict: Mapping[str, Any], kind: str) -> bool:
    return str(verdict.get("failure") or "").startswith(kind)


def score_qa(
    predictions: Sequence[Prediction], judge_info: Mapping[str, Any]
) -> tuple[list[Score], dict]:
    """Score judged answers and memory states into per-answer scores and the run summary."""
    from recallbench.metrics.stats import mean_ci

    answers = [p for p in predictions if p.kind == "answer"]
    states = [p for p in predictions if p.kind == "memory"]
    scores = [Score(p.pred_id, "correct", float(p.meta["judge"]["label"] == CORRECT))
              for p in answers]  # fmt: skip
    scores += [Score(p.pred_id, "judge_label", float(p.meta["judge"]["label"])) for p in answers]
    metrics = _qa_metrics(answers)
    if answers:
        ci = mean_ci([s.value for s in scores[: len(answers)]])
        metrics["recall"].update(mean=ci.mean, ci95=[ci.low, ci.high])
    metrics.update(_retention_metrics(states))
    verdicts = [p.meta["judge"] for p in answers]
    judge = {
        **dict(judge_info),
        "judged": len(verdicts),
        "parse_failures": sum(1 for v in verdicts if _failed(v, PARSE_FAILURE)),
        "call_failures": sum(1 for v in verdicts if _failed(v, CALL_FAILURE)),
        "labels": {str(k): sum(1 for v in verdicts if v["label"] == k) for k in (1, 0, 2)},
    }
    summary = {
        "metrics": metrics,
        "judge": judge,
        "answer_failures": sum(1 for p in answers if p.failure),
        "aggregation": (
            "per_session = mean over question-sessions (LUFY Table 11 from Tables 16-18), F1 "
            "from that P and R; session_mean = mean over sessions; value = pooled judgments"
        ),
    }
    return scores, summary
