"""The training loop: a :class:`Trainer` over one run's typed :class:`TrainState`.

The state is what a checkpoint's ``state.json`` holds (step, epoch, position in the epoch's plan, the best model
so far, patience); the trainer owns the model, optimizer, scheduler, log and progress line, and its methods are
the loop's jobs: resume or start, one optimizer step, a dev evaluation, a checkpoint, the end of the run.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import Record
from figlang.evaluation.provenance import library_versions, records_digest
from figlang.core.devices import bf16_is_emulated
from figlang.methods.trained import FORMAT_VERSION, TRAINED_METHODS, load_trained, resolve_device
from figlang.training.base_model import build_model, resolve_base
from figlang.training.config import TrainConfig, selects_on
from figlang.training.files import (
    CHECKPOINT,
    _check_resume_data,
    _find_checkpoint,
    _portable_base,
    _portable_config,
    _save_best,
    _save_checkpoint,
)
from figlang.training.log import LOG_FILE, PLOT_FILE, TrainLog, _TrainProgress, plot_loss_curve
from figlang.training.sampling import epoch_plan, group_weights, set_rng_state, set_seeds


@dataclass
class TrainState:
    """Where a run stands; written as ``checkpoint/state.json`` and read back to resume."""

    config: dict[str, Any] = field(default_factory=dict)  # the training fingerprint the run started with (a resume must match it)
    data: dict[str, Any] = field(default_factory=dict)  # the train/dev records' digests and counts (a resume must match them)
    step: int = 0  # optimizer steps done
    epoch: int = 0  # epochs done
    group: int = 0  # optimizer steps done in the current epoch's plan
    best: dict[str, Any] | None = None  # the kept model: step, epoch and its selection value
    bad_evals: int = 0  # evaluations since the best value last improved (patience)
    finished: str | None = None  # why the run stopped, once it has
    last_eval_step: int = -1
    evals: list[dict[str, Any]] = field(default_factory=list)
    best_value: float | None = None  # the best selection value seen (None in checkpoints from before it was stored)
    skipped_steps: int = 0  # updates skipped for a non-finite loss or gradient
    running_losses: list[float] = field(default_factory=list)  # losses since the last log line, so a resumed log matches

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> TrainState:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        """state.json's object; ``best_value`` and ``skipped_steps`` only once they have a value, as before."""
        d = asdict(self)
        order = ["step", "epoch", "group", "best", "bad_evals", "finished", "last_eval_step", "config", "data", "evals"]
        out = {k: d[k] for k in order}
        if self.best_value is not None:
            out["best_value"] = self.best_value
        if self.skipped_steps:
            out["skipped_steps"] = self.skipped_steps
        out["running_losses"] = d["running_losses"]
        return out


@dataclass
class TrainSummary:
    """What :func:`run_training` tells its caller besides the best model."""

    state: TrainState
    stopped: str  # complete | early-stopping | max-steps | time-budget
    resumed: bool
    seconds: float
    plot: Path | None
    figlang_meta: Callable[..., dict[str, Any]]  # (status, metrics=None) → the figlang.json object of the kept model
    steps_per_epoch: int
    total_steps: int


def _usable(model: Any, records: Sequence[Record], split: str, say: bool) -> tuple[Sequence[Record], list[str]]:
    """The records the model can learn from, and the ids of those it cannot (a knowledge model's record for which
    the provider found no inference). When none is usable all are kept, so featurizing raises the error that
    names the missing inference files."""
    unusable = getattr(model, "unusable", None)
    if unusable is None:
        return records, []
    reasons = [unusable(r) for r in records]
    dropped = [r.id for r, why in zip(records, reasons) if why]
    if not dropped or len(dropped) == len(records):
        return records, []
    if say:
        first = next(why for why in reasons if why)
        print(
            f"[warn] {split}: {len(dropped)} of {len(records)} records left out ({first}; ids in the training log's start event)",
            file=sys.stderr,
            flush=True,
        )
    return [r for r, why in zip(records, reasons) if not why], dropped


