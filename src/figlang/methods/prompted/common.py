"""What the model-backed methods share: the in-process backend cache (:func:`backend_for`), option
parsers, per-item seeds, few-shot pool rules and :class:`ModelMethod`.

Its own module so that the methods (:mod:`.cloze`, :mod:`.generation`, :mod:`.nli`, :mod:`.explain`)
and the package, which registers them, do not import each other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import expression_of
from figlang.data.splits import narrative_links
from figlang.backends.base import CapabilityError, ChatMessage, LanguageModel, LazyWeights
from figlang.methods.base import Method
from figlang.backends.cache import cache_key
from figlang.backends.backend_cache import backend_for, clear_backends  # noqa: F401  (re-exported: methods import it from here)
from figlang.core.options import parse_bool, parse_choice, parse_float, parse_int  # noqa: F401  (re-exported: methods import them from here)


def item_seed(seed: int, record_id: str) -> int:
    """A per-item seed from the run seed and the item id: batching and order cannot change it."""
    digest = hashlib.sha256(f"{seed}:{record_id}".encode()).hexdigest()
    return int(digest[:8], 16)


EXCLUDE_CHOICES = ("item", "expression", "linked")


def excluded_by_figure(example: Any, item: Any, exclude: str) -> bool:
    """Whether a training example shares the item's figure under the ``exclude`` rule.

    ``expression``: the same expression (case and spacing aside). ``linked`` (default): also its
    spelling variants and idioms with the same gloss ("to the hilt" / "up to the hilt"), the links
    the expression-disjoint splits are carved by, so a few-shot prompt on a disjoint split never
    shows the held-out idiom under another spelling. ``item``: nothing beyond the item itself
    (callers always exclude the item and its own narrative).
    """
    if exclude == "expression":
        e = expression_of(example)
        return e is not None and e == expression_of(item)
    if exclude == "linked":
        return bool(set(narrative_links(example)) & set(narrative_links(item)))
    return False


def pool_digest(pool: Sequence[Any] | None) -> str | None:
    """A sha256 of the training examples a method may show (ids, texts, labels, in pool order).

    Part of a few-shot method's configuration, hence of its cache fingerprint: a train split
    edited to other examples of the same size must not answer from predictions cached with the old
    ones."""
    if pool is None:
        return None
    return cache_key("example-pool", [r.to_dict() for r in pool])


def same_text(a: str, b: str) -> bool:
    """Whether two texts are the same up to case and whitespace (an example must never be the item itself)."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def argmax_first(scores: Sequence[float]) -> tuple[int, bool]:
    """Index of the highest score, the lowest index on ties; and whether there was a tie."""
    best = max(scores)
    winners = [i for i, s in enumerate(scores) if s == best]
    return winners[0], len(winners) > 1


class ModelMethod(Method):
    """A method that asks a language model: lazy backend, chat-or-plain prompts, config with model identity.

    Keyword options a method does not know are backend options (``batch_size``, ``dtype``,
    ``device`` …) and go to :func:`backend_for`; they are recorded in ``config()``.
    """

    def __init__(self, model: str | LanguageModel | None, backend_options: dict[str, Any] | None = None) -> None:
        if model is None or (isinstance(model, str) and not model.strip()):
            raise FiglangError(f"method {self.name!r} needs a model: pass --model (a catalog name, hub id, local path or endpoint)")
        self.model = model
        self.backend_options = dict(backend_options or {})
        self._lm: LanguageModel | None = None

    @property
    def lm(self) -> LanguageModel:
        if self._lm is None:
            self._lm = backend_for(self.model, **self.backend_options)
        return self._lm

    def run_notes(self) -> dict[str, Any]:
        return self._lm.run_notes() if self._lm is not None else {}  # a backend never loaded did nothing to note

    def load(self) -> None:
        if isinstance(self.lm, LazyWeights):
            self.lm.load_weights()

    def model_config(self) -> dict[str, Any]:
        """Model identity for the fingerprint: the reference, the backend's fingerprint and the backend
        options that can change answers (speed-only options the backend lists in ``runtime_options()``,
        such as ``batch_size``, are left out so that they share cached answers)."""
        name = self.model if isinstance(self.model, str) else self.lm.info().model
        runtime = getattr(self.lm, "runtime_options", None)
        speed_only = set(runtime()) if callable(runtime) else set()
        options = {k: v for k, v in sorted(self.backend_options.items()) if k not in speed_only}
        return {"model": name, "backend": self.lm.fingerprint(), "backend_options": options}

    def use_chat(self, chat: str) -> bool:
        """Resolve a chat option: 'auto' uses the chat template when the model has one."""
        if chat == "auto":
            return bool(self.lm.has_chat_template)
        if chat == "true" and not self.lm.has_chat_template:
            raise CapabilityError(f"chat=true but {self.lm.info().model} has no chat template; use chat=false or chat=auto")
        return chat == "true"

    def chat(self, user: str) -> str:
        """The prompt text of one user turn with the assistant's answer to follow."""
        return self.lm.chat_prompt([ChatMessage("user", user)])

    def require(self, capability: str) -> None:
        if capability == "score" and not getattr(self.lm, "can_score", True):
            raise CapabilityError(f"method {self.name!r} scores continuations, but {self.lm.info().model} cannot score log-probabilities")
        if capability == "generate" and not getattr(self.lm, "can_generate", True):
            raise CapabilityError(f"method {self.name!r} generates text, but {self.lm.info().model} cannot generate")


def parse_chat(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return parse_choice(value, "chat", ("auto", "true", "false"))
