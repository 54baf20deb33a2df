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
  and ``eval/<split>/`` (the harness's predictions and results for every reported split).

Determinism: seeds for torch, random and numpy; the data order of epoch e is a function of
(seed, e) alone (shuffled, then length-bucketed to save padding); dropout draws from torch's
generator, whose state is checkpointed.

Generating methods (``iro``, ``generator``, ``generator-context``, ``generator-literal``;
:mod:`figlang.models.trained.generator`) train a causal or seq2seq LM with the LM loss on the target
only and select on the dev loss (lower is better; ``best.dev_loss`` in figlang.json); their report
splits are scored by decoding through the harness (FLUTE accuracy with explanations; ROUGE-L/BLEU).

Model selection uses a split the report never scores: ``selection`` of the narrative tasks (carved from
train-disjoint by expression, training on ``train-fit``), else a slice carved from train; the reported
splits are dev-disjoint and the official dev/val. Selecting on a split that is also reported is refused
unless ``select_on_eval_split`` says so, and is then recorded (``provenance.selection_split`` in
figlang.json, train_result.json and every results.json).
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from ...data.errors import FiglangError
from ...data.hygiene import label_conflicts
from ...data.io import atomic_write, file_lock, parse_jsonl
from ...data.context import RunContext
from ...data.paths import resolve_data_dir
from ...data.records import Record, expression_of
from ...data.registry import get_task
from ...data.splits import expression_disjoint_split, expression_folds, figurative_links, linked_key, narrative_links
from ...evaluation import build_results, evaluate, evaluate_records, write_run
from ...evaluation.predictions import read_predictions
from ...evaluation.runs import predictions_file
from ...evaluation.provenance import code_provenance, data_checksums, library_versions, portable_path, provenance, split_fingerprint
from ...evaluation.scoring import MetricOptions, score
from ..devices import bf16_is_emulated
from ..loading import resolve
from ..revision import directory_revision
from ..trained import (
    FIGLANG_JSON,
    FORMAT_VERSION,
    KNOWLEDGE,
    parse_threshold_objective,
    TRAINED_METHODS,
    check_method,
    is_trained_dir,
    load_trained,
    read_figlang_json,
    resolve_device,
)
from ..trained.methods import TrainedMethod
from .presets import default_preset, get_preset
from ...evaluation.provenance import records_digest  # noqa: F401  (re-exported: figlang.json's data provenance)

CHECKPOINT = "checkpoint"
LOG_FILE = "train_log.jsonl"
PLOT_FILE = "loss_curve.png"

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
    freeze_base: bool = False  # multiple-choice scorers: train the head alone on the fixed base (a linear probe; features cached)
    base_layers: int | None = None  # with freeze_base: read the base's first N layers (a decoder's middle layers probe best)
    bf16: bool = False
    device: str = "cpu"  # cpu | cuda | cuda:N | auto (weights and batches go there; the data order and seeds do not change)
    threads: int | None = 2
    progress: bool = True

    @property
    def ctx(self) -> RunContext:
        """The training run's context: its data folder (resolved once, by make_config), seed, device and threads."""
        return RunContext.create(self.data_dir, seed=self.seed, device=self.device, threads=self.threads)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["report_splits"] = list(self.report_splits) if self.report_splits is not None else None
        return d

    def training_fingerprint(self) -> dict[str, Any]:
        return {k: v for k, v in self.to_dict().items() if k not in RUNTIME_KEYS}


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


def make_config(task: str, method: str, model: str, out_dir: str | Path, **options: Any) -> TrainConfig:
    """Preset (given or the method's default) < explicit options. Unknown options are an error."""
    check_method(method)
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
    if values.get("bf16") and options.get("bf16") is None and bf16_is_emulated(values.get("device", "cpu")):
        values["bf16"] = False  # a preset's bf16 assumes AVX512-BF16/AMX; emulated bf16 would be several times slower
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
    return cfg


# --- determinism -----------------------------------------------------------------------------------------


def set_seeds(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def rng_state() -> dict[str, Any]:
    import numpy as np
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # dropout on a GPU draws from its own generator
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    import numpy as np
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seeded_subset(records: Sequence[Record], n: int | None, seed: int) -> list[Record]:
    """A seeded random subset of ``n`` records, in their original order (None or n ≥ len: all)."""
    if n is None or n >= len(records):
        return list(records)
    keep = set(random.Random(seed).sample(range(len(records)), n))
    return [r for i, r in enumerate(records) if i in keep]


INFERENCE_SAMPLING = ("all", "one-per-epoch")
BALANCE_KEYS = ("none", "label", "pair-type")


def balance_key(by: str) -> Callable[[Record], str]:
    """The group a record is balanced within: its gold label, or its pair type (IMPLI: fig_context, lit_context …)."""
    attribute = {"label": "label", "pair-type": "pair_type"}.get(by)
    if attribute is None:
        raise FiglangError(f"balance by one of {', '.join(BALANCE_KEYS[1:])}, got {by!r}")

    def key(record: Record) -> str:
        value = getattr(record, attribute, None)
        if value is None:
            raise FiglangError(
                f"record {record.id!r} has no {attribute.replace('_', ' ')} to balance by ({by}); "
                "balance by label, or train on records that have one (IMPLI has pair types)"
            )
        return str(value)

    return key


def balanced_subset(records: Sequence[Record], n: int | None, seed: int, by: str = "none") -> list[Record]:
    """A seeded subset of ``n`` records, in their original order. ``by`` (label, pair-type) draws an equal share of
    each group, a group with fewer records giving all of them and the rest spread over the others; none: uniform."""
    if by == "none":
        return seeded_subset(records, n, seed)
    key = balance_key(by)
    if n is None or n >= len(records):
        for r in records:  # still a clear error for records without the key
            key(r)
        return list(records)
    members: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        members.setdefault(key(r), []).append(i)
    quota: dict[str, int] = {}
    left, open_groups = n, sorted(members, key=lambda g: (len(members[g]), g))
    while open_groups:  # water-filling: the smallest groups first
        share = left // len(open_groups)
        g = open_groups[0]
        if len(members[g]) <= share:
            quota[g] = len(members[g])
            left -= quota[g]
            open_groups.pop(0)
            continue
        extra = left - share * len(open_groups)  # the remainder goes one each to the largest groups
        for j, g in enumerate(open_groups):
            quota[g] = share + (1 if j >= len(open_groups) - extra else 0)
        break
    rng = random.Random(seed)
    keep: set[int] = set()
    for g in sorted(members):
        keep.update(rng.sample(members[g], quota[g]))
    return [r for i, r in enumerate(records) if i in keep]


def group_weights(records: Sequence[Record], by: str) -> dict[str, float]:
    """Per-record loss weights (by id), 1 / the frequency of the record's group, scaled to mean 1 over the records."""
    key = balance_key(by)
    groups = [key(r) for r in records]
    counts: dict[str, int] = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    return {r.id: len(records) / (len(counts) * counts[g]) for r, g in zip(records, groups)}


def mix(records: Sequence[Record], attribute: str = "label") -> dict[str, int]:
    """How many records have each value of ``attribute`` (the label mix of a training set)."""
    out: dict[str, int] = {}
    for r in records:
        value = str(getattr(r, attribute, None))
        out[value] = out.get(value, 0) + 1
    return dict(sorted(out.items()))


def epoch_plan(
    lengths: Sequence[int],
    batch_size: int,
    grad_accum: int,
    seed: int,
    epoch: int,
    bucket: int = 32,
    groups: Sequence[Hashable] | None = None,
) -> list[list[list[int]]]:
    """The optimizer steps of one epoch: lists of micro-batches of feature indexes.

    Shuffled by (seed, epoch); within windows of ``bucket`` batches sorted by length (less
    padding), then the batches shuffled again. ``groups`` (one key per feature) keeps one feature
    of each group, drawn by (seed, epoch). A pure function: resuming recomputes it.
    """
    rng = random.Random(seed * 1_000_003 + epoch)
    if groups is None:
        order = list(range(len(lengths)))
    else:
        members: dict[Hashable, list[int]] = {}
        for i, g in enumerate(groups):
            members.setdefault(g, []).append(i)
        order = [rng.choice(m) for m in members.values()]
    rng.shuffle(order)
    window = batch_size * bucket
    batches: list[list[int]] = []
    for start in range(0, len(order), window):
        part = sorted(order[start : start + window], key=lambda i: lengths[i])
        batches += [part[j : j + batch_size] for j in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return [batches[g : g + grad_accum] for g in range(0, len(batches), grad_accum)]


# --- data --------------------------------------------------------------------------------------------------


def carve_key_fn(key: str, records: Sequence[Record]) -> Callable[[Record], str]:
    """Group key for carving a dev split: records of one group never straddle train and dev."""
    if key == "auto":
        key = "expression" if any(expression_of(r) for r in records) else "premise"
    if key == "expression":
        # records sharing a normalised expression or a premise are one group (IMPLI names no idioms:
        # its derived spans differ between pairs of one premise); records with neither stand alone

        return linked_key(records, figurative_links)
    if key == "premise":
        return lambda r: " ".join(str(getattr(r, "premise", r.id)).lower().split())
    if key == "id":
        return lambda r: r.id
    raise FiglangError(f"carve_key must be expression, premise, id or auto; got {key!r}")


def default_splits(task: Any, cfg: TrainConfig) -> tuple[str, str, tuple[str, ...]]:
    """(train split, dev split, report splits) for a task."""
    splits = set(task.splits)
    if cfg.train_split:
        train_split = cfg.train_split
    elif "train-fit" in splits:
        train_split = "train-fit"
    elif "train-disjoint" in splits:
        train_split = "train-disjoint"
    elif "train" in splits:
        train_split = "train"
    else:
        train_split = task.default_split
    if cfg.dev_split:
        dev_split = cfg.dev_split
    elif "selection" in splits and train_split == "train-fit":
        dev_split = "selection"
    elif "dev-disjoint" in splits and train_split == "train-disjoint":
        dev_split = "dev-disjoint"
    else:
        dev_split = "carve"
    if cfg.report_splits is not None:
        report = tuple(cfg.report_splits)
    else:
        # dev-disjoint only beside a train split carved from the same train (it shares expressions with the full train)
        unseen = ("dev-disjoint",) if train_split in ("train-fit", "train-disjoint") else ()
        report = tuple(s for s in (*unseen, "dev", "val") if s in splits and s not in (train_split, dev_split))
        if not report:  # nothing else to report (a task with one split): the carved dev, which needs the explicit flag
            report = (dev_split,)
    for s in (train_split, *(x for x in (dev_split, *report) if x != "carve")):
        task.check_split(s)
    if dev_split in report and not cfg.select_on_eval_split:
        shown = "the carved dev ('carve')" if dev_split == "carve" else repr(dev_split)
        raise FiglangError(
            f"{shown} would both choose the model (early stopping, the kept checkpoint) and be reported: the figure would "
            "be chosen on the items it reports. Report other splits (--report-split dev-disjoint), select on another "
            "(--dev-split selection), or pass --select-on-eval-split to do it anyway (recorded in figlang.json and "
            "every results.json as provenance.selection_split)"
        )
    return train_split, dev_split, report


# --- model construction ----------------------------------------------------------------------------------


def resolve_base(reference: str) -> dict[str, Any]:
    """Where a base-model reference points (catalog name, path, hub id) and its identity, via the resolver."""
    path = Path(reference).expanduser()
    if path.is_dir() and is_trained_dir(path):
        meta = read_figlang_json(path)
        return {
            "reference": reference,
            "source": "figlang-trained",
            "path": str(path.resolve()),
            "init_from_method": meta["method"],
            "base_model": meta.get("base_model"),
            "revision": _dir_revision(path),
        }
    r = resolve(reference)
    return {
        "reference": reference,
        "source": r.source,
        "path": r.path,
        "name": r.name,
        "revision": r.revision,
        "hub_id": (r.details or {}).get("hub_id") or (r.path if r.source == "hub" else None),
    }


def _dir_revision(path: Path) -> str | None:
    try:
        return directory_revision(path)
    except Exception:  # pragma: no cover - best effort
        return None


def build_model(cfg: TrainConfig, base: dict[str, Any], labels: Sequence[str]):
    """A fresh trainable model for ``cfg.method`` from the base (or a figlang-trained directory)."""
    shape, model_class = TRAINED_METHODS[cfg.method]
    if model_class == "generator":
        from ..trained.generator import GeneratorModel, add_separators

        opts = {
            "max_length": cfg.max_length,
            "max_target_length": cfg.max_target_length,
            "max_inferences": cfg.max_inferences,
            "bf16": cfg.bf16,
        }
        if base["source"] == "figlang-trained":
            init = read_figlang_json(base["path"])
            if TRAINED_METHODS[init["method"]][1] != "generator":
                raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
            model = GeneratorModel.load(base["path"], **opts)
            if model.knowledge is None and KNOWLEDGE.get(cfg.method):
                add_separators(model.module, model.tokenizer)
            return GeneratorModel(model.module, model.tokenizer, cfg.method, **opts)
        return GeneratorModel.from_base(base["path"], cfg.method, **opts)
    if model_class == "choice-scorer":
        from ..trained.multiple_choice import ChoiceScorerModel

        opts = {"max_length": cfg.max_length, "max_inferences": cfg.max_inferences, "bf16": cfg.bf16}
        if base["source"] == "figlang-trained":
            init = read_figlang_json(base["path"])
            if TRAINED_METHODS[init["method"]][1] != "choice-scorer":
                raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
            model = ChoiceScorerModel.load(base["path"], **opts)
            module = model.module
            if cfg.freeze_base and not module.frozen:  # probe a trained encoder: keep its head, fix the rest
                from ..trained.multiple_choice import ChoiceScorer, keep_first_layers

                if cfg.base_layers:
                    keep_first_layers(module.encoder, cfg.base_layers)
                frozen = ChoiceScorer(module.encoder, cfg.dropout, module.pooling, frozen=True)
                frozen.head.load_state_dict(module.head.state_dict())
                module = frozen
            model = ChoiceScorerModel(module, model.tokenizer, cfg.method, **opts)
            model.module.dropout.p = cfg.dropout
            return model
        return ChoiceScorerModel.from_base(
            base["path"], cfg.method, dropout=cfg.dropout, frozen=cfg.freeze_base, base_layers=cfg.base_layers, **opts
        )
    from ..trained.nli_classifier import NLIClassifierModel

    opts = {"max_length": cfg.max_length, "bf16": cfg.bf16}
    if base["source"] == "figlang-trained":
        init = read_figlang_json(base["path"])
        if TRAINED_METHODS[init["method"]][1] != "sequence-classifier":
            raise FiglangError(f"cannot start a {cfg.method} model from a {init['method']} model at {base['path']}")
        if list(init["labels"]) != list(labels):
            raise FiglangError(f"the model at {base['path']} has labels {init['labels']}, the task {list(labels)}")
        model = NLIClassifierModel.load(base["path"], **opts)
        return NLIClassifierModel(model.module, model.tokenizer, cfg.method, labels, **opts)
    return NLIClassifierModel.from_base(base["path"], cfg.method, labels, **opts)


# --- files ---------------------------------------------------------------------------------------------------


def _strict_json(obj: Any) -> str:
    """The files people and other tools read (figlang.json, train_result.json) are strict JSON: a NaN dev loss is
    null plus ``<key>_nonfinite``. state.json is figlang's own and keeps NaN, so a resumed run compares as before."""
    return json.dumps(_finite_json(obj), indent=2, ensure_ascii=False, default=str, allow_nan=False)


def _atomic_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(_strict_json(obj), encoding="utf-8")
    os.replace(tmp, path)


def _save_best(model: Any, out: Path, meta: dict[str, Any]) -> None:
    """Write the model into ``out`` (files swapped in one by one, figlang.json last)."""
    tmp = out / ".best.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(tmp)
    (tmp / FIGLANG_JSON).write_text(_strict_json(meta), encoding="utf-8")
    names = sorted(p.name for p in tmp.iterdir())
    for name in [n for n in names if n != FIGLANG_JSON] + [FIGLANG_JSON]:
        os.replace(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)


def _save_checkpoint(out: Path, module: Any, optimizer: Any, scheduler: Any, state: dict[str, Any]) -> None:
    import torch

    tmp = out / f"{CHECKPOINT}.tmp"
    final = out / CHECKPOINT
    old = out / f"{CHECKPOINT}.old"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    torch.save(module.trainable_state_dict() if hasattr(module, "trainable_state_dict") else module.state_dict(), tmp / "model.pt")
    if getattr(module, "frozen", False) and module.features:  # the fixed encoder's features: a resumed run need not recompute them
        torch.save(module.features, tmp / "features.pt")
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "rng": rng_state()}, tmp / "trainer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=2, default=str), encoding="utf-8")
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def _check_resume_data(out: Path, saved: dict[str, Any] | None, now: dict[str, Any]) -> None:
    """Refuse to resume a run on other train/dev records than those it was started on (checkpoints that stored none pass)."""
    if not saved:
        return
    changed = []
    for part in ("train", "dev"):
        key = f"{part}_records_sha256"
        if saved.get(key) is not None and saved.get(key) != now[key]:
            changed.append(
                f"{part} records: {saved.get(f'{part}_items')} with sha256 {str(saved[key])[:12]}… → "
                f"{now[f'{part}_items']} with sha256 {now[key][:12]}…"
            )
    if changed:
        raise FiglangError(
            f"{out} holds a training run on other data ({'; '.join(changed)}): the dataset files, --data-dir, the split or the "
            "record selection changed since it started; resume it on the same data, use a new --out, or pass --restart to start over"
        )


def _find_checkpoint(out: Path) -> Path | None:
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):
        p = out / name
        if (p / "state.json").is_file() and (p / "model.pt").is_file() and (p / "trainer.pt").is_file():
            return p
    return None


def _finite_json(value: Any) -> Any:
    """``value`` with every NaN/±Infinity float replaced by None (strict JSON has no such numbers); a dict that held
    one says which in ``<key>_nonfinite`` ("nan", "inf", "-inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            out[k] = _finite_json(v)
            if isinstance(v, float) and not math.isfinite(v):
                out[f"{k}_nonfinite"] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return out
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    return value


class TrainLog:
    """train_log.jsonl: appended line by line; on resume, lines past the checkpoint are dropped. Strict JSON: a
    non-finite number (a NaN loss) is written as null, with ``<key>_nonfinite`` saying what it was."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def truncate_after(self, step: int) -> None:
        if not self.path.exists():
            return
        text = self.path.read_text(encoding="utf-8")
        lines = text.split("\n")
        keep = [
            lines[number - 1]
            for number, row, _ in parse_jsonl(text)  # a line cut by a kill is no row
            if row is not None and (row.get("step", 0) <= step or row.get("event") in ("start",))
        ]
        self.path.write_text("".join(k + "\n" for k in keep), encoding="utf-8")

    def write(self, **row: Any) -> None:
        row = _finite_json({"time": datetime.now(UTC).isoformat(timespec="seconds"), **row})
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, default=str, allow_nan=False) + "\n")

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [row for _, row, _ in parse_jsonl(self.path.read_text(encoding="utf-8")) if row is not None]


