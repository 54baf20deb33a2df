"""Benchmark: LM scoring of the idiom cloze dev set, naive vs shared-prefix (batch 1 and batched).

Each record is a narrative and two continuations; a causal LM scores log P(" " + option | narrative).
Modes (each runs in a fresh subprocess, so that peak RSS is its own):

* ``naive``           batch 1, every narrative+option run in full (no prefix reuse)
* ``shared-b1``       shared prefix: the narrative encoded once, its key/value cache reused; batch 1
* ``shared-batched``  shared prefix, length-sorted batches of ``--batch-size`` rows
* ``naive-batched``   (optional) full recompute, batched
* ``llama.cpp``       (optional) the same requests on ``-O backend=llama.cpp``: the GGUF's 4-bit weights
  run by llama.cpp instead of de-quantized float32 in torch (its agreement column is then
  quantization noise, not a bug)

Reports records/s, pairs/s, peak RSS (``ru_maxrss``; tracemalloc does not see torch's memory) and the
RSS growth over the loaded model, the speed-up over ``naive``, and checks that every mode gives the
same predictions (max |Δ log-prob|, argmax agreement). Writes a JSON.

Wall-clock rates depend on what else runs on the machine; each mode also reports its process CPU
seconds (``time.process_time``, all threads) and the CPU-time speed-up, which a shared machine
disturbs far less. The requests are exactly the ``lm-score`` method's conditional ones (the
narrative stripped at its ends as context, " " + option as continuation).

    .venv/bin/python benchmarks/bench_lm_scoring.py --model smollm2-135m --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODES = {
    "naive": {"prefix_reuse": False, "batch": 1},
    "shared-b1": {"prefix_reuse": True, "batch": 1},
    "shared-batched": {"prefix_reuse": True, "batch": None},  # None: --batch-size
    "naive-batched": {"prefix_reuse": False, "batch": None},
    "llama.cpp": {"backend": "llama.cpp", "batch": 1},  # the GGUF run by llama.cpp (catalog GGUF models, .gguf paths)
}
DEFAULT_MODES = ("naive", "shared-b1", "shared-batched")


def rss_mb() -> float:
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:  # pragma: no cover
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def load_records(data_dir: str, split: str, limit: int | None):
    from figlang.data.registry import get_task

    records = get_task("idiom-cloze").load(split, data_dir)
    return records[:limit] if limit else records


def worker(args: argparse.Namespace) -> None:
    """One mode in this process: load, warm up, score, print a JSON line."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from figlang.backends.base import ScoreRequest
    from figlang.backends.loading import load_backend
    from figlang.methods.prompted.cloze import _context
    from figlang.methods.prompted.prompts import LM_SCORE_CONTINUATION

    spec = MODES[args.worker]
    batch = spec["batch"] or args.batch_size
    records = load_records(args.data_dir, args.split, args.limit)
    requests = [ScoreRequest(_context(r), LM_SCORE_CONTINUATION.format(option=o)) for r in records for o in r.options]
    rss_start = rss_mb()
    t0 = time.perf_counter()
    if spec.get("backend"):
        lm = load_backend(args.model, backend=spec["backend"], threads=args.threads)
    else:
        lm = load_backend(args.model, batch_size=batch, prefix_reuse=spec["prefix_reuse"], dtype=args.dtype)
    load_s = time.perf_counter() - t0
    lm.score(requests[:2])  # warm-up (first-call allocations), not timed
    rss_loaded = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    scores = lm.score(requests)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    out = {
        "mode": args.worker,
        "batch_size": batch,
        "prefix_reuse": spec.get("prefix_reuse", True),
        "records": len(records),
        "pairs": len(requests),
        "tokens_scored": sum(s.n_tokens for s in scores),
        "seconds": seconds,
        "records_per_s": len(records) / seconds,
        "pairs_per_s": len(requests) / seconds,
        "cpu_seconds": cpu_seconds,
        "records_per_cpu_s": len(records) / cpu_seconds,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "load_seconds": load_s,
        "rss_start_mb": rss_start,
        "rss_loaded_mb": rss_loaded,
        "peak_rss_mb": peak_rss_mb(),
        "threads": torch.get_num_threads(),
        "logprobs": [s.logprob for s in scores],
        "labels": [r.label for r in records],
        "model": lm.fingerprint(),
    }
    print("RESULT " + json.dumps(out), flush=True)


