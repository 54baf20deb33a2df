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
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Protocol, TypeVar

from figlang.core.errors import DataError
from figlang.data.records import expression_of
from figlang.core.text import normalise_expression

R = TypeVar("R")
KeyFn = Callable[[R], Hashable | None]
LinkFn = Callable[[R], Iterable[Hashable]]


class _Identified(Protocol):
    """A record with an ``id`` (unique among the records a linked grouping is built on)."""

    @property
    def id(self) -> object: ...


Ident = TypeVar("Ident", bound=_Identified)


def linked_key(records: Sequence[Ident], links: LinkFn) -> Callable[[Ident], str]:
    """A grouping key under which records that share any link value (transitively) are one group.

    Why: a single key per record can split one expression into several groups (IMPLI derives the
    idiom from a premise/hypothesis diff, so the same premise yields "hold the line" in one pair
    and "the line" in another), and such groups then land on both sides of a split. Linking by
    every value a record is known by (its normalised expression, its premise, ...) and taking
    connected components closes those leaks. Groups are named by their smallest link value, so
    the key is deterministic; records are matched by ``id``, which must be unique.
    """
    parent: dict[Hashable, Hashable] = {}

    def find(x: Hashable) -> Hashable:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    own: dict[str, list[Hashable]] = {}
    for record in records:
        rid = str(record.id)
        if rid in own:
            raise DataError(f"record id {rid!r} occurs twice: a linked grouping needs unique ids")
        values = [("id", rid)] + [v for v in links(record) if v not in (None, "")]
        own[rid] = values
        for v in values:
            parent.setdefault(v, v)
        first = find(values[0])
        for v in values[1:]:
            other = find(v)
            if other != first:
                parent[other] = first
    members: dict[Hashable, list[Hashable]] = {}
    for values in own.values():
        members.setdefault(find(values[0]), []).extend(values)

    def name(values: list[Hashable]) -> str:
        told = [repr(v) for v in values if not (isinstance(v, tuple) and v[:1] == ("id",))]
        return min(told) if told else min(repr(v) for v in values)

    names = {root: name(values) for root, values in members.items()}
    by_id = {rid: names[find(values[0])] for rid, values in own.items()}

    def key(record: Ident) -> str:
        try:
            return by_id[str(record.id)]
        except KeyError:
            raise DataError(f"record {getattr(record, 'id', '?')!r} was not among the records the grouping was built on") from None

    return key


def figurative_links(record: object) -> list[Hashable]:
    """What ties a record to others of the same expression: its normalised expression, and its
    premise (NLI pairs built by rewriting one sentence share it: IMPLI's entailment, adversarial
    and antonym pairs of one idiom all start from the same premise)."""
    out: list[Hashable] = []
    expression = normalise_expression(getattr(record, "expression", None))
    if expression:
        out.append(("expression", expression))
    premise = " ".join(str(getattr(record, "premise", "") or "").lower().split())
    if premise:
        out.append(("premise", premise))
    return out


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
            hint="map an `expression` column in the task spec, or pass key=<function record -> group> (e.g. key=lambda r: r.meaning)",
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
    records: Sequence[R], dev_fraction: float = 0.1, seed: int = 0, key: KeyFn | None = None, links: LinkFn | None = None
) -> tuple[list[R], list[R]]:
    """(train_rest, dev): whole expressions go to dev until it holds ``dev_fraction`` of the records.

    Expressions are sorted, shuffled with ``random.Random(seed)`` and taken in that order until
    the dev share of records reaches the fraction (so it may overshoot by part of one group).
    No expression ends up in both parts. ``links`` names other ways a record can be the same
    expression as another (a variant spelling, the same gloss): records of train_rest that share a
    link value with a dev record are left out of train_rest, so the variant cannot leak, while the
    dev part stays what the grouping key alone chose.
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
    rest, dev = _take(records, dev_idx, inside=False), _take(records, dev_idx, inside=True)
    if links is not None:
        in_dev = {v for r in dev for v in links(r) if v not in (None, "")}
        rest = [r for r in rest if not any(v in in_dev for v in links(r) if v not in (None, ""))]
    return rest, dev


def narrative_links(record: object) -> list[Hashable]:
    """Variants of one narrative expression: the same words up to punctuation ("like a london fog."),
    and for idioms the same gloss ("to the hilt" / "up to the hilt"). Simile properties are not
    links: many different similes share one ("fast")."""
    out: list[Hashable] = []
    expression = normalise_expression(getattr(record, "expression", None))
    if expression:
        out.append(("expression", expression))
    meaning = normalise_expression(getattr(record, "meaning", None))
    if meaning and getattr(record, "expression_type", None) == "idiom":
        out.append(("meaning", meaning))
    return out


def expression_folds(records: Sequence[R], k: int = 10, seed: int = 0, key: KeyFn | None = None) -> list[tuple[list[R], list[R]]]:
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


def grouped_stratified_split(
    records: Sequence[Ident],
    fraction: float,
    seed: int,
    links: LinkFn,
    stratum: Callable[[list[Ident]], Hashable],
) -> tuple[list[Ident], list[Ident]]:
    """(rest, held): whole linked groups held out, about ``fraction`` of the groups of every stratum.

    Records that share any link value (transitively, see ``linked_key``) form one group and always
    land on the same side. Each group's stratum is ``stratum(its records)``; a stratum that names the
    group's label counts holds groups of one size, so taking ``round(fraction × groups)`` of each
    stratum keeps the held part's figure-type and label mix that of the whole. Strata and groups are
    sorted before a ``random.Random(seed)`` shuffles them, so the carve is the same on every run and
    hash seed. Both parts keep the original record order.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be between 0 and 1 (exclusive), got {fraction}")
    key = linked_key(records, links)
    groups: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(key(record), []).append(i)
    strata: dict[Hashable, list[str]] = {}
    for name in sorted(groups):
        strata.setdefault(stratum([records[i] for i in groups[name]]), []).append(name)
    rng = random.Random(seed)
    held: set[int] = set()
    for s in sorted(strata, key=repr):
        names = strata[s]
        rng.shuffle(names)
        for name in names[: int(fraction * len(names) + 0.5)]:
            held.update(groups[name])
    if not held or len(held) == len(records):
        raise DataError(
            f"a {fraction:.0%} grouped split of {len(records)} records in {len(groups)} groups left one side empty",
            hint="use a larger fraction or more records",
        )
    return _take(records, held, inside=False), _take(records, held, inside=True)


def carve_selection(
    train_disjoint: Sequence[Ident], size: int, seed: int, links: LinkFn = narrative_links
) -> tuple[list[Ident], list[Ident]]:
    """(train_fit, selection): a model-selection split carved from ``train_disjoint`` by whole expressions.

    Why: dev-disjoint is the split a figure on unseen expressions is reported on, so every choice a
    method makes (layer, epoch, prompt, threshold, ensemble weight) needs another split that is just as
    unseen. Expressions linked by ``links`` (a punctuation variant, the same gloss) are one group, so a
    variant never sits on both sides; nothing is dropped. ``size`` is the target number of records
    (dev-disjoint's, so the selection is as noisy as the report), reached by taking whole groups in a
    shuffled (``seed``) order.
    """
    if not 0 < size < len(train_disjoint):
        raise DataError(f"a selection split of {size} records cannot be carved from {len(train_disjoint)} records")
    key = linked_key(train_disjoint, links)
    return expression_disjoint_split(train_disjoint, dev_fraction=size / len(train_disjoint), seed=seed, key=key)
