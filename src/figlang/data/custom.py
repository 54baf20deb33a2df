"""User-defined tasks: a small YAML/JSON spec maps a user's columns onto one of the three shapes.

A spec turns into an ordinary :class:`~figlang.data.registry.Task`, so everything that takes a
built-in task name (the CLI, the harness) also takes ``path/to/spec.yaml``. Two kinds of check
happen, both with errors that say what to change:

* the spec itself, when it is read (unknown shape or key, with a "did you mean"; a required
  column not mapped; a label mapping onto nothing), located by spec line where YAML allows;
* every data row, when a split is loaded (missing column, empty field, label outside the declared
  set, bad encoding, malformed JSON, empty file), located by file and physical line. Strict loads
  raise the first :class:`DataError`; lenient loads skip the row and record it in the report.

Relative data paths resolve against the spec's folder; a path starting with ``{data_dir}`` resolves
against the data directory given to ``Task.load`` (then ``$FIGLANG_DATA_DIR``, then the cache),
so a spec can also describe files of the shared datasets. Run ``write_task_spec_template(shape)``
for a commented starter spec.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, cast, overload


from figlang.core.errors import DataError, DataNotFoundError, FiglangError, LoadOptions
from figlang.core.io import parse_json_line
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record
from figlang.data.task import Task
from figlang.data.custom_spec import (
    DATA_DIR_PREFIX,
    GOLD_ROLE,
    ROLES,
    SHAPES,
    ClozeLabels,
    ColumnRef,
    TaskSpec,
    _did_you_mean,
    _norm_key,
    read_task_spec,
)


def load_task_spec(path: str | Path) -> Task:
    """A user task from a YAML/JSON spec: an ordinary Task with ``spec_path`` set."""
    spec = read_task_spec(path)

    def files_for(split: str, root: Path) -> list[Path]:
        return [_resolve(spec, f, root) for f in spec.splits[split]]

    def loader(split: str, root: Path, options: LoadOptions) -> list[Record]:
        return load_split(spec, split, root, options)

    return Task(
        name=spec.name,
        shape=spec.shape,  # type: ignore[arg-type]
        description=spec.description,
        splits=tuple(spec.splits),
        loader=loader,
        files_for=files_for,
        default_split=spec.default_split,
        labels=spec.labels,
        group_by=spec.group_by,
        spec_path=str(spec.path),
        extra={"spec": spec},
    )


# --------------------------------------------------------------------------------------------
# Loading rows


def _resolve(spec: TaskSpec, written: str, root: Path | None) -> Path:
    """A spec's file path: ``{data_dir}/…`` under ``root`` (the data directory the caller resolved), a
    relative path under the spec's folder. Links are not resolved (figlang reports paths as given)."""
    if written.startswith(DATA_DIR_PREFIX):
        if root is None:
            raise DataError(
                f"task {spec.name!r}: the path {written!r} is under the data folder, and none was given",
                spec.folder,
                hint="pass the data folder (--data-dir DIR; from Python, root= or a run context)",
            )
        rest = written[len(DATA_DIR_PREFIX) :].lstrip("/\\")
        return root / rest
    p = Path(written).expanduser()
    return p if p.is_absolute() else spec.folder / p


def _decode(path: Path, encoding: str, options: LoadOptions) -> tuple[str, set[int]] | None:
    """The file's text and the lines that could not be decoded (lenient: blanked and reported, the rest kept)."""
    if not path.exists():
        raise DataNotFoundError("data file not found", path, hint="paths in a spec are relative to the spec's folder")
    raw = path.read_bytes()
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8") and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a byte-order mark (Excel's CSV export)
    if not raw.strip():
        options.fail(DataError("file is empty", path, hint="a split file needs at least one record"))
        return None
    try:
        return raw.decode(encoding), set()
    except UnicodeDecodeError:
        pass
    lines = raw.split(b"\n")
    out: list[str] = []
    bad: set[int] = set()
    for number, line in enumerate(lines, start=1):
        try:
            out.append(line.decode(encoding))
        except UnicodeDecodeError as exc:
            options.fail(
                DataError(
                    f"cannot decode byte 0x{line[exc.start]:02x} as {encoding}",
                    path,
                    number,
                    hint="the file has another encoding: convert it to UTF-8 or set `encoding:` in the spec (e.g. cp1252)",
                )
            )
            out.append("")
            bad.add(number)
    return "\n".join(out), bad


