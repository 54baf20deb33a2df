"""A user task's spec (:class:`TaskSpec`): reading a YAML/JSON spec file and checking it, with errors located by spec
line where YAML allows. :mod:`figlang.data.custom` turns a spec into a Task and loads its rows."""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from figlang.core.errors import DataError, DataNotFoundError
from figlang.data.records import NLI_LABELS


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
