"""Would an average of the two use models (MiniLM and mpnet) label idiom uses better? Measured on ``selection`` only.

    mkdir -p runs/use-mpnet-lora && for f in adapter.safetensors figlang.json record.json; do
        git show a7b67c5:src/figlang/resources/heads/use-mpnet-lora/$f > runs/use-mpnet-lora/$f; done
    OMP_NUM_THREADS=2 python benchmarks/use_model_ensemble.py --data-dir ../shared/data --mpnet runs/use-mpnet-lora

(the mpnet adapter as it shipped for its trial; it no longer ships).

Both models label the ``selection`` uses (idioms neither was trained on; the split that chose their epochs and
thresholds) through interpret's own labeller (float32). The ensemble scores a use by ``w * s_minilm + (1 - w) *
s_mpnet``, where ``s`` is a model's figurative-minus-literal score (its logit); for each weight w in 0, 0.25, 0.5,
0.75, 1 the threshold with the highest ``selection`` accuracy is found (ties: the one nearest 0). The sentences of
the behaviour tests (tests/test_interpret_lexicon.py: a literal and a figurative "kick the bucket", "spill the
beans" both ways, the issue's three sentences) are labelled by each weighted ensemble too, since the mpnet model alone
fails them. The test split is not read. Writes ``use-ensemble-selection.json`` and its per-item probabilities (ids,
no sentences: PIE states no licence).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _write  # noqa: E402
from train_use_model import selection_uses  # noqa: E402

from figlang.interpret.use_label import USE_MODEL, UseItem, UseLabeller  # noqa: E402

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
# (sentence, idiom, meaning as the shipped lexicon gives it, the use the behaviour tests want)
BEHAVIOUR = (
    ("He kicked the bucket across the yard and the water spilled everywhere.", "kick the bucket", "literal"),
    ("The old farmer kicked the bucket last winter and was buried on Sunday.", "kick the bucket", "figurative"),
    ("Her brother spilled the beans about the engagement.", "spill the beans", "figurative"),
    ("The toddler spilled the beans on the kitchen floor.", "spill the beans", "literal"),
    ("She finally spilled the beans about the surprise party.", "spill the beans", "figurative"),
    ("When Dad saw the phone bill he hit the roof.", "hit the roof", "figurative"),
    ("Relax, I'm just pulling your leg.", "pull someone's leg", "figurative"),
)


def behaviour_items() -> list[UseItem]:
    """The behaviour-test sentences as use items, each with the meaning a fresh install's interpret gives its idiom."""
    from figlang.interpret import get_interpreter

    found = (get_interpreter(None).interpret(s, paraphrase=False).expressions for s, _, _ in BEHAVIOUR)
    meaning = {e.canonical: e.meaning for expressions in found for e in expressions}
    return [UseItem(s, idiom, meaning.get(idiom)) for s, idiom, _ in BEHAVIOUR]


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def best_threshold(scores: list[float], gold: list[bool]) -> tuple[float, float]:
    """(accuracy %, threshold) with the highest accuracy of ``score >= threshold``; ties go to the threshold nearest 0."""
    best = (-1.0, 0.0)
    for t in sorted(set(scores)):
        acc = 100 * sum((s >= t) == g for s, g in zip(scores, gold)) / len(gold)
        if acc > best[0] or (acc == best[0] and abs(t) < abs(best[1])):
            best = (acc, t)
    return round(best[0], 2), best[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--mpnet", required=True, help="the mpnet use adapter's folder (from commit a7b67c5)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    args = ap.parse_args()
    sel = selection_uses(args.data_dir)
    checks = behaviour_items()
    probs: dict[str, list[float]] = {}
    for name, model in (("minilm", USE_MODEL), ("mpnet", args.mpnet)):
        labeller = UseLabeller(model, stack=False)  # the adapters alone, as published (before the cohesion stack)
        got = labeller.label([u for _, u in sel] + checks)
        if labeller.why:
            raise SystemExit(labeller.why)
        probs[name] = [g.probability for g in got if g is not None]
    gold = [rec["label"] == "figurative" for rec, _ in sel]
    n = len(sel)
    report: dict = {"selection_uses": n, "figurative": sum(gold), "weights": {}}
    for w in WEIGHTS:
        scores = [w * _logit(a) + (1 - w) * _logit(b) for a, b in zip(probs["minilm"], probs["mpnet"])]
        acc, t = best_threshold(scores[:n], gold)
        behaviour = [("figurative" if s >= t else "literal") == want for s, (_, _, want) in zip(scores[n:], BEHAVIOUR)]
        report["weights"][str(w)] = {
            "selection_accuracy_pct": acc,
            "threshold": round(t, 4),
            "behaviour_tests_passed": f"{sum(behaviour)}/{len(behaviour)}",
        }
        print(f"w(minilm)={w}: selection {acc}% at {t:.3f}; behaviour sentences right {sum(behaviour)}/{len(behaviour)}")
    items = [
        {"id": rec["id"], "idiom": rec["idiom"], "gold": rec["label"], "p_minilm": round(a, 4), "p_mpnet": round(b, 4)}
        for (rec, _), a, b in zip(sel, probs["minilm"], probs["mpnet"])
    ]
    _write(args.out, "use-ensemble-selection", report, items)


if __name__ == "__main__":
    main()
