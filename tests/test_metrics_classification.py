"""Accuracy + bootstrap CI, paired significance tests and simulatability, on hand-computable cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from figlang.metrics import (
    MCNEMAR_EXACT_BELOW,
    Accuracy,
    accuracy,
    accuracy_by_group,
    correctness,
    mcnemar,
    paired_t_test,
    simulatability,
    simulatability_report,
    wilcoxon_signed_rank,
)

# ---------------------------------------------------------------- accuracy


def _labels(n_correct: int, n_wrong: int) -> tuple[list[str], list[str]]:
    gold = ["a"] * (n_correct + n_wrong)
    pred = ["a"] * n_correct + ["b"] * n_wrong
    return pred, gold


def test_accuracy_point_estimate_and_ci_contains_it():
    pred, gold = _labels(37, 13)
    res = accuracy(pred, gold, n_resamples=2000, seed=1)
    assert res.accuracy == pytest.approx(37 / 50)
    assert (res.n, res.n_correct) == (50, 37)
    assert res.ci_low < res.accuracy < res.ci_high
    # A 95% interval for p=0.74, n=50 is about ±0.12 wide; the bootstrap should be in that region.
    assert 0.55 < res.ci_low < 0.70 and 0.78 < res.ci_high < 0.90
    assert (res.n_resamples, res.seed, res.confidence) == (2000, 1, 0.95)


def test_bootstrap_is_deterministic_with_seed():
    pred, gold = _labels(37, 13)
    a = accuracy(pred, gold, n_resamples=500, seed=7)
    b = accuracy(pred, gold, n_resamples=500, seed=7)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    # The seed is the one actually used: the same call to scipy with that seed gives the same interval.
    direct = stats.bootstrap(([1.0] * 37 + [0.0] * 13,), np.mean, n_resamples=500, method="percentile", rng=np.random.default_rng(7))
    assert (a.ci_low, a.ci_high) == (direct.confidence_interval.low, direct.confidence_interval.high)
    # With 1000 items the interval is fine-grained enough that another seed moves it.
    pred, gold = _labels(611, 389)
    assert accuracy(pred, gold, n_resamples=300, seed=1).ci_low != accuracy(pred, gold, n_resamples=300, seed=2).ci_low


def test_accuracy_metric_object_records_config():
    metric = Accuracy(n_resamples=123, confidence=0.9, seed=3)
    cfg = metric.config()
    assert cfg["n_resamples"] == 123 and cfg["confidence"] == 0.9 and cfg["seed"] == 3
    res = metric.compute(["x", "y", "x"], ["x", "x", "x"])
    assert res.accuracy == pytest.approx(2 / 3) and res.n_resamples == 123
    assert "66.67%" in str(res)


def test_accuracy_degenerate_and_errors():
    res = accuracy(["a"] * 5, ["a"] * 5)
    assert res.accuracy == 1.0 and res.ci_low == res.ci_high == 1.0
    with pytest.raises(ValueError):
        accuracy(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        accuracy([], [])


def test_cluster_bootstrap_widens_for_correlated_items_and_reduces_to_the_item_bootstrap():
    rng = np.random.default_rng(0)
    per_cluster = rng.random(100) < 0.6
    correct = np.repeat(per_cluster, 10).tolist()  # 100 clusters of 10 items that are all right or all wrong
    clusters = np.repeat(np.arange(100), 10).tolist()
    metric = Accuracy(seed=3)
    items = metric.from_correctness(correct)
    grouped = metric.from_correctness(correct, clusters)
    assert grouped.accuracy == items.accuracy and grouped.n_clusters == 100 and items.n_clusters is None
    # 100 independent draws, not 1000: the interval is about sqrt(10) times wider
    assert 2.5 < (grouped.ci_high - grouped.ci_low) / (items.ci_high - items.ci_low) < 4.0
    singletons = metric.from_correctness(correct, list(range(len(correct))))
    assert (singletons.ci_low, singletons.ci_high) == (items.ci_low, items.ci_high)
    one = metric.from_correctness([True, False, True], ["a", "a", "a"])
    assert one.ci_low == one.ci_high == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="2 cluster keys for 3 items"):
        metric.from_correctness([True, False, True], ["a", "b"])


def test_none_prediction_is_wrong():
    assert correctness([None, "a"], [None, "a"]) == [False, True]


def test_accuracy_by_group():
    pred = ["e", "c", "e", "e", "c", "c"]
    gold = ["e", "c", "c", "e", "e", "c"]
    groups = ["idiom", "idiom", "simile", "simile", "sarcasm", None]
    res = accuracy_by_group(pred, gold, groups, n_resamples=200)
    assert list(res) == ["idiom", "sarcasm", "simile", "unknown"]
    assert res["idiom"].accuracy == 1.0  # 2/2
    assert res["simile"].accuracy == 0.5  # 1/2
    assert res["sarcasm"].accuracy == 0.0  # 0/1
    assert res["unknown"].n == 1


# ---------------------------------------------------------------- paired tests


def test_paired_t_test_by_hand_and_against_scipy():
    a = [1, 0, 1, 1]
    b = [0, 0, 1, 0]
    # differences d = [1, 0, 0, 1]: mean 0.5, sample sd = sqrt(4 * 0.25 / 3) = sqrt(1/3),
    # standard error = sqrt(1/3) / 2, t = 0.5 / (sqrt(1/3) / 2) = sqrt(3) = 1.7320508, df = 3.
    res = paired_t_test(a, b)
    assert res.statistic == pytest.approx(math.sqrt(3))
    assert res.details["df"] == 3
    direct = stats.ttest_rel(a, b)
    assert res.p_value == pytest.approx(float(direct.pvalue))
    assert res.n == 4 and "ttest_rel" in res.test and "p=" in str(res)


def test_paired_t_test_identical_systems():
    res = paired_t_test([1, 0, 1], [1, 0, 1])
    assert (res.statistic, res.p_value) == (0.0, 1.0)
    assert "zero" in str(res)


def test_paired_t_test_constant_nonzero_difference_is_undefined():
    # d = [1, 1]: mean 1, variance 0, so t = 1 / 0 is undefined; scipy says inf and p = 0.
    for a, b in (([1, 1], [0, 0]), ([1, 1, 0], [0, 0, -1]), ([0, 0, 0], [1, 1, 1])):
        res = paired_t_test(a, b)
        assert math.isnan(res.statistic) and math.isnan(res.p_value)
        assert not res.significant()
        assert "zero variance" in res.details["note"] and "undefined" in str(res)
        assert res.n == len(a)


def test_mcnemar_exact_by_hand():
    # b = items only A got right = 4, c = items only B got right = 1, 3 both right, 2 both wrong.
    a = [1, 1, 1, 1, 0] + [1] * 3 + [0] * 2
    b = [0, 0, 0, 0, 1] + [1] * 3 + [0] * 2
    res = mcnemar(a, b)
    assert (res.b, res.c, res.exact) == (4, 1, True)
    # Exact two-sided binomial, n = 5, p = 1/2: 2 * P(X <= 1) = 2 * (1 + 5) / 32 = 0.375.
    assert res.p_value == pytest.approx(0.375)
    assert res.p_value == pytest.approx(stats.binomtest(4, 5, 0.5).pvalue)
    assert "exact" in res.test


def test_mcnemar_chi_square_by_hand():
    # b = 30, c = 10 (b + c = 40 >= 25, so chi-square): (|30 - 10| - 1)^2 / 40 = 361 / 40 = 9.025.
    a = [1] * 30 + [0] * 10 + [1] * 20
    b = [0] * 30 + [1] * 10 + [1] * 20
    res = mcnemar(a, b)
    assert not res.exact and res.b + res.c >= MCNEMAR_EXACT_BELOW
    assert res.statistic == pytest.approx(9.025)
    assert res.p_value == pytest.approx(stats.chi2.sf(9.025, 1))
    assert 0.002 < res.p_value < 0.003
    assert "continuity" in res.test
    forced = mcnemar(a, b, exact=True)
    assert forced.exact and forced.p_value == pytest.approx(stats.binomtest(30, 40, 0.5).pvalue)


def test_mcnemar_chi_square_balanced_discordant_pairs():
    # b = c = 13: |b - c| - 1 = -1, clamped to 0, so statistic 0 and p = 1 (not 1/26, p = 0.84).
    a = [1] * 13 + [0] * 13 + [1] * 4
    b = [0] * 13 + [1] * 13 + [1] * 4
    res = mcnemar(a, b, exact=False)
    assert (res.b, res.c, res.exact) == (13, 13, False)
    assert (res.statistic, res.p_value) == (0.0, 1.0)
    # The default picks chi-square for b + c >= 25 and must agree.
    big = mcnemar([1] * 20 + [0] * 20, [0] * 20 + [1] * 20)
    assert not big.exact and (big.statistic, big.p_value) == (0.0, 1.0)
    # |b - c| = 1 is also clamped to 0.
    one = mcnemar([1] * 13 + [0] * 12, [0] * 13 + [1] * 12, exact=False)
    assert (one.statistic, one.p_value) == (0.0, 1.0)


def test_mcnemar_no_discordant_pairs():
    res = mcnemar([1, 0, 1], [1, 0, 1])
    assert (res.b, res.c, res.p_value) == (0, 0, 1.0)


def test_wilcoxon_by_hand_and_against_scipy():
    x = [2, 4, 6, 8, 10, 1]
    y = [1, 2, 3, 4, 5, 7]
    # differences 1, 2, 3, 4, 5, -6: ranks 1..6, W+ = 15, W- = 6, statistic = min = 6.
    # Exact null: subsets of {1..6} with rank sum <= 6 number 14 (of 64), two-sided p = 2 * 14 / 64.
    res = wilcoxon_signed_rank(x, y)
    assert res.statistic == 6.0
    assert res.p_value == pytest.approx(28 / 64)
    direct = stats.wilcoxon(x, y)
    assert res.p_value == pytest.approx(float(direct.pvalue))
    assert res.details["zero_method"] == "wilcox"


def test_wilcoxon_all_ties():
    res = wilcoxon_signed_rank([3, 4, 5], [3, 4, 5])
    assert res.p_value == 1.0


def test_paired_tests_reject_misaligned():
    with pytest.raises(ValueError):
        paired_t_test([1, 0], [1])
    with pytest.raises(ValueError):
        mcnemar([], [])


# ---------------------------------------------------------------- simulatability


def test_simulatability_predicted_and_gold_rationales():
    gold = ["e", "c", "e", "c", "e", "c", "e", "c", "e", "c"]
    i_o = ["e", "e", "e", "c", "c", "c", "c", "e", "e", "c"]  # 6/10 correct
    ir_o_pred = ["e", "c", "e", "c", "c", "c", "e", "e", "e", "c"]  # 8/10 correct
    ir_o_gold = list(gold)  # 10/10 correct
    res = simulatability(gold, i_o, ir_o_pred)
    assert res.accuracy_without_rationale == pytest.approx(0.6)
    assert res.accuracy_with_rationale == pytest.approx(0.8)
    assert res.simulatability == pytest.approx(0.2)
    # IR→O right where I→O wrong at items 1 and 6 (b = 2); never the other way (c = 0).
    assert (res.test.b, res.test.c) == (2, 0)
    report = simulatability_report(gold, i_o, with_predicted_rationales=ir_o_pred, with_gold_rationales=ir_o_gold)
    assert set(report) == {"predicted", "gold"}
    assert report["gold"].simulatability == pytest.approx(0.4)
    assert "+40.00 points" in str(report["gold"])
    with pytest.raises(ValueError):
        simulatability_report(gold, i_o)
    with pytest.raises(ValueError):
        simulatability(gold, i_o[:-1], ir_o_pred)


# ---------------------------------------------------------------- every recorded field (issue #35: mutation survivors)


def test_accuracy_config_and_result_record_every_setting():
    metric = Accuracy(n_resamples=123, confidence=0.9, seed=3)
    assert metric.config() == {
        "metric": "accuracy",
        "ci_method": "percentile bootstrap (scipy.stats.bootstrap)",
        "n_resamples": 123,
        "confidence": 0.9,
        "seed": 3,
    }
    res = metric.compute(["x", "y", "x", "x"], ["x", "x", "x", "x"])
    d = res.to_dict()
    assert d == {
        "accuracy": 0.75,
        "n": 4,
        "n_correct": 3,
        "ci_low": res.ci_low,
        "ci_high": res.ci_high,
        "confidence": 0.9,
        "n_resamples": 123,
        "seed": 3,
        "method": "percentile bootstrap (scipy.stats.bootstrap)",
        "n_clusters": None,
    }
    assert 0.0 <= res.ci_low < 0.75 < res.ci_high <= 1.0
    assert str(res) == f"accuracy 75.00% (3/4), 90% CI [{100 * res.ci_low:.2f}, {100 * res.ci_high:.2f}]"
    assert accuracy(["x", "y", "x", "x"], ["x"] * 4, n_resamples=123, confidence=0.9, seed=3) == res
    defaults = Accuracy()
    assert (defaults.n_resamples, defaults.confidence, defaults.seed) == (1000, 0.95, 0)
    with pytest.raises(ValueError, match="^n_resamples must be at least 1$"):
        Accuracy(n_resamples=0)
    assert Accuracy(n_resamples=1).n_resamples == 1
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"^confidence must be in \(0, 1\)$"):
            Accuracy(confidence=bad)
    with pytest.raises(ValueError, match="^3 predictions for 2 gold labels; they must be aligned item by item$"):
        correctness(["a", "b", "c"], ["a", "b"])
    with pytest.raises(ValueError, match="^accuracy of zero items is undefined$"):
        Accuracy().from_correctness([])


def test_accuracy_by_group_passes_its_settings_and_counts():
    pred, gold = ["e", "c", "e", "e", "c"], ["e", "c", "c", "e", "e"]
    res = accuracy_by_group(pred, gold, ["a", "a", "b", "b", 7], n_resamples=50, confidence=0.8, seed=4)
    assert list(res) == ["7", "a", "b"]
    assert (res["b"].n, res["b"].n_correct, res["b"].n_resamples, res["b"].confidence, res["b"].seed) == (2, 1, 50, 0.8, 4)
    assert res["b"] == Accuracy(n_resamples=50, confidence=0.8, seed=4).from_correctness([False, True])
    with pytest.raises(ValueError, match="^2 group labels for 5 items$"):
        accuracy_by_group(pred, gold, ["a", "b"])
