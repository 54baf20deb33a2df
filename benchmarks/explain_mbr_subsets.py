"""How many sampled candidates the writer's minimum-Bayes-risk choice needs, and what else could choose, read off runs, no model.

A `writer_mbr=N` run keeps, for every pair its writer explained, the greedy line and the N samples
(``meta.mbr.candidates``, first sentences, in drawing order). The choice over the greedy line and
the first n samples is recomputed for n = 0 (the greedy line alone), 2, 4, 8, ... N with the same
rule (``figlang.methods.prompted.mbr.mbr_choice``), and each is scored against the gold explanations
by figure type with the ROUGE-L F1 the runs report (rouge-score, no stemmer, the pair's mean).

``--with RUN`` names a prompted run on the same pairs (e.g. qwen with retrieved examples). Then two
more ways to choose are recomputed, each over the writer's candidates alone and with the prompted
explanation added to the pool (last):

- ``mbr``: the rule above;
- ``neighbours kK``: the candidate with the highest mean ROUGE-L F1 against the gold explanations of
  the K train pairs the prompted run retrieved for that pair (most similar first; same figure type
  and label, from its ``meta.examples``): closest to how FLUTE's annotators explained the nearest pairs;
- ``mbr+neighbours kK``: the sum of the two.

The best single candidate per pair ("oracle") is printed as a ceiling, never as a result. Run it on
`selection` runs only: it is for choosing.

    PYTHONPATH=src python benchmarks/explain_mbr_subsets.py runs/explain-sweep5/config-0 \\
        --with docs/results/explain/selection-sweep-writer/config-0 --data-dir ../shared/data --out runs/explain-sweep5/mbr_subsets.json
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a run folder of an explain configuration with writer_mbr (predictions.jsonl or .gz)")
    ap.add_argument("--with", dest="with_run", default=None, help="a prompted explain run on the same pairs (see above)")
    ap.add_argument("--neighbours", type=int, nargs="*", default=[3, 6, 10], help="K for the neighbour utilities (default 3 6 10)")
    ap.add_argument("--data-dir", default=None, help="the data folder: train-fit's gold explanations, selection's figure-type shares")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from figlang.core.io import write_json
    from figlang.core.provenance import code_provenance
    from figlang.data.registry import get_task
    from figlang.evaluation.runs import load_run
    from figlang.metrics.generation import RougeL
    from figlang.methods.prompted.mbr import mbr_choice, mbr_config

    run = Path(args.run)
    rows = [r for r in load_run(run).rows if (r.get("meta") or {}).get("mbr")]
    if not rows:
        raise SystemExit(f"{run}: no prediction has meta.mbr (run explain with -O writer_mbr=N)")
    n_max = len(rows[0]["meta"]["mbr"]["candidates"]) - 1
    sizes = [0] + [n for n in (2, 4, 8, 16, 32, 64) if n < n_max] + [n_max]
    rouge = RougeL()

    def gold_score(text: str, row: dict[str, Any]) -> float:
        return rouge.score_pairs([text], [row["gold_explanation"]])[0]

    shares: dict[str, float] = {}
    if args.data_dir:  # the figure-type shares of the whole `selection` split, as explain_selection.py weighs its sample
        selection = Counter(p.figure_type for p in get_task("flute").load("selection", args.data_dir))
        shares = {t: c / sum(selection.values()) for t, c in selection.items()}

    def by_type(scores: dict[str, list[float]]) -> dict[str, float]:
        row = {t: round(100 * mean(v), 2) for t, v in sorted(scores.items())} | {
            "all": round(100 * mean(x for v in scores.values() for x in v), 2)
        }
        if shares:
            row["selection_mix"] = round(sum(row[t] * shares[t] for t in scores), 2)
        return row

    table: dict[str, dict[str, float]] = {}
    for n in sizes:
        scores: dict[str, list[float]] = {}
        for r in rows:
            cands = r["meta"]["mbr"]["candidates"][: n + 1]
            best, _ = mbr_choice(cands, rouge)
            scores.setdefault(r["figure_type"], []).append(gold_score(cands[best], r))
        table[f"n={n}"] = {"samples": n, "candidates": n + 1, **by_type(scores)}
    oracle: dict[str, list[float]] = {}
    for r in rows:
        oracle.setdefault(r["figure_type"], []).append(
            max(rouge.score_pairs(r["meta"]["mbr"]["candidates"], [r["gold_explanation"]] * (n_max + 1)))
        )
    out: dict[str, Any] = {
        "run": str(run),
        "pairs": len(rows),
        "samples": n_max,
        "rule": mbr_config(rouge),
        "rougeL_f1_by_candidates": table,
        "oracle_ceiling_not_a_result": {t: round(100 * mean(v), 2) for t, v in sorted(oracle.items())},
    }
    for k, v in table.items():
        print(k, v)

    if args.with_run:
        task = get_task("flute")
        if not args.data_dir:
            raise SystemExit("--with needs --data-dir (train-fit's gold explanations)")
        explanations = {p.id: p.explanation or "" for p in task.load("train-fit", args.data_dir)}
        prompted = {r["id"]: r for r in load_run(args.with_run).rows}
        missing = [r["id"] for r in rows if r["id"] not in prompted]
        if missing:
            raise SystemExit(
                f"{args.with_run}: {len(missing)} of the writer's pairs are not in it (first: {missing[0]}); give a run on the same pairs"
            )
        rules: dict[str, dict[str, list[float]]] = {}
        shape: dict[str, dict[str, int]] = {}  # each rule's pool size and K, as the docs' table prints them
        for r in rows:
            p = prompted[r["id"]]
            shown = sorted(zip(p["meta"].get("examples") or [], p["meta"].get("similarities") or []), key=lambda x: -x[1])
            writer_pool = r["meta"]["mbr"]["candidates"]
            pools = {"writer": writer_pool, "writer+prompted": [*writer_pool, p.get("explanation") or ""]}
            rules.setdefault("prompted alone", {}).setdefault(r["figure_type"], []).append(gold_score(pools["writer+prompted"][-1], r))
            for name, pool in pools.items():
                _, agreement = mbr_choice(pool, rouge)
                utilities = {"mbr": agreement}
                for k in args.neighbours:
                    refs = [explanations[i] for i, _ in shown[:k] if explanations.get(i)]
                    if not refs:
                        continue
                    near = [mean(rouge.score_pairs([c] * len(refs), refs)) for c in pool]
                    utilities[f"neighbours k{k}"] = near
                    utilities[f"mbr+neighbours k{k}"] = [a + b for a, b in zip(agreement, near)]
                for rule, u in utilities.items():
                    best = max(range(len(pool)), key=lambda i: (u[i], -i))
                    rules.setdefault(f"{name}: {rule}", {}).setdefault(r["figure_type"], []).append(gold_score(pool[best], r))
                    shape[f"{name}: {rule}"] = {
                        "samples": n_max,
                        "candidates": len(pool),
                        **({"neighbours_k": int(rule.rsplit("k", 1)[1])} if "neighbours" in rule else {}),
                    }
        shape["prompted alone"] = {"candidates": 1}
        reranked = {rule: {**shape[rule], **by_type(scores)} for rule, scores in rules.items()}
        for rule, row in reranked.items():
            print(f"{rule:40s}", row)
        out.update(
            {
                "with": args.with_run,
                "neighbours": "the gold explanations of the prompted run's retrieved train-fit examples, most similar first",
                "rougeL_f1_by_rule": reranked,
            }
        )
    if shares:
        out["selection_shares"] = {t: round(v, 4) for t, v in sorted(shares.items())}
    out["provenance"] = code_provenance()
    write_json(Path(args.out), out)
    print("oracle (ceiling)", out["oracle_ceiling_not_a_result"])


if __name__ == "__main__":
    main()
