"""WordNet choices for the IMPLI generator: antonyms of definition words, literal words for metaphors.

WordNet itself comes from :func:`figlang.lexicon.wordnet.load_wordnet` (offline WordNet 3.0).

* :func:`antonyms_of` / :func:`antonymize`: IMPLI's antonym pairs contradict a definition by
  replacing a key word with its antonym ("reveal the truth openly" -> "reveal the truth
  secretly"). Direct antonyms are WordNet's lemma-level antonym links, in sense order; for
  adjective satellites ("huge") the antonyms of the cluster head ("large" -> "small") are used;
  adverbs without antonyms borrow their adjective's (``pertainyms``: "quickly" -> "quick" ->
  "slow" -> "slowly" when WordNet has that adverb). The key word is chosen by part of speech
  (adjective, then adverb, then verb, then noun; left to right), skipping light verbs.
* :func:`literal_replacement`: the literal word for a metaphorical verb (subject-verb-object)
  or adjective (adjective-noun). WordNet usually lists a metaphorical use as its own sense,
  whose synonyms and hypernyms are literal paraphrases ("the conversation *turned* to" ->
  sense "undergo a change" -> "change"). The sense is chosen by a simplified Lesk overlap
  between the sense (gloss, examples, synonyms, hypernyms or similar adjectives) and the
  context nouns (their lemmas, synonyms, glosses and hypernyms), plus a small prior for
  frequent senses; the replacement is that sense's most frequent other single-word lemma
  (``Lemma.count()``), else its hypernym's. This is a heuristic: the IMPLI comparison in
  ``docs/research/impli_generator.md`` measures how often it picks IMPLI's word. Verb senses are also
  scored by how their frames fit the subject and object and, when the arguments are abstract,
  by not being physical (a metaphor applies a physical verb to abstract arguments).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from figlang.lexicon.inflection import (
    getAllLemmas,
    getInflection,
    indefinite_article,
    inflect_noun,
    inflect_verb,
)  # lemminflect, loaded lazily

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

__all__ = ["LiteralChoice", "antonymize", "antonyms_of", "literal_replacement", "upos_of_tag"]

_WN_POS = {"ADJ": ("a", "s"), "ADV": ("r",), "VERB": ("v",), "NOUN": ("n",)}
LIGHT_WORDS = frozenset(
    "be have do get let make can will may must would should could might shall not no very so too also just only "
    "more most less least much many well even still really quite rather as such own same other".split()
)
_STOP = frozenset(
    "a an the of to in on at by for with from and or but is are was were be been being that this these those it its "
    "as into out up down over under than then so such which who whom what when where how all any some one ones "
    "someone something somebody thing things person people especially usually often etc".split()
)
_PRIORITY = {"ADJ": 0, "ADV": 1, "VERB": 2, "NOUN": 3}


def upos_of_tag(tag: str) -> str | None:
    if tag.startswith("JJ"):
        return "ADJ"
    if tag.startswith("RB") and tag != "RP":
        return "ADV"
    if tag.startswith("VB"):
        return "VERB"
    if tag in ("NN", "NNS"):
        return "NOUN"
    return None


def _lemma(word: str, upos: str) -> str:
    lemmas = getAllLemmas(word.lower()).get(upos)
    return lemmas[0].lower() if lemmas else word.lower()


def _name(lemma_name: str) -> str:
    return lemma_name.replace("_", " ")


def antonyms_of(word: str, upos: str, wn: WordNetCorpusReader) -> list[str]:
    """WordNet antonyms of a lemma, in sense order: direct first, then indirect (satellites, pertainyms)."""
    lemma = word.lower().replace(" ", "_")
    out: list[str] = []
    for pos in _WN_POS.get(upos, ()):
        for syn in wn.synsets(lemma, pos):
            for lem in syn.lemmas():
                if lem.name().lower() == lemma:
                    out += [_name(a.name()) for a in lem.antonyms()]
    if not out and upos == "ADJ":
        for syn in wn.synsets(lemma, "s"):
            for head in syn.similar_tos():
                for hl in head.lemmas():
                    out += [_name(a.name()) for a in hl.antonyms()]
    if not out and upos == "ADV":
        for syn in wn.synsets(lemma, "r"):
            for lem in syn.lemmas():
                if lem.name().lower() != lemma:
                    continue
                for adj in lem.pertainyms():
                    for ant in adj.antonyms():
                        adverb = ant.name() + "ly" if not ant.name().endswith("y") else ant.name()[:-1] + "ily"
                        if wn.synsets(adverb, "r"):
                            out.append(_name(adverb))
    return list(dict.fromkeys(a for a in out if a.lower() != word.lower()))


def antonymize(template: Any, wn: WordNetCorpusReader, max_replacements: int = 1) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """A definition with its key word(s) replaced by WordNet antonyms, or None when no word has one.

    ``template`` is a ``DefinitionTemplate`` (words, whitespace, Penn tags of the verbal reading,
    slots); the antonym takes the replaced word's form (tense, number, comparison).
    """
    words = list(template.words)
    candidates: list[tuple[int, int, str]] = []
    for i, (word, tag, slot) in enumerate(zip(template.words, template.tags, template.slots)):
        upos = upos_of_tag(tag) if not slot else None
        if upos is None or not re.search(r"[a-z]", word.lower()):
            continue
        lemma = template.verb_lemma if i == template.verb_head and template.verb_lemma else _lemma(word, upos)
        if lemma in LIGHT_WORDS or word.lower() in LIGHT_WORDS:
            continue
        candidates.append((_PRIORITY[upos], i, upos))
    swaps: list[tuple[str, str]] = []
    for _prio, i, upos in sorted(candidates):
        if len(swaps) >= max_replacements:
            break
        word, tag = words[i], template.tags[i]
        lemma = template.verb_lemma if i == template.verb_head and template.verb_lemma else _lemma(word, upos)
        antonyms = antonyms_of(lemma, upos, wn)
        if not antonyms:
            continue
        new = _inflect_like(antonyms[0], upos, tag)
        if word[:1].isupper():
            new = new[:1].upper() + new[1:]
        swaps.append((word, new))
        words[i] = new
        if i > 0 and words[i - 1].lower() in ("a", "an"):  # "a difficult" -> "an easy"
            article = indefinite_article(new)
            words[i - 1] = article.capitalize() if words[i - 1][:1].isupper() else article
    if not swaps:
        return None
    text = " ".join("".join(w + s for w, s in zip(words, template.spaces)).split())
    return text, tuple(swaps)


def _inflect_like(lemma: str, upos: str, tag: str) -> str:
    if upos == "VERB":
        return inflect_verb(lemma, tag if tag in ("VBD", "VBG", "VBN", "VBZ") else "VB")
    if upos == "NOUN" and tag == "NNS":
        return inflect_noun(lemma, plural=True)
    if upos == "ADJ" and tag in ("JJR", "JJS") and " " not in lemma:
        forms = getInflection(lemma, tag=tag)
        return forms[0] if forms else lemma
    return lemma


# --------------------------------------------------------------------------------------------
# Literal replacements for metaphors
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiteralChoice:
    word: str  # the literal lemma ("change")
    synset: str  # the WordNet sense it came from ("change.v.02")
    relation: str  # synonym | hypernym | similar
    score: float  # Lesk overlap + prior of the chosen sense


def _bag(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP and len(w) > 2}


def _context_bag(nouns: Sequence[str], wn: WordNetCorpusReader) -> set[str]:
    bag: set[str] = set()
    for noun in nouns:
        if not noun or noun.startswith("*"):
            continue
        low = noun.lower()
        bag.add(low)
        bag.add(_lemma(low, "NOUN"))
        for syn in wn.synsets(_lemma(low, "NOUN"), "n")[:2]:
            bag |= {_name(x).lower() for x in syn.lemma_names()}
            bag |= _bag(syn.definition())
            for hyper in syn.hypernyms()[:2]:
                bag |= {_name(x).lower() for x in hyper.lemma_names()}
                for h2 in hyper.hypernyms()[:1]:
                    bag |= {_name(x).lower() for x in h2.lemma_names()}
    return bag


def _sense_bag(syn: Synset, upos: str) -> set[str]:
    bag = _bag(syn.definition()) | {w for ex in syn.examples() for w in _bag(ex)}
    bag |= {_name(x).lower() for x in syn.lemma_names()}
    related = syn.hypernyms() if upos == "VERB" else syn.similar_tos() + syn.also_sees()
    for r in related:
        bag |= {_name(x).lower() for x in r.lemma_names()}
        bag |= _bag(r.definition())
    return bag


_PHYSICAL_VERBS = {"verb.motion", "verb.contact", "verb.body", "verb.weather", "verb.consumption", "verb.perception"}
_CONCRETE_NOUNS = {"noun.artifact", "noun.animal", "noun.body", "noun.food", "noun.object", "noun.person", "noun.plant", "noun.substance"}
_PERSON_WORDS = {"i", "you", "he", "she", "we", "they", "me", "him", "her", "us", "them", "who", "person", "someone", "somebody"}


def _noun_class(noun: str, wn: WordNetCorpusReader) -> tuple[str, bool] | None:
    """("Somebody" | "Something", concrete?) of a context noun, from its first WordNet sense."""
    if not noun or noun.startswith("*"):
        return None
    low = noun.lower()
    if low in _PERSON_WORDS:
        return "Somebody", True
    senses = wn.synsets(_lemma(low, "NOUN"), "n")
    if not senses:
        return None
    lex = senses[0].lexname()
    return ("Somebody" if lex in ("noun.person", "noun.group") else "Something"), lex in _CONCRETE_NOUNS


def _frame_fit(syn: Synset, lemma: str, subject: tuple[str, bool] | None, obj: tuple[str, bool] | None) -> float:
    """How well the sense's verb frames fit the subject and object: 0 to 2."""
    frames = [f for lem in syn.lemmas() if lem.name().lower() == lemma for f in lem.frame_strings()]
    best = 0.0
    for f in frames:
        words = f.split()
        score = 0.0
        if subject and words and words[0] == subject[0]:
            score += 1
        rest = " ".join(words[2:])
        has_obj = "something" in rest or "somebody" in rest
        if obj is None and not has_obj:
            score += 1
        elif obj is not None and has_obj and (("somebody" in rest) == (obj[0] == "Somebody")):
            score += 1
        best = max(best, score)
    return best


