"""``memory=graphiti``: Zep's temporal knowledge graph (graphiti-core) in-process on embedded Kuzu.

Paper: Rasmussen et al., "Zep: A Temporal Knowledge Graph Architecture for Agent Memory",
arXiv 2501.13956 (2025). Package: ``graphiti-core`` 0.31.2 with ``kuzu`` 0.11.3 (run.json
records both, ``run.provenance.OPTIONAL_PACKAGES``).

What is Graphiti's (run unchanged, inside ``graphiti_core.Graphiti``): ``add_episode`` (entity
extraction, entity resolution against the graph, fact (edge) extraction with validity dates,
edge de-duplication and invalidation of contradicted facts, entity summaries) with its own
prompts; ``search_`` with its search recipes (BM25 + cosine + BFS, RRF or cross-encoder
reranking); the graph store, Kuzu in its embedded in-memory mode (``db: ":memory:"``, or a file
path), a fresh database per episode.

Zep's LoCoMo recipe (getzep/zep-papers ``zep_locomo_ingestion.py``, ``zep_locomo_search.py``),
the default here:
- ingestion: every message is its own ``add`` with ``created_at`` = the session's date (here:
  one Graphiti episode per turn, ``"Speaker: text"``, ``reference_time`` = the session's start;
  ``episode: session`` writes a whole session as one episode instead);
- search per question: nodes with RRF reranking, limit 20 (``node_limit``), and edges with the
  cross-encoder reranker, limit 20 (``edge_limit``), in parallel;
- context: Zep's TEMPLATE, facts with their date ranges (``valid_at - invalid_at|present``)
  and entities with their summaries (``ZEP_TEMPLATE`` below, verbatim).

What is ours: the LLM behind Graphiti (``_adapters.GraphitiLLM``: every call is the PromptTask
``graphiti.<prompt name>``, cached, metered, budgeted, answered offline by ``_twin``), the
embedder (``GraphitiEmbedder``), the reranker (``GraphitiReranker``), the stable item ids and
source turn ids of the records, and the answer (the protocol's reader prompt).

Deviations:
- Zep ran its cloud service (Zep's own engine, models and reranker); here the open-source
  graphiti-core, which Zep's service is built on, with the run's generator and embedder.
- The cross-encoder is the run's embedder's cosine similarity (``GraphitiReranker``): Graphiti's
  OpenAI reranker reads yes/no logprobs per passage, which our LLM layer does not return.
  ``edge_reranker: rrf`` switches the edge search to Graphiti's RRF instead.
- The edge search's breadth-first walk goes 1 hop from the found entities (``bfs_max_depth: 1``;
  graphiti's default is 3). On Kuzu a walk of depth 3 enumerates every path of up to 5
  relationships (each fact is an intermediate node there), and LoCoMo's graphs have two hubs
  (the speakers, in nearly every fact): after 5 sessions of conv-26 one question's search
  filled a 2 GB buffer pool ("Buffer manager exception: Unable to allocate memory"), and with
  Kuzu's default pool (80% of RAM) a whole conversation's questions grew the process to 17.9 GB
  until the kernel killed it. Depth 1 answers a question in ~0.3 s there.
- Kuzu's buffer pool is bounded (``buffer_pool_mb``, 2048; Kuzu's default: 80% of RAM).
- No full-text (BM25) channel by default (``fulltext: false``): Kuzu 0.11.3's full-text index
  breaks under Graphiti's writes on the full LoCoMo (conv-26: one search ran 35 minutes, one
  raised ``unordered_map::at``, the next attempt segfaulted the process), so the indexes are not
  built and every full-text search returns no hits without reaching Kuzu (``_kuzu``); the
  cosine and graph-walk channels answer (Zep's recipe adds BM25). ``fulltext: true`` restores
  it, with a per-query timeout (``query_timeout_s``, 60) under which a failing full-text
  search counts as no hits and any other query's error fails the episode.
- Graphiti's LLM client appends the response model's JSON schema to the prompt and reads the
  JSON reply (graphiti's generic path); with ``generator.structured`` off nothing constrains
  decoding.
- group_id: the default group (graphiti-core 0.31.2's ``KuzuDriver`` has no ``_database``, so a
  named group fails in ``add_episode``); each conversation has its own database anyway.
- Graphiti runs its prompts concurrently (``semaphore_gather``); our LLM layer answers each call
  synchronously, so one episode's calls are sent one at a time (same prompts, slower wall time).
- Telemetry is off (``GRAPHITI_TELEMETRY_ENABLED=false``, set before graphiti is imported).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from datetime import UTC, datetime
from typing import Any

from recallbench.embed import TextEmbedder
from recallbench.errors import UserError, did_you_mean
from recallbench.llm.protocol import LLMClient
from recallbench.memory.blocks.baseline import BaselineMethod
from recallbench.records import MemoryItem, Query, Recall, Session

os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # read at import: before the imports below
logging.getLogger("graphiti_core").setLevel(logging.WARNING)  # an INFO line per add_episode

try:
    from graphiti_core import Graphiti
    from graphiti_core.edges import EntityEdge
    from graphiti_core.errors import GroupsEdgesNotFoundError, GroupsNodesNotFoundError
    from graphiti_core.nodes import EntityNode, EpisodeType
    from graphiti_core.search.search_config_recipes import (
        EDGE_HYBRID_SEARCH_CROSS_ENCODER,
        EDGE_HYBRID_SEARCH_RRF,
        NODE_HYBRID_SEARCH_RRF,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the packages
    raise ImportError(
        "memory=graphiti needs graphiti-core and kuzu: "
        "pip install 'graphiti-core==0.31.2' 'kuzu==0.11.3' (or make install)"
    ) from exc

from recallbench.memory.graphiti import _adapters  # noqa: E402
from recallbench.memory.graphiti._kuzu import FULLTEXT_INDEXES, bounded_kuzu  # noqa: E402

# getzep/zep-papers kg_architecture_agent_memory/locomo_eval/zep_locomo_search.py TEMPLATE, verbatim.
ZEP_TEMPLATE = """
FACTS and ENTITIES represent relevant context to the current conversation.

