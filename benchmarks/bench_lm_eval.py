"""Benchmark: lm-evaluation-harness against figlang's lm-score on the same model and items, and the limit.

One run, each mode in a fresh subprocess (so that peak RSS is its own), on one cloze split that
`figlang export lm-eval` writes once:

* ``lm-eval``          lm-eval 0.4.x's ``simple_evaluate`` (model ``hf``, float32) on the exported task
* ``figlang``          ``lm-score -O input=lm-eval`` (the same requests, float32): must answer as lm-eval does
* ``limit``            one batched forward pass over exactly the unique tokens the task needs: the prefix
  tree of every request's tokens (a token runs once per distinct sequence before it), packed end to
  end into rows without padding or attention mask, the LM head once per distinct token that predicts
  a continuation token, tensors built before the clock starts: no Python in the loop
* ``figlang-fast``     figlang in the CPU's fast dtype: bfloat16 where the CPU computes it natively
  (AVX512-BF16 / AMX in /proc/cpuinfo); where it does not (AVX2 only) torch emulates bfloat16 several
  times slower than float32, so float32 is the fast dtype, this row is not run and the summary's fast-dtype
  ratio is the float32 figlang row's
* ``figlang-bf16``     bfloat16 whatever the CPU (``--bf16-limit N`` items): what emulation costs
* ``qwen-transformers`` / ``qwen-transformers-fast`` / ``qwen-llama.cpp`` (with ``--qwen``): figlang's lm-score
  (input=lm-eval) with the larger catalog model through the Transformers backend (float32, and the CPU's fast
  dtype where that is not float32) and through llama.cpp, on ``--qwen-limit`` items

Each mode reports items/s, wall and CPU seconds (``time.process_time``: all threads), peak RSS
(``ru_maxrss``), and its predictions; agreement is counted item for item against lm-eval (or against
figlang float32 / the Transformers backend). Load times are reported apart and not in items/s.
``--repeat N`` runs figlang and the limit N times each, alternating, and the summary gives the median of
each ratio (with every repeat's value); ``--jobs K`` runs K modes at once (on a loaded machine the CPU
seconds ratios are then the steadier ones).

    .venv/bin/python benchmarks/bench_lm_eval.py --threads 1 --repeat 3 --jobs 3 --qwen --qwen-limit 8 --out docs/results/bench/lm_eval_idiom_dev.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMOLL_MODES = ("lm-eval", "figlang", "figlang-fast", "figlang-bf16", "limit")
QWEN_MODES = ("qwen-transformers", "qwen-transformers-fast", "qwen-llama.cpp")
ALL_MODES = SMOLL_MODES + QWEN_MODES


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def load_records(args: argparse.Namespace, limit: int | None):
    from figlang.data.registry import get_task

    records = get_task(args.task).load(args.split, args.data_dir)
    return records[:limit] if limit else records


def _clock(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def fast_dtype() -> str:
    """The CPU's fast dtype: bfloat16 where the CPU computes it natively (AVX512-BF16 / AMX), else float32.

    Without those instructions torch emulates bfloat16 several times slower than float32, so on such a
    CPU (AVX2 only, like this project's machine) float32 itself is the fast dtype.
    """
    from figlang.core.devices import auto_cpu_dtype

    return auto_cpu_dtype()


def worker_lm_eval(args: argparse.Namespace) -> dict:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from figlang.evaluation.lm_eval_samples import loglikelihoods, predicted_index
    from figlang.backends.loading import resolve

    lm, load_s, _ = _clock(lambda: HFLM(pretrained=resolve(args.model).path, dtype=args.dtype, batch_size=args.batch_size, device="cpu"))
    rss_loaded = rss_mb()
    name = args.lm_eval_task
    out, seconds, cpu = _clock(
        lambda: lm_eval.simple_evaluate(model=lm, tasks=[name], task_manager=TaskManager(include_path=args.tasks_dir), log_samples=True)
    )
    samples = out["samples"][name]
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "load_seconds": load_s,
        "rss_loaded_mb": rss_loaded,
        "predictions": {s["doc"]["id"]: predicted_index(s, "acc") for s in samples},
        "predictions_norm": {s["doc"]["id"]: predicted_index(s, "acc_norm") for s in samples},
        "logprobs": {s["doc"]["id"]: loglikelihoods(s) for s in samples},
        "accuracy": out["results"][name]["acc,none"],
        "accuracy_norm": out["results"][name]["acc_norm,none"],
        "items": len(samples),
        "batch_size": args.batch_size,
        "dtype": args.dtype,
    }


def worker_figlang(args: argparse.Namespace, model: str, dtype: str, limit: int | None, backend: str | None = None) -> dict:
    from figlang.methods.base import get_methods

    records = load_records(args, limit)
    options: dict = {"input": "lm-eval", "norm": "sum"}
    if backend == "llama.cpp":
        options.update(backend="llama.cpp", threads=args.threads or 2)
    else:
        options.update(dtype=dtype, batch_size=args.batch_size)
    method = get_methods().create("lm-score", model=model, **options)
    _, load_s, _ = _clock(lambda: method.lm)
    rss_loaded = rss_mb()
    preds, seconds, cpu = _clock(lambda: method.predict(records))
    labels = {r.id: r.label for r in records}
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "load_seconds": load_s,
        "rss_loaded_mb": rss_loaded,
        "predictions": {p.id: p.prediction for p in preds},
        "logprobs": {p.id: p.meta["logprob"] for p in preds},
        "accuracy": sum(p.prediction == labels[p.id] for p in preds) / len(preds),
        "items": len(preds),
        "batch_size": args.batch_size,
        "dtype": dtype if backend != "llama.cpp" else "gguf (llama.cpp)",
        "model": method.lm.fingerprint(),
    }


def worker_limit(args: argparse.Namespace) -> dict:
    """The unique tokens through the model once, in rows packed without padding; logits only where needed.

    "Unique" is the prefix tree of every request's context + continuation: a token runs once for
    each distinct sequence of tokens before it (contexts that share a start share it, options of a
    context that begin alike share their first tokens), and the LM head runs once for each distinct
    token that predicts a continuation token. The tree's tokens fill rows of the task's average
    tree width end to end, with plain causal attention (no mask, so the cheapest attention kernel),
    ``--limit-rows`` rows per forward pass; all tensors are built before the clock starts.
    """
    import torch

    from figlang.backends.transformers_backend import TokenTree
    from figlang.backends.loading import load_backend
    from figlang.methods.prompted.cloze import lm_eval_request, narrative_text

    records = load_records(args, args.limit)
    lm, load_s, _ = _clock(lambda: load_backend(args.model, dtype=args.dtype))
    requests = [lm_eval_request(narrative_text(r), o) for r in records for o in r.options]
    _, encoded = lm._encode_requests(requests)
    contexts: dict[tuple[int, ...], list[tuple[int, list[int]]]] = {}
    for i, ctx, cont in encoded:
        contexts.setdefault(tuple(ctx), []).append((i, cont))
    tree = TokenTree.of(list(contexts.items()))
    needed = len({node for _, nodes, _ in tree.picks for node in nodes})
    stream = list(tree.tokens)
    width = max(16, round(len(stream) / len(contexts)))  # rows as wide as the task's own trees, on average
    n_rows = -(-len(stream) // width)
    stream += [lm.pad_id] * (n_rows * width - len(stream))
    ids = torch.tensor(stream, dtype=torch.long).view(n_rows, width)
    per_pass = max(1, min(args.limit_rows, lm.max_batch_tokens // width))
    chunks = [ids[i : i + per_pass] for i in range(0, n_rows, per_pass)]
    # the positions whose logits a scorer needs (one per distinct predicting token), spread over the rows
    picks = torch.linspace(0, n_rows * width - 1, needed).long()
    pick_chunks = [
        picks[(picks >= i * width) & (picks < (i + len(c)) * width)] - i * width for i, c in zip(range(0, n_rows, per_pass), chunks)
    ]
    base, head = lm.model.base_model, lm.model.get_output_embeddings()
    rss_loaded = rss_mb()

    def run():
        with torch.inference_mode():
            for chunk, pick in zip(chunks, pick_chunks):
                hidden = base(input_ids=chunk, use_cache=False).last_hidden_state.reshape(-1, lm.model.config.hidden_size)
                torch.logsumexp(head(hidden[pick]).float(), dim=-1)

    _, seconds, cpu = _clock(run)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "load_seconds": load_s,
        "rss_loaded_mb": rss_loaded,
        "items": len(records),
        "unique_tokens": len(tree),
        "rows": n_rows,
        "row_width": width,
        "rows_per_pass": per_pass,
        "scored_positions": needed,
        "forward_passes": len(chunks),
        "dtype": args.dtype,
        "tokens_if_contexts_and_options_ran_once": sum(len(c) for c in contexts) + sum(len(t) for _, _, t in encoded),
        "tokens_if_each_request_ran_in_full": sum(len(c) + len(t) for _, c, t in encoded),
    }


def worker(args: argparse.Namespace) -> None:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    run_name = args.worker
    mode = run_name.split("#")[0]  # "figlang#2": the second repeat of mode figlang
    if mode == "lm-eval":
        out = worker_lm_eval(args)
    elif mode == "figlang":
        out = worker_figlang(args, args.model, args.dtype, args.limit)
    elif mode == "figlang-fast":
        out = worker_figlang(args, args.model, fast_dtype(), args.limit)
    elif mode == "figlang-bf16":
        out = worker_figlang(args, args.model, "bfloat16", args.bf16_limit or args.limit)
    elif mode == "limit":
        out = worker_limit(args)
    elif mode == "qwen-transformers":
        out = worker_figlang(args, args.qwen_model, "float32", args.qwen_limit)
    elif mode == "qwen-transformers-fast":
        out = worker_figlang(args, args.qwen_model, fast_dtype(), args.qwen_limit)
    else:
        out = worker_figlang(args, args.qwen_model, "float32", args.qwen_limit, backend="llama.cpp")
    out.update(
        mode=mode,
        run=run_name,
        peak_rss_mb=peak_rss_mb(),
        threads=torch.get_num_threads(),
        load_average=os.getloadavg() if hasattr(os, "getloadavg") else None,
    )
    print("RESULT " + json.dumps(out), flush=True)


def run_mode(mode: str, args: argparse.Namespace) -> dict:
    """One mode (or one repeat of it, "figlang#2") in a fresh subprocess; its RESULT line, parsed."""
    cmd = [sys.executable, __file__, "--worker", mode, *args.passthrough]
    print(f"[{mode}] running", file=sys.stderr, flush=True)
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=False, env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"mode {mode} failed (exit {done.returncode})")
    result = json.loads(lines[-1][len("RESULT ") :])
    print(f"[{mode}] {result['items']} items in {result['seconds']:.1f} s ({result['cpu_seconds']:.1f} CPU s)", file=sys.stderr, flush=True)
    return result


def agreement(a: dict, b: dict) -> dict:
    shared = [k for k in a if k in b]
    same = sum(a[k] == b[k] for k in shared)
    return {
        "items": len(shared),
        "identical": same,
        "share": same / len(shared) if shared else None,
        "differing_ids": [k for k in shared if a[k] != b[k]][:20],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--task", default="idiom-cloze")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--limit", type=int, default=None, help="first N items (default: the whole split)")
    parser.add_argument("--bf16-limit", type=int, default=None, help="first N items for the bfloat16 row (emulated bfloat16 is slow)")
    parser.add_argument("--batch-size", type=int, default=16, help="rows per forward pass, both lm-eval's and figlang's")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--qwen", action="store_true", help="also qwen2.5-1.5b through Transformers and llama.cpp")
    parser.add_argument("--qwen-model", default="qwen2.5-1.5b")
    parser.add_argument("--qwen-limit", type=int, default=40)
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run figlang and the limit this many times each, alternating; "
        "the summary gives each ratio's median (a loaded machine's timings drift)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="modes run at once, each in its own process (compare CPU seconds then)")
    parser.add_argument(
        "--limit-rows",
        type=int,
        default=16,
        help="rows per forward pass of the limit (default 16; on 40 items 4, 16 and 240 rows "
        "a pass took the same CPU time within 5%%, 16 keeps its memory low)",
    )
    parser.add_argument("--modes", default=None, help=f"comma-separated subset of {', '.join(SMOLL_MODES + QWEN_MODES)}")
    parser.add_argument("--out", default=str(REPO / "runs" / "bench_lm_eval.json"))
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--tasks-dir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--lm-eval-task", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return

    from figlang.interop.lm_eval_export import export_lm_eval

    tasks_dir = REPO / "runs" / "bench_lm_eval_tasks"  # names its data file by absolute path: never committed
    exported = export_lm_eval(args.task, tasks_dir, split=args.split, data_dir=args.data_dir, limit=args.limit)
    passthrough = [
        "--model",
        args.model,
        "--task",
        args.task,
        "--split",
        args.split,
        "--data-dir",
        args.data_dir,
        "--batch-size",
        str(args.batch_size),
        "--dtype",
        args.dtype,
        "--qwen-model",
        args.qwen_model,
        "--qwen-limit",
        str(args.qwen_limit),
        "--limit-rows",
        str(args.limit_rows),
        "--tasks-dir",
        str(tasks_dir),
        "--lm-eval-task",
        exported.name,
    ]
    for flag, value in (("--limit", args.limit), ("--bf16-limit", args.bf16_limit), ("--threads", args.threads)):
        if value:
            passthrough += [flag, str(value)]
    args.passthrough = passthrough
    modes = [m.strip() for m in args.modes.split(",")] if args.modes else default_modes(args)
    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}: choose from {', '.join(ALL_MODES)}")
    # lm-eval first (the longest); then figlang and the limit alternating, repeat by repeat, so that a
    # drifting load hits both alike; then the other rows
    runs = ["lm-eval"] if "lm-eval" in modes else []
    runs += [m if k == 0 else f"{m}#{k + 1}" for k in range(max(1, args.repeat)) for m in ("figlang", "limit") if m in modes]
    runs += [m for m in modes if m not in ("lm-eval", "figlang", "limit")]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results: dict = {}
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_mode, r, args): r for r in runs}
        for future in as_completed(futures):  # the report is rewritten after every run: a run cut short keeps what it measured
            results[futures[future]] = future.result()
            ordered = {r: results[r] for r in runs if r in results}
            report(args, argv, exported, started, ordered, done=len(results) == len(runs))


def default_modes(args: argparse.Namespace) -> list[str]:
    """lm-eval, figlang float32 and the limit; the fast dtype's row where it is not float32 (native bfloat16);
    emulated bfloat16 when --bf16-limit asks for it; the qwen rows with --qwen."""
    modes = ["lm-eval", "figlang", "limit"]
    if fast_dtype() != "float32":
        modes.append("figlang-fast")
    if args.bf16_limit:
        modes.append("figlang-bf16")
    qwen = [m for m in QWEN_MODES if m != "qwen-transformers-fast" or fast_dtype() != "float32"]
    return modes + (qwen if args.qwen else [])


def report(args: argparse.Namespace, argv: list[str] | None, exported, started: str, results: dict, done: bool) -> None:
    def rate(r: dict) -> float:
        return r["items"] / r["seconds"]

    def repeats(mode: str) -> list[dict]:
        return [r for name, r in results.items() if name.split("#")[0] == mode]

    def median_and_each(key: str, values: list[float]) -> None:
        summary[key] = statistics.median(values)
        if len(values) > 1:
            summary[key + "_each"] = values

    summary: dict = {}
    lm, bf, fast = (results.get(k) for k in ("lm-eval", "figlang-bf16", "figlang-fast"))
    figs, lims = repeats("figlang"), repeats("limit")
    fig = figs[0] if figs else None
    if lm and fig:
        median_and_each("figlang_vs_lm_eval_items_per_s", [rate(f) / rate(lm) for f in figs])
        median_and_each("figlang_vs_lm_eval_cpu_seconds", [lm["cpu_seconds"] / f["cpu_seconds"] * f["items"] / lm["items"] for f in figs])
        summary["agreement_figlang_lm_eval"] = agreement(fig["predictions"], lm["predictions"])
        shared = [k for k in fig["logprobs"] if k in lm["logprobs"]]
        summary["max_abs_logprob_diff_figlang_lm_eval"] = max(
            abs(x - y) for k in shared for x, y in zip(fig["logprobs"][k], lm["logprobs"][k])
        )
    if len(figs) > 1:
        summary["figlang_repeats_identical_predictions"] = all(f["predictions"] == fig["predictions"] for f in figs)
    if figs and lims:  # the i-th figlang run against the i-th limit run, then the median
        pairs = list(zip(figs, lims))
        median_and_each("figlang_time_over_limit", [(f["seconds"] / f["items"]) / (m["seconds"] / m["items"]) for f, m in pairs])
        median_and_each("figlang_cpu_over_limit", [(f["cpu_seconds"] / f["items"]) / (m["cpu_seconds"] / m["items"]) for f, m in pairs])
    summary["fast_dtype"] = fast_dtype()  # float32 where bfloat16 would be emulated: then the figlang rows are the fast dtype's
    fast_runs = figs if summary["fast_dtype"] == "float32" else [fast] if fast else []
    if lm and fast_runs:
        median_and_each("fast_dtype_vs_lm_eval_float32_items_per_s", [rate(f) / rate(lm) for f in fast_runs])
    if fast and fig:
        summary["agreement_fast_dtype_figlang_float32"] = agreement(fast["predictions"], fig["predictions"])
    if bf and lm:
        summary["bf16_vs_lm_eval_float32_items_per_s"] = rate(bf) / rate(lm)
    if bf and fig:
        summary["agreement_bf16_figlang_float32"] = agreement(bf["predictions"], fig["predictions"])
    qt, ql = results.get("qwen-transformers"), results.get("qwen-llama.cpp")
    if qt and ql:
        summary["qwen_llama_cpp_vs_transformers_items_per_s"] = rate(ql) / rate(qt)
        summary["qwen_llama_cpp_vs_transformers_cpu_seconds"] = qt["cpu_seconds"] / ql["cpu_seconds"]
        summary["agreement_qwen_llama_cpp_transformers"] = agreement(ql["predictions"], qt["predictions"])
    qf = results.get("qwen-transformers-fast")
    if qf and qt:
        summary["qwen_transformers_fast_vs_float32_items_per_s"] = rate(qf) / rate(qt)
        summary["agreement_qwen_transformers_fast_float32"] = agreement(qf["predictions"], qt["predictions"])
    if qf and ql:
        summary["qwen_llama_cpp_vs_transformers_fast_items_per_s"] = rate(ql) / rate(qf)

    import torch

    from figlang.core.devices import TIMING_FLAGS, bf16_is_emulated, cpu_info

    print(
        f"\n{args.task}/{args.split}, {args.model}, threads {args.threads or 'default'}, {os.cpu_count()} CPUs, "
        f"bfloat16 {'emulated (no AVX512-BF16/AMX)' if bf16_is_emulated('cpu') else 'native'}"
    )
    header = f"{'mode':<18} {'items':>5} {'dtype':>9} {'seconds':>8} {'items/s':>8} {'CPU s':>7} {'peak RSS MB':>11} {'accuracy':>8}"
    print(header + "\n" + "-" * len(header))
    for m, r in results.items():
        acc = r.get("accuracy")
        print(
            f"{m:<18} {r['items']:>5} {str(r.get('dtype', ''))[:9]:>9} {r['seconds']:>8.1f} {rate(r):>8.2f} {r['cpu_seconds']:>7.1f} "
            f"{r['peak_rss_mb']:>11.0f} {'' if acc is None else f'{acc:.3f}':>8}"
        )
    for k, v in summary.items():
        shown = (
            f"{v['identical']}/{v['items']} identical"
            if isinstance(v, dict)
            else v
            if isinstance(v, (str, bool))
            else ", ".join(f"{x:.3f}" for x in v)
            if isinstance(v, list)
            else f"{v:.3f}"
        )
        print(f"  {k}: {shown}")
    from figlang.evaluation.provenance import library_versions

    cpu_name, cpu_flags = cpu_info() or (None, frozenset())

    report = {
        "benchmark": "lm_eval_vs_figlang",
        "task": args.task,
        "split": args.split,
        "model": args.model,
        "limit": args.limit,
        "bf16_limit": args.bf16_limit,
        "qwen_model": args.qwen_model if args.qwen else None,
        "qwen_limit": args.qwen_limit if args.qwen else None,
        "threads": args.threads,
        "batch_size": args.batch_size,
        "repeat": args.repeat,
        "jobs": args.jobs,
        "limit_rows_per_pass": args.limit_rows,
        "started": started,
        "lm_eval_task": {"name": exported.name, "docs": exported.docs},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "bf16_emulated": bf16_is_emulated("cpu"),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "torch": torch.__version__,
            "cpu_model": cpu_name,
            "cpu_flags": [f for f in TIMING_FLAGS if f in cpu_flags],
            "load_average_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
        },
        "versions": library_versions(),
        "command": " ".join(["python", "benchmarks/bench_lm_eval.py", *(argv if argv is not None else sys.argv[1:])]),
        "complete": done,
        "modes_run": list(results),
        "summary": summary,
        "modes": {m: {k: v for k, v in r.items() if k not in ("logprobs", "predictions_norm")} for m, r in results.items()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
