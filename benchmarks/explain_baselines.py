"""Trivial "explanations" that a FLUTE explaining system must beat, scored like the system's own.

ROUGE-L F1 rewards words shared with the gold explanation, and a FLUTE explanation restates much of
its hypothesis and premise, so a figure like 31 means little until it stands next to what needs no
model at all. For a finished `figlang eval -t flute -m explain` run this writes, beside it, runs that
keep its labels (so Acc@0 is the same) and replace each explanation by:

* ``hypothesis``: the hypothesis itself;
* ``premise-hypothesis``: the premise and the hypothesis, joined;
* ``nearest-example``: the gold explanation of the nearest train pair the run showed the model
  (its first retrieved example: same figure type and label, never the pair's own premise).

Each baseline is a run folder (``predictions.jsonl`` and ``explanations.json`` from the same scorer
as ``figlang explain --score``), and ``summary.json`` puts them next to the system:

    PYTHONPATH=src python benchmarks/explain_baselines.py runs/explain-val-compact \
        --data-dir ../shared/data --out runs/explain-baselines-val
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

BASELINES = ("hypothesis", "premise-hypothesis", "nearest-example")


def baseline_explanation(name: str, row: dict[str, Any], train_explanations: dict[str, str]) -> str | None:
    """The stand-in explanation ``name`` for one prediction row (None when the row showed no example)."""
    if name == "hypothesis":
        return " ".join(row["hypothesis"].split())
    if name == "premise-hypothesis":
        return " ".join(f"{row['premise']} {row['hypothesis']}".split())
    if name == "nearest-example":
        shown = (row.get("meta") or {}).get("examples") or []
        return train_explanations.get(shown[0]) if shown else None
    raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")


def summary_row(scored: dict[str, Any]) -> dict[str, Any]:
    """One row of summary.json from `score_explanations`' result: ROUGE-L overall and by type, BLEU, BERTScore."""
    overall = scored["overall"]
    return {
        "rougeL_f1": overall["rougeL_f1"],
        "by_figure_type": {t: g["rougeL_f1"] for t, g in scored["by_figure_type"].items()},
        "bleu": overall.get("bleu"),
        "bertscore_f1": overall.get("bertscore_f1"),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a finished `figlang eval -t flute -m explain` run folder (predictions.jsonl or .gz)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--pool", default="train", help="the split the run retrieved its examples from (for nearest-example)")
    ap.add_argument("--bertscore-model", default="minilm")
    ap.add_argument("--out", required=True, help="a folder: one run folder per baseline and summary.json")
    args = ap.parse_args(argv)

    from figlang.core.errors import LoadOptions
    from figlang.data.flute import flute_files, load_flute
    from figlang.core.io import write_json, write_jsonl
    from figlang.core.paths import resolve_data_dir
    from figlang.core.provenance import code_provenance, data_checksums, portable_path, split_fingerprint
    from figlang.evaluation.explanations import read_prediction_rows, score_explanations

    rows = read_prediction_rows(args.run, args.data_dir)
    data_dir = resolve_data_dir(args.data_dir)
    pool = load_flute(args.pool, data_dir, LoadOptions())
    train = {r.id: r.explanation or "" for r in pool}
    out = Path(args.out)
    system = score_explanations(args.run, bertscore_model=args.bertscore_model or None, paper=False, data_dir=args.data_dir)
    summary: dict[str, Any] = {
        "what": "trivial explanations scored like the system's own (same labels, same scorer)",
        "system_run": portable_path(args.run),
        "n": len(rows),
        "rows": {"system": summary_row(system)},
    }
    kept = ("id", "premise", "hypothesis", "gold", "gold_explanation", "figure_type", "prediction", "correct")
    for name in BASELINES:
        folder = out / name
        write_jsonl(
            folder / "predictions.jsonl",
            [
                {**{k: r[k] for k in kept if k in r}, "valid": r.get("valid", True), "explanation": baseline_explanation(name, r, train)}
                for r in rows
            ],
        )
        scored = score_explanations(folder, bertscore_model=args.bertscore_model or None, paper=False)
        scored["baseline"] = {"name": name, "rule": baseline_explanation.__doc__, "labels_from": portable_path(args.run)}
        write_json(folder / "explanations.json", scored)
        summary["rows"][name] = summary_row(scored)
    summary["metric_config"] = system["config"]
    summary["pool"] = {"split": args.pool, **split_fingerprint(pool), "data": data_checksums(flute_files(args.pool, data_dir), data_dir)}
    summary["provenance"] = code_provenance()
    write_json(out / "summary.json", summary)
    for name, r in summary["rows"].items():
        print(f"{name:20s} ROUGE-L {r['rougeL_f1']:6.2f}  " + "  ".join(f"{t} {v:.2f}" for t, v in r["by_figure_type"].items()))


if __name__ == "__main__":
    main()
