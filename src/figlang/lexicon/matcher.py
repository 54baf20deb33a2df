"""Finding lexicon idioms in tagged text, tolerant to inflection, slots, determiners and insertions.

Each idiom is compiled once into a sequence of *elements*:

* ``WORD``: a content word; matches any inflection (lemminflect) or the same lemma
  ("spill" ↔ spilled/spilt/spilling, "bean" ↔ beans);
* ``FUNC``: a closed-class word (preposition, particle, pronoun, negation); matches itself
  (and ``not`` ↔ ``n't``/``never``);
* ``DET``: a/an/the; optional, and matches any determiner or possessive ("hit the nail" ↔
  "hit that nail", "a piece of cake" ↔ "piece of cake");
* ``POSS``: a possessive slot (one's, someone's, sb's, and possessive pronouns written in
  the lexicon: "lose one's temper" ↔ "lost his temper", "put your cards on the table" ↔ "put
  our cards on the table", "Mary's");
* ``REFL``: oneself/yourself/... ↔ any reflexive pronoun;
* ``OBJ``: someone/somebody/sb/something/sth ↔ a pronoun or a short noun phrase;
* ``BE``: be/is/are... ↔ any form of *be*; optional when the idiom starts with it ("be all ears"
  ↔ "are all ears", "all ears"); a "'s" after a pronoun is one ("it's early days" ↔ "it is early days");
* ``MARK``: the possessive "'s" or "'" after a noun ("child's play", "hornets' nest"): matched
  where the text has it, optional where it does not ("for donkey years").

A content word written in the present tense ("my heart bleeds for you") takes the verb's other
forms ("my heart bled for you"); one written as a past form or an -ing form stays as written.
"her" before a function word or at the end is an object (``OBJ``: "sweep her off her feet" ↔
"swept him off his feet"), before a content word a possessive.

Between two matched elements a bounded *gap* of inserted words is allowed (adverbs,
adjectives, determiners, numbers, the negation particle, and one object pronoun after a
verb): "spilled all the beans", "hit the nail right on the head". Punctuation, nouns and verbs
are never skipped, and the total gap is bounded (``max_gap`` per position, ``max_total_gap``).
One *joiner* between two elements costs nothing and is allowed even in idioms too short for gaps:
a hyphen written without spaces ("early-bird" ↔ "early bird") or a quotation mark ('from "pillar
to post"', "Achilles ' heel").

A cheap pre-filter (:meth:`IdiomMatcher.candidates`) needs only lower-case token strings: it
indexes every idiom by all surface forms of its rarest-looking content word and checks that
every required word has some form in the sentence, so that only candidate sentences are
tagged. Literal uses ("he kicked the bucket across the yard") cannot be told apart here: the
match keeps the sentence, the matched words, slots and insertions for annotators to judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from figlang.core.text import normalise_word
from figlang.lexicon.idioms import Lexicon, LexiconEntry

WORD, FUNC, DET, POSS, REFL, OBJ, BE, PUNCT = "WORD", "FUNC", "DET", "POSS", "REFL", "OBJ", "BE", "PUNCT"
MARK = "MARK"  # the possessive 's / ' after a noun written in the lexicon

ARTICLES = frozenset({"a", "an", "the"})
POSS_WORDS = frozenset({"my", "your", "his", "her", "its", "our", "their", "thy"})
POSS_SLOT_HEADS = frozenset({"one", "someone", "somebody", "sb", "anyone", "anybody", "sb."})
REFL_WORDS = frozenset(
    {"oneself", "yourself", "himself", "herself", "myself", "itself", "ourselves", "themselves", "yourselves", "thyself"}
)
OBJ_WORDS = frozenset({"someone", "somebody", "sb", "sb.", "sth", "sth.", "something", "anyone", "anybody", "someplace"})
BE_FORMS = frozenset({"be", "is", "are", "am", "was", "were", "been", "being", "'s", "'re", "'m", "ai"})
POSS_MARKS = frozenset({"'s", "'"})
# words after which a written "'s" is "is" ("it's early days", "there's one born every minute"), not a possessive
IS_AFTER = frozenset(
    {"it", "that", "there", "here", "what", "who", "he", "she", "this", "where", "how", "when", "why", "everything", "nothing"}
)
# words after which a written "'s" is "has" ("he's had enough", "she's been there"), so no form of "be"
HAS_AFTER = frozenset({"had", "been", "got"})
QUOTES = frozenset({'"', "'", "``", "''", "\u201c", "\u201d", "\u2018", "\u2019"})
CLOSED = frozenset(
    """
    a about above across after against along amid among an and around as at before behind below beneath beside besides
    between beyond but by despite down during except for from in inside into like near nor of off on onto or out outside
    over past round since than that the then these this those though through throughout till to toward towards under
    underneath unlike until up upon via when where whether which while who whom whose why with within without yet so if
    i me you he him she it we us they them one all any both each either every neither no none not n't never nothing
    some such what whatever whoever there here can could may might must shall should will would 'll 'd 've 's 're
    own other another ca nt wo
    """.split()
)
ALIASES = {
    "not": {"not", "n't", "never", "nt"},
    "n't": {"not", "n't", "nt"},
    "nt": {"not", "n't", "nt"},
    # a modal written in the present also stands in its past ("bit off more than I could chew", "couldn't see the
    # wood for the trees", "said he would cross that bridge when he came to it"): the development set's miss
    "can": {"can", "could", "ca"},
    "ca": {"ca", "can", "could"},
    "wo": {"wo", "will", "would"},
    "'ll": {"'ll", "will", "would"},
    "will": {"will", "'ll", "would"},
    "'ve": {"'ve", "have"},
    "till": {"till", "until", "'til", "til"},
    "until": {"till", "until"},
    "round": {"round", "around"},
    "around": {"around", "round"},
    "toward": {"toward", "towards"},
    "towards": {"toward", "towards"},
}
MODALS = frozenset({"can", "ca", "could", "may", "might", "must", "shall", "should", "will", "wo", "would", "'ll", "'d"})
# gap (insertion) tokens allowed between elements
GAP_POS = frozenset({"ADV", "ADJ", "DET", "NUM", "PART"})
GAP_TAGS = frozenset({"RB", "RBR", "RBS", "JJ", "JJR", "JJS", "DT", "PDT", "PRP$", "CD"})


@lru_cache(maxsize=100_000)
def word_forms(word: str) -> tuple[frozenset[str], frozenset[str]]:
    """(surface forms, lemmas) accepted for a content word of an idiom.

    A word written in its base form inflects ("spill" → spilled/spilt, "lose" → lost). A word
    written already inflected stays as written ("up and running" must not match "up and ran",
    "gone with the wind" not "go with the wind").
    """
    import lemminflect

    by_pos = lemminflect.getAllLemmas(word)
    own = [upos for upos, lemmas in by_pos.items() if word in lemmas]
    if by_pos and not own:
        # an inflected form stays fixed, except a plural noun may be singular ("tickle the ivory") and a verb
        # written in the present tense takes its other forms ("my heart bleeds for you" ↔ "my heart bled for you")
        forms = {word}
        for lemma in by_pos.get("NOUN", ()):
            for group in lemminflect.getAllInflections(lemma, upos="NOUN").values():
                forms.update(group)
        for lemma in by_pos.get("VERB", ()):
            verb = lemminflect.getAllInflections(lemma, upos="VERB")
            if word in verb.get("VBZ", ()):
                for group in verb.values():
                    forms.update(group)
        return frozenset(f.lower() for f in forms), frozenset()
    forms = {word}
    for upos in own or ():
        for group in lemminflect.getAllInflections(word, upos=upos).values():
            forms.update(group)
    if not by_pos:  # unknown to lemminflect: regular guesses
        for upos in ("NOUN", "VERB"):
            for group in lemminflect.getAllInflectionsOOV(word, upos).values():
                forms.update(group)
    return frozenset(f.lower() for f in forms), frozenset({word})


@dataclass(frozen=True)
class Element:
    kind: str
    text: str  # the word as written in the lexicon
    forms: frozenset[str] = frozenset()
    lemmas: frozenset[str] = frozenset()
    optional: bool = False


@dataclass(frozen=True)
class IdiomPattern:
    entry: LexiconEntry
    index: int
    elements: tuple[Element, ...]
    allow_gaps: bool = True

    @property
    def required(self) -> tuple[Element, ...]:
        return tuple(e for e in self.elements if e.kind in (WORD, FUNC, MARK) and not e.optional)


@dataclass(frozen=True)
class IdiomMatch:
    """One idiom found in one tokenised sentence (token offsets are into that sentence)."""

    pattern_index: int
    start: int  # first token of the match
    end: int  # one past the last token
    element_tokens: tuple[tuple[int, int] | None, ...]  # per element: (start, end) tokens, None if skipped
    insertions: tuple[int, ...]  # tokens of the gaps
    slots: tuple[tuple[str, str], ...] = ()  # (slot kind, filler text)


def compile_pattern(entry: LexiconEntry, index: int, tokenize) -> IdiomPattern | None:
    """Turn an idiom into elements; ``tokenize`` splits a string like the text tokenizer does."""
    toks = [normalise_word(t) for t in tokenize(entry.key)]
    toks = [t for t in toks if t and (any(c.isalnum() for c in t) or t in {"'s", "'", ",", ";", ":", "-", "--", "—"})]
    elements: list[Element] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t in POSS_SLOT_HEADS and nxt in {"'s", "'"}:
            elements.append(Element(POSS, f"{t}{nxt}"))
            i += 2
            continue
        if t in POSS_MARKS:
            prev = elements[-1] if elements else None
            if prev is not None and t == "'s" and prev.kind == FUNC and prev.text in IS_AFTER:
                elements.append(Element(BE, t, BE_FORMS, frozenset({"be"})))
            elif prev is not None and prev.kind in (WORD, FUNC):
                elements.append(Element(MARK, t, POSS_MARKS, optional=True))  # "donkey's years" ↔ "donkey years"
            i += 1
            continue
        if not any(c.isalnum() for c in t):  # a comma or dash inside the idiom: optional in the text
            if elements and elements[-1].kind != PUNCT:
                elements.append(Element(PUNCT, t, optional=True))
            i += 1
            continue
        if t in ARTICLES:
            elements.append(Element(DET, t, optional=True))
        elif t == "her" and (nxt is None or (nxt in CLOSED and nxt != "own")):
            elements.append(Element(OBJ, t))  # "sweep her off her feet": an object before a function word
        elif t == "one" and nxt in MODALS:
            elements.append(Element(OBJ, t))  # "more than one can chew": the generic subject is a slot ("than I could chew")
        elif t in POSS_WORDS:
            elements.append(Element(POSS, t))
        elif t in REFL_WORDS:
            elements.append(Element(REFL, t))
        elif t in OBJ_WORDS:
            elements.append(Element(OBJ, t))
        elif t in BE_FORMS - {"'s"}:
            elements.append(Element(BE, t, BE_FORMS, frozenset({"be"}), optional=not elements))
        elif t in CLOSED:
            elements.append(Element(FUNC, t, frozenset(ALIASES.get(t, {t}))))
        else:
            forms, lemmas = word_forms(t)
            elements.append(Element(WORD, t, forms, lemmas))
        i += 1
    # a leading infinitive "to" is optional when at least two content words follow ("to beat the band")
    if len(elements) > 1 and elements[0].kind == FUNC and elements[0].text == "to":
        if sum(e.kind == WORD for e in elements[1:]) >= 2 and elements[1].kind == WORD:
            elements[0] = Element(FUNC, "to", elements[0].forms, optional=True)
    # trailing optional articles or punctuation make no sense; drop them
    while elements and elements[-1].kind in (DET, PUNCT):
        elements.pop()
    if not any(e.kind in (WORD, FUNC) for e in elements):
        return None
    fixed = sum(e.kind in (WORD, FUNC) and not e.optional for e in elements)
    words = sum(e.kind == WORD for e in elements)
    if elements and elements[0].kind == BE and words < 2:
        # "be in hand", "be all ears": without "be" the rest is a common literal phrase ("hat in hand")
        elements[0] = replace(elements[0], optional=False)
    if fixed < 2:
        # a weak pattern ("be my guest", "be a plus"): everything written is required, as written
        pinned = []
        for e in elements:
            if e.kind in (DET, POSS):
                pinned.append(Element(FUNC, e.text, frozenset({e.text})))
            elif e.kind == PUNCT:
                continue
            else:
                pinned.append(replace(e, optional=False))
        elements = pinned
    elif words < 2:
        # one content word: its article is part of the idiom ("to a turn" is not "to turn")
        elements = [replace(e, optional=False) if e.kind == DET else e for e in elements]
    allow_gaps = len([e for e in elements if e.kind not in (PUNCT, MARK)]) > 2 and fixed >= 2
    return IdiomPattern(entry, index, tuple(elements), allow_gaps)


@dataclass
class MatcherStats:
    compiled: int = 0
    not_compiled: list[str] = field(default_factory=list)


class IdiomMatcher:
    """All idioms of a lexicon, compiled; ``candidates`` pre-filters, ``match`` verifies on tagged tokens."""

    def __init__(self, lexicon: Lexicon | Iterable[LexiconEntry], tokenize=None, max_gap: int = 2, max_total_gap: int = 3):
        if tokenize is None:
            import spacy

            _blank = spacy.blank("en")

            def tokenize(text: str) -> list[str]:
                return [t.text for t in _blank.tokenizer(text)]

        self.max_gap = max_gap
        self.max_total_gap = max_total_gap
        self.patterns: list[IdiomPattern] = []
        self.stats = MatcherStats()
        for entry in lexicon:
            p = compile_pattern(entry, len(self.patterns), tokenize)
            if p is None:
                self.stats.not_compiled.append(entry.expression)
                continue
            self.patterns.append(p)
        self.stats.compiled = len(self.patterns)
        # pre-filter index: every surface form of each pattern's anchor → pattern indices
        self._index: dict[str, list[int]] = {}
        for p in self.patterns:
            anchor = _anchor(p)
            for form in anchor.forms:
                self._index.setdefault(form, []).append(p.index)

    # ---------------------------------------------------------------- pre-filter
    def candidates(self, lower_tokens: Iterable[str]) -> list[int]:
        """Patterns whose required words all occur (in some form) among the sentence's lower-cased tokens."""
        present = {normalise_word(t) for t in lower_tokens}
        seen: set[int] = set()
        out: list[int] = []
        for t in present:
            for idx in self._index.get(t, ()):
                if idx in seen:
                    continue
                seen.add(idx)
                if all(e.forms & present for e in self.patterns[idx].required):
                    out.append(idx)
        out.sort()
        return out

    # ---------------------------------------------------------------- verification
    def match(self, tokens: Sequence, pattern_indices: Iterable[int] | None = None) -> list[IdiomMatch]:
        """Matches in a tagged token sequence (a spaCy Doc or Span); one per idiom, leftmost first.

        A match whose span lies strictly inside another idiom's match is dropped ("up to the
        hilt" wins over "to the hilt"), unless it fills that idiom's slot ("took the black sheep
        for a ride": both).
        """
        toks = [_Tok.of(t) for t in tokens]
        indices = range(len(self.patterns)) if pattern_indices is None else pattern_indices
        found: list[IdiomMatch] = []
        for idx in indices:
            m = self._match_one(self.patterns[idx], toks)
            if m is not None:
                found.append(m)
        kept = [m for m in found if not any(o is not m and _inside(m, o, self.patterns[o.pattern_index]) for o in found)]
        kept.sort(key=lambda m: (m.start, m.end, m.pattern_index))
        return kept

    def _match_one(self, pattern: IdiomPattern, toks: list[_Tok]) -> IdiomMatch | None:
        elements = pattern.elements
        self._gaps = pattern.allow_gaps
        n = len(toks)
        for start in range(n):
            result = self._dfs(elements, 0, start, toks, [], [], 0, first=True)
            if result is not None:
                spans, gaps = result
                used = [s for s in spans if s is not None]
                m_start = min(s[0] for s in used)
                m_end = max(s[1] for s in used)
                slots = tuple(
                    (el.kind, " ".join(toks[k].text for k in range(s[0], s[1])))
                    for el, s in zip(elements, spans)
                    if s is not None and el.kind in (POSS, REFL, OBJ)
                )
                return IdiomMatch(pattern.index, m_start, m_end, tuple(spans), tuple(gaps), slots)
        return None

    def _dfs(self, elements, k, pos, toks, spans, gaps, gap_used, first):
        if k == len(elements):
            return list(spans), list(gaps)
        el = elements[k]
        n = len(toks)
        max_g = 0 if first or not self._gaps else min(self.max_gap, self.max_total_gap - gap_used)
        for g in range(max_g + 1):
            p = pos + g
            if p >= n:
                break
            if g > 0 and not _gap_ok(toks[p - 1], toks, spans, g, el):
                break
            if g > 0 and el.kind == MARK:
                break
            for end in _element_ends(el, toks, p):
                spans.append((p, end))
                gaps.extend(range(pos, p))
                r = self._dfs(elements, k + 1, end, toks, spans, gaps, gap_used + g, first=False)
                if r is not None:
                    return r
                spans.pop()
                if g:
                    del gaps[-g:]
        if not first and pos + 1 < n and _joiner(toks, pos):  # "early-bird", 'from "pillar to post"': free
            for end in _element_ends(el, toks, pos + 1):
                spans.append((pos + 1, end))
                gaps.append(pos)
                r = self._dfs(elements, k + 1, end, toks, spans, gaps, gap_used, first=False)
                if r is not None:
                    return r
                spans.pop()
                gaps.pop()
        if el.optional:  # matching it is preferred; skipping it costs nothing
            spans.append(None)
            r = self._dfs(elements, k + 1, pos, toks, spans, gaps, gap_used, first)
            if r is not None:
                return r
            spans.pop()
        return None


