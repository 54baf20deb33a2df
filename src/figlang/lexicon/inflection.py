"""Inflection agreement for substituted definitions (lemminflect + spaCy tags and morphology).

When IMPLI replaces an idiom by its definition, the definition's head must take the idiom's
inflection: "kicked the bucket" -> "died" (VBD), "is spilling the beans" -> "is revealing the
secret" (VBG), "flies in the face of" -> "contradicts" (VBZ), "red herrings" -> "misleading
clues" (NNS). These helpers do that for one word at a time; ``figlang.builders.impli`` decides which word.
"""

from __future__ import annotations

from typing import Any


# lemminflect imports spaCy (about 1.7 s); load it on first use so the CLI and the model code start fast.
def getAllInflections(*args, **kwargs):  # noqa: N802 - lemminflect's names
    from lemminflect import getAllInflections as f

    return f(*args, **kwargs)


def getAllLemmas(*args, **kwargs):  # noqa: N802
    from lemminflect import getAllLemmas as f

    return f(*args, **kwargs)


def getInflection(*args, **kwargs):  # noqa: N802
    from lemminflect import getInflection as f

    return f(*args, **kwargs)


__all__ = [
    "BE_FORMS",
    "POSSESSIVE_TO_REFLEXIVE",
    "REFLEXIVES",
    "VERB_TAGS",
    "capitalize_first",
    "indefinite_article",
    "infer_verb_tag",
    "inflect_noun",
    "inflect_verb",
    "lemma_keys",
    "possessive_to_reflexive",
    "same_lemma",
    "subject_features",
]

VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m"})
POSSESSIVE_TO_REFLEXIVE = {
    "my": "myself",
    "your": "yourself",
    "his": "himself",
    "her": "herself",
    "its": "itself",
    "our": "ourselves",
    "their": "themselves",
    "one's": "oneself",
}
REFLEXIVES = frozenset(POSSESSIVE_TO_REFLEXIVE.values()) | {"yourselves", "themself"}
_PLURAL_PRONOUNS = {"we", "they", "you", "us", "them", "these", "those"}


def lemma_keys(word: str) -> frozenset[str]:
    """The word (lower case) and every lemma lemminflect knows for it, any part of speech."""
    w = word.lower().replace("’", "'")
    keys = {w}
    for lemmas in getAllLemmas(w).values():
        keys.update(lemma.lower() for lemma in lemmas)
    return frozenset(keys)


def same_lemma(a: str, b: str) -> bool:
    """Do two word forms share a lemma (``spills``/``spilled``, ``is``/``was``)?"""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if a in BE_FORMS and b in BE_FORMS:
        return True
    return bool(lemma_keys(a) & lemma_keys(b))


def subject_features(token: Any) -> tuple[str | None, str | None]:
    """(person, number) of the subject a verb token agrees with: "1"/"2"/"3", "Sing"/"Plur" or None.

    Reads the verb's own morphology first (VBZ carries Person=3|Number=Sing), then its subject:
    the nsubj/nsubjpass child of the token or, for auxiliaries and conjuncts, of its head.
    """
    person = token.morph.get("Person")
    number = token.morph.get("Number")
    if person and number:
        return person[0], number[0]
    node = token
    for _ in range(3):
        subj = next((c for c in node.children if c.dep_ in ("nsubj", "nsubjpass", "expl")), None)
        if subj is not None:
            return _noun_features(subj)
        if node.dep_ in ("aux", "auxpass", "conj", "xcomp", "ccomp", "acomp") and node.head is not node:
            node = node.head
            continue
        break
    return (person[0] if person else None), (number[0] if number else None)


def _noun_features(tok: Any) -> tuple[str | None, str | None]:
    low = tok.lower_
    if low == "i":
        return "1", "Sing"
    if low == "we":
        return "1", "Plur"
    if low == "you":
        return "2", "Plur"
    number = tok.morph.get("Number")
    if number:
        return "3", number[0]
    if tok.tag_ in ("NNS", "NNPS") or low in _PLURAL_PRONOUNS:
        return "3", "Plur"
    if any(c.dep_ == "cc" for c in tok.children):  # "John and Mary"
        return "3", "Plur"
    return "3", "Sing"


def _be_form(tag: str, person: str | None, number: str | None) -> str:
    if tag == "VB":
        return "be"
    if tag == "VBG":
        return "being"
    if tag == "VBN":
        return "been"
    if tag == "VBZ":
        return "is"
    if tag == "VBP":
        return "am" if (person == "1" and number == "Sing") else "are"
    if tag == "VBD":
        return "were" if (number == "Plur" or person == "2") else "was"
    return "be"


def inflect_verb(lemma: str, tag: str, person: str | None = None, number: str | None = None) -> str:
    """``lemma`` in the form for a Penn tag (VB, VBD, VBG, VBN, VBP, VBZ), "be" by person and number.

    Multi-word lemmas ("give up") inflect their first word. Unknown tags return the lemma.
    """
    if tag not in VERB_TAGS:
        return lemma
    first, sep, rest = lemma.partition(" ")
    low = first.lower()
    if low == "be":
        form = _be_form(tag, person, number)
    elif tag in ("VB", "VBP") and low != "be":
        form = first
    else:
        forms = getInflection(low, tag=tag)
        form = forms[0] if forms else first
    return form + sep + rest


def infer_verb_tag(lemma: str, form: str) -> str | None:
    """The Penn tag under which ``form`` inflects ``lemma`` ("fly", "flies" -> "VBZ"), or None.

    A fallback for verbs spaCy tags as nouns in context ("flies in the face of").
    """
    low = form.lower()
    for tag, forms in getAllInflections(lemma.lower(), upos="VERB").items():
        if low in forms and tag != "VBP":
            return tag
    return None


def inflect_noun(word: str, plural: bool) -> str:
    """``word`` made plural (NNS) or singular (NN) through its noun lemma; unknown nouns are returned as they are."""
    lemmas = getAllLemmas(word.lower()).get("NOUN")
    lemma = lemmas[0] if lemmas else word.lower()
    forms = getInflection(lemma, tag="NNS" if plural else "NN")
    form = forms[0] if forms else word
    return _copy_case(word, form)


def _copy_case(model: str, word: str) -> str:
    if model[:1].isupper() and not word[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def possessive_to_reflexive(possessive: str) -> str | None:
    """ "her" -> "herself"; a possessive noun phrase ("John's") has no reflexive: None."""
    return POSSESSIVE_TO_REFLEXIVE.get(possessive.lower().replace("’", "'"))


def capitalize_first(text: str) -> str:
    """Upper-case the first letter (leaving the rest alone: "on the iPhone" -> "On the iPhone")."""
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
        if not ch.isspace() and ch not in "\"'‘“(«[":
            return text
    return text


def indefinite_article(word: str) -> str:
    """ "a" or "an" before ``word``, by its first sound (spelling heuristics: "an hour", "a unit")."""
    import re

    low = word.lower()
    if re.match(r"(hour|honest|honou?r|heir)", low):
        return "an"
    if re.match(r"(uni|use|usu|eu|one|once|ewe)", low):
        return "a"
    return "an" if low[:1] in ("a", "e", "i", "o", "u") else "a"
