"""Literal cohesion, and the stack that adds it to the use model.

The use model reads the sentence with the idiom's words masked (:mod:`.use_label`), so it sees only one half of
lexical cohesion (Sporleder & Li 2009): whether the context goes with the idiom's *meaning*. The other half, that a
literal use sits among words related to the idiom's *own* words ("kicked the bucket across the yard and the water
spilled"), is what this module measures: the mean, over the idiom's content words, of their highest cosine
similarity to a content word of the rest of the sentence, in MiniLM's word embeddings (the base model the use model
is built on, mean-pooled and normalised as sentence-transformers does for all-MiniLM-L6-v2).

:class:`CohesionStack` is a logistic regression over the use model's logit and that cohesion, fit on the use model's
``selection`` uses by ``benchmarks/fit_use_stack.py``, which writes it as ``stack.json`` beside the use model's
adapter. A use model folder without that file is used alone.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.backends.loading import resolve
from figlang.core.errors import FiglangError

STACK_FILE = "stack.json"
EMBEDDER = "minilm"  # the catalog encoder whose word embeddings the cohesion reads
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class CohesionStack:
    """P(figurative) = sigmoid(use_weight * use model logit + cohesion_weight * literal cohesion + intercept);
    figurative when P >= threshold."""

    use_weight: float
    cohesion_weight: float
    intercept: float
    threshold: float

    def probability(self, use_logit: float, cohesion: float) -> float:
        z = self.use_weight * use_logit + self.cohesion_weight * cohesion + self.intercept
        return 1.0 / (1.0 + math.exp(-z))


def read_stack(folder: str | Path) -> CohesionStack | None:
    """The stack shipped beside a use model (``stack.json``), or None when the folder has none."""
    path = Path(folder) / STACK_FILE
    if not path.is_file():
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        return CohesionStack(**{k: float(obj["stack"][k]) for k in ("use_weight", "cohesion_weight", "intercept", "threshold")})
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise FiglangError(f"{path}: not a use-model stack ({err}); rebuild it with benchmarks/fit_use_stack.py") from None


def use_logit(probability: float) -> float:
    """The use model's P(figurative) as a logit, clipped at 1e-6 as the stack was fit."""
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def cohesion_words(sentence: str, idiom: str, stop: frozenset[str], forms) -> tuple[list[str], list[str]]:
    """(the idiom's content words, the rest of the sentence's content words): lower case, three letters or more, not
    in ``stop``; a sentence word that is a form of an idiom word (``forms(word)``) is the idiom's, not the context's."""
    own = [w for w in _WORD.findall(idiom.lower()) if w not in stop and len(w) > 2]
    drop: set[str] = set()
    for w in own:
        drop |= forms(w)
    context = [w for w in _WORD.findall(sentence.lower()) if w not in stop and len(w) > 2 and w not in drop]
    return own, context


class WordEmbedder:
    """MiniLM's embedding of single words (mean over the word's tokens, normalised), loaded on first use, each word
    embedded once per process."""

    def __init__(self, model: str = EMBEDDER) -> None:
        self.model_name = model
        self._parts: tuple[Any, Any] | None = None
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        if self._parts is None:
            from transformers import AutoModel, AutoTokenizer

            path = resolve(self.model_name).path
            self._parts = (AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval())
        return self._parts

    def vectors(self, words: Sequence[str]) -> dict[str, Any]:
        import torch

        with self._lock:
            new = sorted({w for w in words if w not in self._cache})
            if new:
                tokenizer, model = self._load()
                with torch.no_grad():
                    batch = tokenizer(new, padding=True, return_tensors="pt")
                    hidden = model(**batch).last_hidden_state
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                    pooled = torch.nn.functional.normalize(pooled, dim=-1)
                self._cache.update(zip(new, pooled))
            return {w: self._cache[w] for w in words}


def literal_cohesion(own: Sequence[str], context: Sequence[str], embedder: WordEmbedder) -> float:
    """Mean over the idiom's words of their highest cosine similarity to a context word; 0 when either is empty."""
    if not own or not context:
        return 0.0
    import torch

    vec = embedder.vectors([*own, *context])
    a = torch.stack([vec[w] for w in own])
    b = torch.stack([vec[w] for w in context])
    return float((a @ b.T).max(dim=1).values.mean())