def _inside(m: IdiomMatch, o: IdiomMatch, o_pattern: IdiomPattern) -> bool:
    """Does ``o`` cover ``m`` (strictly longer), with ``m`` not inside one of ``o``'s slot fillers?"""
    if not (o.start <= m.start and m.end <= o.end and (o.end - o.start) > (m.end - m.start)):
        return False
    for el, span in zip(o_pattern.elements, o.element_tokens):
        if span is not None and el.kind in (OBJ, POSS) and span[0] <= m.start and m.end <= span[1]:
            return False
    return True


def _anchor(p: IdiomPattern) -> Element:
    words = [e for e in p.required if e.kind == WORD]
    pool = words or list(p.required)
    return max(pool, key=lambda e: (len(e.text), -p.elements.index(e)))


@dataclass(frozen=True)
class _Tok:
    text: str
    lower: str
    lemma: str
    pos: str
    tag: str
    space: bool = True  # whitespace after the token

    @classmethod
    def of(cls, t) -> _Tok:
        if isinstance(t, _Tok):
            return t
        text = t.text
        return cls(text, normalise_word(text), normalise_word(t.lemma_ or text), t.pos_, t.tag_, bool(t.whitespace_))


def _joiner(toks: list[_Tok], i: int) -> bool:
    """Is ``toks[i]`` a hyphen written without spaces ("early-bird") or a quotation mark?"""
    t = toks[i]
    if t.text == "-":
        return i > 0 and not toks[i - 1].space and not t.space
    return t.text in QUOTES or t.tag in {"``", "''"}


