"""Log runs to Weights & Biases (offline by default) so notebooks and dashboards can compare them.

``WANDB_MODE`` decides: ``offline`` (default: files under ``wandb/`` to sync later), ``online``,
or ``disabled`` (tests). Only the resolved config (which never holds API keys), the summary, the
usage and a per-item predictions table are logged.

wandb's own console output (about 30 lines a run: banner, history sparklines, summary, sync
hints) is silenced unless ``wandb.verbose=true``; one line names the run's page (online) or its
offline folder and how to upload it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from recallbench.metrics.summary import Summary
from recallbench.records import Prediction
from recallbench.verdict import JSONValue

if TYPE_CHECKING:
    from wandb.sdk.wandb_run import Run

MAX_TABLE_ROWS = 5000


class WandbLogger:
    """Log one run: config, flat summary metrics, usage and a predictions table."""

    def __init__(
        self,
        project: str = "recallbench",
        mode: str | None = None,
        tags: Iterable[str] = (),
        *,
        verbose: bool = False,
    ) -> None:
        self.project = project
        self.mode = mode or os.environ.get("WANDB_MODE", "offline")
        self.tags = list(tags)
        self.verbose = verbose

    def log_run(
        self,
        config: dict[str, JSONValue],
        summary: Summary,
        predictions: Sequence[Prediction],
        usage: Mapping[str, JSONValue],
    ) -> None:
        """Log a finished run; does nothing when the mode is ``disabled``."""
        if self.mode == "disabled":
            return
        import wandb

        job = config.get("job")
        with _weave_hint_off(not self.verbose):
            run = wandb.init(
                project=self.project,
                # wandb.init's Literal lists 4 modes; its Settings also take the legacy dryrun/run
                mode=self.mode,  # type: ignore[arg-type]
                config=config,
                tags=self.tags,
                name=job if isinstance(job, str) else None,
                reinit="finish_previous",
                settings=None if self.verbose else wandb.Settings(silent=True),
            )
        try:
            flat: dict[str, JSONValue] = {
                f"{name}/{key}": val
                for name, entry in summary["metrics"].items()
                for key, val in entry.items()
                if isinstance(val, int | float)
            }
            totals = usage.get("totals")
            if isinstance(totals, dict):
                flat.update({f"usage/{k}": v for k, v in totals.items()})
            run.log(flat)
            columns: list[str | int] = [
                "pred_id",
                "episode_id",
                "session",
                "kind",
                "output",
                "reference",
            ]
            table = wandb.Table(columns=columns)
            for p in list(predictions)[:MAX_TABLE_ROWS]:
                table.add_data(
                    p.pred_id, p.episode_id, p.session_index, p.kind, p.output, p.reference
                )
            run.log({"predictions": table})
        finally:
            where = where_logged(run)
            run.finish()
            if not self.verbose:
                print(f"wandb: {where}", file=sys.stderr, flush=True)


@contextmanager
def _weave_hint_off(quiet: bool) -> Iterator[None]:
    """Keep wandb from advertising Weave during ``init`` when the process imported openai.

    That hint ("Detected [openai] in use ...", three lines) is printed before the run's
    ``silent`` setting applies; wandb's documented switch for its Weave integration is the
    ``WANDB_DISABLE_WEAVE`` variable, set here for the call only (a user's own value wins).
    """
    if not quiet or "WANDB_DISABLE_WEAVE" in os.environ:
        yield
        return
    os.environ["WANDB_DISABLE_WEAVE"] = "true"
    try:
        yield
    finally:
        os.environ.pop("WANDB_DISABLE_WEAVE", None)


def where_logged(run: Run) -> str:
    """One line: the run's page, or its offline folder and the command that uploads it."""
    if run.offline:
        folder = run.settings.sync_dir
        return f"offline run in {folder} (upload: wandb sync {folder})"
    return str(run.url)
