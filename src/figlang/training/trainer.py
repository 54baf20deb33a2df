"""The training loop every figlang-trained model shares.

``train(task, method, model, out_dir, **config)`` fine-tunes an encoder or LM (a catalog name such
as ``minilm``/``mpnet``/``smollm2-135m``, a local model directory, a hub id, or a figlang-trained directory to
start from) and leaves in ``out_dir``:

* the best model (by dev accuracy) as a normal Transformers checkpoint (``save_pretrained`` of
  model and tokenizer; the multiple-choice head beside it) and ``figlang.json`` (shape, method,
  input format, base model, training configuration, data checksums, dev metrics), which
  ``figlang eval --method trained --model out_dir`` uses;
* ``checkpoint/``: the resumable state (model, optimizer, scheduler, RNG states, step), written
  every ``save_every`` optimizer steps and at every evaluation; rerunning with the same
  ``out_dir`` and configuration continues from it and ends with the same weights as an
  uninterrupted run;
* ``train_log.jsonl`` (one JSON object per logged step and per evaluation), ``loss_curve.png``,
  ``eval/<split>/`` (the harness's predictions and results for every reported split) and, for multiple-choice and
  classification models, ``choice/<split>/`` (the kept model's answers on the split that chose it, so that the
  record's selection accuracy recomputes from items; never a reported figure).

Determinism: seeds for torch, random and numpy; the data order of epoch e is a function of
(seed, e) alone (shuffled, then length-bucketed to save padding); dropout draws from torch's
generator, whose state is checkpointed.

Generating methods (``iro``, ``generator``, ``generator-context``, ``generator-literal``;
:mod:`figlang.methods.trained.generator`) train a causal or seq2seq LM with the LM loss on the target
only and select on the dev loss (lower is better; ``best.dev_loss`` in figlang.json); their report
splits are scored by decoding through the harness (FLUTE accuracy with explanations; ROUGE-L/BLEU).

Model selection uses a split the report never scores: ``selection`` of the narrative tasks (carved from
train-disjoint by expression, training on ``train-fit``), else a slice carved from train; the reported
splits are dev-disjoint and the official dev/val. Selecting on a split that is also reported is refused
unless ``select_on_eval_split`` says so, and is then recorded (``provenance.selection_split`` in
figlang.json, train_result.json and every results.json).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.evaluation.provenance import records_digest
from figlang.methods.trained import FIGLANG_JSON, TRAINED_METHODS
from figlang.training.base_model import build_model, resolve_base
from figlang.training.config import BALANCE_KEYS, TrainConfig, TrainResult, make_config
from figlang.training.files import _atomic_json
from figlang.training.folds import train_folds
from figlang.training.log import LOG_FILE, TrainLog, plot_loss_curve
from figlang.training.loop import Trainer, TrainState, TrainSummary, run_training
from figlang.training.reporting import _choose_decision, _compact, _with_reported_splits, choice_answers, final_report
from figlang.training.sampling import balanced_subset, epoch_plan, group_weights, mix, seeded_subset, set_seeds
from figlang.training.train_data import _task_data, carve_key_fn


def train(
    task: str | Any,
    method: str,
    model: str,
    out_dir: str | Path,
    *,
    restart: bool = False,
    ctx: RunContext | None = None,
    **config: Any,
) -> TrainResult:
    """Train ``method`` on ``task`` from base ``model`` into ``out_dir`` (resuming a run left there).

    ``config``: any :class:`TrainConfig` field (``preset``, ``epochs``, ``lr``, ``batch_size``,
    ``grad_accum``, ``max_length``, ``seed``, ``limit``, ``max_steps``, ``bf16``, …). ``ctx``, the run's context,
    names the data folder (and the seed, device and threads unless ``config`` gives them); else ``data_dir``.
    """
    t = get_task(task) if isinstance(task, str) else task
    cfg = make_config(t.name if not isinstance(task, str) else task, method, model, out_dir, ctx=ctx, **config)
    shape = TRAINED_METHODS[cfg.method][0]
    if t.shape != shape:
        raise FiglangError(f"method {cfg.method!r} trains {shape} models, but task {t.name!r} is a {t.shape} task")
    train_records, dev_records, sets, info = _task_data(t, cfg)
    # an iro model shown examples retrieves them from the whole training split, not only the --limit subset it learns from
    pool = t.load(info["task"]["train_split"], cfg.ctx) if cfg.examples else None
    best_model, summary = run_training(cfg, train_records, dev_records, labels=t.labels, meta_extra=info, restart=restart, pool=pool)
    out = Path(cfg.out_dir)
    dev_name = info["provenance"]["selection_split"]["epoch"]
    decision = _choose_decision(best_model, cfg, dev_records, dev_name)
    metrics = final_report(best_model, t, sets, cfg, out)
    choice_answers(best_model, t, dev_name, dev_records, cfg, out)
    status = "partial" if summary.stopped == "time-budget" else "complete"
    meta = summary.figlang_meta(status, _compact(metrics))
    if decision is not None:
        meta["decision"] = decision
    meta["stopped"] = summary.stopped
    meta["skipped_steps"] = summary.state.skipped_steps
    _atomic_json(out / FIGLANG_JSON, meta)
    state = summary.state
    best = state.best or {}
    result = TrainResult(
        out_dir=out,
        method=cfg.method,
        best_step=best.get("step"),
        best_epoch=best.get("epoch"),
        best_dev_accuracy=best.get("dev_accuracy"),
        metrics=metrics,
        steps=state.step,
        stopped=summary.stopped,
        resumed=summary.resumed,
        seconds=summary.seconds,
        log_path=out / LOG_FILE,
        plot_path=summary.plot,
        best_dev_loss=best.get("dev_loss"),
        provenance=_with_reported_splits(info["provenance"], out, sets),
    )
    _atomic_json(out / "train_result.json", result.to_dict())
    return result


__all__ = [
    "BALANCE_KEYS",
    "TrainConfig",
    "TrainLog",
    "TrainResult",
    "TrainState",
    "TrainSummary",
    "Trainer",
    "balanced_subset",
    "build_model",
    "carve_key_fn",
    "epoch_plan",
    "group_weights",
    "make_config",
    "mix",
    "plot_loss_curve",
    "records_digest",
    "resolve_base",
    "run_training",
    "seeded_subset",
    "set_seeds",
    "train",
    "train_folds",
]
