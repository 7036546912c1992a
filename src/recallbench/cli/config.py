"""Composing the app config without Hydra's runtime, the checks of a composed config and of the
command line before any work starts, and how a
failed check reaches the user: each failure is a ``UserError`` that names the key or choice and
what was expected, printed by ``user_errors`` as one line (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ValidationError

from recallbench import CONF_DIR, CONFIG_NAME, ROOT_CONFIG
from recallbench.errors import ConfigError, UserError, one_line
from recallbench.llm.protocol import LLMClient
from recallbench.records import Episode

EXIT_USER_ERROR = 2


def verbose_errors() -> bool:
    """Show tracebacks of user errors (``HYDRA_FULL_ERROR=1`` or ``--verbose``)?"""
    return os.environ.get("HYDRA_FULL_ERROR") == "1" or os.environ.get("RECALLBENCH_VERBOSE") == "1"


@contextlib.contextmanager
def user_errors(prog: str = "recallbench") -> Iterator[None]:
    """Print a ``UserError`` as ONE line on stderr and exit 2, or the error's own
    ``exit_status`` (``StoreUnreachable``: 75); the traceback only when verbose."""
    try:
        yield
    except UserError as exc:
        if verbose_errors():
            raise
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr, flush=True)
        sys.exit(getattr(exc, "exit_status", EXIT_USER_ERROR))


def take_verbose_flag(argv: list[str]) -> list[str]:
    """Strip ``--verbose`` from ``argv`` (Hydra does not know it) and remember it."""
    if "--verbose" in argv:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
        argv = [a for a in argv if a != "--verbose"]
    return argv


@dataclass
class RunKeys:
    """The schema of the top-level run keys of the root config (``ROOT_CONFIG``), checked first."""

    tag: str = "adhoc"
    job: str | None = None
    seed: int = 0
    episodes: int | None = None
    resume_dir: str | None = None
    stamp: str | None = None
    store: str = "sqlite"
    progress: bool = True


_EXPECTED = {
    "tag": "a folder name",
    "job": "a folder name or null",
    "seed": "an integer",
    "episodes": "an integer >= 1, or null for every episode",
    "resume_dir": "the path of an existing run folder, or null",
    "stamp": "a folder name (the sweep's runs/<tag>/<stamp>), or null",
    "store": "sqlite or redis://host:port/db",
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
                f"{f.name}={value!r}: expected {_EXPECTED[f.name]} ({ROOT_CONFIG})"
            ) from None
    if cfg.get("episodes") is not None and int(cfg.episodes) < 1:
        raise ConfigError(
            f"episodes={cfg.episodes}: expected {_EXPECTED['episodes']} (0 or fewer selects nothing)"
        )
    for key in ("tag", "job", "stamp"):
        value = cfg.get(key)
        if value is not None and (
            not str(value).strip() or "/" in str(value) or value in {".", ".."}
        ):
            raise ConfigError(f"{key}={value!r}: expected {_EXPECTED[key]} without '/'")


def select_episodes(episodes: list[Episode], n: int | None, seed: int) -> list[Episode]:
    """Sample ``n`` episodes with a fixed seed (order kept); all when ``n`` is None."""
    if n is None or n >= len(episodes):
        return list(episodes)
    keep = set(random.Random(seed).sample(range(len(episodes)), n))
    return [ep for i, ep in enumerate(episodes) if i in keep]


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
        options = {p.stem for p in group.glob("*.yaml") if not p.stem.startswith("_")}
        names = value.strip("[]").split(",") if "," in value else [value]
        for name in (n.strip() for n in names):
            if name and name not in options and not name.startswith(("${", "glob(", "choice(")):
                raise did_you_mean(f"{key} choice", name, options)


def picked_choices(choices: Mapping[str, Any]) -> dict[str, str]:
    """Keep the config-group choices a run is identified by (drop Hydra's own and unset ones)."""
    return {k: v for k, v in choices.items() if v is not None and not k.startswith("hydra")}


def compose_job(overrides: list[str]) -> tuple[DictConfig, dict[str, str]]:
    """Compose the app config without Hydra's runtime (tests, benches); return (cfg, choices)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose(CONFIG_NAME, overrides=overrides, return_hydra_config=True)
    choices = picked_choices(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def resolve_workers(value: Any, llm: LLMClient, n_episodes: int) -> int:
    """Episodes replayed at once: ``auto`` is the generator's concurrency for API backends (whose
    calls wait on the network) and 1 for in-process models (which compete for the CPU)."""
    if value in (None, "auto"):
        concurrency = max(1, llm.backend.concurrency)
        workers = concurrency if llm.backend.is_async else 1
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        workers = value
    else:
        raise ConfigError(f"workers={value!r}: expected auto or an integer >= 1 ({ROOT_CONFIG})")
    return max(1, min(workers, n_episodes))


MAX_JOB = 120  # characters of a run folder name derived from a sweep job's overrides


def swept_keys(argv: list[str]) -> list[str]:
    """The config keys a command line sweeps (``memory.k=2,6``, ``seed=range(3)``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    args = [a for a in argv if "=" in a and not a.startswith("-")]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
    except Exception:  # Hydra reports a malformed override itself, with its position
        return []
    return sorted({o.get_key_element().lstrip("+~") for o in parsed if o.is_sweep_override()})


def default_job(
    cfg: DictConfig,
    choices: Mapping[str, Any],
    overrides: list[str],
    swept: Collection[str] = (),
) -> str:
    """``<dataset>-<memory>-<generator>``, plus the swept values of a sweep job.

    Jobs of one sweep that share their group choices (``memory.k=2,6``) would share a folder;
    the values of the swept keys that are not group choices tell them apart
    (``msc-memory_retrieval-extractive-memory.k_2``). Constant overrides (``episodes=5``) do not
    enter the name, so a rerun with other constants replaces the older runs of its cells in
    tables (newest run per job) instead of being pooled with them. Names longer than
    ``MAX_JOB`` keep a hash of the swept values instead. ``swept``: the keys the command line
    sweeps (``swept_keys``, passed by ``cli.main`` in ``Launch.swept``), besides the sweeper's.
    """
    import hashlib

    from hydra.core.hydra_config import HydraConfig

    from recallbench.io import safe_name

    base = f"{cfg.dataset.name}-{choices['memory']}-{choices['generator']}"
    swept = {*swept, *(HydraConfig.get().sweeper.get("params") or {})}
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
