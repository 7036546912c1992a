"""Build an ``LLM`` from a generator config (``conf/generator/*.yaml``).

API keys come only from the environment variable named by ``api_key_env``. A config that holds a
key itself is refused, and the key is handed to the ``openai`` client alone: it is not kept on
any recallbench object, so config dumps, ``LLM.describe()`` and usage dumps cannot contain it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from recallbench.errors import ConfigError, did_you_mean
from recallbench.llm.backends import ExtractiveBackend, OpenAIBackend
from recallbench.llm.backends.hf import HFBackend
from recallbench.llm.budget import Budget, Meter
from recallbench.llm.cache import open_cache
from recallbench.llm.client import LLM
from recallbench.llm.prices import Price, PriceTable
from recallbench.llm.types import Backend
from recallbench.store import shared_store

if TYPE_CHECKING:
    from omegaconf import DictConfig

# Every key of a generator config and the type of its value (cli.checks checks both before a run).
KEY_TYPES: dict[str, Any] = {
    "backend": str,
    "model": str | None,
    "base_url": str | None,
    "api_key_env": str | None,
    "temperature": float | None,
    "max_tokens": int | None,
    "concurrency": int | None,
    "rpm": float | None,
    "tpm": float | None,
    "timeout_s": float | None,
    "max_retries": int | None,
    "context_length": int | None,
    "seed": int | None,
    "price_per_1m": list[float] | None,
    "threads": int | None,
    # YAML reads an unquoted `off` as False: the mode "off" (_structured)
    "structured": Literal["off", "json_schema", "vllm", "llamacpp", "local", "auto", False] | None,
    "cache_scope": str | None,
    "repairs": int | None,
    "max_usd": float | None,
    "max_calls": int | None,
    "name": str | None,
    "description": str | None,
}
KEYS = set(KEY_TYPES)
# The generator's backend is chosen by name, not by a ``_target_`` of its own: the three share
# one builder (the LLM wrapper, its cache, prices, seed and the API-key rule) and a generator is
# written inline by its backend wherever a model is configured (``judge.generator='{backend:
# openai, model: gpt-4o}'``, a CAIM judge's or a table rater's ``generator``), which a
# ``_target_`` per backend would turn into a class path in every one of them.
BACKENDS = ("extractive", "openai", "hf")
# A local server (vLLM, Ollama, llama.cpp) ignores the key; the client still wants a string.
NO_KEY = "no-key-needed"


def _plain(cfg: object) -> dict[str, Any]:
    if hasattr(cfg, "_metadata"):  # an OmegaConf DictConfig
        from omegaconf import OmegaConf

        cfg = OmegaConf.to_container(cfg, resolve=True)
    if not isinstance(cfg, Mapping):
        raise ConfigError(f"generator config must be a mapping, got {type(cfg).__name__}")
    return dict(cfg)


def check_keys(cfg: Mapping[str, object]) -> None:
    for key in cfg:
        if key in KEYS:
            continue
        if any(word in key.lower() for word in ("key", "secret", "token", "password")):
            raise ConfigError(
                f"generator config key {key!r} looks like a secret: put the API key in the "
                "environment variable named by `api_key_env`, never in a config"
            )
        raise ConfigError(did_you_mean("generator config key", key, KEYS).args[0])


def _api_key(cfg: dict[str, Any], dry: bool = False) -> str:
    env = cfg.get("api_key_env") or "OPENAI_API_KEY"
    key = os.environ.get(env)
    if key:
        return key
    if cfg.get("base_url") or dry:  # a plan sends nothing: it needs no key
        return NO_KEY
    raise ConfigError(
        f"generator {cfg.get('model')!r} on api.openai.com needs an API key in the environment "
        f"variable {env} (generator.api_key_env); set it, or point base_url at a local server"
    )


def _prices(cfg: dict[str, Any]) -> PriceTable:
    given = cfg.get("price_per_1m")
    if given is None:
        return PriceTable()
    if not isinstance(given, (list, tuple)) or len(given) != 2:
        raise ConfigError(f"generator.price_per_1m must be [input, output] USD, got {given!r}")
    return PriceTable({str(cfg.get("model")): Price(float(given[0]), float(given[1]))})


def _opt(cfg: dict[str, Any], key: str, cast: type) -> Any:
    value = cfg.get(key)
    return None if value is None else cast(value)


def _structured(value: Any) -> str:
    # YAML reads an unquoted `off` as False: accept it as the mode "off"
    return "off" if value in (None, False) else str(value)


def from_config(
    cache_path: str | Path | None = None, meter: Meter | None = None, **keys: object
) -> LLM:
    """The ``_target_`` of ``conf/generator``: ``build_llm`` with the config's keys as arguments."""
    return build_llm(keys, cache_path, meter)


