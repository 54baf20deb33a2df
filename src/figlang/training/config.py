"""A training run's configuration (:class:`TrainConfig`, built and checked by :func:`make_config`) and its result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.paths import resolve_data_dir
from figlang.core import devices
from figlang.methods.trained import KNOWLEDGE, parse_threshold_objective, TRAINED_METHODS, check_method
from figlang.training.presets import default_preset, get_preset


# configuration keys that do not change what is trained (may differ when resuming)
RUNTIME_KEYS = {
    "out_dir",
    "data_dir",
    "threads",
    "progress",
    "save_every",
    "log_every",
    "eval_batch_size",
    "report_splits",
    "report_limit",
    "max_minutes",
    "restart",
    "preset",
    "device",
    "select_on_eval_split",
    "chosen_on",
}


INFERENCE_SAMPLING = ("all", "one-per-epoch")
BALANCE_KEYS = ("none", "label", "pair-type")


@dataclass
class TrainConfig:
    task: str
    method: str
    model: str
    out_dir: str
    preset: str | None = None
    data_dir: str | None = None
    # data
    train_split: str | None = None  # default: train-fit where the task has it, else train / all
    dev_split: str | None = None  # default: selection where the task has it, else 'carve'
    report_splits: tuple[str, ...] | None = None  # default: dev-disjoint + the official dev/val (never the dev split)
    select_on_eval_split: bool = False  # allow early stopping on a split that is also reported (recorded)
    chosen_on: dict[str, str] | None = None  # other choices made by hand and the split they were made on: {"layer": "selection"}
    carve_fraction: float = 0.1  # dev_split='carve': this share of train, disjoint by carve_key
    carve_key: str = "auto"  # expression | premise | id | auto (expression, else premise)
    limit: int | None = None  # train on a seeded random subset of this many records
    # balancing (NLI: IMPLI's entailments are 70% of its pairs): none | label | pair-type
    sample_balance: str = "none"  # the limit's subset draws an equal share of each gold label / pair type (as far as each has)
    loss_weights: str = "none"  # NLI classifiers: each record's loss weighted by 1 / its label's (pair type's) frequency, mean 1
    threshold: str = "none"  # two-label NLI classifiers: none (argmax) | balanced-accuracy | accuracy | macro-f1, chosen on the dev split
    dev_limit: int | None = None
    report_limit: int | None = None
    # optimisation
    epochs: int = 2
    lr: float = 3e-5
    batch_size: int = 16
    grad_accum: int = 1
    max_length: int = 160
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    dropout: float = 0.1
    seed: int = 0
    max_steps: int | None = None  # stop after this many optimizer steps (counts as the end of training)
    max_minutes: float | None = None  # stop after this wall time; a rerun continues
    # evaluation / early stopping / checkpoints
    eval_every: int = 0  # optimizer steps between dev evaluations (0: once per epoch)
    patience: int = 2  # evaluations without improvement (on the best dev value seen so far) before stopping
    min_delta: float = 0.0
    # best: keep the model of the best dev value; last: keep the latest evaluated model (early stopping still
    # counts evaluations that do not beat the best value seen, so patience applies with either)
    select: str = "best"
    save_every: int = 100  # optimizer steps between resumable checkpoints
    log_every: int = 10
    eval_batch_size: int | None = None
    # model
    max_inferences: int = 12
    # knowledge generators: "all" trains on every (inference, narrative) pair each epoch, as the paper; "one-per-epoch"
    # on one inference per narrative and target, drawn anew each epoch (seeded): the narrative is seen once an epoch,
    # not 12 times, which memorises its continuation in well under an epoch
    inference_sampling: str = "all"
    max_target_length: int = 64  # generating methods: tokens of the target (continuation / label + explanation)
    examples: int = 0  # iro: K retrieved solved train pairs shown before each instruction (methods/trained/iro_examples.py)
    freeze_base: bool = False  # multiple-choice scorers: train the head alone on the fixed base (a linear probe; features cached)
    base_layers: int | None = None  # with freeze_base: read the base's first N layers (a decoder's middle layers probe best)
    lora_rank: int | None = None  # NLI classifiers: train LoRA adapters of this rank and the head on the fixed base (trained/lora.py)
    lora_alpha: float | None = None  # LoRA scaling numerator (default 2 × rank)
    bf16: bool = False
    device: str = "cpu"  # cpu | cuda | cuda:N | auto (weights and batches go there; the data order and seeds do not change)
    threads: int | None = 2
    progress: bool = True

    @property
    def ctx(self) -> RunContext:
        """The training run's context: its data folder (resolved once, by make_config), seed, device and threads."""
        return RunContext.create(self.data_dir, seed=self.seed, device=self.device, threads=self.threads)

    @property
    def eval_batch(self) -> int:
        """The batch size that scores (dev evaluations, the decision threshold, reports): eval_batch_size, else the
        training batch size, at least 8."""
        return self.eval_batch_size or max(self.batch_size, 8)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["report_splits"] = list(self.report_splits) if self.report_splits is not None else None
        return d

    def training_fingerprint(self) -> dict[str, Any]:
        return {k: v for k, v in self.to_dict().items() if k not in RUNTIME_KEYS}


