"""TimeRAG-Memory (Sun et al. 2023): the paper-fidelity scenarios of sections 3.2-3.5."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from recallbench.errors import ConfigError
from recallbench.memory.timerag import SYSTEM, USER, TimeRAG
from recallbench.memory.timerag._store import Policy, RecordStore
from recallbench.memory.timerag._writer import Candidate, candidates, deletion_requests
from recallbench.records import Episode, Query, Session, Turn

PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers" / "timerag_memory.md"
T0 = datetime(2024, 1, 1)


def _episode(*sessions: list[tuple[str, str]], gap_days: float = 1.0) -> Episode:
    built = tuple(
        Session(
            f"e/s{i}",
            i,
            T0 + timedelta(days=gap_days * (i - 1)),
            tuple(Turn(f"e/s{i}t{j}", spk, text) for j, (spk, text) in enumerate(turns)),
        )
        for i, turns in enumerate(sessions, start=1)
    )
    return Episode("e", "tiny", ("Ann", "Ben"), built)


def _method(llm, embedder, **kw) -> TimeRAG:
    return TimeRAG(llm, embedder, **kw)


def _replay(method: TimeRAG, episode: Episode) -> TimeRAG:
    method.reset(episode)
    for session in episode.sessions:
        method.observe(session)
    return method


def _query(episode: Episode, text: str, days: float) -> Query:
    index = len(episode.sessions) + 1
    return Query("e", index, (Turn("e/q", "Ben", text),), "Ann", T0 + timedelta(days=days))


def _values(method: TimeRAG, status: str = "active") -> set[tuple[str, str, str]]:
    return {(r.slot_type, r.value, r.polarity) for r in method.store.records if r.status == status}


def test_templates_canonicalize_slot_value_and_polarity():
    found = {
        (c.slot_type, c.value, c.polarity, c.template)
        for c in candidates(
            "I'm allergic to peanuts. My favorite color is deep blue! I work as a nurse, but I hate sushi."
        )
    }
    assert found == {
        ("constraint.health", "peanuts", "-", "allergic"),
        ("preference.color", "deep blue", "+", "favorite"),
        ("background.occupation", "nurse", "+", "occupation"),
        ("preference.food", "sushi", "-", "dislike"),
    }
    assert deletion_requests("Please forget my address.") == ["address"]


def test_a_candidate_below_tau_is_not_written_and_repetition_lifts_it(llm, embedder):
    # "I like X" has reliability 0.50 < tau = 0.55: gated; seen again it scores 0.65: written
    once = _replay(_method(llm, embedder), _episode([("Ann", "I like jazz music.")]))
    assert _values(once) == set()
    twice = _replay(
        _method(llm, embedder),
        _episode([("Ann", "I like jazz music.")], [("Ann", "I like jazz music.")]),
    )
    assert _values(twice) == {("preference.music", "jazz music", "+")}
    (record,) = twice.store.records
    assert record.confidence == pytest.approx(0.65) and record.support == ("e/s2t0",)
    # without the gate (Table VIII "w/o Gated Writing") the first sighting is written
    ungated = _replay(
        _method(llm, embedder, gating=False), _episode([("Ann", "I like jazz music.")])
    )
    assert _values(ungated) == {("preference.music", "jazz music", "+")}


def test_a_repeated_fact_reinforces_instead_of_duplicating(llm, embedder):
    method = _replay(
        _method(llm, embedder),
        _episode([("Ann", "I live in Boston.")], [("Ann", "I live in Boston now.")]),
    )
    (record,) = method.store.records
    assert record.support == ("e/s1t0", "e/s2t0") and record.session_index == 2


def test_the_newer_conflicting_preference_outranks_the_stale_one_at_equal_similarity():
    store = RecordStore(Policy())
    store.offer("Ann", Candidate("preference.food", "meat", "+", 0.8, "t"), "s1", T0, 1)
    later = T0 + timedelta(days=2)
    store.offer("Ann", Candidate("preference.food", "meat", "-", 0.8, "t"), "s2", later, 2)
    now = T0 + timedelta(days=3)
    ranked = store.retrieve(lambda recs: [0.8] * len(recs), now, 3, k=5)
    assert [(r.polarity, r.session_index) for r, _ in ranked] == [("-", 2), ("+", 1)]
    new, old = (s for _, s in ranked)
    # score = sim * exp(-lambda * dt) - gamma * conflict, dt in days
    assert new == pytest.approx(0.8 * math.exp(-0.25 * 1), abs=1e-6)
    assert old == pytest.approx(0.8 * math.exp(-0.25 * 3) - 0.5, abs=1e-6)
    # w/o update/forget there is no conflict penalty; with overwrite the stale one is deleted
    plain = RecordStore(Policy(update_forget=False))
    for polarity, day, session in (("+", 0, 1), ("-", 2, 2)):
        cand = Candidate("preference.food", "meat", polarity, 0.8, "t")
        plain.offer("Ann", cand, f"s{session}", T0 + timedelta(days=day), session)
    assert plain.conflict(plain.records[0], plain.records) == 0.0
    over = RecordStore(Policy(conflict="overwrite"))
    over.offer("Ann", Candidate("preference.food", "meat", "+", 0.8, "t"), "s1", T0, 1)
    over.offer("Ann", Candidate("preference.food", "meat", "-", 0.8, "t"), "s2", later, 2)
    assert [r.status for r in over.records] == ["deleted", "active"]
    assert over.records[0].provenance == (
        {"status": "deleted", "reason": "overwritten", "by": "r1"},
    )


def test_a_deleted_record_is_never_retrieved(llm, embedder):
    episode = _episode(
        [("Ann", "I live in Boston."), ("Ann", "I work as a nurse.")],
        [("Ann", "Please forget that I live in Boston.")],
    )
    method = _replay(_method(llm, embedder), episode)
    deleted = [r for r in method.store.records if r.status == "deleted"]
    assert [(r.value, r.provenance[-1]["request"]) for r in deleted] == [("boston", "e/s2t0")]
    for text in ("Where do you live? Boston?", "Tell me about Boston", "nurse"):
        recall = method.recall(_query(episode, text, days=2))
        assert "boston" not in recall.text
    # w/o update/forget the request is ignored
    kept = _replay(_method(llm, embedder, update_forget=False), episode)
    assert ("background.location", "boston", "+") in _values(kept)


def test_decay_moves_an_old_record_to_decayed_and_the_recency_filter_hides_it(llm, embedder):
    # exp(-0.25 * 14) = 0.030 < 0.05 after two weeks
    episode = _episode([("Ann", "I work as a nurse.")], [("Ben", "Hello there.")], gap_days=14)
    method = _replay(_method(llm, embedder), episode)
    (record,) = method.store.records
    assert record.status == "decayed"
    assert record.provenance[-1]["weight"] == pytest.approx(math.exp(-0.25 * 14), abs=1e-6)
    assert method.recall(_query(episode, "nurse", days=14)).items == ()
    unfiltered = _replay(_method(llm, embedder, recency_filter=False), episode)
    assert len(unfiltered.recall(_query(episode, "nurse", days=14)).items) == 1
    no_decay = _replay(_method(llm, embedder, time_decay=False), episode)
    assert no_decay.store.records[0].status == "active"


def test_the_budget_keeps_the_most_valuable_active_records_per_user():
    store = RecordStore(Policy(budget=2))
    for i, conf in enumerate((0.9, 0.6, 0.7)):
        store.offer("Ann", Candidate(f"goal{i}", f"g{i}", "+", conf, "t"), f"s{i}", T0, 1)
    store.offer("Ben", Candidate("goal", "x", "+", 0.6, "t"), "b", T0, 1)
    store.enforce_budget(T0, 1)
    assert {(r.speaker, r.value): r.status for r in store.records} == {
        ("Ann", "g0"): "active",
        ("Ann", "g1"): "decayed",
        ("Ann", "g2"): "active",
        ("Ben", "x"): "active",
    }


def test_bm25_similarity_is_the_library_score_over_the_best(llm, embedder):
    episode = _episode(
        [("Ann", "I live in Boston."), ("Ann", "I work as a nurse."), ("Ann", "I have two dogs.")]
    )
    for sim_text, phi in (("value", lambda r: r.value), ("record", lambda r: r.text())):
        method = _replay(_method(llm, embedder, retriever="bm25", sim_text=sim_text), episode)
        records = method.store.active()
        corpus = [re.findall(r"\w+", phi(r).lower()) for r in records]
        expected = BM25Okapi(corpus).get_scores(["nurse", "dogs"])
        sims = method.similarity("nurse dogs")(records)
        assert sims == pytest.approx([s / max(expected) for s in expected])


def test_prompt_is_the_papers_template(llm, embedder):
    episode = _episode([("Ann", "I work as a nurse.")])
    method = _replay(_method(llm, embedder), episode)
    query = _query(episode, "What do you do?", days=1)
    messages = method.prompt(query, method.recall(query))
    assert messages[0] == {"role": "system", "content": "You are a helpful assistant."}
    assert messages[1]["content"] == (
        "Memory (use if relevant):\n- [background.occupation] Ann: nurse (time=2024-01-01)\n"
        "Dialogue: Ben: What do you do?\nAssistant:"
    )
    if PAPER.exists():
        paper = " ".join(PAPER.read_text(encoding="utf-8").split())
        # the paper prints the template on one line with literal "\\n" escapes
        template = f"System: {SYSTEM}\n{USER}".format(
            memory="- [slot] value (time=t)\n...", dialogue="..."
        )
        assert template.replace("\n", "\\n") in paper


def test_bad_settings_are_config_errors(llm, embedder):
    with pytest.raises(ConfigError, match="retriever"):
        TimeRAG(llm, embedder, retriever="tfidf")
    with pytest.raises(ConfigError, match="unexpected keyword"):
        TimeRAG(llm, embedder, tua=0.5)


def test_dense_similarity_embeds_the_memory_value_not_the_rendered_record(llm, embedder):
    # sec. 3.3: "We represent both q and memory values with an embedding function phi"
    episode = _episode([("Ann", "I work as a nurse."), ("Ann", "I have two dogs.")])
    for sim_text, phi in (("value", lambda r: r.value), ("record", lambda r: r.text())):
        method = _replay(_method(llm, embedder, sim_text=sim_text), episode)
        records = method.store.active()
        query = np.asarray(embedder.encode(["my dogs"])[0])
        want = [
            float(v @ query / (np.linalg.norm(v) * np.linalg.norm(query)))
            for v in np.asarray(embedder.encode([phi(r) for r in records]))
        ]
        assert method.similarity("my dogs")(records) == pytest.approx(want)
    assert {r.value for r in records} == {"nurse", "two dogs"}
    with pytest.raises(ConfigError, match="sim_text"):
        TimeRAG(llm, embedder, sim_text="slot")


def _in_session_query(episode: Episode) -> Query:
    """A query in the episode's last session after its first two turns (the dialogue so far)."""
    last = episode.sessions[-1]
    return Query("e", last.index, last.turns[:2], "Ben", last.start)


