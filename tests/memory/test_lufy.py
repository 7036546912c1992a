"""LUFY: Eq. 2 strength with Table 2 weights, importance-aware retrieval, the Harvard example."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from lufy_scenarios import (
    HARVARD,
    SESSION_1,
    SESSION_2,
    make_episode,
    pair_id,
    probe,
    replay,
)
from omegaconf import OmegaConf

from recallbench.cli.build import build_memory_factory
from recallbench.errors import ConfigError
from recallbench.memory.lufy import (
    DEFAULT_NORMALIZATION,
    IMPORTANCE_PROMPT,
    IMPORTANCE_TASK,
    PAPER_WEIGHTS,
    Entry,
    Lufy,
    offline_importance,
    parse_importance,
    train_arousal,
    unigram_surprise,
)
from recallbench.memory.memorybank import MemoryBank
from recallbench.testing.configs import load_group_config

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "memory"
EMOBANK = ROOT / "data" / "fixtures" / "lufy" / "Code" / "roberta" / "emobank.csv"


@pytest.fixture(scope="module")
def arousal(embedder):
    return train_arousal(embedder, EMOBANK)


@pytest.fixture(scope="module")
def embedder():
    from recallbench.embed import HashingEmbedder

    return HashingEmbedder(dim=256)


def lufy(llm, embedder, arousal, **params):
    return Lufy(llm, embedder, surprise="unigram", arousal_model=arousal, **params)


def _entry(a, p, l, r1=0, r2=0):  # noqa: E741
    from recallbench.clock import EPOCH

    entry = Entry("x", "utterance_pair", "t", EPOCH, (), 1, 1, EPOCH, r1=r1, r2=r2)
    entry.raw = {"A": a, "P": p, "L": l}
    return entry


def test_table2_weights_and_eq2(llm, embedder, arousal):
    assert PAPER_WEIGHTS == {"A": 2.76, "P": -0.28, "L": 0.44, "R1": 1.02, "R2": -0.012}
    bounds = {"A": [1, 5], "P": [0, 160], "L": [0, 10], "R1": [0, 4], "R2": [0, 4]}
    method = lufy(llm, embedder, arousal, normalization=bounds)
    entry = _entry(a=4.0, p=40.0, l=5.0, r1=2, r2=1)
    x = {"A": 0.75, "P": 0.25, "L": 0.5, "R1": 0.5, "R2": 0.25}
    assert method.normalized(entry) == pytest.approx(x)
    s = 2.76 * 0.75 - 0.28 * 0.25 + 0.44 * 0.5 + 1.02 * 0.5 - 0.012 * 0.25  # R2 lowers S
    assert method.strength(entry) == pytest.approx(s)
    literal = lufy(llm, embedder, arousal, normalization=bounds, r2_convention="literal")
    assert literal.strength(entry) == pytest.approx(s + 2 * 0.012 * 0.25)  # -(-0.012) raises S
    now = entry.last_access.replace(day=entry.last_access.day + 2)
    assert method.importance(entry, now) == pytest.approx(math.exp(-2 / s))
    assert method.score_bonus(entry, now) == pytest.approx(0.1 * math.exp(-2 / s))  # Eq. 5
    # S <= 0 is floored (e.g. a high-perplexity, unarousing utterance)
    assert method.strength(_entry(a=1.0, p=160.0, l=0.0)) == 0.1


def test_importance_task_prompt_and_parser():
    assert IMPORTANCE_PROMPT.startswith("On a scale of 1 to 10, where 1 is purely mundane (like")
    assert "(like a breakup or a college acceptance)" in IMPORTANCE_PROMPT
    assert IMPORTANCE_PROMPT.endswith(
        "Be sure to provide both a score and a brief reason for your rating."
    )
    assert IMPORTANCE_TASK.stage == "memory" and IMPORTANCE_TASK.fallback == 5.0
    cases = {
        "Score: 8\nReason: a college acceptance": 8.0,
        "I would rate this a 3 out of 10 because it is mundane.": 3.0,
        "Rating: 7/10. Score: 7": 7.0,
        "score of 12": 10.0,
        "10": 10.0,
        "Score: 6.5 - moderately useful": 6.5,
    }
    assert {reply: parse_importance(reply) for reply in cases} == cases
    with pytest.raises(ValueError):
        parse_importance("It is hard to say.")
    assert parse_importance(offline_importance(content=HARVARD, key_summary="None")) >= 5
    assert parse_importance(offline_importance(content="Bye, see you.")) == 1


def test_unigram_surprise_proxy():
    low, high = unigram_surprise(
        ["my cat sleeps", "quantum chromodynamics lecture"], ["does your cat sleep? my cat"] * 2
    )
    assert 1 < low < high <= 160
    assert unigram_surprise(["x " * 5], [""], vocab=10_000)[0] == 160  # capped
    assert unigram_surprise([""], ["context"]) == [0.0]


def test_harvard_memorybank_forgets_lufy_keeps(llm, embedder, arousal):
    """LUFY Table 5 / App. G: the never-recalled, emotionally charged news survives only in LUFY."""
    episode = make_episode([SESSION_1, SESSION_2])
    harvard = pair_id(episode, 2, HARVARD)
    bank = MemoryBank(llm, embedder, threshold=0.5)
    ours = lufy(llm, embedder, arousal, threshold=0.5)
    for method in (bank, ours):
        replay(method, episode)
        assert method.retention() == {"created": 26, "retained": 3}
    bank_item = next(i for i in bank.snapshot() if i.item_id == harvard)
    ours_item = next(i for i in ours.snapshot() if i.item_id == harvard)
    assert bank_item.attrs["metrics"]["R1"] == ours_item.attrs["metrics"]["R1"] == 0
    assert bank_item.attrs["retained"] is False  # S = 1, decayed like every unrecalled memory
    assert bank_item.attrs["strength"] == 1.0
    assert ours_item.attrs["retained"] is True  # high arousal and LLM importance
    pairs = [i for i in ours.snapshot() if i.kind == "utterance_pair" and i.attrs["session"] == 2]
    assert max(pairs, key=lambda i: i.attrs["metrics"]["A"]).item_id == harvard
    # a later probe finds it in LUFY only (threshold lowered for the hashing embedder)
    for method in (bank, ours):
        method.threshold = 0.2
    question = probe(episode, "Zoe found out she got into which university?", 2)
    assert ours.recall(question).info["r1"] == harvard
    assert bank.recall(question).info["r1"] != harvard


def test_retrieval_adds_alpha_importance(llm, embedder, arousal):
    episode = make_episode([SESSION_1, SESSION_2])
    method = lufy(llm, embedder, arousal, threshold=0.2, forgetting=False)
    replay(method, episode)
    recall = method.recall(probe(episode, "Where does the cat Mochi sleep all day?", 2))
    now = probe(episode, "x", 2).now
    for item_id, cos, score in zip(
        [recall.info["r1"], *recall.info["r2"]],
        recall.info["cosine"],
        recall.info["score"],
        strict=True,
    ):
        entry = next(e for e in method.store.entries if e.item_id == item_id)
        assert score == pytest.approx(cos + 0.1 * method.importance(entry, now), abs=1e-4)
    assert recall.info["score"][0] >= recall.info["score"][-1]


def test_snapshot_attrs(llm, embedder, arousal):
    method = lufy(llm, embedder, arousal)
    replay(method, make_episode([SESSION_1]))
    item = next(i for i in method.snapshot() if i.kind == "utterance_pair")
    assert set(item.attrs) >= {"strength", "importance", "retained", "metrics", "normalized"}
    assert set(item.attrs["metrics"]) == {"A", "P", "L", "R1", "R2"}
    assert 1 <= item.attrs["metrics"]["A"] <= 5 and 1 <= item.attrs["metrics"]["L"] <= 10
    assert item.attrs["importance"] == pytest.approx(
        math.exp(-1 / item.attrs["strength"]), abs=1e-5
    )
    summary = next(i for i in method.snapshot() if i.kind == "summary")
    pairs = [i for i in method.snapshot() if i.kind == "utterance_pair"]
    assert summary.attrs["metrics"]["A"] == max(i.attrs["metrics"]["A"] for i in pairs)
    assert summary.attrs["metrics"]["P"] == min(i.attrs["metrics"]["P"] for i in pairs)


def _load(name: str, **paths):
    cfg = OmegaConf.merge(
        {"paths": {"data_dir": str(ROOT / "data" / "fixtures"), **paths}},
        {"memory": load_group_config(CONF / f"{name}.yaml")},
    )
    cfg.memory.surprise = "unigram"
    return cfg


@pytest.mark.parametrize(
    ("name", "zero"),
    [
        ("lufy", None),
        ("lufy_no_arousal", "A"),
        ("lufy_no_perplexity", "P"),
        ("lufy_no_llm", "L"),
        ("lufy_no_r1", "R1"),
        ("lufy_no_r2", "R2"),
    ],
)
def test_ablation_configs(name, zero, llm, embedder, tmp_path):
    cfg = _load(name, cache_dir=str(tmp_path))
    assert cfg.memory.emobank_path == str(EMOBANK)
    method = build_memory_factory(cfg.memory, llm, embedder)()  # as a run builds it
    expected = dict(PAPER_WEIGHTS) | ({zero: 0.0} if zero else {})
    assert method.weights == expected and method.threshold == 0.8 and method.alpha == 0.1
    assert method.bounds == DEFAULT_NORMALIZATION and method.r2_convention == "rif"
    replay(method, make_episode([SESSION_1]))
    item = next(i for i in method.snapshot() if i.kind == "utterance_pair")
    for metric in ("A", "P", "L"):  # a metric with weight 0 is not computed
        assert (item.attrs["metrics"][metric] is None) is (metric == zero)
    if zero != "A":
        assert list(tmp_path.glob("arousal-hashing-256-*.npz")), "arousal model not cached"


def test_bad_params(llm, embedder, arousal):
    with pytest.raises(ConfigError, match="emobank_path"):
        Lufy(llm, embedder, surprise="unigram")
    Lufy(llm, embedder, surprise="unigram", weights={"A": 0})  # no arousal needed
    with pytest.raises(ConfigError, match="Did you mean 'R1'"):
        lufy(llm, embedder, arousal, weights={"R11": 1.0})
    with pytest.raises(ConfigError, match="r2_convention"):
        lufy(llm, embedder, arousal, r2_convention="both")
    with pytest.raises(ConfigError, match="surprise"):
        Lufy(llm, embedder, surprise="gpt2", arousal_model=arousal)
    with pytest.raises(ConfigError, match="lo < hi"):
        lufy(llm, embedder, arousal, normalization={"P": [160, 1]})


def test_episode_prefetch_scores_every_pair_the_sessions_then_score(
    llm, embedder, arousal, monkeypatch
):
    """``surprise: lm`` scores are cached (llm.lm_scores): the episode prefetch asks for every
    (utterance, context) pair that ``score_session`` asks for later, in one call."""
    from lufy_scenarios import SESSION_1, SESSION_2, make_episode, replay_session

    import recallbench.llm.perplexity as perplexity_module

    calls: list[list[tuple[str, str]]] = []

    def recording(texts, contexts=None, **_):
        calls.append(list(zip(contexts, texts, strict=True)))
        return [10.0] * len(texts)

    monkeypatch.setattr(perplexity_module, "perplexity", recording)
    episode = make_episode([SESSION_1, SESSION_2])
    method = Lufy(llm, embedder, surprise="lm", arousal_model=arousal)
    method.reset(episode)
    method.prefetch_episode(episode)
    assert len(calls) == 1
    fetched = set(calls[0])
    for session in episode.sessions:
        replay_session(method, episode, session)
        method.observe(session)
    later = {pair for call in calls[1:] for pair in call}
    assert len(calls) == 1 + len(episode.sessions) and later == fetched
    # a surprise whose scores nobody caches (unigram, a callable) is not computed twice
    calls.clear()
    unigram = lufy(llm, embedder, arousal)
    unigram.reset(episode)
    unigram.prefetch_episode(episode)
    assert calls == []
