"""Command line entry points; the only module that imports Hydra's runtime.

    recallbench dataset=msc memory=memory_retrieval generator=extractive
    recallbench -m experiment=theanine_table1          # a table's sweep (Hydra multirun)
    recallbench-table theanine_table1 [--results DIR] [KEY=VALUE ...]   # its table

``cli`` resolves the config, builds plain objects (episodes, LLM, embedder, memory factory,
protocol) and hands them to ``Runner``, or the model factories a table builder needs to
``recallbench.tables.reproduce``; everything below receives plain values and objects.
``python -m recallbench.cli table ...`` is ``recallbench-table ...`` (the Makefile's spelling,
which works from a source checkout whose console scripts are not reinstalled).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ValidationError

from recallbench import CONF_DIR
from recallbench.errors import ConfigError, ResumeError, UserError, one_line

EXIT_USER_ERROR = 2
MAX_JOB = 120  # characters of a run folder name derived from a sweep job's overrides
SWEPT_ENV = "RECALLBENCH_SWEPT"  # keys the command line sweeps (read by jobs in other processes)


def verbose_errors() -> bool:
    """Show tracebacks of user errors (``HYDRA_FULL_ERROR=1`` or ``--verbose``)?"""
    return os.environ.get("HYDRA_FULL_ERROR") == "1" or os.environ.get("RECALLBENCH_VERBOSE") == "1"


@contextlib.contextmanager
def user_errors(prog: str = "recallbench") -> Iterator[None]:
    """Print a ``UserError`` as ONE line on stderr and exit 2 (the traceback only when verbose)."""
    try:
        yield
    except UserError as exc:
        if verbose_errors():
            raise
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr, flush=True)
        sys.exit(EXIT_USER_ERROR)


def _take_verbose_flag(argv: list[str]) -> list[str]:
    """Strip ``--verbose`` from ``argv`` (Hydra does not know it) and remember it."""
    if "--verbose" in argv:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
        argv = [a for a in argv if a != "--verbose"]
    return argv


@dataclass
class RunKeys:
    """The schema of the top-level run keys of ``conf/config.yaml`` (checked before any work)."""

    tag: str = "adhoc"
    job: str | None = None
    seed: int = 0
    episodes: int | None = None
    resume_dir: str | None = None
    progress: bool = True


_EXPECTED = {
    "tag": "a folder name",
    "job": "a folder name or null",
    "seed": "an integer",
    "episodes": "an integer >= 1, or null for every episode",
    "resume_dir": "the path of an existing run folder, or null",
    "progress": "true or false",
}


def check_run_keys(cfg: DictConfig) -> None:
    """Type-check the top-level keys against ``RunKeys``; raise ``ConfigError`` naming the key."""
    for f in fields(RunKeys):
        value = cfg.get(f.name)
        try:
            OmegaConf.merge(OmegaConf.structured(RunKeys), {f.name: value})
        except ValidationError:
            raise ConfigError(
                f"{f.name}={value!r}: expected {_EXPECTED[f.name]} (conf/config.yaml)"
            ) from None
    if cfg.get("episodes") is not None and int(cfg.episodes) < 1:
        raise ConfigError(
            f"episodes={cfg.episodes}: expected {_EXPECTED['episodes']} (0 or fewer selects nothing)"
        )
    for key in ("tag", "job"):
        value = cfg.get(key)
        if value is not None and (
            not str(value).strip() or "/" in str(value) or value in {".", ".."}
        ):
            raise ConfigError(f"{key}={value!r}: expected {_EXPECTED[key]} without '/'")


def check_resume_dir(resume_dir: str | None) -> None:
    """A ``resume_dir`` must be an existing run folder (a run.json inside)."""
    if not resume_dir:
        return
    path = Path(resume_dir)
    if not path.is_dir():
        raise ResumeError(
            f"resume_dir={resume_dir}: no such folder; name the run folder of an interrupted run "
            "(results/runs/<tag>/<stamp>/<job>), or drop resume_dir to start a new run"
        )
    if not (path / "run.json").is_file():
        raise ResumeError(
            f"resume_dir={resume_dir}: not a run folder (no run.json inside); name the folder "
            "that holds run.json, config.yaml and items/"
        )


def select_episodes(episodes: list, n: int | None, seed: int) -> list:
    """Sample ``n`` episodes with a fixed seed (order kept); all when ``n`` is None."""
    if n is None or n >= len(episodes):
        return list(episodes)
    keep = set(random.Random(seed).sample(range(len(episodes)), n))
    return [ep for i, ep in enumerate(episodes) if i in keep]


def build_protocol(cfg: DictConfig):
    """Instantiate the protocol named by ``cfg.protocol.name`` with its settings."""
    from recallbench.protocols import build_protocol as _build

    return _build(OmegaConf.to_container(cfg.protocol, resolve=True), seed=int(cfg.seed))


def run(
    cfg: DictConfig,
    job: str,
    choices: dict[str, str] | None = None,
    overrides: list[str] | None = None,
) -> Path:
    """Run one job described by a composed config; return its run folder.

    ``choices`` are the config-group choices (e.g. ``{"memory": "memory_retrieval"}``); tables
    find runs by them.
    """
    from hydra.utils import instantiate

    from recallbench.datasets import load
    from recallbench.embed import build_embedder
    from recallbench.llm import build_llm
    from recallbench.report import print_end_of_run
    from recallbench.run_record import HealthPolicy, RunInterrupted, describe_problems
    from recallbench.runner import Runner, default_stamp
    from recallbench.tracking import WandbLogger

    check_run_keys(cfg)
    check_resume_dir(cfg.resume_dir)
    paths = cfg.paths
    options = OmegaConf.to_container(cfg.dataset.get("options") or {}, resolve=True)
    episodes = load(cfg.dataset.name, cfg.dataset.data_dir, **options)
    if not episodes:
        raise ConfigError(
            f"dataset {cfg.dataset.name} under {cfg.dataset.data_dir} with options {options} "
            "holds no episodes: nothing to run"
        )
    episodes = select_episodes(episodes, cfg.episodes, int(cfg.seed))
    cache = Path(paths.cache_dir) / "llm.sqlite"
    llm = build_llm(OmegaConf.to_container(cfg.generator, resolve=True), cache)
    emb_cfg = OmegaConf.to_container(cfg.embedder, resolve=True)
    if emb_cfg.get("kind") != "hashing" and not emb_cfg.get("cache_path"):
        emb_cfg["cache_path"] = str(Path(paths.cache_dir) / "embeddings.sqlite")
    embedder = build_embedder(emb_cfg)
    protocol = build_protocol(cfg)
    metrics = list(cfg.metrics.names or cfg.protocol.get("metrics") or [])
    if cfg.resume_dir:
        run_dir = Path(cfg.resume_dir)
    else:
        run_dir = Path(paths.results_dir) / "runs" / cfg.tag / default_stamp() / job
    config: dict[str, Any] = OmegaConf.to_container(cfg, resolve=True)
    config["job"] = job
    config["choices"] = dict(choices or {})
    config["overrides"] = list(overrides or [])
    health = HealthPolicy.from_config(config.get("health"))
    llm.breaker.after = health.breaker_after
    runner = Runner(
        run_dir,
        protocol=protocol,
        make_method=lambda: instantiate(cfg.memory, llm=llm, embedder=embedder),
        llm=llm,
        metrics=metrics,
        config=config,
        progress=bool(cfg.progress),
        logger=WandbLogger(cfg.wandb.project, cfg.wandb.mode, tags=[cfg.tag]),
        health=health,
        workers=resolve_workers(cfg.get("workers", "auto"), llm, len(episodes)),
    )
    try:
        runner.run(episodes)
    except RunInterrupted as stop:
        info = runner.info
        print(
            f"recallbench: {stop} after {info.get('episodes_done', 0)}/{len(episodes)} episodes "
            f"(run.json: interrupted); resume with: {resume_command(run_dir)}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(stop.exit_status)
    if runner.info.get("status") == "degraded":
        print(
            f"recallbench: warning: run degraded ({describe_problems(runner.info['health'])}); "
            f"samples of unparsed replies in {run_dir / 'usage.json'}",
            file=sys.stderr,
            flush=True,
        )
    print_end_of_run(run_dir)
    return run_dir


def resolve_workers(value: Any, llm, n_episodes: int) -> int:
    """Episodes replayed at once: ``auto`` is the generator's concurrency for API backends (whose
    calls wait on the network) and 1 for in-process models (which compete for the CPU)."""
    if value in (None, "auto"):
        concurrency = int(getattr(llm.backend, "concurrency", 1) or 1)
        workers = concurrency if llm.backend.is_async else 1
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        workers = value
    else:
        raise ConfigError(f"workers={value!r}: expected auto or an integer >= 1 (conf/config.yaml)")
    return max(1, min(workers, n_episodes))


def resume_command(run_dir: Path) -> str:
    """The command line that resumes ``run_dir``: this command's overrides + ``resume_dir=``."""
    import shlex

    args = [a for a in sys.argv[1:] if not a.startswith(("resume_dir=", "-m", "--multirun"))]
    return shlex.join(["recallbench", *args, f"resume_dir={run_dir}"])


