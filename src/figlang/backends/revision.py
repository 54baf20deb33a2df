"""A model's content revision: the SHA-256 of its files, each file hashed once (remembered by path, size and mtime).

What identifies a local model or GGUF file in results and cache keys, computed without loading it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from figlang.core.io import file_sha256
from figlang.backends.catalog import models_dir

HASH_INDEX = ".hashes.json"  # <cache>/models/.hashes.json: path|size|mtime -> sha256


def sha256_file(path: str | Path, cache_dir: str | Path | None = None) -> str:
    """SHA-256 of a file, remembered by (path, size, mtime) so that a large file is read once."""
    path = Path(path).resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    index_path = models_dir(cache_dir) / HASH_INDEX
    index: dict[str, str] = {}
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        index = {}
    if key in index:
        return index[key]
    value = file_sha256(path, chunk=1 << 22)
    index[key] = value
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = index_path.with_name(f"{HASH_INDEX}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(index, indent=0, sort_keys=True), encoding="utf-8")
        os.replace(tmp, index_path)
    except OSError:
        pass  # an unwritable cache only costs a re-hash next time
    return value


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".msgpack", ".h5", ".gguf")


def directory_revision(path: str | Path, cache_dir: str | Path | None = None) -> str:
    """A content hash of a model directory: config.json and its weight files (each hashed once)."""
    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if not file.is_file():
            continue
        if file.name == "config.json" or file.suffix in WEIGHT_SUFFIXES:
            digest.update(f"{file.relative_to(root).as_posix()}:{sha256_file(file, cache_dir)}\n".encode())
    return "sha256:" + digest.hexdigest()
