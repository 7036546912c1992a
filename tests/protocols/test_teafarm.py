"""Protocol ``teafarm``: the paper-fidelity test (a reply that follows the counterfactual premise
fails, a correcting one succeeds), parsers, offline generators, TeaBag save/reuse, scoring."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from omegaconf import OmegaConf

from recallbench.cli.build import build_protocol
from recallbench.datasets import teabag
from recallbench.datasets.teabag import read_teabag
from recallbench.embed import HashingEmbedder
from recallbench.llm import LLM, Completion, ParseError, build_llm
from recallbench.memory.no_memory import NoMemory
from recallbench.memory.session_summaries import SessionSummaries
from recallbench.protocols.teafarm import (
    JUDGE_PROMPT,
    JUDGE_TASK,
    QUESTION_PROMPT,
    SESSION6_PROMPT,
    TeaFarmProtocol,
    counterfactual,
    lexical_verdict,
    parse_dialogue,
    parse_questions,
    parse_verdict,
)
from recallbench.records import Episode, Session, Turn
from recallbench.testing.backend import ReplyBackend

A, B = "Speaker A", "Speaker B"
START = datetime(2023, 3, 1, 10, 0)
SESSIONS = [  # invented; gold summaries as MSC/CC give them
    (
        [(A, "Do you have pets?"), (B, "Yes, I have a dog named Max.")],
        "Speaker B has a dog named Max.",
    ),
    (
        [(A, "I started a new job."), (B, "Congrats! Where?")],
        "Speaker A started a new job at a bakery.",
    ),
    ([(A, "How is Max?"), (B, "He loves the park.")], "Speaker B walks Max in the park."),
    ([(A, "I bake bread daily."), (B, "Smells great!")], "Speaker A bakes bread every morning."),
    ([(A, "Weekend plans?"), (B, "Hiking with Max.")], "Speaker B plans to go hiking with Max."),
]


def make_episode(dataset: str = "msc") -> Episode:
    sessions = tuple(
        Session(
            f"e1/s{i}",
            i,
            START + timedelta(days=7 * (i - 1)),
            tuple(Turn(f"e1/s{i}/t{j}", s, t) for j, (s, t) in enumerate(turns)),
            {"summary": [summary]},
        )
        for i, (turns, summary) in enumerate(SESSIONS, start=1)
    )
    return Episode("e1", dataset, (A, B), sessions)


def embedder():
    return HashingEmbedder(dim=64)


class ScriptedBackend(ReplyBackend):
    """A model stand-in: fixed agent reply; the Fig. 29 judge reads the agent's answer."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 9999

    def __init__(self, agent_reply: str) -> None:
        self.agent_reply = agent_reply
        self.judge_prompts: list[str] = []

    def complete(self, messages, dec):
        text = messages[-1]["content"]
        if text.startswith("Below is a question, a correct answer"):
            self.judge_prompts.append(text)
            answer = text.split("[Chatbot's Answer] ")[-1].split("\n")[0]
            fooled = "cat" in answer.lower() and "dog" not in answer.lower()
            verdict = "Incorrect" if fooled else "Correct"
            reply = f"[Evaluation] Evaluation: the chatbot {'accepts' if fooled else 'corrects'} "
            return Completion(reply + f'the premise. Result: "{verdict}"', 50, 20, 0.0)
        return Completion(self.agent_reply, 40, 10, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def teabag_line(tmp_path):
    """A one-question TeaBag file about the episode: the premise is a cat, the truth a dog."""
    ep = make_episode()
    item = teabag.TeaBagItem(
        "e1-q1",
        "e1",
        "msc",
        A,
        "So how is your cat Max doing these days?",
        "I don't have a cat; Max is my dog, and he is doing well.",
        (
            {"speaker": A, "text": "Long time no see!"},
            {"speaker": B, "text": "Hi! Good to see you."},
            {"speaker": A, "text": "So how is your cat Max doing these days?"},
        ),
        teabag.inline_sessions(ep),
    )
    path = tmp_path / "teabag" / "teabag.jsonl"
    teabag.write_teabag(path, [item])
    return teabag.load(tmp_path, file="teabag/teabag.jsonl")[0]


@pytest.mark.parametrize(
    ("agent_reply", "success"),
    [
        ("Oh, my cat Max is doing great, she sleeps all day!", 0.0),  # follows the premise
        ("Cat? I don't have a cat. Max is my dog, and he's great.", 1.0),  # corrects it
    ],
)
def test_paper_fidelity_llm_judge_fails_premise_followers(tmp_path, agent_reply, success):
    episode = teabag_line(tmp_path)
    backend = ScriptedBackend(agent_reply)
    llm = LLM(backend)
    proto = TeaFarmProtocol()
    method = NoMemory(llm, embedder())
    result = proto.run_episode(episode, method, llm)
    (pred,) = result.predictions
    assert pred.output == agent_reply and pred.meta["question_source"] == "TeaBag (dataset)"
    assert "[Question] So how is your cat Max doing these days?" in backend.judge_prompts[0]
    assert pred.meta["judge"]["raw"].endswith(f'"{"Correct" if success else "Incorrect"}"')
    _, summary = proto.score(result.predictions, ["success_rate"])
    assert summary["metrics"]["success_rate"]["value"] == success
    assert llm.usage.to_dict()["tasks"]["judge.teafarm"]["calls"] == 1


def test_paper_fidelity_offline_judge_and_pipeline():
    # Direct: the offline Fig. 29 twin fails the premise-follower, passes the corrector.
    q, a = counterfactual(["Speaker B has a dog named Max."], A, B)
    assert (q, a) == ("So you have a cat named Max, right?", "No, I have a dog named Max.")
    assert lexical_verdict(q, a, "Yes, my cat Max is lovely.")[0] is False
    assert lexical_verdict(q, a, "No, Max is a dog!")[0] is True
    # Whole pipeline offline: memory of the gold summaries corrects; no memory is fooled.
    llm = build_llm({"backend": "extractive"})
    proto = TeaFarmProtocol()
    rates = {}
    for cls in (SessionSummaries, NoMemory):
        method = cls(llm, embedder(), **({"source": "gold"} if cls is SessionSummaries else {}))
        result = proto.run_episode(make_episode(), method, llm)
        preds = [p for p in result.predictions if p.kind == "teafarm"]
        assert len(preds) == 2 and {p.meta["asker"] for p in preds} == {A, B}
        rates[cls.__name__] = proto.score(result.predictions)[1]["metrics"]["success_rate"]
    assert rates["SessionSummaries"]["value"] > rates["NoMemory"]["value"]
    assert rates["NoMemory"]["value"] == 0.0 and rates["SessionSummaries"]["n"] == 2


@pytest.mark.parametrize(
    ("fact", "question", "answer"),
    [
        (
            "Speaker B has a dog named Max.",
            "So you have a cat named Max, right?",
            "No, I have a dog named Max.",
        ),
        ("Speaker B doesn't own a car.", "So you own a car, right?", "No, I don't own a car."),
        (
            "Speaker B has never been to Japan.",
            "So you have been to Japan, right?",
            "No, I have never been to Japan.",
        ),
        ("Speaker B isn't married.", "So you are married, right?", "No, I am not married."),
        (
            "Speaker B no longer lives in Paris.",
            "So you still live in Paris, right?",
            "No, I no longer live in Paris.",
        ),
        (
            "Speaker B likes Speaker A's bread.",
            "So it is no longer true that you like my bread, right?",
            "No, it is still true: I like your bread.",
        ),
    ],
)
def test_offline_counterfactuals_negate_the_fact(fact, question, answer):
    assert counterfactual(["Speaker B works nights.", fact], A, B) == (question, answer)


def test_msc_persona_facts_feed_the_offline_generator():
    from recallbench.protocols.teafarm import third_person

    assert third_person("I don't eat meat.", B) == "Speaker B doesn't eat meat."
    assert third_person("I go hiking.", B) == "Speaker B goes hiking."
    # Every clause is rewritten: no first-person word may survive in a third-person summary,
    # or the counterfactual question would be about the wrong speaker.
    first_person = {"i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself"}
    for sentence in (
        "I'm a nurse and I may move.",
        "My dog and I walk daily, but I hate rain.",
        "I think I will move to Paris with my wife.",
        "People tell me I am kind.",
    ):
        out = third_person(sentence, B)
        words = {w.strip(".,!?").lower() for w in out.split()}
        assert not words & first_person, out
        assert out.startswith(B) or out.startswith("People"), out
    assert "nurse and Speaker B may move" in third_person("I'm a nurse and I may move.", B)


def test_generated_questions_are_saved_and_reused(tmp_path):
    path = tmp_path / "tb.jsonl"
    llm = build_llm({"backend": "extractive"})
    proto = TeaFarmProtocol(teabag_file=str(path))
    first = proto.run_episode(make_episode(), NoMemory(llm, embedder()), llm).predictions
    items = read_teabag(path)
    assert [i.qid for i in items] == ["e1-q1", "e1-q2"] and items[0].speaker == A
    for item in items:  # Fig. 28: 10-15 utterances, ending with the question by its asker
        assert 10 <= len(item.session6) <= 15
        assert item.session6[-1] == {"speaker": item.speaker, "text": item.question}
    assert items[0].question == "So you have a cat named Max, right?"
    assert items[0].answer == "No, I have a dog named Max."  # "Speaker B:" tag stripped
    assert "Fig. 27" in first[0].meta["question_source"]
    calls = llm.usage.to_dict()["tasks"]["teafarm.questions"]["calls"]
    again = proto.run_episode(make_episode(), NoMemory(llm, embedder()), llm).predictions
    assert llm.usage.to_dict()["tasks"]["teafarm.questions"]["calls"] == calls  # not regenerated
    assert again[0].meta["question_source"] == f"TeaBag file {path}"
    assert [p.meta["question"] for p in again] == [p.meta["question"] for p in first]


def test_question_sampling_is_seeded_and_cacheable(tmp_path):
    msgs = QUESTION_PROMPT.format(speaker1=A, speaker2=B, summaries="x")
    assert msgs.endswith("[Question 1] Speaker A:")
    proto = TeaFarmProtocol(seed=3)
    task = proto.question_source.question_task
    assert task.temperature == 0.75 and task.seed == 3
    assert "{Question}" in SESSION6_PROMPT and "10-15 utterances" in SESSION6_PROMPT
    rendered = JUDGE_TASK.render(query="Q", answer="A", response="R")[0]["content"]
    assert 'Result: {"Correct" or "Incorrect"}' in rendered and rendered.endswith("[Evaluation]")
    assert JUDGE_PROMPT.count("{query}") == 1


def test_parsers_accept_the_formats_and_reject_garbage():
    reply = (
        "Did you enjoy Tokyo?\n[Answer 1] Speaker B: I have never been to Japan.\n\n"
        "[Question 2] Speaker B: Still hesitating about the house?\n[Answer 2] I bought it."
    )
    got = parse_questions(reply)
    assert got["q1"] == "Did you enjoy Tokyo?" and got["a2"] == "I bought it."
    repeated = parse_questions("[Question 1] Speaker A: " + reply)  # header echoed by the model
    assert repeated["q1"] == "Speaker A: Did you enjoy Tokyo?"  # the protocol strips speaker tags
    with pytest.raises(ParseError):
        parse_questions("Did you enjoy Tokyo?")
    assert parse_dialogue("**Speaker A**: Hi\n\nSpeaker B: Hello there")[1] == (B, "Hello there")
    with pytest.raises(ParseError):
        parse_dialogue("no dialogue here")
    assert parse_verdict('Evaluation: fine. Result: "Correct"') is True
    assert parse_verdict("Result: Incorrect") is False
    with pytest.raises(ParseError):
        parse_verdict("It is correct.")  # exact "Result:" token, never a substring


def test_unparseable_generation_is_recorded_not_invented():
    episode = make_episode()
    bare = Episode(
        "e2",
        "msc",
        (A, B),
        tuple(
            Session(s.session_id, s.index, s.start, s.turns, {"summary": ["Nothing much."]})
            for s in episode.sessions
        ),
    )
    llm = build_llm({"backend": "extractive"})
    result = TeaFarmProtocol().run_episode(bare, NoMemory(llm, embedder()), llm)
    assert [p.kind for p in result.predictions] == ["teafarm_generation"]
    assert result.predictions[0].failure.startswith("parse failed")
    _, summary = TeaFarmProtocol().score(result.predictions)
    assert summary["metrics"]["success_rate"]["n"] == 0
    assert summary["teafarm"]["generation_failures"] == 1


def test_fixture_teabag_runs_and_config_builds(fixtures_dir):
    cfg = OmegaConf.to_container(OmegaConf.load("conf/protocol/teafarm.yaml"))
    cfg.update(teabag_file=None, cache_path=None)
    llm = build_llm({"backend": "extractive"})
    proto = build_protocol(cfg, 0, llm, None)
    assert isinstance(proto, TeaFarmProtocol)
    episodes = teabag.load(fixtures_dir, file="teabag/teabag.jsonl")
    preds = []
    for ep in episodes:
        preds += proto.run_episode(ep, NoMemory(llm, embedder()), llm).predictions
    scores, summary = proto.score(preds, ["success_rate"])
    assert len(scores) == sum(len(e.qa) for e in episodes) > 0
    with pytest.raises(KeyError, match="success_rate"):
        proto.score(preds, ["sucess_rate"])
