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
import difflib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import DataError, DataNotFoundError, FiglangError, LoadOptions
from .io import parse_json_line
from .records import NLI_LABELS, ClozeRecord, GenerationRecord, NLIPair, Record
from .task import Task

SHAPES = ("cloze", "nli", "generation")
FORMATS = ("jsonl", "csv", "tsv")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv"}
SPEC_KEYS = (
    "name",
    "description",
    "shape",
    "format",
    "encoding",
    "header",
    "splits",
    "default_split",
    "columns",
    "labels",
    "unlabeled_splits",
    "meta",
    "group_by",
)
# role -> whether it must be mapped (label/references are required unless every split is unlabeled)
ROLES: dict[str, dict[str, bool]] = {
    "cloze": {
        "context": True,
        "options": True,
        "label": True,
        "expression": False,
        "expression_type": False,
        "meaning": False,
        "id": False,
    },
    "nli": {
        "premise": True,
        "hypothesis": True,
        "label": True,
        "explanation": False,
        "figure_type": False,
        "pair_type": False,
        "expression": False,
        "id": False,
    },
    "generation": {"source": True, "references": True, "expression": False, "expression_type": False, "meaning": False, "id": False},
}
GOLD_ROLE = {"cloze": "label", "nli": "label", "generation": "references"}
LIST_ROLES = ("options", "references")  # roles that take a list of columns or one list-valued column
GROUPABLE = {
    "cloze": ("expression", "expression_type"),
    "nli": ("figure_type", "pair_type", "expression"),
    "generation": ("expression", "expression_type"),
}
CLOZE_LABEL_KINDS = ("zero-based", "one-based", "option-name")
DATA_DIR_PREFIX = "{data_dir}"

ColumnRef = str | int  # a header name, or a 0-based position when the files have no header row


def _did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _norm_key(value: Any) -> str:
    """How raw label values are compared: as text, case-insensitively, 1.0 == 1."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().casefold()


@dataclass(frozen=True)
class ClozeLabels:
    """How a raw cloze label becomes an option index: a declared mapping or a rule."""

    kind: str  # "map" | "zero-based" | "one-based" | "option-name"
    mapping: dict[str, int] = field(default_factory=dict)  # normalised raw value -> 0-based option index

    def declared(self) -> str:
        if self.kind == "map":
            return ", ".join(repr(k) for k in self.mapping)
        return self.kind


@dataclass(frozen=True)
class TaskSpec:
    """A validated task spec (what ``load_task_spec`` builds its Task from)."""

    path: Path
    name: str
    shape: str
    description: str
    splits: dict[str, tuple[str, ...]]
    formats: dict[str, str]  # data path as written -> jsonl | csv | tsv
    encoding: str
    header: bool
    columns: dict[str, ColumnRef | tuple[ColumnRef, ...]]
    cloze_labels: ClozeLabels | None
    nli_labels: dict[str, str]  # normalised raw value -> canonical NLI label
    unlabeled_splits: tuple[str, ...]
    meta: tuple[ColumnRef, ...]
    group_by: tuple[str, ...]
    default_split: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def labels(self) -> tuple[str, ...]:
        """The declared NLI label set, in figlang's canonical order (empty for other shapes)."""
        return tuple(lab for lab in NLI_LABELS if lab in set(self.nli_labels.values()))


