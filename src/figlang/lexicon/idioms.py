"""Idiom lexicons (idiom → definition) for the narrative miner, with validation.

Sources:

* ``benchmark``: the idioms of the figurative narrative benchmark itself
  (``fig_narrative/data/idiom/{train,dev,test}.jsonl``, fields ``idiom``/``meaning``). The same
  idiom occurs in many records; that is the data's shape, so those repeats are merged quietly
  (distinct meanings are kept as alternatives).
* ``pie``: PIE-English (``pie_english/_extracted_from_idiomscorpus.zip/idiomscorpus.csv``), one
  token per row; the first sample of each idiom group is the idiom itself and carries the
  ``meaning``; the samples after it (empty meaning) are example sentences.
* a user file: TSV (``idiom<TAB>definition``, optional header line) or JSONL
  (``{"idiom": ..., "definition": ...}``; ``expression``/``meaning`` are accepted too).

Validation of user files and PIE: malformed lines (no tab, empty idiom or definition, no
letters, too many words, bad JSON) are reported with file and line and skipped (or raise with
``strict=True``); duplicate idioms (same normalised key) are merged with a warning naming both
lines.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from figlang.core.errors import DataError, DataNotFoundError, LoadReport
from figlang.core.io import parse_json_line, parse_jsonl, read_text
from figlang.core.context import RunContext, run_context
from figlang.core.text import normalise_idiom

MAX_IDIOM_WORDS = 12
PIE_CSV = Path("pie_english") / "_extracted_from_idiomscorpus.zip" / "idiomscorpus.csv"
BENCHMARK_DIR = Path("fig_narrative") / "data" / "idiom"


@dataclass(frozen=True)
class LexiconEntry:
    expression: str  # as first written
    definitions: tuple[str, ...]  # distinct definitions, first one first
    source: str  # "file:line" of the first occurrence
    key: str  # normalised expression
    category: str | None = None  # PIE class (Metaphor, Simile …) where known

    @property
    def definition(self) -> str:
        return self.definitions[0] if self.definitions else ""

    def to_dict(self) -> dict:
        return {
            "expression": self.expression,
            "definition": self.definition,
            "definitions": list(self.definitions),
            "source": self.source,
            "category": self.category,
        }


@dataclass
class Lexicon:
    name: str
    entries: list[LexiconEntry] = field(default_factory=list)
    report: LoadReport = field(default_factory=LoadReport)
    merged: int = 0  # duplicate lines folded into an earlier entry

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def get(self, expression: str) -> LexiconEntry | None:
        key = normalise_idiom(expression)
        for e in self.entries:
            if e.key == key:
                return e
        return None

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for e in self.entries:
            h.update(json.dumps([e.key, e.expression, list(e.definitions)]).encode())
        return h.hexdigest()[:16]


class _Builder:
    """Collects entries, merging duplicates by key."""

    def __init__(self, name: str, warn_duplicates: bool, strict: bool):
        self.lexicon = Lexicon(name)
        self.warn_duplicates = warn_duplicates
        self.strict = strict
        self._by_key: dict[str, int] = {}
        self._defs: dict[str, list[str]] = {}

    def problem(self, message: str, path: str | Path, line: int | None, hint: str | None = None) -> None:
        err = DataError(message, path, line, hint)
        if self.strict:
            raise err
        self.lexicon.report.warn(err)

    def add(self, expression: str, definition: str, path: str | Path, line: int, category: str | None = None) -> None:
        expression = " ".join(expression.split()).rstrip(" .;,")  # "to the letter." is "to the letter"
        definition = " ".join(definition.split())
        if not expression:
            self.problem("empty idiom", path, line)
            return
        if not definition:
            self.problem(f"idiom {expression!r} has no definition", path, line)
            return
        key = normalise_idiom(expression)
        if not re.search(r"[a-z]", key):
            self.problem(f"idiom {expression!r} contains no letters", path, line)
            return
        if len(key.split()) > MAX_IDIOM_WORDS:
            self.problem(f"idiom {expression[:60]!r}… has more than {MAX_IDIOM_WORDS} words (a sentence, or a missing tab?)", path, line)
            return
        where = f"{path}:{line}"
        if key in self._by_key:
            idx = self._by_key[key]
            first = self.lexicon.entries[idx]
            self.lexicon.merged += 1
            defs = self._defs[key]
            new_def = definition not in defs
            if new_def:
                defs.append(definition)
                self.lexicon.entries[idx] = LexiconEntry(first.expression, tuple(defs), first.source, key, first.category)
            if self.warn_duplicates:
                what = "another definition kept as an alternative" if new_def else "same definition"
                self.lexicon.report.warn(
                    DataError(f"duplicate idiom {expression!r} (first at {first.source}); merged, {what}", path, line), skipped=False
                )
            return
        self._by_key[key] = len(self.lexicon.entries)
        self._defs[key] = [definition]
        self.lexicon.entries.append(LexiconEntry(expression, (definition,), where, key, category))


def load_benchmark_lexicon(data_dir: str | Path, splits: tuple[str, ...] = ("train", "dev", "test")) -> Lexicon:
    """The benchmark's own idioms (all splits by default) with their meanings."""
    b = _Builder("benchmark", warn_duplicates=False, strict=False)
    root = Path(data_dir) / BENCHMARK_DIR
    for split in splits:
        path = root / f"{split}.jsonl"
        text = read_text(path)
        for number, obj, problem in parse_jsonl(text):
            if obj is None:
                b.problem(problem or "unreadable line", path, number)
                continue
            idiom, meaning = obj.get("idiom"), obj.get("meaning")
            if not isinstance(idiom, str) or not isinstance(meaning, str):
                b.problem("record without string fields 'idiom' and 'meaning'", path, number)
                continue
            b.add(idiom, meaning, path, number)
    return b.lexicon


