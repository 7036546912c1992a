"""Log runs to Weights & Biases (offline by default) so notebooks and dashboards can compare them.

``WANDB_MODE`` decides: ``offline`` (default: files under ``wandb/`` to sync later), ``online``,
or ``disabled`` (tests). Only the resolved config (which never holds API keys), the summary, the
usage and a per-item predictions table are logged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from recallbench.records import Prediction

MAX_TABLE_ROWS = 5000


class WandbLogger:
    """Log one run: config, flat summary metrics, usage and a predictions table."""

    def __init__(self, project: str = "recallbench", mode: str | None = None, tags=()) -> None:
        self.project = project
        self.mode = mode or os.environ.get("WANDB_MODE", "offline")
        self.tags = list(tags)

    def log_run(self, config: dict, summary: dict, predictions: Sequence[Prediction], usage: dict):
        """Log a finished run; does nothing when the mode is ``disabled``."""
        if self.mode == "disabled":
            return
        import wandb

        run = wandb.init(
            project=self.project,
            mode=self.mode,
            config=config,
            tags=self.tags,
            name=config.get("job"),
            reinit="finish_previous",
        )
        try:
            flat = {
                f"{name}/{key}": val
                for name, entry in summary.get("metrics", {}).items()
                for key, val in entry.items()
                if isinstance(val, int | float)
            }
            flat.update({f"usage/{k}": v for k, v in usage.get("totals", {}).items()})
            run.log(flat)
            columns = ["pred_id", "episode_id", "session", "kind", "output", "reference"]
            table = wandb.Table(columns=columns)
            for p in list(predictions)[:MAX_TABLE_ROWS]:
                table.add_data(
                    p.pred_id, p.episode_id, p.session_index, p.kind, p.output, p.reference
                )
            run.log({"predictions": table})
        finally:
            run.finish()
