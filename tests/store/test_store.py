"""The store (issue 34): values, the atomic ledger and rate buckets on SQLite and on a real Redis
server; a lost server stops with ``StoreLost`` and loses no reply; ``recallbench cache
import|export``; the folders refused before work."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from recallbench.cli.cache import export_folder, import_folder
from recallbench.cli.sweep import check_places
from recallbench.embed.cache import EmbeddingCache
from recallbench.errors import ConfigError
from recallbench.llm.budget import Budget, BudgetExceeded, Meter, SweepLedger
from recallbench.llm.cache import Cache
from recallbench.llm.score_cache import ScoreCache
from recallbench.metrics import MetricResult
from recallbench.metrics.cache import MetricCache
from recallbench.store import SqliteStore, StoreLost, Totals, network_fs, open_store
from recallbench.store.redis_store import RedisStore


@pytest.fixture(params=["sqlite", "redis"])
def spec(request, tmp_path) -> str:
    """A store spec: the SQLite file of tmp_path, or a real redis-server's URL."""
    if request.param == "sqlite":
        return "sqlite"
    return str(request.getfixturevalue("redis_server").url)


def test_values_round_trip_by_namespace(spec, tmp_path):
    store = open_store(spec, tmp_path)
    value = {"text": "ü", "n": [1, 2.5, None], "x": 0.1 + 0.2}
    store.put_many("a", {"k1": value, "k2": [1]})
    store.put_many("b", {"k1": "other"})
    assert store.get_many("a", ["k1", "k2", "absent"]) == {"k1": value, "k2": [1]}
    assert store.get_many("b", ["k1"]) == {"k1": "other"}
    assert store.count("a") == 2 and sorted(dict(store.scan("a"))) == ["k1", "k2"]
    assert {"a", "b"} <= set(store.namespaces())
    with pytest.raises(ValueError):  # NaN is refused, never stored
        store.put_many("a", {"bad": float("nan")})


def test_the_ledger_never_admits_past_the_bound_across_processes(spec, tmp_path):
    # 4 processes race for 50 reservations each under max_calls=70 and max_usd: exactly 70 pass
    code = textwrap.dedent(f"""
        from recallbench.store import open_store
        store = open_store({spec!r}, {str(tmp_path)!r})
        ok = sum(store.reserve("sweep:t/s", 0.01, 70, 10.0)[0] for _ in range(50))
        print(ok)
    """)
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    admitted = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert sum(admitted) == 70 and len([a for a in admitted if a]) >= 2
    store = open_store(spec, tmp_path)
    totals = store.totals("sweep:t/s")
    assert totals.sent == 70 and totals.reserved == pytest.approx(0.70)
    store.settle("sweep:t/s", 0.01, 0.004)
    totals = store.totals("sweep:t/s")
    assert totals.spent == pytest.approx(0.004) and totals.reserved == pytest.approx(0.69)


def test_reservations_are_kept_by_holder_and_a_gone_holders_can_be_released(spec, tmp_path):
    store = open_store(spec, tmp_path)
    store.reserve("sweep:t/h", 0.5, None, 2.0, "n1:10")
    store.reserve("sweep:t/h", 0.25, None, 2.0, "n1:10")
    store.reserve("sweep:t/h", 1.0, None, 2.0, "n2:20")
    assert not store.reserve("sweep:t/h", 0.5, None, 2.0, "n3:30")[0]  # 1.75 held of 2.0
    store.settle("sweep:t/h", 0.5, 0.125, "n1:10", tokens=300)
    assert store.holders("sweep:t/h") == {"n1:10": pytest.approx(0.25), "n2:20": 1.0}
    assert store.release("sweep:t/h", "n2:20") == pytest.approx(1.0)  # n2 was killed
    assert store.release("sweep:t/h", "n2:20") == 0.0  # once
    totals = store.totals("sweep:t/h")
    assert totals.sent == 3 and totals.tokens == 300 and totals.spent == pytest.approx(0.125)
    assert totals.reserved == pytest.approx(0.25)
    assert store.reserve("sweep:t/h", 1.5, None, 2.0, "n3:30")[0]  # the released dollars fit
    store.settle("sweep:t/h", 0.25, 0.25, "n1:10")
    assert set(store.holders("sweep:t/h")) == {"n3:30"}  # a settled holder is gone from it


def test_a_store_file_from_before_tokens_gets_the_column(tmp_path):
    import sqlite3

    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        conn.execute(
            "CREATE TABLE ledger (name TEXT PRIMARY KEY, sent INTEGER NOT NULL, spent REAL "
            "NOT NULL, reserved REAL NOT NULL)"
        )
        conn.execute("INSERT INTO ledger VALUES ('sweep:t/s', 4, 0.5, 0.0)")
    store = SqliteStore(tmp_path / "store.sqlite")
    store.settle("sweep:t/s", 0.0, 0.25, tokens=40)
    assert store.totals("sweep:t/s") == Totals(4, 0.75, 0.0, 40)