def load_pie_lexicon(data_dir: str | Path, strict: bool = False) -> Lexicon:
    """PIE-English: the head sample of each idiom group (the one with a meaning) is the idiom."""
    path = Path(data_dir) / PIE_CSV
    text = read_text(path)
    b = _Builder("pie", warn_duplicates=True, strict=strict)
    reader = csv.reader(text.split("\n"))
    header = next(reader, None)
    if header is None or [h.strip() for h in header[:5]] != ["id", "token", "pos", "class", "meaning"]:
        raise DataError(f"unexpected header {header!r} (expected id,token,pos,class,meaning,idiomliteral)", path, 1)
    current: dict | None = None

    def finish() -> None:
        if current and current["meaning"]:
            expression = _detokenise(current["tokens"])
            b.add(expression, current["meaning"], path, current["line"], current["class"])

    for number, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) < 4:
            b.problem(f"expected 6 comma-separated columns, found {len(row)}", path, number)
            continue
        if row[0].strip():
            finish()
            current = {
                "line": number,
                "tokens": [row[1]],
                "class": row[3].strip() or None,
                "meaning": row[4].strip() if len(row) > 4 else "",
            }
        elif current is not None:
            current["tokens"].append(row[1])
    finish()
    return b.lexicon


def _detokenise(tokens: list[str]) -> str:
    out = ""
    for t in tokens:
        if not out:
            out = t
        elif t in {"'s", "n't", "'re", "'ve", "'ll", "'d", "'m", ",", ".", "!", "?", ";", ":"} or t.startswith("'") and len(t) <= 3:
            out += t
        else:
            out += " " + t
    return out


def load_lexicon_file(path: str | Path, strict: bool = False) -> Lexicon:
    """A user lexicon: TSV ``idiom<TAB>definition`` (optional header) or JSONL objects."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError("lexicon file not found", path)
    text = read_text(path)
    b = _Builder(path.name, warn_duplicates=True, strict=strict)
    is_jsonl = path.suffix.lower() in {".jsonl", ".ndjson", ".json"}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if is_jsonl:
            obj, problem = parse_json_line(line)
            if obj is None:
                b.problem(problem or "unreadable line", path, number)
                continue
            idiom = obj.get("idiom", obj.get("expression"))
            definition = obj.get("definition", obj.get("meaning"))
            if not isinstance(idiom, str) or not isinstance(definition, str):
                b.problem("needs string fields 'idiom' (or 'expression') and 'definition' (or 'meaning')", path, number)
                continue
            b.add(idiom, definition, path, number)
        else:
            cols = line.split("\t")
            if number == 1 and cols[0].strip().lower() in {"idiom", "expression"}:
                continue  # header
            if len(cols) < 2:
                b.problem(
                    "expected 'idiom<TAB>definition', found no tab", path, number, "separate the idiom from its definition with one tab"
                )
                continue
            if len(cols) > 2 and any(c.strip() for c in cols[2:]):
                b.problem(f"expected 2 tab-separated columns, found {len(cols)}", path, number)
                continue
            b.add(cols[0], cols[1], path, number)
    if not b.lexicon.entries:
        raise DataError("no valid idiom in the lexicon", path)
    return b.lexicon


def load_lexicon(spec: str | Path, data_dir: str | Path | None = None, strict: bool = False, *, ctx: RunContext | None = None) -> Lexicon:
    """``benchmark`` | ``pie`` (read from the run context's data folder, or ``data_dir``) | a path to a TSV/JSONL lexicon."""
    if str(spec) == "benchmark":
        return load_benchmark_lexicon(run_context(ctx, data_dir=data_dir).data_dir)
    if str(spec) == "pie":
        return load_pie_lexicon(run_context(ctx, data_dir=data_dir).data_dir, strict=strict)
    return load_lexicon_file(spec, strict=strict)