def picked_choices(choices) -> dict[str, str]:
    """Keep the config-group choices a run is identified by (drop Hydra's own and unset ones)."""
    return {k: v for k, v in choices.items() if v is not None and not k.startswith("hydra")}


def compose_job(overrides: list[str]) -> tuple[DictConfig, dict[str, str]]:
    """Compose the app config without Hydra's runtime (tests, benches); return (cfg, choices)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
    choices = picked_choices(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def main() -> None:
    """Console entry point (Hydra app)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from recallbench.tables import table_only

    @hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
    def _app(cfg: DictConfig) -> None:
        with user_errors():
            hc = HydraConfig.get()
            choices = hc.runtime.choices
            if reason := table_only(choices.get("experiment"), cfg.get("table")):
                raise ConfigError(reason)
            overrides = list(hc.overrides.task)
            multirun = hc.mode == RunMode.MULTIRUN
            job = cfg.job or default_job(cfg, choices, overrides if multirun else [])
            print(run(cfg, job, picked_choices(choices), overrides))

    sys.argv = _take_verbose_flag(sys.argv)
    with user_errors():
        check_choices(sys.argv[1:])
    # One stamp per invocation: every job of a sweep (sequential, joblib or SLURM workers, which
    # inherit the environment) lands under ONE folder runs/<tag>/<stamp>/.
    os.environ.setdefault("RECALLBENCH_STAMP", time.strftime("%Y%m%d-%H%M%S"))
    os.environ[SWEPT_ENV] = ",".join(swept_keys(sys.argv[1:]))
    _app()


