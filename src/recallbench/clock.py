"""Simulated clock: session start datetimes derived from each dataset, never wall-clock time.

Datasets differ in what they say about time:

- GVD: a calendar date per session (``YYYY-MM-DD``); sessions start at ``DAY_START`` that day.
- MSC: ``time_num``/``time_unit`` on each previous session = gap to the next session.
- Conversation Chronicles: phrases such as ``"A few hours after"`` (see ``PHRASE_GAPS``).
- CareCall: the paper says sessions are 1-2 weeks apart; we use the midpoint ``CARECALL_GAP``.
- LUFY: no timestamps; participants talked on consecutive days (``LUFY_GAP``).

Datasets without absolute dates start at ``EPOCH``. All constants are documented choices and can be
overridden by loader options.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

EPOCH = datetime(2023, 1, 2, 9, 0)
DAY_START = time(9, 0)
CARECALL_GAP = timedelta(days=10, hours=12)  # midpoint of "1-2 weeks" (Bae et al. 2022, sec. 3)
LUFY_GAP = timedelta(days=1)  # LUFY sec. 4: one session per day
UNKNOWN_GAP = timedelta(days=1)  # MSC: no gap is recorded before a personasummary-only session

_UNIT_SECONDS = {
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}

# Quantity words in CC phrases -> a representative count of units.
_QUANTITY = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
    "two": 2,
    "a few": 3,
    "few": 3,
    "three": 3,
    "several": 5,
    "many": 8,
}

PHRASE_GAPS: dict[str, timedelta] = {
    "A few hours after": timedelta(hours=3),
    "A few days after": timedelta(days=3),
    "A few weeks after": timedelta(weeks=3),
    "A few months after": timedelta(days=90),
    "A couple of years after": timedelta(days=730),
}


class ClockError(ValueError):
    """A time expression could not be turned into a duration."""


def unit_gap(num: float, unit: str) -> timedelta:
    """Return ``num`` units as a timedelta; ``unit`` may be plural ("days") or capitalised."""
    key = unit.strip().lower().rstrip("s")
    if key not in _UNIT_SECONDS:
        raise ClockError(f"unknown time unit {unit!r} (expected one of {sorted(_UNIT_SECONDS)})")
    return timedelta(seconds=float(num) * _UNIT_SECONDS[key])


def phrase_gap(phrase: str) -> timedelta:
    """Turn a Conversation Chronicles interval phrase into a duration.

    ``"Start"`` is zero. Known phrases come from ``PHRASE_GAPS``; others are parsed as
    ``<quantity> <unit>(s) after|later`` with the quantities of ``_QUANTITY`` or a number.
    """
    text = phrase.strip()
    if text.lower() == "start":
        return timedelta(0)
    if text in PHRASE_GAPS:
        return PHRASE_GAPS[text]
    m = re.fullmatch(r"(?i)(.+?)\s+(minute|hour|day|week|month|year)s?\s+(after|later)", text)
    if not m:
        raise ClockError(f"cannot parse time interval phrase {phrase!r}")
    qty = m.group(1).lower()
    count = float(qty) if qty.replace(".", "", 1).isdigit() else _QUANTITY.get(qty)
    if count is None:
        raise ClockError(f"unknown quantity {m.group(1)!r} in time interval phrase {phrase!r}")
    return unit_gap(count, m.group(2))


def from_gaps(gaps: Iterable[timedelta], start: datetime = EPOCH) -> list[datetime]:
    """Return session starts: the first at ``start``, each next one a gap later.

    ``gaps[i]`` is the time between session i and session i+1 (so one fewer than sessions).
    """
    starts = [start]
    for gap in gaps:
        if gap < timedelta(0):
            raise ClockError(f"negative gap {gap} between sessions")
        starts.append(starts[-1] + gap)
    return starts


def from_dates(days: Iterable[str | date]) -> list[datetime]:
    """Return session starts for calendar dates (ISO strings or dates) at ``DAY_START``."""
    out = []
    for d in days:
        day = date.fromisoformat(d) if isinstance(d, str) else d
        out.append(datetime.combine(day, DAY_START))
    return out


def regular(n: int, gap: timedelta, start: datetime = EPOCH) -> list[datetime]:
    """Return ``n`` session starts separated by a constant ``gap``."""
    return from_gaps([gap] * max(n - 1, 0), start)
