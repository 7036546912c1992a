"""One metric's entry of ``summary.json``, typed (``metrics.scoring`` documents the keys).

The interval's key follows the bootstrap settings (``ci95`` at 95%: ``metrics.bootstrap``), so
``ci`` is whichever ``ci<level>`` the entry has and ``ci_level`` says which. Shapes older runs
wrote still read: a session entry that is a bare number (its value, nothing else), an entry
without an interval (``ci`` None), a value that is not a number (None; ``raw`` keeps it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_CI_KEY = re.compile(r"^ci(\d{2})$")


def _number(value: object) -> float | None:
    """A number of the entry as written (an int stays an int), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def _interval(value: object) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = _number(value[0]), _number(value[1])
        if low is not None and high is not None:
            return (low, high)
    return None


@dataclass(frozen=True)
class MetricSummary:
    """A metric's value over a run (or a session, or a subset), its interval and its parts."""

    name: str
    value: float | None
    n: int | None = None
    ci: tuple[float, float] | None = None
    ci_level: int | None = None  # 95 for ``ci95``; None: the entry has no interval key
    ci_note: str | None = None  # why there is no interval (too few episodes, ...)
    session_mean: float | None = None
    session_mean_ci: tuple[float, float] | None = None
    mean: float | None = None  # over per-item values, when the metric defines them
    per_session: Mapping[str, MetricSummary] = field(default_factory=dict)
    subsets: Mapping[str, MetricSummary] = field(default_factory=dict)
    raw: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_entry(cls, name: str, entry: object) -> MetricSummary:
        """Build from ``summary["metrics"][name]`` (or a session's or subset's entry)."""
        if not isinstance(entry, Mapping):  # an old per-session shape: the bare value
            return cls(name, _number(entry), raw={"value": entry})
        raw = {str(k): v for k, v in entry.items()}
        level = next((int(m[1]) for k in raw if (m := _CI_KEY.match(k))), None)
        n = _number(raw.get("n"))
        note = raw.get("ci_note")
        return cls(
            name=name,
            value=_number(raw.get("value")),
            n=None if n is None else int(n),
            ci=_interval(raw.get(f"ci{level}")) if level is not None else None,
            ci_level=level,
            ci_note=None if note is None else str(note),
            session_mean=_number(raw.get("session_mean")),
            session_mean_ci=_interval(raw.get(f"session_mean_ci{level or 95}")),
            mean=_number(raw.get("mean")),
            per_session=_parts(name, raw.get("per_session")),
            subsets=_parts(name, raw.get("subsets")),
            raw=raw,
        )


def _parts(name: str, value: object) -> dict[str, MetricSummary]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): MetricSummary.from_entry(name, v) for k, v in value.items()}
