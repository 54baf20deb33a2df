"""figlang: figurative-language benchmarks, methods and dataset builders in one toolkit.

The public API (:mod:`figlang.api`) is reached from here and loaded on first use, so
``import figlang`` stays cheap (no torch, no transformers)::

    import figlang
    run = figlang.evaluate("idiom-cloze", "lm-score", model="smollm2-135m", split="dev")

``figlang.load_task``, ``figlang.evaluate``, ``figlang.score_predictions``, ``figlang.compare``,
``figlang.suite``, ``figlang.train``, ``figlang.tasks``, ``figlang.methods``; and
``figlang.explain`` / ``figlang.interpret`` where those modules are installed.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("figlang")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+local"

_API = ("load_task", "evaluate", "score_predictions", "compare", "ensemble", "suite", "train", "tasks", "methods", "RunContext")
# Functions that live in their own modules, named like the function (figlang.explain.explain): exposed when the module exists.
_OPTIONAL = ("explain", "interpret")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    """Load an API function on first use (PEP 562), so that importing figlang loads nothing heavy."""
    if name in _API:
        value = getattr(importlib.import_module(".api", __name__), name)
    elif name in _OPTIONAL:
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"figlang.{name} is not part of this figlang version") from None
        value = getattr(module, name, module)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function (and a submodule never shadows its function)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
