"""recallbench: a research harness for long-term conversational memory."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

# From the installed metadata (pyproject.toml is its one source): a release that bumps the
# number leaves this module's bytes as they were, so runs that imported it stay reusable
# (``run.sources``; ``run.provenance.same_versions``).
try:
    __version__ = metadata.version("recallbench")
except metadata.PackageNotFoundError:  # a source tree on PYTHONPATH without an install
    __version__ = "0+unknown"

# The Hydra configs. In a checkout ``recallbench/conf`` is a symlink to the top-level ``conf/``
# (the single source); a built wheel carries a copy as package data.
CONF_DIR = Path(__file__).resolve().parent / "conf"
# The root config Hydra composes (``conf/<CONFIG_NAME>.yaml``): the project's, not a run's
# (a run folder's files are named by ``recallbench.run.read``).
CONFIG_NAME = "config"
ROOT_CONFIG = f"conf/{CONFIG_NAME}.yaml"