def _element_ends(el: Element, toks: list[_Tok], i: int) -> list[int]:
    t = toks[i]
    kind = el.kind
    if kind == WORD:
        return [i + 1] if (t.lower in el.forms or t.lemma in el.lemmas) else []
    if kind == FUNC:
        return [i + 1] if t.lower in el.forms else []
    if kind == MARK:
        return [i + 1] if t.lower in POSS_MARKS or t.tag == "POS" else []
    if kind == BE:
        if t.lower == "'s" and i + 1 < len(toks) and toks[i + 1].lower in HAS_AFTER:
            return []  # "he's had", "she's been": "has", not "is"
        return [i + 1] if (t.lower in BE_FORMS and t.tag != "POS") or t.lemma == "be" else []
    if kind == PUNCT:
        return [i + 1] if t.pos == "PUNCT" or not any(c.isalnum() for c in t.text) else []
    if kind == DET:  # an article, or a possessive in its place ("chew the cud" ↔ "chewing my cud")
        return [i + 1] if t.lower in ARTICLES or t.tag in {"PRP$", "WP$"} else []
    if kind == REFL:
        return [i + 1] if t.lower in REFL_WORDS else []
    if kind == POSS:
        if t.tag in {"PRP$", "WP$"} or t.lower in POSS_WORDS:
            return [i + 1]
        # NP + 's  ("Mary's", "the old man's", "one's")
        j = i
        while j < len(toks) and j - i < 4 and toks[j].pos in {"PROPN", "NOUN", "DET", "ADJ", "PRON", "NUM"} and toks[j].tag != "POS":
            j += 1
        if i < j < len(toks) and (toks[j].tag == "POS" or toks[j].lower in {"'s", "'"}):
            return [j + 1]
        return []
    if kind == OBJ:
        if t.lower == el.text:
            return [i + 1]
        if t.pos == "PRON" and t.tag not in {"PRP$", "WP$"} and not t.lower.endswith(("self", "selves")):
            return [i + 1]
        # a short noun phrase: (DET|PRP$)? ADJ* (NOUN|PROPN)+
        ends = []
        j = i
        if toks[j].tag in {"DT", "PRP$", "PDT"}:
            j += 1
        while j < len(toks) and j - i < 4 and toks[j].pos in {"ADJ", "NUM"}:
            j += 1
        while j < len(toks) and j - i < 5 and toks[j].pos in {"NOUN", "PROPN"}:
            j += 1
            ends.append(j)
        return ends
    return []


