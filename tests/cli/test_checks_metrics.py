"""A metric name the job's protocol cannot report is refused by the checks before the first job
(issue 53, item 1): the same rule ``score`` applies after the replay
(``EvalProtocol.check_metrics``), so the message is the one a finished replay once ended with.

Before, ``dataset=locomo protocol=locomo_qa +judge=mem0_j metrics=lexical episodes=1`` replayed
and answered the conversation (~50 s on a loaded machine), then failed ``unknown locomo_qa
metric 'bleu1'``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recallbench import CONF_DIR
from recallbench.cli.checks import check_config
from recallbench.cli.config import compose_job
from recallbench.errors import UnknownChoiceError

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
PROTOCOLS = sorted(p.stem for p in (Path(CONF_DIR) / "protocol").glob("*.yaml"))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_refuses_a_metric_it_cannot_report(protocol):
    if protocol.startswith("response"):  # reference-based metrics: any of metrics.METRICS
        cfg, _ = compose_job([f"protocol={protocol}", "metrics.names=[bleu4,no_such_metric]"])
        with pytest.raises(UnknownChoiceError, match=r"unknown metric 'no_such_metric'"):
            check_config(cfg)
        return
    # a protocol with its own measures refuses the reference-based ones
    cfg, _ = compose_job([f"protocol={protocol}", "metrics=lexical"])
    with pytest.raises(UnknownChoiceError, match=r"unknown \w+ metric 'bleu1'\. .*Options: "):
        check_config(cfg)


def test_the_issue_command_is_refused_before_any_work(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(FIXTURES))
    started = time.perf_counter()
    outcome = run_cli(
        "dataset=locomo", "protocol=locomo_qa", "+judge=mem0_j", "metrics=lexical", "episodes=1"
    )
    seconds = time.perf_counter() - started
    assert outcome.status == 2, outcome.err
    assert outcome.error_lines == [
        "recallbench: error: unknown locomo_qa metric 'bleu1'. Options: b1, ceiling, ceiling_f1, "
        "evidence_recall, f1, f1_mem0, j, recall_at_10, recall_at_5"
    ]
    assert not (tmp_path / "results" / "runs").exists()  # no run folder: nothing replayed
    assert seconds < 30, seconds  # composing the job, not replaying it (~50 s before)
