"""Identity check: figlang.explain one pair at a time (prompt lookup) against the committed val run (greedy, batches of 16).

The first PER_TYPE val pairs of each figure type, in val order, are explained one at a time with the val run's
options (so by prompt lookup); the first PLAIN of them again token by token (prompt_lookup=0). Each answer is
compared with the committed prediction (label, explanation, raw text, examples shown) and appended to OUT
(JSON lines; a rerun skips the pairs already there), with its forward passes, wall and CPU seconds.

  PYTHONPATH=src python benchmarks/explain_identity.py docs/results/explain/prompt-lookup-val-identity.jsonl 5 2
"""

import gzip
import json
import os
import sys
import time
from figlang.data.registry import get_task
from figlang.explain import explain, explainer

DATA = "../shared/data"
OUT = sys.argv[1]
PER_TYPE = int(sys.argv[2]) if len(sys.argv) > 2 else 5
PLAIN = int(sys.argv[3]) if len(sys.argv) > 3 else 0  # also decode the first PLAIN pairs token by token
opts = {
    "batch_size": 16,
    "dtype": "bfloat16",
    "k": 6,
    "label_method": "trained",
    "label_model": "runs/cpu/flute-nli-mpnet-sel",
    "threads": 2,
}  # the val run's
committed = {r["id"]: r for r in map(json.loads, gzip.open("docs/results/explain/flute-val-k6/predictions.jsonl.gz", "rt"))}
val = get_task("flute").load("val", DATA)
chosen, seen = [], {}
for r in val:  # the first PER_TYPE pairs of each figure type, in val order
    if seen.get(r.figure_type, 0) < PER_TYPE:
        seen[r.figure_type] = seen.get(r.figure_type, 0) + 1
        chosen.append(r)
m = explainer("qwen2.5-1.5b", DATA, **opts)
lm = m.lm
passes = [0]
fwd = lm.model.forward


def counted(*a, **k):
    passes[0] += 1
    return fwd(*a, **k)


lm.model.forward = counted
done = set()
if os.path.exists(OUT):
    done = {json.loads(line)["id"] for line in open(OUT)}
for n, r in enumerate(chosen):
    if r.id in done:
        continue
    for lookup in (10, 0) if n < PLAIN else (10,):
        lm.prompt_lookup = lookup
        passes[0] = 0
        w, c = time.perf_counter(), time.process_time()
        e = explain(r.premise, r.hypothesis, r.figure_type, idiom=r.expression, data_dir=DATA, use_cache=False, **opts)
        w, c = time.perf_counter() - w, time.process_time() - c
        ref = committed[r.id]
        row = {
            "id": r.id,
            "figure_type": r.figure_type,
            "prompt_lookup": lookup,
            "label_same": e.label == ref["prediction"],
            "explanation_same": e.explanation == ref["explanation"],
            "raw_same": e.raw == ref["raw"],
            "examples_same": e.produced_by["examples"] == ref["meta"]["examples"],
            "label": e.label,
            "explanation": e.explanation,
            "committed_explanation": ref["explanation"],
            "forward_passes": passes[0],
            "wall_s": round(w, 2),
            "cpu_s": round(c, 2),
            "load_average": os.getloadavg(),
        }
        with open(OUT, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            json.dumps(
                {
                    k: row[k]
                    for k in ("id", "prompt_lookup", "label_same", "explanation_same", "raw_same", "forward_passes", "wall_s", "cpu_s")
                }
            ),
            flush=True,
        )
