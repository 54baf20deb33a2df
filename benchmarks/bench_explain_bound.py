"""How fast one explanation could be on this CPU at all: the prompt's arithmetic against the CPU's measured peak.

#39 target 3 asks for one `figlang explain` pair in at most 2 s after loading on 2 cores. Nearly all of a pair's
time is the prompt's prefill: every one of its tokens goes through every linear layer of qwen2.5-1.5b once before
the first word is written (the few decoding passes after it are cheap with prompt lookup). This script measures

- the **peak matrix-product rate** of this CPU in each dtype: torch's best over repeated products of the exact
  shapes of the model's linear layers for a prompt of the val set's mean length (the most that a perfect
  implementation of the prefill could get, since attention and the rest are a few percent of the work), and
- the **model's own prefill rate**: a real forward pass of the model over a prompt of that length,

and from the model's configuration counts the multiply-adds of one prompt. The prompt's lower bound is its
arithmetic divided by the peak rate: no backend, cache or batching that keeps the prompt and the model can go
below it (reusing a cache saves only the shared tokens, measured in `benchmarks/explain_prompt_sharing.py`).

The writing after the prompt has a bound of its own. Each decoding pass (one token, or a prompt-lookup draft of up
to 10) reads every weight of the model once, so it cannot take less than the weights' bytes over the CPU's memory
read rate. The script measures

- the **memory read rate**: torch's best sum or matrix-vector product over 1 GiB (2 threads read what 2 cores can),
- the **model's own decoding pass**: one token, and one token with a 10-token draft, after a prompt of that length,

and takes the mean number of passes a `selection` answer needs under the shipped prompt-lookup rule from
``docs/results/explain/prompt-lookup-passes-selection.json``. One pair's lower bound is the prompt's bound plus
that many passes at the read rate (the label model and retrieval, a few hundredths of a second, left out).

Run: python benchmarks/bench_explain_bound.py [--model qwen2.5-1.5b] [--threads 2] [--tokens 756]
     [--dtypes bfloat16 float32] [--repeat 5] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from figlang.core.devices import cpu_summary
from figlang.core.provenance import code_provenance

# the mean prompt of FLUTE val under the shipped configuration (docs/results/explain/prompt-sharing-val.json)
VAL_MEAN_TOKENS = 756
TARGET_SECONDS = 2.0


def head_dim(config: dict[str, Any]) -> int:
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def linear_shapes(config: dict[str, Any]) -> list[tuple[int, int]]:
    """(in, out) of one decoder layer's linear layers: q, k, v, o, gate, up, down (grouped-query attention)."""
    d, ff = config["hidden_size"], config["intermediate_size"]
    kv = config.get("num_key_value_heads", config["num_attention_heads"]) * head_dim(config)
    return [(d, d), (d, kv), (d, kv), (d, d), (d, ff), (d, ff), (ff, d)]


def prefill_flops(config: dict[str, Any], tokens: int) -> dict[str, float]:
    """Floating-point operations (2 per multiply-add) of one prompt's prefill: the linear layers and the causal
    attention products; the output layer is taken for the last position only, as figlang's decoding does."""
    layers = config["num_hidden_layers"]
    linear = 2.0 * tokens * layers * sum(i * o for i, o in linear_shapes(config))
    q_width = config["num_attention_heads"] * head_dim(config)
    attention = 2.0 * 2.0 * layers * q_width * tokens * (tokens + 1) / 2  # QK^T and AV over the causal half
    output = 2.0 * config["hidden_size"] * config["vocab_size"]
    return {"linear": linear, "attention": attention, "output": output, "total": linear + attention + output}


def best_seconds(run: Any, repeat: int) -> float:
    run()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_rate(config: dict[str, Any], tokens: int, dtype: torch.dtype, repeat: int) -> dict[str, Any]:
    """The best rate of ``x @ W`` over the layer's shapes, for ``tokens`` rows (operations per second)."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    for i, o in sorted(set(linear_shapes(config))):
        x = torch.randn(tokens, i, generator=gen).to(dtype)
        w = torch.randn(i, o, generator=gen).to(dtype)
        seconds = best_seconds(lambda x=x, w=w: torch.matmul(x, w), repeat)
        rows.append({"shape": [tokens, i, o], "seconds": seconds, "gflops": 2.0 * tokens * i * o / seconds / 1e9})
    return {"best_gflops": max(r["gflops"] for r in rows), "shapes": rows}


PASSES_FILE = Path(__file__).resolve().parents[1] / "docs/results/explain/prompt-lookup-passes-selection.json"


def read_rate(repeat: int) -> dict[str, Any]:
    """The best rate at which torch reads 1 GiB of float32, bytes per second: the better of a sum over a vector and a
    matrix-vector product (each reads every byte once; on some CPUs one is faster)."""
    vector = torch.ones(2**28, dtype=torch.float32)
    matrix, x = vector.view(2**15, 2**13), torch.ones(1, 2**13, dtype=torch.float32)
    ways = {"sum": best_seconds(lambda: vector.sum(), repeat), "matrix_vector": best_seconds(lambda: x @ matrix.T, repeat)}
    seconds = min(ways.values())
    return {"bytes": vector.numel() * 4, "seconds_by_way": ways, "gb_per_second": vector.numel() * 4 / seconds / 1e9}


def shipped_lookup() -> tuple[float, int]:
    """The mean decoding passes of a `selection` answer under the shipped prompt-lookup rule (measured on 80 answers),
    and that rule's draft length."""
    data = json.loads(PASSES_FILE.read_text(encoding="utf-8"))
    rule = next(r for r in data["rules"] if all(r[k] == v for k, v in data["shipped"].items()))
    return rule["forward_passes"] / data["answers"], int(data["shipped"]["draft_tokens"])


