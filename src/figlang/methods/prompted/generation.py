"""Continuation generation for the narrative benchmark's generative task (TACL 2022, §6).

``generate``: top-k sampling (k=5, temperature 0.7, up to 20 new tokens, stopping at a
sentence end), zero-shot (the narrative is the prompt) or few-shot ("Q: N A: C" with
training examples). Each item gets its own seed (from the run seed and the item id), so
batching and order cannot change what is sampled. The prediction is the list of samples,
each stripped and cut after its first sentence.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import GenerationRecord, Record, strip_markup
from figlang.backends.base import GenerationRequest
from figlang.methods.base import MethodRegistry, Prediction
from figlang.core.options import options_from_signature
from figlang.methods.prompted.common import (
    EXCLUDE_CHOICES,
    ModelMethod,
    excluded_by_figure,
    item_seed,
    parse_choice,
    parse_float,
    parse_int,
    pool_digest,
    same_text,
)
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.parsing import first_sentence


def continuations_prediction(
    record_id: str, raw_samples: list[str], meta: dict[str, Any], after: dict[str, Any] | None = None
) -> Prediction:
    """A generation item's prediction from its sampled continuations: each cut to its first sentence (invalid when
    every one is empty), the uncut samples and whether each sentence ended kept in ``meta`` (``after``: keys that
    follow them there)."""
    cut = [first_sentence(s) for s in raw_samples]
    texts = [t for t, _ in cut]
    valid = any(t for t in texts)
    return Prediction(
        record_id,
        texts,
        raw=raw_samples[0] if raw_samples else None,
        valid=valid,
        error=None if valid else "the model generated no text",
        meta={**meta, "complete": [c for _, c in cut], "raw_samples": raw_samples, **(after or {})},
    )


def _source(record: GenerationRecord) -> str:
    return strip_markup(record.source).strip()


class Generate(ModelMethod):
    """Sample continuations of a narrative (zero-shot, or few-shot with ``shots`` train examples)."""

    name = "generate"
    shapes = ("generation",)

    def __init__(
        self,
        model: Any = None,
        shots: int = 0,
        samples: int = 1,
        top_k: int = 5,
        temperature: float = 0.7,
        max_new_tokens: int = 20,
        min_new_tokens: int = 1,
        seed: int = 0,
        exclude: str = "linked",
        **backend_options: Any,
    ) -> None:
        super().__init__(model, backend_options)
        self.shots = parse_int(shots, "shots", 0)
        self.samples = parse_int(samples, "samples", 1)
        self.top_k = parse_int(top_k, "top_k", 1)
        self.temperature = parse_float(temperature, "temperature")
        if self.temperature <= 0:
            raise FiglangError("option 'temperature' must be positive (this method samples)")
        self.max_new_tokens = parse_int(max_new_tokens, "max_new_tokens", 1)
        self.min_new_tokens = parse_int(min_new_tokens, "min_new_tokens", 0)
        self.seed = parse_int(seed, "seed")
        self.exclude = parse_choice(exclude, "exclude", EXCLUDE_CHOICES)
        self.needs_train = self.shots > 0  # the harness calls fit() with the train split only then
        self.pool: list[GenerationRecord] | None = None
        self.pool_size = 0
        self.pool_sha256: str | None = None

    def fit(self, train: Sequence[Record]) -> None:
        if self.shots == 0:
            return
        pool = [r for r in train if isinstance(r, GenerationRecord) and r.references and r.references[0].strip()]
        if len(pool) < self.shots:
            raise FiglangError(f"generate with shots={self.shots} needs at least {self.shots} train records with references")
        pool = sorted(pool, key=lambda r: r.id)
        random.Random(self.seed).shuffle(pool)
        self.pool = pool
        self.pool_size = len(pool)
        self.pool_sha256 = pool_digest(pool)

    def _excluded(self, example: GenerationRecord, item: GenerationRecord) -> bool:
        if example.id == item.id or same_text(_source(example), _source(item)):
            return True
        return excluded_by_figure(example, item, self.exclude)

    def examples_for(self, item: GenerationRecord) -> list[GenerationRecord]:
        if self.shots == 0:
            return []
        if self.pool is None:
            raise FiglangError("generate with shots > 0 was not fitted: the harness must call fit() with the train split")
        chosen = []
        for ex in self.pool:
            if not self._excluded(ex, item):
                chosen.append(ex)
                if len(chosen) == self.shots:
                    break
        return chosen

    def prompt(self, item: GenerationRecord) -> tuple[str, list[str]]:
        examples = self.examples_for(item)
        if not examples:
            return P.GEN_ZERO_SHOT.format(context=_source(item)), []
        blocks = [P.GEN_FEW_SHOT_EXAMPLE.format(context=_source(ex), continuation=ex.references[0].strip()) for ex in examples]
        query = P.GEN_FEW_SHOT_QUERY.format(context=_source(item))
        return "".join(b + P.GEN_FEW_SHOT_SEPARATOR for b in blocks) + query, [ex.id for ex in examples]

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        items = []
        for r in records:
            if not isinstance(r, GenerationRecord):
                raise FiglangError(f"method {self.name!r} answers generation records, got {type(r).__name__} {getattr(r, 'id', '?')!r}")
            items.append(r)
        self.require("generate")
        requests, metas = [], []
        for r in items:
            prompt, example_ids = self.prompt(r)
            seed = item_seed(self.seed, r.id)
            requests.append(
                GenerationRequest(
                    prompt,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=True,
                    temperature=self.temperature,
                    top_k=self.top_k,
                    stop=P.GEN_STOP,
                    n=self.samples,
                    seed=seed,
                    min_new_tokens=self.min_new_tokens,
                )
            )
            metas.append({"seed": seed, "examples": example_ids})
        outputs = self.lm.generate(requests)
        out = []
        for r, raw_samples, meta in zip(items, outputs, metas):
            raw_samples = list(raw_samples)
            if len(raw_samples) != self.samples:
                raise FiglangError(f"the backend returned {len(raw_samples)} samples for {r.id!r}, expected {self.samples}")
            out.append(continuations_prediction(r.id, raw_samples, meta))
        return out

    def config(self) -> dict[str, Any]:
        templates: dict[str, Any] = {"zero_shot": P.GEN_ZERO_SHOT}
        if self.shots:
            templates.update(example=P.GEN_FEW_SHOT_EXAMPLE, query=P.GEN_FEW_SHOT_QUERY, separator=P.GEN_FEW_SHOT_SEPARATOR)
        return {
            "shots": self.shots,
            "samples": self.samples,
            "top_k": self.top_k,
            "temperature": self.temperature,
            "max_new_tokens": self.max_new_tokens,
            "min_new_tokens": self.min_new_tokens,
            "seed": self.seed,
            "seeding": "sha256(seed:item id)",
            "exclude": self.exclude,
            "stop": list(P.GEN_STOP),
            "postprocess": "first non-empty line, cut after its first sentence",
            "pool_size": self.pool_size,
            "pool_sha256": self.pool_sha256,
            "templates": templates,
            **self.model_config(),
        }


GENERATE_OPTIONS = options_from_signature(
    Generate,
    {
        "shots": "solved train examples before the item (0: zero-shot)",
        "samples": "continuations sampled an item",
        "top_k": "top-k sampling's k",
        "temperature": "sampling temperature",
        "max_new_tokens": "tokens a continuation at most",
        "min_new_tokens": "tokens a continuation at least (1: no empty samples)",
        "seed": "seed of the samples (per item: sha256(seed:item id))",
        "exclude": "which examples never go with an item: linked, expression or item",
    },
    {"exclude": EXCLUDE_CHOICES},
)


def register(registry: MethodRegistry) -> None:
    """Add this module's methods to ``registry`` (called by the registry on first use)."""
    registry.add(
        Generate,
        "Sample continuations (top-k 5, temperature 0.7, 20 tokens, one sentence); -O shots=0|N samples=N seed=N top_k temperature max_new_tokens min_new_tokens (default 1: no empty samples).",
        options=GENERATE_OPTIONS,
    )
