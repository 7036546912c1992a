"""Simulated clock: gaps, phrases and dates become session starts; never wall-clock time."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from recallbench import clock


@pytest.mark.parametrize(
    ("num", "unit", "expected"),
    [
        (1, "hour", timedelta(hours=1)),
        (5, "days", timedelta(days=5)),
        (2, "Weeks", timedelta(weeks=2)),
        (1, "month", timedelta(days=30)),
        (1.5, "hours", timedelta(minutes=90)),
    ],
)
def test_unit_gap(num, unit, expected):
    assert clock.unit_gap(num, unit) == expected


def test_unknown_unit_is_an_error():
    with pytest.raises(clock.ClockError, match="fortnight"):
        clock.unit_gap(1, "fortnight")


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("Start", timedelta(0)),
        ("A few hours after", timedelta(hours=3)),
        ("A few weeks after", timedelta(weeks=3)),
        ("A few months after", timedelta(days=90)),
        ("A couple of years after", timedelta(days=730)),
        ("A couple of days after", timedelta(days=2)),
        ("Several hours later", timedelta(hours=5)),
        ("2 days after", timedelta(days=2)),
    ],
)
def test_phrase_gap(phrase, expected):
    assert clock.phrase_gap(phrase) == expected


@pytest.mark.parametrize("phrase", ["Tomorrow", "A few eons after", "Some days after"])
def test_bad_phrase_names_the_phrase(phrase):
    with pytest.raises(clock.ClockError, match=phrase.split()[0]):
        clock.phrase_gap(phrase)


def test_from_gaps_accumulates():
    starts = clock.from_gaps([timedelta(hours=1), timedelta(days=2)])
    assert starts == [
        clock.EPOCH,
        clock.EPOCH + timedelta(hours=1),
        clock.EPOCH + timedelta(days=2, hours=1),
    ]
    with pytest.raises(clock.ClockError):
        clock.from_gaps([timedelta(hours=-1)])


def test_from_dates_and_regular():
    assert clock.from_dates(["2023-04-27", "2023-05-06"]) == [
        datetime(2023, 4, 27, 9),
        datetime(2023, 5, 6, 9),
    ]
    starts = clock.regular(3, clock.LUFY_GAP)
    assert starts[2] - starts[0] == timedelta(days=2)
    assert clock.CARECALL_GAP == timedelta(days=10, hours=12)
