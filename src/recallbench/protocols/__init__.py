"""Evaluation protocols; ``build_protocol`` maps ``conf/protocol/*.yaml`` to a protocol object."""

from __future__ import annotations

from typing import Any

from recallbench.errors import did_you_mean

PROTOCOLS = ("response", "qa", "qa_gvd", "teafarm", "memory_ops", "timerag", "lamp1")


def build_protocol(cfg: dict[str, Any], seed: int = 0):
    """Instantiate the protocol ``cfg["name"]`` with the remaining settings."""
    cfg = dict(cfg)
    name = cfg.pop("name")
    cfg.pop("metrics", None)
    if name == "response":
        from recallbench.protocols.response import ResponseProtocol

        return ResponseProtocol(seed=seed, **cfg)
    if name == "qa":
        from recallbench.protocols.qa import QAProtocol

        return QAProtocol(seed=seed, **cfg)
    if name == "qa_gvd":
        from recallbench.protocols.qa_gvd import GVDQAProtocol

        return GVDQAProtocol(seed=seed, **cfg)
    if name == "teafarm":
        from recallbench.protocols.teafarm import TeaFarmProtocol

        return TeaFarmProtocol(seed=seed, **cfg)
    if name == "memory_ops":
        from recallbench.protocols.memory_ops import MemoryOpsProtocol

        return MemoryOpsProtocol(seed=seed, **cfg)
    if name == "timerag":
        from recallbench.protocols.timerag import TimeRAGProtocol

        return TimeRAGProtocol(seed=seed, **cfg)
    if name == "lamp1":
        from recallbench.protocols.lamp1 import LaMP1Protocol

        return LaMP1Protocol(seed=seed, **cfg)
    raise did_you_mean("protocol", name, PROTOCOLS)
