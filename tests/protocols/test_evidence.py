"""Evidence location and oracle-context runs (``protocols.evidence``, ``oracle_context``).

The oracle prompt must show the gold evidence and nothing else of the question's key: checked
on the rendered prompts of the qa, teafarm and timerag protocols.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench.embed import HashingEmbedder
from recallbench.errors import ConfigError
from recallbench.judges import LexicalJudge
from recallbench.llm import LLM, Completion, build_llm
from recallbench.memory import MemoryMethod
from recallbench.memory.no_memory import NoMemory
from recallbench.protocols.evidence import Evidence, EvidenceLocator, answer_turns, oracle_recall
from recallbench.protocols.qa import Probe, QAProtocol
from recallbench.protocols.response import ResponseProtocol
from recallbench.protocols.teafarm import TeaFarmProtocol
from recallbench.protocols.timerag import TimeRAGProtocol
from recallbench.records import Episode, MemoryItem, QAItem, Query, Recall, Session, Turn
from recallbench.testing.backend import ReplyBackend

START = datetime(2024, 5, 1, 9, 0)
TURNS = {
    1: [("Bot", "Tell me about your hobbies."), ("Ann", "I enjoy taking pictures."),
        ("Bot", "Fun! Anything else?"), ("Ann", "Watching dramas at night."),
        ("Bot", "Do you like ramen?"), ("Ann", "Ramen is my favourite food, 2 bowls a week.")],
    2: [("Bot", "How was your week?"), ("Ann", "I adopted a cat named Miso.")],
}  # fmt: skip


def tid(s: int, j: int) -> str:
    return f"ann/s{s}/t{j}"


def make_episode(qa: tuple[QAItem, ...] = ()) -> Episode:
    sessions = tuple(
        Session(
            f"ann/s{i}",
            i,
            START + timedelta(days=i - 1),
            tuple(Turn(tid(i, j), sp, text) for j, (sp, text) in enumerate(turns)),
        )
        for i, turns in TURNS.items()
    )
    return Episode("ann", "toy", ("Bot", "Ann"), sessions, qa)


def turns(s: int) -> list[Turn]:
    return list(make_episode().sessions[s - 1].turns)


# -- locating evidence ---------------------------------------------------------------------


def test_one_turn_carries_the_answer():
    got, why = answer_turns("What is Ann's favourite food?", ("Ramen",), turns(1), "Ann")
    # the bot's question names ramen too; Ann's own turn wins the tie
    assert got == (tid(1, 5),) and why == ""


def test_an_answer_given_over_two_turns_takes_both():
    label = "Taking pictures and watching dramas"
    got, _ = answer_turns("What are Ann's hobbies?", (label,), turns(1), "Ann", threshold=1.0)
    assert got == (tid(1, 1), tid(1, 3))
    # half of the key words are enough at the default threshold: the first turn alone
    assert answer_turns("What are Ann's hobbies?", (label,), turns(1), "Ann")[0] == (tid(1, 1),)


def test_numbers_must_be_found_and_unknown_evidence_says_why():
    got, why = answer_turns("How much ramen does Ann eat?", ("3 bowls",), turns(1), "Ann")
    assert got == () and "no turn covers" in why
    assert answer_turns("How much ramen?", ("2 bowls",), turns(1), "Ann")[0] == (tid(1, 5),)


def test_locator_modes_and_scopes():
    keyed = QAItem("q1", "What food?", ("Ramen",), 2, evidence=(tid(1, 5),))
    plain = QAItem("q2", "What is the name of Ann's cat?", ("Miso",), 2)
    ep = make_episode()
    assert EvidenceLocator().locate(ep, keyed).turn_ids == (tid(1, 5),)  # auto -> given
    assert not EvidenceLocator(mode="given").locate(ep, plain).known
    assert EvidenceLocator().locate(ep, plain, "Ann").turn_ids == (tid(2, 1),)
    # the question's session only: the ramen turn of session 1 is out of a session-2 question
    moved = QAItem("q3", "What food does Ann love?", ("Ramen",), 2)
    assert not EvidenceLocator().locate(ep, moved, "Ann").known
    assert EvidenceLocator(scope="history").locate(ep, moved, "Ann").turn_ids == (tid(1, 5),)
    with pytest.raises(KeyError):
        EvidenceLocator(mode="gold")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown keys"):
        EvidenceLocator.of({"modes": "given"})


def test_oracle_recall_is_the_evidence_turns_only():
    ep = make_episode()
    recall = oracle_recall(ep, Evidence((tid(1, 5), tid(2, 1)), "test"))
    assert (
        recall.text
        == "Ann: Ramen is my favourite food, 2 bowls a week.\nAnn: I adopted a cat named Miso."
    )
    assert recall.source_ids() == (tid(1, 5), tid(2, 1))
    assert oracle_recall(ep, Evidence((), "test", "none")).items == ()
    with pytest.raises(ValueError, match="not a turn"):
        oracle_recall(ep, Evidence(("ann/s9/t0",), "test"))


# -- oracle prompts ------------------------------------------------------------------------


class AllTurns(MemoryMethod):
    """Store every turn; recall them all; show them under "Memory:"."""

    def reset(self, episode: Episode) -> None:
        super().reset(episode)
        self.items: list[MemoryItem] = []

    def observe(self, session: Session) -> None:
        self.items += [
            MemoryItem(t.turn_id, t.text, "utterance", None, (t.turn_id,)) for t in session.turns
        ]

    def recall(self, query: Query) -> Recall:
        return Recall(tuple(self.items), "\n".join(i.text for i in self.items))

    def prompt(self, query: Query, recall: Recall) -> list[dict[str, str]]:
        return [
            {
                "role": "user",
                "content": f"Memory:\n{recall.text}\n\nReply to: {query.history[-1].text}",
            }
        ]

    def snapshot(self) -> list[MemoryItem]:
        return list(self.items)


QUESTIONS = (
    QAItem("ann/s2/q1", "What is the name of Ann's cat?", ("Miso the tabby",), 2),
    QAItem("ann/s2/q2", "What is Ann's favourite colour?", ("Teal blue",), 2),
)


def test_qa_oracle_prompt_holds_exactly_the_evidence():
    ep = make_episode(QUESTIONS)
    llm = build_llm({"backend": "extractive"})
    proto = QAProtocol(judge=LexicalJudge(), oracle_context=True, replay_turns=False)
    method = AllTurns()
    method.reset(ep)
    for s in ep.sessions:
        method.observe(s)
    rows = proto._answer(Probe(ep, 2, None, list(QUESTIONS)), method, llm)
    cat, colour = (row["messages"][-1]["content"] for row in rows)
    memory = cat.split("Memory:\n", 1)[1].split("\n\nQuestion:", 1)[0]
    assert memory == "Ann: I adopted a cat named Miso."
    assert "tabby" not in cat and "ramen" not in cat.lower()  # no key, no other memory
    # unknown evidence: nothing shown at all (not the method's memory, not the key)
    assert colour.split("Memory:\n", 1)[1].startswith("(nothing recalled)\n")
    assert "Teal" not in colour and "Miso" not in colour
    preds = proto._judge_all(rows, list(QUESTIONS), LexicalJudge())
    assert preds[0].meta["oracle"]["turn_ids"] == [tid(2, 1)]
    assert preds[0].recalled == (tid(2, 1),)
    assert preds[1].meta["oracle"]["unknown"].startswith("no turn covers")


class Recording(ReplyBackend):
    """A backend that records the agent's prompts and answers the Fig. 29 judge "Correct"."""

    name, local, offline, is_async, model, context_length = "rec", True, False, False, "r", 9999

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, messages, dec):
        text = messages[-1]["content"]
        if text.startswith("Below is a question, a correct answer"):
            return Completion('[Evaluation] fine. Result: "Correct"', 10, 5, 0.0)
        self.prompts.append(text)
        return Completion("Miso is great.", 10, 5, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def test_teafarm_oracle_prompt_holds_exactly_the_evidence():
    six = [
        {"speaker": "Bot", "text": "Hi again!"},
        {"speaker": "Bot", "text": "How is your dog Miso?"},
    ]
    qa = QAItem(
        "ann-q1",
        "How is your dog Miso?",
        ("I have no dog; Miso is my cat.",),
        2,
        kind="teafarm",
        meta={"speaker": "Bot", "responder": "Ann", "session6": six, "source_dataset": "msc"},
    )
    backend = Recording()
    llm = LLM(backend)
    proto = TeaFarmProtocol(oracle_context=True)
    result = proto.run_episode(make_episode((qa,)), AllTurns(), llm)
    (pred,) = result.predictions
    (prompt,) = backend.prompts
    assert (
        prompt.split("Memory:\n", 1)[1].split("\n\nReply to:")[0]
        == "Ann: I adopted a cat named Miso."
    )
    assert pred.meta["oracle"]["turn_ids"] == [tid(2, 1)] and pred.recalled == (tid(2, 1),)
    assert "no dog" not in prompt  # the correct answer is never shown


def test_timerag_oracle_shows_the_gold_facts_the_reply_uses():
    persona = {"persona": {"Ann": ["I have a cat named Miso.", "I like tea."], "Bot": []}}
    first = Session(
        "p/s1", 1, START, (Turn("p/s1/t0", "Bot", "Hi."), Turn("p/s1/t1", "Ann", "Hello.")), persona
    )
    second = Session(
        "p/s2",
        2,
        START + timedelta(days=1),
        (
            Turn("p/s2/t0", "Bot", "How are you?"),
            Turn("p/s2/t1", "Ann", "My cat Miso is sleeping."),
        ),
        persona,
    )
    ep = Episode("p", "msc", ("Bot", "Ann"), (first, second))
    llm = build_llm({"backend": "extractive"})
    emb = HashingEmbedder(dim=64)
    proto = TimeRAGProtocol(target_sessions=[2], oracle_context=True)
    result = proto.run_episode(ep, NoMemory(llm, emb), llm)
    (reply,) = [p for p in result.predictions if p.kind == "response"]
    assert reply.meta["recall_text"] == "I have a cat named Miso."  # not the tea fact
    assert reply.meta["retrieval"] == {"targets": 1, "ranks": [1]}


def test_plain_response_protocol_has_no_oracle():
    with pytest.raises(ConfigError, match="knows no gold evidence"):
        ResponseProtocol(oracle_context=True).oracle(make_episode(), Turn("x", "Ann", "hi"), None)  # type: ignore[arg-type]
