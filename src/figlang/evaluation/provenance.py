"""Provenance of results: the data-layer helpers (`figlang.core.provenance`) and the evaluation-only one that reads
trained models' records (simulatability)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from figlang.core.io import file_sha256
from figlang.core.provenance import (  # noqa: F401  (re-exported: the evaluation layer's callers import them from here)
    LIBRARIES,
    code_provenance,
    data_checksums,
    library_versions,
    machine,
    portable_path,
    provenance,
    records_digest,
    split_fingerprint,
    write_code_patch,
)


def simulatability_inputs(
    task: str, split: str, records: Any, io_model: str | Path, iro_model: str | Path, rationales: str | Path | None, rationale_field: str
) -> dict[str, Any]:
    """What a simulatability figure was computed from: the task and split (with its ids' fingerprint), the two
    classifiers' folders with the split each chose its checkpoint on, and the rationale file with its sha256."""
    from figlang.methods.trained import FIGLANG_JSON, read_figlang_json  # lazy: the trainer imports this module

    def model(path: str | Path) -> dict[str, Any]:
        meta = read_figlang_json(path) if (Path(path) / FIGLANG_JSON).is_file() else {}
        prov = meta.get("provenance") or {}
        return {
            "path": portable_path(path),
            "method": meta.get("method"),
            "base_model": (meta.get("base_model") or {}).get("reference"),
            "best": meta.get("best"),
            "selection_split": prov.get("selection_split"),
            "code": prov.get("code"),
        }

    return {
        "task": task,
        "split": split,
        **split_fingerprint(records),
        "io": model(io_model),
        "iro": model(iro_model),
        "rationales": None
        if rationales is None
        else {"path": portable_path(rationales), "sha256": file_sha256(rationales), "field": rationale_field},
        "code": code_provenance(),
    }
