"""Exceptions raised at the edges of the harness (data files, configs, caches, LLM replies).

Every mistake a user can fix is a ``UserError``: the command line prints its message as ONE
line (what is wrong, where, what to do) and exits with status 2 (its ``exit_status`` when it has
one: 75 for a store that may come back); ``HYDRA_FULL_ERROR=1`` or
``--verbose`` shows the traceback instead. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """A mistake in the user's input, config or files; the message says where and what to do."""


class DatasetFormatError(UserError, ValueError):
    """A data file does not have the expected format. The message names file, record, expectation."""


class DataNotFoundError(UserError, FileNotFoundError):
    """The data root lacks a file or folder a loader, run or table needs."""


class DatasetSubsetWarning(UserWarning):
    """A loader read fewer (or more) records than the public release holds: a subset or a broken copy."""


class ErrataConflictWarning(UserWarning):
    """Two errata sources correct one question differently: the line names both and the one used."""


class ConfigError(UserError, ValueError):
    """A configuration value is invalid."""


class CacheError(UserError, RuntimeError):
    """A cache file cannot be used (corrupt, not a database); the message says how to set it aside."""


class ResumeError(UserError, ValueError):
    """A run folder cannot be resumed (absent, not a run, another config)."""


class EndpointDown(UserError, RuntimeError):
    """The LLM endpoint failed every recent call (``llm.CircuitBreaker``): the run stops early."""


class RunStopped(BaseException):
    """A run stopped cleanly and can resume (exit status 75, sysexits' EX_TEMPFAIL): a budget was
    reached or the shared store went away. Not an ``Exception``: nothing between the place that
    stops and the runner may swallow it; the runner records the run ``interrupted`` with
    ``reason``."""

    exit_status = 75

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class StoreUnreachable(UserError, ConnectionError):
    """The server a command's ``store=`` names does not answer at the start, before any work
    (exit status 75: it may come back; a mistyped URL is a ``ConfigError``, exit 2)."""

    exit_status = 75


class UnknownChoiceError(UserError, KeyError):
    """An unknown name for a registry entry; the message suggests the closest valid names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def did_you_mean(kind: str, name: str, options: Iterable[str]) -> UnknownChoiceError:
    """Build the error for an unknown ``name`` that suggests the closest valid options."""
    options = sorted(options)
    close = difflib.get_close_matches(name, options, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return UnknownChoiceError(f"unknown {kind} {name!r}.{hint} Options: {', '.join(options)}")


def one_line(exc: BaseException) -> str:
    """Return the exception's message on one line (first line kept, the rest joined by ' | ')."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " | ".join(lines) if lines else type(exc).__name__
