"""Why a lone prompt is encoded whole: how far cache slots copied from another prompt are from the prompt's own.

Until the eleventh session of 2026-11-29 the Transformers backend gave a lone greedy prompt the slots it shared with
the previous lone prompt, copied from that prompt's cache, and encoded only the rest. This script does the same by
hand (the earlier prompt encoded whole, its cache cut to the shared slots, the prompt's remainder encoded on top) and
compares the result with the prompt encoded whole, slot by slot. A difference means the prompt's answer could depend
on the prompt before it. Run (each line one model and dtype; two threads, as figlang runs):

  python benchmarks/lone_prompt_history.py --model smollm2-135m --dtype float32
  python benchmarks/lone_prompt_history.py --model smollm2-135m --dtype bfloat16
  python benchmarks/lone_prompt_history.py --model qwen2.5-1.5b --dtype bfloat16 --repeat 16
"""

from __future__ import annotations

import argparse
from typing import Any

HEAD = "You explain figurative language. For each pair, say in one sentence why the hypothesis entails or contradicts the premise.\n"
BEFORE = (
    "Premise: The room was very quiet and still after everyone left for the long holiday weekend.\n"
    "Hypothesis: The room was as silent as a tomb.\nExplanation:"
)
PROMPT = "Premise: He ran quickly.\nHypothesis: He ran like the wind.\nExplanation:"


def _slots(cache: Any) -> list[Any]:
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=14, help="times the instruction line is said (the shared head's length)")
    args = ap.parse_args()

    import torch

    from figlang.backends.loading import load_backend
    from figlang.backends.prefix import shared_prefix_length

    lm: Any = load_backend(args.model, dtype=args.dtype, threads=args.threads)
    head = HEAD * args.repeat
    before, prompt = lm._encode_prompt(head + BEFORE)[:-1], lm._encode_prompt(head + PROMPT)[:-1]
    shared = shared_prefix_length([before, prompt], keep=1)
    own = _slots(lm._encode_prefixes([prompt])[0])
    base = lm._encode_prefixes([before])[0]
    base.crop(shared - len(before))  # the earlier prompt's cache, cut to the slots the two share
    copied = _slots(lm._encode_prefixes([prompt[shared:]], (base, shared))[0])
    diff = max(float((a.float() - b.float()).abs().max()) for a, b in zip(own, copied, strict=True))
    same = all(torch.equal(a, b) for a, b in zip(own, copied, strict=True))
    print(f"{args.model} {args.dtype}, {torch.get_num_threads()} threads: prompt {len(prompt)} tokens, {shared} shared")
    print(f"copied slots bit for bit the prompt's own: {same}; largest difference {diff:.3g}")


if __name__ == "__main__":
    main()
