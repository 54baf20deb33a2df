"""Data hygiene: placeholder gold labels and overlap (leakage) between splits.

Two problems make benchmark numbers lie without any error being raised: scoring against
labels the authors hid (the narrative test files say ``option1`` everywhere), and evaluating
on items, contexts or expressions the model was trained on (every idiom dev idiom occurs in
idiom train). These checks make both visible before anything is scored.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record, expression_of
from figlang.core.text import normalise_text

MIN_RECORDS_FOR_HEURISTIC = 50


def detect_placeholder_labels(records: Sequence[Record], min_records: int = MIN_RECORDS_FOR_HEURISTIC) -> str | None:
    """Why the gold labels look like placeholders, or None when they look real.

    Flagged: records marked ``label_is_placeholder`` (or generation items whose references are
    hidden), and, as a heuristic for user data, one identical label over at least ``min_records``
    labelled records of a multiple-choice or NLI task, which real annotation almost never gives.
    """
    flagged = [
        r
        for r in records
        if getattr(r, "label_is_placeholder", False) or (isinstance(r, GenerationRecord) and r.meta.get("references_hidden"))
    ]
    if flagged:
        return (
            f"{len(flagged)} of {len(records)} records carry placeholder gold labels (e.g. {flagged[0].id!r}): "
            "the labels were hidden by the dataset's authors, so scores against them are meaningless"
        )
    labelled = [r for r in records if isinstance(r, (ClozeRecord, NLIPair)) and r.label is not None]
    if len(labelled) < min_records:
        return None
    multi = [r for r in labelled if not isinstance(r, ClozeRecord) or len(r.options) > 1]
    counts = Counter(r.label for r in multi)
    if len(multi) >= min_records and len(counts) == 1:
        ((label, n),) = counts.items()
        shown = f"option {label} (0-based)" if isinstance(multi[0], ClozeRecord) else repr(label)
        return (
            f"all {n} labelled records have the same gold label, {shown}: this usually means placeholder "
            "labels (e.g. hidden test labels) or a label column mapped wrongly"
        )
    return None


# ---------------------------------------------------------------------------------------------
# Overlap between splits


def item_key(record: Record) -> str:
    """Everything the model is shown: narrative + options (cloze), premise + hypothesis (NLI), source (generation)."""
    if isinstance(record, ClozeRecord):
        return "\x1f".join([normalise_text(record.narrative), *sorted(normalise_text(o) for o in record.options)])
    if isinstance(record, NLIPair):
        return normalise_text(record.premise) + "\x1f" + normalise_text(record.hypothesis)
    return normalise_text(record.source)


def context_key(record: Record) -> str:
    """The context alone: the narrative (cloze), the premise (NLI), the source (generation)."""
    if isinstance(record, ClozeRecord):
        return normalise_text(record.narrative)
    if isinstance(record, NLIPair):
        return normalise_text(record.premise)
    return normalise_text(record.source)


@dataclass(frozen=True)
class SplitSummary:
    name: str
    records: int
    distinct_items: int
    distinct_contexts: int
    distinct_expressions: int
    records_without_expression: int


@dataclass(frozen=True)
class Shared:
    """One kind of overlap between splits a and b: distinct keys shared and the records they cover."""

    distinct: int  # distinct keys found in both splits
    a_distinct: int  # distinct keys in a (denominator of a_distinct_share)
    b_distinct: int
    a_records: int  # records of a whose key also occurs in b
    b_records: int

    def share(self, n: int, total: int) -> float | None:
        return n / total if total else None

    @property
    def a_distinct_share(self) -> float | None:
        return self.share(self.distinct, self.a_distinct)

    @property
    def b_distinct_share(self) -> float | None:
        return self.share(self.distinct, self.b_distinct)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["a_distinct_share"] = self.a_distinct_share
        d["b_distinct_share"] = self.b_distinct_share
        return d


@dataclass(frozen=True)
class PairOverlap:
    a: str
    b: str
    a_records: int
    b_records: int
    items: Shared
    contexts: Shared
    expressions: Shared

    @property
    def a_record_share_with_shared_expression(self) -> float | None:
        """Share of all of a's records whose expression also occurs in b."""
        return self.expressions.a_records / self.a_records if self.a_records else None

    @property
    def b_record_share_with_shared_expression(self) -> float | None:
        return self.expressions.b_records / self.b_records if self.b_records else None

    @property
    def leaks(self) -> bool:
        return bool(self.items.distinct or self.contexts.distinct or self.expressions.distinct)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "a_records": self.a_records,
            "b_records": self.b_records,
            "identical_items": self.items.to_dict(),
            "identical_contexts": self.contexts.to_dict(),
            "shared_expressions": {
                **self.expressions.to_dict(),
                "a_record_share": self.a_record_share_with_shared_expression,
                "b_record_share": self.b_record_share_with_shared_expression,
            },
        }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


