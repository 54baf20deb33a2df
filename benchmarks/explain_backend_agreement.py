"""Do two explaining runs write the same explanations, and score the same? One reference run against others.

For each run folder given after the reference (each made by `figlang eval -t flute -m explain`, then scored with
`figlang explain --score RUN`): how many items got the very same explanation and the same label, and the paired
difference of per-item ROUGE-L F1 (from each run's explanations.json ``per_pair``) with a seeded paired-bootstrap
95% CI (figlang.evaluation.compare.paired_bootstrap, items resampled). Made to choose qwen's backend for a CPU class
(figlang.explain.FASTEST_BY_CPU) by what it writes, not only how fast:

  python benchmarks/explain_backend_agreement.py runs/sel40-bfloat16 runs/sel40-float32 runs/sel40-llamacpp \
      --out docs/results/explain/backends-selection40/agreement.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def predictions(run: Path) -> dict[str, dict]:
    """A run folder's per-item predictions by id (predictions.jsonl, or the .gz a published run keeps)."""
    from figlang.core.io import read_jsonl
    from figlang.evaluation.runs import predictions_file

    found = predictions_file(run)
    if found is None:
        raise SystemExit(f"{run}: no predictions.jsonl(.gz)")
    return {row["id"]: row for row in read_jsonl(found)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference", type=Path)
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from figlang.core.io import write_json
    from figlang.core.provenance import code_provenance
    from figlang.evaluation.compare import paired_bootstrap

    def rouge(run: Path) -> dict[str, float]:
        per_pair = json.loads((run / "explanations.json").read_text(encoding="utf-8"))["per_pair"]
        return {i: s["rougeL_f1"] for i, s in per_pair.items()}

    ref_pred, ref_rouge = predictions(args.reference), rouge(args.reference)
    out = {"reference": args.reference.name, "metric": "rougeL_f1 (explanations.json per_pair), × 100", "runs": []}
    for run in args.runs:
        pred, scores = predictions(run), rouge(run)
        ids = sorted(set(ref_rouge) & set(scores))
        boot = paired_bootstrap([scores[i] for i in ids], [ref_rouge[i] for i in ids], seed=args.seed)
        diffs = [scores[i] - ref_rouge[i] for i in ids]
        out["runs"].append(
            {
                "run": run.name,
                "n": len(ids),
                "same_explanation": sum(pred[i].get("explanation") == ref_pred[i].get("explanation") for i in ids),
                "same_label": sum(pred[i].get("prediction") == ref_pred[i].get("prediction") for i in ids),
                "rougeL": round(100 * sum(scores[i] for i in ids) / len(ids), 2),
                "reference_rougeL": round(100 * sum(ref_rouge[i] for i in ids) / len(ids), 2),
                "rougeL_difference": round(100 * sum(diffs) / len(ids), 2),
                "ci_low": round(100 * boot["ci_low"], 2),
                "ci_high": round(100 * boot["ci_high"], 2),
                "items_better": sum(d > 0 for d in diffs),
                "items_worse": sum(d < 0 for d in diffs),
                "bootstrap": {k: v for k, v in boot.items() if k not in ("ci_low", "ci_high")},
            }
        )
    out["provenance"] = code_provenance()
    print(json.dumps({k: v for k, v in out.items() if k != "provenance"}, indent=1))
    if args.out:
        write_json(Path(args.out), out)


if __name__ == "__main__":
    main()
