"""Tokens/s of one forward pass of a catalog model on this CPU, float32 against int8 dynamic quantization.

Made to size the #4 grid's qwen cells on an AVX2-only machine (2026-11-24: qwen2.5-1.5b, one thread,
4 × 128 random tokens: float32 15.6 tokens/s, int8 dynamic 28.4 tokens/s with logits far from float32's,
so int8 was not adopted). Run: .venv/bin/python benchmarks/bench_cpu_forward.py [catalog-name] [threads]
"""

from __future__ import annotations

import os
import sys
import time

import torch
from transformers import AutoModelForCausalLM


def bench(model: torch.nn.Module, ids: torch.Tensor, label: str) -> torch.Tensor:
    with torch.inference_mode():
        model(input_ids=ids[:1, :16], logits_to_keep=1)  # warm-up
        start = time.perf_counter()
        out = model(input_ids=ids, logits_to_keep=1).logits
        seconds = time.perf_counter() - start
    print(label, f"{seconds:.2f}s for {ids.numel()} tokens = {ids.numel() / seconds:.1f} tok/s", flush=True)
    return out


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "qwen2.5-1.5b"
    torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    path = os.path.expanduser(f"~/.cache/figlang/models/{name}")  # `figlang models install NAME` prepares it
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    ids = torch.randint(100, 20000, (4, 128), generator=torch.Generator().manual_seed(0))
    a = bench(model, ids, "float32")
    q = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    b = bench(q, ids, "int8-dynamic")
    print("max |delta logit|", (a - b).abs().max().item(), "argmax agreement", (a.argmax(-1) == b.argmax(-1)).float().mean().item())


if __name__ == "__main__":
    main()