def _accuracy(model: Any, feats: Sequence[dict[str, Any]], batch_size: int) -> float:
    scores = model.predict_features(feats, batch_size)
    correct = [max(range(len(s)), key=lambda k: (s[k], -k)) == f["label"] for f, s in zip(feats, scores)]
    return sum(correct) / max(len(correct), 1)


def _saved_state(out: Path, ckpt: Path, cfg: TrainConfig, data_now: dict[str, Any]) -> TrainState:
    """The checkpoint's state, refused when it was trained on other data or with another configuration."""
    saved_state = json.loads((ckpt / "state.json").read_text(encoding="utf-8"))
    _check_resume_data(out, saved_state.get("data"), data_now)
    saved, now = saved_state["config"], cfg.training_fingerprint()
    defaults = TrainConfig(task="", method="", model="", out_dir="").to_dict()
    saved = {**{k: defaults[k] for k in now if k not in saved and k in defaults}, **saved}  # options added since: their defaults
    diff = sorted(k for k in set(saved) | set(now) if json.dumps(saved.get(k), default=str) != json.dumps(now.get(k), default=str))
    if diff:
        shown = ", ".join(f"{k}: {saved.get(k)!r} → {now.get(k)!r}" for k in diff[:6])
        raise FiglangError(
            f"{out} holds a training run with another configuration ({shown}); resume it with the same options, "
            "use a new --out, or pass --restart to start over"
        )
    return TrainState.from_dict(saved_state)


