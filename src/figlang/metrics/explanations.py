"""How close generated FLUTE explanations are to the gold ones: ROUGE-L, BLEU, BERTScore, per pair and by figure type.

Every pair in the denominator: a missing, empty or invalid explanation scores 0 on every measure
(skipping hard pairs cannot raise a mean). ROUGE-L F1 is rouge-score's default (no stemming),
the measure the FLUTE repository's released predictions score about 34.5 on against the test gold;
BLEU is sacrebleu's sentence BLEU (13a, exp smoothing) and its corpus BLEU; BERTScore F1 uses
whichever encoder the caller gives (its layer and configuration are recorded, and it is marked
comparable to the paper only for deberta-large-mnli at its default layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from figlang.metrics.generation import CorpusBleu, RougeL, SacreSentenceBleu

__all__ = ["ExplanationRow", "explanation_quality"]


@dataclass(frozen=True)
class ExplanationRow:
    id: str
    figure_type: str | None
    gold: str
    predicted: str | None  # None or empty: no explanation (scores 0)
    correct: bool | None = None  # label correctness, where known


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(rows: Sequence[ExplanationRow], per: dict[str, dict[str, float]], corpus: CorpusBleu) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for key in ("rougeL_f1", "bleu", "bertscore_f1"):
        vals = [per[r.id][key] for r in rows if key in per[r.id]]
        if vals:
            mean = _mean(vals)
            assert mean is not None  # vals is not empty
            out[key] = round(100 * mean, 2) if key != "bleu" else round(mean, 2)
    out["corpus_bleu"] = round(corpus.compute([r.predicted or "" for r in rows], [r.gold for r in rows]).score, 2)
    known = [r.correct for r in rows if r.correct is not None]
    if known:
        out["label_accuracy"] = round(100 * sum(known) / len(known), 2)
    out["empty_explanations"] = sum(1 for r in rows if not (r.predicted or "").strip())
    return out


def explanation_quality(rows: Sequence[ExplanationRow], bertscore: Any | None = None) -> dict[str, Any]:
    """Per-pair scores and means overall and by figure type (ROUGE-L and BERTScore F1 ×100, BLEU 0–100)."""
    rouge, bleu, corpus = RougeL(), SacreSentenceBleu(), CorpusBleu()
    preds = [(r.predicted or "").strip() for r in rows]
    golds = [r.gold for r in rows]
    per: dict[str, dict[str, float]] = {r.id: {} for r in rows}
    for r, p, value in zip(rows, preds, rouge.score_pairs(preds, golds)):
        per[r.id]["rougeL_f1"] = value if p else 0.0
    for r, p, value in zip(rows, preds, bleu.score_pairs(preds, golds)):
        per[r.id]["bleu"] = value if p else 0.0
    config: dict[str, Any] = {
        "rougeL": rouge.config(),
        "bleu": bleu.config(),
        "corpus_bleu": corpus.config(),
        "bertscore": None,
        "missing_or_empty": "scored 0 on every measure",
    }
    if bertscore is not None:
        for r, value in zip(rows, bertscore.score(preds, golds).f1):
            per[r.id]["bertscore_f1"] = float(value)
        config["bertscore"] = {**bertscore.config(), "comparable_to_paper": bool(bertscore.comparable_to_published)}
    types = sorted({r.figure_type or "unknown" for r in rows})
    return {
        "overall": _group(rows, per, corpus),
        "by_figure_type": {t: _group([r for r in rows if (r.figure_type or "unknown") == t], per, corpus) for t in types},
        "config": config,
        "per_pair": {i: {k: round(v, 4) for k, v in d.items()} for i, d in per.items()},
    }
