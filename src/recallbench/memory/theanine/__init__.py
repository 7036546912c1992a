"""THEANINE (Ong et al., NAACL 2025): timeline memory graph, relation-aware linking, refinement.

``memory=theanine`` <-> ``conf/memory/theanine.yaml`` <-> :class:`Theanine`. Helpers: ``_graph``
(the memory graph and its timelines), ``_linking`` (Fig. 22 prompt, parser, offline relation rule),
``_refinement`` (Fig. 23 prompt, parser, offline refinement), ``_recall`` (Phase II: the timeline
retriever, a collaborator of the method), ``_theanine`` (the method and its Phase I).
"""

from recallbench.memory.theanine._graph import MemoryGraph
from recallbench.memory.theanine._linking import (
    DEFAULT_THRESHOLDS,
    LINKING_PROMPT,
    SIMILAR,
    parse_relation,
    relation_rule,
)
from recallbench.memory.theanine._recall import TimelineRetriever, timeline_rng
from recallbench.memory.theanine._refinement import (
    REFINEMENT_PROMPT,
    extractive_refinement,
    parse_refinement,
    render_timeline,
    timeline_units,
)
from recallbench.memory.theanine._theanine import Theanine

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LINKING_PROMPT",
    "REFINEMENT_PROMPT",
    "SIMILAR",
    "MemoryGraph",
    "Theanine",
    "TimelineRetriever",
    "extractive_refinement",
    "parse_refinement",
    "parse_relation",
    "relation_rule",
    "render_timeline",
    "timeline_units",
    "timeline_rng",
]