def plot_loss_curve(log_path: Path, out_path: Path, title: str = "") -> Path | None:
    """Training loss per logged step and dev accuracy per evaluation, as a PNG."""
    rows = TrainLog(log_path).rows()
    train = [r for r in rows if r.get("event") == "train"]
    evals = [r for r in rows if r.get("event") == "eval"]  # dev accuracy (classifiers) or dev loss (generating models)
    if not train and not evals:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if train:
        ax.plot(
            [r["step"] for r in train],
            [math.nan if r.get("loss") is None else r["loss"] for r in train],
            color="tab:blue",
            lw=1.2,
            label="train loss",
        )
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy loss", color="tab:blue")
    loss_evals = [r for r in evals if "loss" in r and "accuracy" not in r]
    evals = [r for r in evals if "accuracy" in r]
    if loss_evals:
        ax.plot(
            [r["step"] for r in loss_evals],
            [math.nan if r["loss"] is None else r["loss"] for r in loss_evals],
            "o-",
            color="tab:red",
            lw=1.2,
            label="dev loss",
        )
        ax.legend(fontsize=8)
    if evals:
        ax2 = ax.twinx()
        ax2.plot(
            [r["step"] for r in evals],
            [math.nan if r["accuracy"] is None else 100 * r["accuracy"] for r in evals],
            "o-",
            color="tab:red",
            lw=1.2,
            label="dev accuracy",
        )
        ax2.set_ylabel("dev accuracy (%)", color="tab:red")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, out_path)
    return out_path


