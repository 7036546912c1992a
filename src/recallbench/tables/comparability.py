"""Is our setting comparable with the paper's? And on how many episodes did we compute a cell?

The paper's setting lives beside its numbers in ``papers/<paper>/reference.yaml``::

    table1:
      episodes: 50                  # the paper's episodes per cell: one number, or per column
                                    # label {MSC: 50, Avg.: 100, default: 50}
      setting:
        generator: {class: llm, model: gpt-3.5-turbo-0125}
        judge: {class: llm, model: GPT-4o}      # or {class: human, model: 3 annotators}
        metrics:                    # per metric of the table (its summary name)
          mauve: {is: [mauve_gpt2_large], what: MAUVE on GPT-2-large features}
          perplexity: {is: [], what: PPL under the fine-tuned HyperCLOVA}   # never ours

A cell is **comparable** when the runs behind it have the paper's generator class (``extractive``
= our no-LLM baseline; every other backend = ``llm``), the paper's judge class (our ``lexical``
judge is its own class; ``llm``; the papers' ``human`` annotators) and, for the cell's metric,
one of the implementations listed under ``is`` (e.g. MAUVE only on GPT-2-large features). A
non-comparable cell shows the paper's value without a difference and the table header says why.
Models within a class are not compared (a local LLM and gpt-3.5 are both ``llm``); the header
names both. A table whose reference declares no ``setting`` is "not assessed" and keeps its
differences.

**Coverage**: a cell computed (partly) on the project's own fixtures (a run whose
``dataset.data_dir`` is a ``fixtures`` folder) is marked ``§``, one computed on fewer episodes
than the paper's ``episodes`` ``‡`` (``tables.cell``); both with the number of episodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.analysis import RunInfo
from recallbench.tables.cell import FEWER, FIXTURE

__all__ = ["Setting", "generator_class", "is_fixture", "judge_class"]

CLASS_KEYS = ("generator", "judge")


def generator_class(run: RunInfo) -> tuple[str, str]:
    """Return (class, model) of the run's generator: extractive, or llm for any model backend."""
    gen = run.config.get("generator") or {}
    backend = str(gen.get("backend") or "extractive")
    klass = "extractive" if backend == "extractive" else "llm"
    return klass, f"{backend}:{gen.get('model')}"


def judge_class(run: RunInfo) -> tuple[str, str] | None:
    """Return (class, name) of the run's judge (None: the run used none)."""
    choice = run.choice("judge")
    judge = run.config.get("judge") or {}
    if choice is None and not judge:
        return None
    name = str(choice or judge.get("name") or "unknown")
    if name == "llm":
        gen = judge.get("generator") or {}
        model = gen.get("model") or (run.config.get("generator") or {}).get("model")
        return "llm", f"llm judge ({model})"
    return name, f"{name} judge"


def is_fixture(run: RunInfo) -> bool:
    """Whether the run read the project's fixtures (its data folder is named ``fixtures``)."""
    data_dir = (run.config.get("dataset") or {}).get("data_dir")
    return bool(data_dir) and "fixtures" in Path(str(data_dir)).parts


@dataclass(frozen=True)
class Setting:
    """The paper's setting of one table (from its reference entry)."""

    declared: bool
    classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    episodes: int | Mapping[str, int] | None = None

    @classmethod
    def of(cls, entry: Mapping[str, Any], where: str = "reference") -> Setting:
        """Read ``setting`` and ``episodes`` of a reference table entry (errors name ``where``)."""
        setting = entry.get("setting")
        episodes = entry.get("episodes")
        if setting is None:
            return cls(False, episodes=episodes)
        if not isinstance(setting, Mapping):
            raise ValueError(f"{where}: setting: expected a mapping, got {setting!r}")
        unknown = set(setting) - {*CLASS_KEYS, "metrics"}
        if unknown:
            raise ValueError(
                f"{where}: setting: unknown keys {sorted(unknown)} (expected generator, judge, "
                "metrics)"
            )
        classes = {k: dict(setting[k]) for k in CLASS_KEYS if setting.get(k)}
        for key, value in classes.items():
            if "class" not in value:
                raise ValueError(f"{where}: setting.{key}: expected a 'class', got {value!r}")
        metrics = {str(k): dict(v or {}) for k, v in (setting.get("metrics") or {}).items()}
        return cls(True, classes, metrics, episodes)

    def reasons(self, runs: Iterable[RunInfo], metric: str, detail: str = "") -> list[str]:
        """Why the cell of ``metric`` computed from ``runs`` is not comparable ([] = it is)."""
        if not self.declared:
            return []
        out: list[str] = []
        for run in runs:
            ours = {"generator": generator_class(run), "judge": judge_class(run)}
            for key, paper in self.classes.items():
                got = ours[key]
                if got is not None and got[0] != paper["class"]:
                    theirs = paper.get("model") or paper["class"]
                    out.append(f"{got[1]} ({got[0]}) vs the paper's {theirs} ({paper['class']})")
        spec = self.metrics.get(metric)
        if spec is not None and metric not in (spec.get("is") or []):
            ours = f"{metric} on {detail}" if detail else metric
            out.append(f"{ours} vs the paper's {spec.get('what', 'implementation')}")
        return list(dict.fromkeys(out))

    def paper_episodes(self, column: str) -> int | None:
        """The paper's number of episodes behind a cell of ``column`` (None: not recorded)."""
        if isinstance(self.episodes, Mapping):
            value = self.episodes.get(column, self.episodes.get("default"))
            return None if value is None else int(value)
        return None if self.episodes is None else int(self.episodes)

    def coverage(self, runs: Iterable[RunInfo], column: str, episodes: int | None) -> str:
        """The cell's coverage marker: fixture, fewer episodes than the paper, or ""."""
        if any(is_fixture(r) for r in runs):
            return FIXTURE
        paper = self.paper_episodes(column)
        if paper is not None and episodes is not None and episodes < paper:
            return FEWER
        return ""

    def header(self, reasons: Iterable[str], paper_name: str) -> dict[str, str]:
        """Header lines: why cells are not comparable, and the paper's episodes."""
        out = {}
        found = list(dict.fromkeys(reasons))
        if not self.declared:
            out["comparability"] = f"not assessed (papers/{paper_name}/reference.yaml: no setting)"
        elif found:
            out["comparability"] = "not comparable, no diff shown: " + "; ".join(found)
        else:
            checked = ", ".join([*self.classes, *(["metrics"] if self.metrics else [])])
            out["comparability"] = f"comparable with the paper's setting ({checked})"
        if self.episodes is not None:
            shown = self.episodes
            if isinstance(shown, Mapping):
                shown = ", ".join(f"{k}: {v}" for k, v in shown.items())
            out["paper episodes"] = str(shown)
        return out
