"""Is our setting comparable with the paper's? And on how many episodes did we compute a cell?

The paper's setting lives beside its numbers in ``papers/<paper>/reference.yaml``; EVERY table
entry declares both (``tests/tables/test_references.py`` checks them all)::

    table1:
      episodes: 50                  # the paper's episodes per cell: one number, or per column
                                    # (or row) label {MSC: 50, Avg.: 100, default: 50}; null
                                    # when the paper gives none, with an episodes_note: why
      setting:
        generator: {class: llm, model: gpt-3.5-turbo-0125}
        judge: {class: llm, model: GPT-4o}      # or {class: human, model: 3 annotators}
        metrics:                    # per metric (its summary name or the cell's metric label)
          mauve: {is: [mauve_gpt2_large], what: MAUVE on GPT-2-large features}
          perplexity: {is: [], what: PPL under the fine-tuned HyperCLOVA}   # never ours
        data: {what: the full CareCall_mem (2,812 episodes), whole: true}

A cell is **comparable** when the runs behind it have the paper's generator class (``extractive``
= our no-LLM baseline; every other backend = ``llm``), the paper's judge class (our ``lexical``
judge is its own class; ``llm``; the papers' ``human`` annotators), for the cell's metric one of
the implementations listed under ``is`` (e.g. MAUVE only on GPT-2-large features) and, when
``data.whole`` says the paper's numbers describe its whole dataset (counts, vocabulary sizes,
per-conversation averages of a corpus), at least the paper's episodes behind the cell. A
non-comparable cell shows the paper's value without a difference and the table header says why.
A cell computed on the project's fixtures is never comparable: they are not the paper's data.
Models within a class are not compared (a local LLM and gpt-3.5 are both ``llm``); the header
names both. A table whose reference declares no ``setting`` is "not assessed": its cells carry
``comparable = None`` (empty in the csv) and no difference either; only an assessed, comparable
cell prints one.

**Coverage**: a cell computed (partly) on the project's own fixtures (a run whose
``dataset.data_dir`` is a ``fixtures`` folder) is marked ``§``, one computed on fewer episodes
than the paper's ``episodes`` ``‡`` (``tables.cell``); both with the number of episodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.run.read import RunRecord
from recallbench.tables.cell import FEWER, FIXTURE

__all__ = ["FIXTURE_REASON", "Setting", "generator_class", "is_fixture", "judge_class"]

CLASS_KEYS = ("generator", "judge")
FIXTURE_REASON = "cells on the project's fixtures (§), not the paper's data"
SETTING_KEYS = (*CLASS_KEYS, "metrics", "data")


def generator_class(run: RunRecord) -> tuple[str, str]:
    """Return (class, model) of the run's generator: extractive, or llm for any model backend."""
    gen = run.config.generator
    backend = gen.backend or "extractive"
    klass = "extractive" if backend == "extractive" else "llm"
    return klass, f"{backend}:{gen.model}"


def judge_class(run: RunRecord) -> tuple[str, str] | None:
    """Return (class, name) of the run's judge (None: the run used none)."""
    choice = run.choice("judge")
    judge = run.config.judge
    if choice is None and not judge.present:
        return None
    name = str(choice or judge.name or "unknown")
    if name == "llm":
        model = judge.generator.model or run.config.generator.model
        return "llm", f"llm judge ({model})"
    return name, f"{name} judge"


def is_fixture(run: RunRecord) -> bool:
    """Whether the run read the project's fixtures (its data folder is named ``fixtures``)."""
    data_dir = run.config.dataset.data_dir
    return bool(data_dir) and "fixtures" in Path(str(data_dir)).parts


