"""Human evaluations: blinded annotation sheets out, validated ratings in, the papers' statistics.

Human studies cannot be replayed from run folders, but everything around the humans can be:
``recallbench human-eval export <experiment>`` writes what annotators need (``_sheet``:
a blinded, shuffled ``sheet.csv`` with ``instructions.md``; the key that maps items to systems
in a separate folder), ``recallbench human-eval import <experiment> <filled sheets>`` validates
their ratings against the key, keeps them under ``results/human/<study>/ratings.csv`` and
renders the study's tables, whose builders compute the papers' statistics (``_stats``:
standardized scores, paired tests, correlations, majority votes, ICC and other agreement) with
the papers' values beside.

A paper's study lives in ``papers/<paper>/human.py`` (its ``STUDY``, ``units(spec, ctx)`` that
builds the :class:`Unit` s from runs or data, and the table builders); its experiments name
that module in ``table.human``.

Folders: ``results/human/<study>/`` holds ``key.csv``, ``export.json`` (what was exported:
the rated runs' generator, embedder, judge and data, the seed, the units) and ``ratings.csv``;
``results/human/<study>/to_annotators/`` the sheet and instructions to hand out. The tables
read the provenance from ``export.json``, not from the runs folder, which may hold newer runs
than the ones the annotators saw.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from recallbench.humaneval._sheet import (
    Criterion,
    Rating,
    Study,
    Unit,
    export_sheet,
    import_ratings,
    instructions,
    read_ratings,
    write_ratings,
)
from recallbench.humaneval._stats import (
    agreement,
    majority,
    paired,
    pearson,
    standardize,
    summary,
    unit_scores,
)
from recallbench.verdict import JSONValue

__all__ = [
    "Criterion",
    "Rating",
    "Study",
    "Unit",
    "agreement",
    "export_sheet",
    "import_ratings",
    "instructions",
    "majority",
    "paired",
    "pearson",
    "export_header",
    "export_info",
    "ratings_path",
    "read_ratings",
    "record_export",
    "standardize",
    "study_dir",
    "summary",
    "unit_scores",
    "write_ratings",
]


def study_dir(results_dir: str | Path, study: Study) -> Path:
    """``<results>/human/<study>/``: the key and the imported ratings."""
    return Path(results_dir) / "human" / study.name


def ratings_path(results_dir: str | Path, study: Study) -> Path:
    """Where ``import`` keeps a study's ratings (``ratings.csv`` in its folder)."""
    return study_dir(results_dir, study) / "ratings.csv"


def record_export(results_dir: str | Path, study: Study, info: Mapping[str, object]) -> Path:
    """Write ``export.json`` (provenance of the exported units) into the study's folder."""
    from recallbench.io import write_json

    path = study_dir(results_dir, study) / "export.json"
    write_json(path, dict(info))
    return path


def export_info(results_dir: str | Path, study: Study) -> dict[str, JSONValue]:
    """``export.json`` of a study ({} before any export; a file that is not a JSON object is
    an error naming it)."""
    path = study_dir(results_dir, study) / "export.json"
    info: JSONValue = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if not isinstance(info, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(info).__name__}")
    return info


def export_header(results_dir: str | Path, study: Study) -> dict[str, str]:
    """The table header lines ``export.json`` recorded (``header``: name -> text; {} before
    any export); another shape is an error naming the file."""
    header = export_info(results_dir, study).get("header", {})
    if not isinstance(header, dict) or not all(isinstance(v, str) for v in header.values()):
        path = study_dir(results_dir, study) / "export.json"
        raise ValueError(f"{path}: header: expected an object of strings, got {header!r:.80}")
    return {k: str(v) for k, v in header.items()}
