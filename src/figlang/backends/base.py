"""The language-model backend interface: what every way of running a model must offer.

Methods (``figlang.methods.prompted``) are written against this interface only, so the same
method runs on a local Transformers model, a GGUF file or an OpenAI-compatible endpoint.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from figlang.core.errors import FiglangError


class BackendError(FiglangError):
    """A backend failed to answer (unreachable endpoint, model that cannot score, …)."""


class ModelNotAvailableError(BackendError):
    """A model reference that cannot be loaded here (not installed, not cached, hub unreachable)."""


class CapabilityError(BackendError):
    """The backend cannot do what the method needs (e.g. score log-probabilities)."""


@dataclass(frozen=True)
class ScoreRequest:
    """Log-probability of ``continuation`` given ``context``. Requests sharing a context share its encoding.

    ``joint=True`` tokenizes ``context + continuation`` as one text and takes the continuation's
    tokens as those after the context's own tokens (lm-evaluation-harness's way); by default the
    two are tokenized apart. They differ only where a token would span the boundary.
    """

    context: str
    continuation: str
    joint: bool = False


@dataclass(frozen=True)
class ContinuationScore:
    logprob: float  # sum of the continuation tokens' log-probabilities (natural log)
    n_tokens: int
    n_chars: int
    token_logprobs: tuple[float, ...] = ()
    is_greedy: bool | None = None  # every continuation token was the argmax, where known


@dataclass(frozen=True, kw_only=True)
class Sampling:
    """How a request is continued (a prompt's, or an OpenAI-compatible chat's): length, greedy or sampled, stop
    strings, samples and seed. Given by keyword."""

    max_new_tokens: int = 20
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    n: int = 1  # samples per prompt
    seed: int = 0  # per-request seed: results must not depend on batching
    min_new_tokens: int = 0  # the end token cannot be drawn before this many new tokens (no empty samples)


def sampling_of(request: Sampling) -> dict[str, Any]:
    """A request's sampling options by name, to continue something else the same way."""
    return {f.name: getattr(request, f.name) for f in fields(Sampling)}


@dataclass(frozen=True)
class GenerationRequest(Sampling):
    prompt: str


@dataclass(frozen=True)
class ChatMessage:
    role: str  # system | user | assistant
    content: str


MASK = "{mask}"
"""The blank in a masked-LM pattern (the backend's own mask token is accepted too)."""


@dataclass(frozen=True)
class MaskedScoreRequest:
    """Fill the single blank in ``text`` (written ``{mask}``) with each candidate and score it (masked LMs, PET).

    A candidate is written as it reads in the text (``"right"``, not ``" right"``): the blank's own
    surroundings supply the spaces. A candidate of several tokens gets as many mask tokens.
    """

    text: str
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class ClassificationRequest:
    """A text (or a text pair: premise, hypothesis) for a sequence classifier (e.g. an MNLI model)."""

    text: str
    text_pair: str | None = None


@dataclass
class BackendInfo:
    """What a backend is, for fingerprints and result files."""

    backend: str  # "transformers" | "openai" | …
    model: str  # hub id, path or endpoint model name
    revision: str | None = None  # commit sha or file hash
    kind: str = "causal"  # causal | masked | seq2seq | encoder
    options: dict[str, Any] = field(default_factory=dict)  # dtype, device, quantisation …


weight_loads = 0  # how many times this process loaded a model's weights (a run answered from the cache loads none)


class LazyWeights:
    """A backend whose weights load on first use: what identifies it (``info()``, ``fingerprint()``, hence every
    cache key) comes from its configuration and tokenizer, so a run answered wholly from the cache loads no weights.

    A subclass lists in ``AFTER_WEIGHTS`` the attributes only the weights tell, sets them in ``_load_weights()``,
    and calls ``self.defer_weights()`` at the end of ``__init__``; reading one of them loads the weights once.
    """

    AFTER_WEIGHTS: frozenset[str] = frozenset()

    def defer_weights(self) -> None:
        self.__dict__["_weights"] = "pending"

    def load_weights(self) -> None:
        """Load the weights now if they have not loaded yet (reading any attribute of ``AFTER_WEIGHTS`` does it too)."""
        if self.__dict__.get("_weights") != "pending":
            return
        global weight_loads
        self.__dict__["_weights"] = "loading"
        try:
            self._load_weights()
        except BaseException:
            self.__dict__["_weights"] = "pending"
            raise
        self.__dict__["_weights"] = "loaded"
        weight_loads += 1

    def _load_weights(self) -> None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        if name in type(self).AFTER_WEIGHTS and self.__dict__.get("_weights") == "pending":
            self.load_weights()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def weights_loaded(self) -> bool:
        return self.__dict__.get("_weights") == "loaded"


class LanguageModel(ABC):
    """A model that can score continuations and/or generate text."""

    can_score: bool = True
    can_generate: bool = True

    @abstractmethod
    def info(self) -> BackendInfo:
        """Identity and options of the model (goes into fingerprints and results)."""

    @abstractmethod
    def score(self, requests: Sequence[ScoreRequest]) -> list[ContinuationScore]:
        """Score each continuation given its context. Results must not depend on batch composition."""

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> list[list[str]]:
        """``n`` continuations per request (without the prompt)."""

    def chat_prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt text for a chat, in the model's chat template; raise CapabilityError if it has none."""
        raise CapabilityError(f"{self.info().model} has no chat template")

    @property
    def has_chat_template(self) -> bool:
        return False

    # --- optional capabilities (backends that have them override these) --------------------
    can_score_masked: bool = False
    can_classify: bool = False

    def score_masked(self, requests: Sequence[MaskedScoreRequest]) -> list[list[ContinuationScore]]:
        """Per request, one score per candidate: the log-probability of the candidate's tokens at the blank.

        Masked LMs (BERT, RoBERTa, DeBERTa) only; ``logprob`` sums the candidate's tokens, each predicted
        with all of the candidate's positions masked. Raises CapabilityError elsewhere.
        """
        raise CapabilityError(f"{self.info().model} cannot fill a masked blank (it is not a masked language model)")

    def classify(self, requests: Sequence[ClassificationRequest]) -> list[dict[str, float]]:
        """Per request, the log-probability of each of the classifier's labels (e.g. an MNLI model's three)."""
        raise CapabilityError(f"{self.info().model} is not a sequence classifier")

    def run_notes(self) -> dict[str, Any]:
        """What the backend did differently from what was asked during this run (an endpoint that refused a
        sampling field); recorded in results.json, since the configuration alone would claim otherwise."""
        return {}

    def fingerprint(self) -> dict[str, Any]:
        i = self.info()
        return {"backend": i.backend, "model": i.model, "revision": i.revision, "kind": i.kind, "options": i.options}