@dataclass(frozen=True)
class Setting:
    """The paper's setting of one table (from its reference entry)."""

    declared: bool
    classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    episodes: int | Mapping[str, int | None] | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    where: str = "reference"  # the reference entry (header of an undeclared setting)
    episodes_note: str = ""  # why the paper's episodes are not given (``episodes: null``)

    @classmethod
    def of(cls, entry: Mapping[str, Any] | None, where: str = "reference") -> Setting:
        """Read ``setting`` and ``episodes`` of a reference table entry (errors name ``where``)."""
        entry = entry or {}
        setting = entry.get("setting")
        episodes = _episodes(entry.get("episodes"), where)
        note = str(entry.get("episodes_note") or "")
        if setting is None:
            return cls(False, episodes=episodes, where=where, episodes_note=note)
        if not isinstance(setting, Mapping):
            raise ValueError(f"{where}: setting: expected a mapping, got {setting!r}")
        unknown = set(setting) - set(SETTING_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: setting: unknown keys {sorted(unknown)} (expected one of "
                f"{', '.join(SETTING_KEYS)})"
            )
        classes = {k: dict(setting[k]) for k in CLASS_KEYS if setting.get(k)}
        for key, value in classes.items():
            if "class" not in value:
                raise ValueError(f"{where}: setting.{key}: expected a 'class', got {value!r}")
        metrics = {str(k): dict(v or {}) for k, v in (setting.get("metrics") or {}).items()}
        for name, spec in metrics.items():
            if not isinstance(spec.get("is", []), list) or not spec.get("what"):
                raise ValueError(
                    f"{where}: setting.metrics.{name}: expected {{is: [implementations], what: "
                    f"text}}, got {spec!r}"
                )
        data = dict(setting.get("data") or {})
        if data and (not data.get("what") or not set(data) <= {"what", "whole"}):
            raise ValueError(
                f"{where}: setting.data: expected {{what: text, whole: bool}}, got {data!r}"
            )
        return cls(True, classes, metrics, episodes, data, where, note)

    def reasons(
        self, runs: Iterable[RunRecord], metric: str, detail: str = "", label: str | None = None
    ) -> list[str]:
        """Why the cell of ``metric`` computed from ``runs`` is not comparable ([] = it is).

        ``label`` is the cell's metric label, looked up in ``metrics`` when ``metric`` is not.
        """
        if not self.declared:
            return []
        out: list[str] = []
        runs = list(runs)
        if any(is_fixture(r) for r in runs):
            out.append(FIXTURE_REASON)
        for run in runs:
            ours = {"generator": generator_class(run), "judge": judge_class(run)}
            for key, paper in self.classes.items():
                got = ours[key]
                if got is not None and got[0] != paper["class"]:
                    theirs = paper.get("model") or paper["class"]
                    out.append(f"{got[1]} ({got[0]}) vs the paper's {theirs} ({paper['class']})")
        name = metric if metric in self.metrics else label
        spec = self.metrics.get(name) if name is not None else None
        if spec is not None and metric not in (spec.get("is") or []):
            used = f"{metric} on {detail}" if detail else metric
            out.append(f"{used} vs the paper's {spec.get('what', 'implementation')}")
        return list(dict.fromkeys(out))

    def data_reasons(self, episodes: int | None, column: str, row: str | None = None) -> list[str]:
        """Why a cell on ``episodes`` cannot stand for the paper's whole dataset ([] = it can)."""
        if not self.declared or not self.data.get("whole"):
            return []
        paper = self.paper_episodes(column, row)
        what = self.data["what"]
        if paper is None:
            return [f"whole-dataset statistics of {what}: the paper gives no episode count here"]
        if episodes is None or episodes < paper:
            ours = "an unknown number of" if episodes is None else f"{episodes:,}"
            return [f"{ours} episodes vs the paper's whole dataset, {what}"]
        return []

    def paper_episodes(self, column: str, row: str | None = None) -> int | None:
        """The paper's number of episodes behind a cell (None: not recorded).

        A mapping is looked up by the column label, then the row label, then ``default``.
        """
        if isinstance(self.episodes, Mapping):
            for key in (column, row, "default"):
                if key is not None and key in self.episodes:
                    value = self.episodes[key]
                    return None if value is None else int(value)
            return None
        return None if self.episodes is None else int(self.episodes)

    def coverage(
        self, runs: Iterable[RunRecord], column: str, episodes: int | None, row: str | None = None
    ) -> str:
        """The cell's coverage marker: fixture, fewer episodes than the paper, or ""."""
        if any(is_fixture(r) for r in runs):
            return FIXTURE
        paper = self.paper_episodes(column, row)
        if paper is not None and episodes is not None and episodes < paper:
            return FEWER
        return ""

    def header(self, reasons: Iterable[str]) -> dict[str, str]:
        """Header lines: why cells are not comparable, and the paper's episodes."""
        out = {}
        found = list(dict.fromkeys(reasons))
        if not self.declared:
            out["comparability"] = (
                f"not assessed ({self.where}: no setting), so no difference is shown"
            )
        elif found:
            out["comparability"] = "not comparable, no diff shown: " + "; ".join(found)
        else:
            parts = [*self.classes, *(["metrics"] if self.metrics else [])]
            checked = ", ".join([*parts, *(["data"] if self.data.get("whole") else [])])
            out["comparability"] = f"comparable with the paper's setting ({checked})"
        if self.episodes is not None:
            shown = self.episodes
            if isinstance(shown, Mapping):
                out["paper episodes"] = ", ".join(
                    f"{k}: {'not given' if v is None else v}" for k, v in shown.items()
                )
            else:
                out["paper episodes"] = str(shown)
            if self.episodes_note:
                out["paper episodes"] += f" ({self.episodes_note})"
        elif self.episodes_note:
            out["paper episodes"] = f"not given: {self.episodes_note}"
        return out


def _episodes(value: Any, where: str) -> int | Mapping[str, int | None] | None:
    """Validate ``episodes``: a positive integer, a mapping label -> integer or null, or null."""
    ok = lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v > 0)  # noqa: E731
    if isinstance(value, Mapping) and all(ok(v) for v in value.values()):
        return {str(k): v for k, v in value.items()}
    if ok(value):
        episodes: int | None = value
        return episodes
    raise ValueError(
        f"{where}: episodes: expected a positive integer, a mapping label -> integer, or null; "
        f"got {value!r}"
    )
