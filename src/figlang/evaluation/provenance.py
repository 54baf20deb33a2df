"""What a results file must say about how it was made: data checksums, versions, machine."""

from __future__ import annotations

import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ..data.io import file_sha256

LIBRARIES = ("figlang", "torch", "transformers", "tokenizers", "bert-score", "bleurt-pytorch", "rouge-score",
             "sacrebleu", "nltk", "scipy", "numpy", "httpx")  # fmt: skip


def library_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": sys.version.split()[0]}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict[str, Any]:
    import os

    return {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()}


def data_checksums(files: list[Path], root: Path | None = None) -> list[dict[str, Any]]:
    """sha256 and size of every file a split was read from (paths relative to the data dir where possible)."""
    out = []
    for f in files:
        f = Path(f)
        rel = str(f)
        if root is not None:
            try:
                rel = str(f.resolve().relative_to(Path(root).resolve()))
            except ValueError:
                pass
        if f.exists():
            out.append({"path": rel, "sha256": file_sha256(f), "bytes": f.stat().st_size})
        else:
            out.append({"path": rel, "sha256": None, "bytes": None})
    return out