def _physical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) split on newlines only: str.splitlines would also split on U+2028 etc. inside JSON strings."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.rstrip("\r")


Row = tuple[int, "dict[ColumnRef, Any] | None"]  # (line, values); None: a row already reported and skipped


def _iter_rows(spec: TaskSpec, path: Path, fmt: str, options: LoadOptions) -> Iterator[Row]:
    """Every data row of a file, bad ones as (line, None) so that row indexes (and default ids) stay stable."""
    decoded = _decode(path, spec.encoding, options)
    if decoded is None:
        return
    text, bad = decoded
    if fmt == "jsonl":
        yield from _jsonl_rows(path, text, bad, options)
    elif fmt == "tsv":
        yield from _table_rows(spec, path, "tsv", _tsv_records(text, bad), options)
    else:
        yield from _table_rows(spec, path, "csv", _csv_records(text, bad), options)


def _jsonl_rows(path: Path, text: str, bad: set[int], options: LoadOptions) -> Iterator[Row]:
    seen = False
    for number, line in _physical_lines(text):
        if number in bad:
            yield number, None
            continue
        if not line.strip():
            continue
        seen = True
        obj, problem = parse_json_line(line)
        if problem is not None:  # then obj is None
            hint = "each line must be one complete JSON object" if problem.startswith("malformed") else None
            options.fail(DataError(problem, path, number, hint=hint))
        yield number, cast("dict[ColumnRef, Any] | None", obj)  # a JSON object's keys are column names
    if not seen and not bad:
        options.fail(DataError("file has no records", path))


def _tsv_records(text: str, bad: set[int]) -> Iterator[tuple[int, list[str] | None]]:
    for number, line in _physical_lines(text):
        if number in bad:
            yield number, None
        elif line.strip():
            yield number, line.split("\t")  # quoting disabled: '"' is an ordinary character


