"""One invocation's state, handed to each of its jobs as an argument (not through the environment).

``cli.main`` reads the command line once and builds a :class:`Launch`; the Hydra task function
closes over it, so every job gets it: in this process, and in joblib or submitit workers, which
receive the task function pickled with what it closes over. A job reads from it how it was
launched: the command as typed (for the resume command it prints), the keys the command line
sweeps (job names), the submitting process (a job elsewhere is a worker), and whether this is a
plan (``plan=true``: per-call latency) and where the plans go (the total over every job).

What users set stays in the environment, documented in README.md: ``RECALLBENCH_STAMP`` (the
sweep folder's stamp; the Makefile sets one per make invocation so the sweeps of a table share a
folder), ``RECALLBENCH_RERUN``, ``RECALLBENCH_DATA_DIR``, ``RECALLBENCH_RESULTS_DIR``,
``RECALLBENCH_JOBS``, ``RECALLBENCH_VERBOSE``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Launch"]


@dataclass(frozen=True)
class Launch:
    """How the jobs of one command were launched (see the module docstring).

    ``argv``: the command line as typed (without ``plan=``); ``swept``: the keys it sweeps;
    ``main_pid``: the submitting process; ``plan_latency_s``: seconds per call of a plan (None:
    the jobs run); ``plan_dirs``: the sweep folders' ``plan/`` folders the plan total reads.
    """

    argv: tuple[str, ...] = ()
    swept: frozenset[str] = frozenset()
    main_pid: int | None = None
    plan_latency_s: float | None = None
    plan_dirs: tuple[Path, ...] = field(default=())

    @classmethod
    def here(cls, argv: Sequence[str] | None = None) -> Launch:
        """A job called in this process outside ``cli.main`` (``recallbench matrix``, tests)."""
        return cls(argv=tuple(sys.argv[1:] if argv is None else argv), main_pid=os.getpid())

    @property
    def planning(self) -> bool:
        return self.plan_latency_s is not None

    def in_worker(self) -> bool:
        """Does this job run outside the submitting process (a joblib, submitit or SLURM worker)?

        A worker's job that stops (a budget, a lost store, a signal) or fails returns instead of
        exiting or raising: a worker that exits makes joblib abort the sweep's other jobs
        mid-run; ``sweep_exit`` in the submitting process then exits with the worst outcome."""
        return self.main_pid is not None and self.main_pid != os.getpid()
