"""Annotation sheets: blinded, shuffled CSVs out; validated ratings in.

A :class:`Study` names what annotators judge (its :class:`Criterion` list: a numeric scale or
a set of choices, with the statement shown to them). A paper's study module turns run folders
or data into :class:`Unit` s: one thing to judge (a session, a set of memories, a linked pair)
with its context and one candidate text per system (several for a comparison of systems, one
for a judgement of a single system).

``export_sheet`` writes, into a folder for the annotators, ``sheet.csv`` (one row per
candidate: a random item id, the group and unit, a letter in place of the system, the context,
the text and an empty column per criterion plus ``annotator`` and ``comment``) and
``instructions.md``; and, apart from it, ``key.csv`` (item id -> unit, group, system, letter),
which the annotators must not see. Groups (an episode, a participant) come in a seeded random
order, a group's units in their own order (a participant's sessions chronologically, as LUFY's
annotators read them), and each group's systems get the letters A, B, ... in a seeded random
order that stays the same across the group (a reader follows one chatbot through its sessions).

``import_ratings`` reads filled sheets back against the key: every row's item must be in the
key, every value on its criterion's scale (or one of its choices); a row with no value is
unrated, an item rated twice by one annotator is an error. The annotator is the row's
``annotator`` column, else the file's stem. Errors name the file, the line and what was
expected. ``write_ratings``/``read_ratings`` keep the tidy result (one rating per line).
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.io import write_text

__all__ = [
    "Criterion",
    "Rating",
    "Study",
    "Unit",
    "export_sheet",
    "import_ratings",
    "read_ratings",
    "write_ratings",
]

FIXED = ("item", "group", "unit", "candidate", "context", "text")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Criterion:
    """One judged quality: ``key`` (the sheet column), its label, the statement annotators
    read, and either a numeric ``scale`` (inclusive bounds) or categorical ``choices``."""

    key: str
    label: str
    statement: str
    scale: tuple[float, float] | None = None
    choices: tuple[str, ...] = ()

    def parse(self, raw: str, where: str) -> float | str | None:
        """The value of one sheet cell (None when blank); a ValueError names ``where``."""
        text = raw.strip()
        if not text:
            return None
        if self.choices:
            for choice in self.choices:
                if text.lower() == choice.lower():
                    return choice
            raise ValueError(f"{where}: {self.key} {text!r} is not one of {list(self.choices)}")
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{where}: {self.key} {text!r} is not a number") from None
        lo, hi = self.scale or (float("-inf"), float("inf"))
        if not lo <= value <= hi:
            raise ValueError(f"{where}: {self.key} {value:g} is outside the scale [{lo:g}, {hi:g}]")
        return value

    def describe(self) -> str:
        """How to fill the column (for the instructions)."""
        if self.choices:
            return "one of: " + ", ".join(self.choices)
        lo, hi = self.scale or (None, None)
        return f"a number from {lo:g} to {hi:g}" if lo is not None else "a number"


@dataclass(frozen=True)
class Study:
    """A human evaluation: its name (the folder under ``results/human/``), title, the
    instructions annotators read and the criteria they fill in."""

    name: str
    title: str
    instructions: str
    criteria: tuple[Criterion, ...]

    def criterion(self, key: str) -> Criterion:
        for c in self.criteria:
            if c.key == key:
                return c
        raise KeyError(f"{self.name}: no criterion {key!r} ({[c.key for c in self.criteria]})")


@dataclass(frozen=True)
class Unit:
    """One thing to judge: ``candidates`` maps each system to the text judged for it."""

    unit_id: str
    group: str
    context: str
    candidates: Mapping[str, str]
    order: float = 0.0  # position within the group (e.g. the session index)
    meta: Mapping[str, str] = field(default_factory=dict)


class Rating(NamedTuple):
    """One annotator's value of one criterion for one item (joined with the key)."""

    item: str
    unit: str
    group: str
    system: str
    annotator: str
    criterion: str
    value: float | str


