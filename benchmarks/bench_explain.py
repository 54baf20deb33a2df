"""Seconds per pair and peak memory of the explaining system (figlang.explain), without the request cache.

Two figures (the issue's targets: all 499 FLUTE val pairs in ≤ 45 minutes on 2 cores, i.e. ≤ 5.4 s a
pair; one `figlang explain` in ≤ 10 s once the model is loaded):

* load: creating and fitting the method (loading the model's weights and the label method's, the retrieval index from its
  disk cache; before 2026-12-07 the weights loaded on the first pair instead, inside its time);
* one pair: `explain()` on one new pair after loading (the interactive case);
* N pairs: `explain_pairs()` on N FLUTE pairs of a split, seconds per pair.

Nothing is read from or written to the request cache (``use_cache=False``), so each run measures
model time. Peak memory is the process's maximum resident set size (``ru_maxrss``). Each figure has its
wall-clock and CPU seconds (``time.process_time``, all threads) and the load average around it: on a
shared machine compare CPU seconds.

A lone pair is decoded by prompt lookup (the Transformers backend's ``prompt_lookup``, same greedy text);
after the timed first call the same pair is answered again token by token (``prompt_lookup=0``) and again
by prompt lookup, back to back, with the forward passes each took (``one_pair_compare``).

With ``--config`` (repeatable), the same measurements run under each backend setting in one process, one after
the other, and the file records which was fastest and how many answers each shares with the first: how
`figlang.explain.default_options` was chosen for a CPU class (``--config backend=transformers,dtype=bfloat16``
``--config backend=transformers,dtype=float32`` ``--config backend=llama.cpp``).

Run (2 threads, the first 20 selection pairs; ``-O KEY=VALUE`` adds the method's other options, e.g. the
configuration chosen on `selection`: ``-O shots=compact -O k_by_type=idiom:10,metaphor:10,simile:10``):

  PYTHONPATH=src python benchmarks/bench_explain.py --n 20 --threads 2 --split selection --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Clock:
    """Wall-clock and CPU seconds (all threads of the process) of a block, with the load average after it."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        self.load = [round(x, 2) for x in os.getloadavg()]


def count_passes(backend: object) -> list[int]:
    """Count the model's forward passes from now on (one counter, reset by the caller); [] where not a Transformers model."""
    model = getattr(backend, "model", None)
    if model is None or not hasattr(model, "forward"):
        return []
    counter = [0]
    forward = model.forward

    def counted(*args: object, **kwargs: object) -> object:
        counter[0] += 1
        return forward(*args, **kwargs)

    model.forward = counted
    return counter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--n", type=int, default=20, help="pairs to explain in the batch measurement")
    ap.add_argument("--split", default="selection")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--label-model", default=None, help="a trained FLUTE classifier's folder (label_method=trained)")
    ap.add_argument("--mode", default="pipeline")
    ap.add_argument(
        "--option",
        "-O",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="more options of the explain method, as `figlang eval -O` takes them (e.g. -O shots=compact -O k_by_type=idiom:10)",
    )
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE[,KEY=VALUE]",
        help="measure under each of these backend settings in one run (e.g. --config dtype=bfloat16 --config dtype=float32 "
        "--config backend=llama.cpp); without it, the backend figlang.explain picks for this CPU",
    )
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="write the measurements here as JSON")
    args = ap.parse_args()

    from figlang.cli.common import parse_key_values
    from figlang.core.devices import cpu_summary
    from figlang.core.io import write_json
    from figlang.core.provenance import code_provenance

    provenance = code_provenance()  # the code as the run starts (files may change while it runs)
    base = {"threads": args.threads, "k": args.k, "mode": args.mode, "pool": "train-fit", **parse_key_values(args.option, "--option")}
    if args.label_model:
        base.update(label_method="trained", label_model=args.label_model)
    configs = [parse_key_values(c.split(","), "--config") for c in args.config] or [{}]
    runs = []
    for config in configs:
        runs.append(measure(args, {**base, **config}))
        explainer_cache_clear()
    if len(runs) > 1:  # the same pair's answer under each configuration, against the first's
        for run in runs[1:]:
            run["same_one_pair_answer_as_first"] = run["one_pair"]["raw"] == runs[0]["one_pair"]["raw"]
            run["same_batch_answers_as_first"] = sum(a == b for a, b in zip(run["batch_raw"], runs[0]["batch_raw"]))
    result = runs[0] if len(runs) == 1 else {"configs": runs, "fastest_one_pair": min(runs, key=lambda r: r["one_pair_seconds"])["config"]}
    result.update(cpu=cpu_summary(), provenance=provenance)
    for run in runs:
        print(json.dumps({k: v for k, v in run.items() if k not in ("one_pair", "batch_raw")}, indent=1))
    if len(runs) > 1:
        print("fastest one pair:", result["fastest_one_pair"])
    if args.out:
        write_json(Path(args.out), result)


