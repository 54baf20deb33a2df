"""Expression-disjoint splits: held-out parts that share no idiom/simile with the rest.

The narrative benchmark's dev idioms all occur in train, so dev accuracy overstates accuracy
on unseen expressions; model selection needs a dev split carved from train by expression.
IMPLI has no official split at all; its paper reports 10 folds by idiom.

Both functions are deterministic across runs and Python hash seeds: expressions are sorted
before anything random happens, and no set is ever iterated unsorted. Each part keeps the
original record order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from .errors import DataError
from .records import expression_of

R = TypeVar("R")
KeyFn = Callable[[R], Hashable | None]


def group_by_expression(records: Sequence[R], key: KeyFn | None = None) -> dict[Hashable, list[int]]:
    """Expression -> indexes of its records, in first-seen order; every record must have an expression."""
    key_fn = key or expression_of
    groups: dict[Hashable, list[int]] = {}
    missing: list[int] = []
    for i, record in enumerate(records):
        k = key_fn(record)  # type: ignore[arg-type]
        if k is None or k == "":
            missing.append(i)
            continue
        groups.setdefault(k, []).append(i)
    if missing:
        first = records[missing[0]]
        rid = getattr(first, "id", f"#{missing[0]}")
        raise DataError(
            f"{len(missing)} of {len(records)} records have no expression to group by (first: {rid!r})",
            hint="map an `expression` column in the task spec, or pass key=<function record -> group> "
            "(e.g. key=lambda r: r.meaning)",
        )
    return groups


def _sorted_names(groups: dict[Hashable, list[int]]) -> list[Hashable]:
    try:
        return sorted(groups)  # type: ignore[type-var]
    except TypeError:
        return sorted(groups, key=repr)  # mixed key types: still a fixed order


def _take(records: Sequence[R], indexes: set[int], inside: bool) -> list[R]:
    return [r for i, r in enumerate(records) if (i in indexes) == inside]


def expression_disjoint_split(
    records: Sequence[R], dev_fraction: float = 0.1, seed: int = 0, key: KeyFn | None = None
) -> tuple[list[R], list[R]]:
    """(train_rest, dev): whole expressions go to dev until it holds ``dev_fraction`` of the records.

    Expressions are sorted, shuffled with ``random.Random(seed)`` and taken in that order until
    the dev share of records reaches the fraction (so it may overshoot by part of one group).
    No expression ends up in both parts.
    """
    if not 0 < dev_fraction < 1:
        raise ValueError(f"dev_fraction must be between 0 and 1 (exclusive), got {dev_fraction}")
    groups = group_by_expression(records, key)
    if len(groups) < 2:
        raise DataError(f"an expression-disjoint split needs at least 2 distinct expressions, found {len(groups)}")
    names = _sorted_names(groups)
    random.Random(seed).shuffle(names)
    target = dev_fraction * len(records)
    dev_idx: set[int] = set()
    for name in names:
        if len(dev_idx) >= target:
            break
        dev_idx.update(groups[name])
    if len(dev_idx) == len(records):
        raise DataError(
            f"dev_fraction {dev_fraction} took every expression into dev (one expression has most of the records)",
            hint="use a smaller dev_fraction",
        )
    return _take(records, dev_idx, inside=False), _take(records, dev_idx, inside=True)


def expression_folds(
    records: Sequence[R], k: int = 10, seed: int = 0, key: KeyFn | None = None
) -> list[tuple[list[R], list[R]]]:
    """k (train, test) folds, each expression in exactly one test fold, folds balanced by record count.

    Greedy: expressions largest first (ties by name) each go to the fold with the fewest records
    so far (ties: lowest fold). The partition therefore depends only on the data, so anyone can
    reproduce it; ``seed`` only permutes which fold is numbered first.
    """
    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    groups = group_by_expression(records, key)
    if len(groups) < k:
        raise DataError(f"{k} folds need at least {k} distinct expressions, found {len(groups)}", hint="use a smaller k")
    names = _sorted_names(groups)
    order = sorted(names, key=lambda n: -len(groups[n]))  # stable: equal sizes stay in name order
    loads = [0] * k
    members: list[set[int]] = [set() for _ in range(k)]
    for name in order:
        fold = min(range(k), key=lambda f: (loads[f], f))
        loads[fold] += len(groups[name])
        members[fold].update(groups[name])
    permutation = list(range(k))
    random.Random(seed).shuffle(permutation)
    return [(_take(records, members[f], inside=False), _take(records, members[f], inside=True)) for f in permutation]
