"""Paired significance tests between two systems scored on the same items.

* :func:`paired_t_test`: ``scipy.stats.ttest_rel`` on per-item correctness, the test the
  figurative-narrative paper (TACL 2022) reported; kept for comparability with it.
* :func:`mcnemar`: McNemar's test on the discordant pairs, the textbook test for two
  classifiers on one test set (exact binomial when the discordant count is small).
* :func:`wilcoxon_signed_rank`: ``scipy.stats.wilcoxon`` for ordinal, human-style scores
  where a t-test's interval assumption does not hold.

Every result says which test (and which variant) produced it, so a result file is
self-describing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from figlang.core.as_dict import AsDict

__all__ = [
    "MCNEMAR_EXACT_BELOW",
    "McNemarResult",
    "TestResult",
    "mcnemar",
    "paired_t_test",
    "wilcoxon_signed_rank",
]

#: Discordant-pair count below which :func:`mcnemar` uses the exact binomial test by default
#: (the usual rule of thumb: the chi-square approximation is poor for b + c < 25).
MCNEMAR_EXACT_BELOW = 25


@dataclass(frozen=True)
class TestResult(AsDict):
    """Outcome of a paired test: statistic, two-sided p-value, number of paired items, and how it was run."""

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    details: dict[str, Any] = field(default_factory=dict)

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.details.items() if k != "note")
        text = f"{self.test}: statistic={self.statistic:.4g}, p={self.p_value:.4g}, n={self.n}"
        if extra:
            text += f" ({extra})"
        if "note" in self.details:
            text += f"; {self.details['note']}"
        return text


@dataclass(frozen=True)
class McNemarResult(TestResult):
    """McNemar's test; ``b`` = items only system A got right, ``c`` = items only system B got right."""

    b: int = 0
    c: int = 0
    exact: bool = True


def _paired_arrays(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"paired tests need two aligned 1-D sequences, got lengths {len(a)} and {len(b)}")
    if x.size == 0:
        raise ValueError("paired test on zero items")
    return x, y


def paired_t_test(correct_a: Sequence[float], correct_b: Sequence[float]) -> TestResult:
    """Paired t-test (``scipy.stats.ttest_rel``) on per-item scores, typically 0/1 correctness.

    When every paired difference is zero scipy returns NaN; that case means "no
    evidence of a difference", so it is reported as statistic 0, p = 1. When every
    difference is the same nonzero value the differences have no variance, so t is
    undefined (scipy gives inf and p = 0, which would read as a certain difference);
    that is reported as statistic and p NaN with a note, never as significant.
    """
    from scipy import stats  # imported on use: scipy.stats costs a second at import

    x, y = _paired_arrays(correct_a, correct_b)
    details: dict[str, Any] = {"mean_a": float(x.mean()), "mean_b": float(y.mean())}
    name = "paired t-test (scipy.stats.ttest_rel)"
    if np.all(x == y):
        details["note"] = "all paired differences are zero"
        return TestResult(name, 0.0, 1.0, int(x.size), details)
    diff = x - y
    if np.all(diff == diff[0]):
        details["df"] = int(x.size) - 1
        details["note"] = f"every paired difference is {float(diff[0]):g}: zero variance, so the t statistic and p-value are undefined"
        return TestResult(name, math.nan, math.nan, int(x.size), details)
    res = stats.ttest_rel(x, y)
    details["df"] = int(res.df)
    return TestResult(name, float(res.statistic), float(res.pvalue), int(x.size), details)


def mcnemar(
    correct_a: Sequence[float],  # per-item correctness: bools, or 1.0/0.0 (read as truth values)
    correct_b: Sequence[float],
    *,
    exact: bool | None = None,
) -> McNemarResult:
    """McNemar's test on two systems' per-item correctness.

    ``exact=None`` picks the exact two-sided binomial test (``scipy.stats.binomtest``,
    statistic = b) when b + c < :data:`MCNEMAR_EXACT_BELOW`, else the chi-square test with
    Edwards' continuity correction, statistic = max(|b - c| - 1, 0)² / (b + c), 1 degree of freedom
    (the correction never pushes the statistic above 0 when b = c).
    """
    from scipy import stats  # imported on use: scipy.stats costs a second at import

    x, y = _paired_arrays([bool(v) for v in correct_a], [bool(v) for v in correct_b])
    b = int(np.sum((x == 1) & (y == 0)))
    c = int(np.sum((x == 0) & (y == 1)))
    n_disc = b + c
    use_exact = n_disc < MCNEMAR_EXACT_BELOW if exact is None else bool(exact)
    details: dict[str, Any] = {"b": b, "c": c, "accuracy_a": float(x.mean()), "accuracy_b": float(y.mean())}
    if n_disc == 0:
        details["note"] = "no discordant pairs"
        name = "McNemar exact binomial" if use_exact else "McNemar chi-square (continuity corrected)"
        statistic, p = 0.0, 1.0
    elif use_exact:
        name = "McNemar exact binomial (scipy.stats.binomtest)"
        statistic, p = float(b), float(stats.binomtest(b, n_disc, 0.5, alternative="two-sided").pvalue)
    else:
        name = "McNemar chi-square with continuity correction"
        statistic = max(abs(b - c) - 1.0, 0.0) ** 2 / n_disc  # b == c: no evidence, not a small positive statistic
        p = float(stats.chi2.sf(statistic, df=1))
    return McNemarResult(name, float(statistic), p, int(x.size), details, b=b, c=c, exact=use_exact)


def wilcoxon_signed_rank(
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    *,
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    method: Literal["auto", "exact", "asymptotic"] = "auto",
) -> TestResult:
    """Two-sided Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) for paired ordinal scores.

    ``zero_method="wilcox"`` (scipy's default) drops tied pairs; when all pairs are tied the
    test is undefined and is reported as statistic 0, p = 1.
    """
    from scipy import stats  # imported on use: scipy.stats costs a second at import

    x, y = _paired_arrays(scores_a, scores_b)
    details: dict[str, Any] = {
        "zero_method": zero_method,
        "method": method,
        "median_difference": float(np.median(x - y)),
        "n_nonzero_differences": int(np.sum(x != y)),
    }
    name = "Wilcoxon signed-rank (scipy.stats.wilcoxon)"
    if np.all(x == y):
        details["note"] = "all paired differences are zero"
        return TestResult(name, 0.0, 1.0, int(x.size), details)
    res = stats.wilcoxon(x, y, zero_method=zero_method, method=method, alternative="two-sided")
    return TestResult(name, float(res.statistic), float(res.pvalue), int(x.size), details)
