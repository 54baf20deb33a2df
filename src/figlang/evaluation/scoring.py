"""Turn aligned predictions into the papers' metrics, per task shape.

Invalid predictions (unparseable answers, labels outside the set) count as wrong and are
reported; items without a prediction are excluded only in partial scoring, and the
coverage is reported beside every number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.hygiene import context_key
from figlang.data.records import CONTRADICTION, ENTAILMENT, ClozeRecord, GenerationRecord, NLIPair, Record, expression_of
from figlang.metrics.classification import Accuracy
from figlang.metrics.flute import flute_scores_from_records
from figlang.metrics.generation_scores import generation_scores_from_records
from figlang.methods.base import Prediction

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
    ci_cluster: str | None = None  # resample CIs by "context" (premise / narrative) or "expression"; None: by item
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_ci_cluster(self.ci_cluster)

    def accuracy(self) -> Accuracy:
        return Accuracy(n_resamples=self.n_resamples, confidence=self.confidence, seed=self.seed)


#: What a bootstrap CI may resample instead of items: the papers resample items (None), but IMPLI derives several
#: pairs from one premise and one idiom, and a narrative's options share it, so items are not independent.
CI_CLUSTERS: dict[str | None, str] = {
    None: "items",
    "context": "pairs sharing a premise (NLI) or narrative (cloze) resampled together",
    "expression": "pairs sharing an idiom or simile resampled together (items without one: alone)",
}


def check_ci_cluster(unit: str | None) -> None:
    if unit not in CI_CLUSTERS:
        raise FiglangError(f"unknown CI cluster {unit!r}: use {', '.join(k for k in CI_CLUSTERS if k)} (or none)")


def cluster_key(unit: str, item_id: str, context: str | None, expression: str | None) -> str:
    """The resampling cluster of one item, from its normalised context (``hygiene.context_key``) or its expression;
    an item without one is a cluster of its own. Scoring (records) and `figlang compare` (prediction rows) share it."""
    check_ci_cluster(unit)
    if unit == "context":
        return f"ctx:{context}" if context else f"id:{item_id}"
    return f"expr:{expression}" if expression else f"id:{item_id}"


def cluster_keys(records: Sequence[Record], unit: str | None) -> list[str] | None:
    """One resampling-cluster key per record (None: resample items)."""
    if unit is None:
        return None
    return [cluster_key(unit, r.id, context_key(r), expression_of(r)) for r in records]


def is_correct(record: Record, prediction: Prediction | None) -> bool | None:
    """Per-item correctness; None for generation items (no single right answer)."""
    if isinstance(record, GenerationRecord):
        return None
    if prediction is None or not prediction.valid:
        return False
    return prediction.prediction == record.label


def _acc_dict(result) -> dict[str, Any]:
    out = {"accuracy": result.accuracy, "n": result.n, "n_correct": result.n_correct, "ci_low": result.ci_low, "ci_high": result.ci_high}
    if result.n_clusters is not None:
        out["n_clusters"] = result.n_clusters
    return out


def score(
    records: list[Record],
    predictions: dict[str, Prediction],
    group_by: tuple[str, ...],
    options: MetricOptions,
    labels: Sequence[str] = (),
) -> dict[str, Any]:
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
        clusters = cluster_keys(scored, options.ci_cluster)
        out["accuracy"] = _acc_dict(metric.from_correctness(correct, clusters))
        out["by_gold_label"] = _grouped(scored, correct, lambda r: _gold_name(r), metric, clusters)
        for name in group_by:
            out[f"by_{name}"] = _grouped(scored, correct, lambda r, n=name: getattr(r, n, None), metric, clusters)
        if isinstance(first, ClozeRecord):
            out["prediction_balance"] = _balance(predictions[r.id].prediction for r in scored)
        if isinstance(first, NLIPair) and any(predictions[r.id].explanation is not None for r in scored):
            out["explanations"] = _explanation_metrics(scored, predictions, options, labels)
    else:
        out["generation"] = _generation_metrics(scored, predictions, options)
    return out


def _gold_name(record: ClozeRecord | NLIPair) -> str:
    if isinstance(record, ClozeRecord):
        return f"option{record.label + 1}" if record.label is not None else "unknown"
    return str(record.label)


def _balance(values) -> dict[str, int]:
    from collections import Counter

    counts = Counter("invalid" if v is None else str(v) for v in values)
    return dict(sorted(counts.items()))


def _grouped(records: list[Record], correct: list[bool], key, metric: Accuracy, clusters: list[str] | None = None) -> dict[str, Any]:
    buckets: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        k = key(r)
        buckets.setdefault("unknown" if k is None else str(k), []).append(i)
    return {
        k: _acc_dict(metric.from_correctness([correct[i] for i in idx], None if clusters is None else [clusters[i] for i in idx]))
        for k, idx in sorted(buckets.items())
    }


def _flute_mismatch(records: list[Record], labels: Sequence[str]) -> str | None:
    """Why FLUTE's explanation score cannot be computed on these records (None: it can).

    It compares each predicted explanation with a gold one and is defined on entailment vs
    contradiction only, so an IMPLI run (non-entailment, no gold explanations) that generated
    explanations gets label accuracy alone instead of a crash in the FLUTE scorer.
    """
    label_set: set[str | None] = set(labels) or {r.label for r in records if isinstance(r, NLIPair)}
    if not label_set <= FLUTE_LABEL_SET:
        outside = ", ".join(sorted(str(x) for x in label_set - FLUTE_LABEL_SET))
        return f"not computed: FLUTE's explanation score is defined on entailment/contradiction, and this task's labels include {outside}"
    missing = sum(1 for r in records if not (isinstance(r, NLIPair) and r.explanation))
    if missing:
        return f"not computed: {missing} of {len(records)} gold items have no gold explanation to compare with"
    return None


def _explanation_metrics(
    records: list[Record],
    predictions: dict[str, Prediction],
    options: MetricOptions,
    labels: Sequence[str] = (),
) -> dict[str, Any]:
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

    return flute_scores_from_records(records, predictions, options)


def _generation_metrics(records: list[Record], predictions: dict[str, Prediction], options: MetricOptions) -> dict[str, Any]:
    return generation_scores_from_records(records, predictions, options)
