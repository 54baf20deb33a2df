"""Explicit similes ("as ADJ as NP", "ADJ like NP") and their implicit form, as in the narrative paper.

The paper's simile narratives end in an *implicit* simile: the property is removed from an
explicit simile ("He feels as calm as a lake" → "He feels like a lake") and kept as the
record's ``property``. This module finds explicit similes in dependency-parsed sentences and
makes that conversion.

Patterns (``pattern`` field of a hit):

* ``as_as``: ``as ADJ/ADV as NP`` ("as white as a sheet");
* ``bare_as``: ``ADJ as NP`` without the first *as* ("white as a sheet", "cool as a cucumber");
  only after a copula/linking verb or at the start of a clause, since "famous as a writer" is a
  role, not a simile;
* ``adj_like``: ``ADJ/ADV like NP`` ("cold like ice", "ran swiftly like a deer").

The vehicle must be a noun phrase headed by a common or proper noun. Rejected (and counted by
reason): pronoun vehicles ("as hard as him", "like that"), clauses ("as the day is long",
"looks like he was tired"), quantities ("as many as forty men", "twice as big as"), degree words
("as soon as", "as well as", "as much as", "just like"), verb *like* ("would like", "like to").

``verb_like`` (VERB like NP: "fought like a tiger") is off by default: it has no explicit
property, so the paper's conversion does not apply; ``implicit_like=True`` records it with
``property=None`` (useful for recall studies).

:func:`simile_prefilter` is a string/lower-case-token check so that only sentences that could
hold a simile reach the parser.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

AS_PROPERTY_STOP = frozenset(
    {
        "much",
        "many",
        "few",
        "little",
        "well",
        "soon",
        "far",
        "often",
        "same",
        "such",
        "near",
        "early",
        "late",
        "possible",
        "usual",
        "ever",
        "yet",
        "also",
        "so",
        "too",
        "more",
        "less",
        "most",
        "least",
    }
)
# degree/focus words: "just like", "exactly like", "much like", "more like", "very like", "nothing like"
LIKE_PROPERTY_STOP = frozenset(
    {
        "just",
        "exactly",
        "much",
        "more",
        "most",
        "less",
        "very",
        "rather",
        "quite",
        "somewhat",
        "not",
        "nothing",
        "something",
        "anything",
        "so",
        "too",
        "almost",
        "really",
        "little",
        "all",
        "even",
        "also",
        "still",
        "only",
        "precisely",
        "pretty",
        "extremely",
        "mostly",
        "far",
        "alike",
        "else",
        "like",
        "sort",
        "kind",
        "looks",
        "feels",
        "sounds",
        "seems",
        "nearly",
        "altogether",
        "ever",
        "never",
        "otherwise",
        "however",
        "accordingly",
        "then",
        "there",
        "here",
        "now",
        "again",
        "once",
        "unlike",
        "likely",
        "lovely",
        "thus",
        "other",
        "same",
        "such",
        "own",
        "exact",
        "certainly",
        "simply",
        "terribly",
        "awfully",
        "dreadfully",
        "uncommonly",
        "mighty",
        "wonderfully",
        "remarkably",
        "strangely",
        "curiously",
        "oddly",
        "singularly",
        "painfully",
        "horribly",
        "vaguely",
        "faintly",
        "dimly",
        "strikingly",
        "suspiciously",
        "absolutely",
        "perfectly",
        "entirely",
        "wholly",
        "completely",
        "uncannily",
        "surprisingly",
        "surely",
        "sometimes",
        "usually",
        "probably",
        "possibly",
        "perhaps",
        "chiefly",
        "especially",
        "particularly",
        "partly",
        "merely",
        "precious",
    }
)
MULTIPLIERS = frozenset({"twice", "thrice", "half", "times", "double", "treble", "triple", "once"})
LINKING_LEMMAS = frozenset(
    {
        "be",
        "look",
        "seem",
        "feel",
        "appear",
        "turn",
        "grow",
        "go",
        "become",
        "stand",
        "lie",
        "sit",
        "remain",
        "stay",
        "keep",
        "sound",
        "smell",
        "taste",
        "get",
        "come",
        "run",
        "fall",
    }
)
VEHICLE_STOP_HEADS = frozenset(
    {
        "other",
        "others",
        "rest",
        "one",
        "ones",
        "kind",
        "sort",
        "type",
        "way",
        "thing",
        "things",
        "anything",
        "everything",
        "nothing",
        "something",
        "usual",
        "possible",
        "ever",
        "before",
        "yesterday",
        "today",
        "tomorrow",
        "now",
        "then",
        "yours",
        "mine",
        "ours",
        "theirs",
        "hers",
        "his",
        "that",
        "this",
        "those",
        "these",
        "what",
        "whatever",
        "any",
        "each",
        "all",
        "both",
        "either",
        "neither",
        "same",
        "latter",
        "former",
        "last",
        "first",
        "second",
        "next",
        "half",
        "dozen",
        "hundred",
        "thousand",
        "million",
        "score",
        "lot",
        "number",
        "amount",
        "per",
        "percent",
        "times",
        "self",
        "needed",
        "necessary",
        "word",
        "words",
    }
)
# "famous as a writer", "useful as a tool": *as* gives a role, not a comparison
ROLE_ADJECTIVES = frozenset(
    {
        "known",
        "famous",
        "renowned",
        "celebrated",
        "notorious",
        "useful",
        "useless",
        "important",
        "necessary",
        "unnecessary",
        "available",
        "effective",
        "ineffective",
        "suitable",
        "unsuitable",
        "valuable",
        "invaluable",
        "welcome",
        "unwelcome",
        "free",
        "ready",
        "such",
        "same",
        "much",
        "successful",
        "unsuccessful",
        "active",
        "eminent",
        "distinguished",
        "popular",
        "unpopular",
        "present",
        "absent",
        "engaged",
        "employed",
        "disguised",
        "dressed",
        "qualified",
        "efficient",
        "regarded",
        "recognized",
        "recognised",
        "described",
        "considered",
        "appointed",
        "chosen",
        "inasmuch",
        "insofar",
        "forasmuch",
        "whereas",
        "serious",
        "only",
        "first",
        "last",
        "next",
    }
)
QUANTIFIERS = frozenset(
    {
        "most",
        "some",
        "any",
        "all",
        "many",
        "other",
        "several",
        "few",
        "every",
        "each",
        "both",
        "no",
        "another",
        "more",
        "less",
        "much",
        "either",
        "neither",
        "half",
    }
)
MAX_VEHICLE_TOKENS = 10
_FUNCTION_WORDS = frozenset(
    """a an the and or but nor so yet for of to in on at by with from as than that this these those it its he him his she her
    they them their we us our you your i me my is are was were be been being am do does did have has had will would shall
    should can could may might must not no all any some such same well just only also even soon far much many more most
    less least long often ever then there here when where while who whom which what whose why how if though although
    because since until till unless whether either neither both each every other another own very too quite rather
    said says say known regarded served acted used seen treated""".split()
)
_WORD = re.compile(r"^[^\W\d_](?:[\w'\u2019.-]*[^\W_])?$")
CLAUSE_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})


@dataclass(frozen=True)
class SimileHit:
    pattern: str  # as_as | bare_as | adj_like | verb_like
    topic: str | None  # what is compared ("He"), when the parse shows it
    property: str | None  # "calm" (None for verb_like)
    vehicle: str  # "a lake"
    explicit: str  # "as calm as a lake" (the span as written)
    span: tuple[int, int]  # characters of the explicit simile in the sentence
    implicit: str  # "like a lake"
    implicit_sentence: str  # "He feels like a lake."
    implicit_span: tuple[int, int]  # characters of `implicit` in implicit_sentence
    sentence: str

    def to_dict(self) -> dict:
        d = asdict(self)
        d["span"] = list(self.span)
        d["implicit_span"] = list(self.implicit_span)
        return d


# ------------------------------------------------------------------------------------- pre-filter


def simile_prefilter(lower_tokens: Sequence[str], bare_as: bool = True, implicit_like: bool = False) -> bool:
    """Could this sentence hold an explicit simile? (lower-case tokens only; no tagging needed)."""
    n = len(lower_tokens)
    for i, t in enumerate(lower_tokens):
        if t == "as":
            if i + 2 < n and lower_tokens[i + 2] == "as" and lower_tokens[i + 1] not in AS_PROPERTY_STOP:
                return True
            if i + 3 < n and lower_tokens[i + 3] == "as" and lower_tokens[i + 1].endswith("ly"):
                return True
            if i + 4 < n and lower_tokens[i + 4] == "as" and lower_tokens[i + 2] in {"and", "or"}:
                return True
            if (
                bare_as
                and 0 < i < n - 1
                and lower_tokens[i - 1].isalpha()
                and lower_tokens[i - 1] not in _FUNCTION_WORDS
                and lower_tokens[i - 1] not in ROLE_ADJECTIVES
                and not lower_tokens[i - 1].endswith(("ed", "ing", "ly"))
                and (
                    lower_tokens[i + 1] in {"a", "an", "the"}
                    or (lower_tokens[i + 1].isalpha() and lower_tokens[i + 1] not in _FUNCTION_WORDS)
                )
            ):
                return True
        elif t == "like" and 0 < i < n - 1:
            nxt = lower_tokens[i + 1]
            prev = lower_tokens[i - 1]
            if nxt in {"to", "it", "that", "this", "him", "her", "them", "me", "you", "us", "he", "she", "they", "i", "we"}:
                continue
            if prev in {"would", "'d", "should", "could", "might", "i", "you", "we", "they", "do", "did", "does", "n't", "not", "to"}:
                continue
            if implicit_like or (prev.isalpha() and prev not in LIKE_PROPERTY_STOP):
                return True
    return False


# ------------------------------------------------------------------------------------- extraction


def _vehicle(doc, j: int):
    """The NP vehicle that starts at token j (after "as"/"like"); (start, end, head) or a rejection reason."""
    n = len(doc)
    if j >= n:
        return "no_vehicle"
    first = doc[j]
    possessive = first.tag_ in {"PRP$", "WP$"} or (
        first.lower_ in {"my", "your", "his", "its", "our", "their", "her"} and j + 1 < n and doc[j + 1].pos_ in {"NOUN", "PROPN", "ADJ"}
    )
    if not possessive and (first.pos_ == "PRON" or first.tag_ in {"PRP", "WP", "EX"}):
        return "pronoun_vehicle"
    # the head noun: the first NOUN/PROPN after optional determiners/adjectives/numbers/possessives
    k = j
    while (
        k < n
        and k - j < 6
        and (
            doc[k].pos_ in {"DET", "ADJ", "NUM", "ADV"}
            or doc[k].tag_ in {"PRP$", "POS", "HYPH"}
            or doc[k].text == "-"
            or (doc[k].tag_ in {"VBN", "VBG"} and k + 1 < n and doc[k + 1].pos_ in {"NOUN", "PROPN", "ADJ"})
            or (doc[k].pos_ in {"NOUN", "PROPN"} and k + 1 < n and doc[k + 1].pos_ in {"NOUN", "PROPN"})
            or (doc[k].pos_ in {"NOUN", "PROPN"} and k + 1 < n and doc[k + 1].tag_ == "POS")
        )
    ):
        if doc[k].pos_ == "NUM" or doc[k].like_num:
            return "quantity_vehicle"
        k += 1
    # prefer the parser's object of "as"/"like" when it is a noun inside this stretch ("a mill-race" → race)
    if j > 0:
        pobj = [c for c in doc[j - 1].children if c.dep_ == "pobj" and c.pos_ in {"NOUN", "PROPN"} and c.left_edge.i >= j]
        if (
            pobj
            and pobj[0].i - j < 8
            and all(
                doc[x].pos_ not in {"VERB", "AUX", "PRON", "ADP", "PUNCT"} or doc[x].text == "-" or doc[x].tag_ in {"PRP$", "POS", "HYPH"}
                for x in range(j, pobj[0].i)
            )
        ):
            k = max(k, pobj[0].i)
    if k >= n or doc[k].pos_ not in {"NOUN", "PROPN"}:
        if k < n and doc[k].pos_ == "PRON":
            return "pronoun_vehicle"
        return "no_noun_vehicle"
    head = doc[k]
    if not _WORD.match(head.text):
        return "no_noun_vehicle"
    if head.lower_ in VEHICLE_STOP_HEADS:
        return "non_figurative_vehicle"
    # a clause: "as the day is long", "like the world was ending"
    if head.dep_ in CLAUSE_DEPS:
        return "clause_vehicle"
    nxt = doc[k + 1] if k + 1 < n else None
    if nxt is not None and nxt.pos_ == "AUX" and nxt.tag_ in {"VBZ", "VBD", "VBP", "MD"}:
        return "clause_vehicle"  # "as Muff Potter's a goner", "as the day is long"
    if head.dep_ in CLAUSE_DEPS and head.head.i > head.i and head.head.pos_ in {"VERB", "AUX"}:
        return "clause_vehicle"  # "thick as the ivy hung"
    # extent: the head's right subtree (PPs, relative clauses), cut at punctuation, bounded
    end = k + 1
    right = head.right_edge.i + 1
    limit = min(right, j + MAX_VEHICLE_TOKENS)
    while end < limit and (not doc[end].is_punct or doc[end].tag_ == "HYPH" or doc[end].text == "-") and doc[end].tag_ not in {"CC"}:
        end += 1
    if right > j + MAX_VEHICLE_TOKENS:
        end = k + 1  # too long to be a useful vehicle: keep the base noun phrase
    return j, end, head


def _topic(prop) -> str | None:
    """What the property is said of: the subject of the verb it depends on, or the noun it modifies."""
    tok = prop
    for _ in range(4):
        if tok.dep_ == "amod" and tok.head.pos_ in {"NOUN", "PROPN"}:
            return _np_text(tok.head)
        head = tok.head
        subj = [c for c in head.children if c.dep_ in {"nsubj", "nsubjpass"}]
        if subj:
            return _np_text(subj[0])
        if head is tok:
            break
        tok = head
    return None


def _np_text(tok) -> str:
    left = tok.left_edge.i
    if tok.i - left > 4:
        left = tok.i
    return tok.doc[left : tok.i + 1].text


def _implicit(sentence: str, cut_start: int, cut_end: int, vehicle_end: int) -> tuple[str, tuple[int, int]]:
    """Replace sentence[cut_start:cut_end] (the explicit comparison up to the vehicle) by "like"."""
    before = sentence[:cut_start]
    word = "like"
    if not before.strip() or before.rstrip().endswith(("“", '"', "‘", "(", "—", "--")):
        word = "Like" if not before.strip() or sentence[cut_start].isupper() else word
    new = before + word + " " + sentence[cut_end:].lstrip()
    span_start = len(before)
    vehicle_len = vehicle_end - cut_end - (len(sentence[cut_end:]) - len(sentence[cut_end:].lstrip()))
    return new, (span_start, span_start + len(word) + 1 + vehicle_len)


def _as_as(doc, i: int, rejected: Counter) -> tuple | None:
    """``as ADJ/ADV as NP`` (also ``as ADV ADJ as``, ``as ADJ and ADJ as``) starting at token ``i``."""
    n = len(doc)
    if i + 2 >= n:
        return None
    k = None
    if doc[i + 2].lower_ == "as":
        k = i + 2
    elif i + 3 < n and doc[i + 3].lower_ == "as" and doc[i + 1].pos_ == "ADV" and doc[i + 2].pos_ in {"ADJ", "ADV"}:
        k = i + 3
    elif (
        i + 4 < n
        and doc[i + 4].lower_ == "as"
        and doc[i + 2].lower_ in {"and", "or"}
        and doc[i + 1].pos_ in {"ADJ", "ADV"}
        and doc[i + 3].pos_ in {"ADJ", "ADV"}
    ):
        k = i + 4  # as formal and unnatural as the hoops
    if k is None:
        return None
    prop_tok = doc[k - 1]
    if prop_tok.pos_ not in {"ADJ", "ADV"} and prop_tok.tag_ not in {"JJ", "RB", "VBN"}:
        rejected["as_as_property_not_adj"] += 1
    elif prop_tok.lower_ in AS_PROPERTY_STOP:
        rejected["as_as_degree_word"] += 1
    elif i > 0 and doc[i - 1].lower_ in MULTIPLIERS:
        rejected["quantity_comparison"] += 1
    else:
        return ("as_as", i, k, doc[i + 1 : k])
    return None


def _bare_as(doc, i: int) -> tuple | None:
    """``ADJ as NP`` ("white as a sheet") at the ``as`` of token ``i``."""
    n = len(doc)
    if not (0 < i < n - 1) or any(doc[x].lower_ == "as" for x in range(max(0, i - 5), i)):
        return None
    prop_tok = doc[i - 1]
    if (
        prop_tok.pos_ == "ADJ"
        and prop_tok.tag_ == "JJ"
        and prop_tok.lower_ not in AS_PROPERTY_STOP
        and prop_tok.lower_ not in ROLE_ADJECTIVES
        and not prop_tok.lower_.endswith(("able", "ible"))
        and doc[i + 1].pos_ in {"DET", "NOUN", "PROPN", "ADJ", "VERB"}
        # an attributive adjective before its noun ("a white as ...") is not a property here
        and not (prop_tok.dep_ == "amod" and prop_tok.head.i > prop_tok.i)
        # "not so gruesome as last night", "too proud as a rule": comparisons of degree
        and not (i >= 2 and doc[i - 2].lower_ in {"so", "too", "more", "less", "most", "least"})
    ):
        return ("bare_as", i - 1, i, doc[i - 1 : i])
    return None


def _like(doc, i: int, implicit_like: bool, rejected: Counter) -> tuple | None:
    """``ADJ/ADV like NP`` ("ran fast like the wind") or, with ``implicit_like``, ``VERB like NP`` at token ``i``."""
    tok, n = doc[i], len(doc)
    if not (0 < i < n - 1 and tok.pos_ in {"ADP", "SCONJ", "INTJ"} and tok.tag_ == "IN"):
        return None
    prev = doc[i - 1]
    if doc[i + 1].lower_ == "to":
        rejected["like_to"] += 1
    elif (
        prev.pos_ in {"ADJ", "ADV"}
        and prev.lower_ not in LIKE_PROPERTY_STOP
        and prev.tag_ in {"JJ", "RB", "JJR", "RBR"}
        and (
            prev.pos_ == "ADJ"
            or prev.lower_.endswith("ly")
            or prev.lower_ in {"fast", "hard", "loud", "straight", "low", "high", "quick", "deep", "tight"}
        )
    ):
        return ("adj_like", i - 1, i, doc[i - 1 : i])
    elif implicit_like and prev.pos_ in {"VERB", "AUX"} and prev.lemma_ not in {"look", "seem", "feel", "sound", "be", "would"}:
        return ("verb_like", i, i, None)
    return None


def _vehicle_problem(doc, v_start: int, v_end: int, head) -> str | None:
    """Why a vehicle makes the comparison literal rather than a simile, or None."""
    if head.pos_ == "PROPN" and doc[v_start].pos_ != "DET":
        return "name_vehicle"  # "as tall as Tom", "famous as Nelson": a comparison or a role, rarely a simile
    if doc[v_start].lower_ in {"his", "her", "their", "its", "our"} or any(t.lower_ == "own" for t in doc[v_start:v_end]):
        # "as shy as his son", "as odd as his squint", "as large as his own cabin": in a first
        # sample of 100 Gutenberg hits every such vehicle was a literal comparison
        return "possessive_vehicle"
    if doc[v_start].lower_ in QUANTIFIERS:
        return "quantified_vehicle"  # "as good as most girls", "as brave as any man"
    return None


def _hit(doc, i: int, found: tuple, v_start: int, v_end: int) -> SimileHit:
    """The simile of pattern ``found`` at token ``i`` with its vehicle doc[v_start:v_end], and its implicit form."""
    pattern, cut_from, comp_tok, prop_span = found
    tok, text = doc[i], doc.text
    span_start = doc[cut_from].idx if pattern != "verb_like" else tok.idx
    span_end = doc[v_end - 1].idx + len(doc[v_end - 1].text)
    prop = prop_span.text if prop_span is not None else None
    topic = _topic(prop_span[-1]) if prop_span is not None else _topic(doc[i - 1])
    vehicle = doc[v_start:v_end].text
    if pattern == "verb_like":
        implicit_sentence, implicit_span = text, (tok.idx, span_end)
    else:
        cut_start = doc[cut_from].idx
        cut_end = doc[comp_tok].idx + len(doc[comp_tok].text)
        implicit_sentence, implicit_span = _implicit(text, cut_start, cut_end, span_end)
    implicit = implicit_sentence[implicit_span[0] : implicit_span[1]]
    return SimileHit(
        pattern, topic, prop, vehicle, text[span_start:span_end], (span_start, span_end), implicit, implicit_sentence, implicit_span, text
    )


def find_similes(
    doc, bare_as: bool = True, implicit_like: bool = False, rejected: Counter | None = None, rejected_examples: list | None = None
) -> list[SimileHit]:
    """Explicit similes in a parsed sentence (a spaCy Doc with tagger + parser).

    ``rejected`` counts near-misses by reason; ``rejected_examples`` (if given) collects
    (reason, text) pairs for inspection.
    """
    rejected = rejected if rejected is not None else Counter()
    hits: list[SimileHit] = []
    n = len(doc)
    used: set[int] = set()
    for i, tok in enumerate(doc):
        low = tok.lower_
        found = _as_as(doc, i, rejected) if low == "as" else None
        if found is None and low == "as" and bare_as:
            found = _bare_as(doc, i)
        if found is None and low == "like":
            found = _like(doc, i, implicit_like, rejected)
        if found is None:
            continue
        _pattern, cut_from, comp_tok, _prop_span = found
        if cut_from in used:
            continue
        veh = _vehicle(doc, comp_tok + 1)
        if isinstance(veh, str):
            rejected[veh] += 1
            if rejected_examples is not None:
                rejected_examples.append((veh, doc[cut_from : min(n, comp_tok + 5)].text))
            continue
        v_start, v_end, head = veh
        problem = _vehicle_problem(doc, v_start, v_end, head)
        if problem is not None:
            rejected[problem] += 1
            continue
        used.update(range(cut_from, v_end))
        hits.append(_hit(doc, i, found, v_start, v_end))
    return hits
