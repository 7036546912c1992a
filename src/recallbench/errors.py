"""Exceptions raised at the edges of the harness (data files, configs, LLM replies)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DatasetFormatError(ValueError):
    """A data file does not have the expected format. The message names file, record, expectation."""


class ConfigError(ValueError):
    """A configuration value is invalid."""


def did_you_mean(kind: str, name: str, options: Iterable[str]) -> KeyError:
    """Build a KeyError for an unknown ``name`` that suggests the closest valid options."""
    options = sorted(options)
    close = difflib.get_close_matches(name, options, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return KeyError(f"unknown {kind} {name!r}.{hint} Options: {', '.join(options)}")
