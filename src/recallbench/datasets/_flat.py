"""The flattened multi-session schema shared by Conversation Chronicles, THEANINE's MSC sample and
our TeaBag interchange format.

One object per episode::

    {"dataID": "episode-1", "first_session_dialogue": ["Hi!", ...],
     "first_session_speakers": ["Neighbors A", ...], "second_session_dialogue": [...], ...}

Sessions are ``first`` .. ``fifth`` (CC always has five, THEANINE's sample too); each session is a
list of utterance strings with a parallel list of speaker names. Conversation Chronicles adds
``relationship``, ``time_interval`` (five phrases, the first ``"Start"``) and ``summary`` (five
strings), which the calling loader reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from recallbench.datasets._common import get, make_turns, session_id, speakers_in_order, strings
from recallbench.errors import DatasetFormatError
from recallbench.records import Episode, Session

ORDINALS = ("first", "second", "third", "fourth", "fifth")

Utterances = list[tuple[str, str]]


def pairs(dialogue: object, speakers: object, what: str, where: str) -> Utterances:
    """Zip a session's utterance list with its parallel speaker list, checking both."""
    texts = strings(dialogue, f"{what} dialogue", where)
    names = strings(speakers, f"{what} speakers", where)
    if len(texts) != len(names):
        raise DatasetFormatError(
            f"{where}: {what} has {len(texts)} utterances but {len(names)} speakers "
            "(the lists must be parallel)"
        )
    return list(zip(names, texts, strict=True))


def flat_sessions(record: Mapping[str, object], where: str) -> list[Utterances]:
    """Return the sessions of a flattened record, in order, as ``(speaker, text)`` lists."""
    sessions: list[Utterances] = []
    for ordinal in ORDINALS:
        dkey, skey = f"{ordinal}_session_dialogue", f"{ordinal}_session_speakers"
        if record.get(dkey) is None and record.get(skey) is None:
            break
        dialogue = get(record, dkey, list, where)
        speakers = get(record, skey, list, where)
        sessions.append(pairs(dialogue, speakers, f"{ordinal} session", where))
    if not sessions:
        raise DatasetFormatError(
            f"{where}: 'first_session_dialogue' missing (keys: {sorted(record)})"
        )
    for ordinal in ORDINALS[len(sessions) :]:
        if record.get(f"{ordinal}_session_dialogue") is not None:
            raise DatasetFormatError(
                f"{where}: {ordinal!r} session present after a missing "
                f"{ORDINALS[len(sessions)]!r} session (sessions must be contiguous)"
            )
    return sessions


def build_episode(
    episode_id: str,
    dataset: str,
    sessions: Sequence[Utterances],
    starts: Sequence[datetime | None],
    gold: Sequence[Mapping[str, object]] | None = None,
    meta: Mapping[str, object] | None = None,
) -> Episode:
    """Assemble an Episode from per-session ``(speaker, text)`` lists (ids ``<ep>/s<i>/t<j>``)."""
    gold = gold or [{} for _ in sessions]
    out = []
    for index, (utterances, start, g) in enumerate(zip(sessions, starts, gold, strict=True), 1):
        sid = session_id(episode_id, index)
        out.append(Session(sid, index, start, make_turns(sid, utterances), dict(g)))
    return Episode(
        episode_id, dataset, speakers_in_order(sessions), tuple(out), (), dict(meta or {})
    )