def build_llm(
    cfg: Mapping[str, object] | DictConfig,
    cache_path: str | Path | None = None,
    meter: Meter | None = None,
) -> LLM:
    """Return an ``LLM`` for a generator config; ``cache_path`` is the SQLite cache file.

    ``meter``: the job's shared budget and plan counts (``llm.budget``; the cli builds it from
    the run generator's ``max_usd``/``max_calls``); None: a meter of this config's own budget.

    Keys: backend (extractive|openai|hf), model, base_url, api_key_env, temperature and
    max_tokens (null: each task's own value; a number overrides every call), concurrency, rpm,
    tpm, timeout_s, max_retries, context_length, seed (default seed of calls that give none),
    price_per_1m ([input, output] USD for a model missing from the price table), threads (hf:
    torch threads while generating, default 1; 0 keeps torch's setting), structured (how
    tasks with a reply shape constrain decoding: off|json_schema|vllm|llamacpp|local|auto, see
    ``recallbench.llm.structured``; default off, the papers' free-text setting), cache_scope
    (a name shared by endpoints that serve the same weights on purpose: their replies are cached
    under it instead of the endpoint, see ``recallbench.llm.client``), repairs (repair turns per
    unparsed reply, default 0: the papers' protocol; see ``recallbench.llm.flow``), max_usd and
    max_calls (the budget: a run stops as ``interrupted`` before a request that would pass it;
    ``recallbench.llm.budget``).
    """
    cfg = _plain(cfg)
    cfg.pop("_target_", None)  # conf/generator's own target: this function (via from_config)
    check_keys(cfg)
    kind = cfg.get("backend", "extractive")
    context = _opt(cfg, "context_length", int)
    if kind == "extractive":
        backend: Backend = ExtractiveBackend(context_length=context or 16385)
    elif kind == "openai":
        if not cfg.get("model"):
            raise ConfigError("generator.model is required for the openai backend")
        backend = OpenAIBackend(
            str(cfg["model"]),
            api_key=_api_key(cfg, dry=meter is not None and meter.dry),
            base_url=cfg.get("base_url"),
            concurrency=int(cfg.get("concurrency") or 8),
            rpm=_opt(cfg, "rpm", float),
            tpm=_opt(cfg, "tpm", float),
            timeout_s=float(cfg.get("timeout_s") or 60),
            max_retries=4 if (retries := cfg.get("max_retries")) is None else int(retries),
            context_length=context or 16385,
            store=shared_store(),
        )
    elif kind == "hf":
        threads = _opt(cfg, "threads", int)
        model = str(cfg.get("model") or "smollm2-135m-instruct")
        backend = HFBackend(model, context, threads=1 if threads is None else threads)
    else:
        raise did_you_mean("generator backend", str(kind), BACKENDS)
    cache = open_cache(cache_path) if cache_path is not None else None
    return LLM(
        backend,
        cache,
        _prices(cfg),
        seed=_opt(cfg, "seed", int),
        temperature=_opt(cfg, "temperature", float),
        max_tokens=_opt(cfg, "max_tokens", int),
        structured=_structured(cfg.get("structured")),
        cache_scope=_opt(cfg, "cache_scope", str),
        repairs=int(cfg.get("repairs") or 0),
        meter=meter or Meter(Budget.of(cfg)),
    )