def test_a_fact_of_the_current_session_is_retrievable_when_writing_from_the_stream(llm, embedder):
    # sec. 3.2 "Given a dialogue stream, the memory writer extracts candidate user facts":
    # Ann says she is allergic to peanuts earlier in the session Ben now answers in.
    episode = _episode(
        [("Ann", "I work as a nurse.")],
        [("Ann", "I'm allergic to peanuts."), ("Ben", "Noted."), ("Ann", "Any snack ideas?")],
    )
    method = _method(llm, embedder)
    method.reset(episode)
    method.observe(episode.sessions[0])
    recall = method.recall(_in_session_query(episode))
    assert "peanuts" in recall.text and set(recall.source_ids()) == {"e/s1t0", "e/s2t0"}
    method.observe(episode.sessions[1])  # the session end writes the rest, never twice
    peanuts = [r for r in method.store.records if r.value == "peanuts"]
    assert len(peanuts) == 1 and peanuts[0].support == ("e/s2t0",)
    assert peanuts[0].confidence == pytest.approx(0.8)  # no repetition bonus from a re-read
    # writing only at the session end (the pre-issue-24 behaviour) cannot see it
    late = _method(llm, embedder, write_during_session=False)
    late.reset(episode)
    late.observe(episode.sessions[0])
    assert "peanuts" not in late.recall(_in_session_query(episode)).text


