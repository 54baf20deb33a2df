"""Trained heads that ship inside figlang: a few KB of weights on top of a frozen catalog model.

A probe (`figlang train -m mc --preset cpu-probe`) trains one linear layer on the features of a frozen
base model. The base comes from the catalog (`figlang models install qwen2.5-1.5b`), so the head is all
that a trained system needs to ship, and base-model weights never do. ``figlang:NAME`` names a shipped
head wherever the ``trained`` method takes a model folder::

    figlang eval -t idiom-cloze -s dev-disjoint -m trained --model figlang:idiom-probe-qwen

Each head lives in ``figlang/resources/heads/NAME/``:

- ``choice_head.safetensors``: the head's weights (hidden size + 1 numbers);
- ``figlang.json``: the training run's own record, less its machine paths (the base is found again by its
  catalog name and must have the revision the head was trained on);
- ``record.json``: how it was made, in one place: base model (catalog name, revision, layers read), task,
  train and selection splits with the sha256 of their record ids, the data files' sha256, seed and
  preset, the code commit, the selection figure, and the head file's size and sha256.

:func:`ship_head` makes such a folder from a finished training run (``python scripts/ship_head.py RUN NAME``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.io import write_json
from figlang.methods.trained.common import FIGLANG_JSON, TRAINED_METHODS, read_figlang_json

SHIPPED_PREFIX = "figlang:"
HEADS_ENV = "FIGLANG_HEADS_DIR"
HEAD_FILE = "choice_head.safetensors"  # as multiple_choice.HEAD_FILE (that module imports torch)
ADAPTER_FILE = "adapter.safetensors"  # as lora.ADAPTER_FILE: a LoRA NLI classifier's adapters and head
RECORD_FILE = "record.json"
MAX_HEAD_BYTES = 4 * 1024 * 1024  # "a few MB at most": a head, never a base model
MAX_ADAPTER_BYTES = 5 * 1024 * 1024  # a LoRA adapter with its classification head (issue #36: at most 5 MB)
_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


def heads_dir() -> Path:
    """The package folder that holds the shipped heads."""
    return Path(str(files("figlang").joinpath("resources/heads")))


def head_roots(root: str | Path | None = None) -> list[Path]:
    """Where ``figlang:NAME`` is looked up: ``root`` alone when given; else ``$FIGLANG_HEADS_DIR`` (heads made
    with ship_head(..., root=DIR), to try before shipping them), then the package's own."""
    if root is not None:
        return [Path(root)]
    extra = os.environ.get(HEADS_ENV)
    return ([Path(extra).expanduser()] if extra else []) + [heads_dir()]


FOLD_HEADS_FILE = "fold_heads.safetensors"  # as fold_heads.HEADS_FILE: IMPLI's ten fold heads on a shipped classifier


def _weights_file(folder: Path) -> str:
    """The trained weights a shipped folder holds: a probe's head, a LoRA classifier's adapter, or fold heads."""
    for name in (ADAPTER_FILE, FOLD_HEADS_FILE):
        if (folder / name).is_file():
            return name
    return HEAD_FILE


def _is_head(folder: Path) -> bool:
    return (folder / FIGLANG_JSON).is_file() and (folder / _weights_file(folder)).is_file()


def shipped_heads(root: str | Path | None = None) -> list[str]:
    """The names of the heads that ship with figlang (folders with a figlang.json and a head), sorted."""
    names = {p.name for base in head_roots(root) if base.is_dir() for p in base.iterdir() if _is_head(p)}
    return sorted(names)


def shipped_head_dir(name: str, root: str | Path | None = None) -> Path:
    """The folder of the shipped head ``name`` (a clear error listing the shipped ones when there is none)."""
    name = name[len(SHIPPED_PREFIX) :] if name.startswith(SHIPPED_PREFIX) else name
    folder = next((base / name for base in head_roots(root) if _NAME.match(name) and _is_head(base / name)), None)
    if folder is None:
        known = shipped_heads(root)
        raise FiglangError(
            f"figlang ships no trained head named {name!r}; shipped: {', '.join(known) if known else 'none'} "
            f"(use --model {SHIPPED_PREFIX}NAME, or --model DIR for a folder made by `figlang train`)"
        )
    return folder


