"""How fast `figlang serve` starts and answers on a folder holding a large run.

Starts the real server (a subprocess, as a user would), times launch → first 200 on the start page, then
the run page and a deep page of the run's items; repeats, and writes the figures with the machine's load.

    python benchmarks/bench_serve_start.py --runs RUNS --run impli-first --data-dir ../shared/data \
        --out docs/results/serve/bench_serve_start.json

RUNS/impli-first is made by `figlang eval -t impli -m always-first -o RUNS/impli-first` (26,124 items).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, timeout: float = 60) -> None:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()


def one(runs: str, run: str, data_dir: str) -> dict[str, float]:
    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "figlang.cli.main", "serve", "--runs", runs, "--data-dir", data_dir, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                _get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit("figlang serve exited before answering") from None
                time.sleep(0.05)
        started = time.perf_counter()
        _get(f"http://127.0.0.1:{port}/run/{run}")
        run_page = time.perf_counter()
        _get(f"http://127.0.0.1:{port}/run/{run}?page=500")
        deep = time.perf_counter()
    finally:
        proc.terminate()
        proc.wait()
    return {
        "start_to_first_page_s": round(started - start, 3),
        "run_page_s": round(run_page - started, 3),
        "run_page_500_s": round(deep - run_page, 3),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--run", default="impli-first")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    items = sum(1 for _ in open(Path(a.runs) / a.run / "predictions.jsonl", encoding="utf-8"))
    rows = [one(a.runs, a.run, a.data_dir) for _ in range(a.repeats)]
    result = {
        "benchmark": "figlang serve start and page times",
        "run_items": items,
        "cpus": os.cpu_count(),
        "repeats": rows,
        "worst_start_s": max(r["start_to_first_page_s"] for r in rows),
    }
    print(json.dumps(result, indent=1))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
