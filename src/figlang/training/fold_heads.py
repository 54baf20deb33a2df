"""Training IMPLI's fold heads (:mod:`figlang.methods.trained.fold_heads` answers with them).

For each of IMPLI's ten idiom-disjoint folds, cut exactly as `figlang train --folds` cuts them (the same linked
folds, the same 500-pair expression-disjoint selection slice of the fold's training part, the same seed):

- a logistic regression (L-BFGS from zero weights, label-weighted loss: both labels weigh the same in total, as the
  fine-tuned recipe B) on the standardised features of every training pair of the fold;
- its L2 penalty chosen on the fold's selection slice (balanced accuracy; ties to the larger penalty);
- its decision threshold chosen on the same slice with ``floor=0.85`` (entailment recall held at 0.85 with 95%
  confidence, non-entailment answered as often as that allows; :func:`figlang.methods.trained.choose_threshold`);
- the test fold scored once, after those choices; the pooled test predictions are written for `figlang eval -p`.

``python scripts/train_fold_heads.py OUT`` runs it; ``--ship`` copies a clean commit's run into the package.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write
from figlang.core.provenance import code_provenance, data_checksums, library_versions, split_fingerprint
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT, NLIPair
from figlang.data.registry import get_task
from figlang.data.splits import expression_disjoint_split, expression_folds, figurative_links, linked_key
from figlang.methods.trained.common import FIGLANG_JSON, choose_threshold
from figlang.methods.trained.fold_heads import (
    BASE,
    CARVE_FRACTION,
    COMMAND,
    DEV_LIMIT,
    HEADS_FILE,
    K,
    LABELS,
    MAX_FOLD_BYTES,
    METHOD,
    OBJECTIVE,
    PENALTIES,
    RECORD_FILE,
    ROUTES_FILE,
    SEED,
    SHIPPED_NAME,
    load_base,
    nli_features,
    route_key,
)
from figlang.methods.trained.heads import head_sha256, heads_dir, resolve_trained_model
from figlang.training.sampling import seeded_subset


def fit_binary(x: Any, y: Any, penalty: float, steps: int = 300) -> tuple[Any, Any]:
    """Label-weighted logistic regression by L-BFGS from zeros (deterministic): the margin of non-entailment,
    ``x @ w + b``; each label's items weigh half of the loss."""
    import torch

    pos = float(y.sum())
    if pos == 0 or pos == len(y):
        raise FiglangError("a fold's training part needs pairs of both labels")
    weights = torch.where(y > 0, 0.5 * len(y) / pos, 0.5 * len(y) / (len(y) - pos))
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=steps, history_size=20, line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w + b, y.float(), weight=weights) + penalty * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach(), b.detach()


def _balanced_accuracy(margins: Any, y: Any, threshold: float = 0.0) -> float:
    pred = margins > threshold
    pos, neg = y > 0, y == 0
    return 0.5 * (float((pred[pos]).float().mean()) + float((~pred[neg]).float().mean()))


def choose_fold_head(x_train: Any, y_train: Any, x_sel: Any, y_sel: Any, chosen_on: str) -> dict[str, Any]:
    """Standardise on the fold's training part, fit at each penalty, keep the best on the selection slice, then
    choose the decision threshold there (:data:`OBJECTIVE`)."""
    mean, std = x_train.mean(0), x_train.std(0).clamp(min=1e-6)
    z_train, z_sel = (x_train - mean) / std, (x_sel - mean) / std
    tried = []
    for penalty in PENALTIES:
        w, b = fit_binary(z_train, y_train, penalty)
        tried.append({"penalty": penalty, "selection_balanced_accuracy": _balanced_accuracy(z_sel @ w + b, y_sel), "w": w, "b": b})
    best = max(tried, key=lambda t: (round(t["selection_balanced_accuracy"], 12), t["penalty"]))
    margins = (z_sel @ best["w"] + best["b"]).tolist()
    found = choose_threshold(margins, [bool(v) for v in y_sel.tolist()], OBJECTIVE)
    decision = {"label": NON_ENTAILMENT, "threshold": found.pop("threshold"), "chosen_on": chosen_on, **found}
    return {
        "mean": mean,
        "std": std,
        "w": best["w"],
        "b": best["b"],
        "penalty": best["penalty"],
        "tried": [{k: t[k] for k in ("penalty", "selection_balanced_accuracy")} for t in tried],
        "decision": decision,
    }