# --- the loop -----------------------------------------------------------------------------------------------------


class _TrainProgress:
    """rich progress (loss, lr, ETA) on a terminal; plain lines every log step otherwise."""

    def __init__(self, enabled: bool, total: int, done: int, title: str) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.total, self.title = total, title
        self.t0 = self.start = time.perf_counter()
        self.start_done = done
        self.encode_until: int | None = None  # a probe's first epoch (encoding the base) ends at this step
        self.bar = None
        if enabled and self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self.bar.start()
            self.job = self.bar.add_task(title, total=total, completed=done, info="")

    def eta(self, done: int) -> float | None:
        """Seconds left: to the end of a probe's encoding epoch while it lasts (later epochs cost only the head,
        so the encoding pace says nothing about them), else to the end of training."""
        rate = (done - self.start_done) / max(time.perf_counter() - self.start, 1e-9)
        end = self.encode_until if self.encoding(done) else self.total
        return (end - done) / rate if rate > 0 else None

    def encoding(self, done: int) -> bool:
        return self.encode_until is not None and done < self.encode_until

    def update(self, done: int, info: str, log_line: bool) -> None:
        if not self.enabled:
            return
        if self.encode_until is not None and done >= self.encode_until:  # encoding over: measure the head-only pace afresh
            self.encode_until, self.start, self.start_done = None, time.perf_counter(), done
        if self.bar is not None:
            extra = f" encoding, epoch 1 ends in ~{self._eta_text(done)}" if self.encoding(done) else ""
            self.bar.update(self.job, completed=done, info=info + extra)
        elif log_line:
            label = "ETA of epoch 1 (encoding)" if self.encoding(done) else "ETA"
            print(
                f"[{self.title}] step {done}/{self.total} {info} elapsed {(time.perf_counter() - self.t0) / 60:.1f} min {label} "
                f"{self._eta_text(done)}",
                file=sys.stderr,
                flush=True,
            )

    def _eta_text(self, done: int) -> str:
        eta = self.eta(done)
        return f"{eta / 60:.1f} min" if eta is not None else "?"

    def message(self, text: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.console.print(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


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


def run_training(
    cfg: TrainConfig,
    train_records: Sequence[Record],
    dev_records: Sequence[Record],
    *,
    labels: Sequence[str] = (),
    meta_extra: dict[str, Any] | None = None,
    restart: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """Train on records, select on dev; returns (best model loaded from out_dir, summary). Resumes from out_dir."""
    import torch

    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(int(cfg.threads))
    log = TrainLog(out / LOG_FILE)
    started = time.perf_counter()
    ckpt = _find_checkpoint(out)
    if restart and ckpt is not None:
        for name in (CHECKPOINT, f"{CHECKPOINT}.old", LOG_FILE):
            p = out / name
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        ckpt = None
    state: dict[str, Any] | None = None
    data_now = {
        "train_records_sha256": records_digest(train_records),
        "dev_records_sha256": records_digest(dev_records),
        "train_items": len(train_records),
        "dev_items": len(dev_records),
    }
    if ckpt is not None:
        state = json.loads((ckpt / "state.json").read_text(encoding="utf-8"))
        _check_resume_data(out, state.get("data"), data_now)
        saved, now = state["config"], cfg.training_fingerprint()
        defaults = TrainConfig(task="", method="", model="", out_dir="").to_dict()
        saved = {**{k: defaults[k] for k in now if k not in saved and k in defaults}, **saved}  # options added since: their defaults
        diff = sorted(k for k in set(saved) | set(now) if json.dumps(saved.get(k), default=str) != json.dumps(now.get(k), default=str))
        if diff:
            shown = ", ".join(f"{k}: {saved.get(k)!r} → {now.get(k)!r}" for k in diff[:6])
            raise FiglangError(
                f"{out} holds a training run with another configuration ({shown}); resume it with the same options, "
                "use a new --out, or pass --restart to start over"
            )
    set_seeds(cfg.seed)
    base = resolve_base(cfg.model)
    model = build_model(cfg, base, labels)
    module = model.module
    device = resolve_device(cfg.device)
    if device != "cpu":
        module.to(device)
    sel_key, sel_mode = getattr(model, "selects_on", ("dev_accuracy", "max"))
    train_records, dropped_train = _usable(model, train_records, "train", cfg.progress)
    dev_records, dropped_dev = _usable(model, dev_records, "dev", cfg.progress)
    if cfg.loss_weights != "none":  # balanced loss: the weights travel in each batch (collate reads them by record id)
        model.example_weights = group_weights(train_records, cfg.loss_weights)
    train_feats = model.features(train_records)
    dev_feats = model.features(dev_records)
    if not train_feats:
        raise FiglangError("no training records")
    if not dev_feats:
        raise FiglangError("no dev records for model selection")
    lengths = [f["length"] for f in train_feats]
    token_mean = hasattr(model, "target_tokens")  # a loss that is the mean over target tokens (generating models)
    # one-per-epoch: the features of one narrative and target (its inferences) form a group; each epoch draws one
    draw_groups = [(f["id"], f.get("t")) for f in train_feats] if cfg.inference_sampling == "one-per-epoch" else None
    steps_per_epoch = len(epoch_plan(lengths, cfg.batch_size, cfg.grad_accum, cfg.seed, 0, groups=draw_groups))
    total_steps = steps_per_epoch * cfg.epochs
    if cfg.max_steps:
        total_steps = min(total_steps, int(cfg.max_steps))
    warmup = int(round(cfg.warmup_ratio * total_steps))

    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in params if not n.endswith(no_decay)], "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in params if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    try:  # the fused CPU kernel is ~3× faster than the per-tensor loop (torch ≥ 2.4)
        optimizer = torch.optim.AdamW(groups, lr=cfg.lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - older torch
        optimizer = torch.optim.AdamW(groups, lr=cfg.lr)

    def schedule(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    eval_bs = cfg.eval_batch_size or max(cfg.batch_size, 8)
    resumed = state is not None
    if state is None:
        log.truncate_after(-1)
        state = {
            "step": 0,
            "epoch": 0,
            "group": 0,
            "best": None,
            "bad_evals": 0,
            "finished": None,
            "last_eval_step": -1,
            "config": cfg.training_fingerprint(),
            "data": data_now,
            "evals": [],
        }
        log.write(
            event="start",
            step=0,
            config=_portable_config(cfg.to_dict()),
            train_items=len(train_feats),
            dev_items=len(dev_feats),
            steps_per_epoch=steps_per_epoch,
            total_steps=total_steps,
            base_model=_portable_base(base),
            dropped={"train": dropped_train, "dev": dropped_dev},
        )
    else:
        frozen = getattr(module, "frozen", False)
        module.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True, map_location=device), strict=not frozen)
        if frozen and (ckpt / "features.pt").is_file():
            module.features.update(torch.load(ckpt / "features.pt", weights_only=True))
        blob = torch.load(ckpt / "trainer.pt", weights_only=False, map_location="cpu")  # the optimizer moves its state to the weights
        optimizer.load_state_dict(blob["optimizer"])
        scheduler.load_state_dict(blob["scheduler"])
        set_rng_state(blob["rng"])
        log.truncate_after(state["step"])
        log.write(event="resume", step=state["step"], epoch=state["epoch"], group=state["group"])

    data_info = (meta_extra or {}).get("data", {})
    data_info = {**data_info, **data_now}

    def figlang_meta(status: str, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
        shape, model_class = TRAINED_METHODS[cfg.method]
        return {
            "figlang_trained": FORMAT_VERSION,
            "status": status,
            "shape": shape,
            "method": cfg.method,
            "model_class": model_class,
            "labels": list(labels) if shape == "nli" else None,
            "input_format": model.describe(),
            "base_model": _portable_base(base),
            "task": {"name": cfg.task, **(meta_extra or {}).get("task", {})},
            "training": _portable_config(cfg.to_dict())
            | {"steps_per_epoch": steps_per_epoch, "total_steps": total_steps, "warmup_steps": warmup},
            "data": data_info,
            "best": state["best"],
            "provenance": (meta_extra or {}).get("provenance"),
            "dev_metrics": metrics or {},
            "versions": library_versions(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def checkpoint() -> None:
        state["running_losses"] = list(running)  # the losses since the last log line, so a resumed log matches
        _save_checkpoint(out, module, optimizer, scheduler, state)

    def evaluate_dev(epoch_float: float) -> bool:
        """Dev accuracy (dev loss for generating models); saves the best model; returns True when patience ran out."""
        if sel_key == "dev_accuracy":
            value = _accuracy(model, dev_feats, eval_bs)
        else:
            value = model.dev_metric(dev_feats, eval_bs)
        module.train()
        # patience counts evaluations that do not beat the best value seen so far, whichever model is kept
        # (select=last keeps the latest one); checkpoints from before best_value was stored fall back to the kept model's
        reference = state["best_value"] if "best_value" in state else (state["best"] or {}).get(sel_key)
        if reference is None:
            improved = True
        elif sel_mode == "max":
            improved = value > reference + cfg.min_delta
        else:
            improved = value < reference - cfg.min_delta
        if improved:
            state["best_value"] = value
            state["bad_evals"] = 0
        else:
            state["bad_evals"] += 1
        if improved or cfg.select == "last":
            state["best"] = {"step": state["step"], "epoch": round(epoch_float, 4), sel_key: value}
            _save_best(model, out, figlang_meta("training"))
        state["last_eval_step"] = state["step"]
        short = "accuracy" if sel_key == "dev_accuracy" else "loss"
        state["evals"].append({"step": state["step"], "epoch": round(epoch_float, 4), short: value})
        log.write(
            **{
                "event": "eval",
                "step": state["step"],
                "epoch": round(epoch_float, 4),
                "split": "dev",
                short: value,
                "n": len(dev_feats),
                "best": state["best"][sel_key],
                "improved": improved,
            }
        )
        if sel_key == "dev_accuracy":
            progress.message(
                f"[eval] step {state['step']} epoch {epoch_float:.2f}: dev accuracy {100 * value:.2f}% "
                f"(best {100 * state['best']['dev_accuracy']:.2f}% at step {state['best']['step']})"
            )
        else:
            progress.message(
                f"[eval] step {state['step']} epoch {epoch_float:.2f}: dev loss {value:.4f} "
                f"(best {state['best'][sel_key]:.4f} at step {state['best']['step']})"
            )
        plot_loss_curve(out / LOG_FILE, out / PLOT_FILE, f"{cfg.task} · {cfg.method} · {cfg.model}")
        return cfg.patience > 0 and state["bad_evals"] >= cfg.patience

    progress = _TrainProgress(cfg.progress, total_steps, state["step"], f"{cfg.method} {cfg.task}")
    if cfg.bf16 and bf16_is_emulated(cfg.device):
        progress.message(
            "[warn] --bf16 on a CPU without AVX512-BF16/AMX: torch emulates bfloat16 here, which is several "
            "times slower than float32; drop --bf16 (or pass --fp32) unless you need bf16 numerics"
        )
    if getattr(module, "frozen", False) and len(module.features) < len(train_feats):
        progress.message(
            "[probe] the base is frozen: the first epoch encodes every training sequence once and keeps its "
            "features; later epochs train the head alone in seconds (the ETA shown is that of the first epoch)"
        )
        progress.encode_until = (
            state["step"]
            + len(epoch_plan(lengths, cfg.batch_size, cfg.grad_accum, cfg.seed, state["epoch"], groups=draw_groups))
            - state["group"]
        )
    module.train()
    running: list[float] = list(state.get("running_losses") or [])
    stop_reason = state.get("finished")
    try:
        while stop_reason is None and state["epoch"] < cfg.epochs:
            plan = epoch_plan(lengths, cfg.batch_size, cfg.grad_accum, cfg.seed, state["epoch"], groups=draw_groups)
            while state["group"] < len(plan):
                group = plan[state["group"]]
                n_group = sum(len(b) for b in group)
                optimizer.zero_grad(set_to_none=True)
                group_loss = 0.0
                # the group's loss is the mean over its units (items; target tokens for a generating model's
                # token-mean loss), whatever the split into micro-batches: each micro-batch adds its summed loss / the group's units
                n_targets = sum(model.target_tokens(train_feats[i]) for b in group for i in b) if token_mean else 0
                for micro in group:
                    batch = model.collate([train_feats[i] for i in micro])
                    if token_mean:
                        loss = model.token_losses(batch)[0] / max(1, n_targets)
                    else:
                        loss = model.loss(batch) * (len(micro) / n_group)
                    loss.backward()
                    group_loss += float(loss.detach())
                finite = math.isfinite(group_loss)
                if cfg.max_grad_norm:
                    norm = torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.max_grad_norm)
                    finite = finite and bool(torch.isfinite(norm))
                if finite:
                    optimizer.step()
                else:  # one NaN/inf update would turn every weight into NaN: skip it, say so, keep the schedule
                    optimizer.zero_grad(set_to_none=True)
                    state["skipped_steps"] = state.get("skipped_steps", 0) + 1
                    log.write(event="skipped", step=state["step"] + 1, reason="non-finite loss or gradient", loss=group_loss)
                    progress.message(
                        f"[warn] step {state['step'] + 1}: non-finite loss or gradient; update skipped "
                        f"({state['skipped_steps']} so far). Lower --lr, or train in fp32 (--fp32), if this repeats."
                    )
                scheduler.step()
                state["step"] += 1
                state["group"] += 1
                if finite:
                    running.append(group_loss)
                epoch_float = state["epoch"] + state["group"] / len(plan)
                logged = state["step"] % cfg.log_every == 0 or state["group"] == len(plan)
                lr_now = scheduler.get_last_lr()[0]
                if logged:
                    mean_loss = sum(running) / len(running) if running else float("nan")
                    log.write(
                        event="train",
                        step=state["step"],
                        epoch=round(epoch_float, 4),
                        loss=mean_loss,
                        lr=lr_now,
                        items=n_group,
                        elapsed_s=round(time.perf_counter() - started, 1),
                    )
                    shown = mean_loss
                    running = []
                else:
                    shown = group_loss
                progress.update(state["step"], f"loss {shown:.4f} lr {lr_now:.2e} ep {epoch_float:.2f}", logged)
                epoch_done = state["group"] == len(plan)
                if epoch_done:
                    state["epoch"] += 1
                    state["group"] = 0
                    if evaluate_dev(float(state["epoch"])):
                        stop_reason = "early-stopping"
                    checkpoint()
                elif cfg.eval_every and state["step"] % cfg.eval_every == 0:
                    stop = evaluate_dev(epoch_float)
                    checkpoint()
                    if stop:
                        stop_reason = "early-stopping"
                        break
                elif state["step"] % cfg.save_every == 0:
                    checkpoint()
                if stop_reason is None and cfg.max_steps and state["step"] >= cfg.max_steps:
                    stop_reason = "max-steps"
                if stop_reason is None and cfg.max_minutes and (time.perf_counter() - started) / 60 >= cfg.max_minutes:
                    stop_reason = "time-budget"
                if stop_reason is not None or epoch_done:
                    break
            if stop_reason is None and state["epoch"] >= cfg.epochs:
                stop_reason = "complete"
        if stop_reason is None:
            stop_reason = "complete"
        if stop_reason == "time-budget":
            if state["best"] is None:  # something to answer with until a rerun continues (no eval: the rerun stays identical)
                _save_best(model, out, figlang_meta("partial"))
        else:
            if state["last_eval_step"] != state["step"]:
                evaluate_dev(state["epoch"] + state["group"] / max(1, steps_per_epoch))
            state["finished"] = stop_reason
        checkpoint()
    finally:
        progress.close()
    log.write(event="stop", step=state["step"], reason=stop_reason, best=state["best"])
    plot = plot_loss_curve(out / LOG_FILE, out / PLOT_FILE, f"{cfg.task} · {cfg.method} · {cfg.model}")

    best_model = load_trained(out, device=cfg.device)
    if getattr(module, "frozen", False) and getattr(getattr(best_model, "module", None), "frozen", False):
        best_model.module.features = module.features  # same fixed encoder: its features carry over to the report
    summary = {
        "state": state,
        "stopped": stop_reason,
        "resumed": resumed,
        "seconds": time.perf_counter() - started,
        "plot": plot,
        "figlang_meta": figlang_meta,
        "steps_per_epoch": steps_per_epoch,
        "total_steps": total_steps,
    }
    return best_model, summary


# --- the public entry points ------------------------------------------------------------------------------------


def _task_data(task: Any, cfg: TrainConfig) -> tuple[list[Record], list[Record], dict[str, list[Record] | None], dict[str, Any]]:
    """Train records, dev records, the report sets (split name → records, None for a plain task split) and data provenance."""
    train_split, dev_split, report = default_splits(task, cfg)
    train = task.load(train_split, cfg.ctx)
    carved: list[Record] | None = None
    if dev_split == "carve":
        # narrative records (cloze/generation: they have an expression_type) also link variants of one idiom (a
        # punctuation variant, the same gloss) so that no variant of a dev expression stays in train, as dev-disjoint does
        links = narrative_links if any(getattr(r, "expression_type", None) for r in train) else None
        train, carved = expression_disjoint_split(
            train, dev_fraction=cfg.carve_fraction, seed=cfg.seed, key=carve_key_fn(cfg.carve_key, train), links=links
        )
        dev = carved
    else:
        dev = task.load(dev_split, cfg.ctx)
        train_ids = {r.id for r in train}
        shared = [r.id for r in dev if r.id in train_ids]
        if shared:
            raise FiglangError(
                f"the dev split {dev_split!r} shares {len(shared)} of its {len(dev)} records with the train split {train_split!r} "
                f"(first: {shared[0]!r}): model selection would score training data. Pair train-disjoint with dev-disjoint, "
                "or pick a dev split disjoint from the train split, or dev_split='carve' (a disjoint slice of train)"
            )
    train = balanced_subset(train, cfg.limit, cfg.seed, cfg.sample_balance)
    dev = seeded_subset(dev, cfg.dev_limit, cfg.seed + 1)
    sets: dict[str, list[Record] | None] = {}
    for name in report:
        if name == "carve":
            sets["carved-dev"] = dev
        else:
            sets[name] = None
    root = cfg.ctx.data_dir  # resolved by make_config
    spec_dir = (Path(task.spec_path).parent,) if task.spec_path else ()
    files = {
        s: data_checksums(task.files(s, cfg.ctx), root, *spec_dir)
        for s in sorted({train_split, *(x for x in (dev_split, *report) if x != "carve")})
    }
    info = {
        "task": {
            "shape": task.shape,
            "train_split": train_split,
            "dev_split": dev_split if dev_split != "carve" else f"carved from {train_split}: {cfg.carve_fraction:g} by {cfg.carve_key}",
            "report_splits": list(sets),
        },
        "data": {"files": files, **_balance_info(cfg, train)},
        "provenance": selection_provenance(
            cfg,
            train_split,
            train,
            "carved-dev" if dev_split == "carve" else dev_split,
            dev,
            [s if s != "carve" else "carved-dev" for s in report],
        ),
    }
    conflicts = label_conflicts({"train": train, "dev": dev})
    if conflicts:  # no model can fit both copies; across train and dev, selection scores a right answer as wrong
        info["data"]["label_conflicts"] = [c.to_dict() for c in conflicts]
        if cfg.progress:
            print(
                f"[warn] {len(conflicts)} item(s) in the training data occur with different gold labels, e.g. {conflicts[0]} "
                "(kept, as in the published setups; listed in figlang.json data.label_conflicts)",
                file=sys.stderr,
                flush=True,
            )
    return train, dev, sets, info


def selection_provenance(
    cfg: TrainConfig,
    train_name: str,
    train: Sequence[Record],
    dev_name: str,
    dev: Sequence[Record],
    reported: Sequence[str] = (),
    **extra: Any,
) -> dict[str, Any]:
    """The provenance block of a training run: code, the train and selection records, and what was chosen where (the
    epoch / kept checkpoint on the dev split; hand-made choices from ``chosen_on``)."""
    chosen = {
        "epoch": dev_name,
        "checkpoint": dev_name,
        **({"threshold": dev_name} if cfg.threshold != "none" else {}),
        **(cfg.chosen_on or {}),
    }
    return provenance(
        {train_name: train, dev_name: dev},
        chosen,
        selection_reported=dev_name in reported,
        select_on_eval_split=cfg.select_on_eval_split,
        **extra,
    )


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


def _balance_info(cfg: TrainConfig, train: Sequence[Record]) -> dict[str, Any]:
    """What figlang.json records about the training mix: the gold labels (and pair types) of the records trained on."""
    info: dict[str, Any] = {"train_label_mix": mix(train)}
    if any(getattr(r, "pair_type", None) for r in train):
        info["train_pair_type_mix"] = mix(train, "pair_type")
    if cfg.sample_balance != "none" or cfg.loss_weights != "none":
        info["balance"] = {"sample_balance": cfg.sample_balance, "loss_weights": cfg.loss_weights}
    return info


def _portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """A run's configuration as figlang.json and the training log record it: its folders as ``portable_path``
    writes them (relative or ``~/``), since the files are committed and read on other machines."""
    return {**config, **{k: portable_path(config[k]) for k in ("out_dir", "data_dir", "model") if isinstance(config.get(k), str)}}


def _portable_base(base: dict[str, Any]) -> dict[str, Any]:
    """The base model's record with a portable path: loading a frozen base falls back to its reference when the
    recorded path is not there (``frozen_base_path``), so nothing depends on this machine's absolute path."""
    out = {**base, "path": portable_path(base["path"])} if isinstance(base.get("path"), str) else dict(base)
    if isinstance(out.get("base_model"), dict):
        out["base_model"] = _portable_base(out["base_model"])
    return out


DECISION_MARGINS = "decision_margins.jsonl"  # the selection items' score margins that chose the threshold


def _choose_decision(model: Any, cfg: TrainConfig, dev: Sequence[Record], dev_name: str) -> dict[str, Any] | None:
    """cfg.threshold: the decision threshold chosen on the dev (selection) records, set on the model and written into
    the run's figlang.json before anything is reported (so that the report's method identity sees it); None: argmax."""
    if cfg.threshold == "none":
        return None
    margins = model.decision_margins(dev, batch_size=cfg.eval_batch_size or max(cfg.batch_size, 8))
    decision = model.choose_decision(dev, cfg.threshold, chosen_on=dev_name, margins=margins)
    if margins:  # the selection items' margins: the threshold recomputes from them without the weights
        with atomic_write(Path(cfg.out_dir) / DECISION_MARGINS) as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in margins)
        decision = {**decision, "margins_file": DECISION_MARGINS}
    _atomic_json(Path(cfg.out_dir) / FIGLANG_JSON, {**read_figlang_json(cfg.out_dir), "decision": decision})
    return decision


def final_report(model: Any, task: Any, sets: dict[str, list[Record] | None], cfg: TrainConfig, out: Path) -> dict[str, Any]:
    """Score the best model on every report set with the evaluation harness; writes eval/<name>/."""
    method = TrainedMethod(model=str(out), loaded=model, batch_size=cfg.eval_batch_size or max(cfg.batch_size, 8), seed=cfg.seed)
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


def train(
    task: str | Any,
    method: str,
    model: str,
    out_dir: str | Path,
    *,
    restart: bool = False,
    **config: Any,
) -> TrainResult:
    """Train ``method`` on ``task`` from base ``model`` into ``out_dir`` (resuming a run left there).

    ``config``: any :class:`TrainConfig` field (``preset``, ``epochs``, ``lr``, ``batch_size``,
    ``grad_accum``, ``max_length``, ``seed``, ``limit``, ``max_steps``, ``bf16``, …).
    """
    t = get_task(task) if isinstance(task, str) else task
    cfg = make_config(t.name if not isinstance(task, str) else task, method, model, out_dir, **config)
    shape = TRAINED_METHODS[cfg.method][0]
    if t.shape != shape:
        raise FiglangError(f"method {cfg.method!r} trains {shape} models, but task {t.name!r} is a {t.shape} task")
    train_records, dev_records, sets, info = _task_data(t, cfg)
    best_model, summary = run_training(cfg, train_records, dev_records, labels=t.labels, meta_extra=info, restart=restart)
    out = Path(cfg.out_dir)
    dev_name = info["provenance"]["selection_split"]["epoch"]
    decision = _choose_decision(best_model, cfg, dev_records, dev_name)
    metrics = final_report(best_model, t, sets, cfg, out)
    status = "partial" if summary["stopped"] == "time-budget" else "complete"
    meta = summary["figlang_meta"](status, _compact(metrics))
    if decision is not None:
        meta["decision"] = decision
    meta["stopped"] = summary["stopped"]
    meta["skipped_steps"] = summary["state"].get("skipped_steps", 0)
    _atomic_json(out / FIGLANG_JSON, meta)
    state = summary["state"]
    best = state["best"] or {}
    result = TrainResult(
        out_dir=out,
        method=cfg.method,
        best_step=best.get("step"),
        best_epoch=best.get("epoch"),
        best_dev_accuracy=best.get("dev_accuracy"),
        metrics=metrics,
        steps=state["step"],
        stopped=summary["stopped"],
        resumed=summary["resumed"],
        seconds=summary["seconds"],
        log_path=out / LOG_FILE,
        plot_path=summary["plot"],
        best_dev_loss=best.get("dev_loss"),
        provenance=_with_reported_splits(info["provenance"], out, sets),
    )
    _atomic_json(out / "train_result.json", result.to_dict())
    return result


FOLD_GROUPING = "linked: records that share a normalised idiom or a premise are one group (no idiom, no premise in two folds)"
FOLD_SELECTION = (
    "inside each fold: a seeded expression-disjoint slice (carve_fraction, linked grouping) of that fold's "
    "training part chooses the epoch and the kept checkpoint; the test fold is scored once"
)


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
    **config: Any,
) -> dict[str, Any]:
    """IMPLI-style k-fold training: folds disjoint by expression (records without one are their own group).

    Each fold trains in ``out_dir/fold_XX`` on the other folds (a 10% expression-disjoint slice
    of them for model selection) and is scored on its test fold; the summary pools the folds,
    with accuracy per gold label (entailment vs non-entailment) reported separately.
    ``test_limit`` scores a seeded subset of each test fold (for quick looks and tests).
    """
    t = get_task(task) if isinstance(task, str) else task
    config = dict(config)
    config.setdefault("preset", "cpu-impli-folds")
    base_cfg = make_config(t.name, method, model, out_dir, **config)
    records = t.load(base_cfg.train_split or t.default_split, base_cfg.ctx)
    key = carve_key_fn("expression", records)  # linked: one idiom's pairs never straddle two folds
    parts = expression_folds(records, k=k, seed=0, key=key)
    chosen = list(range(k)) if folds is None else [int(f) for f in folds]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    per_fold: dict[str, Any] = {}
    started = time.perf_counter()
    tested: dict[int, tuple[list, dict]] = {}  # fold → (its test records, their predictions)
    learned = {key: v for key, v in _portable_config(base_cfg.to_dict()).items() if key not in HOW_IT_RAN}
    run_key = json.loads(
        _strict_json({"task": t.name, "method": method, "model": model, "k": k, "test_limit": test_limit, "config": learned})
    )  # as it reads back from fold_result.json
    for f in chosen:
        if not 0 <= f < k:
            raise FiglangError(f"fold {f} is outside 0..{k - 1}")
        fold_train = parts[f][0]
        fold_test = _fold_test(parts, f, test_limit, base_cfg.seed)
        rest, dev = expression_disjoint_split(fold_train, dev_fraction=base_cfg.carve_fraction, seed=base_cfg.seed, key=key)
        cfg = make_config(t.name, method, model, out / f"fold_{f:02d}", **config)
        rest = balanced_subset(rest, cfg.limit, cfg.seed + f, cfg.sample_balance)
        dev = seeded_subset(dev, cfg.dev_limit, cfg.seed + 1 + f)
        info = {
            "task": {
                "shape": t.shape,
                "folds": k,
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
        best_model, summary = run_training(cfg, rest, dev, labels=t.labels, meta_extra=info, restart=restart)
        decision = _choose_decision(best_model, cfg, dev, f"fold-{f}-selection")
        method_obj = TrainedMethod(model=str(cfg.out_dir), loaded=best_model, batch_size=cfg.eval_batch_size or 64)
        preds, m, _ = _records_results(
            t, f"test-fold-{f}", fold_test, method_obj, cfg.seed, {"fold": f, "folds": k}, out_dir=Path(cfg.out_dir) / "eval" / "test-fold"
        )
        meta = summary["figlang_meta"]("complete", _compact({"test-fold": m}))
        if decision is not None:
            meta["decision"] = decision
        _atomic_json(Path(cfg.out_dir) / FIGLANG_JSON, meta)
        per_fold[str(f)] = {
            "accuracy": m["accuracy"],
            "by_gold_label": m["by_gold_label"],
            "items": len(fold_test),
            "train_items": len(rest),
            "dev_items": len(dev),
            "best": summary["state"]["best"],
            "train_label_mix": mix(rest),
            **({"decision": decision} if decision is not None else {}),
        }
        _atomic_json(Path(cfg.out_dir) / FOLD_RESULT, {"run": run_key, "per_fold": per_fold[str(f)]})
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


__all__ = [
    "BALANCE_KEYS",
    "TrainConfig",
    "TrainResult",
    "balanced_subset",
    "epoch_plan",
    "group_weights",
    "make_config",
    "plot_loss_curve",
    "records_digest",
    "run_training",
    "seeded_subset",
    "train",
    "train_folds",
]