def selects_on(model: Any) -> tuple[str, str]:
    """What a trained model is chosen on, (metric, max | min): dev accuracy, unless the model says otherwise (the
    generating models: their dev loss, lowest)."""
    return getattr(model, "selects_on", ("dev_accuracy", "max"))


@dataclass
class TrainResult:
    out_dir: Path
    method: str
    best_step: int | None
    best_epoch: float | None
    best_dev_accuracy: float | None
    metrics: dict[str, Any]  # split -> harness metrics of the best model
    steps: int
    stopped: str  # complete | early-stopping | max-steps | time-budget
    resumed: bool
    seconds: float
    log_path: Path
    plot_path: Path | None
    extra: dict[str, Any] = field(default_factory=dict)
    best_dev_loss: float | None = None  # generating models select on dev loss
    provenance: dict[str, Any] | None = None  # code, split fingerprints (train, selection, reported), selection_split

    def accuracy(self, split: str) -> float | None:
        m = self.metrics.get(split) or {}
        return (m.get("accuracy") or {}).get("accuracy")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["out_dir"], d["log_path"], d["plot_path"] = str(self.out_dir), str(self.log_path), str(self.plot_path) if self.plot_path else None
        return d


# --- configuration ---------------------------------------------------------------------------------


def context_options(ctx: RunContext | None, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with what the run context ``ctx`` names: its data folder, and its seed, device and threads where
    ``options`` gives none of its own. A context and a ``data_dir`` together are refused: the run would read two folders."""
    if ctx is None:
        return options
    if options.get("data_dir") is not None:
        raise FiglangError("give either ctx= or data_dir=, not both: the run context already names its data folder")
    named = {"seed": ctx.seed, "device": ctx.device, "threads": ctx.threads}
    given = {k: v for k, v in options.items() if v is not None}
    return {**{k: v for k, v in named.items() if v is not None}, **given, "data_dir": str(ctx.data_dir)}


def make_config(task: str, method: str, model: str, out_dir: str | Path, *, ctx: RunContext | None = None, **options: Any) -> TrainConfig:
    """Preset (given or the method's default) < explicit options. Unknown options are an error.

    ``ctx`` (the run's context, built where the run starts) names the data folder, and the seed, device and threads
    unless ``options`` gives them; without it the data folder is resolved here from ``data_dir``."""
    check_method(method)
    options = context_options(ctx, options)
    names = {f.name for f in fields(TrainConfig)}
    unknown = sorted(k for k in options if k not in names)
    if unknown:
        raise FiglangError(
            f"unknown training option(s): {', '.join(unknown)}; known: {', '.join(sorted(names - {'task', 'method', 'model', 'out_dir'}))}"
        )
    preset = options.get("preset") or default_preset(method)
    values: dict[str, Any] = dict(get_preset(preset))
    values.update({k: v for k, v in options.items() if v is not None})
    if values.get("limit") == 0:  # `--limit all`: every record, whatever the preset's limit
        values["limit"] = None
    values["preset"] = preset
    if values.get("bf16") and options.get("bf16") is None and devices.bf16_is_slow(values.get("device", "cpu")):
        # a preset's bf16 pays only with AMX or AMD's AVX512-BF16: emulated it is several times slower, Intel's AVX512-BF16 alone slower
        values["bf16"] = False
    if values.get("report_splits") is not None:
        values["report_splits"] = tuple(values["report_splits"])

    values["data_dir"] = str(resolve_data_dir(values.get("data_dir")))  # once: loading, checksums and reports share it
    cfg = TrainConfig(task=str(task), method=method, model=str(model), out_dir=str(out_dir), **values)
    for name in ("epochs", "batch_size", "grad_accum", "max_length", "save_every", "log_every"):
        if getattr(cfg, name) < 1:
            raise FiglangError(f"{name} must be at least 1, got {getattr(cfg, name)}")
    if cfg.select not in ("best", "last"):
        raise FiglangError(f"select must be 'best' or 'last', got {cfg.select!r}")
    if cfg.lr <= 0:
        raise FiglangError(f"lr must be positive, got {cfg.lr}")
    if cfg.inference_sampling not in INFERENCE_SAMPLING:
        raise FiglangError(f"inference_sampling must be one of {', '.join(INFERENCE_SAMPLING)}, got {cfg.inference_sampling!r}")
    if cfg.inference_sampling != "all" and not (cfg.method in KNOWLEDGE and TRAINED_METHODS[cfg.method][1] == "generator"):
        raise FiglangError(
            f"inference_sampling={cfg.inference_sampling!r} draws among a knowledge generator's per-inference "
            f"sequences (generator-context, generator-literal); {cfg.method!r} has none to draw from"
        )
    if cfg.examples < 0 or (cfg.examples and cfg.method != "iro"):
        raise FiglangError(f"examples shows K >= 0 retrieved solved pairs to an iro model (figlang train -m iro), not to {cfg.method!r}")
    if cfg.freeze_base and TRAINED_METHODS[cfg.method][1] != "choice-scorer":
        raise FiglangError(f"freeze_base trains a multiple-choice head on a fixed base (mc, mc-continuation, …), not {cfg.method!r}")
    for name in ("sample_balance", "loss_weights"):
        if getattr(cfg, name) not in BALANCE_KEYS:
            raise FiglangError(f"{name} must be one of {', '.join(BALANCE_KEYS)}, got {getattr(cfg, name)!r}")
    if cfg.threshold != "none":
        parse_threshold_objective(cfg.threshold)  # a clear error for an unknown objective or a floor outside (0, 1)
    classifier = TRAINED_METHODS[cfg.method][1] == "sequence-classifier"
    if cfg.loss_weights != "none" and not classifier:
        raise FiglangError(
            f"loss_weights weights an NLI classifier's loss (nli, nli-rationale), not {cfg.method!r}; "
            "sample_balance draws a balanced --limit subset for any method"
        )
    if cfg.threshold != "none" and not classifier:
        raise FiglangError(f"threshold chooses the decision of a two-label NLI classifier (nli, nli-rationale), not {cfg.method!r}")
    if cfg.sample_balance != "none" and cfg.limit is None:
        raise FiglangError(
            "sample_balance draws a balanced subset of --limit records; give --limit N (or weight the loss "
            "with --loss-weights to keep every record)"
        )
    if cfg.base_layers is not None and not cfg.freeze_base:
        raise FiglangError("base_layers cuts the frozen base of a probe; use it with freeze_base (--freeze-base or --preset cpu-probe)")
    if cfg.lora_rank is not None and not classifier:
        raise FiglangError(f"lora_rank trains LoRA adapters of an NLI classifier (nli, nli-rationale), not {cfg.method!r}")
    return cfg