def test_a_sweep_ledger_stops_every_meter_sharing_it(spec, tmp_path):
    store = open_store(spec, tmp_path)
    ledger = SweepLedger(store, "t/s", Budget(max_usd=0.05))
    a, b = Meter(sweep=ledger), Meter(sweep=SweepLedger(store, "t/s", Budget(max_usd=0.05)))
    held = a.admit(lambda: 0.02)
    b.settle(b.admit(lambda: 0.02), 0.01)  # b spent less than it reserved
    with pytest.raises(BudgetExceeded, match=r"sweep.max_usd=0.05 reached .* the sweep t/s"):
        b.admit(lambda: 0.03)  # 0.01 spent + 0.02 in flight + 0.03 > 0.05
    a.settle(held, 0.02)
    with pytest.raises(BudgetExceeded):  # a stopped meter refuses everything after
        b.admit(lambda: 0.001)
    c = Meter(sweep=SweepLedger(store, "t/s", Budget(max_usd=0.05)))
    c.admit(lambda: 0.02)  # 0.03 spent + 0.02: fits exactly
    raised = Meter(sweep=SweepLedger(store, "t/s", Budget(max_calls=3)))
    with pytest.raises(BudgetExceeded, match=r"sweep.max_calls=3 reached \(3 requests"):
        raised.admit(lambda: 0.0)


def test_a_bucket_assigns_each_caller_its_turn(spec, tmp_path):
    store = open_store(spec, tmp_path)
    # 120/min = 2/s, capacity 2: two at once, then one every 0.5 s in the order asked
    waits = [store.take("ep|m|rpm", 1, 120, 2) for _ in range(6)]
    assert waits[:2] == [0.0, 0.0]
    assert waits[2:] == pytest.approx([0.5, 1.0, 1.5, 2.0], abs=0.05)


def test_a_stopped_server_raises_store_lost_and_keeps_the_reply(redis_server, tmp_path):
    spill = tmp_path / "cache" / "redis-spill.sqlite"
    store = RedisStore(redis_server.url, spill=spill)
    cache = Cache("unused", store=store)
    cache.put("k1", {"text": "paid before"})
    redis_server.stop()
    with pytest.raises(StoreLost, match=r"store redis://127.0.0.1:\d+/0 unreachable"):
        cache.get("k1")
    with pytest.raises(StoreLost):
        cache.put("k2", {"text": "paid while the server was down"})
    assert SqliteStore(spill).get_many("llm", ["k2"]) == {
        "k2": {"text": "paid while the server was down"}
    }
    redis_server.start()  # same folder: the AOF brings k1 back; the next connection sends k2
    again = Cache("unused", store=RedisStore(redis_server.url, spill=spill))
    assert again.get("k1") == {"text": "paid before"}
    assert again.get("k2") == {"text": "paid while the server was down"}
    assert not spill.exists()


def test_cache_import_then_export_moves_every_entry_exactly(redis_server, tmp_path):
    local, back = tmp_path / "local", tmp_path / "back"
    replies = Cache(local / "llm.sqlite")
    replies.put("r1", {"text": "hi", "prompt_tokens": 3, "completion_tokens": 1})
    Cache(local / "judge.sqlite").put("r2", {"text": "judged"})  # a judge's own cache_path
    vec = np.array([0.1, -2.5, 3e-8], dtype=np.float32)
    EmbeddingCache(local / "embeddings.sqlite").put_many("minilm", {"a text": vec})
    scores = ScoreCache(local / "lm_scores.sqlite")
    scores.register("m1", {"name": "smollm2"})
    scores.put_many("m1", {("ctx", "text"): (12.345678901234567, 7)})
    SqliteStore(local / "store.sqlite").put_many("metric:mauve", {"k": {"value": 0.5}})
    result = MetricResult(0.25, [0.0, 0.5], {"n": 2}, np.array([[1, 2], [3, 4]]))
    MetricCache(local / "metric_results.sqlite").put("m", "f1", {"name": "f1"}, result)
    server = open_store(redis_server.url, tmp_path)
    counts = import_folder(local, server)
    assert counts == {
        "llm": 2,
        "emb:minilm": 1,
        "lm:m1": 1,
        "lm-models": 1,
        "metric:mauve": 1,
        "metric-results": 1,
    }
    assert export_folder(server, back) == counts
    assert dict(Cache(back / "llm.sqlite").items()) == {
        **dict(Cache(local / "llm.sqlite").items()),
        **dict(Cache(local / "judge.sqlite").items()),
    }
    got = EmbeddingCache(back / "embeddings.sqlite").get_many("minilm", ["a text"])["a text"]
    assert got.tobytes() == vec.tobytes()  # bit for bit
    assert ScoreCache(back / "lm_scores.sqlite").get_many("m1", [("ctx", "text")]) == {
        ("ctx", "text"): (12.345678901234567, 7)
    }
    assert SqliteStore(back / "store.sqlite").get_many("metric:mauve", ["k"]) == {
        "k": {"value": 0.5}
    }
    back_result = MetricCache(back / "metric_results.sqlite").get("m")
    assert back_result is not None and back_result.items == [0.0, 0.5]
    assert np.array_equal(back_result.stats, result.stats)
    # on the server the caches answer directly (what every job of a sweep reads)
    on_server = EmbeddingCache("unused", store=server)
    assert on_server.get_many("minilm", ["a text"])["a text"].tobytes() == vec.tobytes()


