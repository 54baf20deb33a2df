"""IMPLI-style k-fold training (:func:`train_folds`): folds disjoint by idiom, each trained, selected and scored alone, then pooled."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.io import file_lock
from figlang.data.records import Record
from figlang.data.registry import get_task
from figlang.data.splits import expression_disjoint_split, expression_folds
from figlang.evaluation.predictions import read_predictions
from figlang.evaluation.runs import predictions_file
from figlang.evaluation.provenance import code_provenance, split_fingerprint
from figlang.evaluation.scoring import MetricOptions, score
from figlang.methods.trained import FIGLANG_JSON
from figlang.methods.trained.methods import TrainedMethod
from figlang.evaluation.provenance import records_digest
from figlang.training.config import TrainConfig, make_config
from figlang.training.files import _atomic_json, _portable_config, _strict_json
from figlang.training.loop import run_training
from figlang.training.reporting import _choose_decision, _compact, _records_results, _write_pooled
from figlang.training.sampling import balanced_subset, mix, seeded_subset
from figlang.training.train_data import _balance_info, carve_key_fn, selection_provenance


FOLD_GROUPING = "linked: records that share a normalised idiom or a premise are one group (no idiom, no premise in two folds)"
FOLD_SELECTION = (
    "inside each fold: a seeded expression-disjoint slice (carve_fraction, linked grouping) of that fold's "
    "training part chooses the epoch and the kept checkpoint; the test fold is scored once"
)


@dataclass(frozen=True)
class _FoldRun:
    """What every fold of one k-fold run shares: the task, the folds, the settings and the run's identity."""

    task: Any
    method: str
    model: str
    out: Path
    k: int
    test_limit: int | None
    restart: bool
    config: dict[str, Any]
    base_cfg: TrainConfig
    parts: Sequence[tuple[Sequence[Record], Sequence[Record]]]
    key: Callable[[Record], str]
    run_key: dict[str, Any]  # the settings as they read back from fold_result.json
    ctx: RunContext | None = None  # the run's context: every fold reads the same data folder

    def info(self, cfg: TrainConfig, f: int, fold_test: Sequence[Record], rest: Sequence[Record], dev: Sequence[Record]) -> dict[str, Any]:
        """figlang.json's task, data and provenance blocks for fold ``f``."""
        return {
            "task": {
                "shape": self.task.shape,
                "folds": self.k,
                "fold": f,
                "fold_test_items": len(fold_test),
                "fold_test_records_sha256": records_digest(fold_test),
            },
            "data": _balance_info(cfg, rest),
            "provenance": selection_provenance(
                cfg,
                f"fold-{f}-train",
                rest,
                f"fold-{f}-selection",
                dev,
                (f"test-fold-{f}",),
                fold_grouping=FOLD_GROUPING,
                selection_from=FOLD_SELECTION,
            ),
        }

    def train_fold(self, f: int) -> tuple[dict[str, Any], list[Record], dict[str, Any]]:
        """Train fold ``f`` on the other folds, select on a slice of them, score its test fold; (its summary entry, its
        test records, their predictions). Writes ``fold_XX/`` with its figlang.json and fold_result.json."""
        t, base_cfg = self.task, self.base_cfg
        fold_test = _fold_test(self.parts, f, self.test_limit, base_cfg.seed)
        rest, dev = expression_disjoint_split(self.parts[f][0], dev_fraction=base_cfg.carve_fraction, seed=base_cfg.seed, key=self.key)
        cfg = make_config(t.name, self.method, self.model, self.out / f"fold_{f:02d}", ctx=self.ctx, **self.config)
        rest = balanced_subset(rest, cfg.limit, cfg.seed + f, cfg.sample_balance)
        dev = seeded_subset(dev, cfg.dev_limit, cfg.seed + 1 + f)
        info = self.info(cfg, f, fold_test, rest, dev)
        best_model, summary = run_training(cfg, rest, dev, labels=t.labels, meta_extra=info, restart=self.restart)
        decision = _choose_decision(best_model, cfg, dev, f"fold-{f}-selection")
        method_obj = TrainedMethod(model=str(cfg.out_dir), loaded=best_model, batch_size=cfg.eval_batch_size or 64)
        fold_dir = Path(cfg.out_dir)
        preds, m, _ = _records_results(
            t, f"test-fold-{f}", fold_test, method_obj, cfg.seed, {"fold": f, "folds": self.k}, out_dir=fold_dir / "eval" / "test-fold"
        )
        meta = summary.figlang_meta("complete", _compact({"test-fold": m}))
        if decision is not None:
            meta["decision"] = decision
        _atomic_json(fold_dir / FIGLANG_JSON, meta)
        entry = {
            "accuracy": m["accuracy"],
            "by_gold_label": m["by_gold_label"],
            "items": len(fold_test),
            "train_items": len(rest),
            "dev_items": len(dev),
            "best": summary.state.best,
            "train_label_mix": mix(rest),
            **({"decision": decision} if decision is not None else {}),
        }
        _atomic_json(fold_dir / FOLD_RESULT, {"run": self.run_key, "per_fold": entry})
        return entry, fold_test, preds