def _csv_records(text: str, bad: set[int]) -> Iterator[tuple[int, list[str] | None]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    previous = 0
    for cells in reader:
        start, previous = previous + 1, reader.line_num  # a quoted field may span lines: report where it starts
        if start in bad:
            yield start, None
        elif cells and any(c.strip() for c in cells):
            yield start, cells


def _table_rows(
    spec: TaskSpec, path: Path, fmt: str, records: Iterator[tuple[int, list[str] | None]], options: LoadOptions
) -> Iterator[Row]:
    try:
        first = next(records)
        leading: list[tuple[int, list[str] | None]] = []
        while first[1] is None:  # undecodable lines before the first row (already reported)
            leading.append((first[0], None))
            first = next(records)
    except StopIteration:
        options.fail(DataError("file has no rows", path))
        return
    except csv.Error as exc:
        options.fail(DataError(f"malformed CSV ({exc})", path, 1))
        return
    header: list[ColumnRef]
    if spec.header:
        header_line, cells = first
        header = [c.strip() for c in cells or ()]
        dupes = sorted({c for c in header if header.count(c) > 1})
        if dupes:
            options.fail(DataError(f"the header names {', '.join(map(repr, dupes))} more than once", path, header_line))
            return
        wanted = _mapped_refs(spec)
        missing = [r for r in wanted if r not in header]
        if missing:
            hints = "; ".join(f"{r!r}: {_did_you_mean(str(r), [str(h) for h in header]) or 'no close match'}".rstrip("? ") for r in missing)
            options.fail(
                DataError(
                    f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                    f"(the header has: {', '.join(map(str, header))})",
                    path,
                    header_line,
                    hint=f"fix `columns:` in the spec ({hints})",
                )
            )
            return
        body: Iterator[tuple[int, list[str] | None]] = records
    else:
        width = len(first[1] or ())
        header = list(range(width))

        def with_first() -> Iterator[tuple[int, list[str] | None]]:
            yield from leading
            yield first
            yield from records

        body = with_first()
        too_far = [r for r in _mapped_refs(spec) if isinstance(r, int) and r >= width]
        if too_far:
            options.fail(
                DataError(f"the spec maps column {too_far[0]} but the first row has only {width} columns (0-based)", path, first[0])
            )
            return
    any_rows = False
    while True:
        try:
            number, cells = next(body)
        except StopIteration:
            break
        except csv.Error as exc:
            options.fail(DataError(f"malformed CSV ({exc})", path))
            return
        any_rows = True
        if cells is None:
            yield number, None
            continue
        if len(cells) != len(header):
            hint = (
                "a missing or extra tab (TSV fields cannot contain tabs)"
                if fmt == "tsv"
                else "a missing or extra comma; a field holding commas, quotes or newlines must be quoted"
            )
            options.fail(DataError(f"expected {len(header)} columns, found {len(cells)}", path, number, hint=hint))
            yield number, None
            continue
        yield number, dict(zip(header, cells))
    if not any_rows:
        options.fail(DataError("file has a header row but no data rows", path))


def _mapped_refs(spec: TaskSpec) -> list[ColumnRef]:
    refs: list[ColumnRef] = []
    for ref in spec.columns.values():
        refs.extend(ref if isinstance(ref, tuple) else (ref,))
    refs.extend(spec.meta)
    return list(dict.fromkeys(refs))


class _Row:
    """One data row with the checks every field read makes (missing column, empty value, wrong type)."""

    def __init__(self, values: dict[ColumnRef, Any], path: Path, line: int):
        self.values, self.path, self.line = values, path, line

    def error(self, message: str, hint: str | None = None) -> DataError:
        return DataError(message, self.path, self.line, hint)

    def get(self, ref: ColumnRef, role: str) -> Any:
        if ref not in self.values:
            present = ", ".join(map(str, self.values)) or "none"
            raise self.error(
                f"missing column {ref!r} (mapped as {role}; fields present: {present})",
                hint=_did_you_mean(str(ref), [str(k) for k in self.values]).strip() or None,
            )
        return self.values[ref]

    def label(self, ref: ColumnRef) -> tuple[Any, str]:
        """The row's label as written and as a lookup key; an empty one is an error."""
        raw = self.get(ref, "label")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            raise self.error(f"empty label (column {ref!r})", hint="fill it in, or list this split under `unlabeled_splits`")
        return raw, _norm_key(raw)

    @overload
    def text(self, ref: ColumnRef, role: str, required: Literal[True] = True) -> str: ...
    @overload
    def text(self, ref: ColumnRef, role: str, required: bool) -> str | None: ...
    def text(self, ref: ColumnRef, role: str, required: bool = True) -> str | None:
        value = self.get(ref, role)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise self.error(f"empty {role} (column {ref!r})", hint="fill it in, or load leniently to skip this row")
            return None
        if role == "id" and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise self.error(f"{role} (column {ref!r}) should be text, got {type(value).__name__} {value!r}")

    def text_list(self, refs: ColumnRef | tuple[ColumnRef, ...], role: str, min_items: int) -> list[str]:
        """Several columns, or one column holding a list (a JSON list in CSV/TSV)."""
        if isinstance(refs, tuple):
            # every option column must be filled; extra reference columns may be empty (rows with fewer references)
            texts = [self.text(r, role, required=(role == "options")) for r in refs]
            items = [t for t in texts if t is not None]
        else:
            value = self.get(refs, role)
            if isinstance(value, str):
                stripped = value.strip()
                if stripped.startswith("["):
                    try:
                        value = json.loads(stripped)
                    except json.JSONDecodeError as exc:
                        if role == "options":
                            raise self.error(f"{role} (column {refs!r}) is not a valid JSON list ({exc.msg})") from None
                        value = [value]  # a single reference that merely starts with '['
                elif role == "options":
                    raise self.error(
                        f"options (column {refs!r}) should hold a list, got a single string",
                        hint="map `options:` to a list of columns, or store a JSON list in this column",
                    )
                else:
                    value = [value]
            if not isinstance(value, list):
                raise self.error(f"{role} (column {refs!r}) should be a list of strings, got {type(value).__name__}")
            items = []
            for i, item in enumerate(value):
                if not isinstance(item, str) or not item.strip():
                    raise self.error(
                        f"{role} (column {refs!r}) item {i} is {'empty' if isinstance(item, str) or item is None else type(item).__name__}"
                    )
                items.append(item.strip())
        if len(items) < min_items:
            raise self.error(f"{role} needs at least {min_items} non-empty value{'s' if min_items > 1 else ''}, found {len(items)}")
        return items


def _cloze_label(row: _Row, spec: TaskSpec, ref: ColumnRef, n_options: int) -> int:
    rule = spec.cloze_labels or ClozeLabels("zero-based")
    raw, key = row.label(ref)
    # the option columns when the options are several columns (what `labels: option-name` requires); None for one
    # list-valued column, whose name must not be read as a sequence of column names (it would be read letter by letter)
    given = spec.columns.get("options")
    option_cols: tuple[ColumnRef, ...] | None = tuple(given) if isinstance(given, (tuple, list)) else None
    if rule.kind == "map":
        if key not in rule.mapping:
            raise row.error(
                f"label {raw!r} is not in the declared label set ({rule.declared()})",
                hint="add it to `labels:` in the spec, or fix the row",
            )
        index = rule.mapping[key]
    elif rule.kind == "option-name":
        names = {_norm_key(c): i for i, c in enumerate(option_cols or ())}
        if key not in names:
            raise row.error(f"label {raw!r} names none of the option columns ({', '.join(map(str, option_cols or ()))})")
        index = names[key]
    else:
        if isinstance(raw, bool) or not (isinstance(raw, int) or key.lstrip("-").isdigit()):
            hint = (
                "declare `labels: option-name`"
                if option_cols and key in {_norm_key(c) for c in option_cols if isinstance(c, str)}
                else "declare a mapping under `labels:` from your label values to 0-based option indexes"
            )
            raise row.error(f"label {raw!r} is not an integer ({rule.kind} option index)", hint=hint)
        index = int(key) - (1 if rule.kind == "one-based" else 0)
    if not 0 <= index < n_options:
        shown = index + (1 if rule.kind == "one-based" else 0)
        raise row.error(
            f"label {raw!r} is outside the declared set: option {shown} of {n_options} "
            f"({rule.kind if rule.kind != 'map' else 'mapped'}, {'1' if rule.kind == 'one-based' else '0'}-based)",
            hint="if your labels count from 1, declare `labels: one-based`" if rule.kind == "zero-based" and index == n_options else None,
        )
    return index


def _nli_label(row: _Row, spec: TaskSpec, ref: ColumnRef) -> str:
    raw, key = row.label(ref)
    if key not in spec.nli_labels:
        raise row.error(
            f"label {raw!r} is outside the declared label set ({', '.join(repr(k) for k in spec.nli_labels)})",
            hint="add it to `labels:` in the spec, or fix the row",
        )
    return spec.nli_labels[key]


def _make_record(spec: TaskSpec, row: _Row, split: str, index: int, labeled: bool, written: str) -> Record:
    cols = spec.columns

    def one(role: str) -> ColumnRef:
        """The column of a one-column role (the spec takes a list of columns only for options and references)."""
        return cast(ColumnRef, cols[role])

    def optional() -> dict[str, Any]:
        """The shape's optional roles (all but id: expression, meaning, explanation …), None where not mapped."""
        roles = [role for role, required in ROLES[spec.shape].items() if not required and role != "id"]
        return {role: row.text(one(role), role, required=False) if role in cols else None for role in roles}

    rid = row.text(one("id"), "id") if "id" in cols else f"{split}-{index}"
    meta: dict[str, Any] = {"file": written, "line": row.line}
    for ref in spec.meta:
        meta[str(ref)] = row.get(ref, "meta")
    if spec.shape == "cloze":
        narrative = row.text(one("context"), "context")
        options = row.text_list(cols["options"], "options", min_items=2)
        label = _cloze_label(row, spec, one("label"), len(options)) if labeled else None
        return ClozeRecord(
            id=rid,
            narrative=narrative,
            options=tuple(options),
            label=label,
            meta=meta,
            **optional(),
        )
    if spec.shape == "nli":
        premise = row.text(one("premise"), "premise")
        hypothesis = row.text(one("hypothesis"), "hypothesis")
        nli_label = _nli_label(row, spec, one("label")) if labeled else None
        return NLIPair(
            id=rid,
            premise=premise,
            hypothesis=hypothesis,
            label=nli_label,
            meta=meta,
            **optional(),
        )
    source = row.text(one("source"), "source")
    references = tuple(row.text_list(cols["references"], "references", min_items=1)) if labeled else ()
    return GenerationRecord(
        id=rid,
        source=source,
        references=references,
        meta=meta,
        **optional(),
    )


def load_split(spec: TaskSpec, split: str, root: Path | None = None, options: LoadOptions | None = None) -> list[Record]:
    """Every record of one split (all its files, in order); bad rows raise or go to ``options.report``."""
    options = options or LoadOptions()
    if split not in spec.splits:
        raise FiglangError(f"task {spec.name!r} has no split {split!r}; its splits are: {', '.join(spec.splits)}")
    gold_role = GOLD_ROLE[spec.shape]
    labeled = split not in spec.unlabeled_splits and gold_role in spec.columns
    records: list[Record] = []
    seen_ids: dict[str, str] = {}
    index = 0
    for written in spec.splits[split]:
        path = _resolve(spec, written, root)  # a ``{data_dir}/…`` path needs a root
        for line, values in _iter_rows(spec, path, spec.formats[written], options):
            index += 1  # counts skipped rows too, so default ids stay stable when a lenient load skips one
            if values is None:
                continue
            row = _Row(values, path, line)
            try:
                record = _make_record(spec, row, split, index - 1, labeled, written)
                if record.id in seen_ids:
                    raise row.error(
                        f"duplicate id {record.id!r} (first at {seen_ids[record.id]})", hint="ids must be unique within a split"
                    )
            except DataError as exc:
                options.fail(exc)
                continue
            seen_ids[record.id] = f"{path}:{line}"
            records.append(record)
    return records


# --------------------------------------------------------------------------------------------
# Starter specs

_TEMPLATES = {
    "cloze": """\
# A figlang task spec (multiple choice: a context and N candidate continuations).
# Load it anywhere a task name is accepted: `figlang ... --task path/to/this.yaml`.
name: my-idioms
description: Idiom story cloze on my own data
shape: cloze
format: jsonl            # jsonl | csv | tsv (inferred from each file's extension if left out)
# encoding: utf-8        # e.g. cp1252 for Windows files
# header: true           # csv/tsv: false when the files have no header row (then columns are 0-based positions)
splits:                  # relative paths resolve against this file's folder; '{data_dir}/...' against the data dir
  train: data/train.jsonl
  dev: data/dev.jsonl
# unlabeled_splits: [test]   # splits whose gold labels are not in the file
columns:
  context: story         # the narrative / context
  options: [ending1, ending2, ending3]   # option columns, or one column holding a (JSON) list
  label: answer
  expression: idiom      # optional: enables expression-disjoint splits and per-expression scores
  meaning: definition    # optional
  id: uid                # optional: default ids are '<split>-<row index>'
# How raw labels become option indexes: zero-based (0 = first option; the default), one-based,
# option-name (the label is the option's column name), or a mapping to 0-based indexes / option columns:
labels: {ending1: 0, ending2: 1, ending3: 2}
""",
    "nli": """\
# A figlang task spec (NLI: premise, hypothesis, label, optional explanation).
name: my-figurative-nli
description: Figurative NLI on my own data
shape: nli
format: csv              # jsonl | csv | tsv (inferred from each file's extension if left out)
splits:
  train: data/train.csv
  test: data/test.csv
# unlabeled_splits: [test]
columns:
  premise: premise
  hypothesis: hypothesis
  label: label
  explanation: explanation   # optional
  figure_type: type          # optional: sarcasm | simile | metaphor | idiom | your own; scores are broken down by it
  # pair_type: how_made      # optional
  # expression: idiom        # optional
  # id: id                   # optional
# The label set: map your raw values (matched case-insensitively) onto entailment / contradiction / non-entailment.
labels:
  Entailment: entailment
  Contradiction: contradiction
""",
    "generation": """\
# A figlang task spec (generation: a source text and one or more references).
name: my-continuations
description: Continue a story that ends in a figurative expression
shape: generation
format: jsonl            # jsonl | csv | tsv (inferred from each file's extension if left out)
splits:
  train: data/train.jsonl
  test: data/test.jsonl
columns:
  source: narrative
  references: continuation   # one column (text, or a list), or a list of columns: [ref1, ref2]
  # expression: idiom        # optional
  # meaning: meaning         # optional
  # id: id                   # optional
""",
}


def write_task_spec_template(shape: str = "cloze") -> str:
    """A commented starter spec for ``shape`` (what ``figlang data spec-template`` prints)."""
    if shape not in _TEMPLATES:
        raise FiglangError(f"unknown shape {shape!r}; {_did_you_mean(shape, SHAPES)}choose one of: {', '.join(SHAPES)}")
    return _TEMPLATES[shape]


__all__ = ["SHAPES", "TaskSpec", "load_split", "load_task_spec", "read_task_spec", "write_task_spec_template"]
