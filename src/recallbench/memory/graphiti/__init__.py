"""Graphiti (graphiti-core on embedded Kuzu) as a memory method: ``memory=graphiti`` (see
``_graphiti`` for what is Graphiti's and what is ours)."""

from recallbench.memory.graphiti._adapters import GraphitiEmbedder, GraphitiLLM, GraphitiReranker
from recallbench.memory.graphiti._graphiti import ZEP_TEMPLATE, GraphitiFailed, GraphitiMemory

__all__ = [
    "GraphitiEmbedder",
    "GraphitiFailed",
    "GraphitiLLM",
    "GraphitiMemory",
    "GraphitiReranker",
    "ZEP_TEMPLATE",
]
