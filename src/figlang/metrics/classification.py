"""Accuracy with a bootstrap confidence interval, overall and per group.

Benchmarks here have a few hundred to a few thousand items, so a single accuracy
number hides a spread of several points; every accuracy carries a percentile
bootstrap CI (``scipy.stats.bootstrap``) whose seed and resample count are recorded
so a result file can be reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from figlang.core.as_dict import AsDict

__all__ = ["Accuracy", "AccuracyResult", "accuracy", "accuracy_by_group", "correctness"]


def correctness(predictions: Sequence[Any], gold: Sequence[Any]) -> list[bool]:
    """Per-item ``prediction == gold``; the shared input of accuracy and the paired tests."""
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} predictions for {len(gold)} gold labels; they must be aligned item by item")
    return [p is not None and p == g for p, g in zip(predictions, gold)]


@dataclass(frozen=True)
class AccuracyResult(AsDict):
    """Accuracy (a fraction in [0, 1]) with its bootstrap CI and the settings that produced it."""

    accuracy: float
    n: int
    n_correct: int
    ci_low: float
    ci_high: float
    confidence: float
    n_resamples: int
    seed: int
    method: str = "percentile bootstrap (scipy.stats.bootstrap)"
    n_clusters: int | None = None  # resampled units when items were resampled in clusters (None: items)

    def __str__(self) -> str:
        return (
            f"accuracy {100 * self.accuracy:.2f}% ({self.n_correct}/{self.n}), "
            f"{100 * self.confidence:g}% CI [{100 * self.ci_low:.2f}, {100 * self.ci_high:.2f}]"
        )


class Accuracy:
    """Accuracy metric object: CI settings in the constructor, ``compute`` on aligned label lists."""

    def __init__(self, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
        if n_resamples < 1:
            raise ValueError("n_resamples must be at least 1")
        if not 0.0 < confidence < 1.0:
            raise ValueError("confidence must be in (0, 1)")
        self.n_resamples = int(n_resamples)
        self.confidence = float(confidence)
        self.seed = int(seed)

    def config(self) -> dict[str, Any]:
        return {
            "metric": "accuracy",
            "ci_method": "percentile bootstrap (scipy.stats.bootstrap)",
            "n_resamples": self.n_resamples,
            "confidence": self.confidence,
            "seed": self.seed,
        }

    def compute(self, predictions: Sequence[Any], gold: Sequence[Any]) -> AccuracyResult:
        return self.from_correctness(correctness(predictions, gold))

    __call__ = compute

    def from_correctness(self, correct: Sequence[bool], clusters: Sequence[Hashable] | None = None) -> AccuracyResult:
        """Accuracy of per-item 0/1 outcomes (for callers that decide correctness themselves).

        ``clusters`` (one key per item) resamples whole clusters instead of items: IMPLI's pairs of one premise,
        or the two options of one narrative, are not independent, and an item bootstrap makes their CI too
        narrow. The statistic is then the pooled accuracy of the resampled clusters (a ratio estimator)."""
        from scipy import stats  # imported on use: scipy.stats costs a second at import, which every command paid

        values = np.asarray(correct, dtype=float)
        n = int(values.size)
        if n == 0:
            raise ValueError("accuracy of zero items is undefined")
        acc = float(values.mean())
        n_clusters = None
        if clusters is not None:
            if len(clusters) != n:
                raise ValueError(f"{len(clusters)} cluster keys for {n} items")
            index: dict[Hashable, int] = {}
            ids = np.asarray([index.setdefault(c, len(index)) for c in clusters])
            n_clusters = len(index)
            sums, sizes = np.bincount(ids, weights=values), np.bincount(ids).astype(float)
        if n == 1 or np.all(values == values[0]) or n_clusters == 1:
            # Every resample has the same mean; scipy warns about degenerate data, the CI is the point.
            low = high = acc
        elif n_clusters is not None:
            res = stats.bootstrap(
                (sums, sizes),
                lambda a, b, axis=-1: a.sum(axis=axis) / b.sum(axis=axis),
                paired=True,
                vectorized=True,
                n_resamples=self.n_resamples,
                confidence_level=self.confidence,
                method="percentile",
                rng=np.random.default_rng(self.seed),
            )
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        else:
            res = stats.bootstrap(
                (values,),
                np.mean,
                n_resamples=self.n_resamples,
                confidence_level=self.confidence,
                method="percentile",
                rng=np.random.default_rng(self.seed),
            )
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        return AccuracyResult(
            accuracy=acc,
            n=n,
            n_correct=int(values.sum()),
            ci_low=low,
            ci_high=high,
            confidence=self.confidence,
            n_resamples=self.n_resamples,
            seed=self.seed,
            n_clusters=n_clusters,
        )


def accuracy(
    predictions: Sequence[Any],
    gold: Sequence[Any],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> AccuracyResult:
    """Accuracy with a percentile bootstrap CI (functional form of :class:`Accuracy`)."""
    return Accuracy(n_resamples=n_resamples, confidence=confidence, seed=seed).compute(predictions, gold)


def accuracy_by_group(
    predictions: Sequence[Any],
    gold: Sequence[Any],
    groups: Sequence[Hashable | None],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, AccuracyResult]:
    """Accuracy per group (e.g. figure type), keyed by ``str(group)``; ``None`` groups go to ``"unknown"``."""
    correct = correctness(predictions, gold)
    if len(groups) != len(correct):
        raise ValueError(f"{len(groups)} group labels for {len(correct)} items")
    buckets: dict[str, list[bool]] = {}
    for c, g in zip(correct, groups):
        buckets.setdefault("unknown" if g is None else str(g), []).append(c)
    metric = Accuracy(n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {name: metric.from_correctness(buckets[name]) for name in sorted(buckets)}