ORDINALS = frozenset(
    {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "last", "next", "other", "same", "very"}
)


def _gap_ok(gt: _Tok, toks, spans, g: int, next_el: Element) -> bool:
    """May ``gt`` be skipped as an insertion before ``next_el``?

    Adverbs and adjectives may be inserted ("hit the nail right on the head", "beat about the
    proverbial bush"); determiners, possessives and numbers only before the idiom's own
    article or possessive ("spilled all the beans"), since one before a bare noun makes a
    literal phrase ("on edge" vs "on the edge", "in hand" vs "in his hand").
    """
    if gt.text == "-":
        return True
    if gt.tag in {",", ".", ":", "``", "''", "-LRB-", "-RRB-"}:
        return False
    if gt.lower in {"all", "both", "each"}:  # floating quantifiers ("taking us all for a ride")
        return True
    if gt.tag in {"DT", "PDT", "PRP$", "WP$", "CD"} or gt.pos in {"DET", "NUM"} or gt.lower in ORDINALS:
        return next_el.kind in (DET, POSS) and gt.lower not in ORDINALS and gt.tag != "CD"
    if gt.pos in GAP_POS or gt.tag in GAP_TAGS:
        return True
    # one object pronoun right after a verb ("give it up", "take them to task")
    if g == 1 and gt.pos == "PRON" and gt.tag == "PRP" and spans and spans[-1] is not None:
        prev = toks[spans[-1][1] - 1]
        return prev.pos in {"VERB", "AUX"}
    return False
