"""BERTScore via ``bert_score.BERTScorer``, pinned to the FLUTE configuration by default.

Paper configuration (FLUTE, EMNLP 2022, and its shared task): ``microsoft/deberta-large-mnli``
at bert_score's default layer for it (``model2layers`` = 18), idf off, no baseline
rescaling. Any model id or local path can replace it; models outside bert_score's layer
table need an explicit ``num_layers``. Scores from anything but the paper configuration
are flagged ``comparable_to_published=False``.

Two guards around bert_score 0.3.13 on current transformers:

* the deberta-large-mnli tokenizer reports a ``model_max_length`` of ~1e30; bert_score
  passes it as ``max_length`` and long inputs then fail (``OverflowError: int too big to
  convert``) or overrun the 512 position embeddings. The tokenizer's limit is capped at
  ``min(max_length, model's max_position_embeddings)`` so inputs are truncated instead.
* bert_score encodes an empty string with ``build_inputs_with_special_tokens``, which
  transformers 5 tokenizers no longer have. Pairs with an empty candidate or reference are
  therefore never sent to the model: they score P = R = F1 = 0 and are counted.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from figlang.metrics.generation import PairwiseMetric, Protocol, library_config, _is_empty

__all__ = ["PAPER_BERTSCORE_MODEL", "BertScore", "BertScoreResult"]

PAPER_BERTSCORE_MODEL = "microsoft/deberta-large-mnli"


@dataclass(frozen=True)
class BertScoreResult:
    """Per-pair precision/recall/F1 (aligned with the inputs) and their means."""

    precision: tuple[float, ...]
    recall: tuple[float, ...]
    f1: tuple[float, ...]
    hash: str
    n_empty: int
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def mean_f1(self) -> float:
        return sum(self.f1) / len(self.f1) if self.f1 else 0.0

    @property
    def mean_precision(self) -> float:
        return sum(self.precision) / len(self.precision) if self.precision else 0.0

    @property
    def mean_recall(self) -> float:
        return sum(self.recall) / len(self.recall) if self.recall else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(mean_precision=self.mean_precision, mean_recall=self.mean_recall, mean_f1=self.mean_f1)
        return d

    def __str__(self) -> str:
        return f"BERTScore F1 = {self.mean_f1:.4f} over {len(self.f1)} pairs ({self.hash})"


class BertScore(PairwiseMetric):
    """BERTScore metric object; the model is loaded in the constructor so ``config()`` is complete.

    ``compute`` (from :class:`PairwiseMetric`) aggregates F1 over samples×references with
    the chosen protocol; :meth:`score` returns P/R/F1 for aligned candidate/reference pairs.
    """

    name = "bertscore_f1"

    def __init__(
        self,
        model_type: str | os.PathLike[str] = PAPER_BERTSCORE_MODEL,
        num_layers: int | None = None,
        *,
        batch_size: int = 16,
        device: str | None = None,
        max_length: int = 512,
        use_fast_tokenizer: bool = False,
        protocol: Protocol = "max",
    ):
        super().__init__(protocol=protocol)
        from bert_score import BERTScorer
        from bert_score.utils import get_hash, model2layers

        model_type = str(model_type)
        self.default_layer = model2layers.get(model_type)
        if num_layers is None:
            if self.default_layer is None:
                raise ValueError(
                    f"bert_score has no default layer for {model_type!r} (it is not in bert_score.utils.model2layers); "
                    "pass num_layers explicitly, e.g. the model's number of hidden layers"
                )
            num_layers = self.default_layer
        if num_layers < 0:
            raise ValueError(f"num_layers must be >= 0, got {num_layers}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model_type = model_type
        self.num_layers = int(num_layers)
        self.batch_size = int(batch_size)
        self.use_fast_tokenizer = use_fast_tokenizer
        if device is None:
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device

        try:
            self._scorer = BERTScorer(
                model_type=model_type,
                num_layers=self.num_layers,
                batch_size=self.batch_size,
                idf=False,
                device=device,
                rescale_with_baseline=False,
                use_fast_tokenizer=use_fast_tokenizer,
            )
        except AssertionError as exc:  # bert_score checks num_layers with assert
            raise ValueError(f"bert_score rejected num_layers={self.num_layers} for {model_type!r}: {exc}") from exc

        # Guard the huge model_max_length (deberta-large-mnli reports ~1e30): cap and truncate.
        tokenizer = self._scorer._tokenizer  # bert_score keeps the tokenizer private; no public accessor
        model_limit = getattr(getattr(self._scorer._model, "config", None), "max_position_embeddings", None)
        limits = [int(max_length)]
        if isinstance(tokenizer.model_max_length, int) and tokenizer.model_max_length > 0:
            limits.append(tokenizer.model_max_length)
        if isinstance(model_limit, int) and model_limit > 0:
            limits.append(model_limit)
        self.tokenizer_reported_max_length = tokenizer.model_max_length
        self.max_length = min(limits)
        tokenizer.model_max_length = self.max_length
        self.tokenizer_class = type(tokenizer).__name__
        self.hash = get_hash(model_type, self.num_layers, False, False, False, use_fast_tokenizer)

    @property
    def comparable_to_published(self) -> bool:
        """Only deberta-large-mnli at bert_score's default layer with the slow tokenizer (the FLUTE set-up)."""
        return self.model_type == PAPER_BERTSCORE_MODEL and self.num_layers == self.default_layer and not self.use_fast_tokenizer

    def _config(self) -> dict[str, Any]:
        return {
            **library_config("bert-score"),
            "transformers_version": importlib.metadata.version("transformers"),
            "hash": self.hash,
            "model_type": self.model_type,
            "num_layers": self.num_layers,
            "default_layer": self.default_layer,
            "idf": False,
            "rescale_with_baseline": False,
            "use_fast_tokenizer": self.use_fast_tokenizer,
            "tokenizer_class": self.tokenizer_class,
            "max_length": self.max_length,
            "tokenizer_reported_max_length": str(self.tokenizer_reported_max_length),
            "batch_size": self.batch_size,
            "device": self.device,
            "score_reported": "F1",
            "empty_pair_score": 0.0,
            "comparable_to_published": self.comparable_to_published,
        }

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> BertScoreResult:
        """P/R/F1 of aligned (candidate, reference) pairs; empty pairs score 0 without touching the model."""
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates for {len(references)} references")
        cands = ["" if c is None else str(c) for c in candidates]
        refs = ["" if r is None else str(r) for r in references]
        keep = [i for i, (c, r) in enumerate(zip(cands, refs)) if not _is_empty(c) and not _is_empty(r)]
        p = [0.0] * len(cands)
        r_ = [0.0] * len(cands)
        f = [0.0] * len(cands)
        if keep:
            P, R, F = self._scorer.score([cands[i] for i in keep], [refs[i] for i in keep], batch_size=self.batch_size)
            for j, i in enumerate(keep):
                p[i], r_[i], f[i] = float(P[j]), float(R[j]), float(F[j])
        return BertScoreResult(
            precision=tuple(p),
            recall=tuple(r_),
            f1=tuple(f),
            hash=self.hash,
            n_empty=len(cands) - len(keep),
            config=self.config(),
        )

    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        return list(self.score(predictions, references).f1)