def impli_folds(ctx: RunContext, limit: int | None = None) -> tuple[list[NLIPair], Any, list[tuple[list[NLIPair], list[NLIPair]]]]:
    """IMPLI's records, their linked grouping key and the ten folds, cut as :func:`figlang.training.folds.train_folds`
    cuts them; ``limit``: a seeded subset of the records first (tests and quick looks only)."""
    task = get_task("impli")
    records = [r for r in seeded_subset(task.load(task.default_split, ctx), limit, SEED) if isinstance(r, NLIPair)]
    key = linked_key(records, figurative_links)
    return records, key, expression_folds(records, k=K, seed=SEED, key=key)


def _labels(records: Sequence[NLIPair]) -> Any:
    import torch

    return torch.tensor([1 if r.label == NON_ENTAILMENT else 0 for r in records])


def _fold_parts(parts: Any, f: int, key: Any) -> tuple[list[NLIPair], list[NLIPair], list[NLIPair]]:
    """(training part less its selection slice, the selection slice, the test fold) of fold ``f``."""
    rest, dev = expression_disjoint_split(parts[f][0], dev_fraction=CARVE_FRACTION, seed=SEED, key=key)
    sel = [r for r in seeded_subset(dev, DEV_LIMIT, SEED + 1 + f) if isinstance(r, NLIPair)]
    return rest, sel, list(parts[f][1])


def _features_cached(out: Path, base: Any, records: Sequence[NLIPair], batch_size: int) -> Any:
    """Every IMPLI pair's features, kept in ``out/features.pt`` (keyed by the records' digest) so a rerun need not encode."""
    import torch

    digest = split_fingerprint(records)["ids_sha256"]
    cache = out / "features.pt"
    if cache.is_file():
        saved = torch.load(cache, weights_only=True)
        if saved.get("records_sha256") == digest:
            return saved["x"]
    x = nli_features(base, records, batch_size)
    torch.save({"records_sha256": digest, "x": x}, cache)
    return x


