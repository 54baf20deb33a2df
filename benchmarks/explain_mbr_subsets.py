"""How many sampled candidates the writer's minimum-Bayes-risk choice needs, read off one run, no model.

A `writer_mbr=N` run keeps, for every pair its writer explained, the greedy line and the N samples
(``meta.mbr.candidates``, first sentences, in drawing order). The choice over the greedy line and
the first n samples is recomputed for n = 0 (the greedy line alone), 2, 4, 8, ... N with the same
rule (``figlang.models.methods.mbr.mbr_choice``), and each is scored against the gold explanations
by figure type with the ROUGE-L F1 the runs report (rouge-score, no stemmer, the pair's mean). The
best single candidate per pair ("oracle") is printed as a ceiling, never as a result. Run it on a
`selection` run only: it is for choosing n.

    PYTHONPATH=src python benchmarks/explain_mbr_subsets.py runs/explain-sweep4/config-0 --out runs/explain-sweep4/mbr-subsets.json
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from statistics import mean


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a run folder of an explain configuration with writer_mbr (predictions.jsonl or .gz)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from figlang.data.io import write_json
    from figlang.metrics.generation import RougeL
    from figlang.models.methods.mbr import mbr_choice, mbr_config

    run = Path(args.run)
    path = run / "predictions.jsonl"
    opener = open if path.exists() else gzip.open
    rows = [json.loads(line) for line in opener(path if path.exists() else run / "predictions.jsonl.gz", "rt", encoding="utf-8")]
    rows = [r for r in rows if (r.get("meta") or {}).get("mbr")]
    if not rows:
        raise SystemExit(f"{run}: no prediction has meta.mbr (run explain with -O writer_mbr=N)")
    n_max = len(rows[0]["meta"]["mbr"]["candidates"]) - 1
    sizes = [0] + [n for n in (2, 4, 8, 16, 32, 64) if n < n_max] + [n_max]
    rouge = RougeL()
    table: dict[str, dict[str, float]] = {}
    for n in sizes:
        by_type: dict[str, list[float]] = {}
        for r in rows:
            cands = r["meta"]["mbr"]["candidates"][: n + 1]
            best, _ = mbr_choice(cands, rouge)
            by_type.setdefault(r["figure_type"], []).append(rouge.score_pairs([cands[best]], [r["gold_explanation"]])[0])
        table[f"n={n}"] = {t: round(100 * mean(v), 2) for t, v in sorted(by_type.items())} | {"all": round(100 * mean(x for v in by_type.values() for x in v), 2)}
    oracle: dict[str, list[float]] = {}
    for r in rows:
        oracle.setdefault(r["figure_type"], []).append(max(rouge.score_pairs(r["meta"]["mbr"]["candidates"], [r["gold_explanation"]] * (n_max + 1))))
    out = {"run": str(run), "pairs": len(rows), "samples": n_max, "rule": mbr_config(rouge), "rougeL_f1_by_candidates": table,
           "oracle_ceiling_not_a_result": {t: round(100 * mean(v), 2) for t, v in sorted(oracle.items())}}
    write_json(Path(args.out), out)
    for k, v in table.items():
        print(k, v)
    print("oracle (ceiling)", out["oracle_ceiling_not_a_result"])


if __name__ == "__main__":
    main()
