"""Typed records for the three task shapes every figlang task has.

* ``ClozeRecord``: a narrative and N candidate continuations (the narrative benchmark's
  discriminative task; N=2 there, any N for user tasks).
* ``NLIPair``: premise, hypothesis, label, optional explanation (FLUTE, IMPLI).
* ``GenerationRecord``: a source text and one or more references (the narrative
  benchmark's generative task, or any user generation task).

Records are frozen dataclasses: methods and metrics read them, only loaders make them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from figlang.core.errors import FiglangError
from figlang.core.text import normalise_spacing, strip_markup

Shape = Literal["cloze", "nli", "generation"]

ENTAILMENT = "entailment"
CONTRADICTION = "contradiction"
NON_ENTAILMENT = "non-entailment"
NLI_LABELS = (ENTAILMENT, CONTRADICTION, NON_ENTAILMENT)


@dataclass(frozen=True)
class ClozeRecord:
    id: str
    narrative: str
    options: tuple[str, ...]
    label: int | None  # index of the plausible option; None when unknown
    expression: str | None = None  # the idiom or simile the narrative ends in
    expression_type: str | None = None  # "idiom" | "simile" | user-defined
    meaning: str | None = None  # idiom meaning or simile property
    inferences: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kind -> inferences
    label_is_placeholder: bool = False  # gold label is a stand-in (hidden test labels)
    meta: dict[str, Any] = field(default_factory=dict)

    shape = "cloze"

    @property
    def reference(self) -> str | None:
        """The plausible continuation: the generative task's reference."""
        if self.label is None or self.label_is_placeholder:
            return None
        return self.options[self.label]

    @property
    def context(self) -> str:
        """The narrative with the expression's HTML markup (``<b>…</b>``) removed."""
        return strip_markup(self.narrative)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["options"] = list(self.options)
        d["inferences"] = {k: list(v) for k, v in self.inferences.items()}
        return d


@dataclass(frozen=True)
class NLIPair:
    id: str
    premise: str
    hypothesis: str
    label: str | None  # one of NLI_LABELS; None when unknown (unlabeled test)
    explanation: str | None = None
    figure_type: str | None = None  # sarcasm | simile | metaphor | idiom
    pair_type: str | None = None  # how the pair was made (IMPLI: fig_context, manual, ...)
    source: str | None = None  # source corpus (IMPLI: magpie, pie, semeval, ...)
    expression: str | None = None  # the idiom, where known
    score: float | None = None  # IMPLI's metaphoricity score column, where present
    label_is_placeholder: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    shape = "nli"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenerationRecord:
    id: str
    source: str  # the input text (for the narrative task: the narrative)
    references: tuple[str, ...]
    expression: str | None = None
    expression_type: str | None = None
    meaning: str | None = None
    inferences: dict[str, tuple[str, ...]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    shape = "generation"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["references"] = list(self.references)
        d["inferences"] = {k: list(v) for k, v in self.inferences.items()}
        return d


Record = ClozeRecord | NLIPair | GenerationRecord


def expression_of(record: Record) -> str | None:
    """The figurative expression a record is about, normalised for grouping (lower case, single spaces)."""
    expr = getattr(record, "expression", None)
    if not expr:
        return None
    return normalise_spacing(str(expr))


def records_with_ids(records: Sequence[Record], ids: Sequence[str]) -> list[Record]:
    """The records of ``ids``, in the order given; an id that no record has is refused, naming it (and how many there are)."""
    by_id = {r.id: r for r in records}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise FiglangError(f"no record with id {', '.join(map(repr, missing))} in these {len(records):,} records")
    return [by_id[i] for i in ids]
