"""Trivial baselines: the floor every model must beat, and a sanity check on the harness.

A result that looks too good is a bug until proven otherwise; these give the numbers a
model-free guess gets (always-first ≈ 50% on the balanced cloze sets, majority ≈ 56% on FLUTE).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.options import options_from_signature
from figlang.data.records import ClozeRecord, NLIPair, Record
from figlang.methods.base import Method, MethodRegistry, Prediction


class _GuessEach(Method):
    """A baseline that guesses each record on its own: an option index for cloze, a label of ``labels`` (given, or
    the task's) for NLI."""

    labels: tuple[str, ...]

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:
        self.labels = self.labels or tuple(task.labels)

    def guess(self, record: Record) -> int | str:
        """The answer to one record."""
        raise NotImplementedError

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        return [Prediction(r.id, self.guess(r)) for r in records]


class AlwaysFirst(_GuessEach):
    name = "always-first"
    shapes = ("cloze", "nli")

    def __init__(self, labels: Sequence[str] = ()) -> None:
        self.labels = tuple(labels)

    def guess(self, record: Record) -> int | str:
        if isinstance(record, ClozeRecord):
            return 0
        if not self.labels:
            raise FiglangError("always-first needs the task's label set for NLI tasks")
        return self.labels[0]

    def config(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}


class LongerOption(Method):
    """Pick the longest continuation (in characters): measures a length artifact in the options."""

    name = "longer-option"
    shapes = ("cloze",)

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        out = []
        for r in records:
            assert isinstance(r, ClozeRecord)
            lengths = [float(len(o)) for o in r.options]
            out.append(Prediction(r.id, max(range(len(lengths)), key=lambda i: (lengths[i], -i)), scores=lengths))
        return out

    def config(self) -> dict[str, Any]:
        return {"length": "characters", "ties": "first"}


class Majority(Method):
    """The most frequent gold answer of the training split (label for NLI, answer position for cloze)."""

    name = "majority"
    shapes = ("cloze", "nli")
    needs_train = True

    def __init__(self) -> None:
        self.answer: Any = None
        self.train_counts: dict[str, int] = {}

    def fit(self, train: Sequence[Record]) -> None:
        labelled = cast("Sequence[ClozeRecord | NLIPair]", train)  # the shapes it takes (check_shape)
        labels = [r.label for r in labelled if r.label is not None and not getattr(r, "label_is_placeholder", False)]
        if not labels:
            raise FiglangError("majority needs a labelled train split")
        counts = Counter(labels)
        self.answer = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[0][0]
        self.train_counts = {str(k): v for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))}

    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        if self.answer is None:
            raise FiglangError("majority was not fitted: the harness must call fit() with the train split")
        return [Prediction(r.id, self.answer) for r in records]

    def config(self) -> dict[str, Any]:
        return {"answer": self.answer, "train_counts": self.train_counts}


class RandomGuess(_GuessEach):
    """A seeded coin: per-item randomness derived from the item id, so batching cannot change it."""

    name = "random"
    shapes = ("cloze", "nli")

    def __init__(self, seed: int = 0, labels: Sequence[str] = ()) -> None:
        self.seed = seed
        self.labels = tuple(labels)

    def guess(self, record: Record) -> int | str:
        rng = random.Random(f"{self.seed}:{record.id}")
        if isinstance(record, ClozeRecord):
            return rng.randrange(len(record.options))
        assert isinstance(record, NLIPair)
        return rng.choice(self.labels)

    def config(self) -> dict[str, Any]:
        return {"seed": self.seed, "labels": list(self.labels)}


def register(registry: MethodRegistry) -> None:
    """Add the baselines to ``registry`` (called by the registry on first use; importing registers nothing)."""
    labels = {"labels": "the label set (default: the task's)"}
    baselines: tuple[tuple[type[Method], str, dict[str, str]], ...] = (
        (AlwaysFirst, "Always the first option / first label.", labels),
        (LongerOption, "The longest continuation (length-artifact check).", {}),
        (Majority, "The most frequent answer of the train split.", {}),
        (RandomGuess, "A seeded random guess (chance level).", {**labels, "seed": "seed of the guesses"}),
    )
    for cls, about, option_help in baselines:
        registry.add(cls, about, needs_model=False, options=options_from_signature(cls, option_help))
