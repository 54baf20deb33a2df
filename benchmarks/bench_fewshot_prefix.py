"""Benchmark: how many prompt tokens the few-shot cloze method makes a causal LM run.

Few-shot prompts are built per item (examples that fit the budget, never the item's own
expression), so many items repeat the same examples and only their query differs. The
Transformers backend encodes shared prefixes once; this script counts the context tokens
forwarded for the method's real requests, chunk by chunk as the harness sends them, under:

* ``per-context``  every distinct context in full (what a backend without prefix reuse does);
* ``call-prefix``  one prefix common to all contexts of a call encoded once (before 2026-11-23);
* ``runs``         that, plus runs of contexts sharing a longer prefix, each encoded once (now).

Token counts are exact and do not depend on what else runs on the machine; the forward passes'
cost grows at least linearly with them. ``--time N`` also scores the first N items with the
backend (prefix reuse on, i.e. ``runs``, vs off) and checks that both give the same answers.

    .venv/bin/python benchmarks/bench_fewshot_prefix.py --task idiom-cloze --model smollm2-135m --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import time

from figlang.data.registry import get_task
from figlang.evaluation.provenance import code_provenance, library_versions, split_fingerprint
from figlang.backends.base import ScoreRequest
from figlang.backends.prefix import shared_prefix_length
from figlang.backends.loading import load_backend
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.cloze import FewShot, _cloze, _context


def contexts_of(method: FewShot, items: list) -> list[str]:
    out = []
    for r in items:
        _, prefix = method.examples_for(r)
        n = len(r.options)
        for rot in range(n):
            order = [(rot + j) % n for j in range(n)]
            out.append(prefix + P.FEW_SHOT_QUERY.format(context=_context(r), options=method._options([r.options[i] for i in order])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="idiom-cloze")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--chunk", type=int, default=32, help="items per score() call (the harness's chunk size)")
    ap.add_argument("--time", type=int, default=0, help="also time N items with prefix reuse on and off")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    lm = load_backend(args.model, threads=args.threads)
    task = get_task(args.task)
    method = FewShot(lm)
    method.fit(task.load("train", args.data_dir))
    items = _cloze(task.load(args.split, args.data_dir), "few-shot")
    totals = {"per-context": 0, "call-prefix": 0, "runs": 0}
    for c in range(0, len(items), args.chunk):
        ctxs = list(dict.fromkeys(tuple(lm._encode_prompt(p)) for p in contexts_of(method, items[c : c + args.chunk])))
        totals["per-context"] += sum(len(x) for x in ctxs)
        n = shared_prefix_length(ctxs) if len(ctxs) > 1 else 0
        skip = n if n >= lm.MIN_COMMON_PREFIX else 0  # what _common_prefix encodes for the call
        totals["call-prefix"] += skip + sum(len(x) - skip for x in ctxs)
        runs = lm._prefix_runs(sorted(ctxs, key=len, reverse=True), skip)
        totals["runs"] += skip + sum(shared - skip + sum(len(x) - shared for x in members) for members, shared in runs)
    report = {
        "task": args.task,
        "split": args.split,
        "model": args.model,
        "items": len(items),
        "chunk": args.chunk,
        "context_tokens": totals,
        "ratio_call_prefix_over_runs": totals["call-prefix"] / totals["runs"],
        "ratio_per_context_over_runs": totals["per-context"] / totals["runs"],
        "tokenizer": lm.fingerprint(),
        "code": code_provenance(),
        "versions": library_versions(),
        "data": split_fingerprint(items),
    }
    if args.time:
        reqs = [
            ScoreRequest(p, P.FEW_SHOT_CONTINUATION.format(number=j + 1)) for p in contexts_of(method, items[: args.time]) for j in range(2)
        ]
        timing = {}
        for name, reuse in (("runs", True), ("per-context", False)):
            lm.prefix_reuse = reuse
            t0, c0 = time.perf_counter(), time.process_time()
            scores = lm.score(reqs)
            timing[name] = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "logprobs": [s.logprob for s in scores]}
        diff = max(abs(a - b) for a, b in zip(timing["runs"]["logprobs"], timing["per-context"]["logprobs"]))
        report["timing"] = {k: {kk: vv for kk, vv in v.items() if kk != "logprobs"} for k, v in timing.items()}
        report["timing"]["max_abs_logprob_diff"] = diff
        report["timing"]["cpu_speedup"] = timing["per-context"]["cpu_s"] / timing["runs"]["cpu_s"]
    print(json.dumps(report, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
