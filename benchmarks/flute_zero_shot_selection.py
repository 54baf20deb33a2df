"""Choose FLUTE's zero-/few-shot label configuration on `selection` (carved from train), then score val once.

A grid of `nli-score` choices for one model (default qwen2.5-1.5b, bfloat16, 2 threads, no explanation):

  question   task (FLUTE's own instruction, "Entails" / "Contradicts") | meaning (same-meaning question, Yes / No)
  calibrate  none | content-free (label-word scores minus those for premise = hypothesis = "N/A")
  shots      0 | K solved train pairs before the item (default K=4; `-O shots=K`, the method's seeded set)

Each (question, shots) cell runs once through the harness (`figlang.evaluation.evaluate`, request cache in
``--cache-dir``, so a stopped run resumes) with ``calibrate=content-free``. Its per-item scores are the label
words' log-probabilities minus the content-free offset, and the offset is in every prediction's meta, so the
``calibrate=none`` prediction of the same item is read off exactly (argmax of score + offset, ties to the first
label, as the method breaks them); tests/test_flute_zero_shot_selection.py checks that this equals a real
``calibrate=none`` run. The items are FLUTE `selection` (all of it with ``--n 0``, else a seeded sample of ``--n``
pairs stratified by gold label × figure type in proportion to the split).

The choice: the highest selection accuracy (items right); a tie goes to the simpler configuration: fewer shots,
then no calibration, then the task's own question. Then val (never looked at before) is scored once with the
chosen configuration; with ``calibrate=content-free`` chosen, the same run also gives the uncalibrated val
figure, recorded as "not used for choosing". The spread: for each choice, the accuracy range when only it
varies, over every setting of the others.

    PYTHONPATH=src python benchmarks/flute_zero_shot_selection.py --n 120 --data-dir ../shared/data \
        --cache-dir runs/cache --runs runs/zs/flute-sel-grid --out runs/zs/flute-sel-grid/grid.json

With ``--shots-for best`` (a coordinate search, for a tight CPU budget) the few-shot cell is run only for the
question the rule picks among the 0-shot rows. Few-shot cells not started by ``--stop-grid-at`` (UTC, HH:MM) are skipped and recorded as not run; the choice is then
made among the cells that ran.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import itertools
import json
import os
import random
import resource
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from figlang.core.io import write_json
from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.methods.prompted.common import argmax_first

QUESTIONS = ("task", "meaning")
CALIBRATIONS = ("none", "content-free")
AXES = ("question", "calibrate", "shots")


def stratified_by(records: list[Any], n: int, seed: int, key: Any) -> list[Any]:
    """``n`` records (all when there are fewer) drawn per stratum ``key(r)`` in proportion to its share (largest
    remainders, ties by stratum name), seeded; returned in their original order."""
    if n <= 0 or n >= len(records):
        return list(records)
    strata: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        strata[str(key(r))].append(i)
    quotas = {s: n * len(ix) / len(records) for s, ix in strata.items()}
    take = {s: int(q) for s, q in quotas.items()}
    for s in sorted(strata, key=lambda s: (-(quotas[s] - take[s]), s))[: n - sum(take.values())]:
        take[s] += 1
    chosen: list[int] = []
    for s in sorted(strata):
        chosen += random.Random(f"{seed}:{s}").sample(strata[s], take[s])
    return [records[i] for i in sorted(chosen)]


def label_type(r: Any) -> str:
    return f"{r.label}/{r.figure_type}"


def uncalibrated(prediction: Any) -> str:
    """The ``calibrate=none`` label of a ``calibrate=content-free`` nli-score prediction: the label words' own
    log-probabilities are the calibrated scores plus the content-free offset; ties go to the first label."""
    offset = prediction.meta.get("content_free")
    if not offset:
        raise ValueError(f"prediction {prediction.id!r} has no content-free offset (was it made with calibrate=content-free?)")
    labels = list(prediction.scores)
    best, _ = argmax_first([prediction.scores[lb] + offset[lb] for lb in labels])
    return labels[best]


def accuracy_table(records: list[Any], labels: dict[str, str]) -> dict[str, Any]:
    """Accuracy %, overall, by gold label and by figure type."""

    def acc(rows: list[Any]) -> dict[str, Any]:
        right = sum(labels[r.id] == r.label for r in rows)
        return {"accuracy": round(100 * right / len(rows), 2), "n_correct": right, "n": len(rows)}

    groups: dict[str, dict[str, list[Any]]] = {"by_gold_label": defaultdict(list), "by_figure_type": defaultdict(list)}
    for r in records:
        groups["by_gold_label"][r.label].append(r)
        groups["by_figure_type"][r.figure_type or "?"].append(r)
    return {**acc(records), **{g: {k: acc(v) for k, v in sorted(rows.items())} for g, rows in groups.items()}}


def config_name(c: dict[str, Any]) -> str:
    return f"{c['question']}-{'cf' if c['calibrate'] == 'content-free' else 'nocal'}-{c['shots']}shot"


def simplicity(c: dict[str, Any]) -> tuple[int, int, int]:
    """Smaller is simpler: fewer shots, then no calibration, then the task's own question."""
    return (int(c["shots"]), int(c["calibrate"] != "none"), int(c["question"] != "task"))


