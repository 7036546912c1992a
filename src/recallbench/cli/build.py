"""Build a run's objects from its composed config: the one place that constructs models.

Every config group names what it builds with Hydra's ``_target_`` (a class, or for datasets
and generators a function) and ``hydra.utils.instantiate`` builds it:

===========  ==============================================  =====================================
group        ``_target_`` (example)                          built with
===========  ==============================================  =====================================
dataset      ``recallbench.datasets.msc.load``               ``data_dir`` and ``options``
generator    ``recallbench.llm.from_config``                 the LLM cache file
embedder     ``recallbench.embed.minilm.MiniLMEmbedder``     the embedding cache file
judge        ``recallbench.judges.llm.LLMJudge``             its LLM (``generator``, else the run's)
protocol     ``recallbench.protocols.qa.QAProtocol``         ``seed`` and its model slots
memory       ``recallbench.memory.lufy.Lufy``                the run's LLM and embedder
===========  ==============================================  =====================================

Keys that are not constructor arguments stay in the configs because tables, job names and
run records read them: ``LABELS`` lists them per group, and a key starting with ``_`` (other
than Hydra's own) is a private value of the config (e.g. a memory's per-embedder-scale table)
that the constructor never sees. A protocol declares its *model slots* in ``MODELS`` (argument
-> group): the builder constructs each from the nested config and injects the object, the run's
own LLM (or embedder) when the nested config is null. Nothing below ``cli`` builds an LLM,
embedder or judge.

A config without ``_target_`` (a generator given inline as ``{backend: openai, model: gpt-4o}``,
a judge chosen by ``name`` inside a protocol or a table, a run folder recorded before
``_target_`` existed) gets one: ``llm.from_config`` for generators (which picks the backend),
else the target its name key names in ``BY_NAME``, the one name-keyed map.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, cast

from omegaconf import DictConfig, OmegaConf

from recallbench.errors import ConfigError, DatasetFormatError, UserError, one_line
from recallbench.memory import MemoryMethod, MethodFactory
from recallbench.records import JSON

if TYPE_CHECKING:
    from recallbench.embed import TextEmbedder
    from recallbench.judges import Judge
    from recallbench.judges.caim import CaimJudge
    from recallbench.llm import LLM, LLMClient
    from recallbench.llm.budget import Meter
    from recallbench.protocols.base import EvalProtocol
    from recallbench.records import Episode

# Hydra's own keys in a node that ``instantiate`` reads (every other ``_`` key is private)
HYDRA_KEYS = frozenset({"_target_", "_recursive_", "_convert_", "_partial_", "_args_"})
# per group: keys kept for tables, job names and records, never passed to the constructor
LABELS: dict[str, tuple[str, ...]] = {
    "dataset": ("name", "data_dir", "options"),
    "generator": (),
    "embedder": ("kind", "scale"),
    "judge": ("name", "generator", "cache_path", "rating_samples", "rating_temperature"),
    "caim_judge": ("name", "label", "generator", "cache_path"),
    "protocol": ("name", "metrics", "cache_path"),
    "memory": (),
}
DEFAULT_GENERATOR = "recallbench.llm.from_config"
# a config node as the builders take it: composed (``DictConfig``), plain, or absent (null)
Node: TypeAlias = DictConfig | Mapping[str, object] | None

# The one name-keyed map: the ``_target_`` of a node that names its class by a key instead.
# Every config file of conf/embedder and conf/judge carries its own ``_target_``; this map must
# stay for the nodes that cannot: a CAIM judge chosen by ``name`` inside a protocol config
# (qa_gvd's ``caim_judge: {name: lexical, ...}``: Hydra merges a command-line node into it, so a
# ``_target_`` written there would outlive ``name=llm`` and build the wrong class) or in a
# table's ``raters:``, a judge written inline, and run folders recorded before ``_target_``
# (their embedder has only ``kind``; LUFY Table 15 rebuilds it). group -> (key, name -> target)
BY_NAME: dict[str, tuple[str, dict[str, str]]] = {
    "embedder": (
        "kind",
        {
            "minilm": "recallbench.embed.minilm.MiniLMEmbedder",
            "openai": "recallbench.embed.openai_embed.OpenAIEmbedder",
            "hashing": "recallbench.embed.hashing.HashingEmbedder",
        },
    ),
    "judge": (
        "name",
        {
            "lexical": "recallbench.judges.lexical.LexicalJudge",
            "llm": "recallbench.judges.llm.LLMJudge",
            "mem0_j": "recallbench.judges.mem0_j.Mem0JJudge",
            "longmemeval": "recallbench.judges.longmemeval.LongMemEvalJudge",
        },
    ),
    "caim_judge": (
        "name",
        {
            "lexical": "recallbench.judges.caim.LexicalCaimJudge",
            "llm": "recallbench.judges.caim.LLMCaimJudge",
        },
    ),
}


def plain(node: Node, resolve: bool = True) -> dict[str, JSON]:
    """A config node as a plain dict (its interpolations resolved unless ``resolve`` is False)."""
    if isinstance(node, DictConfig):
        data = OmegaConf.to_container(node, resolve=resolve)
        # a DictConfig always converts to a dict; its keys are config names (strings)
        return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}
    return dict(node or {})


def job_metrics(cfg: DictConfig) -> list[str]:
    """The metrics a job scores (``metrics.names``, else ``protocol.metrics``): score's, checks'."""
    metrics = cfg.get("metrics") or {}
    return [str(m) for m in (metrics.get("names") or cfg.protocol.get("metrics") or [])]


def arguments(node: Node, group: str) -> dict[str, JSON]:
    """The constructor arguments of ``node``: without the group's labels and private keys."""
    drop = set(LABELS[group])
    return {
        str(k): v
        for k, v in plain(node).items()
        if k not in drop and (not str(k).startswith("_") or k in HYDRA_KEYS)
    }


