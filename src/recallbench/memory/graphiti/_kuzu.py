"""The graph store of ``memory=graphiti``: graphiti-core's ``KuzuDriver`` on a bounded Kuzu database.

Two gaps of graphiti-core 0.31.2's Kuzu driver are closed here: its database takes Kuzu's default
buffer pool (``bounded_kuzu``), and its ``build_indices_and_constraints`` is a no-op, so the
full-text indexes every BM25 search reads are never made (``FULLTEXT_INDEXES``: the method runs
them once per fresh graph; without them a search fails with "doesn't have an index").

A third, found on the full LoCoMo: Kuzu 0.11.3's full-text search fails on some of Graphiti's
edge searches while writing conv-26 (a whole message as the query): once it ran for 35 minutes
without returning, once, under a timeout, it raised ``unordered_map::at`` (an internal error; a
fresh index with the same query answers in milliseconds, so it depends on the graph's state).
So by default (``fulltext=False``) no full-text index is built and no full-text search reaches
Kuzu (``_without_fulltext``: no hits). With it, every query gets Kuzu's timeout
(``bounded_kuzu``'s ``timeout_s``); a full-text search that reaches it or raises counts as no hits (the meter's ``graphiti.fulltext_failures``, a warning
naming the query and the error): the search's other channels (cosine, graph walk) still answer.
Any other query's error fails the episode as before.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # read at import: before the imports below

try:
    import kuzu
    from graphiti_core.driver.driver import GraphProvider
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.graph_queries import get_fulltext_indices
except ImportError as exc:  # pragma: no cover - exercised only without the packages
    raise ImportError(
        "memory=graphiti needs graphiti-core and kuzu: "
        "pip install 'graphiti-core==0.31.2' 'kuzu==0.11.3' (or make install)"
    ) from exc

from recallbench import meter  # noqa: E402

FULLTEXT_INDEXES: list[str] = list(get_fulltext_indices(GraphProvider.KUZU))
# Virtual address space each Kuzu database reserves (``max_db_size``). Kuzu's default, 8 TB,
# lets about 13 databases exist at once in a process's 128 TB: graphiti-core leaves its
# driver to the garbage collector (``KuzuDriver.close`` does nothing), so graphs of finished
# episodes linger until a collection, and the LongMemEval oracle run (a graph per question)
# failed after 69 questions with "Mmap for size 8796093022208 failed". 64 GB per database is
# far above any graph here (the buffer pool holds an in-memory one: ``buffer_pool_mb``).
MAX_DB_BYTES = 1 << 36
FULLTEXT_CALL = "QUERY_FTS_INDEX"
log = logging.getLogger(__name__)


def bounded_kuzu(
    db: str, buffer_pool_mb: int, timeout_s: float = 0.0, fulltext: bool = True
) -> Any:
    """A ``KuzuDriver`` on a Kuzu database whose buffer pool is ``buffer_pool_mb`` MB.

    ``KuzuDriver`` opens ``kuzu.Database(db)`` with Kuzu's default pool, ~80% of the machine's
    memory: with it (and graphiti's depth-3 graph walk, ``_graphiti`` Deviations) the questions
    of one LoCoMo conversation grew the process to 17.9 GB until the kernel killed it; bounded,
    a query that needs more fails with Kuzu's "Buffer manager exception" (one line). The driver is built on a throwaway in-memory database (its schema is
    tiny, closed at once) and then given the bounded one, with its schema and connection; each
    database reserves ``MAX_DB_BYTES`` of address space, not Kuzu's 8 TB.
    """
    with warnings.catch_warnings():  # Kuzu's driver is deprecated upstream (see Deviations)
        warnings.simplefilter("ignore", DeprecationWarning)
        driver = KuzuDriver(db=":memory:")
    throwaway, throwaway_client = driver.db, driver.client
    driver.db = kuzu.Database(
        db, buffer_pool_size=int(buffer_pool_mb) * 2**20, max_db_size=MAX_DB_BYTES
    )
    driver.setup_schema()
    driver.client = kuzu.AsyncConnection(driver.db, max_concurrent_queries=1)
    throwaway_client.close()  # nothing ran on it: its thread pool and database go now
    throwaway.close()
    if timeout_s > 0:
        driver.client.set_query_timeout(int(timeout_s * 1000))
    if not fulltext:  # no full-text search reaches Kuzu: each returns no hits
        driver.execute_query = _without_fulltext(driver.execute_query)  # type: ignore[method-assign]
    elif timeout_s > 0:
        driver.execute_query = _fulltext_misses_on_timeout(  # type: ignore[method-assign]
            driver.execute_query, timeout_s
        )
    return driver


def _without_fulltext(execute: Any) -> Any:
    """``execute`` (a driver's ``execute_query``) where a full-text search returns no rows
    without running (counted: the meter's ``graphiti.fulltext_skipped``)."""

    async def execute_query(cypher_query_: str, **kwargs: Any) -> Any:
        if FULLTEXT_CALL in cypher_query_:
            meter.count("graphiti.fulltext_skipped", 1)
            return [], None, None
        return await execute(cypher_query_, **kwargs)

    return execute_query


def _fulltext_misses_on_timeout(execute: Any, timeout_s: float) -> Any:
    """``execute`` (a driver's ``execute_query``), where a full-text search that Kuzu interrupted
    at its timeout, or that failed inside Kuzu, returns no rows; any other query's error is
    raised as it was."""

    async def execute_query(cypher_query_: str, **kwargs: Any) -> Any:
        try:
            return await execute(cypher_query_, **kwargs)
        except RuntimeError as exc:
            if FULLTEXT_CALL not in cypher_query_:
                raise
            meter.count("graphiti.fulltext_failures", 1)
            error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "Interrupted" in error:
                error = f"ran past {timeout_s}s"
            log.warning(
                "graphiti: a full-text search counts as no hits (%s; query %r)",
                error,
                str(kwargs.get("query", ""))[:80],
            )
            return [], None, None

    return execute_query
