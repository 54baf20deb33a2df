"""How long the test suite takes: `make test` and `make test-fast`, one after the other, on this machine.

    python benchmarks/bench_test_suite.py --out docs/results/tests/suite_timing.json

Run it from a clone whose `.venv` is set up (`make setup`), on an idle machine: it records the load average before
and after each target, the CPU count, the commit and whether the tree was clean, and each target's wall seconds,
exit status and pytest's summary line. Both targets include the style checks (ruff, mypy) that `make test` runs first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()


def run_target(target: str) -> dict[str, object]:
    """Runs `make TARGET`, streaming its output, and returns its wall time, status and pytest's last summary line."""
    load_before = os.getloadavg()
    start = time.perf_counter()
    proc = subprocess.Popen(["make", target], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    summary = ""
    for line in proc.stdout:
        sys.stdout.write(line)
        if re.search(r"\d+ (passed|failed)", line):
            summary = line.strip().strip("=").strip()
    rc = proc.wait()
    wall = time.perf_counter() - start
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|deselected|errors?)", summary)}
    return {
        "target": target,
        "wall_seconds": round(wall, 1),
        "minutes": round(wall / 60, 1),
        "returncode": rc,
        "summary": summary,
        "counts": counts,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--targets", nargs="+", default=["test", "test-fast"], help="make targets, timed in this order")
    args = parser.parse_args()
    record: dict[str, object] = {  # the tree as the timing starts
        "command": "python benchmarks/bench_test_suite.py --out " + str(args.out),
        "commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
    }
    record["targets"] = results = {t: run_target(t) for t in args.targets}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    failed = [t for t, r in results.items() if r["returncode"]]
    print(f"wrote {args.out}" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
