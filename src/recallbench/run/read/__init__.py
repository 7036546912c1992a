"""The run folder's format: its one reader, ``read_run(folder) -> RunRecord`` (Inspect's
``read_eval_log``), its one writer (``write_log``, ``write_summary``...: the runner's) and its
typed, versioned log, ``RunLog`` (``run.json``; Inspect's ``EvalLog``).

    record = read_run("results/runs/theanine_table1/20260101-120000/msc-theanine")
    record.status, record.provenance.commit       # run.json, read at once
    record.config.memory.choice, record.config.generator.model   # config.yaml, typed
    record.metrics["f1"].value, record.metrics["f1"].ci           # summary.json, typed
    record.predictions, record.scores, record.usage              # loaded when first asked
    record.snapshots_of(episode_id), record.episodes_for(ids)

The runner (``run.runner``) writes the folder through ``_write``; everything else (resume,
reuse, the end-of-run report, the sweep's record, tables, analysis, view, the judge panel, human
evaluation, the papers' helpers, notebooks) reads it through this package, so the layout lives
in one place (``_files``: the file names, spelled nowhere else in ``src/``, and their parsers).

``run.json`` carries ``version`` (``LOG_VERSION``); a folder written before it (version 0) reads
the same (``RunLog.from_dict`` migrates it; tests/run/test_log.py holds such a folder).

Folders written by older versions read the same: a folder without ``config.yaml`` has an empty
config; without ``usage.json`` ``usage`` is None; without ``predictions.jsonl`` (a run that did
not finish) its predictions are its finished episodes' ``items/``; without ``episodes/`` the
episodes are reloaded from the config's dataset (``episodes_for``); a store row without items
is an empty store; a summary entry in an older shape reads as far as it goes
(``MetricSummary``). ``RunRecord.missing`` lists the files a folder lacks, never invented.
"""

from recallbench.run.read._config import (
    Block,
    DatasetConfig,
    EmbedderConfig,
    GeneratorConfig,
    JudgeConfig,
    MemoryConfig,
    ProtocolConfig,
    RunConfig,
)
from recallbench.run.read._files import (
    CONFIG_FILE,
    EPISODES_DIR,
    ITEMS_DIR,
    MEMORY_DIR,
    PREDICTIONS_FILE,
    RUN_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    USAGE_FILE,
    RunSummary,
    RunUsage,
    Snapshot,
    UsageBucket,
    is_run_folder,
    read_log,
    read_snapshots,
    read_summary,
    summed_usage,
)
from recallbench.run.read._log import LOG_VERSION, RunLog
from recallbench.run.read._record import Provenance, RunRecord, read_config, read_run
from recallbench.run.read._summary import MetricSummary
from recallbench.run.read._write import (
    items_path,
    write_config,
    write_episode,
    write_items,
    write_log,
    write_predictions,
    write_scores,
    write_summary,
    write_usage,
)

__all__ = [
    "CONFIG_FILE",
    "LOG_VERSION",
    "SUMMARY_FILE",
    "EPISODES_DIR",
    "ITEMS_DIR",
    "MEMORY_DIR",
    "PREDICTIONS_FILE",
    "RUN_FILE",
    "SCORES_FILE",
    "USAGE_FILE",
    "Block",
    "DatasetConfig",
    "EmbedderConfig",
    "GeneratorConfig",
    "JudgeConfig",
    "MemoryConfig",
    "MetricSummary",
    "ProtocolConfig",
    "Provenance",
    "RunConfig",
    "RunLog",
    "RunRecord",
    "RunSummary",
    "RunUsage",
    "Snapshot",
    "UsageBucket",
    "is_run_folder",
    "items_path",
    "read_config",
    "read_log",
    "read_run",
    "read_snapshots",
    "read_summary",
    "summed_usage",
    "write_config",
    "write_episode",
    "write_items",
    "write_log",
    "write_predictions",
    "write_scores",
    "write_summary",
    "write_usage",
]
