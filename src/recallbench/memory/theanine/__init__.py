"""THEANINE (Ong et al., NAACL 2025): timeline memory graph, relation-aware linking, refinement.

``memory=theanine`` <-> ``conf/memory/theanine.yaml`` <-> :class:`Theanine`. Helpers:
``_graph`` (the memory graph and its timelines), ``_theanine`` (the method, prompts, parsers and
offline rules).
"""

from recallbench.memory.theanine._graph import MemoryGraph
from recallbench.memory.theanine._theanine import (
    DEFAULT_THRESHOLDS,
    LINKING_PROMPT,
    REFINEMENT_PROMPT,
    SIMILAR,
    Theanine,
    extractive_refinement,
    parse_refinement,
    parse_relation,
    relation_rule,
    render_timeline,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LINKING_PROMPT",
    "REFINEMENT_PROMPT",
    "SIMILAR",
    "MemoryGraph",
    "Theanine",
    "extractive_refinement",
    "parse_refinement",
    "parse_relation",
    "relation_rule",
    "render_timeline",
]
