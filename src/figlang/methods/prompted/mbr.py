"""Minimum-Bayes-risk choice among candidate texts: the one that agrees most with the others.

Sampled candidates spread around what a model finds likely; the candidate with the highest mean
similarity to the rest is the one with the least expected loss under that spread (Kumar and Byrne
2004; Freitag et al. 2022 for sampled candidates). The similarity is ROUGE-L F1 from rouge-score
with figlang's pinned configuration (``figlang.metrics.RougeL``), the measure FLUTE's explanations
are reported in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from figlang.metrics.generation import PairwiseMetric, RougeL


def mbr_choice(candidates: Sequence[str], utility: PairwiseMetric | None = None) -> tuple[int, list[float]]:
    """The index of the candidate with the highest mean ``utility`` against every other, and each candidate's mean.

    Ties go to the earliest candidate (put the greedy text first). One candidate is chosen as it is."""
    n = len(candidates)
    if n == 0:
        raise ValueError("mbr_choice needs at least one candidate")
    if n == 1:
        return 0, [0.0]
    metric = utility or RougeL()
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    scores = metric.score_pairs([candidates[i] for i, _ in pairs], [candidates[j] for _, j in pairs])
    means = [0.0] * n
    for (i, _), s in zip(pairs, scores):
        means[i] += float(s) / (n - 1)
    best = max(range(n), key=lambda i: (means[i], -i))
    return best, means


def mbr_config(utility: PairwiseMetric | None = None) -> dict[str, Any]:
    """What a run records about the choice (the utility's pinned configuration)."""
    return {
        "rule": "the candidate with the highest mean utility against the other candidates; ties to the earliest (greedy)",
        "utility": (utility or RougeL()).config(),
    }
