"""Resolve time references in a user input to calendar dates on the simulated clock.

CAIM sec. 3.3.2: an agent "determine[s] whether the input includes a time-based unit (e.g.,
'yesterday', 'June 9th'). If such references are present, the LLM agent generates corresponding
timestamps." This module is that agent's offline twin: a rule-based parser of relative and
absolute English date expressions against ``now`` (``Query.now``, never wall-clock time) and the
dates of the past conversations (for "our first conversation", which the paper reports CAIM
failing on, sec. 4.2.3).

Understood (case-insensitive): ISO ``2023-05-04`` / ``2023/05/04``; US ``5/4`` and ``5/4/2023``;
``May 4th``, ``May 4``, ``4 May``, ``the 4th of May``, ``May the 4th`` (optional year; a date
without a year is the latest such date on or before ``now``); ``today``, ``tonight``, ``this
morning|afternoon|evening``; ``yesterday``, ``last night``, ``the day before yesterday``;
``tomorrow``; ``<n> days|weeks ago`` (digits, number words one to nineteen, ``a``, ``a couple of``), ``a few days
ago`` (2-4 days back); ``last week`` (the previous Monday-Sunday week), ``this week``,
``last weekend``, ``this weekend``, ``last month``, ``this month`` (only days up to ``now``);
``<weekday>`` (latest on or before today), ``last <weekday>`` (latest before today); ``our
first|second|...|last|previous|latest conversation|chat|talk`` and ``the first time we
talked|chatted|spoke|met`` against the conversation dates.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta

from recallbench.text import NUMBER_WORDS

MONTHS = (
    {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
    | {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
    | {"sept": 9}
)
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBERS = {word: n for word, n in NUMBER_WORDS.items() if n} | {
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
LATEST = ("last", "previous", "latest", "most recent")

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_NUM = "|".join(sorted((re.escape(k) for k in NUMBERS), key=len, reverse=True))
_CONVO = r"(?:conversation|chat|talk|session|discussion)s?"
_PATTERNS = {
    "iso": re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b"),
    "us": re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])"),
    "month_day": re.compile(rf"\b({_MONTH})\.?\s+(?:the\s+)?{_DAY}\b{_YEAR}", re.I),
    "day_month": re.compile(rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+)?({_MONTH})\b\.?{_YEAR}", re.I),
    "ago": re.compile(rf"\b(\d+|{_NUM})\s+(day|week)s?\s+ago\b", re.I),
    "few_days": re.compile(r"\b(?:a\s+)?few\s+days\s+ago\b", re.I),
    "weekday": re.compile(rf"\b(last\s+|on\s+|this\s+past\s+)?({'|'.join(WEEKDAYS)})\b", re.I),
    "ordinal_convo": re.compile(
        rf"\b(?:our|the|my)\s+({'|'.join(ORDINALS)}|{'|'.join(LATEST)})\s+{_CONVO}\b", re.I
    ),
    "ordinal_time": re.compile(
        rf"\b(?:the\s+)?({'|'.join(ORDINALS)}|{'|'.join(LATEST)})\s+time\s+(?:we|i|you)\s+"
        r"(?:talked|chatted|spoke|met|discussed|talk|chat|speak)\b",
        re.I,
    ),
}


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _latest(month: int, day: int, year: str | None, today: date) -> date | None:
    """The date ``month/day`` of ``year``, else the latest one on or before ``today``."""
    if year:
        return _safe_date(int(year), month, day)
    found = _safe_date(today.year, month, day)
    if found is not None and found > today:
        found = _safe_date(today.year - 1, month, day)
    return found


def _span(start: date, end: date, today: date) -> list[date]:
    end = min(end, today)
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def _absolute(text: str, today: date) -> list[date]:
    out: list[date | None] = []
    for m in _PATTERNS["iso"].finditer(text):
        out.append(_safe_date(int(m[1]), int(m[2]), int(m[3])))
    for m in _PATTERNS["us"].finditer(text):
        if 1 <= int(m[1]) <= 12:
            out.append(_latest(int(m[1]), int(m[2]), m[3], today))
    for m in _PATTERNS["month_day"].finditer(text):
        # "may" is also a modal verb ("may 2 people"): lowercase needs an ordinal suffix
        if m[1].lower() == "may" and m[1] == "may" and not m[3]:
            continue
        out.append(_latest(MONTHS[m[1].lower().rstrip(".")], int(m[2]), m[4], today))
    for m in _PATTERNS["day_month"].finditer(text):
        if m[3].lower() == "may" and m[3] == "may" and not m[2]:
            continue
        out.append(_latest(MONTHS[m[3].lower().rstrip(".")], int(m[1]), m[4], today))
    return [d for d in out if d is not None]


def _relative(text: str, today: date) -> list[date]:
    low = text.lower()
    out: list[date] = []
    if re.search(r"\b(today|tonight|this\s+(morning|afternoon|evening))\b", low):
        out.append(today)
    if re.search(r"\bthe\s+day\s+before\s+yesterday\b", low):
        out.append(today - timedelta(days=2))
    elif re.search(r"\b(yesterday|last\s+night)\b", low):
        out.append(today - timedelta(days=1))
    if re.search(r"\btomorrow\b", low):
        out.append(today + timedelta(days=1))
    for m in _PATTERNS["ago"].finditer(low):
        n = int(m[1]) if m[1].isdigit() else NUMBERS[m[1]]
        out.append(today - timedelta(days=n * (7 if m[2] == "week" else 1)))
    if _PATTERNS["few_days"].search(low):
        out += [today - timedelta(days=n) for n in (2, 3, 4)]
    monday = today - timedelta(days=today.weekday())
    if re.search(r"\blast\s+week\b", low):
        out += _span(monday - timedelta(days=7), monday - timedelta(days=1), today)
    if re.search(r"\bthis\s+week\b", low):
        out += _span(monday, monday + timedelta(days=6), today)
    if re.search(r"\blast\s+weekend\b", low):
        out += _span(monday - timedelta(days=2), monday - timedelta(days=1), today)
    if re.search(r"\bthis\s+weekend\b", low):
        out += _span(monday + timedelta(days=5), monday + timedelta(days=6), today)
    first = today.replace(day=1)
    if re.search(r"\blast\s+month\b", low):
        prev = (first - timedelta(days=1)).replace(day=1)
        out += _span(prev, first - timedelta(days=1), today)
    if re.search(r"\bthis\s+month\b", low):
        out += _span(first, today, today)
    for m in _PATTERNS["weekday"].finditer(low):
        back = (today.weekday() - WEEKDAYS[m[2]]) % 7
        if m[1] and m[1].strip() == "last" and back == 0:
            back = 7
        out.append(today - timedelta(days=back))
    return out


def _conversations(text: str, sessions: Sequence[date], today: date) -> list[date]:
    """Ordinals count from the first conversation; "last" is the latest one before today."""
    earlier = [d for d in sessions if d < today] or list(sessions)
    out = []
    for key in ("ordinal_convo", "ordinal_time"):
        for m in _PATTERNS[key].finditer(text):
            word = m[1].lower()
            if word in ORDINALS and ORDINALS[word] <= len(sessions):
                out.append(sessions[ORDINALS[word] - 1])
            elif word not in ORDINALS and earlier:
                out.append(earlier[-1])
    return out


def resolve_dates(
    text: str, now: datetime | date, sessions: Iterable[date | str] = ()
) -> list[date]:
    """Return the sorted distinct calendar dates ``text`` refers to (``[]`` when none).

    Args:
        text: a user input or probing question.
        now: the simulated present (``Query.now``).
        sessions: dates of the past conversations, for "our first conversation" and the like;
            "last conversation" is the latest one before ``now``'s date (else the latest).
    """
    today = now.date() if isinstance(now, datetime) else now
    dates = {date.fromisoformat(d) if isinstance(d, str) else d for d in sessions}
    past = sorted(d for d in dates if d <= today)
    found = _absolute(text, today) + _relative(text, today) + _conversations(text, past, today)
    return sorted(set(found))
