"""Comparison keys for text: the one place that says when two spellings count as the same.

Every key lower-cases and folds white space; they differ only in what else they forgive, and
each difference is there because a caller's results depend on it:

* :func:`normalise_expression` (the default for expressions): punctuation dropped too, so
  "Out - of - the - blue’" and "out of the blue" are one expression. Expression-disjoint splits
  group by it; the committed split definitions depend on it bit for bit.
* :func:`normalise_spacing`: punctuation kept ("one's" and "ones" stay apart). IMPLI's analysis
  (ICE, accuracy by idiom) and the IMPLI generator's lexicon key idioms by it, so that
  "out-of-the-blue" and "out of the blue" are counted as the two forms IMPLI wrote.
* :func:`normalise_text`: :func:`normalise_spacing` after removing the narrative benchmark's
  ``<b>`` markup: what a model is shown, compared across splits and prediction files.
* :func:`normalise_idiom`: curly quotes straightened, PIE's tokenised possessive ("duck 's")
  joined, edge punctuation trimmed but inner punctuation kept: two lexicons' spellings of one
  idiom ("spill the beans." from one source, "spill the beans" from another) meet, while
  "one's" stays a possessive slot for the idiom matcher.
* :func:`normalise_sentence`: :func:`normalise_idiom`'s quotes and edge trimming, quotes trimmed
  too, no possessive joining: the FLUTE creator's check that a generated sentence is not just
  its input again with a full stop or quotes added.
* :func:`normalise_word`: one token, lower case with straight apostrophes (no space folding):
  what token matchers compare.

:func:`collapse_spaces` alone keeps case: it only folds white space, for texts kept as written.
"""

from __future__ import annotations

import re

__all__ = [
    "common_affix",
    "collapse_spaces",
    "normalise_expression",
    "normalise_idiom",
    "normalise_sentence",
    "normalise_spacing",
    "normalise_text",
    "normalise_word",
    "strip_markup",
]

_NOT_WORD = re.compile(r"[^\w\s]|_")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
_EDGE_PUNCTUATION = ' .!?;:,"'


def strip_markup(text: str) -> str:
    """Remove the ``<b>``/``</b>`` tags the narrative benchmark uses to mark the idiom."""
    return text.replace("<b>", "").replace("</b>", "")


def collapse_spaces(text: object) -> str:
    """Single spaces, case kept (None -> ""): texts compared or stored as a person wrote them, bar line breaks and runs of blanks."""
    return " ".join(str(text if text is not None else "").split())


def normalise_spacing(text: str | None) -> str:
    """Lower case, single spaces, punctuation kept: "Spill  the Beans." -> "spill the beans."."""
    return " ".join(str(text or "").lower().split())


def normalise_expression(text: str | None) -> str:
    """Lower case, punctuation dropped, single spaces: "Out - of - the - blue’" -> "out of the blue"."""
    return " ".join(_NOT_WORD.sub(" ", str(text or "").lower()).split())


def normalise_text(text: str | None) -> str:
    """Lower case, single spaces, no ``<b>`` markup: the key for texts shown to a model."""
    return normalise_spacing(strip_markup(str(text or "")))


def normalise_idiom(text: str | None) -> str:
    """Lower case, straight quotes, "duck 's" -> "duck's", no edge punctuation, single spaces."""
    t = str(text or "").translate(_QUOTES).lower()
    t = re.sub(r"\s+'s\b", "'s", t)  # PIE's tokenised "duck 's" -> "duck's"
    return " ".join(t.split()).strip(_EDGE_PUNCTUATION)


def normalise_sentence(text: object) -> str:
    """Lower case, straight quotes, single spaces, edge punctuation and quotes trimmed: '“Spill the beans.”' -> "spill the beans"."""
    return " ".join(str(text).translate(_QUOTES).lower().split()).strip(_EDGE_PUNCTUATION + "'")


def normalise_word(token: str) -> str:
    """One token: lower case, curly apostrophes and backticks made straight ("Ca’n" -> "ca'n")."""
    return token.lower().translate(_APOSTROPHES)


def common_affix(a: str, b: str) -> tuple[int, int]:
    """(characters ``a`` and ``b`` share from the start, characters they share from the end after that): what is
    left between them is where the two strings differ."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    return start, end
