"""recallbench: a research harness for long-term conversational memory."""

from __future__ import annotations

__version__ = "0.1.0"