def _optimizer(module: Any, cfg: TrainConfig) -> Any:
    """AdamW, no weight decay on biases and norms."""
    import torch

    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in params if not n.endswith(no_decay)], "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in params if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    try:  # the fused CPU kernel is ~3× faster than the per-tensor loop (torch ≥ 2.4)
        return torch.optim.AdamW(groups, lr=cfg.lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch
        return torch.optim.AdamW(groups, lr=cfg.lr)


class Trainer:
    """One training run into ``cfg.out_dir``: train on records, select on dev, resume from a checkpoint left there."""

    def __init__(
        self,
        cfg: TrainConfig,
        train_records: Sequence[Record],
        dev_records: Sequence[Record],
        *,
        labels: Sequence[str] = (),
        meta_extra: dict[str, Any] | None = None,
        restart: bool = False,
        pool: Sequence[Record] | None = None,
    ) -> None:
        import torch

        self.cfg, self.labels, self.meta_extra = cfg, labels, meta_extra or {}
        self.pool = pool  # the solved pairs an iro model with examples retrieves from (default: the training records)
        self.out = Path(cfg.out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        if cfg.threads:
            torch.set_num_threads(int(cfg.threads))
        self.log = TrainLog(self.out / LOG_FILE)
        self.started = time.perf_counter()
        self.checkpoint_dir = self._checkpoint_to_resume(restart)
        self.data_now = {
            "train_records_sha256": records_digest(train_records),
            "dev_records_sha256": records_digest(dev_records),
            "train_items": len(train_records),
            "dev_items": len(dev_records),
            **({"pool_records_sha256": records_digest(pool)} if pool is not None else {}),
        }
        saved = _saved_state(self.out, self.checkpoint_dir, cfg, self.data_now) if self.checkpoint_dir is not None else None
        self._build(train_records, dev_records)
        self.resumed = saved is not None
        self.state = saved if saved is not None else TrainState(config=cfg.training_fingerprint(), data=self.data_now)
        self.running: list[float] = []
        self.progress: _TrainProgress | None = None

    def _checkpoint_to_resume(self, restart: bool) -> Path | None:
        ckpt = _find_checkpoint(self.out)
        if restart and ckpt is not None:
            for name in (CHECKPOINT, f"{CHECKPOINT}.old", LOG_FILE):
                p = self.out / name
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            return None
        return ckpt

    def _build(self, train_records: Sequence[Record], dev_records: Sequence[Record]) -> None:
        """Seeds, the model on its device, the features, the epoch plan's size, the optimizer and its schedule."""
        import torch

        cfg = self.cfg
        set_seeds(cfg.seed)
        self.base = resolve_base(cfg.model)
        self.model = build_model(cfg, self.base, self.labels)
        self.module = self.model.module
        if getattr(self.model, "examples", 0):  # an iro model shown retrieved examples: its prompts need the pool
            self.model.use_pool(self.pool if self.pool is not None else train_records)
        self.device = resolve_device(cfg.device)
        if self.device != "cpu":
            self.module.to(self.device)
        self.sel_key, self.sel_mode = selects_on(self.model)
        train_records, self.dropped_train = _usable(self.model, train_records, "train", cfg.progress)
        dev_records, self.dropped_dev = _usable(self.model, dev_records, "dev", cfg.progress)
        if cfg.loss_weights != "none":  # balanced loss: the weights travel in each batch (collate reads them by record id)
            self.model.example_weights = group_weights(train_records, cfg.loss_weights)
        self.train_feats = self.model.features(train_records)
        self.dev_feats = self.model.features(dev_records)
        if not self.train_feats:
            raise FiglangError("no training records")
        if not self.dev_feats:
            raise FiglangError("no dev records for model selection")
        self.lengths = [f["length"] for f in self.train_feats]
        self.token_mean = hasattr(self.model, "target_tokens")  # a loss that is the mean over target tokens (generating models)
        # one-per-epoch: the features of one narrative and target (its inferences) form a group; each epoch draws one
        self.draw_groups = [(f["id"], f.get("t")) for f in self.train_feats] if cfg.inference_sampling == "one-per-epoch" else None
        self.steps_per_epoch = len(self.plan(0))
        self.total_steps = self.steps_per_epoch * cfg.epochs
        if cfg.max_steps:
            self.total_steps = min(self.total_steps, int(cfg.max_steps))
        self.warmup = int(round(cfg.warmup_ratio * self.total_steps))
        self.optimizer = _optimizer(self.module, cfg)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self.schedule)
        self.eval_bs = cfg.eval_batch

    def plan(self, epoch: int) -> list[list[list[int]]]:
        cfg = self.cfg
        return epoch_plan(self.lengths, cfg.batch_size, cfg.grad_accum, cfg.seed, epoch, groups=self.draw_groups)

    def schedule(self, step: int) -> float:
        """Linear warm-up, then linear decay to 0 at the last step."""
        if self.warmup and step < self.warmup:
            return (step + 1) / self.warmup
        return max(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup))

    def _start(self) -> None:
        self.log.truncate_after(-1)
        self.log.write(
            event="start",
            step=0,
            config=_portable_config(self.cfg.to_dict()),
            train_items=len(self.train_feats),
            dev_items=len(self.dev_feats),
            steps_per_epoch=self.steps_per_epoch,
            total_steps=self.total_steps,
            base_model=_portable_base(self.base),
            dropped={"train": self.dropped_train, "dev": self.dropped_dev},
        )

    def _resume(self, ckpt: Path) -> None:
        import torch

        module = self.module
        frozen = getattr(module, "frozen", False)
        partial = frozen or bool(getattr(module, "lora_spec", None))  # the checkpoint holds the trained tensors only
        module.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True, map_location=self.device), strict=not partial)
        if frozen and (ckpt / "features.pt").is_file():
            module.features.update(torch.load(ckpt / "features.pt", weights_only=True))
        blob = torch.load(ckpt / "trainer.pt", weights_only=False, map_location="cpu")  # the optimizer moves its state to the weights
        self.optimizer.load_state_dict(blob["optimizer"])
        self.scheduler.load_state_dict(blob["scheduler"])
        set_rng_state(blob["rng"])
        self.log.truncate_after(self.state.step)
        self.log.write(event="resume", step=self.state.step, epoch=self.state.epoch, group=self.state.group)

    def figlang_meta(self, status: str, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
        """The figlang.json object of the kept model."""
        cfg, extra = self.cfg, self.meta_extra
        shape, model_class = TRAINED_METHODS[cfg.method]
        return {
            "figlang_trained": FORMAT_VERSION,
            "status": status,
            "shape": shape,
            "method": cfg.method,
            "model_class": model_class,
            "labels": list(self.labels) if shape == "nli" else None,
            "input_format": self.model.describe(),
            "base_model": _portable_base(self.base),
            **({"lora": self.model.lora} if getattr(self.model, "lora", None) else {}),
            "task": {"name": cfg.task, **extra.get("task", {})},
            "training": _portable_config(cfg.to_dict())
            | {"steps_per_epoch": self.steps_per_epoch, "total_steps": self.total_steps, "warmup_steps": self.warmup},
            "data": {**extra.get("data", {}), **self.data_now},
            "best": self.state.best,
            "provenance": extra.get("provenance"),
            "dev_metrics": metrics or {},
            "versions": library_versions(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def checkpoint(self) -> None:
        self.state.running_losses = list(self.running)
        _save_checkpoint(self.out, self.module, self.optimizer, self.scheduler, self.state.to_dict())

    def _dev_value(self) -> float:
        if self.sel_key == "dev_accuracy":
            return _accuracy(self.model, self.dev_feats, self.eval_bs)
        return self.model.dev_metric(self.dev_feats, self.eval_bs)

    def evaluate_dev(self, epoch_float: float) -> bool:
        """Dev accuracy (dev loss for generating models); saves the best model; returns True when patience ran out."""
        cfg, state, sel_key = self.cfg, self.state, self.sel_key
        value = self._dev_value()
        self.module.train()
        # patience counts evaluations that do not beat the best value seen so far, whichever model is kept
        # (select=last keeps the latest one); checkpoints from before best_value was stored fall back to the kept model's
        reference = state.best_value if state.best_value is not None else (state.best or {}).get(sel_key)
        if reference is None:
            improved = True
        elif self.sel_mode == "max":
            improved = value > reference + cfg.min_delta
        else:
            improved = value < reference - cfg.min_delta
        if improved:
            state.best_value = value
            state.bad_evals = 0
        else:
            state.bad_evals += 1
        if improved or cfg.select == "last":
            state.best = {"step": state.step, "epoch": round(epoch_float, 4), sel_key: value}
            _save_best(self.model, self.out, self.figlang_meta("training"))
        state.last_eval_step = state.step
        self._report_eval(epoch_float, value, improved)
        return cfg.patience > 0 and state.bad_evals >= cfg.patience

    def _report_eval(self, epoch_float: float, value: float, improved: bool) -> None:
        """An evaluation's log row, progress line and loss curve."""
        state, sel_key, cfg = self.state, self.sel_key, self.cfg
        assert state.best is not None and self.progress is not None
        short = "accuracy" if sel_key == "dev_accuracy" else "loss"
        state.evals.append({"step": state.step, "epoch": round(epoch_float, 4), short: value})
        self.log.write(
            **{
                "event": "eval",
                "step": state.step,
                "epoch": round(epoch_float, 4),
                "split": "dev",
                short: value,
                "n": len(self.dev_feats),
                "best": state.best[sel_key],
                "improved": improved,
            }
        )
        if sel_key == "dev_accuracy":
            self.progress.message(
                f"[eval] step {state.step} epoch {epoch_float:.2f}: dev accuracy {100 * value:.2f}% "
                f"(best {100 * state.best['dev_accuracy']:.2f}% at step {state.best['step']})"
            )
        else:
            self.progress.message(
                f"[eval] step {state.step} epoch {epoch_float:.2f}: dev loss {value:.4f} "
                f"(best {state.best[sel_key]:.4f} at step {state.best['step']})"
            )
        plot_loss_curve(self.out / LOG_FILE, self.out / PLOT_FILE, f"{cfg.task} · {cfg.method} · {cfg.model}")

    def _open_progress(self) -> _TrainProgress:
        cfg, state = self.cfg, self.state
        progress = _TrainProgress(cfg.progress, self.total_steps, state.step, f"{cfg.method} {cfg.task}")
        if cfg.bf16 and bf16_is_emulated(cfg.device):
            progress.message(
                "[warn] --bf16 on a CPU without AVX512-BF16/AMX: torch emulates bfloat16 here, which is several "
                "times slower than float32; drop --bf16 (or pass --fp32) unless you need bf16 numerics"
            )
        if getattr(self.module, "frozen", False) and len(self.module.features) < len(self.train_feats):
            progress.message(
                "[probe] the base is frozen: the first epoch encodes every training sequence once and keeps its "
                "features; later epochs train the head alone in seconds (the ETA shown is that of the first epoch)"
            )
            progress.encode_until = state.step + len(self.plan(state.epoch)) - state.group
        return progress

    def _group_loss(self, group: list[list[int]], n_group: int) -> float:
        """Forward and backward over one optimizer step's micro-batches; the group's loss."""
        model, feats = self.model, self.train_feats
        self.optimizer.zero_grad(set_to_none=True)
        group_loss = 0.0
        # the group's loss is the mean over its units (items; target tokens for a generating model's
        # token-mean loss), whatever the split into micro-batches: each micro-batch adds its summed loss / the group's units
        n_targets = sum(model.target_tokens(feats[i]) for b in group for i in b) if self.token_mean else 0
        for micro in group:
            batch = model.collate([feats[i] for i in micro])
            if self.token_mean:
                loss = model.token_losses(batch)[0] / max(1, n_targets)
            else:
                loss = model.loss(batch) * (len(micro) / n_group)
            loss.backward()
            group_loss += float(loss.detach())
        return group_loss

    def _update(self, group_loss: float) -> bool:
        """The optimizer step, skipped (and said) when the loss or the gradient is not finite; True when taken."""
        import torch

        cfg, state = self.cfg, self.state
        finite = math.isfinite(group_loss)
        if cfg.max_grad_norm:
            norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), cfg.max_grad_norm)
            finite = finite and bool(torch.isfinite(norm))
        if finite:
            self.optimizer.step()
            return True
        # one NaN/inf update would turn every weight into NaN: skip it, say so, keep the schedule
        self.optimizer.zero_grad(set_to_none=True)
        state.skipped_steps += 1
        self.log.write(event="skipped", step=state.step + 1, reason="non-finite loss or gradient", loss=group_loss)
        assert self.progress is not None
        self.progress.message(
            f"[warn] step {state.step + 1}: non-finite loss or gradient; update skipped "
            f"({state.skipped_steps} so far). Lower --lr, or train in fp32 (--fp32), if this repeats."
        )
        return False

    def _log_step(self, group_loss: float, n_group: int, plan_size: int) -> float:
        """The step's log row (every log_every steps and at the epoch's end) and progress line; the epoch as a float."""
        state = self.state
        epoch_float = state.epoch + state.group / plan_size
        logged = state.step % self.cfg.log_every == 0 or state.group == plan_size
        lr_now = self.scheduler.get_last_lr()[0]
        if logged:
            mean_loss = sum(self.running) / len(self.running) if self.running else float("nan")
            self.log.write(
                event="train",
                step=state.step,
                epoch=round(epoch_float, 4),
                loss=mean_loss,
                lr=lr_now,
                items=n_group,
                elapsed_s=round(time.perf_counter() - self.started, 1),
            )
            shown = mean_loss
            self.running = []
        else:
            shown = group_loss
        assert self.progress is not None
        self.progress.update(state.step, f"loss {shown:.4f} lr {lr_now:.2e} ep {epoch_float:.2f}", logged)
        return epoch_float

    def step(self, plan: list[list[list[int]]]) -> tuple[str | None, bool]:
        """One optimizer step of the epoch's plan, then what is due (evaluation, checkpoint); (why to stop or None, epoch done)."""
        cfg, state = self.cfg, self.state
        group = plan[state.group]
        n_group = sum(len(b) for b in group)
        group_loss = self._group_loss(group, n_group)
        finite = self._update(group_loss)
        self.scheduler.step()
        state.step += 1
        state.group += 1
        if finite:
            self.running.append(group_loss)
        epoch_float = self._log_step(group_loss, n_group, len(plan))
        stop_reason: str | None = None
        epoch_done = state.group == len(plan)
        if epoch_done:
            state.epoch += 1
            state.group = 0
            if self.evaluate_dev(float(state.epoch)):
                stop_reason = "early-stopping"
            self.checkpoint()
        elif cfg.eval_every and state.step % cfg.eval_every == 0:
            stop = self.evaluate_dev(epoch_float)
            self.checkpoint()
            if stop:
                return "early-stopping", epoch_done
        elif state.step % cfg.save_every == 0:
            self.checkpoint()
        if stop_reason is None and cfg.max_steps and state.step >= cfg.max_steps:
            stop_reason = "max-steps"
        if stop_reason is None and cfg.max_minutes and (time.perf_counter() - self.started) / 60 >= cfg.max_minutes:
            stop_reason = "time-budget"
        return stop_reason, epoch_done

    def _epochs(self) -> str:
        """Steps until the run is done, stops early or runs out of steps or time; why it stopped."""
        state = self.state
        stop_reason = state.finished
        while stop_reason is None and state.epoch < self.cfg.epochs:
            plan = self.plan(state.epoch)
            while state.group < len(plan):
                stop_reason, epoch_done = self.step(plan)
                if stop_reason is not None or epoch_done:
                    break
            if stop_reason is None and state.epoch >= self.cfg.epochs:
                stop_reason = "complete"
        return stop_reason if stop_reason is not None else "complete"

    def _finish(self, stop_reason: str) -> None:
        state = self.state
        if stop_reason == "time-budget":
            if state.best is None:  # something to answer with until a rerun continues (no eval: the rerun stays identical)
                _save_best(self.model, self.out, self.figlang_meta("partial"))
        else:
            if state.last_eval_step != state.step:
                self.evaluate_dev(state.epoch + state.group / max(1, self.steps_per_epoch))
            state.finished = stop_reason
        self.checkpoint()

    def run(self) -> tuple[Any, TrainSummary]:
        """Train to the end (or resume to it); returns (best model loaded from out_dir, summary)."""
        if self.resumed:
            assert self.checkpoint_dir is not None
            self._resume(self.checkpoint_dir)
        else:
            self._start()
        self.progress = self._open_progress()
        self.module.train()
        self.running = list(self.state.running_losses or [])
        try:
            stop_reason = self._epochs()
            self._finish(stop_reason)
        finally:
            self.progress.close()
        cfg = self.cfg
        self.log.write(event="stop", step=self.state.step, reason=stop_reason, best=self.state.best)
        plot = plot_loss_curve(self.out / LOG_FILE, self.out / PLOT_FILE, f"{cfg.task} · {cfg.method} · {cfg.model}")
        best_model = load_trained(self.out, device=cfg.device)
        if getattr(best_model, "examples", 0):
            best_model.pool = self.model.pool  # the same pool the training prompts were retrieved from
        if getattr(self.module, "frozen", False) and getattr(getattr(best_model, "module", None), "frozen", False):
            best_model.module.features = self.module.features  # same fixed encoder: its features carry over to the report
        summary = TrainSummary(
            state=self.state,
            stopped=stop_reason,
            resumed=self.resumed,
            seconds=time.perf_counter() - self.started,
            plot=plot,
            figlang_meta=self.figlang_meta,
            steps_per_epoch=self.steps_per_epoch,
            total_steps=self.total_steps,
        )
        return best_model, summary


def run_training(
    cfg: TrainConfig, train_records: Sequence[Record], dev_records: Sequence[Record], **options: Any
) -> tuple[Any, TrainSummary]:
    """Train on records, select on dev; returns (best model loaded from out_dir, summary). Resumes from out_dir.
    ``options``: the :class:`Trainer`'s (``labels``, ``meta_extra``, ``restart``, ``pool``)."""
    return Trainer(cfg, train_records, dev_records, **options).run()
