"""Tokens/s of a forward pass of a catalog model on this CPU: float32 against bfloat16 or int8 dynamic quantization.

Made to size the #4 grid's qwen cells on an AVX2-only machine (2026-11-24: qwen2.5-1.5b, one thread,
4 × 128 random tokens: float32 15.6 tokens/s, int8 dynamic 28.4 tokens/s with logits far from float32's,
so int8 was not adopted). `--against bfloat16` measures what `dtype=auto` picks on a CPU class
(figlang.core.devices.cpu_prefers_bf16): each dtype's best of `--repeat` passes, after a warm-up, with the
CPU's model and flags in the JSON file.

Run: .venv/bin/python benchmarks/bench_cpu_forward.py [--model qwen2.5-1.5b] [--threads 2]
     [--against bfloat16|int8] [--repeat 3] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from figlang.core.devices import cpu_summary


def bench(model: torch.nn.Module, ids: torch.Tensor, label: str, repeat: int) -> tuple[torch.Tensor, float]:
    """The logits of the last position and the best of ``repeat`` timed passes (seconds)."""
    times = []
    with torch.inference_mode():
        model(input_ids=ids[:1, :16], logits_to_keep=1)  # warm-up
        for _ in range(repeat):
            start = time.perf_counter()
            out = model(input_ids=ids, logits_to_keep=1).logits
            times.append(time.perf_counter() - start)
    best = min(times)
    print(label, f"{best:.2f}s for {ids.numel()} tokens = {ids.numel() / best:.1f} tok/s", flush=True)
    return out.float(), best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-1.5b")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--against", choices=("int8", "bfloat16"), default="int8")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    path = os.path.expanduser(f"~/.cache/figlang/models/{args.model}")  # `figlang models install NAME` prepares it
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    ids = torch.randint(100, 20000, (4, 128), generator=torch.Generator().manual_seed(0))
    a, a_s = bench(model, ids, "float32", args.repeat)
    if args.against == "int8":
        other = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    else:
        other = model.to(torch.bfloat16)
    b, b_s = bench(other, ids, args.against, args.repeat)
    agreement = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
    print("max |delta logit|", (a - b).abs().max().item(), "argmax agreement", agreement)
    print(f"{args.against} / float32 tokens/s: {a_s / b_s:.2f}")
    if args.out:
        result = {
            "model": args.model,
            "threads": args.threads,
            "tokens": ids.numel(),
            "repeat": args.repeat,
            "float32_seconds": a_s,
            f"{args.against}_seconds": b_s,
            "speed_ratio_vs_float32": a_s / b_s,
            "argmax_agreement": agreement,
            "cpu": cpu_summary(),
            "torch": torch.__version__,
            "command": "python benchmarks/bench_cpu_forward.py "
            + f"--model {args.model} --threads {args.threads} --against {args.against} --repeat {args.repeat} --out {args.out}",
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
