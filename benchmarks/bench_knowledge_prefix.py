"""What the 12 inferences of ``lm-score-knowledge`` cost against plain ``lm-score`` (issue 22), two ways.

* CPU seconds of ``predict()`` on the same items, methods interleaved over rounds so that a change in the
  machine's load hits all of them alike;
* tokens the model runs, counted with the tokenizer (independent of load): plain = narrative + each option;
  ``order=inference-first`` = per inference, inference + narrative + each option (no token prefix is shared
  across inferences); ``order=narrative-first`` = the narrative once (shared by all 24 texts) + per inference,
  inference + each option.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/bench_knowledge_prefix.py --items 6 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default="idiom-cloze")
    ap.add_argument("--split", default="selection")
    ap.add_argument("--items", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from figlang.data.registry import get_task
    from figlang.methods.base import METHODS
    from figlang.methods.prompted.cloze import _context
    from figlang.methods.prompted.meaning import join_context

    records = get_task(a.task).load(a.split, os.environ.get("FIGLANG_DATA_DIR", "../shared/data"))[: a.items]
    opts = {"threads": 1, "dtype": "float32"}
    methods = {
        "plain": METHODS.create("lm-score", model=a.model, norm="sum", **opts),
        "meaning": METHODS.create("lm-score-meaning", model=a.model, norm="sum", **opts),
        "knowledge narrative-first": METHODS.create("lm-score-knowledge", model=a.model, order="narrative-first", **opts),
        "knowledge inference-first": METHODS.create("lm-score-knowledge", model=a.model, order="inference-first", **opts),
    }
    for m in methods.values():
        m.predict(records[:1])  # load and warm up
    cpu = dict.fromkeys(methods, 0.0)
    for _ in range(a.rounds):
        for name, m in methods.items():
            t = time.process_time()
            m.predict(records)
            cpu[name] += time.process_time() - t
    tok = methods["plain"].lm.tokenizer
    n = lambda text: len(tok(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    tokens = dict.fromkeys(methods, 0)
    for r in records:
        narrative = _context(r)
        opts_t = sum(n(" " + o) for o in r.options)
        tokens["plain"] += n(narrative) + opts_t
        tokens["meaning"] += n(methods["meaning"].meaning_context(r)) + opts_t if methods["meaning"].resolve_meanings([r]) is None else 0
        infs = r.inferences["context"][:12]
        tokens["knowledge narrative-first"] += n(narrative) + sum(n(" " + i.rstrip(" .") + ".") + opts_t for i in infs)
        tokens["knowledge inference-first"] += sum(n(join_context(narrative, i.rstrip(" .") + ".", True)) + opts_t for i in infs)
    report = {
        "task": a.task,
        "split": a.split,
        "items": len(records),
        "rounds": a.rounds,
        "model": a.model,
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "cpu_ratio_vs_plain": {k: round(v / cpu["plain"], 2) for k, v in cpu.items()},
        "tokens": tokens,
        "token_ratio_vs_plain": {k: round(v / tokens["plain"], 2) for k, v in tokens.items()},
    }
    print(json.dumps(report, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
