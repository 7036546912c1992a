"""recallbench: a research harness for long-term conversational memory."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

# The Hydra configs. In a checkout ``recallbench/conf`` is a symlink to the top-level ``conf/``
# (the single source); a built wheel carries a copy as package data.
CONF_DIR = Path(__file__).resolve().parent / "conf"
