"""Scoring a trained model through the evaluation harness: the reported splits, record sets that are no task split, the decision threshold."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.io import atomic_write
from figlang.data.records import Record
from figlang.evaluation import build_results, evaluate, evaluate_records, write_run
from figlang.methods.trained import FIGLANG_JSON, read_figlang_json
from figlang.methods.trained.methods import TrainedMethod
from figlang.training.config import TrainConfig, selects_on
from figlang.training.files import _atomic_json


def _records_results(
    task: Any,
    name: str,
    records: Sequence[Record],
    method: Any,
    seed: int,
    extra: dict[str, Any] | None = None,
    out_dir: Path | None = None,
):
    """Predict and score a set of records that is not a task split (a carved dev, a test fold) through the harness;
    writes its run folder when ``out_dir`` is given."""
    chosen = ((getattr(method, "meta", None) or {}).get("provenance") or {}).get("selection_split") or {}
    run = evaluate_records(task, method, records, name, out_dir=out_dir, seed=seed, task_extra=extra, extra={"selection_split": chosen})
    return run.predictions, run.metrics, run.results


def _write_pooled(
    target: Path,
    task: Any,
    k: int,
    chosen: Sequence[int],
    records: Sequence[Record],
    preds: dict[str, Any],
    options: Any,
    model: str,
    seconds: float,
) -> None:
    """The pooled test folds as one harness run folder, so `figlang report DIR/pooled` draws the ICE and overlap plots."""
    method_info = {
        "name": "trained",
        "model": str(target.parent),
        "base_model": model,
        "fingerprint": {"folds": [str(target.parent / f"fold_{f:02d}") for f in chosen]},
    }
    results = build_results(
        task,
        f"{k}-fold test folds, pooled",
        records,
        preds,
        method_info,
        options,
        seconds,
        task_extra={"folds": k, "folds_run": list(chosen)},
    )
    write_run(target, results, list(records), preds)


DECISION_MARGINS = "decision_margins.jsonl"  # the selection items' score margins that chose the threshold


def _choose_decision(model: Any, cfg: TrainConfig, dev: Sequence[Record], dev_name: str) -> dict[str, Any] | None:
    """cfg.threshold: the decision threshold chosen on the dev (selection) records, set on the model and written into
    the run's figlang.json before anything is reported (so that the report's method identity sees it); None: argmax."""
    if cfg.threshold == "none":
        return None
    margins = model.decision_margins(dev, batch_size=cfg.eval_batch)
    decision = model.choose_decision(dev, cfg.threshold, chosen_on=dev_name, margins=margins)
    if margins:  # the selection items' margins: the threshold recomputes from them without the weights
        with atomic_write(Path(cfg.out_dir) / DECISION_MARGINS) as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in margins)
        decision = {**decision, "margins_file": DECISION_MARGINS}
    _atomic_json(Path(cfg.out_dir) / FIGLANG_JSON, {**read_figlang_json(cfg.out_dir), "decision": decision})
    return decision


def _kept_method(model: Any, cfg: TrainConfig, out: Path) -> TrainedMethod:
    """The kept model, loaded, as the harness's ``trained`` method on the run folder ``out``."""
    return TrainedMethod(model=str(out), loaded=model, batch_size=cfg.eval_batch, seed=cfg.seed)


def final_report(model: Any, task: Any, sets: dict[str, list[Record] | None], cfg: TrainConfig, out: Path) -> dict[str, Any]:
    """Score the best model on every report set with the evaluation harness; writes eval/<name>/."""
    method = _kept_method(model, cfg, out)
    metrics: dict[str, Any] = {}
    for name, records in sets.items():
        target = out / "eval" / name
        if records is None:
            run = evaluate(
                task,
                method,
                split=name,
                limit=cfg.report_limit,
                out_dir=target,
                use_cache=False,
                progress=cfg.progress,
                ctx=cfg.ctx.with_seed(0),  # the report's bootstrap has always used seed 0, whatever the training seed
            )
            metrics[name] = run.metrics
        else:
            _, m, _ = _records_results(task, name, records, method, cfg.seed, out_dir=target)
            metrics[name] = m
    return metrics


CHOICE_DIR = "choice"  # choice/<split>/: the kept model's answers on the split that chose it


def choice_answers(model: Any, task: Any, dev_name: str, dev: Sequence[Record], cfg: TrainConfig, out: Path) -> dict[str, Any] | None:
    """The kept model's per-item answers on the split that chose it (its epoch, a threshold), as a harness run folder
    choice/<split>/: the training record's selection accuracy then recomputes from items, not from a log line. Never a
    reported figure (the split chose the model). Multiple-choice and classification models only: a generating model
    is chosen on its dev loss, which needs no decoding. Returns the run's metrics, or None where none is written."""
    if selects_on(model)[0] != "dev_accuracy" or not dev:
        return None
    _, metrics, _ = _records_results(task, dev_name, dev, _kept_method(model, cfg, out), cfg.seed, out_dir=out / CHOICE_DIR / dev_name)
    return metrics


def _compact(metrics: dict[str, Any]) -> dict[str, Any]:
    """The parts of harness metrics worth keeping in figlang.json."""
    out: dict[str, Any] = {}
    for name, m in metrics.items():
        keep = {k: m[k] for k in ("accuracy", "by_gold_label", "n_scored", "n_invalid") if k in m}
        keep.update({k: v for k, v in m.items() if k.startswith("by_") and k not in keep})
        if isinstance(m.get("generation"), dict):  # generating models: the scores, not the metric configs
            keep["generation"] = {k: v for k, v in m["generation"].items() if not isinstance(v, dict)}
        if isinstance(m.get("explanations"), dict):
            keep["explanations"] = {k: v for k, v in m["explanations"].items() if k not in ("explanation_scores", "config", "problems")}
        out[name] = keep
    return out


def _with_reported_splits(prov: dict[str, Any], out: Path, sets: dict[str, Any]) -> dict[str, Any]:
    """The training provenance plus the fingerprint of every reported split, read back from its eval/<name>/results.json."""
    splits = dict(prov.get("splits") or {})
    for name in sets:
        try:
            splits.update(json.loads((out / "eval" / name / "results.json").read_text(encoding="utf-8"))["provenance"]["splits"])
        except (OSError, KeyError, ValueError):
            continue
    return {**prov, "splits": splits, "reported_splits": list(sets)}