def _csv(rows: Iterable[Mapping[str, object]], columns: Sequence[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _ordered(units: Sequence[Unit], rng: random.Random) -> list[list[Unit]]:
    groups: dict[str, list[Unit]] = {}
    for unit in units:
        groups.setdefault(unit.group, []).append(unit)
    names = sorted(groups)
    rng.shuffle(names)
    return [sorted(groups[g], key=lambda u: (u.order, u.unit_id)) for g in names]


def export_sheet(
    study: Study, units: Sequence[Unit], sheet_dir: Path, key_path: Path, seed: int = 0
) -> dict[str, Path]:
    """Write ``sheet.csv`` and ``instructions.md`` into ``sheet_dir`` and the key to
    ``key_path`` (module docstring); return their paths."""
    if not units:
        raise ConfigError(f"{study.name}: nothing to export (no units: are the runs there?)")
    if Path(key_path).resolve().parent == Path(sheet_dir).resolve():
        raise ConfigError(f"{study.name}: keep the key out of the annotators' folder {sheet_dir}")
    rng = random.Random(seed)
    ids = iter(rng.sample(range(16**6), sum(len(u.candidates) for u in units)))
    sheet, key = [], []
    for group in _ordered(units, rng):
        systems = sorted({s for u in group for s in u.candidates})
        rng.shuffle(systems)
        letter = {s: LETTERS[i % 26] for i, s in enumerate(systems)}
        for unit in group:
            for system in sorted(unit.candidates, key=letter.__getitem__):
                item = f"h{next(ids):06x}"
                base = {"item": item, "group": unit.group, "unit": unit.unit_id}
                sheet.append(
                    {
                        **base,
                        "candidate": letter[system],
                        "context": unit.context,
                        "text": unit.candidates[system],
                    }
                )
                key.append({**base, "system": system, "candidate": letter[system]})
    columns = [*FIXED, *(c.key for c in study.criteria), "annotator", "comment"]
    paths = {
        "sheet": Path(sheet_dir) / "sheet.csv",
        "instructions": Path(sheet_dir) / "instructions.md",
        "key": Path(key_path),
    }
    write_text(paths["sheet"], _csv(sheet, columns))
    write_text(paths["instructions"], instructions(study))
    write_text(paths["key"], _csv(key, ["item", "unit", "group", "system", "candidate"]))
    return paths


def instructions(study: Study) -> str:
    """The annotators' instructions: the study's text and how to fill each column."""
    lines = [f"# {study.title}", "", study.instructions.strip(), "", "## Columns to fill", ""]
    for c in study.criteria:
        lines.append(f"- `{c.key}` ({c.label}): {c.statement.strip()} Fill in {c.describe()}.")
    lines += [
        "- `annotator`: your name or id (the same on every row you rate).",
        "- `comment`: optional.",
        "",
        "Rows that share a `unit` show the same situation with different chatbots (letters "
        "A, B, ...); within a `group` the same letter is the same chatbot. Leave a row blank "
        "to skip it. Do not reorder or edit the other columns.",
    ]
    return "\n".join(lines) + "\n"


def _read_key(key_path: Path) -> dict[str, dict[str, str]]:
    with Path(key_path).open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or "item" not in rows[0] or "system" not in rows[0]:
        raise DatasetFormatError(f"{key_path}: expected a key with columns item, unit, system")
    return {r["item"]: r for r in rows}


def import_ratings(study: Study, key_path: Path, files: Sequence[Path]) -> list[Rating]:
    """Read filled sheets (module docstring) into ratings joined with the key."""
    key = _read_key(key_path)
    out: list[Rating] = []
    seen: set[tuple[str, str]] = set()
    for path in files:
        with Path(path).open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [
                c
                for c in ("item", *(c.key for c in study.criteria))
                if c not in (reader.fieldnames or [])
            ]
            if missing:
                raise DatasetFormatError(
                    f"{path}: columns {missing} missing (a sheet of {study.name}?)"
                )
            for line, row in enumerate(reader, start=2):
                out += _row_ratings(study, key, row, f"{path} line {line}", Path(path).stem, seen)
    return out


def _row_ratings(
    study: Study,
    key: Mapping[str, Mapping[str, str]],
    row: Mapping[str, str | None],
    where: str,
    default_annotator: str,
    seen: set[tuple[str, str]],
) -> list[Rating]:
    item = (row.get("item") or "").strip()
    if item not in key:
        raise DatasetFormatError(f"{where}: item {item!r} is not in the key of {study.name}")
    try:
        values = {c.key: c.parse(row.get(c.key) or "", where) for c in study.criteria}
    except ValueError as exc:
        raise DatasetFormatError(str(exc)) from None
    if all(v is None for v in values.values()):
        return []
    annotator = (row.get("annotator") or "").strip() or default_annotator
    if (annotator, item) in seen:
        raise DatasetFormatError(f"{where}: item {item} rated twice by annotator {annotator!r}")
    seen.add((annotator, item))
    k = key[item]
    return [
        Rating(item, k["unit"], k["group"], k["system"], annotator, c, v)
        for c, v in values.items()
        if v is not None
    ]


def write_ratings(ratings: Sequence[Rating], path: Path) -> Path:
    """Write ratings as a tidy CSV (one rating per line)."""
    write_text(Path(path), _csv((r._asdict() for r in ratings), Rating._fields))
    return Path(path)


def read_ratings(study: Study, path: Path) -> list[Rating]:
    """Read ``write_ratings``'s CSV back (numbers for numeric criteria)."""
    out = []
    with Path(path).open(encoding="utf-8", newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            crit = study.criterion(row["criterion"])
            value = crit.parse(row["value"], f"{path} line {line}")
            if value is None:  # write_ratings never writes a blank value
                raise DatasetFormatError(f"{path} line {line}: no value for {row['criterion']}")
            fields = {f: row[f] for f in Rating._fields if f != "value"}
            out.append(Rating(**fields, value=value))
    return out
