"""Protocol ``qa``: P/R/F1 by hand, the leak guard, the unperturbed-memory check, scoring."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench.cli.build import build_protocol
from recallbench.errors import ConfigError
from recallbench.judges import LexicalJudge, LLMJudge
from recallbench.llm import build_llm
from recallbench.memory import MemoryMethod
from recallbench.protocols.qa import DONT_KNOW_ANSWER, QAProtocol, offline_answer
from recallbench.protocols.qa.scores import f1, prf, score_qa
from recallbench.records import (
    Episode,
    MemoryItem,
    Prediction,
    QAItem,
    Query,
    Recall,
    Session,
    Turn,
)
from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import light_stem as stem

START = datetime(2023, 1, 2, 9, 0)
SESSIONS = {
    1: [
        ("Luke", "Hi! What do you like?"),
        ("Zoe", "My dog Biscuit loves the beach."),
        ("Luke", "Cute!"),
    ],
    2: [
        ("Luke", "How was your week?"),
        ("Zoe", "I started learning the cello."),
        ("Luke", "Nice."),
    ],
    3: [("Luke", "Any news?"), ("Zoe", "I moved to Osaka for a new job."), ("Luke", "Wow.")],
}
QA = [
    QAItem("z/s1/q1", "What is the name of Zoe's dog?", ("Biscuit",), 1),
    QAItem("z/s2/q1", "Which instrument is Zoe learning?", ("The cello",), 2),
    QAItem("z/s3/q1", "Where did Zoe move to?", ("Osaka",), 3),
]


def make_episode() -> Episode:
    sessions = tuple(
        Session(
            f"z/s{i}",
            i,
            START + timedelta(days=i - 1),
            tuple(Turn(f"z/s{i}/t{j}", sp, text) for j, (sp, text) in enumerate(turns)),
        )
        for i, turns in SESSIONS.items()
    )
    return Episode("z", "toy", ("Luke", "Zoe"), sessions, tuple(QA))


class KeywordMemory(MemoryMethod):
    """Store every user turn; recall the items sharing a content word with the question.

    ``forget_after`` drops everything observed before that session (a crude forgetting step);
    ``mutate_on_probe`` breaks the contract on purpose. Every query it sees is logged.
    """

    def __init__(self, forget_after: int | None = None, mutate_on_probe: bool = False) -> None:
        self.forget_after = forget_after
        self.mutate_on_probe = mutate_on_probe
        self.queries: list[Query] = []
        self.observed: list[int] = []

    def reset(self, episode: Episode) -> None:
        super().reset(episode)
        self.items: list[MemoryItem] = []
        self.created = 0

    def observe(self, session: Session) -> None:
        self.observed.append(session.index)
        for turn in session.turns:
            if turn.speaker != "Luke":
                self.items.append(
                    MemoryItem(turn.turn_id, turn.text, "utterance_pair", None, (turn.turn_id,))
                )
                self.created += 1
        if self.forget_after is not None and session.index >= self.forget_after:
            self.items = [i for i in self.items if f"/s{session.index}/" in i.item_id]

    def retention(self) -> dict[str, int]:
        return {"created": self.created, "retained": len(self.items)}

    def recall(self, query: Query) -> Recall:
        self.queries.append(query)
        if self.mutate_on_probe:
            self.items.append(MemoryItem(f"probe{len(self.queries)}", "x", "summary", None))
        asked = {stem(w) for w in content(words(query.question or ""))} - {"zoe"}
        hits = tuple(i for i in self.items if asked & {stem(w) for w in content(words(i.text))})
        return Recall(hits, "\n".join(i.text for i in hits))

    def prompt(self, query: Query, recall: Recall) -> list[dict[str, str]]:
        return [{"role": "user", "content": recall.text}]

    def snapshot(self) -> list[MemoryItem]:
        return list(self.items)


@pytest.fixture(scope="module")
def llm():
    return build_llm({"backend": "extractive"})


def run(method: KeywordMemory, llm, **kw):
    protocol = QAProtocol(judge=LexicalJudge(), **kw)
    result = protocol.run_episode(make_episode(), method, llm)
    return protocol, result


def test_prf_by_hand():
    assert prf(3, 1, 6) == pytest.approx((0.75, 0.5, 0.6))
    assert prf(0, 0, 4) == (0.0, 0.0, 0.0)  # nothing answered: precision 0, never NaN
    assert prf(0, 2, 2) == (0.0, 0.0, 0.0)
    assert f1(1.0, 0.5) == pytest.approx(2 / 3)


def _pred(s: int, q: int, label: int, k: int) -> Prediction:
    meta = {"question_session": q, "judge": {"label": label, "raw": str(label), "parsed": True}}
    return Prediction(f"e/s{q}/q{k}/after_s{s}", "e", s, "answer", "h", "a", "ref", meta=meta)


def test_score_tiny_case_by_hand():
    # After s1: 4 questions of s1 -> correct, correct, incorrect, don't-know.
    # After s2: the s1 questions -> correct, incorrect, don't-know, don't-know;
    #           2 questions of s2 -> don't-know, don't-know (nothing answered: P = 0).
    labels = {(1, 1): [1, 1, 0, 2], (2, 1): [1, 0, 2, 2], (2, 2): [2, 2]}
    preds = [_pred(s, q, lab, k) for (s, q), labs in labels.items() for k, lab in enumerate(labs)]
    scores, summary = score_qa(preds, {"name": "lexical"})
    m = summary["metrics"]
    # session 1: P = 2/3, R = 2/4
    assert m["precision"]["per_session"]["1"]["value"] == pytest.approx(2 / 3)
    assert m["recall"]["per_session"]["1"]["value"] == pytest.approx(0.5)
    assert m["f1"]["per_session"]["1"]["value"] == pytest.approx(f1(2 / 3, 0.5))
    # session 2: question-sessions (2,1): P 1/2, R 1/4; (2,2): P 0 (undefined -> 0), R 0
    qs = m["precision"]["per_question_session"]
    assert qs["2/1"]["value"] == pytest.approx(0.5) and qs["2/2"]["value"] == 0.0
    assert qs["2/2"]["dont_know"] == 2 and qs["2/1"]["n"] == 4
    assert m["precision"]["per_session"]["2"]["value"] == pytest.approx(0.25)
    assert m["recall"]["per_session"]["2"]["value"] == pytest.approx(0.125)
    assert m["f1"]["per_session"]["2"]["value"] == pytest.approx(f1(0.25, 0.125))
    assert m["recall"]["session_mean"] == pytest.approx((0.5 + 0.125) / 2)
    assert m["f1"]["session_mean"] == pytest.approx((f1(2 / 3, 0.5) + f1(0.25, 0.125)) / 2)
    # pooled: 3 correct, 2 incorrect, 5 don't-know of 10
    assert m["precision"]["value"] == pytest.approx(3 / 5)
    assert m["recall"]["value"] == pytest.approx(3 / 10)
    assert m["dont_know_rate"]["value"] == pytest.approx(0.5)
    assert m["dont_know_rate"]["per_session"]["2"]["value"] == pytest.approx(4 / 6)
    assert summary["judge"]["labels"] == {"1": 3, "0": 2, "2": 5}
    correct = {s.pred_id: s.value for s in scores if s.metric == "correct"}
    assert sum(correct.values()) == 3 and len(correct) == 10


def test_questions_asked_only_after_their_session_and_answers_never_seen(llm):
    method = KeywordMemory()
    _, result = run(method, llm)
    answers = [p for p in result.predictions if p.kind == "answer"]
    assert [(p.session_index, p.meta["question_session"]) for p in answers] == [
        (1, 1),
        (2, 1),
        (2, 2),
        (3, 1),
        (3, 2),
        (3, 3),
    ]
    for p in answers:
        assert p.meta["question_session"] <= p.session_index
    # every probe came after its session was observed, and carried no history and no answer
    probes = [q for q in method.queries if q.question is not None]
    for query in probes:
        assert query.history == ()
        assert query.now == START + timedelta(days=query.session_index - 1, minutes=30)
    labels = {a.lower() for q in QA for a in q.answers}
    assert not any(q.question.lower() in labels for q in probes)
    assert [q.session_index for q in probes] == [1, 2, 2, 3, 3, 3] and method.observed == [1, 2, 3]
    # the replay recalled before each bot reply, with the dialogue so far (no future turn)
    live = [q for q in method.queries if q.question is None]
    assert [(q.session_index, len(q.history)) for q in live] == [(1, 2), (2, 2), (3, 2)]
    assert all(q.history[-1].speaker == "Zoe" and q.speaker == "Luke" for q in live)
    assert method.queries.index(live[1]) > method.queries.index(probes[0])  # s2 after s1 probes


def test_replay_can_be_switched_off(llm):
    method = KeywordMemory()
    run(method, llm, replay_turns=False)
    assert all(q.question is not None for q in method.queries)


def test_judged_run_and_retention(llm):
    _, result = run(KeywordMemory(), llm)
    answers = {p.pred_id: p for p in result.predictions if p.kind == "answer"}
    first = answers["z/s1/q1/after_s1"]
    assert first.output == "My dog Biscuit loves the beach."
    assert first.meta["judge"]["label"] == 1 and first.meta["judge"]["raw"] == "1"
    assert first.recalled == ("z/s1/t1",) and first.reference == "Biscuit"
    assert first.meta["question_session"] == 1 and first.meta["n_recalled"] == 1
    states = [p for p in result.predictions if p.kind == "memory"]
    assert [(p.meta["created"], p.meta["retained"]) for p in states] == [(1, 1), (2, 2), (3, 3)]
    assert [index for index, _ in result.snapshots] == [1, 2, 3]


def test_forgetting_gives_dont_know_and_lower_recall(llm):
    protocol, result = run(KeywordMemory(forget_after=2), llm)
    late = {p.pred_id: p for p in result.predictions if p.kind == "answer"}
    gone = late["z/s1/q1/after_s2"]
    assert gone.output == DONT_KNOW_ANSWER and gone.meta["judge"]["label"] == 2
    _, summary = protocol.score(result.predictions, ["precision", "recall", "retention_rate"])
    m = summary["metrics"]
    assert m["precision"]["per_session"]["3"]["value"] == pytest.approx(1 / 3)  # 0, 0, 1 per q
    assert m["recall"]["per_session"]["3"]["value"] == pytest.approx(1 / 3)
    assert m["retention_rate"]["per_session"]["3"]["value"] == pytest.approx(1 / 3)
    assert m["retained"]["per_session"]["1"]["value"] == 1.0


def test_probe_that_changes_memory_is_refused(llm):
    with pytest.raises(RuntimeError, match="must not perturb memory"):
        run(KeywordMemory(mutate_on_probe=True), llm)
    _, result = run(KeywordMemory(mutate_on_probe=True), llm, check_unperturbed=False)
    assert result.predictions


def test_offline_answer_prefers_overlap_then_rank_else_dont_know():
    items = ["Zoe: I like tea.", "Zoe: My dog Biscuit is three."]
    assert offline_answer("What is Zoe's dog called?", items, ("Luke", "Zoe")) == items[1]
    assert offline_answer("Where does Zoe work?", items, ("Luke", "Zoe")) == DONT_KNOW_ANSWER
    assert offline_answer("Does Zoe like tea or a dog?", items, ("Luke", "Zoe")) == items[0]
    assert offline_answer("Anything?", []) == DONT_KNOW_ANSWER


def test_build_protocol_and_bad_config(llm):
    qa = {"_target_": "recallbench.protocols.qa.QAProtocol", "name": "qa", "metrics": ["f1"]}
    protocol = build_protocol({**qa, "judge": {"name": "lexical"}}, 0, llm, None)
    assert isinstance(protocol, QAProtocol) and isinstance(protocol.judge, LexicalJudge)
    with pytest.raises(ConfigError, match="needs a judge"):
        build_protocol({**qa, "judge": None}, 0, llm, None)
    with pytest.raises(ConfigError, match="protocol qaa: _target_ 'recallbench.protocols.qa.QA'"):
        build_protocol(
            {**qa, "name": "qaa", "_target_": "recallbench.protocols.qa.QA"}, 0, llm, None
        )
    with pytest.raises(ConfigError, match="protocol qa: no _target_"):
        build_protocol({"name": "qa"}, 0, llm, None)
    with pytest.raises(KeyError, match="precision"):
        protocol.score([], ["precison"])


def test_llm_judge_with_its_own_generator_reports_usage(llm):
    judge = build_protocol(
        {"_target_": "recallbench.protocols.qa.QAProtocol", "name": "qa"}
        | {"judge": {"name": "llm", "generator": {"backend": "extractive"}}},
        0,
        llm,
        None,
    ).judge
    assert isinstance(judge, LLMJudge) and judge.llm is not llm  # its own generator
    protocol = QAProtocol(judge=judge)
    result = protocol.run_episode(make_episode(), KeywordMemory(), llm)
    answers = [p for p in result.predictions if p.kind == "answer"]
    assert [p.meta["judge"]["raw"] for p in answers] == ["1", "1", "1", "1", "1", "1"]
    _, summary = protocol.score(result.predictions)
    assert summary["judge_usage"]["tasks"]["judge.qa"]["calls"] == 6
    assert summary["judge"]["backend"] == "extractive" and summary["judge"]["parse_failures"] == 0
    assert "judge.qa" not in llm.usage.to_dict()["tasks"]  # the run's LLM did not judge
