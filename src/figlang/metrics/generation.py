"""Reference-based generation metrics: ROUGE-L, BLEU (sacrebleu and the narrative paper's NLTK BLEU).

Each metric wraps the library that defines it (Google's ``rouge-score``, ``sacrebleu``,
``nltk``) and records its exact configuration in ``config()``.

Items may have several predictions (samples) and several references. The figurative
narrative paper (TACL 2022) scored an item by the best sample×reference pair, so
``protocol="max"`` takes the maximum over all pairs of an item; ``protocol="mean"``
averages over them. Either way the corpus score is the mean over items, and the protocol
is recorded.

Empty (whitespace-only) predictions never reach the library: such a pair scores 0 and
is counted in ``n_empty_predictions``. An empty reference string is handled the same way
(counted in ``n_empty_references``); an item with *no* references is a gold-data error.
"""

from __future__ import annotations

import importlib.metadata
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from figlang.core.as_dict import AsDict

__all__ = [
    "CorpusBleu",
    "CorpusBleuResult",
    "GenerationScore",
    "NltkSentenceBleu",
    "PairwiseMetric",
    "Protocol",
    "RougeL",
    "SacreSentenceBleu",
]

Protocol = Literal["max", "mean"]
PROTOCOLS: tuple[str, ...] = ("max", "mean")

Texts = str | Sequence[str]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - installed with figlang
        return "unknown"


def library_config(dist: str) -> dict[str, str]:
    """A metric config's ``library`` and ``library_version`` entries: the distribution that computes the metric."""
    return {"library": dist, "library_version": _version(dist)}


def _as_list(value: Texts | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [("" if v is None else str(v)) for v in value]


def _is_empty(text: str) -> bool:
    return not text or not text.strip()


@dataclass(frozen=True)
class GenerationScore:
    """Corpus score (mean over items) plus the per-item scores and the bookkeeping of empties."""

    metric: str
    score: float
    per_item: tuple[float, ...]
    n_items: int
    n_predictions: int
    n_empty_predictions: int
    n_empty_references: int
    protocol: str
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["per_item"] = list(self.per_item)
        return d

    def __str__(self) -> str:
        text = f"{self.metric} = {self.score:.4f} over {self.n_items} items (protocol={self.protocol})"
        if self.n_empty_predictions:
            text += f", {self.n_empty_predictions} empty prediction(s) scored 0"
        if self.n_empty_references:
            text += f", {self.n_empty_references} empty reference(s)"
        return text


class PairwiseMetric(ABC):
    """A metric defined on one (prediction, reference) pair, aggregated per item by a protocol.

    Subclasses implement :meth:`score_pairs` (batched, so model-based metrics can batch)
    and :meth:`_config`.
    """

    name: str = "pairwise"

    def __init__(self, *, protocol: Protocol = "max"):
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
        self.protocol: Protocol = protocol

    @abstractmethod
    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        """Score aligned, non-empty (prediction, reference) pairs."""

    @abstractmethod
    def _config(self) -> dict[str, Any]:
        """Metric-specific settings for :meth:`config`."""

    def config(self) -> dict[str, Any]:
        return {
            "metric": self.name,
            "protocol": self.protocol,
            "empty_prediction_score": 0.0,
            **self._config(),
        }

    def compute(self, predictions: Sequence[Texts], references: Sequence[Texts]) -> GenerationScore:
        """Score items: ``predictions[i]`` (one string or a list of samples) against ``references[i]``."""
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} prediction items for {len(references)} reference items")
        items: list[tuple[list[str], list[str]]] = []
        for i, (p, r) in enumerate(zip(predictions, references)):
            refs = _as_list(r)
            if not refs:
                raise ValueError(f"item {i} has no reference")
            items.append((_as_list(p), refs))

        # Collect every non-empty pair once, score in one batched call, then aggregate.
        pair_pred: list[str] = []
        pair_ref: list[str] = []
        n_predictions = n_empty_pred = n_empty_ref = 0
        for samples, refs in items:
            n_predictions += max(len(samples), 1)
            n_empty_pred += sum(_is_empty(s) for s in samples) if samples else 1
            n_empty_ref += sum(_is_empty(r) for r in refs)
            for s in samples:
                for r in refs:
                    if not _is_empty(s) and not _is_empty(r):
                        pair_pred.append(s)
                        pair_ref.append(r)
        scores = iter(self.score_pairs(pair_pred, pair_ref) if pair_pred else [])

        per_item: list[float] = []
        for samples, refs in items:
            values = [(0.0 if _is_empty(s) or _is_empty(r) else float(next(scores))) for s in samples for r in refs] or [0.0]
            per_item.append(max(values) if self.protocol == "max" else sum(values) / len(values))
        corpus = sum(per_item) / len(per_item) if per_item else 0.0
        return GenerationScore(
            metric=self.name,
            score=corpus,
            per_item=tuple(per_item),
            n_items=len(per_item),
            n_predictions=n_predictions,
            n_empty_predictions=n_empty_pred,
            n_empty_references=n_empty_ref,
            protocol=self.protocol,
            config=self.config(),
        )

    __call__ = compute


