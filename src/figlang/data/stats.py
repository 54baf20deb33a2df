"""Dataset statistics: what a researcher checks before trusting a benchmark number."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, cast

from figlang.core.context import RunContext, run_context
from figlang.core.errors import DataError, LoadReport
from figlang.data.flute import SELECTION_SPLITS
from figlang.data.hygiene import LabelConflict, OverlapReport, detect_placeholder_labels, label_conflicts, overlap_report
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record, expression_of
from figlang.data.task import Task

DEFAULT_TASKS = ("idiom-cloze", "simile-cloze", "flute", "impli")


@dataclass
class SplitStats:
    task: str
    split: str
    records: int
    expressions: int
    labels: dict[str, int]
    mean_words: dict[str, float]
    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    placeholder: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class TaskStats:
    task: str
    shape: str
    splits: list[SplitStats]
    overlap: OverlapReport | None = None
    conflicts: list[LabelConflict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["overlap"] = self.overlap.to_dict() if self.overlap is not None else None
        d["conflicts"] = [c.to_dict() for c in self.conflicts]
        return d


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


def _label_name(record: Record) -> str:
    if isinstance(record, ClozeRecord):
        return "unknown" if record.label is None else f"option{record.label + 1}"
    if isinstance(record, NLIPair):
        return record.label or "unlabeled"
    return f"{len(record.references)} refs"


def _mean_words(records: list[Record]) -> dict[str, float]:
    if not records:
        return {}
    # a split's records are all of one shape: the first record's (casts below)
    first = records[0]
    if isinstance(first, ClozeRecord):
        cloze = cast(list[ClozeRecord], records)
        return {
            "narrative": round(mean(_words(r.context) for r in cloze), 1),
            "option": round(mean(_words(o) for r in cloze for o in r.options), 1),
        }
    if isinstance(first, NLIPair):
        pairs = cast(list[NLIPair], records)
        return {
            "premise": round(mean(_words(r.premise) for r in pairs), 1),
            "hypothesis": round(mean(_words(r.hypothesis) for r in pairs), 1),
        }
    assert isinstance(first, GenerationRecord)
    generation = cast(list[GenerationRecord], records)
    refs = [ref for r in generation for ref in r.references]
    return {
        "source": round(mean(_words(r.source) for r in generation), 1),
        "reference": round(mean(map(_words, refs)), 1) if refs else 0.0,
    }


def split_stats(task: Task, split: str, records: list[Record], report: LoadReport | None = None) -> SplitStats:
    groups: dict[str, dict[str, int]] = {}
    for name in task.group_by:
        counts = Counter(f"{getattr(r, name, None) or 'n/a'} / {_label_name(r)}" for r in records)
        groups[name] = dict(sorted(counts.items()))
    return SplitStats(
        task=task.name,
        split=split,
        records=len(records),
        expressions=len({e for r in records if (e := expression_of(r))}),
        labels=dict(sorted(Counter(_label_name(r) for r in records).items())),
        mean_words=_mean_words(records),
        groups=groups,
        placeholder=detect_placeholder_labels(records) if records else None,
        warnings=[str(w) for w in (report.warnings if report else [])],
    )


def task_stats(
    task: Task,
    data_dir: str | Path | None = None,
    splits: list[str] | None = None,
    overlap: bool = True,
    *,
    ctx: RunContext | None = None,
) -> TaskStats:
    """Statistics of every split of a task, and the overlap between its splits (read from the run context's data
    folder, or from ``data_dir``)."""
    ctx = run_context(ctx, data_dir=data_dir)  # once: every split from the same folder
    loaded: dict[str, list[Record]] = {}
    out: list[SplitStats] = []
    official = [s for s in task.splits if "disjoint" not in s and s not in SELECTION_SPLITS]  # not the ones carved from train
    for split in splits or official:
        report = LoadReport()
        try:
            records = task.load(split, ctx, report=report)
        except DataError as err:
            out.append(SplitStats(task.name, split, 0, 0, {}, {}, error=str(err)))
            continue
        loaded[split] = records
        out.append(split_stats(task, split, records, report))
    over = overlap_report(loaded) if overlap and len(loaded) > 1 else None
    return TaskStats(task=task.name, shape=task.shape, splits=out, overlap=over, conflicts=label_conflicts(loaded))
