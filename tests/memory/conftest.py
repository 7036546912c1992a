"""Fixtures of the memory tests: the real extractive LLM, the hashing embedder, a tiny episode."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench.embed import HashingEmbedder
from recallbench.llm import build_llm
from recallbench.records import Episode, QAItem, Query, Session, Turn

START = datetime(2023, 1, 2, 9, 0)

# (speaker, text) per session; session 3 is the "current" one: only its first turn is history.
DIALOGUE = {
    1: [
        ("Alice", "Hi Bob! I just adopted a puppy named Rex."),
        ("Bob", "Congrats! I work as a nurse at the city hospital."),
        ("Alice", "I have a sore throat today, so I am staying home."),
        ("Bob", "Get well soon. My shift starts early tomorrow."),
    ],
    2: [
        ("Alice", "My throat is fully recovered now."),
        ("Bob", "Great news. I started learning to play the violin last week."),
        ("Alice", "I love hiking in the mountains every weekend."),
        ("Bob", "How is Rex doing?"),
    ],
    3: [
        ("Bob", "How was your hike in the mountains this weekend?"),
        ("Alice", "It was lovely, and I took Rex hiking with me."),
        ("Bob", "I secretly sold my violin yesterday for a trumpet."),
    ],
}
FUTURE_MARKERS = ("secretly sold", "trumpet", "took Rex hiking")

GOLD = {
    1: {
        "summary": ["Alice adopted a puppy named Rex.", "Bob works as a nurse."],
        "persona": {"Alice": ["I have a puppy named Rex."], "Bob": ["I am a nurse."]},
        "memory": [],
    },
    2: {
        "summary": ["Alice recovered from a sore throat.", "Bob learns the violin."],
        "persona": {"Alice": ["I love hiking."], "Bob": ["I play the violin."]},
        "memory": ["Alice adopted a puppy named Rex.", "Bob works as a nurse."],
    },
    3: {
        "summary": ["Bob secretly sold his violin for a trumpet."],
        "persona": {"Bob": ["I sold my violin for a trumpet."]},
        "memory": [
            "Alice has a puppy named Rex.",
            "Alice hikes in the mountains.",
            "Bob learns violin.",
        ],
    },
}


def make_episode(episode_id: str = "ep1") -> Episode:
    """Build the 3-session episode (turn ids ``<episode>/s<i>t<j>``) with a QA item on s3."""
    sessions = tuple(
        Session(
            session_id=f"{episode_id}/s{i}",
            index=i,
            start=START + timedelta(days=7 * (i - 1)),
            turns=tuple(
                Turn(f"{episode_id}/s{i}t{j}", speaker, text)
                for j, (speaker, text) in enumerate(DIALOGUE[i])
            ),
            gold=GOLD[i],
        )
        for i in (1, 2, 3)
    )
    qa = (QAItem("q1", "What did Bob sell?", ("his violin",), 3, (f"{episode_id}/s3t2",)),)
    return Episode(episode_id, "tiny", ("Alice", "Bob"), sessions, qa)


def query_at(episode: Episode, index: int = 3, upto: int = 1) -> Query:
    """Query in session ``index`` after its first ``upto`` turns, answering as the next speaker."""
    session = episode.sessions[index - 1]
    return Query(
        episode.episode_id,
        index,
        session.turns[:upto],
        session.turns[upto].speaker,
        session.start,
    )


@pytest.fixture(scope="session")
def llm():
    """The real extractive backend: every task runs its offline implementation."""
    return build_llm({"backend": "extractive"}, cache_path=None)


@pytest.fixture(scope="session")
def embedder():
    """The deterministic hashing embedder (conf/embedder/hashing.yaml)."""
    return HashingEmbedder(dim=256)


@pytest.fixture
def episode() -> Episode:
    """The tiny episode with id ``ep1``."""
    return make_episode()


@pytest.fixture(name="make_episode")
def make_episode_fixture():
    """The episode builder ``make_episode(episode_id)``."""
    return make_episode


@pytest.fixture(name="query_at")
def query_at_fixture():
    """The query builder ``query_at(episode, index, upto)``."""
    return query_at


@pytest.fixture
def future_markers() -> tuple[str, ...]:
    """Phrases that exist only in session 3's future turns or its gold summary."""
    return FUTURE_MARKERS
