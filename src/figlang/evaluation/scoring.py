"""Turn aligned predictions into the papers' metrics, per task shape.

Invalid predictions (unparseable answers, labels outside the set) count as wrong and are
reported; items without a prediction are excluded only in partial scoring, and the
coverage is reported beside every number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.records import CONTRADICTION, ENTAILMENT, ClozeRecord, GenerationRecord, NLIPair, Record
from ..metrics.classification import Accuracy
from ..models.base import Prediction

#: The label set FLUTE's explanation score is defined on (its scorer refuses any other gold label).
FLUTE_LABEL_SET = frozenset((ENTAILMENT, CONTRADICTION))


@dataclass
class MetricOptions:
    """Metric configuration for a run; everything here is recorded in the results file."""

    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    generation_protocol: str = "max"  # narrative paper: max over samples × references
    bertscore_model: str | None = None  # None: skip BERTScore (it needs a large model)
    bertscore_layers: int | None = None
    bleurt_checkpoint: str | None = None  # None: skip BLEURT (FLUTE explanation score needs both)
    bleurt_head_seed: int | None = None  # only for a bare encoder as BLEURT stand-in (tests): seeds its untrained head
    explanation_semantics: str = "shared-task"  # or "paper"
    extra: dict[str, Any] = field(default_factory=dict)

    def accuracy(self) -> Accuracy:
        return Accuracy(n_resamples=self.n_resamples, confidence=self.confidence, seed=self.seed)


def is_correct(record: Record, prediction: Prediction | None) -> bool | None:
    """Per-item correctness; None for generation items (no single right answer)."""
    if isinstance(record, GenerationRecord):
        return None
    if prediction is None or not prediction.valid:
        return False
    return prediction.prediction == record.label


def _acc_dict(result) -> dict[str, Any]:
    return {"accuracy": result.accuracy, "n": result.n, "n_correct": result.n_correct,
            "ci_low": result.ci_low, "ci_high": result.ci_high}  # fmt: skip


def score(
    records: list[Record], predictions: dict[str, Prediction], group_by: tuple[str, ...], options: MetricOptions,
    labels: Sequence[str] = (),
) -> dict[str, Any]:  # fmt: skip
    """Metrics for the records that have predictions (callers decide what to do about missing ones).

    ``labels`` is the task's closed label set (NLI), which decides whether FLUTE's explanation
    score applies; without it the gold labels of the records decide.
    """
    scored = [r for r in records if r.id in predictions]
    if not scored:
        return {"n_scored": 0}
    first = scored[0]
    out: dict[str, Any] = {"n_scored": len(scored), "n_invalid": sum(not predictions[r.id].valid for r in scored)}
    if isinstance(first, (ClozeRecord, NLIPair)):
        metric = options.accuracy()
        correct = [bool(is_correct(r, predictions[r.id])) for r in scored]
        out["accuracy"] = _acc_dict(metric.from_correctness(correct))
        out["by_gold_label"] = _grouped(scored, correct, lambda r: _gold_name(r), metric)
        for name in group_by:
            out[f"by_{name}"] = _grouped(scored, correct, lambda r, n=name: getattr(r, n, None), metric)
        if isinstance(first, ClozeRecord):
            out["prediction_balance"] = _balance(predictions[r.id].prediction for r in scored)
        if isinstance(first, NLIPair) and any(predictions[r.id].explanation is not None for r in scored):
            out["explanations"] = _explanation_metrics(scored, predictions, options, labels)
    else:
        out["generation"] = _generation_metrics(scored, predictions, options)
    return out


def _gold_name(record: Record) -> str:
    if isinstance(record, ClozeRecord):
        return f"option{record.label + 1}" if record.label is not None else "unknown"
    return str(record.label)


def _balance(values) -> dict[str, int]:
    from collections import Counter

    counts = Counter("invalid" if v is None else str(v) for v in values)
    return dict(sorted(counts.items()))


def _grouped(records: list[Record], correct: list[bool], key, metric: Accuracy) -> dict[str, Any]:
    buckets: dict[str, list[bool]] = {}
    for r, c in zip(records, correct):
        k = key(r)
        buckets.setdefault("unknown" if k is None else str(k), []).append(c)
    return {k: _acc_dict(metric.from_correctness(v)) for k, v in sorted(buckets.items())}


def _flute_mismatch(records: list[Record], labels: Sequence[str]) -> str | None:
    """Why FLUTE's explanation score cannot be computed on these records (None: it can).

    It compares each predicted explanation with a gold one and is defined on entailment vs
    contradiction only, so an IMPLI run (non-entailment, no gold explanations) that generated
    explanations gets label accuracy alone instead of a crash in the FLUTE scorer.
    """
    label_set = set(labels) or {r.label for r in records if isinstance(r, NLIPair)}
    if not label_set <= FLUTE_LABEL_SET:
        outside = ", ".join(sorted(str(x) for x in label_set - FLUTE_LABEL_SET))
        return f"not computed: FLUTE's explanation score is defined on entailment/contradiction, and this task's labels include {outside}"
    missing = sum(1 for r in records if not (isinstance(r, NLIPair) and r.explanation))
    if missing:
        return f"not computed: {missing} of {len(records)} gold items have no gold explanation to compare with"
    return None


def _explanation_metrics(
    records: list[Record], predictions: dict[str, Prediction], options: MetricOptions, labels: Sequence[str] = (),
) -> dict[str, Any]:  # fmt: skip
    """FLUTE Acc@0/50/60 when the task has FLUTE's labels and gold explanations and both explanation metric models
    are configured; else say why not (the generated explanations stay in the predictions either way)."""
    mismatch = _flute_mismatch(records, labels)
    if mismatch is not None:
        n_explained = sum(1 for r in records if r.id in predictions and predictions[r.id].explanation is not None)
        return {"computed": False, "reason": mismatch, "n_with_explanation": n_explained}
    if not (options.bertscore_model and options.bleurt_checkpoint):
        return {
            "computed": False,
            "reason": "FLUTE's explanation score needs BERTScore and BLEURT models: pass --bertscore-model and --bleurt-checkpoint",
        }
    from ..metrics.flute import flute_scores_from_records

    return flute_scores_from_records(records, predictions, options)


def _generation_metrics(records: list[Record], predictions: dict[str, Prediction], options: MetricOptions) -> dict[str, Any]:
    from ..metrics.generation import generation_scores_from_records

    return generation_scores_from_records(records, predictions, options)
