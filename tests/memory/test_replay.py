"""The queries of a logged session: one before every reply, with only the turns before it."""

from __future__ import annotations

from datetime import datetime

from recallbench.memory import replay_recalls, reply_queries
from recallbench.memory.no_memory import NoMemory
from recallbench.records import Episode, Session, Turn

START = datetime(2024, 1, 2, 9, 0)
# the bot opens; the user answers; two bot replies follow, then the user's last word
TURNS = tuple(
    Turn(f"t{i}", speaker, text)
    for i, (speaker, text) in enumerate(
        [("Bot", "Hi!"), ("Ann", "Hello."), ("Bot", "How are you?"), ("Bot", "Busy day?")]
        + [("Ann", "Yes.")]
    )
)
SESSION = Session("s1", 1, START, TURNS)
EPISODE = Episode("ep", "test", ("Bot", "Ann"), (SESSION,))


def test_a_query_before_every_reply_but_the_opening_turn():
    queries = reply_queries(EPISODE, SESSION, lambda speaker: speaker == "Bot")
    assert [turn.turn_id for turn, _ in queries] == ["t2", "t3"]  # t0 opens: nothing before it
    first, second = (query for _, query in queries)
    assert [t.turn_id for t in first.history] == ["t0", "t1"]
    assert [t.turn_id for t in second.history] == ["t0", "t1", "t2"]
    assert (first.episode_id, first.session_index, first.speaker, first.now) == (
        "ep",
        1,
        "Bot",
        START,
    )
    assert first.question is None


class Recording(NoMemory):
    """No memory that notes the length of every history it is asked to recall for."""

    def __init__(self, llm, embedder):
        super().__init__(llm, embedder)
        self.seen: list[int] = []

    def recall(self, query):
        self.seen.append(len(query.history))
        return super().recall(query)


def test_replay_recalls_before_every_reply_of_the_other_speaker(llm, embedder):
    method = Recording(llm, embedder)
    method.reset(EPISODE)
    assert len(replay_recalls(method, EPISODE, SESSION, user="Ann")) == 2
    assert method.seen == [2, 3]  # before the bot's t2 and t3
    method.seen.clear()
    replay_recalls(method, EPISODE, SESSION, user="Bot")
    assert method.seen == [1, 4]  # before Ann's t1 and t4
