"""Paper-fidelity tests of Full history (THEANINE "All Dialogue History", Bae et al. "History
accumulate"): truncation from the front to the context, one tokenization per history."""

from __future__ import annotations

from datetime import datetime

from recallbench.memory.full_history import FullHistory
from recallbench.records import Episode, Query, Recall, Session, Turn

# --- full history (THEANINE "All Dialogue History", Bae "History accumulate") -------------------


def _long_episode(n_sessions: int = 4, turns: int = 6) -> Episode:
    sessions = tuple(
        Session(
            f"L/s{i}",
            i,
            datetime(2023, 1, i),
            tuple(
                Turn(
                    f"L/s{i}t{j}", "AB"[j % 2], f"Session {i} turn {j}: some words about topic {j}."
                )
                for j in range(turns)
            ),
        )
        for i in range(1, n_sessions + 1)
    )
    return Episode("L", "tiny", ("A", "B"), sessions)


def test_full_history_truncates_from_the_front(llm, embedder):
    episode = _long_episode()
    past = [t.turn_id for s in episode.sessions[:3] for t in s.turns]
    query = Query("L", 4, episode.sessions[3].turns[:2], "A", None)
    wide = FullHistory(llm, embedder, context_length=100_000)
    wide.reset(episode)
    for s in episode.sessions[:3]:
        wide.observe(s)
    full = wide.recall(query)
    assert list(full.source_ids()) == past and full.info["dropped_turns"] == 0

    frame = wide.prompt(query, Recall())[0]["content"]
    limit = llm.count_tokens(frame) + 100 + full.info["history_tokens"] // 2
    method = FullHistory(llm, embedder, context_length=limit, reply_tokens=100)
    method.reset(episode)
    for s in episode.sessions[:3]:
        method.observe(s)
    recall = method.recall(query)
    kept = list(recall.source_ids())
    assert 0 < len(kept) < len(past)
    assert kept == past[-len(kept) :]  # a suffix: the oldest turns were dropped
    assert recall.info["dropped_turns"] == len(past) - len(kept)
    prompt = method.prompt(query, recall)[0]["content"]
    assert llm.count_tokens(prompt) + 100 <= limit + llm.count_tokens("(none)")
    # tight: one more turn from the front would not fit the budget
    budget = recall.info["budget_tokens"]
    older = [(s, t) for s in episode.sessions[:3] for t in s.turns]
    session, extra = older[len(past) - len(kept) - 1]
    extra_cost = llm.count_tokens(f"{extra.speaker}: {extra.text}") + 1
    header_cost = llm.count_tokens(f"Session {session.index}:") + 1
    assert recall.info["history_tokens"] + extra_cost + header_cost + 2 > budget
    assert episode.sessions[3].turns[1].text in prompt  # the current session is never cut


def test_full_history_tokenizes_a_history_once_for_all_its_questions(llm, embedder, monkeypatch):
    """LoCoMo asks ~200 questions after the same sessions: the rendered history (16k tokens
    there) is counted once per history and first kept turn, not once or more per question."""
    episode = _long_episode()
    method = FullHistory(llm, embedder, context_length=100_000)
    method.reset(episode)
    for s in episode.sessions[:2]:
        method.observe(s)
    counted: list[str] = []
    count = llm.count_tokens
    monkeypatch.setattr(llm, "count_tokens", lambda text: counted.append(text) or count(text))
    questions = [f"What did we say about topic {k}?" for k in range(20)]
    recalls = [method.recall(Query("L", 3, (), "A", None, q)) for q in questions]
    history = recalls[0].text
    assert history and sum(text == history for text in counted) == 1
    assert {r.info["history_tokens"] for r in recalls} == {count(history)}  # exact, as before
    method.observe(episode.sessions[2])  # another history: counted anew, still exactly
    again = method.recall(Query("L", 4, (), "A", None, questions[0]))
    assert again.text != history and again.info["history_tokens"] == count(again.text)
    assert sum(text == again.text for text in counted) == 1


def test_full_history_without_room_keeps_nothing(llm, embedder):
    episode = _long_episode(2)
    method = FullHistory(llm, embedder, context_length=10)
    method.reset(episode)
    method.observe(episode.sessions[0])
    recall = method.recall(Query("L", 2, episode.sessions[1].turns[:1], "B", None))
    assert recall.items == () and recall.text == "" and recall.info["budget_tokens"] < 0


def test_full_history_uses_llm_context_length_by_default(llm, embedder, episode, query_at):
    method = FullHistory(llm, embedder)
    method.reset(episode)
    method.observe(episode.sessions[0])
    recall = method.recall(query_at(episode, 2, 1))
    assert recall.info["context_length"] == llm.context_length
    assert all(item.kind == "utterance_pair" and len(item.source_ids) <= 2 for item in recall.items)
