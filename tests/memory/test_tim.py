"""TiM (Think-in-Memory, Liu et al. 2023) behaviour tests on the extractive backend."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from recallbench.memory.tim import LSH, TiM, parse_organize
from recallbench.records import Episode, Query, Session, Turn


def episode(lines_per_session: list[list[tuple[str, str]]], eid: str = "t") -> Episode:
    sessions = tuple(
        Session(
            f"{eid}/s{i}",
            i + 1,
            datetime(2023, 5, i + 1, 9),
            tuple(Turn(f"{eid}/s{i}t{j}", s, x) for j, (s, x) in enumerate(lines)),
        )
        for i, lines in enumerate(lines_per_session)
    )
    return Episode(eid, "gvd", ("Mara", "AI"), sessions)


def run(method: TiM, ep: Episode) -> None:
    method.reset(ep)
    for session in ep.sessions:
        method.observe(session)


def test_lsh_is_deterministic_and_local():
    lsh = LSH(dim=16, n_buckets=8, seed=0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(16)
    assert lsh.bucket(x) == LSH(16, 8, 0).bucket(x)
    near = [lsh.bucket(x + 0.01 * rng.standard_normal(16)) for _ in range(20)]
    assert near.count(lsh.bucket(x)) >= 18
    assert lsh.bucket(-x) != lsh.bucket(x)  # argmax([xR; -xR]) sends -x to the mirror bucket
    with pytest.raises(ValueError, match="even"):
        LSH(16, 7, 0)


def test_merge_duplicate_and_forget_contradiction(llm, embedder):
    ep = episode(
        [
            [("Mara", "I like green tea in the morning."), ("AI", "Nice.")],
            [("Mara", "I like green tea in the morning."), ("AI", "Still?")],
            [("Mara", "I don't like green tea in the morning."), ("AI", "Oh.")],
        ]
    )
    method = TiM(llm, embedder)
    method.reset(ep)
    method.observe(ep.sessions[0])
    method.observe(ep.sessions[1])
    assert [it.text for it in method.snapshot()] == ["Mara likes green tea in the morning"]
    assert method.snapshot()[0].source_ids == ("t/s0t0", "t/s0t1", "t/s1t0", "t/s1t1")
    assert method.ops["merge"] == 1
    method.observe(ep.sessions[2])
    texts = [it.text for it in method.snapshot()]
    assert texts == ["Mara doesn't like green tea in the morning"], texts
    assert method.ops["forget"] == 1


def test_retrieval_stays_in_the_query_bucket(llm, embedder):
    lines = [
        ("Mara", "I repair old clocks in my workshop."),
        ("AI", "Fascinating."),
        ("Mara", "I adopted a tortoise named Biscuit."),
        ("AI", "Cute."),
        ("Mara", "I bake sourdough bread every Sunday."),
        ("AI", "Yum."),
        ("Mara", "I play chess online with my brother."),
        ("AI", "Fun."),
    ]
    ep = episode([lines])
    strict = TiM(llm, embedder, n_buckets=4, fallback_probe=False, top_k=10)
    run(strict, ep)
    query = Query("t", 2, (), "AI", datetime(2023, 5, 3), "What is the name of my tortoise?")
    recall = strict.recall(query)
    buckets = {it.attrs["bucket"] for it in recall.items}
    assert buckets <= {recall.info["query_bucket"]}
    others = [it for it in strict.snapshot() if it.attrs["bucket"] != recall.info["query_bucket"]]
    assert others and not {it.item_id for it in others} & {it.item_id for it in recall.items}
    before = [it.to_dict() for it in strict.snapshot()]
    strict.recall(query)
    assert [it.to_dict() for it in strict.snapshot()] == before  # probes change nothing


def test_parse_organize():
    assert parse_organize("MERGE 2: Mara likes tea") == ("merge", 1, "Mara likes tea")
    assert parse_organize("forget 1") == ("forget", 0, "")
    assert parse_organize("INSERT") == ("insert", -1, "")
    with pytest.raises(ValueError):
        parse_organize("maybe")
