"""Definitions as templates, and their realisation in a sentence: inflection, slot filling, capitals."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from figlang.core.text import normalise_word
from figlang.lexicon.inflection import (
    VERB_TAGS,
    capitalize_first,
    infer_verb_tag,
    inflect_noun,
    inflect_verb,
    possessive_to_reflexive,
    subject_features,
)
from figlang.builders.impli.matching import ImpliIdiomMatch, PatternToken, words_of
from figlang.builders.impli.nlp import Progress, no_progress, parse_texts

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


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

    def prepare(self, texts: Iterable[str], progress: Progress = no_progress, stage: str = "definitions") -> None:
        """Parse many definitions in batches (faster than one by one)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not todo:
            return
        verbal_texts = [self._verbal_text(t) for t in todo]
        verbal = parse_texts(verbal_texts, self.nlp, progress, stage)
        nominal = parse_texts(todo, self.nlp, no_progress, stage)
        for t, vt in zip(todo, verbal_texts):
            self._cache[t] = self._make(t, verbal[vt], nominal[t])

    @staticmethod
    def _verbal_text(text: str) -> str:
        return text if normalise_word(text).startswith("to ") else "to " + text

    def _make(self, text: str, vdoc: Doc | None = None, ndoc: Doc | None = None) -> DefinitionTemplate:
        words_ws = words_of(text, self.nlp)
        words = tuple(w for w, _, _ in words_ws)
        spaces = tuple(ws for _, ws, _ in words_ws)
        slots = tuple(s for _, _, s in words_ws)
        vdoc = vdoc if vdoc is not None else self.nlp(self._verbal_text(text))
        ndoc = ndoc if ndoc is not None else self.nlp(text)
        # "to die" is an infinitive (dropped in a verb's slot); "to a crisis" is not
        starts_to = normalise_word(text).startswith("to ")
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
                verb_head, verb_lemma = wi, lemma_of_verb(t)
                for c in t.children:
                    if c.dep_ == "conj" and c.pos_ == "VERB" and c.tag_ in VERB_TAGS and c.i in vmap:
                        conj.append((vmap[c.i], lemma_of_verb(c)))
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


def lemma_of_verb(tok: Any) -> str:
    """A verb token's lemma. lemminflect's dictionary first: spaCy keeps "issued" as its own lemma
    when the tagger reads it as VB (as in the verbal reading "to issued a challenge")."""
    low = normalise_word(tok.text)
    lemma = tok.lemma_.lower()
    if low in ("'s", "'re", "'m", "am", "is", "are", "was", "were", "been", "being") or lemma == "be":
        return "be"
    known = all_lemmas(low)
    verbs = known.get("VERB") or known.get("AUX")
    if verbs and low not in verbs:
        return verbs[0]
    return lemma or low


_NOT_BEFORE_VERB = {"a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "every", "no"}


def is_verb_head(tok: Any, start: int | None = None, end: int | None = None) -> bool:
    """Can this token carry the idiom's verb inflection? A verb tag, not right after an article or
    possessive ("A light at the end of the tunnel": "light" is a noun, whatever the tagger says) and,
    given the idiom's token span, the root of that span ("true to form": "form" depends on "true",
    so the idiom is not verbal)."""
    if tok.tag_ not in VERB_TAGS or tok.pos_ not in ("VERB", "AUX"):
        return False
    if tok.i > 0 and normalise_word(tok.doc[tok.i - 1].text) in _NOT_BEFORE_VERB:
        return False
    if start is not None and end is not None and start <= tok.head.i < end and tok.head.i != tok.i:
        return False
    return True


def _effective_tag(tok: Any) -> str:
    """The verb tag to copy, correcting the tagger's past tense/participle slips by the auxiliaries:
    a VBN with no have/be auxiliary heading a clause is a past tense ("Worked like a charm"), a VBD
    after "have" a participle."""
    tag = tok.tag_
    auxes = {normalise_word(c.text) for c in tok.children if c.dep_ in ("aux", "auxpass")}
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
    verbal: bool  # the idiom has a head verb in the sentence, whose inflection the definition took


def _head_verb(match: ImpliIdiomMatch, doc: Doc, pattern: Sequence[PatternToken]) -> tuple[int, str] | None:
    """(token index, Penn tag) of the idiom's head verb in the sentence, or None for a non-verbal idiom."""
    for _, d in match.aligned:
        t = doc[d]
        if is_verb_head(t, match.start, match.end):
            return d, _effective_tag(t)
    # spaCy sometimes reads an idiom's verb as a noun ("flies in the face of"): trust the idiom's first word
    for p, d in match.aligned[:1]:
        word = pattern[p].text
        form = normalise_word(doc[d].text)
        if p == 0 and form != word and doc[d].pos_ in ("NOUN", "ADJ", "PROPN") and word in all_lemmas(word).get("VERB", ()):
            tag = infer_verb_tag(word, form)  # only an inflected form says which tag ("flies" -> VBZ)
            if tag:
                return d, tag
    return None


@lru_cache(maxsize=50_000)
def all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def _head_noun_number(match: ImpliIdiomMatch, doc: Doc, pattern: Sequence[PatternToken]) -> bool | None:
    """For a non-verbal idiom: True (make the definition plural), False (singular) or None (as is)."""
    span = doc[match.start : match.end]
    by_token = {d: p for p, d in match.aligned}
    for t in span:
        if (t.head.i < match.start or t.head.i >= match.end or t.head.i == t.i) and t.pos_ in ("NOUN", "PROPN"):
            p = by_token.get(t.i)
            if p is None:
                return None
            word = pattern[p].text
            if normalise_word(t.text) == word:
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
    prev = [t for t in before if not (t.is_space or normalise_word(t.text) in ("'", '"', "“", "‘", "(", "«"))]
    return bool(prev) and prev[-1].text in (".", "!", "?", "…", ":") and doc[i].text[:1].isupper()


def realise(
    template: DefinitionTemplate,
    match: ImpliIdiomMatch,
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
            if normalise_word(occ.lemma_) == lemma and lemma != "be":
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
            filler = poss or (reflexive_to_possessive(refl) if refl else None)
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
    return Realisation(text, tuple(ops), tuple(unfilled), head is not None)


_SUBJECT_TO_POSS = {"i": "my", "you": "your", "he": "his", "she": "her", "it": "its", "we": "our", "they": "their"}


def _subject_possessive(doc: Doc, verb_index: int) -> str | None:
    """The possessive agreeing with the subject of the idiom's verb ("She blew a fuse" -> "her"),
    for definitions with "one's"/"oneself" when the idiom itself had none. Noun subjects -> "their"."""
    node = doc[verb_index]
    for _ in range(3):
        subj = next((c for c in node.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is not None:
            low = normalise_word(subj.text)
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


_REFL_TO_POSS = {
    "myself": "my",
    "yourself": "your",
    "himself": "his",
    "herself": "her",
    "itself": "its",
    "ourselves": "our",
    "themselves": "their",
    "yourselves": "your",
    "oneself": "one's",
    "themself": "their",
}


def reflexive_to_possessive(refl: str) -> str | None:
    return _REFL_TO_POSS.get(normalise_word(refl))


def _keeps_capital(filler: str, doc: Doc, match: ImpliIdiomMatch) -> bool:
    """A slot filler keeps its capital unless it was capitalised only for starting the sentence."""
    for _, s, e in match.slots:
        if doc[s:e].text == filler:
            t = doc[s]
            return not (_sentence_initial(doc, s) and t.pos_ in ("PRON", "DET"))
    return True
