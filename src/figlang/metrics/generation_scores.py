"""The harness's generation scores of a run: ROUGE-L, both BLEUs and, when configured, BERTScore.

Above :mod:`figlang.metrics.generation` (the sentence metrics) and :mod:`figlang.metrics.bertscore`
(which builds on them), so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from figlang.metrics.bertscore import BertScore
from figlang.metrics.generation import NltkSentenceBleu, PairwiseMetric, Protocol, RougeL, SacreSentenceBleu, _as_list

__all__ = ["generation_scores_from_records"]


def generation_scores_from_records(records: Sequence[Any], predictions: Mapping[str, Any], options: Any) -> dict[str, Any]:
    """The evaluation harness's entry point: narrative-style generation metrics for scored records.

    ``records`` carry ``id`` and ``references``; ``predictions`` maps id → an object with
    ``prediction`` (a list of samples or one string) and ``valid`` (invalid → no samples, scored 0).
    ``options`` supplies ``generation_protocol`` and, optionally, ``bertscore_model`` /
    ``bertscore_layers``. Records without references (hidden test sets) are left out and counted.
    Keys: ``rougeL`` (0-1), ``bleu`` (the narrative paper's NLTK BLEU, 0-1), ``sacrebleu_sentence``
    (0-100), ``bertscore_f1`` when a BERTScore model is configured, and every metric's config.
    """
    protocol = cast(Protocol, getattr(options, "generation_protocol", "max"))  # each metric refuses an unknown protocol
    with_refs = [r for r in records if tuple(getattr(r, "references", ()) or ())]
    preds: list[list[str]] = []
    refs: list[list[str]] = []
    for r in with_refs:
        p = predictions.get(r.id)
        value = getattr(p, "prediction", None) if p is not None and getattr(p, "valid", True) else None
        preds.append(_as_list(value))
        refs.append(list(r.references))
    out: dict[str, Any] = {
        "protocol": protocol,
        "n_items": len(with_refs),
        "n_without_references": len(records) - len(with_refs),
    }
    if not with_refs:
        return out
    metrics: dict[str, PairwiseMetric] = {
        "rougeL": RougeL(protocol=protocol),
        "bleu": NltkSentenceBleu(protocol=protocol),
        "sacrebleu_sentence": SacreSentenceBleu(protocol=protocol),
    }
    model = getattr(options, "bertscore_model", None)
    if model:
        metrics["bertscore_f1"] = BertScore(model, getattr(options, "bertscore_layers", None), protocol=protocol)
    configs: dict[str, Any] = {}
    for key, metric in metrics.items():
        result = metric.compute(preds, refs)
        out[key] = result.score
        out.setdefault("n_empty_predictions", result.n_empty_predictions)
        configs[key] = result.config
    out["configs"] = configs
    return out
