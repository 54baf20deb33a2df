"""figlang.metrics.significance against figures computed here by hand (issue #35: written to kill the mutants
mutmut left alive): the t statistic from its formula, McNemar's exact p from the binomial sum and its chi-square
from the formula with Edwards' correction, Wilcoxon's exact p for a small sample, and the edges (no difference,
constant difference, the exact/chi-square boundary, bad input)."""

from __future__ import annotations

import math

import pytest

from figlang.metrics.significance import MCNEMAR_EXACT_BELOW, McNemarResult, TestResult, mcnemar, paired_t_test, wilcoxon_signed_rank


def _t_by_hand(a: list[float], b: list[float]) -> tuple[float, float]:
    from scipy import stats

    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (n - 1))
    t = mean / (sd / math.sqrt(n))
    return t, 2 * stats.t.sf(abs(t), n - 1)


def test_paired_t_test_is_the_formula():
    a = [1, 1, 0, 1, 1, 0, 1, 1, 0, 1]
    b = [0, 1, 0, 0, 1, 1, 0, 0, 0, 1]
    r = paired_t_test(a, b)
    t, p = _t_by_hand(a, b)
    assert r.statistic == pytest.approx(t, rel=1e-12) and r.p_value == pytest.approx(p, rel=1e-9)
    assert r.n == 10 and r.details == {"mean_a": 0.7, "mean_b": 0.4, "df": 9}
    assert r.test == "paired t-test (scipy.stats.ttest_rel)"
    assert paired_t_test(b, a).statistic == pytest.approx(-t, rel=1e-12)  # the sign says which system is ahead


