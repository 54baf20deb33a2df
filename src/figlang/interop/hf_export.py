"""`figlang export hf`: every split of a task as Parquet with a dataset card, and back into records.

The folder loads with ``datasets.load_dataset("parquet", data_dir=DIR)`` (one file per split,
``data/<split>-00000-of-00001.parquet``; its README's ``configs`` say the same for the Hub).
One row per figlang record, with the record's fields as columns: lists stay lists, ``inferences``
is a struct of lists, ``meta`` a JSON string whose ``file`` is relative to the data directory
(no machine paths in a dataset). :func:`records_from_rows` turns rows back into the records
figlang loads, equal field for field (``meta.file`` made absolute again when given ``data_dir``).

The card says where the data comes from (repository, pinned commit, license from
``resources/sources.json``), every field, and the quirks figlang checks: placeholder gold labels,
overlap between splits (shared items, contexts, idioms), the same item with contradictory gold
labels, and the load warnings (e.g. simile properties published as ``false``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError, LoadReport
from figlang.data.hygiene import detect_placeholder_labels, label_conflicts, overlap_report
from figlang.core.io import atomic_write
from figlang.core.context import RunContext, run_context
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record
from figlang.data.registry import Task, get_task
from figlang.data.sources import DatasetSource, load_sources

RECORD_TYPES: dict[str, type] = {"cloze": ClozeRecord, "nli": NLIPair, "generation": GenerationRecord}
FIELD_DOCS = {
    "id": "figlang's stable record id (`<kind>-<split>-<line-1>` for narratives)",
    "narrative": "the story, with the idiom/simile marked `<b>…</b>` as published (figlang's methods read it without the markup)",
    "options": "candidate continuations",
    "label": "gold: index into `options` (cloze) or `entailment` / `contradiction` / `non-entailment` (NLI); null when unknown",
    "expression": "the idiom or simile",
    "expression_type": "idiom | simile",
    "meaning": "the idiom's meaning or the simile's property",
    "inferences": "knowledge inferences per kind (`context`, `literal`), where published",
    "label_is_placeholder": "true where the gold label is a stand-in (hidden test labels): never score against it",
    "meta": "JSON: where the record came from (`file` relative to the data directory, `line`) and loader notes",
    "premise": "literal premise",
    "hypothesis": "figurative hypothesis",
    "explanation": "why (FLUTE's explanation)",
    "figure_type": "sarcasm | simile | metaphor | idiom",
    "pair_type": "how the pair was made (IMPLI)",
    "source": "source corpus (IMPLI) / the input text (generation)",
    "score": "IMPLI's metaphoricity score, where present",
    "references": "plausible continuations (generation references)",
}
SKIPPED_SPLITS = ("dev-disjoint", "train-disjoint", "selection", "train-fit")  # carved from train by figlang, not published splits


@dataclass
class HfExport:
    out_dir: Path
    splits: dict[str, int]  # split -> rows
    card: Path


def _pa_type(record_type: type, name: str, inference_kinds: Sequence[str]) -> Any:
    import pyarrow as pa

    if name in ("options", "references"):
        return pa.list_(pa.string())
    if name == "inferences":
        return pa.struct([(k, pa.list_(pa.string())) for k in inference_kinds]) if inference_kinds else pa.string()
    if name == "label":
        return pa.int64() if record_type is ClozeRecord else pa.string()
    if name == "label_is_placeholder":
        return pa.bool_()
    if name == "score":
        return pa.float64()
    return pa.string()


def _relative_file(meta: dict[str, Any], root: Path | None) -> dict[str, Any]:
    file = meta.get("file")
    if not file or root is None:
        return meta
    try:
        return {**meta, "file": Path(file).relative_to(root).as_posix()}
    except ValueError:
        return {**meta, "file": Path(file).name}


def record_row(record: Record, root: Path | None, inference_kinds: Sequence[str] = ()) -> dict[str, Any]:
    """One Parquet row: the record's fields, ``meta`` as JSON with its file relative to ``root``."""
    row = record.to_dict()
    row["meta"] = json.dumps(_relative_file(dict(record.meta), root), ensure_ascii=False, sort_keys=True)
    if "inferences" in row and inference_kinds:
        row["inferences"] = {k: row["inferences"].get(k) for k in inference_kinds}
    elif "inferences" in row:
        row["inferences"] = json.dumps(row["inferences"], ensure_ascii=False)
    return row