# --------------------------------------------------------------------------------------------
# Reading and validating the spec


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """1-based line of every mapping key in a YAML document, so spec errors can point at a line."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return lines

    def walk(node: Any, prefix: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                path = prefix + (str(key.value),)
                lines[path] = key.start_mark.line + 1
                walk(value, path)

    walk(root, ())
    return lines


class _SpecReader:
    """Validates a parsed spec dictionary, raising DataErrors that name the spec key (and line)."""

    def __init__(self, raw: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int]):
        self.raw = raw
        self.path = path
        self.lines = lines

    def error(self, message: str, *key: str, hint: str | None = None) -> DataError:
        line = None
        for end in range(len(key), 0, -1):  # the deepest key we know a line for
            line = self.lines.get(tuple(key[:end]))
            if line is not None:
                break
        where = f"`{'.'.join(key)}`: " if key else ""
        return DataError(where + message, self.path, line, hint)

    def read(self) -> TaskSpec:
        raw = self.raw
        for key in raw:
            if key not in SPEC_KEYS:
                raise self.error(
                    f"unknown key {key!r}; {_did_you_mean(key, SPEC_KEYS)}the keys a spec may have are: {', '.join(SPEC_KEYS)}",
                    str(key),
                )
        name = self._str("name", default=self.path.stem)
        shape = self._shape()
        description = self._str("description", default=f"user-defined {shape} task from {self.path.name}")
        encoding = self._str("encoding", default="utf-8")
        try:
            "".encode(encoding)
        except LookupError:
            raise self.error(f"unknown encoding {encoding!r}", "encoding", hint="use a Python codec name such as utf-8 or cp1252") from None
        header = raw.get("header", True)
        if not isinstance(header, bool):
            raise self.error(f"should be true or false, got {header!r}", "header")
        splits = self._splits()
        formats = self._formats(splits, header)
        unlabeled = self._unlabeled(splits)
        columns = self._columns(shape, header, all_unlabeled=set(unlabeled) == set(splits))
        cloze_labels, nli_labels = self._labels(shape, columns)
        meta = tuple(self._ref(ref, header, "meta") for ref in self._list("meta"))
        group_by = self._group_by(shape, columns)
        default_split = self._default_split(splits)
        return TaskSpec(
            path=self.path,
            name=name,
            shape=shape,
            description=description,
            splits=splits,
            formats=formats,
            encoding=encoding,
            header=header,
            columns=columns,
            cloze_labels=cloze_labels,
            nli_labels=nli_labels,
            unlabeled_splits=unlabeled,
            meta=meta,
            group_by=group_by,
            default_split=default_split,
        )

    # -- pieces -------------------------------------------------------------------------------

    def _str(self, key: str, default: str | None = None) -> str:
        value = self.raw.get(key)
        if value is None:
            if default is None:
                raise self.error("is required", key)
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"should be a non-empty string, got {value!r}", key)
        return value.strip()

    def _list(self, key: str) -> list[Any]:
        value = self.raw.get(key)
        if value is None:
            return []
        if isinstance(value, (str, int)):
            return [value]
        if not isinstance(value, list):
            raise self.error(f"should be a list, got {type(value).__name__}", key)
        return value

    def _shape(self) -> str:
        if "shape" not in self.raw:
            raise self.error(f"the spec has no `shape`; add `shape:` with one of: {', '.join(SHAPES)}")
        shape = self.raw["shape"]
        if shape not in SHAPES:
            raise self.error(
                f"unknown shape {shape!r}; {_did_you_mean(str(shape), SHAPES)}"
                "use cloze (multiple choice), nli (premise/hypothesis/label) or generation (source/references)",
                "shape",
            )
        return shape

    def _splits(self) -> dict[str, tuple[str, ...]]:
        value = self.raw.get("splits")
        if not isinstance(value, dict) or not value:
            raise self.error(
                "a spec needs `splits:`, a mapping from split name to data file (or list of files)",
                "splits",
                hint="for example `splits: {train: data/train.jsonl, test: data/test.jsonl}`",
            )
        splits: dict[str, tuple[str, ...]] = {}
        for split, files in value.items():
            files = [files] if isinstance(files, str) else files
            if not isinstance(files, list) or not files or not all(isinstance(f, str) and f.strip() for f in files):
                raise self.error(f"should be a file path or a list of file paths, got {files!r}", "splits", str(split))
            splits[str(split)] = tuple(f.strip() for f in files)
        return splits

    def _formats(self, splits: dict[str, tuple[str, ...]], header: bool) -> dict[str, str]:
        declared = self.raw.get("format")
        if declared is not None and declared not in FORMATS:
            raise self.error(
                f"unknown format {declared!r}; {_did_you_mean(str(declared), FORMATS)}use one of: {', '.join(FORMATS)}", "format"
            )
        formats: dict[str, str] = {}
        for split, files in splits.items():
            for f in files:
                fmt = declared or EXTENSIONS.get(Path(f).suffix.lower())
                if fmt is None:
                    raise self.error(
                        f"cannot tell the format of {f!r} from its extension",
                        "splits",
                        split,
                        hint=f"add `format:` ({', '.join(FORMATS)}) or rename it to .jsonl/.csv/.tsv",
                    )
                if fmt == "jsonl" and not header:
                    raise self.error(f"`header: false` only applies to csv/tsv files, but {f!r} is jsonl", "header")
                formats[f] = fmt
        return formats

    def _unlabeled(self, splits: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        names = [str(s) for s in self._list("unlabeled_splits")]
        for s in names:
            if s not in splits:
                raise self.error(
                    f"{s!r} is not one of the splits; {_did_you_mean(s, list(splits))}the splits are: {', '.join(splits)}",
                    "unlabeled_splits",
                )
        return tuple(names)

    def _ref(self, ref: Any, header: bool, *key: str) -> ColumnRef:
        if not header:
            if isinstance(ref, str) and ref.strip().isdigit():
                ref = int(ref)
            if not isinstance(ref, int) or isinstance(ref, bool) or ref < 0:
                raise self.error(f"with `header: false` columns are 0-based positions, got {ref!r}", *key)
            return ref
        if isinstance(ref, int) and not isinstance(ref, bool):
            return str(ref)  # a header cell that happens to be a number
        if not isinstance(ref, str) or not ref.strip():
            raise self.error(f"should be a column name, got {ref!r}", *key)
        return ref.strip()

    def _columns(self, shape: str, header: bool, all_unlabeled: bool) -> dict[str, ColumnRef | tuple[ColumnRef, ...]]:
        value = self.raw.get("columns")
        roles = ROLES[shape]
        if not isinstance(value, dict) or not value:
            raise self.error(
                f"a spec needs `columns:`, mapping the {shape} roles onto your columns",
                "columns",
                hint=f"required: {', '.join(r for r, req in roles.items() if req)}; "
                f"optional: {', '.join(r for r, req in roles.items() if not req)}",
            )
        columns: dict[str, ColumnRef | tuple[ColumnRef, ...]] = {}
        for role, ref in value.items():
            role = str(role)
            if role not in roles:
                other = [s for s in SHAPES if role in ROLES[s]]
                also = f" (it is a role of the {' and '.join(other)} shape)" if other else ""
                raise self.error(
                    f"unknown column role {role!r} for shape {shape}{also}; {_did_you_mean(role, list(roles))}"
                    f"the {shape} roles are: {', '.join(roles)}",
                    "columns",
                    role,
                )
            if isinstance(ref, list):
                if role not in LIST_ROLES:
                    raise self.error("takes one column, not a list", "columns", role)
                if not ref:
                    raise self.error("the list of columns is empty", "columns", role)
                refs = tuple(self._ref(r, header, "columns", role) for r in ref)
                if len(set(refs)) != len(refs):
                    raise self.error(f"lists a column twice: {list(refs)}", "columns", role)
                if role == "options" and len(refs) < 2:
                    raise self.error("a cloze task needs at least two option columns (or one column holding a list)", "columns", role)
                columns[role] = refs
            else:
                columns[role] = self._ref(ref, header, "columns", role)
        for role, required in roles.items():
            if required and role not in columns and not (role == GOLD_ROLE[shape] and all_unlabeled):
                why = " (or list every split under `unlabeled_splits`)" if role == GOLD_ROLE[shape] else ""
                raise self.error(
                    f"the {shape} shape needs the {role!r} column mapped{why}",
                    "columns",
                    hint=f"add `{role}: <your column>` under `columns:`",
                )
        return columns

    def _labels(self, shape: str, columns: dict[str, Any]) -> tuple[ClozeLabels | None, dict[str, str]]:
        value = self.raw.get("labels")
        if shape == "generation":
            if value is not None:
                raise self.error("generation tasks have references, not labels; remove `labels`", "labels")
            return None, {}
        if shape == "nli":
            return None, self._nli_labels(value, "label" in columns)
        return self._cloze_labels(value, columns.get("options")), {}

    def _nli_labels(self, value: Any, has_label: bool) -> dict[str, str]:
        if value is None:
            if has_label:
                raise self.error(
                    "an nli spec must declare its label set",
                    "labels",
                    hint="map raw values onto entailment/contradiction/non-entailment, e.g. "
                    "`labels: {yes: entailment, no: non-entailment}`, or list them: `labels: [entailment, contradiction]`",
                )
            return {}
        pairs = [(v, v) for v in value] if isinstance(value, list) else list(value.items()) if isinstance(value, dict) else None
        if not pairs:
            raise self.error(f"should be a mapping from your label values to NLI labels, or a list of NLI labels; got {value!r}", "labels")
        mapping: dict[str, str] = {}
        for raw, target in pairs:
            canon = _norm_key(target)
            if canon not in NLI_LABELS:
                raise self.error(
                    f"{target!r} is not an NLI label; {_did_you_mean(canon, NLI_LABELS)}use one of: {', '.join(NLI_LABELS)}",
                    "labels",
                    str(raw),
                )
            key = _norm_key(raw)
            if key in mapping and mapping[key] != canon:
                raise self.error(f"{raw!r} is mapped twice (labels are matched case-insensitively)", "labels", str(raw))
            mapping[key] = canon
        return mapping

    def _cloze_labels(self, value: Any, options: Any) -> ClozeLabels:
        option_cols = options if isinstance(options, tuple) else None
        if value is None:
            return ClozeLabels("zero-based")
        if isinstance(value, str):
            if value not in CLOZE_LABEL_KINDS:
                raise self.error(
                    f"unknown label rule {value!r}; {_did_you_mean(value, CLOZE_LABEL_KINDS)}use zero-based (0 = first option), "
                    "one-based (1 = first option), option-name (the label names the option column) or a mapping",
                    "labels",
                )
            if value == "option-name" and option_cols is None:
                raise self.error("`option-name` needs `options` to be a list of columns", "labels")
            return ClozeLabels(value)
        if not isinstance(value, dict) or not value:
            raise self.error(f"should be a mapping from raw label values to option indexes (0-based), got {value!r}", "labels")
        mapping: dict[str, int] = {}
        for raw, target in value.items():
            if isinstance(target, bool) or not isinstance(target, (int, str)):
                raise self.error(f"should map to a 0-based option index or an option column, got {target!r}", "labels", str(raw))
            if isinstance(target, int):
                if target < 0 or (option_cols is not None and target >= len(option_cols)):
                    n = f"0..{len(option_cols) - 1}" if option_cols is not None else "0 or more"
                    raise self.error(f"option index {target} is out of range ({n}; indexes are 0-based)", "labels", str(raw))
            else:
                if option_cols is None or target not in option_cols:
                    raise self.error(
                        f"{target!r} is not one of the option columns {list(option_cols or [])}; "
                        f"{_did_you_mean(target, [str(c) for c in option_cols or []])}or map to a 0-based index",
                        "labels",
                        str(raw),
                    )
                target = option_cols.index(target)
            key = _norm_key(raw)
            if key in mapping:
                raise self.error(f"{raw!r} is mapped twice (labels are matched case-insensitively)", "labels", str(raw))
            mapping[key] = target
        return ClozeLabels("map", mapping)

    def _group_by(self, shape: str, columns: dict[str, Any]) -> tuple[str, ...]:
        if "group_by" not in self.raw:
            return tuple(r for r in GROUPABLE[shape] if r in columns and r != "expression")
        fields = [str(f) for f in self._list("group_by")]
        for f in fields:
            if f not in GROUPABLE[shape]:
                raise self.error(
                    f"cannot group {shape} records by {f!r}; {_did_you_mean(f, GROUPABLE[shape])}choose from: {', '.join(GROUPABLE[shape])}",
                    "group_by",
                )
            if f not in columns:
                raise self.error(f"groups by {f!r} but no column is mapped to it", "group_by", hint=f"add `{f}: <column>` under `columns:`")
        return tuple(fields)

    def _default_split(self, splits: dict[str, tuple[str, ...]]) -> str:
        if "default_split" in self.raw:
            split = str(self.raw["default_split"])
            if split not in splits:
                raise self.error(f"{split!r} is not one of the splits ({', '.join(splits)})", "default_split")
            return split
        for candidate in ("test", "dev", "validation", "val"):
            if candidate in splits:
                return candidate
        return next(iter(splits))


def read_task_spec(path: str | Path) -> TaskSpec:
    """Parse and validate a spec file without building a Task (``figlang data check`` style tools)."""
    path = Path(path).expanduser()
    if not path.exists():
        raise DataNotFoundError(
            "task spec not found", path, hint="check the path, or print a starter spec with `figlang data spec-template`"
        )
    raw_bytes = path.read_bytes()
    if not raw_bytes.strip():
        raise DataError("task spec is empty", path, hint="print a starter spec with `figlang data spec-template`")
    try:
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"cannot decode byte 0x{raw_bytes[exc.start]:02x} as utf-8",
            path,
            raw_bytes[: exc.start].count(b"\n") + 1,
            hint="save the spec as UTF-8",
        ) from None
    lines: dict[tuple[str, ...], int] = {}
    if path.suffix.lower() == ".json":
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"malformed JSON ({exc.msg} at column {exc.colno})", path, exc.lineno) from None
    else:
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc)
            raise DataError(f"malformed YAML ({problem})", path, mark.line + 1 if mark else None) from None
        lines = _key_lines(text)
    if not isinstance(raw, dict):
        raise DataError(
            f"a task spec must be a mapping of keys (name, shape, splits, columns …), got {type(raw).__name__}",
            path,
            hint="print a starter spec with `figlang data spec-template`",
        )
    return _SpecReader(raw, Path(os.path.abspath(path)), lines).read()  # as given: links are not resolved


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


def _resolve(spec: TaskSpec, written: str, root: Path) -> Path:
    """A spec's file path: ``{data_dir}/…`` under ``root`` (the data directory the caller resolved), a
    relative path under the spec's folder. Links are not resolved (figlang reports paths as given)."""
    if written.startswith(DATA_DIR_PREFIX):
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
        if obj is None:
            hint = "each line must be one complete JSON object" if problem.startswith("malformed") else None
            options.fail(DataError(problem, path, number, hint=hint))
        yield number, obj
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
        leading: list[Row] = []
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
    raw = row.get(ref, "label")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise row.error(f"empty label (column {ref!r})", hint="fill it in, or list this split under `unlabeled_splits`")
    key = _norm_key(raw)
    option_cols = spec.columns.get("options")
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
    raw = row.get(ref, "label")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise row.error(f"empty label (column {ref!r})", hint="fill it in, or list this split under `unlabeled_splits`")
    key = _norm_key(raw)
    if key not in spec.nli_labels:
        raise row.error(
            f"label {raw!r} is outside the declared label set ({', '.join(repr(k) for k in spec.nli_labels)})",
            hint="add it to `labels:` in the spec, or fix the row",
        )
    return spec.nli_labels[key]


