"""Benchmark: two llama-cpp-python builds, back to back, on one GGUF model: prefill and decode speed.

Made for issue #39 (target 3): the former AVX2-only build of ``scripts/install_llama_cpp.sh`` against its
run-time-dispatch build (GGML_BACKEND_DL, one CPU module per x86 instruction set, no AMX), which loads
AVX-512 kernels where the CPU has them. Each build is a Python environment with llama-cpp-python
installed (``--build NAME=PYTHON``); each measurement runs in a fresh subprocess of that Python, and the
builds alternate (``--repeat`` rounds), so that a busy machine's load falls on both alike.

A measurement: load the model (``n_ctx`` 2048, ``n_batch`` 512, ``--threads``), evaluate ``--prefill``
random token ids (seeded; the prefill rate is tokens/s), then ``--decode`` single tokens one at a time
(ms/token), the way figlang's llama.cpp backend and a generation use it. It also records the build's
``llama_print_system_info()``, which ``libggml-cpu*.so`` the process mapped (the variant the dispatch
build chose), and the logits after the prefill, so that the builds' arithmetic can be compared (max
absolute difference, and whether the top token agrees).

    # the former AVX2-only build, from its cached wheel, in a throwaway venv beside .venv's current build
    python3 -m venv /tmp/avx2venv && /tmp/avx2venv/bin/pip install ~/.cache/figlang/wheels/llama-cpp-python-0.3.36-avx2/*.whl
    PYTHONPATH=src .venv/bin/python benchmarks/bench_llama_build.py --build avx2=/tmp/avx2venv/bin/python \\
        --build dispatch=.venv/bin/python --threads 2 --repeat 5 --out docs/results/bench/llama_build_dispatch.json

The file names each build by the wheel it was installed from (and its hash), not by its Python's path.

Only the worker needs llama-cpp-python (and numpy); the parent needs figlang (provenance, CPU flags).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_MODEL = Path("~/.cache/figlang/models/qwen2.5-1.5b.gguf").expanduser()


def worker(args: argparse.Namespace) -> dict:
    """One measurement in this process (the build's Python): timings, system info, variant, logits file."""
    import random

    import numpy as np

    t0 = time.perf_counter()
    import llama_cpp
    from llama_cpp import Llama

    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    m = Llama(model_path=str(args.model), n_ctx=2048, n_threads=args.threads, n_threads_batch=args.threads, n_batch=512, verbose=False)
    load_s = time.perf_counter() - t0
    rng = random.Random(args.seed)
    tokens = [rng.randint(100, 20000) for _ in range(args.prefill)]
    t0 = time.perf_counter()
    m.eval(tokens)
    prefill_s = time.perf_counter() - t0
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(m._ctx.ctx, -1), shape=(m.n_vocab(),)).copy()
    t0 = time.perf_counter()
    for _ in range(args.decode):
        m.eval([123])
    decode_s = time.perf_counter() - t0
    np.save(args.logits_out, logits)
    with open("/proc/self/maps", encoding="utf-8") as maps:
        ggml_cpu = sorted({Path(line.split()[-1]).name for line in maps if "libggml-cpu" in line})
    lib_dir = Path(llama_cpp.__file__).parent / "lib"
    return {
        "llama_cpp_version": llama_cpp.__version__,
        "installed_from": _installed_from(),
        "cpu_modules_shipped": sorted(p.name for p in lib_dir.glob("libggml-cpu*.so")),
        "cpu_module_loaded": ggml_cpu,
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "import_seconds": import_s,
        "load_seconds": load_s,
        "prefill_seconds": prefill_s,
        "prefill_tokens_per_s": args.prefill / prefill_s,
        "decode_ms_per_token": decode_s / args.decode * 1000,
        "loadavg_after": os.getloadavg()[0],
    }


def _installed_from() -> dict:
    """The wheel (or source) pip installed llama-cpp-python from, and its hash: which build this is."""
    from importlib.metadata import distribution

    try:
        direct = json.loads(distribution("llama_cpp_python").read_text("direct_url.json") or "{}")
    except Exception:  # noqa: BLE001 - no record: installed from an index
        direct = {}
    return {"url": direct.get("url"), "hash": (direct.get("archive_info") or {}).get("hash")}


