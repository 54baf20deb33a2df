"""Fit the literal-cohesion stack of the default use model on its `selection` uses, and ship it beside the adapter.

    OMP_NUM_THREADS=2 python benchmarks/fit_use_stack.py --data-dir ../shared/data

The default use model reads the sentence with the idiom masked, so it cannot see whether the context goes with the
idiom's own words, the other half of lexical cohesion (``figlang.interpret.cohesion``). This fits
P(figurative) = sigmoid(a * use-model logit + b * literal cohesion + c) on the use model's ``selection`` uses (PIE's
and IMPLI's, split by idiom as ``train_use_model.py --export`` splits them; the use model chose its epoch and
threshold on them and was never trained on them), by L2-regularised logistic regression (scipy, the penalty
0.5 * |w|^2 on the two weights), and the decision threshold of best accuracy on the same uses (the smallest, among
the probabilities rounded to 3 places). Also recorded: the same fit's accuracy under 5-fold cross-validation by idiom
(folds by a hash of the idiom), beside the use model alone under the same folds (its own threshold refit per fold).
Writes ``src/figlang/resources/heads/use-minilm-lora/stack.json`` (``--out`` to write elsewhere). The rule that
made it the default labeller, and the figures measured with it, are in docs/research/interpret.md, section (b).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_use_model import selection_uses  # noqa: E402

from figlang.core.io import atomic_write, file_sha256  # noqa: E402
from figlang.core.provenance import code_provenance  # noqa: E402
from figlang.interpret.cohesion import STACK_FILE, use_logit  # noqa: E402
from figlang.interpret.lexicon_all import PIE_CSV  # noqa: E402
from figlang.interpret.use_label import USE_MODEL, UseLabeller  # noqa: E402
from figlang.methods.trained.heads import resolve_trained_model  # noqa: E402


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Weights and intercept minimising the log-loss plus 0.5 * |weights|^2 (the intercept is not penalised)."""
    from scipy.optimize import minimize

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, c = theta[:-1], theta[-1]
        z = x @ w + c
        p = 1.0 / (1.0 + np.exp(-z))
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * w @ w)
        grad = np.append(x.T @ (p - y) + w, np.sum(p - y))
        return value, grad

    res = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 1000, "gtol": 1e-10})
    return res.x[:-1], float(res.x[-1])


def best_threshold(p: np.ndarray, y: np.ndarray) -> float:
    """The smallest of the rounded probabilities with the best accuracy (figurative when p >= it)."""
    candidates = np.unique(np.round(p, 3))
    accuracy = [float(((p >= t) == y).mean()) for t in candidates]
    return float(candidates[int(np.argmax(accuracy))])


def _predict(x: np.ndarray, w: np.ndarray, c: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w + c)))


def cross_validated(x: np.ndarray, y: np.ndarray, idioms: list[str], folds: int = 5) -> float:
    """Accuracy (%) when each fold of idioms is answered by a fit (and threshold) on the other folds."""
    fold = np.array([int(hashlib.sha256(i.encode()).hexdigest(), 16) % folds for i in idioms])
    right = 0
    for k in range(folds):
        train, test = fold != k, fold == k
        w, c = fit_logistic(x[train], y[train])
        t = best_threshold(_predict(x[train], w, c), y[train])
        right += int(((_predict(x[test], w, c) >= t) == y[test]).sum())
    return round(100 * right / len(y), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out", type=Path, help=f"the folder to write {STACK_FILE} into (default: the default use model's)")
    args = ap.parse_args()
    uses = selection_uses(args.data_dir)
    items = [u for _, u in uses]
    y = np.array([rec["label"] == "figurative" for rec, _ in uses], dtype=float)
    labeller = UseLabeller(USE_MODEL, stack=False)
    labels = labeller.label(items)
    if labeller.why:
        raise SystemExit(labeller.why)
    logits = [use_logit(lab.probability) for lab in labels if lab is not None]
    x = np.column_stack([logits, labeller.cohesion(items)])
    w, c = fit_logistic(x, y)
    p = _predict(x, w, c)
    threshold = best_threshold(p, y)
    idioms = [rec["idiom"] for rec, _ in uses]
    report = {
        "what": "literal-cohesion stack of the default use model (figlang.interpret.cohesion)",
        "command": "python benchmarks/fit_use_stack.py " + " ".join(sys.argv[1:]),
        "stack": {"use_weight": float(w[0]), "cohesion_weight": float(w[1]), "intercept": c, "threshold": threshold},
        "fit_on": {"split": "selection", "uses": len(y), "figurative": int(y.sum()), "idioms": len(set(idioms))},
        "selection_accuracy_pct": round(100 * float(((p >= threshold) == y).mean()), 2),
        "cross_validated_accuracy_pct": {
            "stack": cross_validated(x, y, idioms),
            "use_model_alone": cross_validated(x[:, :1], y, idioms),
        },
        "use_model": USE_MODEL,
        "data": {"pie": file_sha256(Path(args.data_dir) / PIE_CSV)},
        "code": code_provenance(),
    }
    folder = args.out or resolve_trained_model(USE_MODEL)[0]
    with atomic_write(Path(folder) / STACK_FILE) as f:
        f.write(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "code"}, indent=2))


if __name__ == "__main__":
    main()