def test_paired_t_test_edges():
    same = paired_t_test([1, 0, 1], [1, 0, 1])
    assert (same.statistic, same.p_value, same.n) == (0.0, 1.0, 3)
    assert same.details == {"mean_a": 2 / 3, "mean_b": 2 / 3, "note": "all paired differences are zero"}
    constant = paired_t_test([1, 1, 1, 0], [0, 0, 0, -1])
    assert math.isnan(constant.statistic) and math.isnan(constant.p_value) and constant.n == 4
    assert (
        constant.test == "paired t-test (scipy.stats.ttest_rel)"
        and constant.details["df"] == 3
        and constant.details["note"].startswith("every paired difference is 1: zero variance")
    )
    assert not constant.significant()
    with pytest.raises(ValueError, match="lengths 2 and 3"):
        paired_t_test([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="zero items"):
        paired_t_test([], [])
    with pytest.raises(ValueError, match="1-D"):
        paired_t_test([[1, 0]], [[1, 0]])


def _exact_p(b: int, c: int) -> float:
    n = b + c
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _chi2(b: int, c: int) -> tuple[float, float]:
    statistic = max(abs(b - c) - 1, 0) ** 2 / (b + c)
    return statistic, math.erfc(math.sqrt(statistic / 2))  # the chi-square (1 df) survival function


def _pairs(b: int, c: int, both: int = 3, neither: int = 2) -> tuple[list[bool], list[bool]]:
    a = [True] * b + [False] * c + [True] * both + [False] * neither
    bb = [False] * b + [True] * c + [True] * both + [False] * neither
    return a, bb


def test_mcnemar_exact_is_the_binomial_sum():
    a, b = _pairs(7, 2)
    r = mcnemar(a, b)
    assert isinstance(r, McNemarResult) and r.exact is True and (r.b, r.c) == (7, 2)
    assert r.test == "McNemar exact binomial (scipy.stats.binomtest)"
    assert r.statistic == 7.0 and r.p_value == pytest.approx(_exact_p(7, 2), rel=1e-12) and r.n == 14
    assert r.details == {"b": 7, "c": 2, "accuracy_a": 10 / 14, "accuracy_b": 5 / 14}
    assert mcnemar(b, a).p_value == pytest.approx(r.p_value, rel=1e-12) and (mcnemar(b, a).b, mcnemar(b, a).c) == (2, 7)


def test_mcnemar_chi_square_is_the_corrected_formula():
    a, b = _pairs(20, 8)
    r = mcnemar(a, b)  # 28 discordant pairs: at or above the threshold, the chi-square test
    statistic, p = _chi2(20, 8)
    assert r.exact is False and r.test == "McNemar chi-square with continuity correction"
    assert r.statistic == pytest.approx(statistic, rel=1e-12) and r.p_value == pytest.approx(p, rel=1e-9)
    assert r.statistic == pytest.approx(121 / 28) and r.n == 33 and (r.b, r.c) == (20, 8)
    even = mcnemar(*_pairs(5, 5), exact=False)  # b == c: no evidence at all, not a small positive statistic
    assert even.statistic == 0.0 and even.p_value == pytest.approx(1.0)
    one_apart = mcnemar(*_pairs(6, 5), exact=False)
    assert one_apart.statistic == 0.0
    two_apart = mcnemar(*_pairs(7, 5), exact=False)
    assert two_apart.statistic == pytest.approx(1 / 12)


def test_mcnemar_threshold_and_forced_variants():
    assert MCNEMAR_EXACT_BELOW == 25
    assert mcnemar(*_pairs(14, 10)).exact is True  # 24 discordant
    assert mcnemar(*_pairs(15, 10)).exact is False  # 25 discordant
    forced = mcnemar(*_pairs(15, 10), exact=True)
    assert forced.exact is True and forced.p_value == pytest.approx(_exact_p(15, 10), rel=1e-12)
    forced_chi = mcnemar(*_pairs(3, 1), exact=False)
    assert forced_chi.exact is False and forced_chi.statistic == pytest.approx(_chi2(3, 1)[0])
    none = mcnemar([True, False], [True, False])
    assert (none.statistic, none.p_value, none.b, none.c, none.exact) == (0.0, 1.0, 0, 0, True)
    assert none.test == "McNemar exact binomial" and none.details["note"] == "no discordant pairs"
    none_chi = mcnemar([True, False], [True, False], exact=False)
    assert none_chi.test == "McNemar chi-square (continuity corrected)" and none_chi.exact is False
    assert mcnemar([1, 0, 0], [0, 0, 1]).details["b"] == 1  # truthy values are correctness


def test_wilcoxon_exact_small_sample():
    a = [3.0, 4.0, 5.0, 6.0, 7.0]
    b = [2.0, 2.0, 2.0, 2.0, 2.0]  # every difference positive: W- = 0, exact two-sided p = 2 / 2**5
    r = wilcoxon_signed_rank(a, b)
    assert r.statistic == 0.0 and r.p_value == pytest.approx(2 / 32) and r.n == 5
    assert r.test == "Wilcoxon signed-rank (scipy.stats.wilcoxon)"
    assert r.details == {"zero_method": "wilcox", "method": "auto", "median_difference": 3.0, "n_nonzero_differences": 5}
    mixed = wilcoxon_signed_rank([1.0, 5.0, 2.0, 8.0], [2.0, 3.0, 2.0, 4.0], zero_method="pratt", method="exact")
    assert mixed.details["zero_method"] == "pratt" and mixed.details["method"] == "exact" and mixed.details["n_nonzero_differences"] == 3
    tied = wilcoxon_signed_rank([1.0, 2.0], [1.0, 2.0])
    assert (tied.statistic, tied.p_value) == (0.0, 1.0) and tied.details["note"] == "all paired differences are zero"
    assert tied.details["median_difference"] == 0.0


def test_results_read_and_print_as_they_say():
    r = TestResult("t", 2.5, 0.05, 10, {"df": 9, "note": "a note"})
    assert not r.significant() and r.significant(0.051) and TestResult("t", 1.0, 0.049, 3).significant()
    assert str(r) == "t: statistic=2.5, p=0.05, n=10 (df=9); a note"
    assert str(TestResult("t", 1.0, 0.5, 3)) == "t: statistic=1, p=0.5, n=3"
    assert r.to_dict() == {"test": "t", "statistic": 2.5, "p_value": 0.05, "n": 10, "details": {"df": 9, "note": "a note"}}
    m = mcnemar(*_pairs(7, 2))
    assert m.to_dict()["b"] == 7 and m.to_dict()["exact"] is True
