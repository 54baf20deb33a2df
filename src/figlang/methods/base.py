"""How to answer: the Method interface every answering strategy implements.

Following lm-evaluation-harness, tasks (``figlang.data``) say *what* to ask and methods
say *how* to answer. A method turns records of one shape into Predictions; it exposes a
JSON-able ``fingerprint()`` (method, configuration, model identity) that keys the request
cache and goes into every results file.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from figlang.core.as_dict import AsDict
from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.records import Record, Shape
from figlang.core.plugins import entry_point_objects
from figlang.backends.options import Selection, backend_of, backend_options_cls
from figlang.core.options import check_options, option_names


@dataclass
class Prediction(AsDict):
    """One answer. ``valid=False`` marks an answer that could not be parsed (never silently replaced)."""

    id: str
    prediction: Any  # cloze: option index; nli: label string; generation: list of sampled continuations
    scores: list[float] | dict[str, float] | None = None  # per-option or per-label scores, when the method has them
    explanation: str | None = None  # FLUTE-style explanation
    raw: str | None = None  # the model's raw output, when it generated text
    valid: bool = True
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        known = {k: d[k] for k in ("id", "prediction", "scores", "explanation", "raw", "valid", "error", "meta") if k in d}
        return cls(**known)


class Method(ABC):
    """An answering strategy for one or more task shapes."""

    name: ClassVar[str]
    shapes: ClassVar[tuple[Shape, ...]]
    needs_train: bool = False  # the harness calls fit() with the task's train split first (an instance may decide)

    def bind(self, task: Any, ctx: RunContext | None = None) -> None:  # noqa: B027  (optional hook)
        """Learn what the task offers before predicting (its label set, its name) and the run's context (its data
        folder, for methods that read more than the task's records); called once by the harness (see :func:`bind_method`)."""

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

    def load(self) -> None:  # noqa: B027  (optional hook)
        """Load the method's model weights now. They load on first use otherwise (so that a run answered wholly from
        the cache loads none); a server or a benchmark calls this so that the first answer costs only the answer."""

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this method's answers: name and configuration (keys the request cache)."""
        return {"method": self.name, **self.config()}

    def check_shape(self, shape: Shape, task_name: str) -> None:
        if shape not in self.shapes:
            raise FiglangError(
                f"method {self.name!r} answers {', '.join(self.shapes)} tasks, but {task_name!r} is a {shape} task; "
                "run `figlang methods` to see which methods fit"
            )


def bind_method(method: Method, task: Any, ctx: RunContext | None) -> None:
    """``method.bind(task, ctx)``; a plugin's method whose ``bind`` takes the task alone (figlang before the run
    context) gets ``bind(task)``, so plugins written against the older interface keep working."""
    try:
        params = list(inspect.signature(method.bind).parameters.values())
    except (TypeError, ValueError):
        params = []
    takes_ctx = len(params) >= 2 or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    if takes_ctx:
        method.bind(task, ctx)
    else:
        method.bind(task)


MethodFactory = Callable[..., Method]


@dataclass(frozen=True)
class MethodInfo:
    name: str
    shapes: tuple[Shape, ...]
    factory: MethodFactory
    description: str
    needs_model: bool
    options: type | None = None  # the method's options dataclass (figlang.core.options); None: a plugin's, unchecked
    backend_options: bool = True  # whether options it does not declare go to the model's backend (checked against it)

    def check_options(self, model: Any, given: dict[str, Any]) -> None:
        """Refuse, before any model loads, an option neither the method nor its backend declares (naming the valid ones)
        and a value of the wrong type (saying what was expected). Options starting with one of the dataclass's
        ``prefixed`` (explain's ``label_``) go to another method and are checked when it is made."""
        if self.options is None:
            return
        prefixes = tuple(getattr(self.options, "prefixed", ()))
        mine = set(option_names(self.options))
        own = {k: v for k, v in given.items() if k in mine or not (prefixes and k.startswith(prefixes))}
        others: list[str] = []
        kind = ""
        if self.needs_model and self.backend_options:
            kind = backend_of(model, given)
            backend_cls = backend_options_cls(model, given)
            selection = {k: v for k, v in own.items() if k in option_names(Selection) and k not in mine}
            backend = {k: v for k, v in own.items() if k in option_names(backend_cls) and k not in mine}
            check_options(f"backend {kind}", Selection, selection)
            check_options(f"backend {kind}", backend_cls, backend)
            others = [*option_names(Selection), *option_names(backend_cls)]
            own = {k: v for k, v in own.items() if k not in selection and k not in backend}
        check_options(f"method {self.name!r}", self.options, own, others=others, others_are=f"the {kind} backend's")