def explainer_cache_clear() -> None:
    """Drop the loaded explainers (and their models) before the next configuration loads its own."""
    import gc

    from figlang import explain as explain_module

    explain_module._METHODS.clear()
    gc.collect()


def measure(args: argparse.Namespace, options: dict[str, object]) -> dict[str, object]:
    """Load the explainer with ``options``, time one new pair (then again, token by token and by prompt lookup) and a batch."""
    from figlang.data.registry import get_task
    from figlang.explain import explain, explain_pairs, explainer

    load_before = [round(x, 2) for x in os.getloadavg()]
    with Clock() as loading:
        # qwen2.5-1.5b: the backend figlang.explain picks for this CPU; its weights and the label model's load here
        method = explainer(args.model, args.data_dir, load=True, **options)
    backend = method.lm
    passes = count_passes(backend)
    pair = ("The meeting was very boring.", "The meeting was as exciting as watching paint dry.", "simile")

    def one_pair() -> tuple[object, Clock, int | None]:
        if passes:
            passes[0] = 0
        with Clock() as clock:
            answer = explain(*pair, model=args.model, data_dir=args.data_dir, use_cache=False, **options)
        return answer, clock, (passes[0] if passes else None)

    one, single, single_passes = one_pair()
    compare = []
    lookup = getattr(backend, "prompt_lookup", None)
    if lookup:  # the same pair again, token by token and by prompt lookup, back to back (both warm)
        for setting in (0, lookup):
            backend.prompt_lookup = setting
            again, clock, n = one_pair()
            compare.append(
                {
                    "prompt_lookup": setting,
                    "seconds": round(clock.wall, 2),
                    "cpu_seconds": round(clock.cpu, 2),
                    "forward_passes": n,
                    "load_average": clock.load,
                    "same_answer": again.raw == one.raw,
                }
            )
        backend.prompt_lookup = lookup
    pairs = [
        {"premise": r.premise, "hypothesis": r.hypothesis, "figure_type": r.figure_type, "idiom": r.expression}
        for r in get_task("flute").load(args.split, args.data_dir)[: args.n]
    ]
    with Clock() as batching:
        answers = explain_pairs(pairs, model=args.model, data_dir=args.data_dir, use_cache=False, **options)
    batch = batching.wall
    return {
        "model": args.model,
        "config": {k: v for k, v in options.items() if k in ("backend", "dtype", "batch_size", "n_threads", "threads")},
        "threads": args.threads,
        "k": args.k,
        "mode": args.mode,
        "split": args.split,
        "options": options,
        "label_model": args.label_model,
        "backend": method.fingerprint().get("backend"),
        "prompt_lookup": lookup,
        "load_seconds": round(loading.wall, 1),
        "load_cpu_seconds": round(loading.cpu, 1),
        "one_pair_seconds": round(single.wall, 2),
        "one_pair_cpu_seconds": round(single.cpu, 2),
        "one_pair_forward_passes": single_passes,
        "one_pair_load_average": single.load,
        "one_pair": one.to_dict(),
        "one_pair_compare": compare,
        "n": len(pairs),
        "batch_seconds": round(batch, 1),
        "batch_cpu_seconds": round(batching.cpu, 1),
        "seconds_per_pair": round(batch / max(len(pairs), 1), 2),
        "val_499_minutes_at_this_rate": round(499 * batch / max(len(pairs), 1) / 60, 1),
        "invalid": sum(1 for a in answers if not a.valid),
        "batch_raw": [a.raw for a in answers],
        "peak_rss_mib": round(peak_mib(), 1),
        "load_average_before": load_before,
        "load_average": list(os.getloadavg()),
    }


if __name__ == "__main__":
    main()
