"""Meanings and literal paraphrases, with the builders' own machinery.

* Idioms: the meaning is the lexicon's gloss (resources in preference order), else WordNet's
  gloss of the idiom as a multi-word lemma ("kick_the_bucket"), else, only when asked for, an
  offline LM's answer. The paraphrase replaces the idiom by its meaning through the IMPLI
  builder's :func:`~figlang.builders.impli.realise` (the head verb takes the idiom's
  inflection, slots are filled, a sentence-initial capital kept) and its well-formedness check
  :func:`~figlang.builders.impli.check_pair`. The miner's match is handed to it as the
  IMPLI builder's match type (:func:`to_impli_match`); nothing is matched twice.
* Similes: an explicit simile's meaning is its property made strong ("as busy as a bee" ->
  "very busy"), the paraphrase that phrase in the simile's place; an implicit one ("fought like
  a tiger") has a meaning only from the lexicon or the LM.
* Metaphor candidates: the IMPLI builder's metaphor replacement
  (:func:`~figlang.builders.impli.build_metaphor_pairs`, WordNet's literal word for the
  metaphorical adjective or verb, inflected), with the chosen WordNet sense's gloss as meaning.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from figlang.lexicon.matcher import BE, FUNC, OBJ, POSS, REFL, WORD
from figlang.core.errors import FiglangError
from figlang.knowledge.meanings import lm_meaning, wordnet_gloss  # noqa: F401  (re-exported for interpret.api)
from figlang.lexicon.wordnet import load_wordnet
from figlang.interpret.detect import RawHit


@dataclass(frozen=True)
class Meaning:
    text: str | None
    source: str | None  # lexicon:<resource> | wordnet | pattern | lm:<model> | None


@dataclass(frozen=True)
class Paraphrase:
    text: str | None  # the sentence with the expression replaced by its meaning
    replacement: str | None  # what replaced the expression
    ops: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # check_pair's reasons


def clean_definition(text: str) -> str:
    """A gloss made to fit a sentence: first alternative, no final full stop, no capital from the dictionary."""
    d = re.split(r";|\s\|\s", text)[0].strip().rstrip(".").strip()
    d = re.sub(r"^(?:an? |the )?(?:euphemism|euphemistic|metaphor|idiom|expression|phrase)(?: \w+)? for ", "", d, flags=re.IGNORECASE) or d
    if d[:1].isupper() and not d.startswith("I ") and not d[:2].isupper():
        d = d[:1].lower() + d[1:]
    return d


# ------------------------------------------------------------------------------------------ WordNet


_WN: list[Any] = []


def wordnet() -> Any | None:
    """The offline WordNet, or None when it is not installed (meanings then skip WordNet)."""
    if not _WN:
        try:
            _WN.append(load_wordnet())
        except FiglangError:
            _WN.append(None)
    return _WN[0]


# wordnet_gloss and lm_meaning live with the other meaning sources (figlang.knowledge.meanings), which the
# meaning-aware scoring methods share; they are imported here, at the top of this module.


# ------------------------------------------------------------------------------------------ idioms


class IdiomParaphraser:
    """The IMPLI builder's definition substitution applied to the miner's matches."""

    def __init__(self) -> None:
        from figlang.builders.impli import TemplateCache, load_nlp

        self.nlp = load_nlp()
        self.templates = TemplateCache(self.nlp)
        self._patterns: dict[str, Any] = {}

    def impli_pattern(self, key: str):
        from figlang.builders.impli import compile_pattern

        if key not in self._patterns:
            self._patterns[key] = compile_pattern(key, self.nlp)
        return self._patterns[key]

    def to_impli_match(self, hit: RawHit):
        """The miner's match as the IMPLI builder's match (its words aligned to the IMPLI pattern's)."""
        from figlang.builders.impli import ImpliIdiomMatch as IdiomMatch
        from figlang.builders.impli.matching import NP_SLOT_WORDS

        m, pattern, doc = hit.idiom_match, hit.idiom_pattern, hit.doc
        ipat = self.impli_pattern(pattern.entry.key)
        texted = [(el, sp) for el, sp in zip(pattern.elements, m.element_tokens) if sp is not None and el.kind in (WORD, FUNC, BE)]
        aligned: list[tuple[int, int]] = []
        j = 0
        for p, pt in enumerate(ipat):
            if pt.kind != "word":
                continue
            for q in range(j, len(texted)):
                el, tokens = texted[q]
                if el.text == pt.text or (el.kind == BE and pt.text in ("be", "is", "are")):
                    aligned.append((p, tokens[0]))
                    j = q + 1
                    break
        slots: list[tuple[str, int, int]] = []
        for el, sp in zip(pattern.elements, m.element_tokens):
            if sp is None:
                continue
            if el.kind == POSS:
                slots.append(("poss", sp[0], sp[1]))
            elif el.kind == REFL:
                slots.append(("refl", sp[0], sp[1]))
            elif el.kind == OBJ:
                slots.append((NP_SLOT_WORDS.get(el.text.rstrip("."), "someone"), sp[0], sp[1]))
        span = doc[m.start : m.end]
        return IdiomMatch(
            pattern.entry.expression, m.start, m.end, span.start_char, span.end_char, span.text, tuple(slots), tuple(aligned)
        ), ipat

    def paraphrase(self, hit: RawHit, definition: str) -> Paraphrase:
        from figlang.builders.impli import check_pair, realise

        match, ipat = self.to_impli_match(hit)
        doc = hit.doc
        template = self.templates(clean_definition(definition))
        other = other_person(hit)  # "pull someone's leg" as "pulling your leg": "you", the meaning's object
        if other is not None:  # not the meaning's "one's", which is the subject's ("conceal one's motives")
            match = dataclasses.replace(match, slots=tuple(s for s in match.slots if s[0] != "poss"))
        r = realise(template, match, doc, ipat)
        before = doc.text[: match.start_char]
        replacement = r.text
        if other is not None:
            verb_first = template.verb_head == int(template.leading_to) and r.verbal
            replacement = place_object(replacement, other, verb_first)
        # "the last straw" matched as "last straw": a definition that brings its own article replaces the text's
        lead = re.match(r"(?i)(the|a|an)\s", replacement)
        prev = re.search(r"(?i)\b(the|a|an)\s+$", before)
        if lead and prev:
            before = before[: prev.start()]
            if prev.group(1)[0].isupper():
                replacement = replacement[:1].upper() + replacement[1:]
        text = before + replacement + doc.text[match.end_char :]
        span = (len(before), match.end_char)
        problems = check_pair(doc.text, text, span=span, matched=doc.text[span[0] : span[1]], replacement=replacement, unfilled=r.unfilled)
        if {"empty_definition", "span_mismatch", "unchanged"} & set(problems):
            return Paraphrase(None, replacement, r.ops, tuple(problems))
        return Paraphrase(text, replacement, r.ops, tuple(problems))


_OTHER_POSS = frozenset(f"{h}{m}" for h in ("someone", "somebody", "sb", "sb.", "anyone", "anybody") for m in ("'s", "'"))
_OBJECT_OF = {"my": "me", "your": "you", "his": "him", "her": "her", "its": "it", "our": "us", "their": "them", "thy": "thee"}
_PREPOSITIONS = frozenset({"from", "to", "of", "with", "at", "on", "for", "about", "into", "against", "over", "towards"})
# words after which a preposition has lost its object ("conceal one's true motives from especially by feigning")
_NO_OBJECT_AFTER = frozenset({"especially", "by", "so", "as", "and", "or", "when", "while", "without", "in", "usually"})


def other_person(hit: RawHit) -> str | None:
    """The object form of a "someone's" slot's filler ("pulling your leg" -> "you", "John's leg" -> "John"), or None
    when the idiom has no such slot or the text left it empty. "one's" is the subject's own and is not this."""
    pattern, m = hit.idiom_pattern, hit.idiom_match
    for el, span in zip(pattern.elements, m.element_tokens):
        if el.kind == POSS and span is not None and el.text in _OTHER_POSS:
            return object_form(hit.doc[span[0] : span[1]].text)
    return None


def object_form(possessive: str) -> str:
    """ "your" -> "you", "John's" -> "John", "the boys'" -> "the boys"."""
    if possessive.lower() in _OBJECT_OF:
        return _OBJECT_OF[possessive.lower()]
    for mark in ("'s", "\u2019s", "'", "\u2019"):
        if possessive.endswith(mark):
            return possessive[: -len(mark)]
    return possessive


def place_object(meaning: str, obj: str, verb_first: bool) -> str:
    """The other person put into a "someone's" idiom's meaning: for the meaning's own "someone" ("annoyed
    someone" -> "annoyed him"), else after a preposition left without its object ("concealed their motives from
    especially by ..." -> "from us especially by ..."), else after the meaning's verb when it comes first
    ("subjecting to a joke" -> "subjecting you to a joke"); otherwise the meaning as it is."""
    words = meaning.split(" ")
    bare = [w.strip(",.;:!?").lower() for w in words]
    for i, w in enumerate(bare):
        if w in ("someone", "somebody"):
            words[i] = words[i].replace(words[i].strip(",.;:!?"), obj, 1)
            return " ".join(words)
    for i, w in enumerate(bare):
        if w in _PREPOSITIONS and (i + 1 == len(words) or bare[i + 1] in _NO_OBJECT_AFTER):
            tail = words[i][len(w) :]  # punctuation after the preposition stays after the object
            words[i] = f"{words[i][: len(w)]} {obj}{tail}"
            return " ".join(words)
    if verb_first and len(words) > 1 and bare[1] not in _NO_OBJECT_AFTER:
        words[0] = f"{words[0]} {obj}"
        return " ".join(words)
    return meaning


# ------------------------------------------------------------------------------------------ similes


def simile_meaning(hit: RawHit) -> str | None:
    prop = hit.simile.property if hit.simile else None
    return f"very {prop}" if prop else None


def simile_paraphrase(hit: RawHit, replacement: str) -> Paraphrase:
    """The explicit simile (or the implicit "like NP", with the verb kept) replaced by ``replacement``."""
    doc, h = hit.doc, hit.simile_hit
    a, b = h.span
    if h.pattern == "verb_like":  # "fought like a tiger" -> "fought <meaning>"
        text = doc.text[:a] + replacement + doc.text[b:]
    else:
        text = doc.text[:a] + replacement + doc.text[b:]
    if a == 0 or doc.text[:a].rstrip().endswith((".", "!", "?", '"', "\u201c")):
        text = text[:a] + text[a : a + 1].upper() + text[a + 1 :]
    return Paraphrase(text, replacement, (f"simile:{h.explicit}->{replacement}",))


# ------------------------------------------------------------------------------------------ metaphors


def metaphor_paraphrase(hit: RawHit, nlp: Any) -> tuple[Meaning, Paraphrase]:
    """WordNet's literal word for the metaphorical adjective/verb, put in its place by the IMPLI builder."""
    from figlang.builders.impli import MetaphorItem, build_metaphor_pairs

    wn = wordnet()
    if wn is None:
        return Meaning(None, None), Paraphrase(None, None, (), ("wordnet_not_installed",))
    kind, words, name = hit.metaphor_listing
    target = hit.doc[hit.target]
    item_words: tuple[str, ...]
    if kind == "AN":
        item_words = (target.text.lower(), hit.doc[hit.tok_end - 1].text.lower())
    else:
        item_words = (words[0], target.text.lower(), words[2])
    item = MetaphorItem(kind, item_words, hit.doc.text, name)
    result = build_metaphor_pairs([item], nlp=nlp, wordnet=wn, source="interpret")
    if not result.pairs:
        return Meaning(None, None), Paraphrase(None, None, (), tuple(result.report.skipped) if hasattr(result.report, "skipped") else ())
    pair = result.pairs[0]
    gloss = None
    for op in pair.ops:
        m = re.search(r"wordnet:([^:]+):", op)
        if m:
            try:
                gloss = wn.synset(m.group(1)).definition()
            except Exception:  # noqa: BLE001 - a gloss is extra information
                gloss = None
    meaning = f"{pair.definition} ({gloss})" if gloss else pair.definition
    return Meaning(meaning, "wordnet"), Paraphrase(pair.hypothesis, pair.realised, tuple(pair.ops))