def _make_record(spec: TaskSpec, row: _Row, split: str, index: int, labeled: bool, written: str) -> Record:
    cols = spec.columns

    def opt(role: str) -> str | None:
        return row.text(cols[role], role, required=False) if role in cols else None  # type: ignore[arg-type]

    rid = row.text(cols["id"], "id") if "id" in cols else f"{split}-{index}"  # type: ignore[arg-type]
    meta: dict[str, Any] = {"file": written, "line": row.line}
    for ref in spec.meta:
        meta[str(ref)] = row.get(ref, "meta")
    if spec.shape == "cloze":
        narrative = row.text(cols["context"], "context")  # type: ignore[arg-type]
        options = row.text_list(cols["options"], "options", min_items=2)
        label = _cloze_label(row, spec, cols["label"], len(options)) if labeled else None  # type: ignore[arg-type]
        return ClozeRecord(
            id=rid,
            narrative=narrative,
            options=tuple(options),
            label=label,  # type: ignore[arg-type]
            expression=opt("expression"),
            expression_type=opt("expression_type"),
            meaning=opt("meaning"),
            meta=meta,
        )
    if spec.shape == "nli":
        premise = row.text(cols["premise"], "premise")  # type: ignore[arg-type]
        hypothesis = row.text(cols["hypothesis"], "hypothesis")  # type: ignore[arg-type]
        label = _nli_label(row, spec, cols["label"]) if labeled else None  # type: ignore[arg-type]
        return NLIPair(
            id=rid,
            premise=premise,
            hypothesis=hypothesis,
            label=label,  # type: ignore[arg-type]
            explanation=opt("explanation"),
            figure_type=opt("figure_type"),
            pair_type=opt("pair_type"),
            expression=opt("expression"),
            meta=meta,
        )
    source = row.text(cols["source"], "source")  # type: ignore[arg-type]
    references = tuple(row.text_list(cols["references"], "references", min_items=1)) if labeled else ()
    return GenerationRecord(
        id=rid,
        source=source,
        references=references,  # type: ignore[arg-type]
        expression=opt("expression"),
        expression_type=opt("expression_type"),
        meaning=opt("meaning"),
        meta=meta,
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
        path = _resolve(spec, written, root)
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
