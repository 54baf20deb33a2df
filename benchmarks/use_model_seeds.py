"""Does the mean of several use models' scores (the same command, other seeds) label idiom uses better? On ``selection``.

    OMP_NUM_THREADS=2 python benchmarks/use_model_seeds.py --data-dir ../shared/data \\
        --members figlang:use-minilm-lora,runs/cpu/use-minilm-lora8-masked-seed1,runs/cpu/use-minilm-lora8-masked-seed2

Each member labels the ``selection`` uses (idioms none was trained on) and the behaviour-test sentences through
interpret's own labeller (float32). The ensemble's score is the mean of the members' figurative-minus-literal scores
(their logits); its threshold is the one with the best ``selection`` accuracy (ties: nearest 0), the rule that chose
each member's. The rule written before the members' runs ended (docs/research/interpret.md): the ensemble ships if its
``selection`` accuracy beats the shipped model's at its own threshold and it gets all seven behaviour sentences right.
The test split is not read here. Writes ``use-seeds-selection.json`` and its per-item scores (ids, no sentences).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _write  # noqa: E402
from train_use_model import selection_uses  # noqa: E402
from use_model_ensemble import BEHAVIOUR, _logit, behaviour_items, best_threshold  # noqa: E402

from figlang.interpret.use_label import UseLabeller  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument(
        "--members", required=True, help="comma-separated use models (figlang:NAME or a run folder); the first is the shipped one"
    )
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    ap.add_argument("--name", default="use-seeds-selection", help="the result file's name in --out")
    args = ap.parse_args()
    members = [m.strip() for m in args.members.split(",") if m.strip()]
    sel = selection_uses(args.data_dir)
    items = [u for _, u in sel] + behaviour_items()
    gold = [rec["label"] == "figurative" for rec, _ in sel]
    n = len(sel)
    scores: list[list[float]] = []
    report: dict = {"selection_uses": n, "figurative": sum(gold), "members": {}}
    for name in members:
        labeller = UseLabeller(name, stack=False)  # the adapters alone, as published (before the cohesion stack)
        got = labeller.label(items)
        if labeller.why:
            raise SystemExit(labeller.why)
        scores.append([_logit(g.probability) for g in got if g is not None])
        own = 100 * sum((g.label == "figurative") == y for g, y in zip(got, gold)) / n
        acc, t = best_threshold(scores[-1][:n], gold)
        report["members"][name] = {"selection_accuracy_own_threshold_pct": round(own, 2), "selection_accuracy_best_threshold_pct": acc}
        print(f"{name}: selection {own:.2f}% at its own threshold, {acc}% at the best")
    mean = [sum(col) / len(col) for col in zip(*scores)]
    acc, t = best_threshold(mean[:n], gold)
    behaviour = [("figurative" if s >= t else "literal") == want for s, (_, _, want) in zip(mean[n:], BEHAVIOUR)]
    report["ensemble"] = {
        "selection_accuracy_pct": acc,
        "threshold": round(t, 4),
        "behaviour_sentences_right": f"{sum(behaviour)}/{len(behaviour)}",
    }
    print(f"mean of {len(members)}: selection {acc}% at {t:.3f}; behaviour sentences right {sum(behaviour)}/{len(behaviour)}")
    out = [
        {"id": rec["id"], "idiom": rec["idiom"], "gold": rec["label"], "scores": [round(s[i], 4) for s in scores]}
        for i, (rec, _) in enumerate(sel)
    ]
    _write(args.out, args.name, report, out)


if __name__ == "__main__":
    main()
