"""Evaluation protocols; ``build_protocol`` maps ``conf/protocol/*.yaml`` to a protocol object."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from recallbench.errors import did_you_mean

# name (the config's ``name:``) -> "module:class"; modules are imported on first use only.
REGISTRY = {
    "response": "recallbench.protocols.response:ResponseProtocol",
    "qa": "recallbench.protocols.qa:QAProtocol",
    "qa_gvd": "recallbench.protocols.qa_gvd:GVDQAProtocol",
    "teafarm": "recallbench.protocols.teafarm:TeaFarmProtocol",
    "memory_ops": "recallbench.protocols.memory_ops:MemoryOpsProtocol",
    "timerag": "recallbench.protocols.timerag:TimeRAGProtocol",
    "lamp1": "recallbench.protocols.lamp1:LaMP1Protocol",
}
PROTOCOLS = tuple(REGISTRY)


def build_protocol(cfg: dict[str, Any], seed: int = 0):
    """Instantiate the protocol ``cfg["name"]`` with the remaining settings."""
    cfg = dict(cfg)
    name = cfg.pop("name")
    cfg.pop("metrics", None)
    if name not in REGISTRY:
        raise did_you_mean("protocol", name, PROTOCOLS)
    module, cls = REGISTRY[name].split(":")
    return getattr(import_module(module), cls)(seed=seed, **cfg)
