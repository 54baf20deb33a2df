"""Inputs of the FLUTE creator: idioms with meanings, similes, metaphors, literal sarcasm sentences.

Every input becomes a :class:`SourceItem` (one figurative expression or literal sentence, from
which an entailment and a contradiction pair are made). Sources:

* idioms: ``benchmark`` / ``pie`` / a lexicon file through :func:`figlang.lexicon.idioms.load_lexicon`
  (idiom + meaning; the model then writes the idiomatic sentence), or a JSONL/TSV/CSV file with
  ``idiom``, ``meaning`` (or ``definition``) and optionally ``sentence`` (an idiomatic sentence);
* similes: ``sentence`` (the figurative sentence), ``property``, and ``simile`` (the simile span,
  e.g. ``like a fortress``, replaced by the property to get the literal sentence) or ``literal``
  (that literal sentence, given directly);
* metaphors: ``sentence``, optionally ``metaphor`` (the metaphorical word) and ``meaning`` (its
  literal sense);
* sarcasm: a literal ``sentence`` (``prompt`` and ``literal`` are accepted too, the shape of FLUTE's
  own Empathetic Dialogues input) and its ``emotion``.

Files are JSONL (one object a line) or TSV/CSV with a header row; every field may also carry an
``id``. Bad lines (malformed JSON, missing or empty fields, a simile span not in its sentence,
duplicates) are reported with file:line and skipped, or raise with ``strict=True``; an empty file
or a file with no valid line raises.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.errors import DataError, DataNotFoundError, LoadReport
from figlang.core.io import parse_jsonl, parse_table, read_text
from figlang.core.text import collapse_spaces, normalise_sentence
from figlang.lexicon.idioms import load_lexicon, load_lexicon_file

FIGURE_TYPES = ("sarcasm", "simile", "metaphor", "idiom")

# field -> accepted spellings (first is canonical)
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "idiom": {"idiom": ("idiom", "expression"), "meaning": ("meaning", "definition"), "sentence": ("sentence", "hypothesis")},
    "simile": {
        "sentence": ("sentence", "hypothesis"),
        "property": ("property", "prop"),
        "simile": ("simile", "vehicle"),
        "literal": ("literal", "literal_sentence"),
    },
    "metaphor": {
        "sentence": ("sentence", "hypothesis"),
        "metaphor": ("metaphor", "word", "expression"),
        "meaning": ("meaning", "literal_meaning"),
    },
    "sarcasm": {"sentence": ("sentence", "prompt", "literal", "premise"), "emotion": ("emotion",)},
}
REQUIRED = {
    "idiom": ("idiom", "meaning"),
    "simile": ("sentence", "property"),
    "metaphor": ("sentence",),
    "sarcasm": ("sentence", "emotion"),
}


@dataclass(frozen=True)
class SourceItem:
    """One input expression/sentence; ``uid`` names it in every output (``idiom-0007``)."""

    uid: str
    figure_type: str
    index: int  # 0-based position among this type's items (FLUTE's numeric ``id``)
    fields: dict[str, str]
    source: str  # file:line (or lexicon source)
    user_id: str | None = None

    def get(self, name: str) -> str:
        return self.fields.get(name, "")

    @property
    def expression(self) -> str | None:
        return self.fields.get("idiom") or self.fields.get("simile") or self.fields.get("metaphor") or None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the fields, in order (``fields`` copied)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SourceItem:
        return cls(d["uid"], d["figure_type"], int(d["index"]), dict(d["fields"]), d["source"], d.get("user_id"))


@dataclass
class InputSet:
    """The items read for one figure type, with every problem found (file:line)."""

    figure_type: str
    items: list[SourceItem] = field(default_factory=list)
    report: LoadReport = field(default_factory=LoadReport)
    source: str = ""

    @property
    def problems(self) -> list[str]:
        return [str(w) for w in self.report.warnings]


class _Reader:
    def __init__(self, figure_type: str, path: str, strict: bool):
        self.figure_type, self.path, self.strict = figure_type, path, strict
        self.out = InputSet(figure_type, source=path)
        self._seen: dict[str, str] = {}

    def problem(self, message: str, line: int | None, skipped: bool = True, hint: str | None = None) -> None:
        err = DataError(message, self.path, line, hint)
        if self.strict and skipped:
            raise err
        self.out.report.warn(err, skipped=skipped)

    def add(self, raw: dict[str, Any], line: int | None, where: str | None = None) -> None:
        ftype = self.figure_type
        fields: dict[str, str] = {}
        for name, spellings in ALIASES[ftype].items():
            for s in spellings:
                value = raw.get(s)
                if value is None:
                    continue
                if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                    self.problem(f"field {s!r} should be text, got {type(value).__name__} {value!r}", line)
                    return
                if collapse_spaces(str(value)):
                    fields[name] = collapse_spaces(str(value))
                    break
        missing = [f for f in REQUIRED[ftype] if not fields.get(f)]
        if missing:
            present = ", ".join(sorted(k for k, v in raw.items() if v not in (None, ""))) or "none"
            names = " / ".join("|".join(ALIASES[ftype][m]) for m in missing)
            self.problem(f"{ftype} input: missing or empty field(s) {names} (fields present: {present})", line)
            return
        if ftype == "simile":
            if not fields.get("literal"):
                span = fields.get("simile")
                if not span:
                    self.problem(
                        "simile input needs 'simile' (the span to replace by the property) or 'literal' (the literal sentence)", line
                    )
                    return
                literal = replace_span(fields["sentence"], span, fields["property"])
                if literal is None:
                    self.problem(f"simile {span!r} does not occur in its sentence {fields['sentence'][:60]!r}", line)
                    return
                fields["literal"] = literal
        if ftype == "metaphor" and fields.get("metaphor") and replace_span(fields["sentence"], fields["metaphor"], "") is None:
            self.problem(f"metaphor {fields['metaphor']!r} does not occur in its sentence {fields['sentence'][:60]!r}", line)
            return
        key = (
            normalise_sentence(fields["idiom"]) + " || " + normalise_sentence(fields.get("sentence", ""))
            if ftype == "idiom"
            else normalise_sentence(fields["sentence"])
        )
        location = where or f"{self.path}:{line}"
        if key in self._seen:
            self.problem(f"duplicate {ftype} input (first at {self._seen[key]}); skipped", line)
            return
        self._seen[key] = location
        user_id = raw.get("id")
        self.out.items.append(SourceItem("", ftype, -1, fields, location, None if user_id in (None, "") else str(user_id)))


def replace_span(sentence: str, span: str, replacement: str) -> str | None:
    """``sentence`` with the first case-insensitive occurrence of ``span`` replaced (None: not found)."""
    m = re.search(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in span.split()) + r"(?!\w)", sentence, re.IGNORECASE)
    if m is None:
        return None
    out = sentence[: m.start()] + replacement + sentence[m.end() :]
    return collapse_spaces(out.replace(" ,", ",") if not replacement else out)


def read_input_file(path: str | Path, figure_type: str, strict: bool = False) -> InputSet:
    """Items of ``figure_type`` from a JSONL, TSV or CSV file (a header row names the fields)."""
    if figure_type not in FIGURE_TYPES:
        raise DataError(f"unknown figure type {figure_type!r}; use one of {', '.join(FIGURE_TYPES)}")
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"{figure_type} input file not found", path)
    text = read_text(path)  # raises on an empty file or a bad encoding, with file and line
    r = _Reader(figure_type, str(path), strict)
    suffix = path.suffix.lower()
    if suffix in {".jsonl", ".ndjson", ".json"}:
        for number, obj, problem in parse_jsonl(text):
            if obj is None:
                r.problem(problem or "unreadable line", number)
                continue
            r.add(obj, number)
    elif suffix in {".tsv", ".csv", ".txt"}:
        delimiter = "," if suffix == ".csv" else "\t"
        header, rows = parse_table(text, delimiter, quoting=delimiter == ",")
        header = [h.lower() for h in header]
        known = {s for spellings in ALIASES[figure_type].values() for s in spellings} | {"id"}
        if not set(header) & known:
            if figure_type == "idiom" and suffix != ".csv":  # a headerless idiom<TAB>definition lexicon
                return from_lexicon(_lexicon_file(path, strict))
            raise DataError(
                f"the first line should be a header naming the {figure_type} fields ({', '.join(REQUIRED[figure_type])} …), got {header!r}",
                path,
                1,
            )
        for line, row in rows:
            if len(row) > len(header) and any(c.strip() for c in row[len(header) :]):
                r.problem(f"{len(row)} columns but the header has {len(header)}", line)
                continue
            r.add(dict(zip(header, row)), line)
    else:
        raise DataError(f"cannot tell the format of {path.name!r}: use .jsonl, .tsv or .csv", path)
    return _finish(r.out, path)


def _lexicon_file(path: Path, strict: bool):
    return load_lexicon_file(path, strict=strict)


def _finish(out: InputSet, path: str | Path) -> InputSet:
    if not out.items:
        raise DataError(
            f"no valid {out.figure_type} input ({out.report.skipped} line(s) skipped: {'; '.join(out.problems[:3]) or 'nothing read'})",
            path,
        )
    return out


def from_lexicon(lexicon: Any) -> InputSet:
    """Idiom items (idiom + first definition, no sentence) from a :class:`~figlang.lexicon.idioms.Lexicon`."""
    out = InputSet("idiom", source=lexicon.name)
    out.report.warnings.extend(lexicon.report.warnings)
    out.report.skipped += lexicon.report.skipped
    for e in lexicon.entries:
        out.items.append(SourceItem("", "idiom", -1, {"idiom": e.expression, "meaning": e.definition}, e.source))
    if not out.items:
        raise DataError(f"lexicon {lexicon.name!r} has no idiom")
    return out


def load_idioms(spec: str | Path, data_dir: str | Path | None = None, strict: bool = False, *, ctx: RunContext | None = None) -> InputSet:
    """``benchmark`` | ``pie`` (via :func:`~figlang.lexicon.idioms.load_lexicon`, from the run context's data folder or
    ``data_dir``) or an idiom file."""
    if str(spec) in ("benchmark", "pie"):
        return from_lexicon(load_lexicon(str(spec), data_dir, strict=strict, ctx=ctx))
    return read_input_file(spec, "idiom", strict=strict)


def select(inputs: InputSet, limit: int | None, seed: int = 0) -> InputSet:
    """At most ``limit`` items, drawn with ``random.Random(seed)`` (input order kept); then numbered."""
    items = list(inputs.items)
    if limit is not None and limit < len(items):
        chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
        items = [items[i] for i in chosen]
    numbered = []
    for i, it in enumerate(items):
        numbered.append(SourceItem(f"{inputs.figure_type}-{i:04d}", it.figure_type, i, it.fields, it.source, it.user_id))
    return InputSet(inputs.figure_type, numbered, inputs.report, inputs.source)
