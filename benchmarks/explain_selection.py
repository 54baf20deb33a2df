"""Choose the explaining system's settings on FLUTE `selection`, never on val.

FLUTE's `selection` split is carved from train (docs/research/flute_explanations.md); the explanations' retrieval
pool is then `train-fit`, so no item sees its own family. This script draws a seeded sample of
`selection`, ``--per-type`` pairs of each figure type (half of each label where it can), runs the
`explain` method once per candidate configuration on exactly those pairs, scores every run's
explanations (ROUGE-L F1 with rouge-score's defaults, the issue's measure), and writes one JSON file
with each configuration's figures, overall and by figure type, the seconds it took, and the chosen one
(the highest ROUGE-L F1 with the figure types weighted as in the whole split, among the configurations
fast enough for the issue's budget, ``--budget-seconds-per-pair``; ties go to the earlier one). Each
configuration's figures are kept in its run folder (``sweep_entry.json``), so a stopped sweep resumes.

    PYTHONPATH=src python benchmarks/explain_selection.py --label-model runs/cpu/flute-nli-mpnet-sel \
        --configs "k=3" "k=6" --per-type 20 --out docs/results/explain/selection-sweep/sweep.json

Each configuration is a space-separated list of KEY=VALUE method options laid over the fixed ones
(model, backend, dtype, pool=train-fit, the label method). Runs go through the request cache like any
other figlang run, so a rerun of the same sweep is answered from disk.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any


def sample_by_type(records: list[Any], per_type: int, seed: int) -> list[Any]:
    """``per_type`` records of each figure type, half of each label where the type has enough (seeded)."""
    by_type: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_type[r.figure_type or "?"][str(r.label)].append(r)
    chosen: list[Any] = []
    for ftype in sorted(by_type):
        labels = sorted(by_type[ftype])
        rng = random.Random(f"{seed}\x1f{ftype}")
        want = {lb: per_type // len(labels) + (1 if i < per_type % len(labels) else 0) for i, lb in enumerate(labels)}
        for lb in labels:
            pool = sorted(by_type[ftype][lb], key=lambda r: r.id)
            chosen += rng.sample(pool, min(want[lb], len(pool)))
    ids = {r.id for r in chosen}
    return [r for r in records if r.id in ids]


def split_mix(by_type: dict[str, float], shares: dict[str, float]) -> float:
    """A figure-type mean weighted by the split's own figure-type shares (the sample is balanced; the split is not)."""
    total = sum(shares[t] for t in by_type if t in shares)
    return round(sum(by_type[t] * shares[t] for t in by_type if t in shares) / total, 2)


