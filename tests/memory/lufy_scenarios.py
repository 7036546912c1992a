"""Builders shared by the LUFY-family tests: invented LUFY-style episodes and a replay loop.

The chatbot (``BOT``) speaks first and the user replies, as in the LUFY dataset; sessions are
consecutive simulated days. ``replay`` recalls before every bot reply with the dialogue so far
(as the QA protocol's replay and the live chatbot do) and observes each session.
"""

from __future__ import annotations

from datetime import timedelta

from recallbench.clock import EPOCH
from recallbench.records import Episode, QAItem, Query, Session, Turn

BOT = "Luke"
USER = "Zoe"

# Session 1: small talk; the cat Mochi comes back later in the session and in session 2.
SESSION_1 = [
    ("Hi, I'm Luke! How was your day?", "Pretty normal, I had toast for breakfast."),
    ("Do you have any pets?", "Yes, my cat Mochi sleeps on the sofa all day."),
    ("What did you do this morning?", "I folded the laundry and put it away."),
    ("How is the weather there?", "It is a calm and cloudy day here."),
    ("Do you take the bus to work?", "The bus arrives every twenty minutes near my home."),
    ("What do you usually drink?", "I usually drink green tea in the afternoon."),
    ("Any plans for the evening?", "I will read the newspaper at home."),
    ("Does your cat like toys?", "My cat Mochi sleeps on the sofa and ignores toys."),
    ("What did you eat for lunch?", "Just some rice and soup, nothing special."),
    ("Nice chatting today!", "Yes, see you tomorrow."),
]
HARVARD = "I just found out I got into Harvard, I am so excited, I can't believe it!"
# Session 2: the emotionally charged news (never mentioned again), then more talk about Mochi.
SESSION_2 = [
    ("Welcome back! What's new?", "Not much, I watered the garden this morning."),
    ("Anything exciting happen?", HARVARD),
    ("Wow, congratulations! That's amazing!", "Thanks, I'm still processing it all."),
    ("How is the weather today?", "It is cloudy again, quite calm."),
    ("What are you doing now?", "I am sorting some files by date."),
    ("What did you have for breakfast?", "I had toast again, as usual."),
    ("How is your cat doing?", "My cat Mochi sleeps on the sofa all day, as always."),
    ("Did you go out today?", "I walked slowly to the post office."),
    ("Is Mochi still lazy?", "Yes, my cat Mochi sleeps on the sofa all day long."),
    ("What are you reading?", "The newspaper, the usual local news."),
    ("Do you cook dinner yourself?", "Yes, usually some soup."),
    ("Is Mochi on the sofa now?", "Of course, my cat Mochi sleeps on the sofa all day."),
    ("Any plans for tomorrow?", "Probably the same quiet routine."),
    ("Talk to you later!", "Bye, see you."),
]
# Table 19: the session 3 utterance whose answer needs the Harvard memory.
SESSION_3 = [
    (
        "Hey Zoe, how are you feeling?",
        "I'm feeling overwhelmed lately. So much pressure with upcoming college stuff.",
    ),
]


def make_episode(
    sessions: list[list[tuple[str, str]]],
    episode_id: str = "lufy/test/Zoe",
    qa: tuple[QAItem, ...] = (),
) -> Episode:
    """Build an episode from (bot, user) exchanges per session, one day apart from EPOCH."""
    built = []
    for n, exchanges in enumerate(sessions, start=1):
        turns = []
        for bot_text, user_text in exchanges:
            for speaker, text in ((BOT, bot_text), (USER, user_text)):
                turns.append(Turn(f"{episode_id}/s{n}/t{len(turns)}", speaker, text))
        start = EPOCH + timedelta(days=n - 1)
        built.append(Session(f"{episode_id}/s{n}", n, start, tuple(turns)))
    return Episode(episode_id, "lufy", (BOT, USER), tuple(built), qa, {"user": USER})


def replay_session(method, episode: Episode, session: Session) -> None:
    """Recall before every bot reply of ``session`` (dialogue so far as history)."""
    for j, turn in enumerate(session.turns):
        if j and turn.speaker == BOT:
            method.recall(
                Query(episode.episode_id, session.index, session.turns[:j], BOT, session.start)
            )


def replay(method, episode: Episode, sessions: int | None = None) -> None:
    """Reset ``method`` and replay + observe the first ``sessions`` sessions (all by default)."""
    method.reset(episode)
    for session in episode.sessions[:sessions]:
        replay_session(method, episode, session)
        method.observe(session)


def probe(episode: Episode, question: str, index: int) -> Query:
    """An evaluation probe asked after session ``index`` (QA protocol shape)."""
    session = episode.sessions[index - 1]
    return Query(
        episode.episode_id, index, (), USER, session.start + timedelta(minutes=30), question
    )


def pair_id(episode: Episode, session: int, user_text: str) -> str:
    """Return the memory id of the pair whose user turn says ``user_text``."""
    for turn in episode.sessions[session - 1].turns:
        if turn.speaker == USER and turn.text == user_text:
            return f"pair:{turn.turn_id}"
    raise KeyError(user_text)
