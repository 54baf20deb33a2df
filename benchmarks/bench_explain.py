"""Seconds per pair and peak memory of the explaining system (figlang.explain), without the request cache.

Two figures (the issue's targets: all 499 FLUTE val pairs in ≤ 45 minutes on 2 cores, i.e. ≤ 5.4 s a
pair; one `figlang explain` in ≤ 10 s once the model is loaded):

* load: creating and fitting the method (loading the model and the label method's, the retrieval index from its disk cache);
* one pair: `explain()` on one new pair after loading (the interactive case);
* N pairs: `explain_pairs()` on N FLUTE pairs of a split, seconds per pair.

Nothing is read from or written to the request cache (``use_cache=False``), so each run measures
model time. Peak memory is the process's maximum resident set size (``ru_maxrss``).

Run (2 threads, the first 20 selection pairs):

  PYTHONPATH=src python benchmarks/bench_explain.py --n 20 --threads 2 --split selection --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import resource
import time


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--n", type=int, default=20, help="pairs to explain in the batch measurement")
    ap.add_argument("--split", default="selection")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--label-model", default=None, help="a trained FLUTE classifier's folder (label_method=trained)")
    ap.add_argument("--mode", default="pipeline")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="write the measurements here as JSON")
    args = ap.parse_args()

    from figlang.data.registry import get_task
    from figlang.explain import explain, explain_pairs, explainer

    options = {"threads": args.threads, "k": args.k, "mode": args.mode, "pool": "train-fit"}
    if args.label_model:
        options.update(label_method="trained", label_model=args.label_model)
    start = time.perf_counter()
    method = explainer(args.model, args.data_dir, **options)  # qwen2.5-1.5b: the backend figlang.explain picks for this CPU
    load = time.perf_counter() - start
    start = time.perf_counter()
    one = explain("The meeting was very boring.", "The meeting was as exciting as watching paint dry.", "simile",
                  model=args.model, data_dir=args.data_dir, use_cache=False, **options)  # fmt: skip
    single = time.perf_counter() - start
    pairs = [{"premise": r.premise, "hypothesis": r.hypothesis, "figure_type": r.figure_type, "idiom": r.expression}
             for r in get_task("flute").load(args.split, args.data_dir)[: args.n]]  # fmt: skip
    start = time.perf_counter()
    answers = explain_pairs(pairs, model=args.model, data_dir=args.data_dir, use_cache=False, **options)
    batch = time.perf_counter() - start
    result = {
        "model": args.model, "threads": args.threads, "k": args.k, "mode": args.mode, "split": args.split,
        "label_model": args.label_model, "backend": method.fingerprint().get("backend"),
        "load_seconds": round(load, 1), "one_pair_seconds": round(single, 2), "one_pair": one.to_dict(),
        "n": len(pairs), "batch_seconds": round(batch, 1), "seconds_per_pair": round(batch / max(len(pairs), 1), 2),
        "val_499_minutes_at_this_rate": round(499 * batch / max(len(pairs), 1) / 60, 1),
        "invalid": sum(1 for a in answers if not a.valid), "peak_rss_mib": round(peak_mib(), 1),
        "load_average": list(__import__("os").getloadavg()),
    }  # fmt: skip
    print(json.dumps({k: v for k, v in result.items() if k != "one_pair"}, indent=1))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
