"""How to answer: the Method interface every answering strategy implements.

Following lm-evaluation-harness, tasks (``figlang.data``) say *what* to ask and methods
say *how* to answer. A method turns records of one shape into Predictions; it exposes a
JSON-able ``fingerprint()`` (method, configuration, model identity) that keys the request
cache and goes into every results file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from ..data.errors import FiglangError
from ..data.records import Record, Shape


@dataclass
class Prediction:
    """One answer. ``valid=False`` marks an answer that could not be parsed (never silently replaced)."""

    id: str
    prediction: Any  # cloze: option index; nli: label string; generation: list of sampled continuations
    scores: list[float] | dict[str, float] | None = None  # per-option or per-label scores, when the method has them
    explanation: str | None = None  # FLUTE-style explanation
    raw: str | None = None  # the model's raw output, when it generated text
    valid: bool = True
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        known = {k: d[k] for k in ("id", "prediction", "scores", "explanation", "raw", "valid", "error", "meta") if k in d}
        return cls(**known)


class Method(ABC):
    """An answering strategy for one or more task shapes."""

    name: ClassVar[str]
    shapes: ClassVar[tuple[Shape, ...]]
    needs_train: bool = False  # the harness calls fit() with the task's train split first (an instance may decide)

    def bind(self, task: Any) -> None:  # noqa: B027  (optional hook)
        """Learn what the task offers before predicting (its label set, its name); called once by the harness."""

    def fit(self, train: Sequence[Record]) -> None:  # noqa: B027  (optional hook)
        """Use training records (baselines that count labels, few-shot example pools)."""

    @abstractmethod
    def predict(self, records: Sequence[Record]) -> list[Prediction]:
        """Answer a batch of records, in order. Must not depend on how records are batched."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The method's configuration (JSON-able), model identity included."""

    def run_notes(self) -> dict[str, Any]:
        """What the model's backend did differently from what was asked (empty for most runs)."""
        return {}

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this method's answers: name and configuration (keys the request cache)."""
        return {"method": self.name, **self.config()}

    def check_shape(self, shape: Shape, task_name: str) -> None:
        if shape not in self.shapes:
            raise FiglangError(
                f"method {self.name!r} answers {', '.join(self.shapes)} tasks, but {task_name!r} is a {shape} task; "
                "run `figlang methods` to see which methods fit"
            )


MethodFactory = Callable[..., Method]


@dataclass(frozen=True)
class MethodInfo:
    name: str
    shapes: tuple[Shape, ...]
    factory: MethodFactory
    description: str
    needs_model: bool


class MethodRegistry:
    """Methods by name, created with ``create(name, model=..., **options)``."""

    def __init__(self) -> None:
        self._methods: dict[str, MethodInfo] = {}

    def register(self, name: str, shapes: tuple[Shape, ...], description: str, needs_model: bool = True):
        def deco(factory: MethodFactory) -> MethodFactory:
            if name in self._methods:
                raise FiglangError(f"method {name!r} is registered twice")
            self._methods[name] = MethodInfo(name, shapes, factory, description, needs_model)
            return factory

        return deco

    def info(self, name: str) -> MethodInfo:
        if name not in self._methods:
            import difflib

            close = difflib.get_close_matches(name, list(self._methods), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise FiglangError(f"unknown method {name!r}.{hint} Run `figlang methods` for the list.")
        return self._methods[name]

    def create(self, name: str, model: str | None = None, **options: Any) -> Method:
        info = self.info(name)
        if info.needs_model and not model:
            raise FiglangError(f"method {name!r} needs a model: pass --model (a catalog name, hub id, local path or endpoint)")
        return info.factory(model=model, **options) if info.needs_model else info.factory(**options)

    def __iter__(self):
        return iter(self._methods.values())


METHODS = MethodRegistry()


def get_methods() -> MethodRegistry:
    """The registry with every built-in method imported (registration happens on import)."""
    from . import baselines  # noqa: F401

    import importlib.util

    if importlib.util.find_spec("figlang.models.methods") is not None:  # model-backed methods
        importlib.import_module("figlang.models.methods")
    return METHODS