def resolve_trained_model(model: str | Path) -> tuple[Path, str | None]:
    """A ``trained`` method's model: ``figlang:NAME`` (a shipped head) or a folder made by `figlang train`.

    Returns the folder and the shipped name (None for a folder)."""
    text = str(model)
    if text.startswith(SHIPPED_PREFIX):
        name = text[len(SHIPPED_PREFIX) :]
        return shipped_head_dir(name), name
    return Path(text).expanduser(), None


def head_sha256(folder: str | Path) -> str:
    return hashlib.sha256((Path(folder) / _weights_file(Path(folder))).read_bytes()).hexdigest()


def _portable_meta(meta: dict[str, Any], name: str) -> dict[str, Any]:
    """The run's figlang.json without machine paths: the base is resolved by its catalog name when loaded."""
    out = copy.deepcopy(meta)
    base = out.get("base_model") or {}
    base.pop("path", None)
    training = out.get("training") or {}
    for key in ("out_dir", "data_dir"):
        if key in training:
            training[key] = None
    out["shipped"] = {"name": name, "model": f"{SHIPPED_PREFIX}{name}", "record": RECORD_FILE}
    return out


def head_record(meta: dict[str, Any], folder: str | Path, name: str, source: str) -> dict[str, Any]:
    """record.json: how a shipped head was made, from its run's figlang.json (no machine paths)."""
    base = meta.get("base_model") or {}
    fmt = meta.get("input_format") or {}
    task = meta.get("task") or {}
    training = meta.get("training") or {}
    prov = meta.get("provenance") or {}
    data = meta.get("data") or {}
    files_by_path: dict[str, dict[str, Any]] = {}
    for entries in (data.get("files") or {}).values():
        for f in entries:
            files_by_path.setdefault(f["path"], {"path": f["path"], "sha256": f.get("sha256"), "bytes": f.get("bytes")})
    head = Path(folder) / _weights_file(Path(folder))
    what = (
        f"LoRA adapters (rank {meta['lora']['rank']}) and the classification head on the fixed base model: the base is installed "
        "from the catalog, only the adapter ships"
        if meta.get("lora")
        else "a linear head on the frozen base model's features (a probe): the base is installed from the catalog, only the head ships"
    )
    return {
        "name": name,
        "model": f"{SHIPPED_PREFIX}{name}",
        "what": what,
        "head": {"file": head.name, "bytes": head.stat().st_size, "sha256": head_sha256(folder)},
        "lora": meta.get("lora"),
        "base_model": {
            "catalog": base.get("reference"),
            "revision": base.get("revision"),
            "hub_id": base.get("hub_id"),
            "layers_read": fmt.get("base_layers"),
            "pooling": fmt.get("pooling"),
            "bf16": training.get("bf16"),
        },
        "task": task.get("name"),
        "method": meta.get("method"),
        "train_split": task.get("train_split"),
        "selection_split": task.get("dev_split"),
        "report_splits": task.get("report_splits"),
        "choices_made_on": prov.get("selection_split"),
        "split_ids_sha256": prov.get("splits"),
        "train_records_sha256": data.get("train_records_sha256"),
        "selection_records_sha256": data.get("dev_records_sha256"),
        "train_items": data.get("train_items"),
        "selection_items": data.get("dev_items"),
        "data_files": sorted(files_by_path.values(), key=lambda f: f["path"]),
        "training": {
            k: training.get(k)
            for k in (
                "preset",
                "seed",
                "epochs",
                "lr",
                "batch_size",
                "max_length",
                "weight_decay",
                "patience",
                "limit",
                "dev_limit",
                "base_layers",
                "bf16",
                "threads",
                "lora_rank",
                "lora_alpha",
                "warmup_ratio",
            )
        },
        "code": prov.get("code"),
        "best": meta.get("best"),
        "dev_metrics": {split: (m or {}).get("accuracy") for split, m in (meta.get("dev_metrics") or {}).items()},
        "versions": meta.get("versions"),
        "trained": meta.get("created"),
        "source_run": source,
    }


