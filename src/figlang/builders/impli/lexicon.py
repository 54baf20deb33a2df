"""The IMPLI generator's lexicon: idiom base forms with definitions of two kinds (definition, adversarial).

Not :class:`figlang.lexicon.idioms.Lexicon`: that one is the narrative miner's read-only idiom list
(one entry per idiom, keyed by :func:`figlang.core.text.normalise_idiom`, definitions without kinds).
The generator needs definitions of several kinds per idiom, duplicates refused with the line of the
first, entries added one at a time, and keys that keep punctuation (``normalise_spacing``) so that the
lexicon and IMPLI's own pairs group idioms exactly as :mod:`figlang.metrics.impli_analysis` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import STRICT, DataError, LoadOptions
from figlang.core.io import atomic_write, iter_jsonl, iter_lines
from figlang.core.text import normalise_spacing


# --------------------------------------------------------------------------------------------
# Lexicon: idiom base form -> definitions (and adversarial definitions)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Definition:
    text: str
    kind: str = "definition"  # definition | adversarial
    path: str | None = None
    line: int | None = None

    @property
    def origin(self) -> str | None:
        return f"{self.path}:{self.line}" if self.path else None


@dataclass
class ImpliLexiconEntry:
    idiom: str  # base form as written ("lose one's temper")
    definitions: list[Definition] = field(default_factory=list)
    path: str | None = None
    line: int | None = None

    @property
    def key(self) -> str:
        return normalise_spacing(self.idiom)

    def of_kind(self, kind: str) -> list[Definition]:
        return [d for d in self.definitions if d.kind == kind]


class ImpliLexicon:
    """Idioms (base forms) with their definitions; keys are lower-cased, whitespace-normalised idioms.

    Named apart from :class:`figlang.lexicon.idioms.Lexicon` (the narrative miner's): see the module docstring."""

    def __init__(self) -> None:
        self.entries: dict[str, ImpliLexiconEntry] = {}
        self._seen: dict[tuple[str, str, str], str] = {}  # (idiom key, kind, definition key) -> origin

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, idiom: object) -> bool:
        return isinstance(idiom, str) and normalise_spacing(idiom) in self.entries

    def get(self, idiom: str) -> ImpliLexiconEntry | None:
        return self.entries.get(normalise_spacing(idiom))

    def add(self, idiom: str, definition: str, kind: str = "definition", path: str | None = None, line: int | None = None) -> bool:
        """Add one definition; False (and nothing added) when this idiom already has it."""
        idiom, definition = " ".join(idiom.split()), " ".join(definition.split())
        key = normalise_spacing(idiom)
        dkey = (key, kind, normalise_spacing(definition))
        if dkey in self._seen:
            return False
        self._seen[dkey] = f"{path}:{line}" if path else "?"
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = ImpliLexiconEntry(idiom, path=path, line=line)
        entry.definitions.append(Definition(definition, kind, path, line))
        return True

    def first_origin(self, idiom: str, definition: str, kind: str = "definition") -> str | None:
        return self._seen.get((normalise_spacing(idiom), kind, normalise_spacing(definition)))

    def count(self, kind: str | None = None) -> int:
        return sum(1 for e in self.entries.values() for d in e.definitions if kind is None or d.kind == kind)


_LEXICON_HEADER = ("idiom", "definition")


def check_idiom_text(idiom: str, path: Path, line: int) -> str | None:
    if not idiom:
        return "empty idiom"
    if not re.search(r"\w", idiom):
        return f"idiom {idiom!r} has no word characters"
    words = [w for w in re.split(r"\s+", idiom.lower().replace("’", "'")) if w]
    slots = {"one's", "someone's", "somebody's", "oneself", "someone", "somebody", "something", "sb", "sth"}
    if all(w in slots for w in words):
        return f"idiom {idiom!r} is only a slot: it would match any phrase"
    return None