@dataclass(frozen=True)
class OverlapReport:
    """Overlap between every pair of splits (in the order the splits were given)."""

    splits: tuple[SplitSummary, ...]
    pairs: tuple[PairOverlap, ...]

    def pair(self, a: str, b: str) -> PairOverlap:
        """The overlap of a with b, whichever order they were given in (a is reported as ``a``)."""
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
            if (p.a, p.b) == (b, a):
                return _swap(p)
        raise KeyError(f"no pair ({a!r}, {b!r}); splits: {', '.join(s.name for s in self.splits)}")

    def to_dict(self) -> dict[str, Any]:
        return {"splits": [asdict(s) for s in self.splits], "pairs": [p.to_dict() for p in self.pairs]}

    def rows(self) -> list[list[str]]:
        """One row per pair, shared by the Markdown and rich renderings."""
        out = []
        for p in self.pairs:
            out.append(
                [
                    f"{p.a} / {p.b}",
                    f"{p.items.a_records} / {p.items.b_records}",
                    f"{p.contexts.distinct} ({_pct(p.contexts.a_distinct_share)} / {_pct(p.contexts.b_distinct_share)})",
                    f"{p.expressions.distinct} ({_pct(p.expressions.a_distinct_share)} / {_pct(p.expressions.b_distinct_share)})",
                    f"{_pct(p.a_record_share_with_shared_expression)} / {_pct(p.b_record_share_with_shared_expression)}",
                ]
            )
        return out

    HEADERS = ("a / b", "records with an identical item", "shared contexts", "shared expressions", "records with a shared expression")
    CAPTION = (
        "pairs of counts are a / b; shares in brackets are of each split's distinct contexts or expressions; "
        "texts compared lower-cased, whitespace collapsed, <b> markup removed"
    )

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(self.HEADERS) + " |", "|" + "---|" * len(self.HEADERS)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows()]
        return "\n".join(lines) + "\n\n" + self.CAPTION.capitalize() + ".\n"

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(title="Overlap between splits", caption=self.CAPTION)
        for h in self.HEADERS:
            table.add_column(h, justify="left" if h == "a / b" else "right")
        for row in self.rows():
            table.add_row(*row)
        return table


def _swap(p: PairOverlap) -> PairOverlap:
    def flip(s: Shared) -> Shared:
        return Shared(s.distinct, s.b_distinct, s.a_distinct, s.b_records, s.a_records)

    return PairOverlap(p.b, p.a, p.b_records, p.a_records, flip(p.items), flip(p.contexts), flip(p.expressions))


def _shared(a_keys: Sequence[str | None], b_keys: Sequence[str | None]) -> Shared:
    a_set = {k for k in a_keys if k}
    b_set = {k for k in b_keys if k}
    both = a_set & b_set
    return Shared(
        distinct=len(both),
        a_distinct=len(a_set),
        b_distinct=len(b_set),
        a_records=sum(1 for k in a_keys if k in both),
        b_records=sum(1 for k in b_keys if k in both),
    )


def overlap_report(splits: Mapping[str, Sequence[Record]]) -> OverlapReport:
    """Identical items, identical contexts and shared expressions for every pair of splits."""
    keys = {
        name: ([item_key(r) for r in recs], [context_key(r) for r in recs], [expression_of(r) for r in recs])
        for name, recs in splits.items()
    }
    summaries = tuple(
        SplitSummary(
            name=name,
            records=len(recs),
            distinct_items=len(set(keys[name][0])),
            distinct_contexts=len(set(keys[name][1])),
            distinct_expressions=len({e for e in keys[name][2] if e}),
            records_without_expression=sum(1 for e in keys[name][2] if not e),
        )
        for name, recs in splits.items()
    )
    pairs = tuple(
        PairOverlap(
            a=a,
            b=b,
            a_records=len(splits[a]),
            b_records=len(splits[b]),
            items=_shared(keys[a][0], keys[b][0]),
            contexts=_shared(keys[a][1], keys[b][1]),
            expressions=_shared(keys[a][2], keys[b][2]),
        )
        for a, b in itertools.combinations(list(splits), 2)
    )
    return OverlapReport(splits=summaries, pairs=pairs)


# ---------------------------------------------------------------------------------------------
# The same item with different gold labels


@dataclass(frozen=True)
class LabelConflict:
    """One item (what the model is shown) that carries different gold labels, within a split or across splits.

    A model cannot be right on both copies; in training data such a pair teaches nothing and, across
    splits, scores a correct model as wrong. FLUTE train has one (train-4539 / train-5830).
    """

    item: str  # the premise / narrative, shortened, for people to find it
    records: tuple[tuple[str, str, str], ...]  # (split, record id, gold) for every labelled copy

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(sorted({s for s, _, _ in self.records}))

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "splits": list(self.splits), "records": [{"split": s, "id": i, "gold": g} for s, i, g in self.records]}

    def __str__(self) -> str:
        copies = "; ".join(f"{s}:{i} → {g!r}" for s, i, g in self.records)
        return f"{self.item!r}: {copies}"


def _gold(record: Record) -> str | None:
    """The gold as text (a cloze label is an index into options whose order may differ between copies)."""
    if getattr(record, "label_is_placeholder", False) or getattr(record, "label", None) is None:
        return None
    if isinstance(record, ClozeRecord):
        assert record.label is not None  # the getattr test above
        return normalise_text(record.options[record.label])
    if isinstance(record, NLIPair):
        return str(record.label)
    return None


def label_conflicts(splits: Mapping[str, Sequence[Record]]) -> list[LabelConflict]:
    """Items that occur more than once (compared as in ``item_key``) with more than one gold label."""
    copies: dict[str, list[tuple[str, Record, str]]] = {}
    for name, recs in splits.items():
        for r in recs:
            gold = _gold(r)
            if gold is not None:
                copies.setdefault(item_key(r), []).append((name, r, gold))
    out = []
    for group in copies.values():
        if len({g for _, _, g in group}) > 1:
            text = context_key(group[0][1])
            shown = text if len(text) <= 80 else text[:77] + "..."
            out.append(LabelConflict(shown, tuple((s, r.id, g) for s, r, g in group)))
    return out