def train_folds(
    task: str | Any,
    method: str,
    model: str,
    out_dir: str | Path,
    *,
    k: int = 10,
    folds: Sequence[int] | None = None,
    test_limit: int | None = None,
    restart: bool = False,
    ctx: RunContext | None = None,
    **config: Any,
) -> dict[str, Any]:
    """IMPLI-style k-fold training: folds disjoint by expression (records without one are their own group).

    Each fold trains in ``out_dir/fold_XX`` on the other folds (a 10% expression-disjoint slice
    of them for model selection) and is scored on its test fold; the summary pools the folds,
    with accuracy per gold label (entailment vs non-entailment) reported separately.
    ``test_limit`` scores a seeded subset of each test fold (for quick looks and tests). ``ctx``, the run's
    context, names the data folder (and the seed, device and threads unless ``config`` gives them); else ``data_dir``.
    """
    t = get_task(task) if isinstance(task, str) else task
    config = dict(config)
    config.setdefault("preset", "cpu-impli-folds")
    base_cfg = make_config(t.name, method, model, out_dir, ctx=ctx, **config)
    records = t.load(base_cfg.train_split or t.default_split, base_cfg.ctx)
    key = carve_key_fn("expression", records)  # linked: one idiom's pairs never straddle two folds
    parts = expression_folds(records, k=k, seed=0, key=key)
    chosen = list(range(k)) if folds is None else [int(f) for f in folds]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    per_fold: dict[str, Any] = {}
    started = time.perf_counter()
    tested: dict[int, tuple[list, dict]] = {}  # fold → (its test records, their predictions)
    learned = {name: v for name, v in _portable_config(base_cfg.to_dict()).items() if name not in HOW_IT_RAN}
    run_key = json.loads(
        _strict_json({"task": t.name, "method": method, "model": model, "k": k, "test_limit": test_limit, "config": learned})
    )  # as it reads back from fold_result.json
    run = _FoldRun(t, method, model, out, k, test_limit, restart, config, base_cfg, parts, key, run_key, ctx)
    for f in chosen:
        if not 0 <= f < k:
            raise FiglangError(f"fold {f} is outside 0..{k - 1}")
        entry, fold_test, preds = run.train_fold(f)
        per_fold[str(f)] = entry
        tested[f] = (fold_test, preds)
    with file_lock(out / ".folds_summary.lock"):  # several `--fold` processes on one folder: each summary holds them all
        earlier, skipped = _earlier_folds(out, t, parts, run_key, chosen, test_limit, base_cfg.seed)
        for f, (entry, fold_test, preds) in earlier.items():
            per_fold[str(f)] = entry
            tested[f] = (fold_test, preds)
        return _fold_summary(out, t, method, model, k, test_limit, base_cfg, per_fold, tested, sorted(earlier), skipped, started)


FOLD_RESULT = "fold_result.json"  # a finished fold's summary entry and the settings it ran with, for later merges
# settings that change how a fold ran, not what it learned or how it was scored: folds that differ only here pool together
HOW_IT_RAN = frozenset(
    {"progress", "threads", "eval_batch_size", "log_every", "save_every", "report_limit", "report_splits", "data_dir", "out_dir"}
)


def _fold_test(parts: Sequence[tuple[Sequence[Record], Sequence[Record]]], f: int, test_limit: int | None, seed: int) -> list[Record]:
    """Fold ``f``'s scored test records: the whole test fold, or with ``test_limit`` a seeded subset (a quick look only)."""
    return list(seeded_subset(parts[f][1], test_limit, seed + 100 + f))