def test_without_update_forget_the_budget_is_lifted_unless_configured(llm, embedder):
    facts = ["I work as a nurse.", "I live in Boston.", "I have two dogs.", "I'm from Ohio."]
    episode = _episode([("Ann", text) for text in facts])
    full = _replay(_method(llm, embedder, budget=2), episode)
    assert len(full.store.active()) == 2
    assert {r.provenance[-1]["reason"] for r in full.store.records if r.status == "decayed"} == {
        "budget"
    }
    ablated = _replay(_method(llm, embedder, budget=2, update_forget=False), episode)
    assert len(ablated.store.active()) == 4  # w/o Update/Forget: nothing is forgotten
    kept = _method(llm, embedder, budget=2, update_forget=False, budget_with_update_forget=False)
    assert len(_replay(kept, episode).store.active()) == 2


def test_the_conflict_penalty_remembers_a_newer_version_that_decayed():
    def store(scope: str) -> RecordStore:
        s = RecordStore(Policy(budget=1, conflict_scope=scope))
        s.offer("Ann", Candidate("preference.food", "meat", "+", 0.9, "t"), "s1", T0, 1)
        later = T0 + timedelta(days=1)
        # 0.7 - 0.1 (a more confident rival) = 0.6 >= tau; worth 0.6 < 0.9 * exp(-0.25)
        s.offer("Ann", Candidate("preference.food", "meat", "-", 0.7, "t"), "s2", later, 2)
        s.enforce_budget(later, 2)  # the newer, less confident version is evicted
        return s

    for scope, penalty in (("all", 0.5), ("eligible", 0.0)):
        s = store(scope)
        assert [r.status for r in s.records] == ["active", "decayed"]
        ((old, score),) = s.retrieve(lambda recs: [0.8] * len(recs), T0, 1, k=5)
        assert old.polarity == "+" and score == pytest.approx(0.8 - penalty)