def choose(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row with the most items right; a tie goes to the simpler configuration (see ``simplicity``)."""
    if not rows:
        raise ValueError("no configuration was scored, so none can be chosen")
    return min(rows, key=lambda r: (-r["n_correct"], simplicity(r["config"])))


def spread(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """For each choice, the accuracy range (max − min) when only it varies, over every setting of the others."""
    out: dict[str, Any] = {}
    for axis in AXES:
        others = [a for a in AXES if a != axis]
        groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            groups[tuple(r["config"][a] for a in others)].append(r)
        ranges = []
        for fixed, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
            if len(members) < 2:
                continue
            accs = {str(m["config"][axis]): m["accuracy"] for m in members}
            ranges.append({"fixed": dict(zip(others, fixed)), "accuracy": accs, "range": round(max(accs.values()) - min(accs.values()), 2)})
        out[axis] = {
            "ranges": ranges,
            "max_range": max((x["range"] for x in ranges), default=None),
            "min_range": min((x["range"] for x in ranges), default=None),
        }
    accs = [r["accuracy"] for r in rows]
    out["grid"] = {"min": min(accs), "max": max(accs), "range": round(max(accs) - min(accs), 2)} if accs else None
    return out


WORDS = {0: "zero-shot", 1: "one shot", 2: "two shots", 4: "four shots", 8: "eight shots"}


def setting_words(axis: str, value: Any) -> str:
    """One choice in words (the docs' row labels carry no digits)."""
    if axis == "question":
        return f"question {value}"
    if axis == "calibrate":
        return "content-free calibration" if value == "content-free" else "no calibration"
    return WORDS.get(int(value), f"{value} shots")


def row_label(c: dict[str, Any]) -> str:
    return ", ".join(setting_words(a, c[a]) for a in AXES)


def tables(record: dict[str, Any]) -> str:
    """The grid's Markdown tables for docs/research/zero_shot_results.md (selection grid, spread, val)."""
    types = ("idiom", "metaphor", "sarcasm", "simile")
    out = [
        "| configuration (selection sample) | accuracy % | right | contradiction / entailment | " + " / ".join(types) + " |",
        "|---|---|---|---|---|",
    ]
    for r in record["rows"]:
        mark = " (chosen)" if r["name"] == record["chosen"] else ""
        acc = f"**{r['accuracy']:.2f}**" if mark else f"{r['accuracy']:.2f}"
        labels = " / ".join(f"{r['by_gold_label'][lb]['accuracy']:.2f}" for lb in ("contradiction", "entailment"))
        out.append(
            f"| {row_label(r['config'])}{mark} | {acc} | {r['n_correct']} of {r['n']} | {labels} | "
            + " / ".join(f"{r['by_figure_type'][t]['accuracy']:.2f}" for t in types)
            + " |"
        )
    out += ["", "| choice varied | the others fixed at | range, points |", "|---|---|---|"]
    names = {"question": "question", "calibrate": "calibration", "shots": "shots"}
    for axis in AXES:
        for x in record["spread"][axis]["ranges"]:
            fixed = ", ".join(setting_words(a, v) for a, v in x["fixed"].items())
            out.append(f"| {names[axis]} | {fixed} | {x['range']:.2f} |")
    if "val" in record:
        v = record["val"]
        out += [
            "",
            "| FLUTE val (499 pairs) | accuracy % [95% CI] | contradiction / entailment | " + " / ".join(types) + " |",
            "|---|---|---|---|",
        ]
        out.append(
            f"| {row_label(v['config'])}: chosen on selection, the reported figure | **{v['accuracy']:.2f}** "
            f"[{v['ci95'][0]:.2f}, {v['ci95'][1]:.2f}] | {v['by_gold_label']['contradiction']:.2f} / "
            f"{v['by_gold_label']['entailment']:.2f} | " + " / ".join(f"{v['by_figure_type'][t]:.2f}" for t in types) + " |"
        )
        for name, t in record.get("val_not_used_for_choosing", {}).items():
            c = next((r["config"] for r in record["rows"] if r["name"] == name), None)
            label = row_label(c) if c else name
            out.append(
                f"| {label}: not used for choosing | {t['accuracy']:.2f} | {t['by_gold_label']['contradiction']['accuracy']:.2f} / "
                f"{t['by_gold_label']['entailment']['accuracy']:.2f} | "
                + " / ".join(f"{t['by_figure_type'][ft]['accuracy']:.2f}" for ft in types)
                + " |"
            )
    return "\n".join(out)


def method_options(args: argparse.Namespace, question: str, calibrate: str, shots: int) -> dict[str, Any]:
    return {"explain": False, "question": question, "calibrate": calibrate, "shots": shots, "dtype": args.dtype, "threads": args.threads}


def cpu_note(started: float, cpu0: float) -> dict[str, Any]:
    wall = time.time() - started
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_SELF).ru_stime - cpu0
    return {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "load_average_at_end": [round(x, 2) for x in os.getloadavg()]}


def cpu_now() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shots", type=int, default=4, help="the few-shot setting beside 0 (default 4)")
    ap.add_argument("--n", type=int, default=0, help="selection pairs to score (0: all; else a label × type stratified sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache-dir", default="runs/cache")
    ap.add_argument("--runs", required=True, help="folder for the harness runs (one per cell, and val)")
    ap.add_argument("--out", required=True, help="the grid's JSON file")
    ap.add_argument("--stop-grid-at", default=None, help="UTC HH:MM after which no few-shot cell starts (the 0-shot cells always run)")
    ap.add_argument(
        "--shots-for",
        choices=("all", "best"),
        default="all",
        help="all: every question with shots; best: shots only with the question the rule picks among the 0-shot rows",
    )
    ap.add_argument("--no-val", action="store_true", help="choose only; do not score val")
    ap.add_argument("--tables", action="store_true", help="print the Markdown tables of the grid JSON --out and stop")
    args = ap.parse_args()
    if args.tables:
        print(tables(json.loads(Path(args.out).read_text(encoding="utf-8"))))
        return

    runs = Path(args.runs)
    base = get_task("flute")
    selection = base.load("selection", args.data_dir)
    sample = stratified_by(selection, args.n, args.seed, label_type)
    sample_ids = {r.id for r in sample}
    loader = base.loader

    def load(split: str, root: Path, options: Any) -> list:
        records = loader(split, root, options)
        return [r for r in records if r.id in sample_ids] if split == "selection" else records

    task = dataclasses.replace(base, loader=load) if len(sample) < len(selection) else base
    deadline = None
    if args.stop_grid_at:
        hh, mm = (int(x) for x in args.stop_grid_at.split(":"))
        now = dt.datetime.now(dt.UTC)
        deadline = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if deadline < now - dt.timedelta(hours=12):
            deadline += dt.timedelta(days=1)

    def grid_record(complete: bool) -> dict[str, Any]:
        chosen = choose(rows) if complete else None
        return {
            "what": "FLUTE zero-/few-shot label configuration chosen on selection (carved from train), val scored once",
            "model": args.model,
            "method": "nli-score",
            "fixed_options": {"explain": False, "dtype": args.dtype, "threads": args.threads},
            "grid": {"question": list(QUESTIONS), "calibrate": list(CALIBRATIONS), "shots": [0, args.shots], "shots_for": args.shots_for},
            "selection": {
                "split": "selection",
                "n": len(sample),
                "of": len(selection),
                "seed": args.seed,
                "sample": "whole split"
                if len(sample) == len(selection)
                else "seeded sample, stratified by gold label x figure type (proportional)",
                "ids": sorted(sample_ids, key=lambda i: int(i.split("-")[-1]) if i.split("-")[-1].isdigit() else i),
            },
            "rule": "most selection items right; ties to the simpler configuration: fewer shots, then calibrate=none, then question=task",
            "complete": complete,
            "cells": cells,
            "rows": rows,
            "spread": spread(rows),
            "chosen": chosen["name"] if chosen else None,
            "chosen_config": chosen["config"] if chosen else None,
        }

    rows: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    plan = list(itertools.product((0, args.shots), QUESTIONS))
    for shots, question in plan:
        name = f"selection-{question}-{shots}shot"
        if shots and args.shots_for == "best":
            best = choose([r for r in rows if r["config"]["shots"] == 0])["config"]["question"]
            if question != best:
                cells.append(
                    {
                        "question": question,
                        "shots": shots,
                        "run": None,
                        "not_run": f"--shots-for best: shots={shots} tried only with the question chosen among the 0-shot rows ({best})",
                    }
                )
                continue
        if shots and deadline is not None and dt.datetime.now(dt.UTC) >= deadline:
            cells.append(
                {"question": question, "shots": shots, "run": None, "not_run": f"not started by {args.stop_grid_at} UTC (time budget)"}
            )
            print(f"skip {name}: past {args.stop_grid_at} UTC", flush=True)
            continue
        started, cpu0 = time.time(), cpu_now()
        result = evaluate(
            task,
            "nli-score",
            model=args.model,
            split="selection",
            data_dir=args.data_dir,
            out_dir=runs / name,
            cache_dir=args.cache_dir,
            seed=args.seed,
            method_options=method_options(args, question, "content-free", shots),
            progress=False,
            chosen_on={"grid": "selection"},
            extra={
                "selection_sample": {
                    "n": len(sample),
                    "of": len(selection),
                    "seed": args.seed,
                    "stratified_by": "gold label x figure type (proportional)",
                }
            },
        )
        cell = {
            "question": question,
            "shots": shots,
            "run": str(runs / name),
            **cpu_note(started, cpu0),
            "cache": result.results.get("run", {}).get("cache"),
        }
        fingerprint = result.results["method"]["fingerprint"]
        examples = fingerprint.get("examples")
        if shots and examples:
            train = {r.id: r for r in base.load("train", args.data_dir)}
            texts = {" ".join(t.lower().split()) for i in examples if i in train for t in (train[i].premise, train[i].hypothesis)}
            cell["shot_examples"] = examples
            cell["items_sharing_a_sentence_with_an_example"] = sum(
                " ".join(r.premise.lower().split()) in texts or " ".join(r.hypothesis.lower().split()) in texts for r in sample
            )
        cells.append(cell)
        harness_acc = round(100 * result.results["metrics"]["accuracy"]["accuracy"], 2)
        for calibrate in CALIBRATIONS:
            labels = {i: (p.prediction if calibrate == "content-free" else uncalibrated(p)) for i, p in result.predictions.items()}
            table = accuracy_table(sample, labels)
            if calibrate == "content-free" and table["accuracy"] != harness_acc:
                raise SystemExit(f"{name}: recomputed accuracy {table['accuracy']} differs from the harness's {harness_acc}")
            config = {"question": question, "calibrate": calibrate, "shots": shots}
            rows.append(
                {
                    "name": config_name(config),
                    "config": config,
                    "source": "harness run" if calibrate == "content-free" else "the harness run's scores + content-free offset (exact)",
                    "run": str(runs / name),
                    **table,
                }
            )
            print(f"{config_name(config):24s} {table['accuracy']:6.2f}  {cell['wall_seconds']}s wall", flush=True)
        write_json(Path(args.out), grid_record(complete=False))  # a stopped grid leaves what it scored

    record = grid_record(complete=True)
    chosen = next(r for r in rows if r["name"] == record["chosen"])
    write_json(Path(args.out), record)
    print("chosen", chosen["name"], chosen["accuracy"], flush=True)
    if args.no_val:
        return
    c = chosen["config"]
    name = f"val-{chosen['name']}"
    started, cpu0 = time.time(), cpu_now()
    result = evaluate(
        "flute",
        "nli-score",
        model=args.model,
        split="val",
        data_dir=args.data_dir,
        out_dir=runs / name,
        cache_dir=args.cache_dir,
        seed=args.seed,
        method_options=method_options(args, c["question"], c["calibrate"], c["shots"]),
        progress=False,
        chosen_on={"question": "selection", "calibrate": "selection", "shots": "selection"},
        extra={"chosen_by": "benchmarks/flute_zero_shot_selection.py", "chosen": chosen["name"]},
    )
    val = result.results["metrics"]
    record["val"] = {
        "run": str(runs / name),
        "config": c,
        **cpu_note(started, cpu0),
        "accuracy": round(100 * val["accuracy"]["accuracy"], 2),
        "ci95": [round(100 * val["accuracy"]["ci_low"], 2), round(100 * val["accuracy"]["ci_high"], 2)],
        "by_gold_label": {k: round(100 * v["accuracy"], 2) for k, v in val["by_gold_label"].items()},
        "by_figure_type": {k: round(100 * v["accuracy"], 2) for k, v in val["by_figure_type"].items()},
    }
    if c["calibrate"] == "content-free":
        records = list(result.records)
        labels = {i: uncalibrated(p) for i, p in result.predictions.items()}
        record["val_not_used_for_choosing"] = {config_name({**c, "calibrate": "none"}): accuracy_table(records, labels)}
    write_json(Path(args.out), record)
    print("val", record["val"]["accuracy"], record["val"]["ci95"], flush=True)


if __name__ == "__main__":
    main()
