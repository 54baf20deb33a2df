"""Nearest training pairs by an offline sentence encoder: the examples a few-shot explainer is shown.

FLUTE's authors wrote explanations by prompting with solved examples like the item at hand;
``PairIndex`` finds such examples among the train pairs: the pairs whose text (premise and
hypothesis) is closest to the item's under a sentence encoder (``minilm`` by default:
mean-pooled, L2-normalised, cosine similarity), optionally of the same figure type and label.

The pool's embeddings are computed once and kept on disk, keyed by the encoder's identity and a
checksum of the pool's texts (``<cache>/retrieval/``), so a rerun, or a second process, loads
them in milliseconds; an edited train split gets new embeddings, never stale ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.paths import default_cache_dir
from figlang.data.records import NLIPair
from figlang.core.progress import route_transformers_bars
from figlang.backends.cache import cache_key
from figlang.backends.loading import resolve

DEFAULT_ENCODER = "minilm"
EMBEDDING_FORMAT = 1  # bump when pair_text or the pooling changes: old files are then ignored


KEYS = ("pair", "hypothesis", "premise")  # what is embedded for a pair; the first is the default


def pair_text(premise: str, hypothesis: str, key: str = KEYS[0]) -> str:
    """What is embedded for a pair: its two sentences (``key="pair"``) or one of them, whitespace-normalised."""
    text = {"pair": f"{premise} {hypothesis}", "hypothesis": hypothesis, "premise": premise}[key]
    return " ".join(text.split())


def _norm(text: str) -> str:
    """A sentence as compared for sameness: lower case, whitespace normalised."""
    return " ".join(text.lower().split())


class SentenceEncoder:
    """A sentence encoder from the model catalog (or a local directory): mean pooling over the last layer, unit length."""

    def __init__(self, reference: str = DEFAULT_ENCODER, threads: int | None = None, batch_size: int = 64) -> None:
        resolved = resolve(reference)
        self.reference = reference
        self.name = resolved.name
        self.revision = resolved.revision
        self.batch_size = batch_size
        import torch
        import transformers

        if threads:
            torch.set_num_threads(int(threads))
        route_transformers_bars()
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(resolved.path, local_files_only=bool(resolved.local_files_only))
            self.model = transformers.AutoModel.from_pretrained(resolved.path, local_files_only=bool(resolved.local_files_only))
        except (OSError, ValueError) as err:
            raise FiglangError(f"cannot load the sentence encoder {reference!r} from {resolved.path}: {err}") from err
        self.model.eval()

    def identity(self) -> dict[str, Any]:
        return {"encoder": self.name, "revision": self.revision, "pooling": "mean", "normalised": True, "format": EMBEDDING_FORMAT}

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings, one row per text (numpy float32)."""
        import numpy as np
        import torch

        rows = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    list(texts[start : start + self.batch_size]), padding=True, truncation=True, max_length=256, return_tensors="pt"
                )
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                rows.append(torch.nn.functional.normalize(pooled, dim=-1).float().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)


_ENCODERS: dict[str, SentenceEncoder] = {}


def encoder_for(reference: str = DEFAULT_ENCODER) -> SentenceEncoder:
    """One loaded encoder per reference in this process."""
    if reference not in _ENCODERS:
        _ENCODERS[reference] = SentenceEncoder(reference)
    return _ENCODERS[reference]


@dataclass(frozen=True)
class Neighbour:
    pair: NLIPair
    similarity: float


class PairIndex:
    """Train pairs with their embeddings; ``nearest`` returns the k most similar to a query pair."""

    def __init__(
        self, pool: Sequence[NLIPair], encoder: str = DEFAULT_ENCODER, cache_dir: str | Path | None = None, key: str = KEYS[0]
    ) -> None:
        self.pool = [r for r in pool if r.explanation and r.explanation.strip() and r.label]
        if not self.pool:
            raise FiglangError("retrieval needs train pairs with labels and gold explanations; the pool has none")
        if key not in KEYS:
            raise FiglangError(f"unknown retrieval key {key!r}: one of {', '.join(KEYS)}")
        self.encoder_ref, self.key = encoder, key
        self.encoder = encoder_for(encoder)
        self.texts = [pair_text(r.premise, r.hypothesis, key) for r in self.pool]
        self.pool_sha256 = cache_key(
            "retrieval-pool", [[r.id, t, r.label, r.figure_type, r.explanation] for r, t in zip(self.pool, self.texts)]
        )
        self.directory = Path(cache_dir) if cache_dir else default_cache_dir() / "retrieval"
        self.path = self.directory / f"{cache_key(self.encoder.identity(), self.pool_sha256)[:32]}.npy"
        self.embeddings = self._embeddings()
        self._queries: dict[str, Any] = {}
        import numpy as np

        # each pool pair's sentences as compared for sameness, once (nearest() excludes the query's own premise and hypothesis)
        self._premises = np.array([_norm(r.premise) for r in self.pool], dtype=object)
        self._hypotheses = np.array([_norm(r.hypothesis) for r in self.pool], dtype=object)
        self._types = np.array([r.figure_type for r in self.pool], dtype=object)
        self._labels = np.array([r.label for r in self.pool], dtype=object)

    def _embeddings(self) -> Any:
        import numpy as np

        if self.path.is_file():
            try:
                emb = np.load(self.path)
                if emb.shape[0] == len(self.pool):
                    return emb
            except (OSError, ValueError):
                pass  # a damaged file is recomputed below
        emb = self.encoder.encode(self.texts).astype(np.float32)
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, emb)
        os.replace(tmp, self.path)  # atomic: a reader never sees half a file
        return emb

    def config(self) -> dict[str, Any]:
        return {
            **self.encoder.identity(),
            "pool_size": len(self.pool),
            "pool_sha256": self.pool_sha256,
            "text": "premise + ' ' + hypothesis" if self.key == "pair" else self.key,
        }

    def query_vector(self, premise: str, hypothesis: str) -> Any:
        text = pair_text(premise, hypothesis, self.key)
        if text not in self._queries:
            self._queries[text] = self.encoder.encode([text])[0]
        return self._queries[text]

    def nearest(self, premise: str, hypothesis: str, k: int, figure_type: str | None = None, label: str | None = None) -> list[Neighbour]:
        """The ``k`` most similar pool pairs (highest cosine first, pool order on ties).

        Never the pair itself nor any pair with the same premise (its sibling would give the answer
        away); only pairs of ``figure_type`` and ``label`` when given (falling back to all pairs when
        too few match)."""
        import numpy as np

        sims = self.embeddings @ self.query_vector(premise, hypothesis)
        allowed = (self._premises != _norm(premise)) & (self._hypotheses != _norm(hypothesis))
        order = np.argsort(-sims, kind="stable")
        for strict in ((figure_type, label), (figure_type, None), (None, None)):
            ft, lb = strict
            keep = allowed & (self._types == ft if ft is not None else True) & (self._labels == lb if lb is not None else True)
            chosen = [int(i) for i in order[keep[order]][:k]]
            if len(chosen) == k or strict == (None, None):
                return [Neighbour(self.pool[i], float(sims[i])) for i in chosen]
        return []  # pragma: no cover - the loop always returns


__all__ = ["DEFAULT_ENCODER", "KEYS", "Neighbour", "PairIndex", "SentenceEncoder", "encoder_for", "pair_text"]