def _fold_row(f: int, head: dict[str, Any], test: Sequence[NLIPair], margins: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A fold's summary and its test predictions (figlang's prediction rows)."""
    threshold = float(head["decision"]["threshold"])
    rows = []
    for r, m in zip(test, margins.tolist()):  # scores as the shipped model answers: non-entailment's margin less the threshold
        label = NON_ENTAILMENT if m > threshold else ENTAILMENT
        rows.append(
            {"id": r.id, "prediction": label, "scores": {ENTAILMENT: 0.0, NON_ENTAILMENT: round(m - threshold, 6)}, "meta": {"fold": f}}
        )
    gold = [r.label for r in test]
    by = {lb: [row["prediction"] == g for row, g in zip(rows, gold) if g == lb] for lb in LABELS}
    summary = {
        "fold": f,
        "test_items": len(test),
        "penalty": head["penalty"],
        "tried": head["tried"],
        "decision": head["decision"],
        "test_accuracy": sum(row["prediction"] == g for row, g in zip(rows, gold)) / max(1, len(rows)),
        "test_by_gold_label": {lb: {"n": len(v), "accuracy": sum(v) / len(v) if v else None} for lb, v in by.items()},
    }
    return summary, rows


def train_fold_heads(
    out: str | Path,
    ctx: RunContext | None = None,
    *,
    data_dir: str | Path | None = None,
    base: str = BASE,
    batch_size: int = 64,
    limit: int | None = None,
) -> dict[str, Any]:
    """Train the ten fold heads (the features once, then a head a fold), score each test fold once; writes ``out``:
    the heads, the routes, ``record.json``, ``figlang.json`` and the pooled test predictions. ``limit``: fold a seeded
    subset of IMPLI (tests only; the record says so)."""
    from safetensors.torch import save_file

    started, code = time.perf_counter(), code_provenance()  # the code this run started from
    ctx = run_context(ctx, data_dir=data_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records, key, parts = impli_folds(ctx, limit)
    model = load_base(base, ctx.threads)
    x, y = _features_cached(out, model, records, batch_size), _labels(records)
    index = {r.id: i for i, r in enumerate(records)}
    tensors: dict[str, Any] = {}
    folds, pooled, routes = [], [], {}
    for f in range(K):
        rest, sel, test = _fold_parts(parts, f, key)
        rows = [[index[r.id] for r in part] for part in (rest, sel, test)]
        head = choose_fold_head(x[rows[0]], y[rows[0]], x[rows[1]], y[rows[1]], f"fold-{f}-selection")
        for name in ("mean", "std", "w", "b"):
            tensors[f"fold_{f:02d}.{name}"] = head[name].contiguous()
        margins = ((x[rows[2]] - head["mean"]) / head["std"]) @ head["w"] + head["b"]
        summary, predictions = _fold_row(f, head, test, margins)
        summary.update(train_items=len(rest), selection_items=len(sel), test_records_sha256=split_fingerprint(test)["ids_sha256"])
        folds.append(summary)
        pooled += predictions
        routes.update({route_key(link): f for r in test for link in figurative_links(r)})
    save_file(tensors, str(out / HEADS_FILE))
    with atomic_write(out / ROUTES_FILE, "wb") as fh:
        fh.write(gzip.compress(json.dumps(dict(sorted(routes.items()))).encode(), mtime=0))
    with atomic_write(out / "predictions.jsonl") as fh:
        fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in pooled)
    record = _record(out, model, base, ctx, records, folds, code, time.perf_counter() - started)
    _write_json(out / RECORD_FILE, record)
    _write_json(out / FIGLANG_JSON, _figlang_json(record))
    return record


def _record(
    out: Path, model: Any, base: str, ctx: RunContext, records: Sequence[NLIPair], folds: list[dict[str, Any]], code: dict, seconds: float
) -> dict[str, Any]:
    base_dir, _ = resolve_trained_model(base)
    base_meta = json.loads((base_dir / FIGLANG_JSON).read_text(encoding="utf-8"))
    task = get_task("impli")
    size = (out / HEADS_FILE).stat().st_size
    return {
        "name": SHIPPED_NAME,
        "what": "IMPLI entailment vs non-entailment: one label-weighted linear head per idiom-disjoint fold on the frozen "
        "FLUTE label model's features ([CLS] and the head's dense output)",
        "labels": list(LABELS),
        "base": {"model": base, "base_model": base_meta.get("base_model"), "weights_sha256": head_sha256(base_dir)},
        "features": "[CLS] of the last layer and tanh(dense) of the classification head, concatenated; standardised per fold",
        "folds": folds,
        "fold_grouping": "linked: pairs that share a normalised idiom or a premise are in one fold (as figlang train --folds)",
        "selection": f"inside each fold: a {CARVE_FRACTION:.0%} expression-disjoint slice of its training part, {DEV_LIMIT} pairs, seed {SEED}",
        "choices_made_on": {"penalty": "each fold's selection slice (balanced accuracy)", "threshold": f"the same slice ({OBJECTIVE})"},
        "penalties_tried": list(PENALTIES),
        "file": {"name": HEADS_FILE, "bytes": size, "bytes_per_fold": size // K, "routes": ROUTES_FILE},
        "head": {"file": HEADS_FILE, "bytes": size, "sha256": hashlib.sha256((out / HEADS_FILE).read_bytes()).hexdigest()},
        "records_sha256": split_fingerprint(records)["ids_sha256"],
        "records": len(records),
        "data_files": data_checksums(sorted(set(task.files(task.default_split, ctx.data_dir))), ctx.data_dir),
        "seed": SEED,
        "deterministic": "L-BFGS from zero weights on fixed features: no randomness beyond the folds' seeded cut",
        "code": code,
        "command": COMMAND,
        "versions": library_versions(),
        "seconds": round(seconds, 1),
    }


def _figlang_json(record: dict[str, Any]) -> dict[str, Any]:
    """What `-m trained` reads: the method, the labels and the base (the heads load on it)."""
    return {
        "figlang_trained": 1,
        "status": "complete",
        "shape": "nli",
        "method": METHOD,
        "model_class": "fold-heads",
        "labels": list(LABELS),
        "base_model": {"reference": record["base"]["model"]},
        "best": {"folds": len(record["folds"])},
        "record": RECORD_FILE,
    }


def _write_json(path: Path, value: Any) -> None:
    with atomic_write(path) as fh:
        fh.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def ship_fold_heads(run_dir: str | Path, target: str | Path | None = None) -> Path:
    """Copy a finished run's heads, routes, record and figlang.json into the package (a clean commit's run only)."""
    run = Path(run_dir)
    target = Path(target) if target is not None else heads_dir() / SHIPPED_NAME
    record = json.loads((run / RECORD_FILE).read_text(encoding="utf-8"))
    if record["file"]["bytes_per_fold"] > MAX_FOLD_BYTES:
        raise FiglangError(f"{run / HEADS_FILE}: {record['file']['bytes_per_fold']:,} bytes a fold, over the 1 MB a fold model may take")
    if (record.get("code") or {}).get("git_dirty") is not False:
        raise FiglangError(f"{run}: not made from a clean commit (code {record.get('code')}); commit, then train again")
    target.mkdir(parents=True, exist_ok=True)
    for name in (HEADS_FILE, ROUTES_FILE, RECORD_FILE, FIGLANG_JSON):
        shutil.copyfile(run / name, target / name)
    return target


__all__ = ["choose_fold_head", "fit_binary", "impli_folds", "ship_fold_heads", "train_fold_heads"]
