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


def records_digest(records: Any) -> str:
    """sha256 over the records' content (ids, texts, labels; not file paths): the provenance of a set of
    records that is not a whole task split (a carved dev, a test fold, a sample)."""
    import hashlib
    import json

    h = hashlib.sha256()
    for r in records:
        d = r.to_dict()
        d.pop("meta", None)
        h.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _relative(f: Path, roots: tuple[Path, ...]) -> str:
    """``f`` relative to the first root that holds it (as given, then with links resolved on both sides), else as given."""
    for root in roots:
        for a, b in ((f, root), (f.resolve(), root.resolve())):
            try:
                return str(a.relative_to(b))
            except ValueError:
                continue
    return str(f)


def data_checksums(files: list[Path], root: Path | None = None, *more_roots: Path) -> list[dict[str, Any]]:
    """sha256 and size of every file a split was read from.

    Paths are relative to the data directory ``root`` where possible, else to the next of
    ``more_roots`` that holds them (a spec task's own folder), so that results carry no machine paths.
    """
    roots = tuple(Path(r) for r in (root, *more_roots) if r is not None)
    out = []
    for f in files:
        f = Path(f)
        rel = _relative(f, roots)
        if f.exists():
            out.append({"path": rel, "sha256": file_sha256(f), "bytes": f.stat().st_size})
        else:
            out.append({"path": rel, "sha256": None, "bytes": None})
    return out