def parse_config(text: str) -> dict[str, Any]:
    """A configuration ("k=6 mode=joint") read by figlang's one ``-O KEY=VALUE`` parser."""
    from figlang.cli.common import parse_key_values

    return parse_key_values(text.split(), "--configs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument(
        "--backend-option",
        "-O",
        action="append",
        default=["dtype=bfloat16", "batch_size=16"],
        help="backend option KEY=VALUE for the explaining model (default: dtype=bfloat16 batch_size=16)",
    )
    ap.add_argument("--label-method", default="trained")
    ap.add_argument("--label-model", default=None, help="a trained FLUTE classifier's folder (label_method=trained)")
    ap.add_argument("--configs", nargs="+", default=["k=3", "k=6"])
    ap.add_argument("--per-type", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument(
        "--budget-seconds-per-pair",
        type=float,
        default=5.4,
        help="only configurations this fast are chosen (default 5.4: FLUTE val's 499 pairs in 45 minutes)",
    )
    ap.add_argument("--not-run", default=None, help="a note on candidate configurations left out, and why (recorded)")
    ap.add_argument("--out", required=True, help="the sweep's JSON file; each configuration's run goes in a folder beside it")
    args = ap.parse_args()

    import torch

    from figlang.api import evaluate
    from figlang.core.io import write_json
    from figlang.data.registry import get_task
    from figlang.evaluation.explanations import score_explanations
    from figlang.evaluation.provenance import code_provenance

    torch.set_num_threads(args.threads)
    task = get_task("flute")
    loader = task.loader
    holder: dict[str, list[str]] = {}

    def load(split: str, root: Path, options: Any) -> list:
        records = loader(split, root, options)
        if split != "selection":
            return records
        sample = sample_by_type(records, args.per_type, args.seed)
        holder["ids"] = [r.id for r in sample]
        return sample

    sampled = replace(task, loader=load)
    full = task.load("selection", args.data_dir)
    counts: dict[str, int] = defaultdict(int)
    for r in full:
        counts[r.figure_type or "?"] += 1
    shares = {t: round(c / len(full), 4) for t, c in sorted(counts.items())}
    fixed: dict[str, Any] = {"pool": "train-fit", "threads": args.threads}
    for opt in args.backend_option:
        fixed.update(parse_config(opt))
    if args.label_model:
        fixed.update(label_method=args.label_method, label_model=args.label_model)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    for i, text in enumerate(args.configs):
        options = {**fixed, **parse_config(text)}
        run_dir = out.parent / f"config-{i}"
        entry_file = run_dir / "sweep_entry.json"
        if entry_file.is_file():  # resumable: a configuration measured before is read back, not re-timed from the cache
            entry = json.loads(entry_file.read_text(encoding="utf-8"))
            if entry.get("options") == json.loads(json.dumps(options)):
                entry.setdefault("rougeL_f1_split_mix", split_mix(entry["by_figure_type"], shares))
                results.append(entry)
                print(json.dumps(entry), flush=True)
                continue
        start = time.perf_counter()
        run = evaluate(
            sampled,
            "explain",
            args.model,
            split="selection",
            data_dir=args.data_dir,
            out_dir=run_dir,
            method_options=options,
            seed=args.seed,
            cache_dir=args.cache_dir,
        )
        seconds = time.perf_counter() - start
        scored = score_explanations(run_dir, paper=False)
        entry = {
            "config": text,
            "options": options,
            "run": run_dir.name,
            "seconds": round(seconds, 1),
            "seconds_per_pair": round(seconds / max(scored["n"], 1), 2),
            "n": scored["n"],
            "label_accuracy": run.metrics.get("accuracy"),
            "rougeL_f1": scored["overall"]["rougeL_f1"],
            "by_figure_type": {t: v["rougeL_f1"] for t, v in scored["by_figure_type"].items()},
        }
        entry["rougeL_f1_split_mix"] = split_mix(entry["by_figure_type"], shares)
        write_json(entry_file, entry)
        results.append(entry)
        print(json.dumps(entry), flush=True)
    from figlang.data.flute import FIGURE_TYPES
    from figlang.methods.prompted.explain import DEFAULT_K, SHOTS, STYLES, parse_k_by_type

    for r in results:  # what each configuration showed each figure type, spelled out (k, then k_by_type's exceptions)
        by_type = parse_k_by_type(r["options"].get("k_by_type"))
        r["examples_by_type"] = {t: by_type.get(t, int(r["options"].get("k", DEFAULT_K))) for t in sorted(FIGURE_TYPES)}
        r["prompt_form"] = {"shots": r["options"].get("shots", SHOTS[0]), "style": r["options"].get("style", STYLES[0])}
    fits = [i for i, r in enumerate(results) if r["seconds_per_pair"] <= args.budget_seconds_per_pair]
    best = max(fits, key=lambda i: (results[i]["rougeL_f1_split_mix"], -i)) if fits else None  # none fits: recorded, nothing chosen
    report = {
        "what": "explain settings chosen on FLUTE selection (carved from train; retrieval pool train-fit); val is never read",
        "split": "selection",
        "sample": {"per_type": args.per_type, "seed": args.seed, "ids": holder.get("ids", [])},
        "model": args.model,
        "fixed_options": fixed,
        "criterion": "ROUGE-L F1 (rouge-score defaults) per figure type, weighted by the split's figure-type shares, among "
        "the configurations whose seconds a pair (model loading included) fit the budget; ties: the earlier",
        "budget_seconds_per_pair": args.budget_seconds_per_pair,
        "split_shares": shares,
        "not_run": args.not_run,
        "results": results,
        "chosen": results[best]["config"] if best is not None else None,
        "chosen_options": results[best]["options"] if best is not None else None,
        "provenance": code_provenance(),
    }
    write_json(out, report)
    if best is None:
        raise SystemExit(
            f"no configuration fits {args.budget_seconds_per_pair} s a pair: {[r['seconds_per_pair'] for r in results]} "
            f"(recorded in {out}, chosen: null)"
        )
    print(f"chosen: {report['chosen']} (ROUGE-L F1 {results[best]['rougeL_f1']})")


if __name__ == "__main__":
    main()
