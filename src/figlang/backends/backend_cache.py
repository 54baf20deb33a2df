"""Loaded backends, cached per (model, options) in this process: methods, knowledge providers and the meaning
finder share one loaded model. It sits below all of them (methods and knowledge import it, not each other)."""

from __future__ import annotations

import json
import threading
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends.base import LanguageModel
from figlang.backends.loading import load_backend

_BACKENDS: dict[tuple[str, str], LanguageModel] = {}
_LOCK = threading.Lock()


def _options_key(options: dict[str, Any]) -> str:
    return json.dumps(options, sort_keys=True, default=str, separators=(",", ":"))


def _load_backend(model: str, **options: Any) -> LanguageModel:
    """Delegate to the project's model resolver (catalog names, hub ids, local paths, endpoints)."""
    return load_backend(model, **options)


def backend_for(model: str | LanguageModel, **options: Any) -> LanguageModel:
    """The backend for ``model`` (catalog name, hub id, local path, endpoint), loaded once per (model, options).

    A ``LanguageModel`` instance is returned as is (for callers that built their own).
    ``options`` go to the resolver (batch size, dtype, device, …); a backend is expensive
    to load, so the same (model, options) always returns the same object in this process.
    """
    if isinstance(model, LanguageModel):
        return model
    if not model:
        raise FiglangError("a model-backed method needs a model: pass --model (a catalog name, hub id, local path or endpoint)")
    key = (str(model), _options_key(options))
    with _LOCK:
        backend = _BACKENDS.get(key)
        if backend is None:
            backend = _load_backend(str(model), **options)
            _BACKENDS[key] = backend
    return backend


def clear_backends() -> None:
    """Forget the cached backends (frees their memory once nothing else holds them)."""
    with _LOCK:
        _BACKENDS.clear()