def run_one(python: str, args: argparse.Namespace, logits_out: Path) -> dict:
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        "--model",
        str(args.model),
        "--threads",
        str(args.threads),
        "--prefill",
        str(args.prefill),
        "--decode",
        str(args.decode),
        "--seed",
        str(args.seed),
        "--logits-out",
        str(logits_out),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the build's own environment, nothing of ours
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{python}: worker failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", default=[], metavar="NAME=PYTHON", help="a build: a name and the Python that has it")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefill", type=int, default=700)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--note", default="", help="what the file should say about the conditions (a shared machine, ...)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--logits-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return

    import numpy as np

    from figlang.core.devices import TIMING_FLAGS, cpu_info
    from figlang.core.provenance import code_provenance, portable_path

    builds = dict(b.split("=", 1) for b in args.build)
    if len(builds) < 1:
        ap.error("name at least one --build NAME=PYTHON")
    runs: dict[str, list[dict]] = {name: [] for name in builds}
    code = code_provenance()  # the code as the run starts
    loadavg_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for name, python in builds.items():
                res = run_one(python, args, Path(tmp) / f"{name}.npy")
                runs[name].append(res)
                print(
                    f"[{r + 1}/{args.repeat}] {name:<10} {res['cpu_module_loaded'] or 'static CPU backend'}: prefill "
                    f"{res['prefill_tokens_per_s']:.1f} tok/s, decode {res['decode_ms_per_token']:.1f} ms/token "
                    f"(load avg {res['loadavg_after']:.1f})",
                    file=sys.stderr,
                    flush=True,
                )
        logits = {name: np.load(Path(tmp) / f"{name}.npy") for name in builds}

    summary: dict[str, dict] = {}
    for name, rs in runs.items():
        summary[name] = {
            "prefill_tokens_per_s_median": statistics.median(r["prefill_tokens_per_s"] for r in rs),
            "decode_ms_per_token_median": statistics.median(r["decode_ms_per_token"] for r in rs),
            "prefill_tokens_per_s": [round(r["prefill_tokens_per_s"], 2) for r in rs],
            "decode_ms_per_token": [round(r["decode_ms_per_token"], 2) for r in rs],
            "load_seconds_median": statistics.median(r["load_seconds"] for r in rs),
        }
    names = list(builds)
    comparison: dict[str, float | bool] = {}
    if len(names) >= 2:
        base, new = names[0], names[1]
        comparison = {
            f"prefill_{new}_over_{base}": summary[new]["prefill_tokens_per_s_median"] / summary[base]["prefill_tokens_per_s_median"],
            f"decode_{new}_over_{base}": summary[base]["decode_ms_per_token_median"] / summary[new]["decode_ms_per_token_median"],
            "logits_max_abs_diff": float(np.max(np.abs(logits[new] - logits[base]))),
            "logits_mean_abs_diff": float(np.mean(np.abs(logits[new] - logits[base]))),
            "same_top_token": bool(int(np.argmax(logits[new])) == int(np.argmax(logits[base]))),
        }
    cpu_name, cpu_flags = cpu_info() or (None, frozenset())
    report = {
        # each build's Python is this machine's path (a throwaway venv): the command names it PYTHON, the file its wheel
        "command": shlex.join(["python", *(f"{a.split('=', 1)[0]}=PYTHON" if a in args.build else a for a in sys.argv)]),
        "code": code,
        "note": args.note,
        "model": str(args.model.name),
        "settings": {
            "threads": args.threads,
            "prefill_tokens": args.prefill,
            "decode_tokens": args.decode,
            "seed": args.seed,
            "repeat": args.repeat,
            "n_ctx": 2048,
            "n_batch": 512,
        },
        "machine": {
            "cpu": cpu_name,
            "flags": sorted(f for f in TIMING_FLAGS if f in cpu_flags),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_before": loadavg_before,
        },
        "builds": {
            name: {
                "llama_cpp_version": runs[name][0]["llama_cpp_version"],
                "wheel": portable_path((runs[name][0]["installed_from"]["url"] or "").removeprefix("file://") or None),
                "wheel_hash": runs[name][0]["installed_from"]["hash"],
                **{k: runs[name][0][k] for k in ("cpu_modules_shipped", "cpu_module_loaded", "system_info")},
            }
            for name in builds
        },
        "summary": summary,
        "comparison": comparison,
        "runs": {name: [{k: v for k, v in r.items() if k != "installed_from"} for r in rs] for name, rs in runs.items()},
    }
    print(json.dumps({"summary": summary, "comparison": comparison}, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
