"""One table cell: our value, its interval and test, the paper's value, and how a cell is written.

A :class:`Cell` holds what the renderer prints for one (row, column, metric): our value with
its episode-clustered 95% interval (``ci_low``/``ci_high``; ``metrics.bootstrap``), the paired
test against the table's reference row (``p_value``, ``p_holm``, ``significant``;
``tables.significance``), the paper's value, whether our setting is comparable with the
paper's (``comparable``; ``tables.comparability``) and what it was computed on (``n`` items,
``episodes``, ``coverage``: fixture or fewer episodes than the paper).

md/tex text of a cell: ``ours[†] [ci_low, ci_high] [§k|‡k] (paper; ours - paper)``:

- ``†``: differs from the reference row at the table's level after Holm's correction;
- ``§k``: computed on k episodes of the project's fixtures, ``‡k``: on k episodes, fewer than
  the paper's;
- ``±s``: a value averaged over k seeds of its own randomness (MAUVE's k-means: ``metrics.mauve``)
  shows the seeds' standard deviation s, and is printed only to the digit that noise supports
  (:func:`noise_digits`): the unit of the last digit is at least the standard error of the mean
  over seeds. Another machine's float32 kernels flip some single fits (measured on 1,085 MSC
  responses: 2 of 10 fits under AVX2 and under plain kernels, the mean moving 0.01 and 0.46
  points against a standard error of 0.61; ``bench/mauve_dispatch.py``), so machines agree on
  the printed value up to one unit of its last digit;
- ``(paper)`` without a difference: our setting is not comparable with the paper's (the header
  says why), or was not assessed, so no difference is printed. A difference is printed only
  for a cell assessed as comparable (``comparable is True``).

The csv is tidy, one line per cell (:data:`CSV_COLUMNS`); an empty field is "not applicable"
(no interval, no test, no comparable difference; ``comparable`` empty = not assessed), ``n/a`` a
value we could not compute.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

__all__ = [
    "CSV_COLUMNS",
    "DASH",
    "FEWER",
    "FIXTURE",
    "LEGEND",
    "NA",
    "SIGNIFICANT",
    "Cell",
    "cells_csv",
    "format_cell",
    "legend",
    "noise_digits",
    "seed_sd",
]

NA = "n/a"  # our value is not available (not computable here)
DASH = "—"  # the paper reports no value
SIGNIFICANT = "†"
FIXTURE = "§"
FEWER = "‡"
LEGEND = (
    "Each cell: ours (paper; ours - paper). n/a = not computable here; "
    "— = not reported by the paper."
)
CSV_COLUMNS = [
    "row",
    "column",
    "metric",
    "ours",
    "paper",
    "diff",
    "n",
    "episodes",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "significant",
    "comparable",
    "coverage",
    "seed_sd",
    "seeds",
]

Value = float | int | str | None


@dataclass(frozen=True)
class Cell:
    """One table cell: our value and the paper's for ``metric`` at (``row``, ``column``).

    ``n`` is the number of items our value was computed on (responses, questions, users);
    ``digits`` the number of decimals shown for non-integer values. The rest is optional (a
    builder that computes no interval leaves it empty): ``episodes`` (clusters), the 95%
    interval, the test against the reference row, ``comparable`` (True: the difference is
    shown; False: not comparable, None: not assessed, both without a difference) and
    ``coverage`` (:data:`FIXTURE`, :data:`FEWER` or "").
    """

    row: str
    column: str
    metric: str
    ours: Value
    paper: Value
    n: int | None = None
    digits: int = 2
    episodes: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None
    significant: bool | None = None
    comparable: bool | None = None
    coverage: str = ""
    seed_sd: float | None = None
    seeds: int | None = None

    @property
    def shown_digits(self) -> int:
        """Decimals printed: ``digits``, fewer where the seeds' noise does not support them."""
        return noise_digits(self.digits, self.seed_sd, self.seeds)

    @property
    def diff(self) -> float | int | None:
        """Return ours - paper when both are numbers and assessed comparable (int for two ints)."""
        if self.comparable is not True:
            return None
        if _is_int(self.ours) and _is_int(self.paper):
            return self.ours - self.paper
        if _is_number(self.ours) and _is_number(self.paper):
            return float(self.ours) - float(self.paper)
        return None