MOUNTS = """\
sysfs /sys sysfs rw 0 0
/dev/sda1 / ext4 rw,relatime 0 0
nas:/export /mnt/shared nfs4 rw,vers=4.2 0 0
/dev/sdb1 /mnt/shared/local ext4 rw 0 0
lustre@o2ib:/scratch /scratch lustre rw 0 0
host:/home /home/my\\040files fuse.sshfs rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/mnt/shared/cache", "nfs4"),
        ("/mnt/shared", "nfs4"),
        ("/mnt/shared/local/cache", None),  # the longest mount point wins
        ("/mnt/sharedother", None),  # a prefix of the name is not a parent folder
        ("/scratch/u/results/cache", "lustre"),
        ("/home/my files/c", "fuse.sshfs"),
        ("/tmp/cache", None),
    ],
)
def test_network_file_systems_are_found_in_the_mount_table(path, kind):
    assert network_fs(path, MOUNTS) == kind


def _paths(results: Path, cache: Path, store: str = "sqlite") -> object:
    return OmegaConf.create(
        {"store": store, "paths": {"results_dir": str(results), "cache_dir": str(cache)}}
    )


def test_places_that_cannot_work_are_refused_in_one_line(tmp_path):
    ok = tmp_path / "results"
    check_places(_paths(ok, ok / "cache"), MOUNTS)  # local: fine
    with pytest.raises(ConfigError) as err:
        check_places(_paths(ok, ok / "cache"), MOUNTS.replace("/mnt/shared ", f"{tmp_path} "))
    message = str(err.value)
    assert "network file system (nfs4)" in message and "\n" not in message
    assert "store=redis://" in message and "node-local" in message  # the two fixes
    # the server store does not care where the cache folder is
    check_places(
        _paths(ok, ok / "cache", "redis://h:6379/0"), MOUNTS.replace("/mnt/shared ", f"{tmp_path} ")
    )
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"paths.results_dir=.*a-file/results: cannot write"):
        check_places(_paths(blocker / "results", ok / "cache"), MOUNTS)
    bad = _paths(ok, ok / "cache")
    bad.sweep = {"max_calls": "lots"}
    with pytest.raises(ConfigError, match=r"sweep.max_calls must be a number >= 0, got 'lots'"):
        check_places(bad, MOUNTS)
    with pytest.raises(ConfigError, match=r"store='memcached://x': expected sqlite"):
        check_places(_paths(ok, ok / "cache", "memcached://x"), MOUNTS)


def test_cache_import_takes_a_nodes_spill_file(redis_server, tmp_path, capsys):
    from recallbench.cli.cache import cache_main

    node = tmp_path / "node7-cache"  # a node that never came back: its unsent writes
    spill = SqliteStore(node / "redis-spill.sqlite")
    spill.put_many("llm", {"k1": {"text": "a"}, "k2": {"text": "b"}})
    spill.put_many("emb:m", {"e1": [0.5]})
    spill.close()
    cache_main(["import", str(node / "redis-spill.sqlite"), "--store", redis_server.url])
    assert "3 entries" in capsys.readouterr().out
    server = RedisStore(redis_server.url)
    assert server.get_many("llm", ["k1", "k2"]) == {"k1": {"text": "a"}, "k2": {"text": "b"}}
    assert server.get_many("emb:m", ["e1"]) == {"e1": [0.5]}
    assert (node / "redis-spill.sqlite").is_file()  # kept: its node's next job sends it again
    (tmp_path / "notes.sqlite").write_bytes(b"not a database at all, just text" * 4)
    with pytest.raises(SystemExit) as stop:
        cache_main(["import", str(tmp_path / "notes.sqlite"), "--store", redis_server.url])
    assert stop.value.code == 2
    assert "notes.sqlite: not a SQLite cache file" in capsys.readouterr().err