def test_the_profile_writer_writes_a_lamp1_users_papers(llm, embedder):
    # LaMP-1: the profile (the user's papers) is the history; the utterance templates find
    # nothing in titles, so before the profile writer TimeRAG's memory was empty on LaMP-1.
    titles = [
        ("10", "Scalable speech recognition via speaker diarization", "2001"),
        ("11", "Voice conversion for speaker diarization", "2004"),
        ("12", "A study of phoneme alignment", "2003"),
    ]
    turns = tuple(
        Turn(f"q/s1/{i}", "profile", title, {"date": year, "item_id": i})
        for i, title, year in titles
    )
    episode = Episode("q", "lamp1", ("profile",), (Session("q/s1", 1, T0, turns),))
    assert candidates(titles[0][1]) == []  # no first-person template matches a title
    method = _replay(_method(llm, embedder), episode)
    active = {r.value: r for r in method.store.active()}
    assert set(active) == {
        "scalable speech recognition",
        "speaker diarization",
        "voice conversion",
        "phoneme alignment",
    }
    diarization = active["speaker diarization"]
    assert diarization.slot_type == "background.research"
    assert diarization.confidence == pytest.approx(0.6 + 0.15)  # seen in two titles
    assert diarization.support == ("q/s1/10", "q/s1/11")
    query = Query("q", 2, (Turn("q/q", "user", "speaker diarization"),), "profile", None)
    assert method.recall(query).items[0].attrs["value"] == "speaker diarization"
    # abstract phrases (reliability 0.45 < tau) are written only once repeated
    abstract = _episode([("profile", "Title one\nWe study graph kernels.")])
    abstract2 = _episode(
        [("profile", "Title one\nWe study graph kernels."), ("profile", "T2\ngraph kernels")]
    )
    assert "graph kernels" not in _values(_replay(_method(llm, embedder), abstract)).__repr__()
    assert ("background.research", "graph kernels", "+") in _values(
        _replay(_method(llm, embedder), abstract2)
    )