METHOD_ENTRY_POINTS = "figlang.methods"

# The built-in methods: modules with a ``register(registry)`` function, read by the registry on first use.
# Named, not imported, so that this layer does not import the layers above it and importing a module
# registers nothing (spaCy-style registries). Third-party methods come from the ``figlang.methods``
# entry points: a Method subclass (``name``, ``shapes``, a docstring; ``needs_model`` default True)
# or a ``register(registry)`` callable.
BUILTIN_METHOD_MODULES = ("figlang.methods.baselines", "figlang.methods.prompted", "figlang.methods.trained.methods")


class MethodRegistry:
    """Methods by name, created with ``create(name, model=..., **options)``.

    Filled on first use from ``builtins`` (module names, see ``BUILTIN_METHOD_MODULES``), then from
    the ``figlang.methods`` entry points. ``register`` adds a program's own method at any time.
    """

    def __init__(self, builtins: tuple[str, ...] = ()) -> None:
        self._methods: dict[str, MethodInfo] = {}
        self._builtins = tuple(builtins)
        self._filled = not self._builtins

    def _fill(self) -> None:
        if self._filled:
            return
        self._filled = True  # first: a plugin that asks the registry while registering must not recurse
        import importlib

        for module in self._builtins:
            importlib.import_module(module).register(self)

        for where, obj in entry_point_objects(METHOD_ENTRY_POINTS):
            if isinstance(obj, type) and issubclass(obj, Method):
                doc = (obj.__doc__ or obj.name).strip().splitlines()[0]
                self.add(obj, doc, needs_model=bool(getattr(obj, "needs_model", True)))
            elif callable(obj):
                obj(self)
            else:
                raise FiglangError(
                    f"entry point {where} (group {METHOD_ENTRY_POINTS}) must name a Method subclass or a "
                    f"register(registry) function, not a {type(obj).__name__}"
                )

    def register(
        self,
        name: str,
        shapes: tuple[Shape, ...],
        description: str,
        needs_model: bool = True,
        options: type | None = None,
        backend_options: bool | None = None,
    ):
        """Add a method. ``options`` is its options dataclass (default: the factory's ``Options`` attribute); with one,
        ``create`` checks what it is given first. ``backend_options`` (default: ``needs_model``) says whether the options
        it does not declare are the model backend's."""

        def deco(factory: MethodFactory) -> MethodFactory:
            if name in self._methods:
                raise FiglangError(f"method {name!r} is registered twice")
            declared = options if options is not None else getattr(factory, "Options", None)
            backend = needs_model if backend_options is None else backend_options
            self._methods[name] = MethodInfo(name, shapes, factory, description, needs_model, declared, backend)
            return factory

        return deco

    def add(self, cls: type[Method], description: str, needs_model: bool = True, options: type | None = None) -> None:
        """Add a Method subclass under its own ``name``, for its own ``shapes`` (see :meth:`register`)."""
        self.register(cls.name, tuple(cls.shapes), description, needs_model=needs_model, options=options)(cls)

    def info(self, name: str) -> MethodInfo:
        self._fill()
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
        info.check_options(model, options)  # before anything loads
        return info.factory(model=model, **options) if info.needs_model else info.factory(**options)

    def names(self) -> list[str]:
        self._fill()
        return list(self._methods)

    def __contains__(self, name: str) -> bool:
        self._fill()
        return name in self._methods

    def __iter__(self):
        self._fill()
        return iter(list(self._methods.values()))


METHODS = MethodRegistry(BUILTIN_METHOD_MODULES)


def get_methods() -> MethodRegistry:
    """The method registry: built-in methods and the plugins' (filled on first use, in any fresh interpreter)."""
    return METHODS