def construct(
    node: Node, group: str, what: str, convert: str = "all", /, **inject: object
) -> object:
    """``hydra.utils.instantiate`` the node's ``_target_`` with ``inject`` added.

    ``convert`` is Hydra's ``_convert_``: ``all`` hands nested values over as plain dicts and
    lists; memory methods get ``none`` (OmegaConf containers), as they always have.

    A missing or unimportable target, or arguments the target does not take, raise one
    ``ConfigError`` naming ``what`` (the group and choice) instead of Hydra's traceback.
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    params = arguments(node, group)
    if "_target_" not in params:
        raise ConfigError(
            f"{what}: no _target_; name the class (or function) that builds it, e.g. "
            f"_target_: {_EXAMPLE[group]}"
        )
    try:
        return instantiate(params, _convert_=convert, **inject)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, UserError):
            raise cause from None
        raise ConfigError(f"{what}: {one_line(exc)}") from exc


_EXAMPLE = {
    "dataset": "recallbench.datasets.msc.load",
    "generator": DEFAULT_GENERATOR,
    "embedder": "recallbench.embed.minilm.MiniLMEmbedder",
    "judge": "recallbench.judges.lexical.LexicalJudge",
    "caim_judge": "recallbench.judges.caim.LexicalCaimJudge",
    "protocol": "recallbench.protocols.qa.QAProtocol",
    "memory": "recallbench.memory.lufy.Lufy",
}


def with_target(node: Node, group: str) -> dict[str, JSON]:
    """``node`` as a dict that has a ``_target_``: its own, else the one ``BY_NAME`` gives."""
    from recallbench.errors import did_you_mean

    cfg = plain(node)
    if "_target_" not in cfg and group in BY_NAME:
        key, targets = BY_NAME[group]
        if key not in cfg:
            raise ConfigError(
                f"{group} config has neither _target_ nor {key!r} (keys: {sorted(cfg)})"
            )
        if not isinstance(cfg[key], str) or cfg[key] not in targets:
            raise did_you_mean(f"{group} {key}", str(cfg[key]), targets)
        cfg["_target_"] = targets[cfg[key]]
    return cfg


# -- the groups -------------------------------------------------------------------------------


def build_dataset(node: Node) -> list[Episode]:
    """Load the episodes of a ``conf/dataset`` node: ``_target_(data_dir, **options)``."""
    cfg = plain(node)
    options = dict(cfg.get("options") or {})
    what = f"dataset {cfg.get('name')}"
    # instantiate returns Any: a dataset target is a loader ``load(path, ...) -> list[Episode]``
    episodes = cast(
        "list[Episode]",
        construct(
            {"_target_": cfg.get("_target_"), **options} if cfg.get("_target_") else {},
            "dataset",
            what,
            data_dir=Path(cfg["data_dir"]),
        ),
    )
    if not episodes:
        raise DatasetFormatError(
            f"{what} under {cfg['data_dir']} (options {options}): the loader found no episodes; "
            "check the files (or the filter options) and re-fetch with `make data`"
        )
    return list(episodes)


def build_generator(
    node: Node, cache_path: str | Path | None, what: str = "generator", meter: Meter | None = None
) -> LLM:
    """An ``LLM`` from a ``conf/generator`` node (inline nodes without ``_target_`` too).

    ``meter``: the job's budget and plan counts (``llm.budget``), shared by every LLM of a job:
    the run's LLM carries it, and the judges' own generators get the same one."""
    cfg = plain(node)
    cfg.setdefault("_target_", DEFAULT_GENERATOR)
    # instantiate returns Any: the target is ``llm.from_config`` or another LLM builder
    if meter is None:
        return cast("LLM", construct(cfg, "generator", what, cache_path=cache_path))
    return cast("LLM", construct(cfg, "generator", what, cache_path=cache_path, meter=meter))


def build_embedder(
    node: Node, cache_dir: str | Path | None = None, what: str = "embedder"
) -> TextEmbedder:
    """An embedder from a ``conf/embedder`` node; model embedders cache in ``cache_dir``."""
    cfg = with_target(node, "embedder")
    if cache_dir is not None and cfg.get("kind") != "hashing" and not cfg.get("cache_path"):
        cfg["cache_path"] = str(Path(cache_dir) / "embeddings.sqlite")
    return cast("TextEmbedder", construct(cfg, "embedder", what))  # a conf/embedder target


def _judge(cfg: dict[str, JSON], group: str, run_llm: LLMClient | None, what: str) -> object:
    """Construct a judge node that has a ``_target_``; a class taking ``llm`` gets its own
    ``generator`` (cached at its ``cache_path``), else the run's LLM."""
    if not _wants_llm(cfg["_target_"], what):
        return construct(cfg, group, what)
    llm: LLMClient
    if cfg.get("generator") is not None:
        meter = None if run_llm is None else run_llm.meter
        llm = build_generator(cfg["generator"], cfg.get("cache_path"), f"{what}.generator", meter)
    elif run_llm is None:
        raise ConfigError(f"{what}: no generator configured and no run LLM given")
    else:
        llm = run_llm
    return construct(cfg, group, what, llm=llm)


