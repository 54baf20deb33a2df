"""Carry a fine-tuned writer's weights between the lent GPU machine and this one in little space.

The GPU machine can send back 64 MiB a call, and smollm2-135m's float32 weights are 540 MB. What travels
instead is the difference between the trained weights and the bfloat16 base the GPU started from, rounded
per row to int8 (scale = the row's largest absolute change / 127). The rounding error of a weight is at
most half a step of its row's scale; `pack` records the largest one beside bfloat16's own rounding error
of the trained weights, so a reader can see it is smaller than the precision the writer then runs in.

    python scripts/gpu/writer_delta.py bf16-base  SRC_DIR DST_DIR          # base model folder, weights in bfloat16
    python scripts/gpu/writer_delta.py pack       BASE_DIR TRAINED_DIR OUT.npz
    python scripts/gpu/writer_delta.py unpack     BASE_DIR DELTA.npz OUT_DIR  # writes OUT_DIR/model.safetensors (float32)
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file


def _weights(directory: Path) -> dict[str, torch.Tensor]:
    return {k: v.float() for k, v in load_file(str(directory / "model.safetensors")).items()}


def bf16_base(src: Path, dst: Path) -> None:
    """Copy a model folder with its weights rounded to bfloat16 (half the bytes to carry)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            shutil.copy2(f, dst / f.name)
    sd = load_file(str(src / "model.safetensors"))
    save_file(
        {k: (v.to(torch.bfloat16) if v.is_floating_point() else v).contiguous() for k, v in sd.items()},
        str(dst / "model.safetensors"),
        metadata={"format": "pt"},
    )


def pack(base: Path, trained: Path, out: Path) -> dict:
    """Write the per-row int8 difference trained - base to OUT (numpy npz) and a JSON report beside it."""
    b, t = _weights(base), _weights(trained)
    arrays: dict[str, np.ndarray] = {}
    worst_delta = worst_bf16 = 0.0
    for name, w in t.items():
        if name not in b:
            raise SystemExit(f"{name}: in the trained weights, not in the base {base}")
        d = (w - b[name]).reshape(w.shape[0], -1) if w.ndim > 0 else (w - b[name]).reshape(1, 1)
        scale = d.abs().amax(dim=1, keepdim=True) / 127.0
        q = torch.where(scale > 0, torch.round(d / torch.where(scale > 0, scale, 1.0)), 0.0).to(torch.int8)
        back = q.float() * scale
        worst_delta = max(worst_delta, float((back - d).abs().max()))
        worst_bf16 = max(worst_bf16, float((w.to(torch.bfloat16).float() - w).abs().max()))
        arrays[f"q::{name}"] = q.numpy()
        arrays[f"s::{name}"] = scale.squeeze(1).numpy()
        arrays[f"shape::{name}"] = np.array(w.shape, dtype=np.int64)
    np.savez_compressed(out, **arrays)
    report = {
        "tensors": len(t),
        "largest_rounding_error": worst_delta,
        "largest_bf16_rounding_error_of_trained_weights": worst_bf16,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "bytes": out.stat().st_size,
    }
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    return report


def unpack(base: Path, delta: Path, out_dir: Path) -> None:
    """Rebuild the trained float32 weights as base (bfloat16, widened) + the int8 difference."""
    b = _weights(base)
    z = np.load(delta)
    sd = {}
    for key in z.files:
        if not key.startswith("q::"):
            continue
        name = key[3:]
        shape = tuple(int(x) for x in z[f"shape::{name}"])
        d = torch.from_numpy(z[key]).float() * torch.from_numpy(z[f"s::{name}"]).unsqueeze(1)
        sd[name] = (b[name] + d.reshape(shape)).contiguous()
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "model.safetensors.tmp"
    save_file(sd, str(tmp), metadata={"format": "pt"})
    tmp.replace(out_dir / "model.safetensors")


if __name__ == "__main__":
    verb, *args = sys.argv[1:]
    if verb == "bf16-base":
        bf16_base(Path(args[0]), Path(args[1]))
    elif verb == "pack":
        print(json.dumps(pack(Path(args[0]), Path(args[1]), Path(args[2]))))
    elif verb == "unpack":
        unpack(Path(args[0]), Path(args[1]), Path(args[2]))
    else:
        raise SystemExit(__doc__)
