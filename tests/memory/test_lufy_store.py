"""The LUFY-family store: retrieval threshold and top-2 rule, R1/R2 counters, probes, forgetting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from lufy_scenarios import (
    BOT,
    SESSION_1,
    SESSION_2,
    USER,
    make_episode,
    probe,
    replay,
    replay_session,
)

from recallbench.errors import ConfigError
from recallbench.memory.lufy import (
    RESPONSE_PROMPT,
    LufyFamilyMemory,
    attribute,
    ebbinghaus,
    lexical_importance,
    retained_count,
)
from recallbench.memory.memorybank import MemoryBank
from recallbench.memory.naive_rag import NaiveRAG
from recallbench.records import Query


@pytest.fixture
def episode():
    return make_episode([SESSION_1, SESSION_2])


def test_table3_rounding_is_nearest_halves_up():
    # LUFY sec. 4.2: "if there are 14 memories and 10% corresponds to 1.4 items ... retaining
    # only 1 item. In this case, 1 out of 14 yields approximately 7.1%".
    assert retained_count(14, 0.1) == 1
    assert round(100 * retained_count(14, 0.1) / 14, 1) == 7.1
    # halves go up (0.1 * 15 is 1.5000000000000002 in floats; Decimal keeps it exact)
    table = {0: 0, 4: 0, 5: 1, 14: 1, 15: 2, 24: 2, 25: 3, 29: 3, 35: 4, 45: 5, 64: 6, 65: 7}
    assert {n: retained_count(n, 0.1) for n in table} == table
    assert retained_count(10, 1.0) == 10


def test_ebbinghaus_paper_and_upstream():
    assert ebbinghaus(1.0, 1.0) == pytest.approx(0.36788, abs=1e-5)
    assert ebbinghaus(1.0, 2.0) > ebbinghaus(1.0, 1.0)  # paper: stronger memories decay slower
    assert ebbinghaus(1.0, 2.0, upstream=True) < ebbinghaus(1.0, 1.0, upstream=True)
    assert ebbinghaus(10.0, 1.0, upstream=True) == pytest.approx(0.13534, abs=1e-5)  # exp(-2)


def test_pairs_user_first_and_text(llm, embedder, episode):
    method = NaiveRAG(llm, embedder)
    replay(method, episode, 1)
    pairs = [i for i in method.snapshot() if i.kind == "utterance_pair"]
    assert len(pairs) == len(SESSION_1)
    first = pairs[0]
    assert first.source_ids == (f"{episode.episode_id}/s1/t1", f"{episode.episode_id}/s1/t0")
    assert first.text == f"{BOT}: {SESSION_1[0][0]}\n{USER}: {SESSION_1[0][1]}"
    assert method.retention() == {"created": len(SESSION_1) + 1, "retained": len(SESSION_1) + 1}


def test_threshold_and_top2_counters(llm, embedder, episode):
    method = NaiveRAG(llm, embedder, threshold=0.5)
    replay(method, episode, 1)
    session = episode.sessions[1]
    query = Query(
        episode.episode_id, 2, session.turns[:1] + (session.turns[13],), BOT, session.start
    )  #  (history ends with a Mochi utterance)
    before = {i.item_id: dict(i.attrs["metrics"]) for i in method.snapshot() if i.attrs["metrics"]}
    recall = method.recall(query)
    mochi = recall.info["r1"]
    assert recall.items[0].item_id == mochi and "Mochi" in recall.text
    assert recall.text == recall.items[0].text
    assert all(c >= 0.5 for c in recall.info["cosine"]) and len(recall.info["cosine"]) <= 2
    after = {i.item_id: i.attrs for i in method.snapshot() if i.attrs["metrics"]}
    assert after[mochi]["metrics"]["R1"] == before[mochi]["R1"] + 1
    assert after[mochi]["last_access"] == session.start.isoformat()
    for r2 in recall.info["r2"]:
        assert after[r2]["metrics"]["R2"] == before[r2]["R2"] + 1
        assert after[r2]["metrics"]["R1"] == before[r2]["R1"]
    # nothing above the threshold: no memory, no counter change
    strict = NaiveRAG(llm, embedder, threshold=0.99)
    replay(strict, episode, 1)
    assert strict.recall(query).info["r1"] is None


def test_probe_changes_nothing(llm, embedder, episode):
    for method in (
        NaiveRAG(llm, embedder, threshold=0.3),
        MemoryBank(llm, embedder, threshold=0.3),
    ):
        replay(method, episode, 1)
        before = method.snapshot()
        recall = method.recall(probe(episode, "Where does the cat Mochi sleep all day?", 1))
        assert recall.info["probe"] is True and recall.info["r1"] is not None
        assert method.snapshot() == before  # no R1/R2, no access time, no live write


def test_live_writes_skip_recent_turns(llm, embedder, episode):
    method = NaiveRAG(llm, embedder, recent_turns=5)
    method.reset(episode)
    session = episode.sessions[0]
    method.recall(Query(episode.episode_id, 1, session.turns[:8], BOT, session.start))
    written = {i.source_ids[0] for i in method.snapshot()}
    # 8 turns of history, the last 5 are still "Recent Utterances": pairs ending at t1 only
    assert written == {f"{episode.episode_id}/s1/t1"}
    off = NaiveRAG(llm, embedder, live_writes=False)
    off.reset(episode)
    off.recall(Query(episode.episode_id, 1, session.turns[:8], BOT, session.start))
    assert off.snapshot() == []


def test_prompt_is_fig4(llm, embedder, episode):
    method = NaiveRAG(llm, embedder, threshold=0.5)
    replay(method, episode, 1)
    session = episode.sessions[1]
    query = Query(episode.episode_id, 2, session.turns[:14], BOT, session.start)
    recall = method.recall(query)
    (message,) = method.prompt(query, recall)
    head = RESPONSE_PROMPT.split("{key_summary}")[0]
    assert message["content"].startswith(head)
    assert f"Memory Relevant to Current Conversation: {recall.text}" in message["content"]
    recent = "\n".join(f"{t.speaker}: {t.text}" for t in session.turns[9:14])
    assert f"Recent Utterances: {recent}" in message["content"]
    assert "- Key Summary of Past Conversations: - " in message["content"]  # profile facts


def test_profile_never_forgotten_and_answer_fields(llm, embedder, episode):
    method = MemoryBank(llm, embedder)
    replay(method, episode)
    profile = [i for i in method.snapshot() if i.kind == "profile"]
    assert profile and all(i.attrs["retained"] for i in profile)
    assert any("Mochi" in i.text for i in profile)
    assert all(sid.startswith(f"{episode.episode_id}/s") for i in profile for sid in i.source_ids)
    recall = method.recall(probe(episode, "What is the name of Zoe's cat?", 2))
    fields = method.answer_prompt_fields(probe(episode, "x", 2), recall)
    assert "Key summary of past conversations:" in fields["memory"]
    assert method.retention()["created"] == len(SESSION_1) + len(SESSION_2) + 2


def test_forgetting_keeps_top_share_of_all_created(llm, embedder, episode):
    method = MemoryBank(llm, embedder)
    replay(method, episode, 1)
    assert method.retention() == {"created": 11, "retained": 1}
    replay(method, episode, 2)
    assert method.retention() == {"created": 26, "retained": 3}  # round(2.6) over both sessions
    snap = [i for i in method.snapshot() if i.kind != "profile"]
    assert sum(i.attrs["retained"] for i in snap) == 3
    # kept + just forgotten: 1 kept after session 1, 14 pairs + 1 summary of session 2
    assert len(snap) == 1 + len(SESSION_2) + 1


def test_reset_and_episode_guard(llm, embedder, episode):
    method = NaiveRAG(llm, embedder)
    with pytest.raises(RuntimeError, match="reset"):
        method.recall(probe(episode, "x", 1))
    replay(method, episode, 1)
    other = make_episode([SESSION_1], episode_id="lufy/test/Other")
    method.reset(other)
    assert method.snapshot() == [] and method.retention() == {"created": 0, "retained": 0}
    with pytest.raises(RuntimeError, match="lufy/test/Zoe"):
        method.recall(probe(episode, "x", 1))


def test_bad_config_is_refused(llm, embedder):
    with pytest.raises(ConfigError, match="threshold"):
        NaiveRAG(llm, embedder, threshold=1.5)
    with pytest.raises(ConfigError, match="retain_ratio"):
        MemoryBank(llm, embedder, retain_ratio=0.0)
    with pytest.raises(ConfigError, match="top_k"):
        LufyFamilyMemory(llm, embedder, top_k=0)


def test_user_inferred_without_meta(llm, embedder, episode):
    from dataclasses import replace

    method = NaiveRAG(llm, embedder)
    method.reset(replace(episode, meta={}))
    assert method.user == USER  # the speaker who replies to the bot's opener


def test_lexical_importance_and_attribution(episode):
    mundane, _ = lexical_importance("Hey, how are you today?")
    news, why = lexical_importance("I just found out I got into Harvard!")
    assert mundane == 1 and news >= 5 and "self-disclosure" in why
    assert lexical_importance("I " + "excited " * 9 + "Tokyo Osaka Kyoto 42!")[0] == 10
    turns = episode.sessions[0].turns
    assert attribute(["my cat MOCHI sleeps on the sofa"], turns) == (
        f"{episode.episode_id}/s1/t3",
        f"{episode.episode_id}/s1/t15",
    )
    assert attribute(["an abstractive sentence"], turns) == ()


def test_sessions_without_start_are_consecutive_days(llm, embedder, episode):
    from dataclasses import replace

    undated = replace(episode, sessions=tuple(replace(s, start=None) for s in episode.sessions))
    method = MemoryBank(llm, embedder)
    replay(method, undated)
    kept = [i for i in method.snapshot() if i.kind == "summary" and i.attrs["retained"]]
    assert kept and kept[0].created == episode.sessions[1].start - timedelta(0)


@pytest.mark.parametrize("cls", [NaiveRAG, MemoryBank])
def test_prefetch_embeds_a_sessions_recalls_in_one_batch_and_changes_nothing(llm, cls):
    from recallbench.embed import HashingEmbedder

    episode = make_episode([SESSION_1, SESSION_2])
    plain_emb, fetched_emb = HashingEmbedder(dim=256), HashingEmbedder(dim=256)
    plain = cls(llm, plain_emb, threshold=0.2, recent_turns=1)
    fetched = cls(llm, fetched_emb, threshold=0.2, recent_turns=1)
    plain.reset(episode)
    fetched.reset(episode)
    for session in episode.sessions:
        queries = [
            Query(episode.episode_id, session.index, session.turns[:j], BOT, session.start)
            for j, turn in enumerate(session.turns)
            if j and turn.speaker == BOT
        ]
        fetched.prefetch(queries)
        batches = fetched_emb.cache_info.batches
        for query in queries:
            assert fetched.recall(query) == plain.recall(query)
        assert fetched_emb.cache_info.batches == batches  # every recall found its vectors
        probes = [probe(episode, "What does the user like?", session.index)]
        fetched.prefetch(probes)
        assert fetched.recall(probes[0]) == plain.recall(probes[0])
        plain.observe(session)
        fetched.observe(session)
        assert fetched.snapshot() == plain.snapshot()
    assert any(i.kind == "utterance_pair" for i in plain.snapshot())
    assert plain_emb.cache_info.batches > fetched_emb.cache_info.batches


@pytest.mark.parametrize("cls", [NaiveRAG, MemoryBank])
def test_episode_prefetch_leaves_only_summaries_to_embed_and_changes_nothing(llm, cls):
    from recallbench.embed import HashingEmbedder
    from recallbench.testing.embedders import RecordingEmbedder

    episode = make_episode([SESSION_1, SESSION_2])
    plain_emb, fetched_emb = HashingEmbedder(dim=256), RecordingEmbedder(dim=256)
    plain = cls(llm, plain_emb, threshold=0.2, recent_turns=1)
    fetched = cls(llm, fetched_emb, threshold=0.2, recent_turns=1)
    replay(plain, episode)
    fetched.reset(episode)
    fetched.prefetch_episode(episode)
    assert len(fetched_emb.calls) == 1  # one call (one length-sorted batch here)
    fetched_emb.calls.clear()
    summaries: set[str] = set()  # MemoryBank may forget one before the end
    for session in episode.sessions:
        replay_session(fetched, episode, session)
        fetched.observe(session)
        summaries |= {i.text for i in fetched.snapshot() if i.kind == "summary"}
    later = fetched_emb.sent
    assert later and set(later) <= summaries  # the pairs and retrieval texts were all fetched
    assert fetched.snapshot() == plain.snapshot()