def read_lexicon(
    path: str | Path,
    options: LoadOptions = STRICT,
    kind: str = "definition",
    lexicon: ImpliLexicon | None = None,
) -> ImpliLexicon:
    """Read ``idiom<TAB>definition`` lines (TSV, ``#`` comments, optional ``idiom<TAB>definition`` header)
    or JSON lines (``{"idiom": ..., "definitions": [...]}`` / ``"definition"`` / ``"adversarial"``).

    Every problem names its file and line: a line without a tab, an empty idiom or definition,
    an idiom that is only a slot, a definition given twice for the same idiom (with the line of
    the first), an empty file. Strict (default) raises at the first; lenient skips and reports.
    ``kind`` ("definition" or "adversarial") says what the TSV's definitions are; pass
    ``lexicon`` to add to an existing one.
    """
    path = Path(path)
    lex = lexicon if lexicon is not None else ImpliLexicon()
    if path.suffix in (".jsonl", ".json"):
        for line, obj in iter_jsonl(path, options):
            idiom = obj.get("idiom")
            if not isinstance(idiom, str):
                options.fail(DataError("missing or non-string field 'idiom'", path, line))
                continue
            items: list[tuple[str, Any]] = []
            for field_name, k in (("definition", kind), ("definitions", kind), ("adversarial", "adversarial")):
                value = obj.get(field_name)
                if value is None:
                    continue
                values = value if isinstance(value, list) else [value]
                items.extend((k, v) for v in values)
            if not items:
                options.fail(DataError(f"idiom {idiom!r} has no 'definition', 'definitions' or 'adversarial' field", path, line))
                continue
            _add_checked(lex, idiom.strip(), items, path, line, options)
        return lex
    n = 0
    for line, text in iter_lines(path):
        if text.lstrip().startswith("#"):
            continue
        cols = text.split("\t")
        if n == 0 and tuple(c.strip().lower() for c in cols[:2]) == _LEXICON_HEADER:
            n += 1
            continue
        n += 1
        if len(cols) < 2:
            options.fail(
                DataError(
                    "expected 'idiom<TAB>definition', found no tab",
                    path,
                    line,
                    hint="one definition per line; separate idiom and definition with a tab",
                )
            )
            continue
        if len(cols) > 2 and any(c.strip() for c in cols[2:]):
            options.fail(DataError(f"expected 2 tab-separated columns, found {len(cols)}", path, line))
            continue
        _add_checked(lex, cols[0].strip(), [(kind, cols[1])], path, line, options)
    return lex


def _add_checked(lex: ImpliLexicon, idiom: str, items: list[tuple[str, Any]], path: Path, line: int, options: LoadOptions) -> None:
    problem = check_idiom_text(idiom, path, line)
    if problem:
        options.fail(DataError(problem, path, line))
        return
    for kind, definition in items:
        if not isinstance(definition, str) or not definition.strip():
            options.fail(DataError(f"empty or non-string definition for idiom {idiom!r}", path, line))
            continue
        if normalise_spacing(definition) == normalise_spacing(idiom):
            options.fail(DataError(f"definition of {idiom!r} is the idiom itself", path, line))
            continue
        if not lex.add(idiom, definition.strip(), kind, str(path), line):
            first = lex.first_origin(idiom, definition, kind)
            options.fail(DataError(f"duplicate {kind} {definition.strip()!r} for idiom {idiom!r} (first at {first})", path, line))


def write_lexicon(lexicon: ImpliLexicon, path: str | Path, kind: str = "definition") -> int:
    """Write ``idiom<TAB>definition`` lines (one kind); returns the number of lines."""
    n = 0
    with atomic_write(path) as f:
        f.write("# idiom\tdefinition  (figlang IMPLI lexicon; base forms; one's/oneself/someone/something are slots)\n")
        for entry in lexicon.entries.values():
            for d in entry.of_kind(kind):
                f.write(f"{entry.idiom}\t{d.text}\n")
                n += 1
    return n
