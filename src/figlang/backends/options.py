"""The backends' options (``-O KEY=VALUE`` after a method's own), one dataclass per backend.

``backend`` and ``source`` pick the backend (:class:`Selection`); the rest go to it. The registry
checks them against the backend that will run (llama.cpp for ``backend=llama.cpp``, the OpenAI
client for an endpoint, else Transformers) before anything loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from figlang.core.options import option, option_names

BACKEND_CHOICES = ("auto", "transformers", "llama.cpp", "llamacpp", "llama-cpp", "openai")
LLAMACPP_NAMES = ("llama.cpp", "llamacpp", "llama-cpp")
ENDPOINT_PREFIXES = ("http://", "https://", "openai:")


@dataclass(frozen=True)
class Selection:
    """What picks the backend."""

    backend: str = option("auto", "which backend runs the model", choices=BACKEND_CHOICES)
    source: str = option("auto", "where a model reference is looked up", choices=("auto", "local", "hub"))


@dataclass(frozen=True)
class TransformersOptions:
    """A Hugging Face Transformers model on this machine (the default backend)."""

    kind: str | None = option(None, "model class: causal, seq2seq or masked (default: read from the model's config)")
    dtype: str = option("float32", "weights' dtype: float32, bfloat16, float16 or auto")
    device: str = option("cpu", "cpu, cuda, cuda:N, mps or auto")
    threads: int | None = option(None, "CPU threads for torch (default: torch's)", minimum=1)
    batch_size: int = option(16, "requests a forward pass (speed only)", minimum=1)
    max_batch_tokens: int = option(32768, "tokens a forward pass at most (speed only)", minimum=16)
    max_length: int | None = option(None, "longest input in tokens (default: the model's)", minimum=1)
    prefix_reuse: bool = option(True, "score continuations of a shared context from one cached prefix (speed only)")
    prompt_lookup: int = option(10, "prompt-lookup decoding draft tokens for greedy generation, 0 off (speed only)", minimum=0)
    trust_remote_code: bool = option(False, "run the model repository's own code")
    attn_implementation: str | None = option(None, "attention kernel (eager, sdpa …; default: Transformers')")
    allow_missing_weights: bool = option(False, "load a checkpoint whose weights are partly missing (tests, surgery)")


@dataclass(frozen=True)
class LlamaCppOptions:
    """A GGUF model run by llama.cpp (``backend=llama.cpp``)."""

    threads: int | None = option(None, "CPU threads for llama.cpp", minimum=1)
    n_ctx: int = option(2048, "context window in tokens", minimum=1)
    n_batch: int = option(512, "prompt tokens a llama.cpp batch", minimum=1)


@dataclass(frozen=True)
class OpenAIOptions:
    """An OpenAI-compatible endpoint (``openai:MODEL@URL``, an http(s) URL, or ``backend=openai``)."""

    base_url: str | None = option(None, "the endpoint's URL (default: $FIGLANG_OPENAI_BASE_URL)")
    api_key: str | None = option(None, "the endpoint's key (default: the environment)")
    revision: str | None = option(None, "the served model's revision, recorded in fingerprints")
    use_cache: bool = option(True, "keep the endpoint's answers in the request cache")
    chat_only: bool = option(False, "the endpoint has no completions route: ask through chat")
    concurrency: int = option(4, "requests in flight at once", minimum=1)
    timeout: float = option(120.0, "seconds to wait for an answer", minimum=0)
    score_max_tokens: int = option(1, "tokens generated while scoring (some servers need 1)", minimum=0)
    empty_context: str | None = option(None, "text scored against when a context is empty")
    send_top_k: bool = option(True, "send top_k with sampling requests")
    check_alignment: bool = option(True, "check the server's token offsets against the scored text")
    extra_body: dict | None = option(None, "more JSON fields for every request")
    headers: dict | None = option(None, "more HTTP headers")
    cache: Any = option(None, "a RequestCache object or folder", python_only=True)
    retry: Any = option(None, "a RetryPolicy", python_only=True)
    event_hooks: Any = option(None, "httpx event hooks", python_only=True)
    transport: Any = option(None, "an httpx transport", python_only=True)


BACKENDS: dict[str, type] = {"transformers": TransformersOptions, "llama.cpp": LlamaCppOptions, "openai": OpenAIOptions}


def backend_of(model: Any, options: Mapping[str, Any]) -> str:
    """Which backend will run ``model`` with ``options``: transformers, llama.cpp or openai (as the loader decides)."""
    chosen = str(options.get("backend", "auto")).lower()
    if chosen == "openai" or (isinstance(model, str) and model.strip().startswith(ENDPOINT_PREFIXES)):
        return "openai"
    return "llama.cpp" if chosen in LLAMACPP_NAMES else "transformers"


def backend_options_cls(model: Any, options: Mapping[str, Any]) -> type:
    return BACKENDS[backend_of(model, options)]


TRANSFORMERS_OPTIONS = option_names(TransformersOptions)
LLAMACPP_OPTIONS = option_names(LlamaCppOptions)
