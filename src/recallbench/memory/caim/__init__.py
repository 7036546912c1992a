"""CAIM (cognitive AI memory framework, 2025): controller, tag ontology, post-thinking.

``memory=caim`` <-> ``conf/memory/caim.yaml`` <-> :class:`CAIM`. Helpers: ``_tasks`` (the paper's
prompts), ``_ontology`` (the tag ontology), ``_dates`` (date resolution against the simulated
clock), ``_post`` (post-thinking: key events, inductive thoughts, review), ``_ltm`` (post-thinking's
writes to the long-term memory: store, expand, review, merge). The offline Key Events rule
(``key_sentences``, ``compress``) is public because Think-in-Memory (``memory/tim/``), CAIM's
baseline, builds its offline thoughts the same way.
"""

from recallbench.memory.caim._caim import CAIM
from recallbench.memory.caim._dates import resolve_dates
from recallbench.memory.caim._ontology import Ontology, OntologyError, validate
from recallbench.memory.caim._post import compress, key_sentences, parse_key_events, parse_review
from recallbench.memory.caim._tasks import (
    ONTOLOGY_EXPANSION_PROMPT,
    ONTOLOGY_EXPANSION_TASK,
    parse_expansion,
    parse_relevance,
    parse_tags,
)

__all__ = [
    "CAIM",
    "ONTOLOGY_EXPANSION_PROMPT",
    "ONTOLOGY_EXPANSION_TASK",
    "Ontology",
    "OntologyError",
    "compress",
    "key_sentences",
    "parse_expansion",
    "parse_key_events",
    "parse_relevance",
    "parse_review",
    "parse_tags",
    "resolve_dates",
    "validate",
]
