"""The run folder's one reader: ``read_run(folder) -> RunRecord`` (Inspect's ``read_eval_log``).

    record = read_run("results/runs/theanine_table1/20260101-120000/msc-theanine")
    record.status, record.provenance.commit       # run.json, read at once
    record.config.memory.choice, record.config.generator.model   # config.yaml, typed
    record.metrics["f1"].value, record.metrics["f1"].ci           # summary.json, typed
    record.predictions, record.scores, record.usage              # loaded when first asked
    record.snapshots_of(episode_id), record.episodes_for(ids)

The runner (``run.runner``) writes the folder; everything else (tables, analysis, view, the
judge panel, human evaluation, the papers' helpers, notebooks) reads it through this package,
so the layout lives in one place (``_files``: the file names and their parsers).

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
    USAGE_FILE,
    RunUsage,
    Snapshot,
    UsageBucket,
    read_snapshots,
)
from recallbench.run.read._record import Provenance, RunRecord, read_config, read_run
from recallbench.run.read._summary import MetricSummary

__all__ = [
    "CONFIG_FILE",
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
    "RunRecord",
    "RunUsage",
    "Snapshot",
    "UsageBucket",
    "read_config",
    "read_run",
    "read_snapshots",
]
