"""Which records a run trains, selects and reports on: the default splits, the carved dev, the data provenance."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.hygiene import label_conflicts
from figlang.data.records import Record, expression_of
from figlang.data.splits import expression_disjoint_split, figurative_links, linked_key, narrative_links
from figlang.evaluation.provenance import data_checksums, provenance
from figlang.training.config import TrainConfig
from figlang.training.sampling import balanced_subset, mix, seeded_subset


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


def _balance_info(cfg: TrainConfig, train: Sequence[Record]) -> dict[str, Any]:
    """What figlang.json records about the training mix: the gold labels (and pair types) of the records trained on."""
    info: dict[str, Any] = {"train_label_mix": mix(train)}
    if any(getattr(r, "pair_type", None) for r in train):
        info["train_pair_type_mix"] = mix(train, "pair_type")
    if cfg.sample_balance != "none" or cfg.loss_weights != "none":
        info["balance"] = {"sample_balance": cfg.sample_balance, "loss_weights": cfg.loss_weights}
    return info