def model_rate(path: str, tokens: int, dtype: torch.dtype, repeat: int, draft: int) -> dict[str, Any]:
    """A real forward pass of the model over one prompt of ``tokens`` tokens (random ids, seeded), and a decoding pass
    after it: one token, and one token with a draft of ``draft`` tokens (the cache cut back after each)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
    ids = torch.randint(100, 20000, (1, tokens), generator=torch.Generator().manual_seed(0))
    # a pass reads every weight but the input embedding's (one row a token); tied to the output layer, it is read there
    embedding = model.get_input_embeddings().weight
    tied = embedding is model.get_output_embeddings().weight
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if tied or p is not embedding)
    with torch.inference_mode():
        seconds = best_seconds(lambda: model(input_ids=ids, logits_to_keep=1), repeat)
        cache = model(input_ids=ids, use_cache=True).past_key_values

        def step(n: int) -> None:
            model(input_ids=ids[:, :n], past_key_values=cache, use_cache=True, logits_to_keep=n)
            cache.crop(-n)  # Transformers ≥ 5: a negative count of slots to drop

        one, drafted = best_seconds(lambda: step(1), repeat), best_seconds(lambda: step(1 + draft), repeat)
    return {
        "seconds": seconds,
        "tokens_per_second": tokens / seconds,
        "weight_bytes": weight_bytes,
        "decode_pass_seconds": one,
        "drafted_pass_seconds": drafted,
    }


def measure(args: argparse.Namespace, config: dict[str, Any], path: str) -> dict[str, Any]:
    flops = prefill_flops(config, args.tokens)
    memory = read_rate(args.repeat)
    passes, draft = shipped_lookup()
    rows: dict[str, Any] = {}
    print(f"memory read {memory['gb_per_second']:.1f} GB/s; {passes:.2f} decoding passes a pair", flush=True)
    for name in args.dtypes:
        dtype = getattr(torch, name)
        peak = peak_rate(config, args.tokens, dtype, args.repeat)
        real = model_rate(path, args.tokens, dtype, max(1, args.repeat // 2), draft)
        bound = flops["total"] / (peak["best_gflops"] * 1e9)
        pass_bound = real["weight_bytes"] / (memory["gb_per_second"] * 1e9)
        rows[name] = {
            "peak": peak,
            "model_forward": real,
            "prompt_lower_bound_seconds": bound,
            "model_share_of_peak": bound / real["seconds"],
            "largest_prompt_in_target_tokens": int(args.tokens * TARGET_SECONDS / bound),
            "decode_pass_lower_bound_seconds": pass_bound,
            "decoding_lower_bound_seconds": passes * pass_bound,
            "pair_lower_bound_seconds": bound + passes * pass_bound,
            "pair_model_seconds": real["seconds"] + passes * real["drafted_pass_seconds"],
        }
        print(
            f"{name:9} peak {peak['best_gflops']:6.1f} GFLOP/s  prompt bound {bound:5.2f} s  model {real['seconds']:5.2f} s "
            f"({bound / real['seconds']:.0%} of peak)  prompt that fits {TARGET_SECONDS:g} s: "
            f"{rows[name]['largest_prompt_in_target_tokens']} tokens",
            flush=True,
        )
        print(
            f"{'':9} pass bound {pass_bound:5.3f} s  model pass {real['decode_pass_seconds']:5.3f} s "
            f"(drafted {real['drafted_pass_seconds']:5.3f} s)  pair bound {rows[name]['pair_lower_bound_seconds']:5.2f} s  "
            f"model {rows[name]['pair_model_seconds']:5.2f} s",
            flush=True,
        )
    return {"prefill_flops": flops, "memory_read": memory, "passes_per_pair": round(passes, 2), "by_dtype": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=VAL_MEAN_TOKENS, help="prompt length (default: FLUTE val's mean)")
    parser.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    path = os.path.expanduser(f"~/.cache/figlang/models/{args.model}")  # `figlang models install NAME` prepares it
    config = json.loads(Path(path, "config.json").read_text(encoding="utf-8"))
    provenance = code_provenance()  # the code as the run starts
    load_start = os.getloadavg()
    result = {
        "model": args.model,
        "threads": args.threads,
        "tokens": args.tokens,
        "target_seconds": TARGET_SECONDS,
        "repeat": args.repeat,
        **measure(args, config, path),
        "load_average": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
        "cpu": cpu_summary(),
        "torch": torch.__version__,
        "provenance": provenance,
        "command": "python benchmarks/bench_explain_bound.py "
        + f"--model {args.model} --threads {args.threads} --tokens {args.tokens} --dtypes {' '.join(args.dtypes)} "
        + f"--repeat {args.repeat}"
        + (f" --out {args.out}" if args.out else ""),
    }
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(args.out + ".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        tmp.replace(args.out)


if __name__ == "__main__":
    main()