class RougeL(PairwiseMetric):
    """ROUGE-L (longest common subsequence, no sentence splitting) via Google's ``rouge-score``.

    Default: F-measure, ``use_stemmer=False`` (the library's and HF ``evaluate``'s default),
    scale 0-1.
    """

    name = "rougeL"

    def __init__(
        self,
        *,
        use_stemmer: bool = False,
        measure: Literal["fmeasure", "precision", "recall"] = "fmeasure",
        protocol: Protocol = "max",
    ):
        super().__init__(protocol=protocol)
        if measure not in ("fmeasure", "precision", "recall"):
            raise ValueError(f"measure must be fmeasure, precision or recall, got {measure!r}")
        from rouge_score import rouge_scorer

        self.use_stemmer = use_stemmer
        self.measure = measure
        self._scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)

    def _config(self) -> dict[str, Any]:
        return {
            **library_config("rouge-score"),
            "rouge_type": "rougeL",
            "use_stemmer": self.use_stemmer,
            "measure": self.measure,
            "tokenizer": "rouge_score default (lowercase, non-alphanumerics removed)",
            "scale": "0-1",
        }

    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        # RougeScorer.score(target, prediction): the reference comes first.
        return [float(getattr(self._scorer.score(r, p)["rougeL"], self.measure)) for p, r in zip(predictions, references)]


class SacreSentenceBleu(PairwiseMetric):
    """Sentence-level BLEU via ``sacrebleu`` (``BLEU.sentence_score``), scale 0-100.

    Default settings are sacrebleu's recommendation for sentence scores: 13a tokenizer,
    ``exp`` smoothing, effective order on. The signature string is recorded.
    """

    name = "sacrebleu_sentence"

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        smooth_method: str = "exp",
        lowercase: bool = False,
        effective_order: bool = True,
        protocol: Protocol = "max",
    ):
        super().__init__(protocol=protocol)
        from sacrebleu.metrics import BLEU

        self._bleu = BLEU(tokenize=tokenize, smooth_method=smooth_method, lowercase=lowercase, effective_order=effective_order)
        # sacrebleu only knows the reference count (part of the signature) after scoring once.
        self._bleu.sentence_score("signature", ["signature"])
        self.signature = self._bleu.get_signature().format()

    def _config(self) -> dict[str, Any]:
        return {**library_config("sacrebleu"), "signature": self.signature, "scale": "0-100"}

    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        return [float(self._bleu.sentence_score(p, [r]).score) for p, r in zip(predictions, references)]


