"""Wall and CPU seconds to score a whole split with one system, from a loaded-nothing start (#22: a whole
dev-disjoint split in ≤ 15 minutes on 2 cores).

Runs the evaluation harness as `figlang eval` does, but with the request cache off, so every item is
computed; model loading is inside the measured time (a user's first run pays it). Records wall seconds,
the process's CPU seconds (user + system, all threads), peak resident memory, the load average before
and after (a loaded machine makes wall time a poor figure), the CPU model and flags, and the accuracy,
so the speed figure and the accuracy figure come from the same predictions, written beside the JSON.

    PYTHONPATH=src python benchmarks/bench_split_time.py -t idiom-cloze -s dev-disjoint -m trained \\
        --model figlang:idiom-probe-qwen --threads 2 --data-dir ../shared/data \\
        --out docs/results/bench/split_time_idiom_devdisjoint_probe.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--task", required=True)
    ap.add_argument("-s", "--split", required=True)
    ap.add_argument("-m", "--method", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("-O", dest="options", action="append", default=[], help="method option KEY=VALUE (as figlang eval -O)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", required=True, help="the benchmark JSON; the run's predictions go to <out stem>/")
    args = ap.parse_args(argv)

    import torch

    from figlang.cli.common import parse_key_values
    from figlang.evaluation import evaluate
    from figlang.evaluation.provenance import library_versions
    from figlang.core.devices import TIMING_FLAGS, bf16_is_emulated, cpu_info

    torch.set_num_threads(args.threads)
    options = {**parse_key_values(args.options, "-O"), "threads": args.threads}
    out = Path(args.out)
    run_dir = out.with_suffix("")
    load_before = os.getloadavg()
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    result = evaluate(
        args.task,
        args.method,
        model=args.model,
        split=args.split,
        data_dir=args.data_dir,
        use_cache=False,
        method_options=options,
        out_dir=run_dir,
        progress=False,
    )
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    metrics = result.results["metrics"]
    accuracy = metrics.get("accuracy", {})
    cpu_name, cpu_flags = cpu_info() or (None, frozenset())
    n = metrics.get("n_scored") or len(result.predictions)
    report = {
        "benchmark": "whole_split_time",
        "task": args.task,
        "split": args.split,
        "method": args.method,
        "model": args.model,
        "options": options,
        "threads": args.threads,
        "items": n,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "wall_minutes": round(wall / 60, 2),
        "items_per_second": round(n / wall, 3),
        "cpu_seconds_per_item": round(cpu / max(n, 1), 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "accuracy": accuracy.get("accuracy"),
        "n_correct": accuracy.get("n_correct"),
        "predictions": run_dir.name + "/predictions.jsonl",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "cpu_model": cpu_name,
            "cpu_flags": [f for f in TIMING_FLAGS if f in cpu_flags],
            "bf16_emulated": bf16_is_emulated("cpu"),
            "torch": torch.__version__,
            "load_average_before": list(load_before),
            "load_average_after": list(os.getloadavg()),
        },
        "versions": library_versions(),
        "command": " ".join(["python", "benchmarks/bench_split_time.py", *(argv if argv is not None else sys.argv[1:])]),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k not in ("machine", "versions")}, indent=1))


if __name__ == "__main__":
    main()
