"""Dataset loaders: ``load(name, data_dir, **options) -> list[Episode]``.

A run builds its dataset from ``conf/dataset/<name>.yaml``'s ``_target_`` (the loader module's
``load``; ``recallbench.cli.build.build_dataset``). ``load(name, ...)`` finds the same target by
the config's ``name`` (``LOADERS``, read from ``conf/dataset/``); ``FOLDERS`` names the data-root
folder of the datasets that the dataset-statistics tables list (``try_load``).

``data_dir`` is the root that holds one folder per dataset, laid out like ``../shared/data``
(``lufy/``, ``gvd/``, ``msc/``, ``carecall_mem/``, ``conversation_chronicles/``, ``persona_chat/``,
``lamp1/``, ``teabag/``). Each loader module exposes ``load(data_dir, **options)``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path

from recallbench.errors import DataNotFoundError, DatasetFormatError, did_you_mean
from recallbench.records import Episode


def _loaders() -> dict[str, str]:
    """``name -> dotted path of its load function``, read from ``conf/dataset/*.yaml``.

    The config folder is the registry (as for every group): a new dataset needs its loader
    module and its config, nothing listed here.
    """
    import yaml

    from recallbench import CONF_DIR

    found = {}
    for path in sorted((CONF_DIR / "dataset").glob("*.yaml")):
        cfg = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not path.stem.startswith("_") and cfg.get("_target_"):
            found[str(cfg.get("name") or path.stem)] = str(cfg["_target_"])
    return found


LOADERS: dict[str, str] = _loaders()

# loader name -> its folder under the data root (as in ../shared/data and download.py)
FOLDERS: dict[str, str] = {
    "lufy": "lufy",
    "msc": "msc",
    "cc": "conversation_chronicles",
    "carecall": "carecall_mem",
    "gvd": "gvd",
    "persona_chat": "persona_chat",
    "teabag": "teabag",
}

__all__ = [
    "FOLDERS",
    "LOADERS",
    "DataNotFoundError",
    "DatasetFormatError",
    "load",
    "require_folder",
    "try_load",
]


def load(name: str, data_dir: str | Path, **options: object) -> list[Episode]:
    """Load dataset ``name`` from the data root ``data_dir`` into episodes."""
    if name not in LOADERS:
        raise did_you_mean("dataset", name, LOADERS)
    module, _, function = LOADERS[name].rpartition(".")
    loader: Callable[..., list[Episode]] = getattr(importlib.import_module(module), function)
    episodes = loader(Path(data_dir), **options)
    if not episodes:
        raise DatasetFormatError(
            f"{name} under {data_dir} (options {options or {}}): the loader found no episodes; "
            "check the files (or the filter options) and re-fetch with `make data`"
        )
    return episodes


def require_folder(data_dir: str | Path, name: str, needed_by: str) -> None:
    """Raise ``DataNotFoundError`` (saying how to fetch it) when ``data_dir`` lacks ``name``."""
    if not (Path(data_dir) / FOLDERS[name]).is_dir():
        raise DataNotFoundError(
            f"{data_dir} has no {FOLDERS[name]}/ folder, which {needed_by} needs. Fetch the data "
            "with `make data` (needs internet), or point at an existing copy: DATA_DIR=/path/to/"
            "data on the make command line (or export RECALLBENCH_DATA_DIR=/path/to/data)."
        )


def try_load(
    name: str, data_dir: str | Path, options: Mapping[str, object] | None = None
) -> tuple[list[Episode] | None, str | None]:
    """Load dataset ``name``; return (episodes, None) or (None, why it is not available)."""
    if not (Path(data_dir) / FOLDERS[name]).is_dir():
        return None, f"no {FOLDERS[name]}/ folder"
    if name not in LOADERS or importlib.util.find_spec(LOADERS[name].rpartition(".")[0]) is None:
        return None, "no loader"
    try:
        episodes = load(name, data_dir, **dict(options or {}))
    except (FileNotFoundError, ValueError) as exc:  # absent or malformed files: say which
        return None, " ".join(str(exc).split())  # whole: a cut message misleads
    return (episodes, None) if episodes else (None, "no episodes")