def seed_sd(values: Sequence[float] | None) -> float | None:
    """Standard deviation (ddof 1) of a value's per-seed values; None for fewer than two."""
    if not values or len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def noise_digits(digits: int, sd: float | None, seeds: int | None) -> int:
    """Decimals a mean over ``seeds`` seeds can carry: at most ``digits``, and the unit of the
    last one (a power of ten) at least the standard error ``sd / sqrt(seeds)``. Negative when
    the noise reaches tens: -1 prints the value rounded to tens."""
    if sd is None or not seeds or sd <= 0:
        return digits
    se = sd / math.sqrt(seeds)
    return min(digits, -math.ceil(math.log10(se)))


def _is_int(value: Value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Value) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fmt(value: Value, digits: int, *, missing: str = NA, sign: bool = False) -> str:
    """Format a value with ``digits`` decimals and thousands separators."""
    if value is None:
        return missing
    if isinstance(value, str):
        return value
    if digits < 0:  # rounded to tens, hundreds ... (a value whose noise reaches whole units)
        value = int(round(value, digits))
        digits = 0
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and not digits):
        return f"{int(value):+,}" if sign else f"{int(value):,}"
    return f"{value:+,.{digits}f}" if sign else f"{value:,.{digits}f}"


def _ours(cell: Cell) -> str:
    digits = cell.shown_digits
    text = fmt(cell.ours, digits)
    if cell.ours is None:
        return text
    if cell.significant:
        text += SIGNIFICANT
    if cell.seed_sd is not None:  # the spread itself one decimal finer than the value
        text += f" ±{fmt(cell.seed_sd, max(digits, -1) + 1)}"
    if cell.ci_low is not None and cell.ci_high is not None:
        text += f" [{fmt(cell.ci_low, digits)}, {fmt(cell.ci_high, digits)}]"
    if cell.coverage:
        text += f" {cell.coverage}{'' if cell.episodes is None else cell.episodes}"
    return text


def format_cell(cell: Cell) -> str:
    """Return the human-readable text of ``cell`` for md/tex."""
    ours = _ours(cell)
    if cell.paper is None:
        return ours if cell.ours is None else f"{ours} ({DASH})"
    paper = fmt(cell.paper, cell.digits)
    if isinstance(cell.ours, str) and isinstance(cell.paper, str):
        return ours if cell.ours == cell.paper else f"{ours} ({paper})"
    if cell.diff is None:
        return f"{ours} ({paper})"
    return f"{ours} ({paper}; {fmt(cell.diff, cell.shown_digits, sign=True)})"


def legend(cells: Sequence[Cell]) -> str:
    """The legend line: :data:`LEGEND` plus what the cells' intervals and markers mean."""
    parts = [LEGEND]
    if any(c.ci_low is not None for c in cells):
        parts.append("[a, b] = 95% episode-clustered bootstrap interval of ours.")
    if any(c.comparable is not True and c.paper is not None for c in cells):
        parts.append(
            "(paper) without a difference = not comparable or not assessed (see 'comparability')."
        )
    if seeded := sorted({c.seeds for c in cells if c.seed_sd is not None and c.seeds}):
        k = "/".join(str(s) for s in seeded)
        parts.append(
            f"±s = standard deviation of ours over {k} seeds of its own randomness (MAUVE's "
            "k-means); ours is their mean, printed to the digit that noise supports."
        )
    if any(c.coverage == FIXTURE for c in cells):
        parts.append(f"{FIXTURE}k = computed on k episodes of the project's fixtures.")
    if any(c.coverage == FEWER for c in cells):
        parts.append(f"{FEWER}k = computed on k episodes, fewer than the paper's.")
    return " ".join(parts)


def _csv_value(value: Value | bool, empty: str = NA) -> str:
    if value is None:
        return empty
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


def cells_csv(cells: Sequence[Cell]) -> str:
    """Return the tidy csv of ``cells``, one line per cell, columns :data:`CSV_COLUMNS`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in cells:
        diff = _csv_value(c.diff) if c.comparable is True else ""
        head = [c.row, c.column, c.metric, _csv_value(c.ours), _csv_value(c.paper), diff]
        tail = (c.episodes, c.ci_low, c.ci_high, c.p_value, c.p_holm, c.significant)
        writer.writerow(
            [
                *head,
                _csv_value(c.n),
                *(_csv_value(v, "") for v in tail),
                _csv_value(c.comparable, ""),
                c.coverage,
                _csv_value(c.seed_sd, ""),
                _csv_value(c.seeds, ""),
            ]
        )
    return buf.getvalue()