def check_choices(argv: list[str]) -> None:
    """Every ``group=name`` on the command line names a config of that group (``conf/<group>/``).

    Hydra ignores an unknown choice of an optional group (``experiment=theanine_tabel1`` would
    silently start the default run on every episode) and reports others with a traceback; this
    gives one line with the closest names instead.
    """
    from recallbench.errors import did_you_mean

    for arg in argv:
        if "=" not in arg or arg.startswith("-"):
            continue
        key, value = arg.split("=", 1)
        group = CONF_DIR / key.lstrip("+~")
        if "." in key or "/" in key or not group.is_dir() or not value or value == "null":
            continue
        options = {p.stem for p in group.glob("*.yaml")}
        names = value.strip("[]").split(",") if "," in value else [value]
        for name in (n.strip() for n in names):
            if name and name not in options and not name.startswith(("${", "glob(", "choice(")):
                raise did_you_mean(f"{key} choice", name, options)


def swept_keys(argv: list[str]) -> list[str]:
    """The config keys a command line sweeps (``memory.k=2,6``, ``seed=range(3)``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    args = [a for a in argv if "=" in a and not a.startswith("-")]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except Exception:  # Hydra reports a malformed override itself, with its position
        return []
    return sorted({o.get_key_element().lstrip("+~") for o in parsed if o.is_sweep_override()})


def default_job(cfg: DictConfig, choices, overrides: list[str]) -> str:
    """``<dataset>-<memory>-<generator>``, plus the swept values of a sweep job.

    Jobs of one sweep that share their group choices (``memory.k=2,6``) would share a folder;
    the values of the swept keys that are not group choices tell them apart
    (``msc-memory_retrieval-extractive-memory.k_2``). Constant overrides (``episodes=5``) do not
    enter the name, so a rerun with other constants replaces the older runs of its cells in
    tables (newest run per job) instead of being pooled with them. Names longer than
    ``MAX_JOB`` keep a hash of the swept values instead.
    """
    import hashlib

    from hydra.core.hydra_config import HydraConfig

    from recallbench.io import safe_name

    base = f"{cfg.dataset.name}-{choices['memory']}-{choices['generator']}"
    swept = set(filter(None, os.environ.get(SWEPT_ENV, "").split(",")))
    swept |= set(HydraConfig.get().sweeper.get("params") or {})
    extras = sorted(
        o
        for o in overrides
        if (key := o.split("=", 1)[0].lstrip("+~")) in swept and key not in set(choices)
    )
    if not extras:
        return base
    name = safe_name(f"{base}-{'-'.join(extras)}")
    if len(name) > MAX_JOB:
        name = f"{base}-{hashlib.sha256(','.join(extras).encode()).hexdigest()[:10]}"
    return name


def table_services(cfg: DictConfig) -> dict[str, Callable[..., Any]]:
    """Return the model factories a table builder may call, from the composed config."""
    from recallbench.embed import build_embedder
    from recallbench.judges import build_judge
    from recallbench.judges.caim import build_caim_judge
    from recallbench.llm import build_llm

    def plain(node) -> dict[str, Any]:
        return OmegaConf.to_container(node, resolve=True)

    def make_llm():
        return build_llm(plain(cfg.generator), Path(cfg.paths.cache_dir) / "llm.sqlite")

    def make_judge():
        if cfg.get("judge") is None:
            raise ConfigError("this table needs a judge: add judge=<name> (conf/judge)")
        return build_judge(plain(cfg.judge), llm=make_llm())

    return {
        "make_llm": make_llm,
        "make_judge": make_judge,
        "make_caim_judge": lambda rater: build_caim_judge(rater),
        "make_embedder": lambda emb: build_embedder(emb),
    }


def render_table(experiment: str, overrides: list[str]) -> dict[str, Path]:
    """Compose ``experiment`` with ``overrides`` and render its table; return the files."""
    from recallbench.tables import TableContext, load_spec, reproduce

    cfg, _ = compose_job([f"experiment={experiment}", *overrides])
    table = cfg.get("table")
    spec = load_spec(
        experiment, None if table is None else OmegaConf.to_container(table, resolve=True)
    )
    ctx = TableContext(
        results_dir=Path(cfg.paths.results_dir),
        data_dir=Path(cfg.paths.data_dir),
        config=OmegaConf.to_container(cfg, resolve=True),
        **table_services(cfg),
    )
    return reproduce(spec, ctx)


def table_main(argv: list[str] | None = None) -> None:
    """Console entry point ``recallbench-table``: render experiments' paper tables."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="recallbench-table",
        description="Render the paper table (or figure) of conf/experiment/<EXPERIMENT>.yaml "
        "from its runs or data into <results>/tables/<paper>_<id>.{md,tex,csv}.",
    )
    parser.add_argument("args", nargs="+", metavar="EXPERIMENT | KEY=VALUE")
    parser.add_argument("--results", help="results folder (default: paths.results_dir)")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of user errors")
    ns = parser.parse_intermixed_args(argv)
    if ns.verbose:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
    overrides = [a for a in ns.args if "=" in a or a.startswith(("~", "+"))]
    experiments = [a for a in ns.args if a not in overrides]
    if not experiments:
        parser.error("name at least one experiment (conf/experiment/<name>.yaml)")
    if ns.results:
        overrides.append(f"paths.results_dir={ns.results}")
    for experiment in experiments:
        with user_errors("recallbench-table"):
            files = render_table(experiment, overrides)
        for path in files.values():
            print(path)


if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:
        table_main(sys.argv[2:])
    else:
        main()