def build_judge(node: Node, llm: LLMClient | None = None, what: str = "judge") -> Judge:
    """A QA judge from a ``conf/judge`` node; an LLM judge gets its LLM injected."""
    judge = _judge(with_target(node, "judge"), "judge", llm, what)
    return cast("Judge", judge)  # instantiate returns Any: a conf/judge (or BY_NAME) target


def build_caim_judge(
    node: Node, llm: LLMClient | None = None, what: str = "caim_judge"
) -> CaimJudge:
    """A CAIM judge (``{name: lexical|llm, ...}`` or a ``_target_``); LLM judges get an LLM."""
    cfg = with_target(node or {"name": "lexical"}, "caim_judge")
    return cast("CaimJudge", _judge(cfg, "caim_judge", llm, what))  # a BY_NAME or own target


def _target_class(target: str, what: str) -> type:
    """The class a ``_target_`` names; an unimportable one is a ``ConfigError`` naming ``what``."""
    from hydra.utils import get_class

    try:
        return get_class(target)
    except Exception as exc:  # Hydra's ImportError / ValueError
        raise ConfigError(f"{what}: _target_ {target!r}: {one_line(exc)}") from exc


def _wants_llm(target: str, what: str) -> bool:
    """Does the class ``target`` take an ``llm`` argument?"""
    import inspect

    return "llm" in inspect.signature(_target_class(target, what)).parameters


def build_protocol(
    node: Node,
    seed: int,
    llm: LLMClient,
    embedder: TextEmbedder,
    cache_dir: str | Path | None = None,
) -> EvalProtocol:
    """A protocol from a ``conf/protocol`` node, its model slots built and injected.

    ``MODELS`` on the protocol class maps a constructor argument to the group its nested config
    belongs to (``judge``, ``caim_judge``, ``generator``, ``embedder``); a null nested config
    injects the run's ``llm`` for generator slots and the run's ``embedder`` for embedder slots
    (a judge slot stays None: the protocol says whether it needs one).
    """
    cfg = plain(node)
    what = f"protocol {cfg.get('name')}"
    if "_target_" not in cfg:
        construct(cfg, "protocol", what)  # raises: names the missing _target_
    cls = _target_class(cfg["_target_"], what)
    cache = cfg.get("cache_path") or (Path(cache_dir) / "llm.sqlite" if cache_dir else None)
    slots: dict[str, object] = {}
    for arg, group in getattr(cls, "MODELS", {}).items():
        sub = cfg.pop(arg, None)
        slot = f"{what}.{arg}"
        if group == "generator":
            slots[arg] = llm if sub is None else build_generator(sub, cache, slot, llm.meter)
        elif group == "embedder":
            slots[arg] = embedder if sub is None else build_embedder(sub, cache_dir, slot)
        elif group == "judge":
            slots[arg] = None if sub is None else build_judge(sub, llm, slot)
        elif group == "caim_judge":
            slots[arg] = build_caim_judge(sub, llm, slot)
        else:
            raise ConfigError(f"{cls.__name__}.MODELS[{arg!r}]: unknown group {group!r}")
    # instantiate returns Any: the target is a protocol class (conf/protocol)
    return cast("EvalProtocol", construct(cfg, "protocol", what, seed=seed, **slots))


def build_memory_factory(
    node: Node, llm: LLMClient, embedder: TextEmbedder
) -> Callable[[], MemoryMethod]:
    """A function returning a fresh memory method per episode (``_target_(llm=, embedder=)``)."""
    cfg = plain(node)
    what = f"memory {cfg.get('_target_', '')}".strip()
    build = partial(construct, cfg, "memory", what, "none", llm=llm, embedder=embedder)
    return MethodFactory.named(cfg.get("_target_"), build)  # it names the class (run.prefetch)
