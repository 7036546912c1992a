"""wandb logging: by default one line (the offline folder and how to upload it) instead of
wandb's own ~30 lines a run; ``verbose`` gives wandb's own output back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recallbench.records import Prediction
from recallbench.run.tracking import WandbLogger

SUMMARY = {"metrics": {"rouge_l": {"value": 0.25, "n": 2, "ci95": [0.1, 0.4]}}}
PREDS = [Prediction("e/s3/t1/response", "e", 3, "response", "h", "hi", reference="hey")]


@pytest.mark.parametrize("verbose", [False, True])
def test_wandb_prints_one_line_unless_verbose(tmp_path, monkeypatch, capfd, verbose):
    pytest.importorskip("wandb")
    import openai  # noqa: F401  (as the openai backend does: wandb then advertises Weave)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "false")
    logger = WandbLogger("recallbench-test", "offline", tags=["t"], verbose=verbose)
    logger.log_run({"job": "j"}, SUMMARY, PREDS, {"totals": {"calls": 1}})
    captured = capfd.readouterr()
    # wandb's own lines start with "wandb:" (other libraries may print their own lines here)
    lines = [
        line for line in (captured.out + captured.err).splitlines() if line.startswith("wandb")
    ]
    if verbose:
        assert len(lines) > 10 and any("rouge_l" in line for line in lines)
        return
    assert len(lines) == 1, lines
    (line,) = lines
    found = re.fullmatch(r"wandb: offline run in (\S+) \(upload: wandb sync (\S+)\)", line)
    assert found and found[1] == found[2]
    assert Path(found[1]).name.startswith("offline-run-") and Path(found[1]).is_dir()
