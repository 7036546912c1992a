"""``bench/embed_floor.py``'s arithmetic: a folder's stage from its runs' usage, both floors and
their ratios, "not recorded" for runs without ``miss_tokens``, the length buckets."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "bench" / "embed_floor.py"
_spec = importlib.util.spec_from_file_location("embed_floor", SCRIPT)
assert _spec is not None and _spec.loader is not None
embed_floor = importlib.util.module_from_spec(_spec)
sys.modules["embed_floor"] = embed_floor  # dataclasses look their module up by name
_spec.loader.exec_module(embed_floor)


def _usage(folder: Path, name: str, embeddings: dict[str, int], seconds: dict[str, float]) -> None:
    path = folder / "runs" / "exp" / "stamp" / name / "usage.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"compute": {"embeddings": embeddings, "seconds": seconds}}))


def test_stage_sums_runs_and_says_when_tokens_were_not_recorded(tmp_path):
    new = tmp_path / "new"
    _usage(new, "a", {"misses": 100, "miss_tokens": 3000}, {"embeddings": 2.0, "embedder_load": 5})
    _usage(new, "b", {"misses": 50, "miss_tokens": 1000}, {"embeddings": 1.5})
    _usage(new, "c", {"memory_hits": 7}, {"embeddings": 0.5})  # nothing sent: nothing to record
    assert embed_floor.stage(new) == embed_floor.Stage(150, 4000, 4.0, 5.0)
    old = tmp_path / "old"
    _usage(old, "a", {"misses": 100, "miss_tokens": 3000}, {"embeddings": 2.0})
    _usage(old, "b", {"misses": 10}, {"embeddings": 1.0})  # made before the counter
    assert embed_floor.stage(old).miss_tokens is None


def test_ratios_price_misses_per_text_and_per_token():
    got = embed_floor.Stage(misses=200, miss_tokens=8000, seconds=6.0, load=2.0)
    r = embed_floor.ratios(got, text_rate=100.0, tok_rate=4000.0)
    assert r["text_floor"] == 2.0 and r["token_floor"] == 2.0
    assert r["x_text"] == r["x_token"] == 4.0  # (6 + 2) / 2
    assert r["x_text_bare"] == r["x_token_bare"] == 3.0  # 6 / 2
    longer = embed_floor.Stage(misses=200, miss_tokens=24000, seconds=6.0, load=2.0)
    r = embed_floor.ratios(longer, text_rate=100.0, tok_rate=4000.0)
    assert r["token_floor"] == 6.0 and r["x_token_bare"] == 1.0 and r["x_text_bare"] == 3.0
    unknown = embed_floor.ratios(embed_floor.Stage(10, None, 1.0, 0.0), 100.0, 4000.0)
    assert unknown["token_floor"] is None and unknown["x_token"] is None
    assert unknown["x_text"] == pytest.approx(10.0)
    none = embed_floor.ratios(embed_floor.Stage(0, 0, 0.3, 0.0), 100.0, 4000.0)
    assert none["x_text"] is None and none["x_token"] is None


def test_report_prints_not_recorded():
    rows = [(Path("r/old"), embed_floor.Stage(10, None, 1.0, 0.0))]
    lines = embed_floor.report(rows, 100.0, 4000.0)
    assert "not rec." in lines[1] and "not recorded" in lines[-1]


def test_buckets_fill_each_length_up_to_the_token_budget():
    texts = ["a", "b", "c", "d", "e"]
    counts = [10, 12, 40, 256, 11]
    got = embed_floor.bucket_sets(texts, counts, tokens=20)
    assert got[0] == ["a", "b"]  # 10 + 12 >= 20: "e" is not needed
    assert got[2] == ["c"] and got[5] == ["d"] and got[1] == got[3] == got[4] == []