def ship_head(
    run_dir: str | Path,
    name: str,
    root: str | Path | None = None,
    overwrite: bool = False,
    allow_dirty: bool = False,
    command: str | None = None,
) -> Path:
    """Copy a finished probe run's head into the package as ``figlang:NAME``, with its record.

    ``command``: the training command that made the run (its figlang.json records every resolved option, not the
    command line), written into the record as ``command``.

    Only a complete multiple-choice run on a frozen catalog base qualifies (its head is a few KB and the
    base can be installed by name), made from a clean commit so that anyone can check out the code that made it
    (``allow_dirty`` for a trial folder: its record keeps ``git_dirty``); the folder is written whole or not at
    all. Returns the head's folder.
    """
    run = Path(run_dir)
    meta = read_figlang_json(run)
    if not _NAME.match(name):
        raise FiglangError(f"head name {name!r}: use lower-case letters, digits, '.' and '-' (e.g. idiom-probe-qwen)")
    if meta.get("status") != "complete":
        raise FiglangError(f"{run}: the training run is not complete (status {meta.get('status')!r}); finish it first")
    kind = TRAINED_METHODS.get(meta.get("method", ""), ("", ""))[1]
    probe = kind == "choice-scorer" and (meta.get("input_format") or {}).get("frozen_base")
    if not probe and not (kind == "sequence-classifier" and meta.get("lora")):
        raise FiglangError(
            f"{run}: only a probe (a multiple-choice head on a frozen base: --preset cpu-probe) or a LoRA classifier (--lora-rank) ships"
        )
    base = meta.get("base_model") or {}
    if base.get("source") != "catalog" or not base.get("reference") or not base.get("revision"):
        raise FiglangError(
            f"{run}: the frozen base must be a catalog model with a recorded revision "
            f"(got {base.get('reference')!r}, source {base.get('source')!r}), so that users can install it by name"
        )
    code = (meta.get("provenance") or {}).get("code") or {}
    if code.get("git_dirty") is not False and not allow_dirty:
        raise FiglangError(
            f"{run}: not trained from a clean commit (commit {code.get('git_commit')}, git_dirty {code.get('git_dirty')}): "
            "commit, train again, then ship; or pass allow_dirty=True (--allow-dirty) for a trial folder"
        )
    weights, limit = (HEAD_FILE, MAX_HEAD_BYTES) if probe else (ADAPTER_FILE, MAX_ADAPTER_BYTES)
    head = run / weights
    if not head.is_file():
        raise FiglangError(f"{run}: no {weights}")
    if head.stat().st_size > limit:
        raise FiglangError(f"{head}: {head.stat().st_size:,} bytes; a shipped head must stay under {limit:,}")
    target_root = Path(root) if root is not None else heads_dir()
    target = target_root / name
    if target.exists() and not overwrite:
        raise FiglangError(f"{target} exists; pass overwrite=True (--overwrite) to replace it")
    target_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target_root))
    tmp.chmod(0o755)  # mkdtemp makes it private; a package folder is readable by all
    try:
        shutil.copyfile(head, tmp / weights)
        write_json(tmp / FIGLANG_JSON, _portable_meta(meta, name))
        source = run.name if run.is_absolute() else run.as_posix()
        write_json(tmp / RECORD_FILE, {**head_record(meta, tmp, name, source), "command": command})
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_record(name: str, root: str | Path | None = None) -> dict[str, Any]:
    """The record.json of a shipped head."""
    return json.loads((shipped_head_dir(name, root) / RECORD_FILE).read_text(encoding="utf-8"))


__all__ = [
    "SHIPPED_PREFIX",
    "head_record",
    "heads_dir",
    "read_record",
    "resolve_trained_model",
    "ship_head",
    "shipped_head_dir",
    "shipped_heads",
]