def _earlier_folds(
    out: Path,
    task: Any,
    parts: Sequence[tuple[Sequence[Record], Sequence[Record]]],
    run_key: dict[str, Any],
    chosen: Sequence[int],
    test_limit: int | None,
    seed: int,
) -> tuple[dict[int, tuple[dict, list, dict]], dict[str, str]]:
    """Folds an earlier ``--fold`` run finished in this folder with the same settings: their entries, test records and
    predictions (read back from ``fold_XX/eval/test-fold``), and why any other finished fold was left out."""
    found: dict[int, tuple[dict, list, dict]] = {}
    skipped: dict[str, str] = {}
    for f in range(len(parts)):
        path = out / f"fold_{f:02d}" / FOLD_RESULT
        if f in chosen or not path.is_file():
            continue
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("run") != run_key:
            skipped[str(f)] = "it ran with other settings (task, method, model, k, test limit or training configuration)"
            continue
        fold_test = _fold_test(parts, f, test_limit, seed)
        found_file = predictions_file(out / f"fold_{f:02d}" / "eval" / "test-fold")
        if found_file is None:
            skipped[str(f)] = "its test-fold predictions are missing"
            continue
        try:
            preds, problems, _ = read_predictions(found_file, fold_test, task.labels)
        except FiglangError as err:
            skipped[str(f)] = f"its test-fold predictions cannot be read: {err}"
            continue
        if problems.missing or problems.unknown or problems.duplicates:
            skipped[str(f)] = "its test-fold predictions do not match its test fold"
            continue
        found[f] = (saved["per_fold"], fold_test, preds)
    return found, skipped


def _fold_summary(
    out: Path,
    t: Any,
    method: str,
    model: str,
    k: int,
    test_limit: int | None,
    base_cfg: Any,
    per_fold: dict[str, Any],
    tested: dict[int, tuple[list, dict]],
    earlier: list[int],
    skipped: dict[str, str],
    started: float,
) -> dict[str, Any]:
    """Pool the test folds (in fold order), write ``pooled/`` and ``folds_summary.json``."""
    folds_run = sorted(tested)
    per_fold = {str(f): per_fold[str(f)] for f in folds_run}
    pooled_records: list[Record] = [r for f in folds_run for r in tested[f][0]]
    pooled_preds: dict[str, Any] = {i: p for f in folds_run for i, p in tested[f][1].items()}
    options = MetricOptions(seed=base_cfg.seed)
    pooled = score(pooled_records, pooled_preds, t.group_by, options)
    _write_pooled(out / "pooled", t, k, folds_run, pooled_records, pooled_preds, options, model, time.perf_counter() - started)
    by_idiom = score(pooled_records, pooled_preds, (), MetricOptions(seed=base_cfg.seed, ci_cluster="expression"))
    accs = [v["accuracy"]["accuracy"] for v in per_fold.values()]
    per_label: dict[str, list[float]] = {}
    for v in per_fold.values():
        for label, m in v["by_gold_label"].items():
            per_label.setdefault(label, []).append(m["accuracy"])
    summary_out = {
        "task": t.name,
        "method": method,
        "model": model,
        "k": k,
        "folds_run": folds_run,
        "test_limit": test_limit,
        "folds_from_earlier_runs": earlier,
        **({"folds_left_out": skipped} if skipped else {}),
        "config": _portable_config(base_cfg.to_dict()),
        "pooled": {
            "accuracy": pooled["accuracy"],
            "by_gold_label": pooled["by_gold_label"],
            **{k2: v for k2, v in pooled.items() if k2.startswith("by_") and k2 != "by_gold_label"},
        },
        "mean_over_folds": {"accuracy": sum(accs) / len(accs), **{f"accuracy_{lab}": sum(v) / len(v) for lab, v in per_label.items()}},
        # the folds are disjoint by idiom, so the question is how a model does on new idioms: resample idioms, not pairs
        "pooled_ci_by_expression": {key: by_idiom[key] for key in ("accuracy", "by_gold_label")},
        "per_fold": per_fold,
        # how the folds were made and where each fold's model was chosen: leaky (span) and leak-free (linked) fold
        # summaries must not read alike
        "fold_grouping": FOLD_GROUPING,
        "selection": FOLD_SELECTION
        + (f"; the same slice chooses the decision threshold (maximising {base_cfg.threshold})" if base_cfg.threshold != "none" else ""),
        "provenance": {
            "code": code_provenance(),
            "splits": {"pooled-test-folds": split_fingerprint(pooled_records)},
            "selection_split": {
                "epoch": "fold-N-selection",
                "checkpoint": "fold-N-selection",
                **({"threshold": "fold-N-selection"} if base_cfg.threshold != "none" else {}),
                **(base_cfg.chosen_on or {}),
            },
        },
    }
    _atomic_json(out / "folds_summary.json", summary_out)
    return summary_out