# These are the most relevant facts and their valid date ranges. If the fact is about an event, the event takes place during this time.
# format: FACT (Date range: from - to)
<FACTS>
{facts}
</FACTS>

# These are the most relevant entities
# ENTITY_NAME: entity summary
<ENTITIES>
{entities}
</ENTITIES>
"""  # noqa: E501
EPISODES = ("message", "session")
EDGE_RERANKERS = {"cross_encoder": EDGE_HYBRID_SEARCH_CROSS_ENCODER, "rrf": EDGE_HYBRID_SEARCH_RRF}


class GraphitiFailed(UserError, RuntimeError):
    """Graphiti or Kuzu raised while writing or searching; the message names episode and session."""


def _when(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


class GraphitiMemory(BaselineMethod):
    """Graphiti on embedded Kuzu with Zep's LoCoMo recipe (one episode per message)."""

    name = "graphiti"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        episode: str = "message",
        node_limit: int = 20,
        edge_limit: int = 20,
        edge_reranker: str = "cross_encoder",
        bfs_max_depth: int = 1,
        db: str = ":memory:",
        buffer_pool_mb: int = 2048,
        query_timeout_s: float = 60.0,
        fulltext: bool = False,
        max_tokens: int = 8192,
        prompt_style: Any = "theanine",
    ) -> None:
        super().__init__(llm, embedder, prompt_style=prompt_style)
        if episode not in EPISODES:
            raise did_you_mean("graphiti episode", episode, EPISODES)
        if edge_reranker not in EDGE_RERANKERS:
            raise did_you_mean("graphiti edge_reranker", edge_reranker, EDGE_RERANKERS)
        self.episode = episode
        self.node_limit = int(node_limit)
        self.edge_limit = int(edge_limit)
        self.edge_config = EDGE_RERANKERS[edge_reranker]
        self.bfs_max_depth = int(bfs_max_depth)
        self.db = db
        self.buffer_pool_mb = int(buffer_pool_mb)
        self.query_timeout_s = float(query_timeout_s)
        self.fulltext = bool(fulltext)
        self._llm = _adapters.GraphitiLLM(llm, max_tokens=int(max_tokens))
        self._embedder = _adapters.GraphitiEmbedder(embedder)
        self._reranker = _adapters.GraphitiReranker(embedder)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._graph: Any = None
        self._driver: Any = None
        self._sources: dict[str, tuple[str, ...]] = {}  # Graphiti episode uuid -> turn ids
        self._ids: dict[str, str] = {}  # Graphiti edge/node uuid -> our stable id
        self._session: dict[str, int] = {}  # Graphiti episode uuid -> session index

    # -- the event loop and the graph ----------------------------------------------------

    def _run(self, coro: Any) -> Any:
        assert self._loop is not None, "graphiti: reset(episode) first"
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the graph and the loop (at the next reset and at the end) and free the Kuzu
        database now: graphiti-core's objects hold it in cycles (an oracle run grew to 8.7 GB)."""
        if self._loop is None:
            return
        if not self._loop.is_closed():
            if self._graph is not None:
                self._loop.run_until_complete(self._graph.close())
            self._loop.close()
        self._loop, self._graph, self._driver = None, None, None
        gc.collect()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown: nothing left to report to
            pass

    def _clear(self) -> None:
        self.close()
        self._loop = asyncio.new_event_loop()
        try:
            self._driver = bounded_kuzu(
                self.db, self.buffer_pool_mb, self.query_timeout_s, self.fulltext
            )
        except RuntimeError as exc:  # Kuzu could not open the graph: one line, which episode
            why = f"Kuzu could not open its graph ({self.db}): {exc}".splitlines()[0]
            raise GraphitiFailed(f"memory=graphiti: episode {self.episode_id}: {why}") from exc
        self._graph = Graphiti(
            graph_driver=self._driver,
            llm_client=self._llm,
            embedder=self._embedder,
            cross_encoder=self._reranker,
        )
        # KuzuDriver.build_indices_and_constraints is a no-op in graphiti-core 0.31.2: without
        # the full-text indexes every BM25 search fails ("doesn't have an index"); make them.
        for query in FULLTEXT_INDEXES if self.fulltext else ():
            self._run(self._driver.execute_query(query))
        self._sources, self._ids, self._session = {}, {}, {}

    # -- writing --------------------------------------------------------------------------

    def _write(self, session: Session) -> None:
        """Add the session's turns as Graphiti episodes dated by the session's start."""
        when = session.start or datetime(1970, 1, 1)
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        parts: list[tuple[tuple[str, ...], str]]
        if self.episode == "message":
            parts = [((t.turn_id,), f"{t.speaker}: {t.text}") for t in session.turns]
        else:
            body = "\n".join(f"{t.speaker}: {t.text}" for t in session.turns)
            parts = [(tuple(t.turn_id for t in session.turns), body)]
        for n, (turn_ids, body) in enumerate(parts):
            name = f"{self.episode_id}/session{session.index}/{n}"
            try:
                added = self._run(
                    self._graph.add_episode(
                        name=name,
                        episode_body=body,
                        source_description=f"conversation {self.episode_id}",
                        reference_time=when,
                        source=EpisodeType.message,
                    )
                )
            except Exception as exc:  # a Graphiti or Kuzu failure: one line, where it happened
                raise GraphitiFailed(
                    f"memory=graphiti: episode {self.episode_id} session {session.index} "
                    f"(turn {turn_ids[0]}): {type(exc).__name__}: {exc}".splitlines()[0]
                ) from exc
            self._sources[added.episode.uuid] = turn_ids
            self._session[added.episode.uuid] = session.index
            for thing, kind in [(e, "fact") for e in added.edges] + [
                (v, "entity") for v in added.nodes
            ]:
                if thing.uuid not in self._ids:
                    self._ids[thing.uuid] = f"{self.episode_id}/graphiti/{kind}/{len(self._ids)}"

    # -- reading --------------------------------------------------------------------------

    def _edge_item(self, edge: Any, score: float | None = None) -> MemoryItem:
        sources = tuple(t for uuid in edge.episodes for t in self._sources.get(uuid, ()))
        since = edge.valid_at if edge.valid_at else "date unknown"
        until = edge.invalid_at if edge.invalid_at else "present"
        attrs: dict[str, Any] = {
            "relation": edge.name,
            "valid_at": _when(edge.valid_at) or None,
            "invalid_at": _when(edge.invalid_at) or None,
            "line": f"  - {edge.fact} ({since} - {until})",
        }
        if score is not None:
            attrs["score"] = score
        return MemoryItem(
            item_id=self._ids.get(edge.uuid, f"{self.episode_id}/graphiti/{edge.uuid}"),
            text=edge.fact,
            kind="fact",
            created=edge.valid_at,
            source_ids=sources,
            attrs=attrs,
        )

    def _node_item(self, node: Any, score: float | None = None) -> MemoryItem:
        attrs: dict[str, Any] = {"name": node.name, "line": f"  - {node.name}: {node.summary}"}
        if score is not None:
            attrs["score"] = score
        return MemoryItem(
            item_id=self._ids.get(node.uuid, f"{self.episode_id}/graphiti/{node.uuid}"),
            text=f"{node.name}: {node.summary}",
            kind="profile",
            created=None,
            source_ids=(),
            attrs=attrs,
        )

    def recall(self, query: Query) -> Recall:
        """Zep's LoCoMo search: edges (cross-encoder, 20) and nodes (RRF, 20) for the question."""
        self.check_episode(query)
        text = query.question or "\n".join(t.text for t in query.history[-1:]) or " "
        edges_only = self.edge_config.edge_config
        assert edges_only is not None  # both recipes search edges
        bfs = edges_only.model_copy(update={"bfs_max_depth": self.bfs_max_depth})
        edge_cfg = self.edge_config.model_copy(
            update={"limit": self.edge_limit, "edge_config": bfs}
        )
        node_cfg = NODE_HYBRID_SEARCH_RRF.model_copy(update={"limit": self.node_limit})
        try:
            edges = self._run(self._graph.search_(text, config=edge_cfg))
            nodes = self._run(self._graph.search_(text, config=node_cfg))
        except Exception as exc:
            raise GraphitiFailed(
                f"memory=graphiti: episode {self.episode_id} search before session "
                f"{query.session_index}: {type(exc).__name__}: {exc}".splitlines()[0]
            ) from exc
        scores = list(edges.edge_reranker_scores) + [None] * len(edges.edges)
        facts = [self._edge_item(e, scores[i]) for i, e in enumerate(edges.edges)]
        node_scores = list(nodes.node_reranker_scores) + [None] * len(nodes.nodes)
        entities = [self._node_item(v, node_scores[i]) for i, v in enumerate(nodes.nodes)]
        rendered = ZEP_TEMPLATE.format(
            facts="\n".join(str(i.attrs["line"]) for i in facts),
            entities="\n".join(str(i.attrs["line"]) for i in entities),
        )
        return Recall(tuple(facts + entities), rendered, {"method": "graphiti"})

    def snapshot(self) -> list[MemoryItem]:
        """Every fact (edge) and entity (node) of the graph, in order of creation."""
        self.check_episode(None)
        groups = [""]  # the default group (see Deviations)
        edges, nodes = [], []
        with contextlib.suppress(GroupsEdgesNotFoundError):  # an empty graph raises
            edges = self._run(EntityEdge.get_by_group_ids(self._driver, groups))
        with contextlib.suppress(GroupsNodesNotFoundError):
            nodes = self._run(EntityNode.get_by_group_ids(self._driver, groups))
        items = [self._edge_item(e) for e in edges] + [self._node_item(v) for v in nodes]
        order = {v: k for k, v in enumerate(self._ids.values())}
        return sorted(items, key=lambda i: (order.get(i.item_id, len(order)), i.item_id))
