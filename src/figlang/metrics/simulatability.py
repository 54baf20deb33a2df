"""Rationale quality as simulatability: accuracy(IR→O) − accuracy(I→O).

A rationale is useful to the extent that a classifier given the input *and* the rationale
(IR→O) predicts the gold label better than one given the input alone (I→O)
(Hase et al. 2020; Wiegreffe et al. 2021). Reporting it with both predicted and gold
rationales separates "the rationales a model wrote help" from "rationales of this kind could
help". A McNemar test on the two classifiers' per-item correctness comes with each number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from figlang.core.as_dict import AsDict
from figlang.metrics.classification import correctness
from figlang.metrics.significance import McNemarResult, mcnemar

__all__ = ["SimulatabilityResult", "simulatability", "simulatability_report"]


@dataclass(frozen=True)
class SimulatabilityResult(AsDict):
    rationale: str  # which rationales IR→O saw: "predicted", "gold", or a caller's name
    accuracy_with_rationale: float  # IR→O
    accuracy_without_rationale: float  # I→O
    simulatability: float  # the difference, in accuracy points as a fraction
    n: int
    test: McNemarResult

    def __str__(self) -> str:
        return (
            f"simulatability ({self.rationale} rationales) = {100 * self.simulatability:+.2f} points "
            f"(IR→O {100 * self.accuracy_with_rationale:.2f}% vs I→O {100 * self.accuracy_without_rationale:.2f}%, "
            f"n={self.n}; {self.test.test} p={self.test.p_value:.3g})"
        )


def simulatability(
    gold: Sequence[Any],
    predictions_without_rationale: Sequence[Any],
    predictions_with_rationale: Sequence[Any],
    *,
    rationale: str = "predicted",
) -> SimulatabilityResult:
    """accuracy(IR→O) − accuracy(I→O) over the same aligned items; labels are compared with ``==``."""
    if not (len(gold) == len(predictions_without_rationale) == len(predictions_with_rationale)):
        raise ValueError(
            f"aligned lists needed: {len(gold)} gold, {len(predictions_without_rationale)} I→O, "
            f"{len(predictions_with_rationale)} IR→O predictions"
        )
    if not gold:
        raise ValueError("simulatability of zero items is undefined")
    without = correctness(predictions_without_rationale, gold)
    with_r = correctness(predictions_with_rationale, gold)
    acc_with = sum(with_r) / len(with_r)
    acc_without = sum(without) / len(without)
    return SimulatabilityResult(
        rationale=rationale,
        accuracy_with_rationale=acc_with,
        accuracy_without_rationale=acc_without,
        simulatability=acc_with - acc_without,
        n=len(gold),
        test=mcnemar(with_r, without),
    )


def simulatability_report(
    gold: Sequence[Any],
    predictions_without_rationale: Sequence[Any],
    *,
    with_predicted_rationales: Sequence[Any] | None = None,
    with_gold_rationales: Sequence[Any] | None = None,
) -> dict[str, SimulatabilityResult]:
    """Simulatability with predicted and/or gold rationales, keyed ``"predicted"`` / ``"gold"``."""
    if with_predicted_rationales is None and with_gold_rationales is None:
        raise ValueError("give IR→O predictions with predicted rationales, gold rationales, or both")
    out: dict[str, SimulatabilityResult] = {}
    if with_predicted_rationales is not None:
        out["predicted"] = simulatability(gold, predictions_without_rationale, with_predicted_rationales, rationale="predicted")
    if with_gold_rationales is not None:
        out["gold"] = simulatability(gold, predictions_without_rationale, with_gold_rationales, rationale="gold")
    return out
