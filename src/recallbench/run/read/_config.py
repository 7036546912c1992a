"""A run's resolved config (``config.yaml``), typed: one attribute per config group.

    config = record.config
    config.dataset.name, config.dataset.data_dir, config.dataset.options
    config.generator.backend, config.generator.model, config.embedder.kind
    config.judge.name, config.judge.model, config.protocol.name, config.protocol.metrics
    config.choice("memory")            # the group option the run was made with
    config.value("memory.threshold")   # any other key, dotted (the rare key nobody typed yet)

A block absent from the file (a run written before the group existed, or a folder without
``config.yaml``) reads as empty: its attributes are None (or empty), never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from recallbench.records import Episode, decayed_recallable

Settings = Mapping[str, object]


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Block:
    """One config group's block: the option the run picked (``choice``) and its settings."""

    choice: str | None = None
    settings: Settings = field(default_factory=dict)

    def get(self, key: str) -> object:
        """A setting of the block (None when absent)."""
        return self.settings.get(key)

    @property
    def name(self) -> str | None:
        """The block's ``name`` setting (datasets, judges, protocols have one)."""
        return _text(self.settings.get("name"))

    @property
    def present(self) -> bool:
        """Whether the config holds this block at all."""
        return bool(self.settings)


@dataclass(frozen=True)
class DatasetConfig(Block):
    """``dataset``: which loader, which folder, which options."""

    @property
    def data_dir(self) -> str | None:
        return _text(self.settings.get("data_dir"))

    @property
    def options(self) -> dict[str, object]:
        return _mapping(self.settings.get("options"))

    def load(self, where: str) -> tuple[Episode, ...]:
        """Load the episodes this block names (cached per name, folder and options); ``where``
        names the config in the error of a block without a name or folder."""
        if self.name is None or self.data_dir is None:
            raise ValueError(
                f"{where}: dataset block needs name and data_dir, got {sorted(self.settings)}"
            )
        return _load(self.name, self.data_dir, _frozen(self.options))


def _frozen(options: Mapping[str, object]) -> str:
    import json

    return json.dumps(options, sort_keys=True)


@lru_cache(maxsize=16)
def _load(name: str, data_dir: str, options: str) -> tuple[Episode, ...]:
    import json

    from recallbench.datasets import load

    return tuple(load(name, data_dir, **json.loads(options)))


@dataclass(frozen=True)
class MemoryConfig(Block):
    """``memory``: the method's settings."""

    @property
    def decayed_recallable(self) -> bool:
        """Whether the method recalls decayed records (``records.decayed_recallable``)."""
        return decayed_recallable({"memory": self.settings})


@dataclass(frozen=True)
class GeneratorConfig(Block):
    """``generator``: the backend and model that produced the outputs."""

    @property
    def backend(self) -> str | None:
        return _text(self.settings.get("backend"))

    @property
    def model(self) -> str | None:
        return _text(self.settings.get("model"))


@dataclass(frozen=True)
class EmbedderConfig(Block):
    """``embedder``: which embedder the run's retrieval used."""

    @property
    def kind(self) -> str | None:
        return _text(self.settings.get("kind"))


@dataclass(frozen=True)
class JudgeConfig(Block):
    """``judge`` (or a protocol's own ``judge``): who scored the answers."""

    @property
    def generator(self) -> GeneratorConfig:
        """The judge's own LLM (empty: the run's)."""
        return GeneratorConfig(None, _mapping(self.settings.get("generator")))


@dataclass(frozen=True)
class ProtocolConfig(Block):
    """``protocol``: how the run was evaluated."""

    @property
    def metrics(self) -> tuple[str, ...]:
        found = self.settings.get("metrics")
        return tuple(str(m) for m in found) if isinstance(found, list | tuple) else ()

    @property
    def oracle_context(self) -> bool:
        return bool(self.settings.get("oracle_context"))

    @property
    def judge(self) -> JudgeConfig:
        return JudgeConfig(None, _mapping(self.settings.get("judge")))


@dataclass(frozen=True)
class RunConfig:
    """A run's ``config.yaml``: the groups as attributes, ``raw`` for every other key."""

    raw: Settings = field(default_factory=dict)

    @property
    def choices(self) -> dict[str, str | None]:
        """The config-group options the run was made with (``memory`` -> ``lufy``)."""
        found = _mapping(self.raw.get("choices"))
        return {k: _text(v) for k, v in found.items()}

    def choice(self, group: str) -> str | None:
        """The option of ``group`` the run was made with (None: not recorded)."""
        return self.choices.get(group)

    def _block(self, group: str) -> tuple[str | None, dict[str, object]]:
        return self.choice(group), _mapping(self.raw.get(group))

    @property
    def dataset(self) -> DatasetConfig:
        return DatasetConfig(*self._block("dataset"))

    @property
    def memory(self) -> MemoryConfig:
        return MemoryConfig(*self._block("memory"))

    @property
    def generator(self) -> GeneratorConfig:
        return GeneratorConfig(*self._block("generator"))

    @property
    def embedder(self) -> EmbedderConfig:
        return EmbedderConfig(*self._block("embedder"))

    @property
    def judge(self) -> JudgeConfig:
        return JudgeConfig(*self._block("judge"))

    @property
    def protocol(self) -> ProtocolConfig:
        return ProtocolConfig(*self._block("protocol"))

    @property
    def overrides(self) -> tuple[str, ...]:
        """The command-line overrides the run was made with (``memory.k=2``)."""
        found = self.raw.get("overrides")
        return tuple(str(o) for o in found) if isinstance(found, list | tuple) else ()

    @property
    def metric_names(self) -> tuple[str, ...]:
        """``metrics.names``: the reference metrics the run asked for besides its protocol's."""
        found = _mapping(self.raw.get("metrics")).get("names")
        return tuple(str(m) for m in found) if isinstance(found, list | tuple) else ()

    def path(self, key: str) -> str | None:
        """A folder of ``paths`` (``cache_dir``, ``results_dir``, ``data_dir``)."""
        return _text(_mapping(self.raw.get("paths")).get(key)) or None

    def value(self, key: str) -> object:
        """The value of a dotted key (``memory.k``, ``seed``); None when absent."""
        node: object = self.raw
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node
