"""Sentences that contain an idiom, labelled figurative or literal: the generator's input."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import STRICT, DataError, LoadOptions
from figlang.data.impli import FILES as IMPLI_FILES, load_impli_file
from figlang.core.io import atomic_write, iter_jsonl, iter_lines
from figlang.core.text import normalise_spacing
from figlang.builders.impli.lexicon import check_idiom_text


# --------------------------------------------------------------------------------------------
# Sentences: contexts that contain an idiom, labelled figurative or literal
# --------------------------------------------------------------------------------------------

FIGURATIVE, LITERAL = "figurative", "literal"
_LABELS = {
    "figurative": FIGURATIVE,
    "fig": FIGURATIVE,
    "idiomatic": FIGURATIVE,
    "i": FIGURATIVE,
    "f": FIGURATIVE,
    "1": FIGURATIVE,
    "literal": LITERAL,
    "lit": LITERAL,
    "l": LITERAL,
    "0": LITERAL,
}


@dataclass(frozen=True)
class IdiomSentence:
    id: str
    sentence: str
    label: str  # figurative | literal
    idiom: str | None = None  # None: any idiom of the lexicon
    source: str | None = None
    path: str | None = None
    line: int | None = None

    @property
    def origin(self) -> str | None:
        return f"{self.path}:{self.line}" if self.path else None


def clean_sentence(text: str) -> str:
    """Tabs and line breaks become spaces (they would break the TSV output); nothing else changes."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ").strip()


def read_sentences(path: str | Path, options: LoadOptions = STRICT, source: str | None = None) -> list[IdiomSentence]:
    """Sentences to build pairs from.

    TSV: ``sentence<TAB>idiom<TAB>label[<TAB>source]`` (idiom may be empty: search the whole
    lexicon; label figurative/literal, also fig/lit/idiomatic/i/l; source: the corpus, else
    ``source``), optional header line starting ``sentence<TAB>idiom<TAB>label``.
    JSONL: ``{"sentence", "label", "idiom"?, "id"?, "source"?}``. ``source`` names the corpus
    in the output file names (default: the file's stem). Located errors as for the lexicon.
    """
    path = Path(path)
    src = safe_source(source or path.stem)
    out: list[IdiomSentence] = []
    seen: dict[tuple[str, str | None, str], int] = {}

    def add(line: int, sentence: Any, idiom: Any, label: Any, sid: Any = None, s_src: Any = None) -> None:
        if not isinstance(sentence, str) or not sentence.strip():
            options.fail(DataError("empty or missing sentence", path, line))
            return
        if not isinstance(label, str) or _LABELS.get(label.strip().lower()) is None:
            options.fail(DataError(f"label should be figurative or literal, got {label!r}", path, line))
            return
        if idiom is not None and not isinstance(idiom, str):
            options.fail(DataError(f"idiom should be a string, got {type(idiom).__name__}", path, line))
            return
        idiom_text = idiom.strip() if isinstance(idiom, str) and idiom.strip() else None
        if idiom_text:
            problem = check_idiom_text(idiom_text, path, line)
            if problem:
                options.fail(DataError(problem, path, line))
                return
        sentence = clean_sentence(sentence)
        lab = _LABELS[label.strip().lower()]
        key = (sentence, normalise_spacing(idiom_text) if idiom_text else None, lab)
        if key in seen:
            options.fail(DataError(f"duplicate sentence (first at line {seen[key]})", path, line))
            return
        seen[key] = line
        out.append(
            IdiomSentence(
                str(sid) if sid is not None else f"{path.stem}-{line}",
                sentence,
                lab,
                idiom_text,
                safe_source(s_src) if isinstance(s_src, str) and s_src else src,
                str(path),
                line,
            )
        )

    if path.suffix in (".jsonl", ".json"):
        for line, obj in iter_jsonl(path, options):
            add(line, obj.get("sentence"), obj.get("idiom"), obj.get("label"), obj.get("id"), obj.get("source"))
        return out
    first = True
    for line, text in iter_lines(path):
        cols = text.split("\t")
        if first and [c.strip().lower() for c in cols[:3]] == ["sentence", "idiom", "label"]:
            first = False
            continue
        first = False
        if len(cols) not in (3, 4):
            options.fail(DataError(f"expected 'sentence<TAB>idiom<TAB>label[<TAB>source]' (3 or 4 columns), found {len(cols)}", path, line))
            continue
        add(line, cols[0], cols[1], cols[2], None, cols[3].strip() if len(cols) == 4 else None)
    return out


def write_sentences(sentences: Iterable[IdiomSentence], path: str | Path) -> int:
    """Write ``sentence<TAB>idiom<TAB>label<TAB>source`` lines with a header; returns the number of sentences."""
    n = 0
    with atomic_write(path) as f:
        f.write("sentence\tidiom\tlabel\tsource\n")
        for s in sentences:
            f.write(f"{one_line(s.sentence)}\t{s.idiom or ''}\t{s.label}\t{s.source or ''}\n")
            n += 1
    return n


def sentences_from_impli(data_dir: str | Path, sources: Sequence[str] | None = None, options: LoadOptions = STRICT) -> list[IdiomSentence]:
    """IMPLI's own idiom premises as sentences: fig_context premises figurative, lit_context literal (idiom unknown)."""
    out: list[IdiomSentence] = []
    seen: set[tuple[str, str]] = set()
    for spec in IMPLI_FILES:
        if spec.pair_type not in ("fig_context", "lit_context") or (sources and spec.source not in sources):
            continue
        label = FIGURATIVE if spec.pair_type == "fig_context" else LITERAL
        for rec in load_impli_file(spec, Path(data_dir), options):
            if (rec.premise, label) in seen:
                continue
            seen.add((rec.premise, label))
            out.append(IdiomSentence(rec.id, rec.premise, label, None, spec.source, rec.meta["file"], rec.meta["line"]))
    return out


def safe_source(name: str | None) -> str:
    """A corpus name usable inside IMPLI file names: [a-z0-9-] only (an underscore could fake "_ne")."""
    text = re.sub(r"[^a-z0-9]+", "-", (name or "custom").lower()).strip("-")
    return text or "custom"


def one_line(text: str) -> str:
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
