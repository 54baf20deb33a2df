"""Whether an answer depends on what else the backend computed: copied cache slots, and scores by call.

Two checks, each printing how far the two ways are apart (two threads, as figlang runs):

* ``slots`` (Transformers): until the eleventh session of 2026-11-29 a lone greedy prompt took the slots it shared
  with the previous lone prompt from that prompt's cache and encoded only the rest. This does the same by hand (the
  earlier prompt encoded whole, its cache cut to the shared slots, the prompt's remainder encoded on top) and compares
  the result with the prompt encoded whole, slot by slot. A difference means the answer could depend on the prompt
  before it; figlang now encodes a lone prompt whole. With ``--backend llama.cpp``, the prompt's last logits evaluated
  whole against continued from the other prompt's cache (llama.cpp generation did that; it now evaluates each prompt
  whole too).
* ``scoring`` (either backend): the first N items of a multiple-choice task scored in one call (shared prefixes
  encoded once, batches) and each item's options alone, in calls of their own. It counts the items whose choice
  differs and the largest difference of a log-probability, and with ``--out`` writes each item's scores both ways
  beside the report (NAME.predictions.jsonl). figlang leaves scoring as it is: docs/how-to/models.md says why.

Run:

  python benchmarks/call_dependence.py slots --model smollm2-135m --dtype float32
  python benchmarks/call_dependence.py slots --model smollm2-135m --dtype bfloat16
  python benchmarks/call_dependence.py slots --model qwen2.5-1.5b --dtype bfloat16
  python benchmarks/call_dependence.py slots --model qwen2.5-1.5b --backend llama.cpp --repeat 5
  python benchmarks/call_dependence.py scoring --model qwen2.5-1.5b --dtype bfloat16 --items 100 --data-dir ../shared/data \
      --out docs/results/bench/call_dependence/scoring-qwen-bfloat16.json     # likewise float32 and --backend llama.cpp
"""

from __future__ import annotations

import argparse
import json
from typing import Any

HEAD = "You explain figurative language. For each pair, say in one sentence why the hypothesis entails or contradicts the premise.\n"
BEFORE = (
    "Premise: The room was very quiet and still after everyone left for the long holiday weekend.\n"
    "Hypothesis: The room was as silent as a tomb.\nExplanation:"
)
PROMPT = "Premise: He ran quickly.\nHypothesis: He ran like the wind.\nExplanation:"


def _slots(cache: Any) -> list[Any]:
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def copied_slots(lm: Any, repeat: int) -> dict[str, Any]:
    """The prompt's cache encoded whole against the same cache continued from another prompt's shared slots."""
    import torch

    from figlang.backends.prefix import shared_prefix_length

    head = HEAD * repeat
    before, prompt = lm._encode_prompt(head + BEFORE)[:-1], lm._encode_prompt(head + PROMPT)[:-1]
    shared = shared_prefix_length([before, prompt], keep=1)
    own = _slots(lm._encode_prefixes([prompt])[0])
    base = lm._encode_prefixes([before])[0]
    base.crop(shared - len(before))  # the earlier prompt's cache, cut to the slots the two share
    copied = _slots(lm._encode_prefixes([prompt[shared:]], (base, shared))[0])
    return {
        "prompt_tokens": len(prompt),
        "shared_tokens": shared,
        "bit_for_bit": all(torch.equal(a, b) for a, b in zip(own, copied, strict=True)),
        "largest_difference": max(float((a.float() - b.float()).abs().max()) for a, b in zip(own, copied, strict=True)),
    }


def continued_logits(lm: Any, repeat: int) -> dict[str, Any]:
    """llama.cpp: the prompt's last 8 positions' logits evaluated whole against continued from the other prompt's
    cache (what generation did until the eleventh session of 2026-11-29)."""
    import numpy as np

    head = HEAD * repeat
    before, prompt = lm._encode_prompt(head + BEFORE), lm._encode_prompt(head + PROMPT)
    want = range(len(prompt) - 8, len(prompt))
    lm._reset()
    own = np.asarray(lm._feed(prompt, want))
    lm._reset()
    lm._feed(before, [len(before) - 1])
    continued = np.asarray(lm._feed(prompt, want))
    return {
        "prompt_tokens": len(prompt),
        "bit_for_bit": bool(np.array_equal(own, continued)),
        "largest_difference": float(np.abs(own - continued).max()),
    }


def scores_by_call(lm: Any, task: str, split: str, items: int, data_dir: str | None) -> dict[str, Any]:
    """One call for all items' options against one call per item: choices that differ, largest log-prob gap."""
    from figlang.backends.base import ScoreRequest
    from figlang.data.registry import get_task

    records = get_task(task).load(split, data_dir)[:items]
    requests = [[ScoreRequest(r.context, " " + o) for o in r.options] for r in records]
    together = lm.score([q for item in requests for q in item])
    alone = [s for item in requests for s in lm.score(item)]
    gap = max(abs(a.logprob - b.logprob) for a, b in zip(together, alone, strict=True))
    rows, at = [], 0
    for record, item in zip(records, requests, strict=True):
        t = [s.logprob for s in together[at : at + len(item)]]
        a = [s.logprob for s in alone[at : at + len(item)]]
        rows.append({"id": record.id, "together": t, "alone": a, "choice_together": t.index(max(t)), "choice_alone": a.index(max(a))})
        at += len(item)
    flips = sum(r["choice_together"] != r["choice_alone"] for r in rows)
    summary = {"task": task, "split": split, "items": len(records), "choices_that_differ": flips, "largest_logprob_gap": gap}
    return {**summary, "_per_item": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("check", choices=["slots", "scoring"])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--backend", default="transformers", choices=["transformers", "llama.cpp"])
    ap.add_argument("--dtype", default="float32", help="Transformers only")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=14, help="slots: times the instruction line is said (the head's length)")
    ap.add_argument("--task", default="idiom-cloze")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="also write the result, with its provenance, to this JSON file (atomically)")
    args = ap.parse_args()

    from figlang.backends.loading import load_backend

    options: dict[str, Any] = {"backend": args.backend, "threads": args.threads}
    if args.backend == "transformers":
        options["dtype"] = args.dtype
    lm: Any = load_backend(args.model, **options)
    if args.check == "slots":
        result = copied_slots(lm, args.repeat) if args.backend == "transformers" else continued_logits(lm, args.repeat)
    else:
        result = scores_by_call(lm, args.task, args.split, args.items, args.data_dir)
    per_item = result.pop("_per_item", None)
    report = {"check": args.check, "model": args.model, **options, **result}
    print(json.dumps(report))
    if args.out and per_item is not None:  # each narrative's option scores both ways, beside the report
        from figlang.core.io import write_jsonl

        write_jsonl(args.out.removesuffix(".json") + ".predictions.jsonl", per_item)
    if args.out:
        from figlang.core.io import atomic_write
        from figlang.core.provenance import machine
        from figlang.evaluation.provenance import code_provenance, library_versions

        report["provenance"] = {"code": code_provenance(), "versions": library_versions(), "machine": machine()}
        with atomic_write(args.out) as f:
            json.dump(report, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
