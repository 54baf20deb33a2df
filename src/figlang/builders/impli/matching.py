"""Finding a lexicon idiom in a spaCy parse, with its slots (one's, oneself, someone, something).

Not :class:`figlang.lexicon.matcher.IdiomMatcher`: that one mines plain tokenised text for
candidate sentences (gaps of inserted words allowed, no parse needed). Substitution needs more: the
exact character span to replace, the tokens that fill each slot and the pattern position of each
matched word (to inflect the definition like the idiom's head), so it matches on a dependency parse
and allows no inserted words (they would be deleted with the span).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from figlang.core.text import normalise_spacing, normalise_word
from figlang.lexicon.inflection import REFLEXIVES, getAllLemmas, lemma_keys
from figlang.builders.impli.lexicon import ImpliLexicon

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


# --------------------------------------------------------------------------------------------
# Patterns: idioms as token patterns with slots
# --------------------------------------------------------------------------------------------

POSS_SLOT_WORDS = {"one", "someone", "somebody", "sb", "anyone"}  # + "'s"
NP_SLOT_WORDS = {"someone": "someone", "somebody": "someone", "sb": "someone", "something": "something", "sth": "something"}
REFL_SLOT_WORDS = {"oneself"}
SLOT_TEXT = {"poss": "one's", "refl": "oneself", "someone": "someone", "something": "something"}
DETERMINERS = {
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "my",
    "your",
    "his",
    "her",
    "its",
    "our",
    "their",
    "some",
    "any",
    "no",
    "every",
    "each",
    "another",
    "one's",
}
POSSESSIVES = {"my", "your", "his", "her", "its", "our", "their", "one's", "whose"}
HYPHENS = {"-", "–", "—", "‐"}


@dataclass(frozen=True)
class PatternToken:
    kind: str  # word | det | hyphen | poss | refl | someone | something
    text: str  # normalised (lower case, straight apostrophes)
    keys: frozenset[str] = frozenset()  # word: the forms and lemmas it matches


def words_of(text: str, nlp: Language) -> list[tuple[str, str, str | None]]:
    """(word, whitespace after, slot kind) with "one 's" merged into one possessive slot word."""
    toks = list(nlp.tokenizer(text))
    out: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        low = normalise_word(t.text)
        if low in POSS_SLOT_WORDS and i + 1 < len(toks) and normalise_word(toks[i + 1].text) == "'s" and not t.whitespace_:
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
    for word, _ws, slot in words_of(idiom, nlp):
        low = normalise_word(word)
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
# Finding the idiom in a sentence
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImpliIdiomMatch:
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
        return normalise_spacing(self.idiom)

    def slot_text(self, doc: Doc, kind: str) -> str | None:
        for k, s, e in self.slots:
            if k == kind:
                return doc[s:e].text
        return None


def _inflected_words(pattern: Sequence[PatternToken]) -> int:
    """How many of a pattern's words are inflected forms, not base forms ("strikes" in "strikes a chord": 1;
    "strike a chord": 0). A word lemminflect does not know ("the", "nine") counts as a base form."""
    n = 0
    for p in pattern:
        if p.kind == "word":
            lemmas = getAllLemmas(p.text)
            n += bool(lemmas) and p.text not in {lemma.lower() for forms in lemmas.values() for lemma in forms}
    return n


def token_keys(doc: Doc) -> list[frozenset[str]]:
    return [frozenset({normalise_word(t.text), normalise_word(t.lemma_)}) for t in doc]


def _poss_lengths(doc: Doc, i: int) -> list[int]:
    """Token lengths of a possessive at i: "her" (1), "John 's" (2), "the old man 's" (4)."""
    if i >= len(doc):
        return []
    t = doc[i]
    if t.tag_ == "PRP$" or normalise_word(t.text) in POSSESSIVES:
        return [1]
    for j in range(i + 1, min(i + 5, len(doc))):
        if doc[j].tag_ == "POS" or normalise_word(doc[j].text) in ("'s", "'"):
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


class ImpliIdiomMatcher:
    """Finds lexicon idioms in parsed sentences, tolerant to inflection, determiners, hyphens and slots.

    Named apart from :class:`figlang.lexicon.matcher.IdiomMatcher`: see the module docstring."""

    def __init__(self, lexicon: ImpliLexicon, nlp: Language):
        self.lexicon = lexicon
        self.nlp = nlp
        self.patterns: dict[str, tuple[PatternToken, ...]] = {}
        self._index: dict[str, list[tuple[str, int]]] = defaultdict(list)  # key -> (entry key, offset of anchor)
        self._scan: list[str] = []  # entries without a fixed-offset anchor: tried everywhere
        # which of two entries matching the same tokens comes first (see find): base forms first, then lexicon order
        self._preference: dict[str, tuple[int, int]] = {}
        for rank, (key, entry) in enumerate(lexicon.entries.items()):
            pattern = compile_pattern(entry.idiom, nlp)
            if not any(p.kind == "word" for p in pattern):
                continue  # only slots/determiners: read_lexicon refuses these
            self.patterns[key] = pattern
            self._preference[key] = (_inflected_words(pattern), rank)
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

    def find(self, doc: Doc, only: str | None = None) -> list[ImpliIdiomMatch]:
        """Every occurrence of every idiom (or of idiom ``only``) in ``doc``, in sentence order, longer first.

        Two entries can match the very same tokens ("strike a chord" and "strikes a chord" both match "strikes a
        chord"), and callers keep the first of equal matches (:func:`resolve_overlaps`, the regeneration check).
        Of those the entry written in base form comes first (fewer inflected words: the definition then takes the
        sentence's inflection, "strikes a chord" -> "elicits a reaction"), then the one earlier in the lexicon."""
        keys = token_keys(doc)
        chunk_end = {c.start: c.end for c in doc.noun_chunks} if doc.has_annotation("DEP") else {}
        only_key = normalise_spacing(only) if only else None
        tried: set[tuple[str, int]] = set()
        out: list[ImpliIdiomMatch] = []

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
        # A total order, so that the result does not depend on the order of discovery: that follows the iteration
        # over each token's frozenset of keys, which changes with the process's string hashing (PYTHONHASHSEED); ordered
        # by position and length alone, equal matches of two entries came out in a different order from run to run.
        out.sort(key=lambda m: (m.start, -(m.end - m.start), self._preference[m.key]))
        return out

    def _match_at(
        self, entry_key: str, doc: Doc, keys: list[frozenset[str]], chunk_end: dict[int, int], start: int
    ) -> ImpliIdiomMatch | None:
        pattern = self.patterns[entry_key]
        n = len(doc)
        slots: list[tuple[str, int, int]] = []
        aligned: list[tuple[int, int]] = []

        def go(p: int, d: int) -> int | None:
            if p == len(pattern):
                return d
            pt = pattern[p]
            if pt.kind == "hyphen":
                if d < n and normalise_word(doc[d].text) in HYPHENS:
                    r = go(p + 1, d + 1)
                    if r is not None:
                        return r
                return go(p + 1, d)  # hyphen optional in the sentence
            if d >= n:
                return None
            if p > 0 and normalise_word(doc[d].text) in HYPHENS:  # hyphen in the sentence, not in the idiom
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
                if normalise_word(doc[d].text) in DETERMINERS or doc[d].tag_ == "PRP$":
                    return go(p + 1, d + 1)
                return None
            if pt.kind == "refl":
                if normalise_word(doc[d].text) in REFLEXIVES:
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
        return ImpliIdiomMatch(
            self.lexicon.entries[entry_key].idiom,
            start,
            end,
            span.start_char,
            span.end_char,
            span.text,
            tuple(slots),
            tuple(aligned),
        )


def resolve_overlaps(matches: Sequence[ImpliIdiomMatch]) -> list[ImpliIdiomMatch]:
    """Non-overlapping matches, longest first (then earliest): "spill the beans" wins over "the beans"."""
    chosen: list[ImpliIdiomMatch] = []
    for m in sorted(matches, key=lambda m: (-(m.end_char - m.start_char), m.start_char)):
        if all(m.end <= c.start or m.start >= c.end for c in chosen):
            chosen.append(m)
    return sorted(chosen, key=lambda m: m.start)