def literal_replacement(
    word: str,
    upos: str,
    context: Sequence[str],
    wn: WordNetCorpusReader,
    exclude: Sequence[str] = (),
    subject: str | None = None,
    obj: str | None = None,
) -> LiteralChoice | None:
    """A literal word for a metaphorical verb or adjective, given the nouns it goes with.

    Each WordNet sense is scored by (a) Lesk overlap with the context nouns (x 0.5), (b) for
    verbs, how well its verb frames fit the subject and object (person or thing, transitive or
    not: 0-2), (c) for arguments that are all abstract (their first sense not a physical
    object, person, animal, plant, food, substance or body part) a bonus of 1 for senses that
    are not physical (verb.motion, contact, body, weather, consumption, perception) and, for
    adjectives, a penalty of 1 on the first (usually physical) sense, (d) a prior 1/(rank+2)
    for frequent senses. The best sense's most frequent other single-word lemma is the
    replacement, else its hypernym's (verbs) or its cluster head's (adjectives).
    """
    lemma = _lemma(word, upos)
    if upos == "ADJ":
        senses = list(dict.fromkeys(wn.synsets(lemma, "a") + wn.synsets(lemma, "s")))
    else:
        senses = [s for pos in _WN_POS[upos] for s in wn.synsets(lemma, pos)]
    if not senses:
        return None
    ctx = _context_bag(context, wn)
    classes = [c for c in (_noun_class(n, wn) for n in context) if c is not None]
    abstract = bool(classes) and not any(concrete for _, concrete in classes)
    subj_class = _noun_class(subject, wn) if subject else None
    obj_class = _noun_class(obj, wn) if obj else None
    scored = []
    for rank, syn in enumerate(senses):
        score = 0.5 * len(_sense_bag(syn, upos) & ctx) + 1.0 / (rank + 2)
        if upos == "VERB":
            score += _frame_fit(syn, lemma, subj_class, obj_class)
            if abstract and syn.lexname() not in _PHYSICAL_VERBS:
                score += 1
        elif abstract and rank == 0 and len(senses) > 1:
            score -= 1
        scored.append((score, rank, syn))
    scored.sort(key=lambda x: (-x[0], x[1]))
    banned = {lemma, word.lower(), *(e.lower() for e in exclude)}

    def ok(name: str) -> bool:
        low = name.lower()
        return low not in banned and "_" not in name and not low.startswith(lemma[:4]) and low.isalpha()

    def by_count(lemmas: list[Any]) -> list[Any]:
        return sorted(lemmas, key=lambda lem: -lem.count())

    for score, _rank, syn in scored:
        for lem in by_count(syn.lemmas()):
            if ok(lem.name()):
                return LiteralChoice(lem.name().lower(), syn.name(), "synonym", round(score, 3))
        related = syn.hypernyms() if upos == "VERB" else syn.similar_tos()
        for r in related:
            for lem in by_count(r.lemmas()):
                if ok(lem.name()):
                    return LiteralChoice(lem.name().lower(), r.name(), "hypernym" if upos == "VERB" else "similar", round(score, 3))
    return None