def records_from_rows(rows: Iterable[dict[str, Any]], shape: str, data_dir: str | Path | None = None) -> list[Record]:
    """Rows of an export (as ``datasets`` or pyarrow give them) back into figlang records."""
    if shape not in RECORD_TYPES:
        raise FiglangError(f"unknown task shape {shape!r}; one of {', '.join(RECORD_TYPES)}")
    cls = RECORD_TYPES[shape]
    names = [f.name for f in fields(cls)]
    root = Path(data_dir) if data_dir is not None else None
    out: list[Record] = []
    for row in rows:
        values = {k: row.get(k) for k in names}
        meta = json.loads(values.get("meta") or "{}")
        if root is not None and meta.get("file"):
            meta["file"] = str(root / meta["file"])
        values["meta"] = meta
        for key in ("options", "references"):
            if key in values:
                values[key] = tuple(values[key] or ())
        if "inferences" in values:
            inf = values["inferences"]
            inf = json.loads(inf) if isinstance(inf, str) else (inf or {})
            values["inferences"] = {k: tuple(v) for k, v in inf.items() if v is not None}
        values["label_is_placeholder"] = bool(values.get("label_is_placeholder"))
        out.append(cls(**values))
    return out


def _write_parquet(path: Path, rows: list[dict[str, Any]], record_type: type, inference_kinds: Sequence[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [f.name for f in fields(record_type)]
    schema = pa.schema([(n, _pa_type(record_type, n, inference_kinds)) for n in names])
    table = pa.Table.from_pylist(rows, schema=schema)
    with atomic_write(path, "wb") as f:
        pq.write_table(table, f)


def _hf_license(source: DatasetSource | None) -> str:
    text = (source.license if source else "").lower()
    if text.startswith("mit"):
        return "mit"
    if text.startswith("apache license 2.0"):
        return "apache-2.0"
    return "other"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _card_source(task: Task, sources: Sequence[DatasetSource]) -> list[str]:
    lines = ["## Source", ""]
    if sources:
        for s in sources:
            lines += [f"- **{s.title}**: [{s.owner}/{s.repo}]({s.github_url}) at commit `{s.commit}`", f"  - license: {s.license}"]
    else:
        lines.append(f"- a user task spec: `{Path(task.spec_path).name if task.spec_path else task.name}` (no published source recorded)")
    return lines


def _card_splits(splits: dict[str, list[Record]]) -> list[str]:
    """The card's table of splits: rows and label counts."""
    lines = ["", "## Splits", "", "| split | rows | labels |", "|---|---:|---|"]
    for split, recs in splits.items():
        counts: dict[str, int] = {}
        for r in recs:
            key = (
                "placeholder"
                if getattr(r, "label_is_placeholder", False)
                else str(getattr(r, "label", None) if not isinstance(r, GenerationRecord) else f"{len(r.references)} refs")
            )
            counts[key] = counts.get(key, 0) + 1
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        lines.append(f"| {split} | {len(recs)} | {_md_cell(shown)} |")
    return lines + ["", "Cloze labels are 0-based option indices."]


def _card_findings(splits: dict[str, list[Record]], reports: dict[str, LoadReport]) -> list[str]:
    """The quirks figlang's checks find (placeholder labels, overlap between splits, contradictory duplicates, loader
    notes, missing simile properties), one bullet each."""
    lines: list[str] = []
    for split, recs in splits.items():
        why = detect_placeholder_labels(recs) if recs else None
        if why:
            lines.append(f"- **Placeholder labels in `{split}`**: {why}.")
    if len(splits) > 1:
        report = overlap_report(splits)
        shared = [p for p in report.pairs if p.items.distinct or p.contexts.distinct or p.expressions.distinct]
        if shared:
            lines += [
                "- **Overlap between splits** (a model trained on one split has seen these items, contexts or "
                "idioms of the other; the official idiom dev shares its idioms with train, so dev accuracy "
                "overstates accuracy on unseen idioms; figlang offers expression-disjoint `dev-disjoint` / "
                "`train-disjoint` splits carved from train):",
                "",
                report.to_markdown(),
            ]
    conflicts = label_conflicts(splits)
    if conflicts:
        lines.append(f"- **The same item with contradictory gold labels** ({len(conflicts)}): a model cannot be right on both copies.")
        lines += [f"  - {_md_cell(c)}" for c in conflicts[:20]]
        if len(conflicts) > 20:
            lines.append(f"  - … and {len(conflicts) - 20} more")
    for split, rep in reports.items():
        if rep.warnings:
            lines.append(
                f"- **Loader notes for `{split}`** ({len(rep.warnings)}): "
                + _md_cell("; ".join(str(w) for w in rep.warnings[:5]))
                + (" …" if len(rep.warnings) > 5 else "")
            )
    missing = sum(1 for recs in splits.values() for r in recs if isinstance(r, ClozeRecord) and r.meta.get("property_missing"))
    if missing:
        lines.append(f"- {missing} simile record(s) publish `property` as the boolean `false`: `meaning` is null there.")
    return lines


def dataset_card(task: Task, splits: dict[str, list[Record]], reports: dict[str, LoadReport], sources: Sequence[DatasetSource]) -> str:
    """The README.md: front matter for the Hub, then source, license, fields, splits and the quirks figlang found."""
    lines = [
        "---",
        f"license: {_hf_license(sources[0] if sources else None)}",
        "language:",
        "- en",
        "configs:",
        "- config_name: default",
        "  data_files:",
    ]
    for split in splits:
        lines += [f"  - split: {split}", f"    path: data/{split}-00000-of-00001.parquet"]
    lines += [
        "---",
        "",
        f"# figlang: {task.name}",
        "",
        task.description,
        "",
        f"Exported by `figlang export hf {task.name}`; shape **{task.shape}**. Load it with",
        "",
        "```python",
        "import datasets",
        'ds = datasets.load_dataset("parquet", data_dir="THIS_FOLDER")',
        "",
        "from figlang.interop.hf_export import records_from_rows",
        f'records = records_from_rows(ds["{next(iter(splits))}"], "{task.shape}")  # figlang records again',
        "```",
        "",
    ]
    lines += _card_source(task, sources)
    lines += _card_splits(splits)
    lines += ["", "## Fields", "", "| field | meaning |", "|---|---|"]
    for f in fields(RECORD_TYPES[task.shape]):
        lines.append(f"| `{f.name}` | {_md_cell(FIELD_DOCS.get(f.name, ''))} |")
    lines += ["", "## Known quirks and hygiene findings", ""]
    found = _card_findings(splits, reports)
    lines += found or ["- none found by figlang's checks (placeholder labels, overlap between splits, contradictory duplicates)."]
    return "\n".join(lines) + "\n"


def export_hf(
    task: str | Task,
    out_dir: str | Path,
    data_dir: str | Path | None = None,
    splits: Sequence[str] | None = None,
    *,
    ctx: RunContext | None = None,
) -> HfExport:
    """Write ``data/<split>-00000-of-00001.parquet`` for every split and ``README.md`` (the dataset card), read from
    the run context's data folder (or from ``data_dir``)."""
    t = get_task(task) if isinstance(task, str) else task
    wanted = list(splits) if splits else [s for s in t.splits if s not in SKIPPED_SPLITS]
    for s in wanted:
        t.check_split(s)
    ctx = run_context(ctx, data_dir=data_dir)  # once: the splits and the rows' relative paths share it
    root = ctx.data_dir if t.spec_path is None else Path(t.spec_path).parent
    loaded: dict[str, list[Record]] = {}
    reports: dict[str, LoadReport] = {}
    for s in wanted:
        reports[s] = LoadReport()
        loaded[s] = t.load(s, ctx, report=reports[s])
    record_type = RECORD_TYPES[t.shape]
    kinds = sorted({k for recs in loaded.values() for r in recs for k in getattr(r, "inferences", {})})
    out = Path(out_dir)
    counts = {}
    for s, recs in loaded.items():
        _write_parquet(out / "data" / f"{s}-00000-of-00001.parquet", [record_row(r, root, kinds) for r in recs], record_type, kinds)
        counts[s] = len(recs)
    known = load_sources()
    sources = [known[d] for d in t.datasets if d in known]
    card = out / "README.md"
    with atomic_write(card) as f:
        f.write(dataset_card(t, loaded, reports, sources))
    return HfExport(out, counts, card)