def run_mode(mode: str, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        mode,
        "--model",
        args.model,
        "--data-dir",
        args.data_dir,
        "--split",
        args.split,
        "--batch-size",
        str(args.batch_size),
        "--dtype",
        args.dtype,
    ]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    print(f"[{mode}] {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"mode {mode} failed (exit {done.returncode})")
    return json.loads(lines[-1][len("RESULT ") :])


def accuracy(logprobs: list[float], labels: list[int | None]) -> float:
    n_opt = len(logprobs) // len(labels)
    hits = [max(range(n_opt), key=lambda j: (logprobs[i * n_opt + j], -j)) == lab for i, lab in enumerate(labels) if lab is not None]
    return sum(hits) / len(hits) if hits else float("nan")


def predictions(logprobs: list[float], n_records: int) -> list[int]:
    n_opt = len(logprobs) // n_records
    return [max(range(n_opt), key=lambda j: (logprobs[i * n_opt + j], -j)) for i in range(n_records)]


def provenance_of(args: argparse.Namespace) -> dict:
    """The code, library versions and the scored records (count and sha256 of their ids) behind the report."""
    from figlang.evaluation.provenance import code_provenance, library_versions, split_fingerprint

    return {
        "code": code_provenance(),
        "versions": library_versions(),
        "data": split_fingerprint(load_records(args.data_dir, args.split, args.limit)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m", help="model reference (catalog name, path, hub id)")
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=None, help="first N records only")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES), help=f"comma-separated, from {', '.join(MODES)}")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "lm_scoring.json"))
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; known: {list(MODES)}")
    results = {m: run_mode(m, args) for m in modes}
    base = results.get("naive") or next(iter(results.values()))
    ref_lp = base["logprobs"]
    n_records = base["records"]
    ref_pred = predictions(ref_lp, n_records)
    rows = []
    for m, r in results.items():
        diff = max(abs(a - b) for a, b in zip(r["logprobs"], ref_lp))
        agree = sum(p == q for p, q in zip(predictions(r["logprobs"], n_records), ref_pred)) / n_records
        rows.append(
            {
                "mode": m,
                "batch_size": r["batch_size"],
                "seconds": r["seconds"],
                "records_per_s": r["records_per_s"],
                "pairs_per_s": r["pairs_per_s"],
                "speedup_vs_" + base["mode"]: base["seconds"] / r["seconds"],
                "cpu_seconds": r["cpu_seconds"],
                "records_per_cpu_s": r["records_per_cpu_s"],
                "cpu_speedup_vs_" + base["mode"]: base["cpu_seconds"] / r["cpu_seconds"],
                "load_average": r["load_average"],
                "peak_rss_mb": r["peak_rss_mb"],
                "rss_over_loaded_mb": r["peak_rss_mb"] - r["rss_loaded_mb"],
                "accuracy": accuracy(r["logprobs"], r["labels"]),
                "max_abs_logprob_diff": diff,
                "argmax_agreement": agree,
            }
        )
    speed_key = "speedup_vs_" + base["mode"]
    cpu_key = "cpu_speedup_vs_" + base["mode"]
    header = f"{'mode':<15} {'batch':>5} {'seconds':>8} {'rec/s':>7} {'pairs/s':>8} {'speedup':>8} {'CPU s':>7} {'rec/CPU-s':>9} {'CPU speedup':>11} {'peak RSS MB':>11} {'Δ RSS MB':>9} {'acc':>6} {'max|Δlp|':>9} {'agree':>6}"
    print(
        f"\nidiom-cloze {args.split}: {n_records} records, {base['pairs']} pairs, model {args.model}, "
        f"threads {base['threads']}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['mode']:<15} {row['batch_size']:>5} {row['seconds']:>8.1f} {row['records_per_s']:>7.2f} {row['pairs_per_s']:>8.2f} "
            f"{row[speed_key]:>7.2f}x {row['cpu_seconds']:>7.1f} {row['records_per_cpu_s']:>9.2f} {row[cpu_key]:>10.2f}x {row['peak_rss_mb']:>11.0f} {row['rss_over_loaded_mb']:>9.0f} {row['accuracy']:>6.3f} "
            f"{row['max_abs_logprob_diff']:>9.1e} {row['argmax_agreement']:>6.3f}"
        )
    report = {
        "benchmark": "lm_scoring",
        "task": "idiom-cloze",
        "split": args.split,
        "model": args.model,
        "model_fingerprint": base["model"],
        "records": n_records,
        "pairs": base["pairs"],
        "tokens_scored": base["tokens_scored"],
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        },
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        **provenance_of(args),
        "rows": rows,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
