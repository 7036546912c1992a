"""Episode-clustered bootstrap, paired tests and Holm: hand-checked values and exactness."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from recallbench.metrics import get_metric
from recallbench.metrics.bootstrap import (
    Additive,
    Bootstrap,
    Generic,
    MeanOf,
    ci_fields,
    cluster_ci,
    holm,
    paired_test,
    statistic_from_entry,
)
from recallbench.metrics.estimators import estimate_one

RATIO = {"fn": "ratio"}


def means(*values: float) -> Additive:
    """One episode per value, each a mean of one item."""
    ids = tuple(f"e{i}" for i in range(len(values)))
    return Additive(ids, np.array([[v, 1.0] for v in values]), RATIO)


def test_two_clusters_by_hand():
    # Resamples of {A = 1, B = 0}: AA -> 1, AB/BA -> 0.5, BB -> 0 with probabilities 1/4, 1/2,
    # 1/4, so the 2.5% and 97.5% percentiles are 0 and 1.
    interval = cluster_ci(means(1.0, 0.0))
    assert (interval.value, interval.low, interval.high) == (0.5, 0.0, 1.0)
    assert interval.n_clusters == 2 and interval.n_resamples == 2000


def test_clusters_not_items_are_resampled():
    # 10 identical answers per episode: as 20 independent items the mean 0.5 would look precise
    # (t-interval 0.5 +- 0.23); as 2 episodes it is as uncertain as 2 observations.
    stat = Additive.from_items(
        ["a"] * 10 + ["b"] * 10, [[1.0, 1.0]] * 10 + [[0.0, 1.0]] * 10, RATIO
    )
    assert stat.ids == ("a", "b") and stat.matrix.tolist() == [[10.0, 10.0], [0.0, 10.0]]
    interval = cluster_ci(stat)
    assert (interval.low, interval.high) == (0.0, 1.0)


def test_one_cluster_has_no_interval_and_fields_are_json():
    fields = ci_fields(means(0.3))
    assert fields["ci95"] is None and "1 cluster" in fields["ci_note"]
    fields = ci_fields(means(0.1, 0.4, 0.3), Bootstrap(n_resamples=500, seed=7))
    assert fields["n_resamples"] == 500 and fields["seed"] == 7 and fields["n_clusters"] == 3
    assert "episode-clustered" in fields["ci_method"]
    json.dumps(fields, allow_nan=False)
    assert statistic_from_entry(fields).value() == pytest.approx(0.8 / 3)


def test_seed_makes_intervals_reproducible():
    stat = means(*np.linspace(0, 1, 12))
    a, b = cluster_ci(stat, Bootstrap(seed=3)), cluster_ci(stat, Bootstrap(seed=3))
    assert (a.low, a.high) == (b.low, b.high)


def test_corpus_bleu_of_any_resample_equals_sacrebleu():
    # Episode e0 = 2 pairs, e1 = 1 pair. The resample (e0, e0, e1) is the corpus of e0's pairs
    # twice plus e1's: the additive statistics must give sacrebleu's corpus BLEU of exactly that.
    preds = ["the cat sat on the mat", "a dog barked at night", "i like green tea a lot"]
    refs = ["the cat sat on a mat", "the dog barked all night", "i like tea a lot"]
    metric = get_metric("bleu4")
    result = metric.compute(preds, refs)
    stat = metric.clustered(result, preds, refs, ["e0", "e0", "e1"])
    assert stat.value() == pytest.approx(result.value, abs=1e-12)
    corpus = [preds[0], preds[1], preds[0], preds[1], preds[2]]
    corpus_refs = [refs[0], refs[1], refs[0], refs[1], refs[2]]
    want = BLEU().corpus_score(corpus, [corpus_refs]).score / 100
    assert float(stat.values(np.array([0, 0, 1]))) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(
    "spec,sums,expected",
    [
        ({"fn": "ratio"}, [3, 4], 0.75),
        ({"fn": "ratio"}, [3, 0], 0.0),
        ({"fn": "total"}, [7], 7.0),
        ({"fn": "capped_exp", "cap": None}, [2.0, 2.0], float(np.e)),
        ({"fn": "capped_exp", "cap": 2.0}, [2.0, 2.0], 2.0),
        # LUFY: 2 correct, 1 incorrect, 1 "I don't know": P = 2/3, R = 2/4, F1 = 4/7
        ({"fn": "prf", "which": "precision"}, [2, 1, 1], 2 / 3),
        ({"fn": "prf", "which": "recall"}, [2, 1, 1], 0.5),
        ({"fn": "prf", "which": "f1"}, [2, 1, 1], 4 / 7),
        ({"fn": "prf", "which": "dont_know_rate"}, [2, 1, 1], 0.25),
        # Two question-sessions: P = (1 + 0) / 2, R = (1/2 + 0) / 2; a group never asked is skipped.
        ({"fn": "prf_groups", "which": "precision"}, [1, 0, 1, 0, 1, 0, 0, 0, 0], 0.5),
        ({"fn": "prf_groups", "which": "recall"}, [1, 0, 1, 0, 1, 0, 0, 0, 0], 0.25),
        ({"fn": "prf_groups", "which": "f1"}, [1, 0, 1, 0, 1, 0, 0, 0, 0], 1 / 3),
    ],
)
def test_estimators_by_hand(spec, sums, expected):
    assert estimate_one(spec, sums) == pytest.approx(expected)


def test_mean_of_sessions():
    s3 = Additive(("a", "b"), np.array([[1.0, 1.0], [0.0, 1.0]]), RATIO)
    s4 = Additive(("b",), np.array([[2.0, 2.0]]), RATIO)  # episode a has no session 4
    both = MeanOf.of([s3, s4])
    assert both.ids == ("a", "b") and both.value() == pytest.approx((0.5 + 1.0) / 2)


def test_paired_permutation_exact_by_hand():
    # Per-episode differences (1, 1, 1): of the 2^3 sign flips only all-plus and all-minus reach
    # |mean| >= 1, so the exact two-sided p is 2/8.
    a, b = means(1.0, 1.0, 1.0), means(0.0, 0.0, 0.0)
    test = paired_test(a, b, Bootstrap(n_resamples=1000))
    assert test.diff == 1.0 and test.p_value == pytest.approx(0.25)
    assert test.n_clusters == 3 and "permutation" in test.test
    # Differences (2, 0, 1), mean 1: flips give means +-1, +-1/3 (x2 for the zero): p = 2 * 2/8.
    assert paired_test(means(3, 1, 2), means(1, 1, 1)).p_value == pytest.approx(0.5)


def test_paired_test_pairs_by_episode_id_and_detects_a_shift():
    rng = np.random.default_rng(0)
    base = rng.random(30)
    ids = tuple(f"u{i}" for i in range(30))
    a = Additive(ids, np.column_stack([base + 0.05, np.ones(30)]), RATIO)
    b = Additive(ids[::-1], np.column_stack([base, np.ones(30)])[::-1], RATIO)  # other order
    test = paired_test(a, b)
    assert test.diff == pytest.approx(0.05) and test.p_value < 0.01
    assert test.low == pytest.approx(0.05) and test.high == pytest.approx(0.05)
    # Unpaired noise of the same size is not significant.
    noise = Additive(ids, np.column_stack([rng.permutation(base), np.ones(30)]), RATIO)
    assert paired_test(noise, b).p_value > 0.05


def test_paired_test_with_a_recomputed_statistic_uses_the_bootstrap():
    values = np.linspace(0.1, 0.9, 8)
    ids = tuple(f"e{i}" for i in range(8))
    a = Generic(ids, lambda pos: float(np.mean(values[pos] + 0.3)))
    test = paired_test(a, means(*values).aligned(ids))
    assert test.diff == pytest.approx(0.3) and "bootstrap" in test.test
    # No resampled difference reaches 0: p = 2 (0 + 1) / (2000 + 1), never 0.
    assert test.p_value == pytest.approx(2 / 2001)


def test_mean_over_sessions_is_permuted_by_episode():
    # THEANINE's "average of sessions": sessions 3 and 4, each run +1 on every episode in both.
    def run(shift: float) -> MeanOf:
        ids = ("a", "b", "c")
        s3 = Additive(ids, np.array([[1 + shift, 1], [2 + shift, 1], [3 + shift, 1]]), RATIO)
        s4 = Additive(ids, np.array([[4 + shift, 1], [5 + shift, 1], [6 + shift, 1]]), RATIO)
        return MeanOf.of([s3, s4])

    test = paired_test(run(1.0), run(0.0), Bootstrap(n_resamples=100))
    assert test.diff == pytest.approx(1.0) and "permutation" in test.test
    assert test.p_value == pytest.approx(2 / 8)  # exact: 2 of the 2^3 sign flips


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.9, 0.02]) == pytest.approx([0.9, 0.04])  # 0.02 * 2; 0.9 * 1, monotone
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 0.5 * 2 caps at 1, carried up
    assert holm([]) == []


def test_compare_to_reference_pairs_by_key_and_applies_holm():
    from recallbench.metrics.bootstrap import compare_to_reference

    users = [f"u{i}" for i in range(12)]
    base = np.linspace(0.2, 0.8, 12)

    def run(system: str, shift: float) -> Additive:
        ids = tuple(f"lufy/{system}/{u}" for u in users)  # LUFY: one episode per system and user
        return Additive(ids, np.column_stack([base + shift, np.ones(12)]), RATIO)

    rows = {"Naive RAG": run("Naive RAG", 0.0), "LUFY": run("LUFY", 0.1), "Same": run("S", 0.0)}
    exact = Bootstrap(n_resamples=5000)  # >= 2^12 sign flips: scipy enumerates them all
    out = compare_to_reference(rows, "Naive RAG", exact, key=lambda e: e.rsplit("/", 1)[-1])
    assert set(out) == {"LUFY", "Same"}
    assert out["LUFY"]["diff"] == pytest.approx(0.1) and out["LUFY"]["significant"]
    assert out["LUFY"]["n_clusters"] == 12
    # exact sign-flip test of 12 equal differences: p = 2 / 2^12; Holm doubles the smaller p
    assert out["LUFY"]["p_value"] == pytest.approx(2 / 4096)
    assert out["LUFY"]["p_holm"] == pytest.approx(4 / 4096)
    assert out["Same"]["diff"] == 0.0 and not out["Same"]["significant"]
    with pytest.raises(ValueError, match="share no episode"):
        compare_to_reference(rows, "Naive RAG")  # without the key the ids differ


def _sessions_of_constant(value: float) -> MeanOf:
    """Sessions 3-5 of 10 episodes, every item ``value``; only e0 and e1 have session 5."""
    ids = tuple(f"e{i}" for i in range(10))
    s3 = Additive.from_items(ids, [[value, 1.0]] * 10, RATIO)
    s4 = Additive.from_items(ids, [[value, 1.0]] * 10, RATIO)
    s5 = Additive.from_items(ids[:2], [[value, 1.0]] * 2, RATIO)
    return MeanOf.of([s3, s4, s5])


def test_constant_data_gets_a_degenerate_interval_at_the_constant():
    # An episode without session 5 is absent from the session-5 statistic, not a zero row:
    # a resample of episodes without session 5 averages sessions 3 and 4 (0.5), never
    # (0.5 + 0.5 + 0) / 3. Before the fix the 95% interval of constant 0.5 was [0.33, 0.5].
    stat = _sessions_of_constant(0.5)
    interval = cluster_ci(stat, Bootstrap(n_resamples=500))
    assert (interval.value, interval.low, interval.high) == (0.5, 0.5, 0.5)
    # Every resample, including those without e0 and e1, is the constant.
    rng = np.random.default_rng(1)
    idx = rng.integers(2, 10, size=(50, 10))  # only episodes without session 5
    assert np.allclose(stat.values(idx), 0.5)


def test_mean_of_sessions_skips_a_session_no_resampled_episode_has():
    s3 = Additive(("a", "b"), np.array([[1.0, 1.0], [0.0, 1.0]]), RATIO)
    s4 = Additive(("b",), np.array([[2.0, 2.0]]), RATIO)  # a has no session 4
    both = MeanOf.of([s3, s4])
    # Resample (a, a): only session 3 has data -> 1.0; (b, b): (0 + 1) / 2; (a, b): (0.5 + 1) / 2.
    got = both.values(np.array([[0, 0], [1, 1], [0, 1]]))
    assert got == pytest.approx([1.0, 0.5, 0.75])


def test_generic_parts_know_their_episodes():
    # A Generic statistic aligned on more episodes covers only its own.
    g = Generic(("a",), lambda pos: float(len(pos))).aligned(["a", "b"])
    assert g.covers(np.array([[1, 1], [0, 1]])).tolist() == [False, True]


def test_paired_test_of_session_means_with_a_missing_session_is_exact():
    # Both runs constant (1.0 vs 0.5) on every session they have: the difference is 0.5 in
    # every resample, so the paired interval is degenerate at 0.5.
    test = paired_test(_sessions_of_constant(1.0), _sessions_of_constant(0.5))
    assert test.diff == pytest.approx(0.5)
    assert test.low == pytest.approx(0.5) and test.high == pytest.approx(0.5)


def test_session_mean_interval_of_a_constant_metric_in_the_summary():
    # token F1 of a reply equal to its reference is 1.0 everywhere; 6 episodes answer sessions
    # 3 and 4, only the first two also session 5: the summary's session-mean interval is [1, 1].
    from recallbench.metrics.scoring import score_predictions
    from recallbench.records import Prediction

    preds = [
        Prediction(f"{e}/{s}/{t}", e, s, "response", "", "the cat sat", "the cat sat")
        for e in [f"e{i}" for i in range(6)]
        for s in ((3, 4, 5) if e in ("e0", "e1") else (3, 4))
        for t in range(2)
    ]
    _, summary = score_predictions(preds, ["token_f1"])
    entry = summary["metrics"]["token_f1"]
    assert entry["session_mean"] == pytest.approx(1.0)
    assert entry["session_mean_ci95"] == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_estimator_is_sklearns_cohen_kappa(seed):
    from sklearn.metrics import cohen_kappa_score

    from recallbench.metrics.estimators import estimate_one

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, 60)
    b = np.where(rng.random(60) < 0.75, a, 1 - a)
    table = np.array(
        [[x * y, x * (1 - y), (1 - x) * y, (1 - x) * (1 - y)] for x, y in zip(a, b, strict=True)]
    )
    got = estimate_one({"fn": "kappa"}, table.sum(axis=0))
    assert got == pytest.approx(cohen_kappa_score(a, b))
    assert estimate_one({"fn": "kappa"}, [5, 0, 0, 0]) == 0.0  # both constant: undefined -> 0
