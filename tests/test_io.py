"""recallbench.io: the shared SQLite opener under processes that start together."""

from __future__ import annotations

import multiprocessing
import sqlite3

import numpy as np
import pytest

from recallbench.embed.cache import EmbeddingCache
from recallbench.errors import CacheError
from recallbench.io import connect_shared
from recallbench.llm.cache import Cache

WORKERS = 8
ROUNDS = 20  # fresh files per cache kind


def _open_together(folder: str, worker: int, barrier, failures) -> None:
    """Each round: wait for every worker, then all open the SAME new file and use it at once."""
    for round_ in range(ROUNDS):
        for kind in ("llm", "embed"):
            barrier.wait(60)
            path = f"{folder}/{kind}-{round_}.sqlite"
            try:
                if kind == "llm":
                    cache = Cache(path)
                    cache.put(f"w{worker}", {"text": str(worker)})
                    cache.get("w0")
                else:
                    cache = EmbeddingCache(path)
                    cache.put_many("m", {f"w{worker}": np.full(4, worker, dtype=np.float32)})
                    cache.get_many("m", ["w0"])
                cache.close()
            except Exception as exc:  # every failure is reported, not just the first
                failures.put(f"{kind} round {round_} worker {worker}: {exc!r}")


def test_eight_processes_open_one_new_file_at_once_without_failure(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    barrier, failures = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [
        ctx.Process(target=_open_together, args=(str(tmp_path), w, barrier, failures))
        for w in range(WORKERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    seen = []
    while not failures.empty():
        seen.append(failures.get())
    assert seen == [] and [p.exitcode for p in procs] == [0] * WORKERS
    for round_ in range(ROUNDS):  # every worker's write landed in every file
        assert len(Cache(tmp_path / f"llm-{round_}.sqlite")) == WORKERS
        assert len(EmbeddingCache(tmp_path / f"embed-{round_}.sqlite")) == WORKERS
        con = sqlite3.connect(tmp_path / f"llm-{round_}.sqlite")
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        con.close()


def test_a_file_that_is_not_a_database_names_itself_and_the_fix(tmp_path):
    bad = tmp_path / "llm.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CacheError, match=r"llm\.sqlite is not usable .*mv .*\.corrupt"):
        connect_shared(bad, "CREATE TABLE IF NOT EXISTS t (k TEXT);", "LLM cache")


def test_memory_database_needs_no_lock_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    conn = connect_shared(":memory:", "CREATE TABLE IF NOT EXISTS t (k TEXT);", "test cache")
    conn.execute("INSERT INTO t VALUES ('a')")
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", [None, "", "None"])
def test_no_file_is_refused_by_every_sqlite_cache_never_a_file_named_none(
    path, tmp_path, monkeypatch
):
    """``str(None)`` is ``"None"``: a reply cache given no path became a SQLite file ``None`` (+
    ``None.lock``) in the working folder, which ``make test`` left at the checkout's root."""
    from recallbench.llm.score_cache import ScoreCache
    from recallbench.metrics.cache import MetricCache
    from recallbench.store.sqlite import SqliteStore

    monkeypatch.chdir(tmp_path)
    for cache, what in (
        (Cache, "LLM cache"),
        (EmbeddingCache, "embedding cache"),
        (ScoreCache, "LM score cache"),
        (MetricCache, "metric result cache"),
        (SqliteStore, "store"),
    ):
        with pytest.raises(ValueError, match=f"^{what}: no file given"):
            cache(path)
    assert list(tmp_path.iterdir()) == []
    memory = Cache(":memory:")  # a private cache in memory: no file either
    memory.put("k", {"text": "t", "prompt_tokens": 1, "completion_tokens": 1})
    assert memory.get("k") is not None and list(tmp_path.iterdir()) == []