class NltkSentenceBleu(PairwiseMetric):
    """The narrative paper's BLEU: ``nltk`` ``sentence_bleu`` with ``SmoothingFunction().method1``, scale 0-1.

    Tokenisation is whitespace splitting (``nltk.word_tokenize`` needs the punkt data,
    which figlang cannot assume is installed); uniform 4-gram weights.
    """

    name = "nltk_bleu"

    def __init__(
        self,
        *,
        lowercase: bool = False,
        weights: tuple[float, ...] = (0.25, 0.25, 0.25, 0.25),
        protocol: Protocol = "max",
    ):
        super().__init__(protocol=protocol)
        from nltk.translate.bleu_score import SmoothingFunction

        self.lowercase = lowercase
        self.weights = tuple(float(w) for w in weights)
        self._smoothing = SmoothingFunction().method1

    def _config(self) -> dict[str, Any]:
        return {
            **library_config("nltk"),
            "function": "nltk.translate.bleu_score.sentence_bleu",
            "smoothing": "SmoothingFunction().method1",
            "weights": list(self.weights),
            "tokenizer": "whitespace",
            "lowercase": self.lowercase,
            "scale": "0-1",
        }

    def _tokens(self, text: str) -> list[str]:
        return (text.lower() if self.lowercase else text).split()

    def score_pairs(self, predictions: Sequence[str], references: Sequence[str]) -> list[float]:
        from nltk.translate.bleu_score import sentence_bleu

        return [
            float(sentence_bleu([self._tokens(r)], self._tokens(p), weights=self.weights, smoothing_function=self._smoothing))
            for p, r in zip(predictions, references)
        ]


@dataclass(frozen=True)
class CorpusBleuResult(AsDict):
    score: float
    signature: str
    n_items: int
    n_empty_predictions: int
    config: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"BLEU = {self.score:.2f} ({self.signature}) over {self.n_items} items"


class CorpusBleu:
    """Corpus BLEU via ``sacrebleu`` (``BLEU.corpus_score``), one prediction per item, any number of references.

    Items with fewer references than others are padded with ``None`` (sacrebleu's
    variable-reference support); empty predictions are kept as empty hypotheses, which
    sacrebleu scores as contributing no n-gram matches, and are counted.
    """

    def __init__(self, *, tokenize: str = "13a", smooth_method: str = "exp", lowercase: bool = False):
        from sacrebleu.metrics import BLEU

        self.tokenize = tokenize
        self.smooth_method = smooth_method
        self.lowercase = lowercase
        self._bleu = BLEU(tokenize=tokenize, smooth_method=smooth_method, lowercase=lowercase)

    def config(self) -> dict[str, Any]:
        return {
            "metric": "sacrebleu_corpus",
            **library_config("sacrebleu"),
            "tokenize": self.tokenize,
            "smooth_method": self.smooth_method,
            "lowercase": self.lowercase,
            "scale": "0-100",
        }

    def compute(self, predictions: Sequence[str], references: Sequence[Texts]) -> CorpusBleuResult:
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions for {len(references)} reference items")
        if not predictions:
            raise ValueError("corpus BLEU of zero items is undefined")
        hyps: list[str] = []
        for p in predictions:
            if not isinstance(p, str) and p is not None:
                raise TypeError("CorpusBleu takes one prediction string per item; use a sentence-level metric for samples")
            hyps.append("" if p is None else p)
        refs = [_as_list(r) for r in references]
        for i, r in enumerate(refs):
            if not r:
                raise ValueError(f"item {i} has no reference")
        width = max(len(r) for r in refs)
        streams: list[list[str | None]] = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
        # sacrebleu reads None as "no reference in this stream" (items with fewer references); its annotation says str
        result = self._bleu.corpus_score(hyps, streams)  # type: ignore[arg-type]
        signature = self._bleu.get_signature().format()
        return CorpusBleuResult(
            score=float(result.score),
            signature=signature,
            n_items=len(hyps),
            n_empty_predictions=sum(_is_empty(h) for h in hyps),
            config={**self.config(), "signature": signature},
        )

    __call__ = compute
