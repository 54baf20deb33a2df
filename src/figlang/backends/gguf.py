"""GGUF files → float32 safetensors checkpoints that the Transformers backend loads (converted once).

Below the model resolver (:mod:`figlang.backends.loading`), the installer (:mod:`figlang.backends.install`)
and the Transformers backend, which all convert GGUF files and none of which needs the others for it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.progress import library_bars, route_transformers_bars
from figlang.backends.base import BackendError, ModelNotAvailableError
from figlang.backends.catalog import METADATA_FILE, models_dir, read_metadata
from figlang.backends.revision import sha256_file


@dataclass
class PreparedModel:
    path: Path
    sha256: str
    metadata: dict[str, Any] = field(default_factory=dict)
    converted: bool = False  # True when this call did the conversion


def _log(message: str) -> None:
    print(f"figlang: {message}", file=sys.stderr, flush=True)


def convert_gguf(gguf: Path, out_dir: Path) -> dict[str, Any]:
    """Dequantize a GGUF causal LM into a float32 safetensors checkpoint (+ tokenizer) in ``out_dir``.

    A GGUF-loaded model carries a quantization config and cannot be saved as is: a clean model is
    built from the config without it, the dequantized state dict is loaded into it, and that is saved.
    """
    import torch
    import transformers

    route_transformers_bars()  # "Loading weights" as a line of figlang's display
    folder, name = str(gguf.parent), gguf.name
    # the GGUF loader imports tqdm itself: its "Converting and de-quantizing GGUF tensors..." bars too
    with library_bars("transformers.modeling_gguf_pytorch_utils"):
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = "float32"
    clean = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    state = loaded.state_dict()
    result = clean.load_state_dict(state, strict=False)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    missing = [k for k in result.missing_keys if not (tied and k.endswith("lm_head.weight"))]
    if missing or result.unexpected_keys:
        raise BackendError(f"converting {gguf.name}: missing {missing[:5]}, unexpected {list(result.unexpected_keys)[:5]}")
    if hasattr(clean, "tie_weights"):
        clean.tie_weights()
    clean.generation_config = loaded.generation_config
    del loaded, state
    out_dir.mkdir(parents=True, exist_ok=True)
    clean.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return {
        "architecture": type(clean).__name__,
        "parameters": sum(p.numel() for p in clean.parameters()),
        "chat_template": bool(getattr(tokenizer, "chat_template", None)),
    }


def gguf_file_type(gguf: Path) -> str | None:
    """The GGUF's quantization (``general.file_type``: Q4_1, Q4_K_M, …), when the gguf package can read it."""
    try:
        from gguf import GGUFReader, LlamaFileType

        field_ = GGUFReader(str(gguf)).fields.get("general.file_type")
        if field_ is None:
            return None
        return LlamaFileType(int(field_.parts[field_.data[0]][0])).name.removeprefix("MOSTLY_")
    except Exception:
        return None


def prepare_gguf(
    gguf: str | Path,
    *,
    target: str | Path | None = None,
    name: str | None = None,
    expected_sha256: str | None = None,
    known_sha256: str | None = None,
    metadata: dict[str, Any] | None = None,
    force: bool = False,
    cache_dir: str | Path | None = None,
) -> PreparedModel:
    """Convert a GGUF file once into ``target`` (default ``<cache>/models/gguf/<stem>-<sha12>``).

    Later calls find the converted copy by the file's hash (remembered by path, size and mtime) and
    return at once. The GGUF's SHA-256 is the model's revision (``known_sha256`` skips hashing it).
    """
    gguf = Path(gguf).expanduser()
    if not gguf.is_file():
        raise ModelNotAvailableError(f"no GGUF file at {gguf}")
    sha = known_sha256 or sha256_file(gguf, cache_dir)
    if expected_sha256 and sha != expected_sha256:
        raise BackendError(f"{gguf} has sha256 {sha}, expected {expected_sha256} (a corrupt or different file)")
    out = Path(target) if target else models_dir(cache_dir) / "gguf" / f"{re.sub(r'[^A-Za-z0-9._-]+', '-', gguf.stem)}-{sha[:12]}"
    existing = read_metadata(out)
    if existing and existing.get("sha256") == sha and (out / "config.json").is_file() and not force:
        return PreparedModel(out, sha, existing, converted=False)
    _log(f"converting {gguf.name} into a safetensors checkpoint in {out} (once; this takes a minute or more)")
    started = time.time()
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        details = convert_gguf(gguf, tmp)
        import transformers

        meta = {
            "name": name or gguf.stem,
            "source": {"type": "gguf", "file": gguf.name, "path": str(gguf.resolve()), "sha256": sha},
            "sha256": sha,
            "revision": sha,
            "kind": "causal",
            "dtype": "float32",
            "quantization": gguf_file_type(gguf),
            "converted_with": {"transformers": transformers.__version__},
            "converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "seconds": round(time.time() - started, 1),
            **details,
            **(metadata or {}),
        }
        (tmp / METADATA_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _log(f"prepared {out} in {time.time() - started:.0f} s")
    return PreparedModel(out, sha, meta, converted=True)
