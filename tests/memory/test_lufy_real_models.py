"""LUFY with its default metric models: MiniLM-ridge arousal (real EmoBank) and SmolLM2 surprise."""

from __future__ import annotations

from pathlib import Path

import pytest
from lufy_scenarios import HARVARD, SESSION_1, SESSION_2, make_episode, pair_id, replay

from recallbench.embed import MiniLMEmbedder
from recallbench.memory.lufy import EMOBANK_RELPATH, Lufy
from recallbench.memory.memorybank import MemoryBank

CACHE = Path(__file__).resolve().parents[2] / "results" / "cache"


@pytest.mark.slow
def test_harvard_with_default_models(real_data_dir, llm):
    minilm = MiniLMEmbedder()
    emobank = str(real_data_dir / EMOBANK_RELPATH)  # surprise: the default SmolLM2 perplexity
    ours = Lufy(llm, minilm, threshold=0.5, emobank_path=emobank, arousal_cache_dir=str(CACHE))
    bank = MemoryBank(llm, minilm, threshold=0.5)
    episode = make_episode([SESSION_1, SESSION_2])
    harvard = pair_id(episode, 2, HARVARD)
    for method in (ours, bank):
        replay(method, episode)
    kept = {m: {i.item_id for i in m.snapshot() if i.attrs["retained"]} for m in (ours, bank)}
    assert harvard in kept[ours] and harvard not in kept[bank]
    item = next(i for i in ours.snapshot() if i.item_id == harvard)
    assert item.attrs["metrics"]["A"] > 3.2  # EmoBank scale; calm chat scores ~2.8-3.1
    assert 1 < item.attrs["metrics"]["P"] <= 160
    assert ours.arousal_model().info["pearson_test"] > 0.35
