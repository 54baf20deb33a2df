"""figlang's own idiom list: everyday idioms and sayings with meanings in plain words, written for figlang.

The list (``resources/lexicon/curated-idioms.tsv``, one ``idiom<TAB>meaning`` a line, sorted) was written on
2026-12-07 (issue #37's fourth session) by eight writers (helper agents of the session that built it) working
from their own knowledge of English, one a range of first letters (the writer given "a, b" stopped without writing,
so "a" and "b" went to two more), with no sight of figlang's test sets (the everyday-idioms set, PIE-English) or of any idiom
list, dictionary or package: the instruction they had is ``benchmarks/everyday_idioms/curated-instruction.md``.
The parts were merged, de-duplicated and sorted (``sort -f -t$'\t' -k1,1 -u``);
the meanings are the writers' own paraphrases. It is figlang's, under figlang's licence (Apache-2.0), so it ships.

:func:`curated_rows` reads it as lexicon rows and refuses a malformed line with its line number. An idiom made only of function
and light words (:func:`~figlang.lexicon.everyday.strong_words` is 0: "make it", "no way", "for sure", "more or
less") is left out: it would match ordinary text far more often than the idiom (the Wiktionary part's stricter rule,
two strong words or one in three words, would also drop idioms the writers meant, such as "see red" and "come
clean"), and a "their" that refers back to the subject is the matcher's possessive slot ("one's"). Duplicates (the
same idiom twice) keep the first meaning. A transparent simile (:func:`transparent_simile`) is left to the simile
patterns.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from figlang.core.errors import FiglangError
from figlang.lexicon.everyday import idiom_words, strong_words

CURATED = "resources/lexicon/curated-idioms.tsv"
MAX_MEANING_WORDS = 25


def curated_file() -> Path:
    return Path(str(resources.files("figlang").joinpath(CURATED)))


def parse_curated(text: str, name: str = CURATED) -> list[tuple[str, str, int]]:
    """(idiom, meaning, line) of each line of the list; a line that is not ``idiom<TAB>meaning`` is an error."""
    out: list[tuple[str, str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise FiglangError(f"{name}:{number}: expected 'idiom<TAB>meaning', got {line[:80]!r}")
        idiom, meaning = " ".join(parts[0].split()), " ".join(parts[1].split())
        if len(idiom_words(idiom)) < 2:
            raise FiglangError(f"{name}:{number}: {idiom!r} is one word; the list holds multiword idioms only")
        if len(meaning.split()) > MAX_MEANING_WORDS:
            raise FiglangError(f"{name}:{number}: the meaning of {idiom!r} has over {MAX_MEANING_WORDS} words; shorten it")
        out.append((idiom, meaning, number))
    return out


_SIMILE = re.compile(r"^(?:as\s+)?([a-z]+)\s+as\s+\S", re.IGNORECASE)


def transparent_simile(idiom: str, meaning: str) -> bool:
    """An "as ADJ as NP" simile whose meaning repeats its adjective ("as busy as a bee": "extremely busy"): left to the
    simile patterns, which read it as "very busy" and keep its topic, vehicle and property; an opaque one ("as right
    as rain": "perfectly well") or an ironic one ("as clear as mud": "not clear at all") stays in the list."""
    m = _SIMILE.match(idiom)
    if m is None:
        return False
    words = re.findall(r"[a-z]+", meaning.lower())
    return m.group(1).lower() in words and "not" not in words  # "as clear as mud": "not clear at all"


def curated_rows(path: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(resource, expression, definition, origin) of each idiom of figlang's own list."""
    path = path or curated_file()
    rows: list[tuple[str, str, str, str]] = []
    seen: set[str] = set()
    for idiom, meaning, number in parse_curated(path.read_text(encoding="utf-8"), path.name):
        idiom = re.sub(r"\btheir\b", "one's", idiom)  # "give someone a run for their money": the matcher's possessive slot
        if idiom.lower() in seen or strong_words(idiom) < 1 or transparent_simile(idiom, meaning):
            continue
        seen.add(idiom.lower())
        rows.append(("curated", idiom, meaning, f"curated-idioms.tsv:{number}"))
    return rows
