"""The files a run leaves: strict JSON (figlang.json, train_result.json), the best model, the resumable checkpoint, portable paths."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.evaluation.provenance import portable_path, write_code_patch
from figlang.methods.trained import FIGLANG_JSON
from figlang.training.sampling import rng_state


CHECKPOINT = "checkpoint"

# --- files ---------------------------------------------------------------------------------------------------


def _strict_json(obj: Any) -> str:
    """The files people and other tools read (figlang.json, train_result.json) are strict JSON: a NaN dev loss is
    null plus ``<key>_nonfinite``. state.json is figlang's own and keeps NaN, so a resumed run compares as before."""
    return json.dumps(_finite_json(obj), indent=2, ensure_ascii=False, default=str, allow_nan=False)


def _atomic_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(_strict_json(obj), encoding="utf-8")
    os.replace(tmp, path)
    write_code_patch(path.parent)  # figlang.json, train_result.json, folds_summary.json name this process's code


def _save_best(model: Any, out: Path, meta: dict[str, Any]) -> None:
    """Write the model into ``out`` (files swapped in one by one, figlang.json last)."""
    tmp = out / ".best.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(tmp)
    (tmp / FIGLANG_JSON).write_text(_strict_json(meta), encoding="utf-8")
    names = sorted(p.name for p in tmp.iterdir())
    for name in [n for n in names if n != FIGLANG_JSON] + [FIGLANG_JSON]:
        os.replace(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)


def _save_checkpoint(out: Path, module: Any, optimizer: Any, scheduler: Any, state: dict[str, Any]) -> None:
    import torch

    tmp = out / f"{CHECKPOINT}.tmp"
    final = out / CHECKPOINT
    old = out / f"{CHECKPOINT}.old"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if hasattr(module, "trainable_state_dict"):
        weights = module.trainable_state_dict()
    elif getattr(module, "lora_spec", None):  # LoRA: the adapters and head only; the fixed base is the catalog's
        weights = {k: v for k, v in module.state_dict().items() if k in {n for n, p in module.named_parameters() if p.requires_grad}}
    else:
        weights = module.state_dict()
    torch.save(weights, tmp / "model.pt")
    if getattr(module, "frozen", False) and module.features:  # the fixed encoder's features: a resumed run need not recompute them
        torch.save(module.features, tmp / "features.pt")
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "rng": rng_state()}, tmp / "trainer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=2, default=str), encoding="utf-8")
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def _check_resume_data(out: Path, saved: dict[str, Any] | None, now: dict[str, Any]) -> None:
    """Refuse to resume a run on other train/dev records than those it was started on (checkpoints that stored none pass)."""
    if not saved:
        return
    changed = []
    for part in ("train", "dev"):
        key = f"{part}_records_sha256"
        if saved.get(key) is not None and saved.get(key) != now[key]:
            changed.append(
                f"{part} records: {saved.get(f'{part}_items')} with sha256 {str(saved[key])[:12]}… → "
                f"{now[f'{part}_items']} with sha256 {now[key][:12]}…"
            )
    if changed:
        raise FiglangError(
            f"{out} holds a training run on other data ({'; '.join(changed)}): the dataset files, --data-dir, the split or the "
            "record selection changed since it started; resume it on the same data, use a new --out, or pass --restart to start over"
        )


def _find_checkpoint(out: Path) -> Path | None:
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):
        p = out / name
        if (p / "state.json").is_file() and (p / "model.pt").is_file() and (p / "trainer.pt").is_file():
            return p
    return None


def _finite_json(value: Any) -> Any:
    """``value`` with every NaN/±Infinity float replaced by None (strict JSON has no such numbers); a dict that held
    one says which in ``<key>_nonfinite`` ("nan", "inf", "-inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            out[k] = _finite_json(v)
            if isinstance(v, float) and not math.isfinite(v):
                out[f"{k}_nonfinite"] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return out
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    return value


def _portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """A run's configuration as figlang.json and the training log record it: its folders as ``portable_path``
    writes them (relative or ``~/``), since the files are committed and read on other machines."""
    return {**config, **{k: portable_path(config[k]) for k in ("out_dir", "data_dir", "model") if isinstance(config.get(k), str)}}


def _portable_base(base: dict[str, Any]) -> dict[str, Any]:
    """The base model's record with a portable path: loading a frozen base falls back to its reference when the
    recorded path is not there (``frozen_base_path``), so nothing depends on this machine's absolute path."""
    out = {**base, "path": portable_path(base["path"])} if isinstance(base.get("path"), str) else dict(base)
    if isinstance(out.get("base_model"), dict):
        out["base_model"] = _portable_base(out["base_model"])
    return out
