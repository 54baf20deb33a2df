"""Literal knowledge from offline WordNet 3.0, in the surface form of the shipped literal inferences.

For an **idiom**, each content word (:func:`~figlang.knowledge.providers.content_words`) gets
ConceptNet-style statements, laid out like the shipped files (two per relation, relation order
HasProperty, CapableOf, Desires, AtLocation, UsedFor, MadeUpOf, round-robin over the words;
:func:`~figlang.knowledge.providers.layout_literal`):

============  ==============================================  ==================================
relation      template (shipped)                              WordNet source
============  ==============================================  ==================================
HasProperty   "{w} has propetry of being {tail}"              adjectives of the gloss, attribute
                                                              values, similar-to / synonyms
                                                              (adjectives), "a {hypernym}"
CapableOf     "{w} is capable of {tail}"                      verbs: the gloss and hypernym
                                                              verbs; nouns: the gloss of their
                                                              derivationally related verbs
Desires       "{w} desires {tail}"                            not in WordNet: never produced
AtLocation    "{w} can be found in {tail}"                    part/member/substance holonyms (not
                                                              taxonomic groups), "found/living in
                                                              X" in the gloss
UsedFor       "{w} is used for {tail}"                        "used to/for/in X" in the gloss
                                                              (the sense's, else its hypernym's)
MadeUpOf      "{w} is made of {tail}"                         part/substance meronyms (the
                                                              hypernym's when the sense has
                                                              none), "made of/from X", "with X"
============  ==============================================  ==================================

For a **simile**, the vehicle (the head noun after like/as; WordNet compounds such as "dorm room"
are preferred) gets up to 12 "The associated property is {tail}" statements: the simile's own
property word ("as cold as ice") and modifiers ("unfinished nightmare"), adjectives of the gloss,
"like a {hypernym}" and "like a {sister term}", "made of X", "found in X", "used for X", and
finally adjectives similar to the explicit ones.

**Sense choice** (documented heuristic; no disambiguation against the narrative, because the
narrative uses the words figuratively and literal knowledge wants their literal sense):

* part of speech: the one whose senses of the word have the highest SemCor frequency
  (``Lemma.count()``; nouns win ties, then verbs, then adjectives);
* sense: among the first four senses of that part of speech, the highest ``1/(rank+1) + bonus``,
  where the bonus is 1.0 for concrete lexicographer files (noun.artifact, animal, body, object,
  plant, substance, phenomenon), 0.7 for noun.food and 0.5 for noun.location: WordNet lists some
  figurative senses first ("rake": a dissolute man, before the garden tool), and literal
  knowledge is about the physical thing;
* the second-best sense contributes further tails after the best one's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from figlang.knowledge.base import (
    LITERAL_RELATIONS,
    MAX_INFERENCES,
    KnowledgeError,
    KnowledgeInput,
    KnowledgeProvider,
    content_words,
    layout_literal,
    simile_inference,
    simile_vehicle,
)
from figlang.lexicon.wordnet import load_wordnet

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

__all__ = ["WordNetProvider", "choose_sense", "simile_tails", "word_relations"]

_CONCRETE = {
    "noun.artifact": 1.0,
    "noun.animal": 1.0,
    "noun.body": 1.0,
    "noun.object": 1.0,
    "noun.plant": 1.0,
    "noun.substance": 1.0,
    "noun.phenomenon": 1.0,
    "noun.food": 0.7,
    "noun.location": 0.5,
}
_POS_ORDER = ("n", "v", "a")
_STOP = frozenset(
    "a an the of to in on at by for with from and or but is are was were be been being that this these those it its "
    "as into out up down over under than then so such which who whom what when where how all any some one ones "
    "someone something somebody thing things person people especially usually often etc very more most less much "
    "many other its their his her your our used make made like also either neither not no".split()
)
_ADJ_SUFFIXES = ("ing", "ed", "ous", "ful", "less", "ive", "able", "ible", "al", "ic", "ish", "y", "ant", "ent", "ary", "ory", "ar")
_TAXONOMIC = ("genus", "family", "order", "class", "phylum", "division")
_MAX_TAIL_WORDS = 7


def _name(lemma_name: str) -> str:
    return lemma_name.replace("_", " ")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z\-']*", text.lower())


def _short(text: str, limit: int = _MAX_TAIL_WORDS) -> str | None:
    """A gloss fragment as a tail: first clause, at most ``limit`` words, no trailing function word."""
    text = re.split(r"[;:()]", text)[0]
    words = text.strip(" ,.").split()[:limit]
    while words and words[-1].lower() in _STOP:
        words.pop()
    while words and words[0].lower() in ("a", "an", "the"):
        words.pop(0)
    out = " ".join(words).strip(" ,.")
    return out or None


def _pos_count(wn: WordNetCorpusReader, word: str, pos: str) -> int | None:
    """SemCor frequency of ``word`` in part of speech ``pos`` (None when WordNet has no such sense)."""
    poses = ("a", "s") if pos == "a" else (pos,)
    synsets = [s for p in poses for s in wn.synsets(word, p)]
    if not synsets:
        return None
    lemma = wn.morphy(word, poses[0]) or word
    total = 0
    for s in synsets:
        for lem in s.lemmas():
            if lem.name().lower() in (lemma.lower(), word.lower()):
                total += lem.count()
    return total


def _choose_pos(wn: WordNetCorpusReader, word: str) -> str | None:
    best: tuple[int, int] | None = None
    choice = None
    for order, pos in enumerate(_POS_ORDER):
        count = _pos_count(wn, word, pos)
        if count is None:
            continue
        key = (count, -order)
        if best is None or key > best:
            best, choice = key, pos
    return choice


def _is_adjective(wn: WordNetCorpusReader, word: str) -> bool:
    adj = _pos_count(wn, word, "a")
    if adj is None or word in _STOP or len(word) < 3:
        return False
    noun = _pos_count(wn, word, "n")
    verb = _pos_count(wn, word, "v")
    if noun is None and verb is None:
        return True
    others = max(noun or 0, verb or 0)
    return adj > others or (adj == others and word.endswith(_ADJ_SUFFIXES))


def choose_sense(wn: WordNetCorpusReader, word: str, pos: str | None = None, n: int = 2) -> list[Synset]:
    """The ``n`` best WordNet senses of ``word`` for literal knowledge (see the module docstring)."""
    pos = pos or _choose_pos(wn, word)
    if pos is None:
        return []
    poses = ("a", "s") if pos == "a" else (pos,)
    senses = list(dict.fromkeys(s for p in poses for s in wn.synsets(word, p)))[:4]
    scored = sorted(
        ((1.0 / (rank + 1) + _CONCRETE.get(s.lexname(), 0.0), -rank, s) for rank, s in enumerate(senses)), key=lambda t: (-t[0], -t[1])
    )
    return [s for _, _, s in scored[:n]]


def _gloss_adjectives(wn: WordNetCorpusReader, synset: Synset, exclude: set[str]) -> list[str]:
    out = []
    for w in _words(synset.definition()):
        if w not in exclude and w not in out and _is_adjective(wn, w):
            out.append(w)
    return out


_FOUND = re.compile(r"\b(?:found|located|living|lives|grown|growing|kept|worn|occurring|native to|situated)\s+(?:in|on|at|to)\s+([^;,()]+)")
_USED = re.compile(r"\bused\s+(?:to|for|in|as|by|with)\s+([^;()]+)")
_MADE = re.compile(r"\b(?:made of|made from|consisting of|composed of)\s+([^;,()]+)")
_WITH = re.compile(r"\bwith\s+((?:a |an )?[^;,()]+)")


def _gloss_match(pattern: re.Pattern[str], synset: Synset, limit: int = 5) -> list[str]:
    out = []
    for m in pattern.finditer(synset.definition()):
        tail = _short(m.group(1), limit)
        if tail:
            out.append(tail)
    return out


def _not_taxonomic(synset: Synset) -> bool:
    names = [n for h in synset.hypernyms() for n in h.lemma_names()]
    return not any(t in n.lower() for n in names for t in _TAXONOMIC)


def _noun_relations(wn: WordNetCorpusReader, s: Synset, word: str) -> dict[str, list[str]]:
    rel: dict[str, list[str]] = {r: [] for r in LITERAL_RELATIONS}
    own = {word.lower(), *(_name(n).lower() for n in s.lemma_names())}
    rel["HasProperty"] += _gloss_adjectives(wn, s, own)
    for attr in s.attributes():
        rel["HasProperty"] += [_name(n) for n in attr.lemma_names()[:1]]
    for lem in s.lemmas():
        for d in lem.derivationally_related_forms():
            if d.synset().pos() == "v":
                tail = _short(d.synset().definition(), 6)
                if tail:
                    rel["CapableOf"].append(tail)
    holonyms = s.part_holonyms() + s.substance_holonyms() + [h for h in s.member_holonyms() if _not_taxonomic(h)]
    rel["AtLocation"] += [_name(h.lemma_names()[0]) for h in holonyms]
    rel["AtLocation"] += _gloss_match(_FOUND, s, 4)
    rel["UsedFor"] += _gloss_match(_USED, s)
    meronyms = s.part_meronyms() + s.substance_meronyms()
    rel["MadeUpOf"] += [_name(m.lemma_names()[0]) for m in meronyms]
    rel["MadeUpOf"] += _gloss_match(_MADE, s, 4) + _gloss_match(_WITH, s, 4)
    for hyper in s.hypernyms()[:2]:
        name = _name(hyper.lemma_names()[0])
        rel["HasProperty"].append(f"{_article(name)} {name}")
        if not rel["UsedFor"]:
            rel["UsedFor"] += _gloss_match(_USED, hyper)
        if not rel["MadeUpOf"]:
            rel["MadeUpOf"] += [_name(m.lemma_names()[0]) for m in hyper.part_meronyms() + hyper.substance_meronyms()]
        if not rel["AtLocation"]:
            rel["AtLocation"] += [_name(h.lemma_names()[0]) for h in hyper.part_holonyms()]
    return rel


def _verb_relations(wn: WordNetCorpusReader, s: Synset, word: str) -> dict[str, list[str]]:
    rel: dict[str, list[str]] = {r: [] for r in LITERAL_RELATIONS}
    tail = _short(s.definition())
    if tail:
        rel["CapableOf"].append(tail)
    for h in s.hypernyms() + s.entailments() + s.causes():
        rel["CapableOf"] += [_name(h.lemma_names()[0])]
    rel["UsedFor"] += _gloss_match(_USED, s)
    return rel


def _adjective_relations(wn: WordNetCorpusReader, s: Synset, word: str) -> dict[str, list[str]]:
    rel: dict[str, list[str]] = {r: [] for r in LITERAL_RELATIONS}
    low = word.lower()
    rel["HasProperty"] += [_name(n) for n in s.lemma_names() if n.lower() != low]
    for other in s.similar_tos() + s.also_sees():
        rel["HasProperty"] += [_name(n) for n in other.lemma_names()[:1] if n.lower() != low]
    tail = _short(s.definition())
    if tail:
        rel["HasProperty"].append(tail)
    return rel


def word_relations(wn: WordNetCorpusReader, word: str) -> dict[str, list[str]]:
    """relation -> tails for one idiom word, from its two best senses (the best sense's first)."""
    lemma_word = word.replace(" ", "_")
    pos = _choose_pos(wn, lemma_word)
    out: dict[str, list[str]] = {r: [] for r in LITERAL_RELATIONS}
    for s in choose_sense(wn, lemma_word, pos):
        make = {"n": _noun_relations, "v": _verb_relations}.get(s.pos(), _adjective_relations)
        for r, tails in make(wn, s, word).items():
            for t in tails:
                if t and t.lower() != word.lower() and t.lower() not in (x.lower() for x in out[r]):
                    out[r].append(t)
    return out


def _vehicle_head(wn: WordNetCorpusReader, phrase: str) -> tuple[str, list[str]]:
    """The longest suffix of the vehicle phrase WordNet knows as a noun (compounds first), and the words before it."""
    words = phrase.split()
    for start in range(len(words)):
        cand = "_".join(words[start:])
        if wn.synsets(cand, "n"):
            return " ".join(words[start:]), words[:start]
    return (words[-1] if words else phrase), words[:-1]


def simile_tails(wn: WordNetCorpusReader, expression: str, limit: int = MAX_INFERENCES) -> list[str]:
    """Up to ``limit`` property tails of a simile's vehicle (see the module docstring for the order)."""
    phrase, _, prop = simile_vehicle(expression)
    head, modifiers = _vehicle_head(wn, phrase)
    explicit = ([prop] if prop else []) + [m for m in modifiers if _is_adjective(wn, m)]
    senses = choose_sense(wn, head.replace(" ", "_"), "n") or choose_sense(wn, head.replace(" ", "_"))
    adjectives: list[str] = list(explicit)
    likes: list[str] = []
    relations: list[str] = []
    similar: list[str] = []
    for s in senses:
        own = {head.lower(), *(_name(n).lower() for n in s.lemma_names())}
        if s.pos() in ("a", "s"):
            adjectives += [_name(n) for n in s.lemma_names() if _name(n).lower() not in own]
            adjectives.append(_short(s.definition()) or "")
            continue
        adjectives += _gloss_adjectives(wn, s, own)
        adjectives += [_name(a.lemma_names()[0]) for a in s.attributes()]
        for hyper in s.hypernyms()[:1]:
            name = _name(hyper.lemma_names()[0])
            likes.append(f"like {_article(name)} {name}")
            for sister in hyper.hyponyms()[:3]:
                sname = _name(sister.lemma_names()[0])
                if sister != s and sname.lower() not in own:
                    likes.append(f"like {_article(sname)} {sname}")
        if s.pos() == "n":
            rel = _noun_relations(wn, s, head)
            relations += [f"made of {t}" for t in rel["MadeUpOf"][:2]]
            relations += [f"found in {t}" for t in rel["AtLocation"][:2]]
            relations += [f"used for {t}" for t in rel["UsedFor"][:2]]
    for word in explicit:
        for syn in wn.synsets(word.replace(" ", "_"), "a")[:1] + wn.synsets(word.replace(" ", "_"), "s")[:1]:
            for other in syn.similar_tos()[:2]:
                similar.append(_name(other.lemma_names()[0]))
    ordered = adjectives[:6] + likes[:3] + relations[:4] + adjectives[6:] + similar + relations[4:]
    out: list[str] = []
    for t in ordered:
        if t and t.lower() not in (x.lower() for x in out) and t.lower() != head.lower():
            out.append(t)
    return out[:limit]


class WordNetProvider(KnowledgeProvider):
    """Literal knowledge for idiom content words and simile vehicles from offline WordNet 3.0."""

    name = "wordnet"
    kinds = ("literal",)
    VERSION = 1

    def __init__(self, cache: Any = None, wordnet_dir: str | None = None, max_words: int = 4) -> None:
        super().__init__(cache=cache)
        self.wordnet_dir = wordnet_dir
        self.max_words = int(max_words)
        self._wn: WordNetCorpusReader | None = None

    @property
    def wn(self) -> WordNetCorpusReader:
        if self._wn is None:
            self._wn = load_wordnet(self.wordnet_dir)
        return self._wn

    def fingerprint(self) -> dict[str, Any]:
        return {"provider": self.name, "version": self.VERSION, "wordnet": "3.0", "max_words": self.max_words}

    def compute(self, inputs: Sequence[KnowledgeInput], kind: str) -> list[list[str]]:
        self.check_kind(kind)
        return [self.literal(inp) for inp in inputs]

    def literal(self, inp: KnowledgeInput) -> list[str]:
        if not inp.expression:
            raise KnowledgeError("literal knowledge needs the record's idiom or simile")
        if inp.expression_type == "simile":
            return [simile_inference(t) for t in simile_tails(self.wn, inp.expression)]
        words = content_words(inp.expression, self.max_words)
        candidates = {w: _cached_relations(self.wn, w) for w in words}
        return layout_literal(candidates, words)


@lru_cache(maxsize=4096)
def _cached_relations_impl(wn_id: int, word: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    wn = _WN_BY_ID[wn_id]
    return tuple((r, tuple(t)) for r, t in word_relations(wn, word).items())


_WN_BY_ID: dict[int, Any] = {}


def _cached_relations(wn: WordNetCorpusReader, word: str) -> dict[str, list[str]]:
    _WN_BY_ID[id(wn)] = wn
    return {r: list(t) for r, t in _cached_relations_impl(id(wn), word)}
