"""MemoryBank as LUFY's baseline: e^(-dt/S), S = 1 + recalls, dt reset on recall, top 10% kept."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from lufy_scenarios import BOT, SESSION_1, SESSION_2, make_episode, pair_id, replay

from recallbench.memory.memorybank import MemoryBank
from recallbench.records import Query
from recallbench.testing.configs import load_group_config


def _attrs(method, item_id):
    return next(i.attrs for i in method.snapshot() if i.item_id == item_id)


def test_strength_counts_recalls_and_resets_dt(llm, embedder):
    episode = make_episode([SESSION_1, SESSION_2])
    method = MemoryBank(llm, embedder, threshold=0.5, forgetting=False)
    replay(method, episode, 1)
    mochi = pair_id(episode, 1, SESSION_1[1][1])
    first = _attrs(method, mochi)
    # recalled once in session 1 (its own topic came back): S = 1 + 1, importance one day later
    assert first["metrics"]["R1"] == 1 and first["strength"] == 2.0
    assert first["importance"] == pytest.approx(math.exp(-1 / 2), abs=1e-6)
    never = _attrs(method, pair_id(episode, 1, SESSION_1[3][1]))
    assert never["strength"] == 1.0 and never["importance"] == pytest.approx(math.exp(-1), abs=1e-6)

    session = episode.sessions[1]
    later = session.start + timedelta(days=3)
    query = Query(episode.episode_id, 2, session.turns[:1] + (session.turns[13],), BOT, later)
    before = {i.item_id: i.attrs for i in method.snapshot()}
    hit = method.recall(query).info["r1"]
    assert hit is not None and before[hit]["last_access"] != later.isoformat()
    now = _attrs(method, hit)
    assert now["strength"] == before[hit]["strength"] + 1  # S += 1 on recall
    assert now["last_access"] == later.isoformat()  # dt reset to 0


def test_paper_vs_upstream_formula(llm, embedder):
    episode = make_episode([SESSION_1])
    paper = MemoryBank(llm, embedder, threshold=0.5)
    upstream = MemoryBank(llm, embedder, threshold=0.5, upstream_formula=True)
    for method in (paper, upstream):
        replay(method, episode)
    mochi = pair_id(episode, 1, SESSION_1[1][1])
    # paper: e^(-1/S); upstream code: exp(-t / 5*S) = exp(-(t/5)*S), dt = 1 day, S = 2
    assert _attrs(paper, mochi)["importance"] == pytest.approx(math.exp(-1 / 2), abs=1e-6)
    assert _attrs(upstream, mochi)["importance"] == pytest.approx(math.exp(-2 / 5), abs=1e-6)
    # so the paper keeps the recalled memory, the upstream formula ranks it below unrecalled ones
    assert _attrs(paper, mochi)["retained"] is True
    assert _attrs(upstream, mochi)["retained"] is False


def test_table3_retention_rounding(llm, embedder):
    # 13 exchanges + 1 summary = 14 memories -> 1 kept (7.1%, the paper's own example)
    episode = make_episode([SESSION_2[:13]])
    method = MemoryBank(llm, embedder)
    replay(method, episode)
    assert method.retention() == {"created": 14, "retained": 1}
    # 14 + 1 = 15 -> 2 kept (nearest whole number, halves up)
    method = MemoryBank(llm, embedder)
    replay(method, make_episode([SESSION_2]))
    assert method.retention() == {"created": 15, "retained": 2}


def test_configs(llm, embedder):
    from pathlib import Path

    from recallbench.cli.build import build_memory_factory

    conf = Path(__file__).resolve().parents[2] / "conf" / "memory"
    for name, flag in (("memorybank", False), ("memorybank_upstream", True)):
        cfg = load_group_config(conf / f"{name}.yaml")
        method = build_memory_factory(cfg, llm, embedder)()
        assert isinstance(method, MemoryBank) and method.upstream_formula is flag
        assert method.threshold == 0.8 and method.top_k == 2 and method.retain_ratio == 0.1
