"""Determinism and data order: seeds and RNG states, seeded and balanced subsets, loss weights, each epoch's batches."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from figlang.core.errors import FiglangError
from figlang.data.records import Record
from figlang.training.config import BALANCE_KEYS


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
