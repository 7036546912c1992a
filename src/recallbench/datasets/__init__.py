"""Dataset loaders: ``load(name, data_dir, **options) -> list[Episode]``.

``data_dir`` is the root that holds one folder per dataset, laid out like ``../shared/data``
(``lufy/``, ``gvd/``, ``msc/``, ``carecall_mem/``, ``conversation_chronicles/``, ``persona_chat/``,
``lamp1/``, ``teabag/``). Each loader module exposes ``load(data_dir, **options)``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from recallbench.errors import DatasetFormatError, did_you_mean
from recallbench.records import Episode

# name -> module under recallbench.datasets (module stem = config stem = CLI choice)
LOADERS: dict[str, str] = {
    "lufy": "lufy",
    "gvd": "gvd",
    "msc": "msc",
    "cc": "cc",
    "carecall": "carecall",
    "persona_chat": "persona_chat",
    "lamp1": "lamp1",
    "teabag": "teabag",
}

__all__ = ["LOADERS", "DatasetFormatError", "load"]


def load(name: str, data_dir: str | Path, **options) -> list[Episode]:
    """Load dataset ``name`` from the data root ``data_dir`` into episodes."""
    if name not in LOADERS:
        raise did_you_mean("dataset", name, LOADERS)
    module = importlib.import_module(f"recallbench.datasets.{LOADERS[name]}")
    return module.load(Path(data_dir), **options)
