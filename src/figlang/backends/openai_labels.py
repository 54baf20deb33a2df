"""Closed label sets over an OpenAI-compatible endpoint: reading the label out of a free-text answer (:func:`parse_label`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LabelAnswer:
    """The label a model chose, parsed from its raw answer; ``valid=False`` when it could not be parsed."""

    label: str | None
    valid: bool
    raw: str
    error: str | None = None


_FILLER = {
    "answer",
    "answers",
    "label",
    "labels",
    "final",
    "the",
    "is",
    "it",
    "its",
    "my",
    "i",
    "would",
    "say",
    "choose",
    "pick",
    "select",
    "output",
    "prediction",
    "predicted",
    "relation",
    "relationship",
    "class",
    "category",
    "option",
    "correct",
    "best",
    "this",
    "that",
    "a",
    "an",
    "be",
    "should",
    "think",
}
_NEGATIONS = {"not", "no", "never", "neither", "nor", "isn", "isnt", "cannot", "t"}


def _norm_words(text: str) -> list[str]:
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).split()


def parse_label(text: str, labels: Sequence[str], aliases: Mapping[str, Sequence[str]] | None = None) -> LabelAnswer:
    """Match a model's free-text ``text`` against a closed set of ``labels``.

    Case, punctuation, hyphens and extra words are ignored ("Non-entailment." and "The answer is:
    NON ENTAILMENT, because …" both give ``non-entailment``). ``aliases`` maps a label to other
    surface forms ({"entailment": ["yes"]}). Rules, in order:

    1. the whole answer is a label (or alias);
    2. the answer opens with a label (after filler such as "Answer:", "The label is");
    3. exactly one label occurs anywhere (as whole words, the longest label winning where
       labels overlap, as "entailment" inside "non-entailment"), and it is not negated.

    Anything else — no label, several different labels, a negated label — is invalid: never guessed.
    This is the generic matcher for any closed label set (:meth:`OpenAIBackend.answer_labels`); NLI
    answers with an explanation ("Contradicts. The premise …") are read by the methods with
    :func:`figlang.methods.prompted.parsing.parse_nli_answer`, which knows what a negated NLI label means.
    """
    raw = text if isinstance(text, str) else str(text)
    if not labels:
        raise ValueError("parse_label needs at least one label")
    forms: list[tuple[tuple[str, ...], str]] = []
    for label in labels:
        surfaces = [label, *((aliases or {}).get(label, ()))]
        for surface in surfaces:
            form = tuple(_norm_words(surface))
            if form:
                forms.append((form, label))
    if not forms:
        raise ValueError(f"labels {list(labels)!r} have no letters or digits to match")
    # Longest forms first, so "non entailment" is found before "entailment".
    forms.sort(key=lambda f: -len(f[0]))
    ambiguous = {f for f, lab in forms if any(f == g and lab != lab2 for g, lab2 in forms)}
    if ambiguous:
        raise ValueError(f"labels/aliases {sorted(' '.join(a) for a in ambiguous)} normalise to the same words")

    words = _norm_words(raw)
    if not words:
        return LabelAnswer(None, False, raw, "empty answer")

    # 1. the whole answer is a label
    for form, label in forms:
        if tuple(words) == form:
            return LabelAnswer(label, True, raw)

    # Find every occurrence, longest forms claiming their words first.
    taken = [False] * len(words)
    found: list[tuple[int, int, str]] = []  # (start, length, label)
    for form, label in forms:
        n = len(form)
        for start in range(len(words) - n + 1):
            if tuple(words[start : start + n]) == form and not any(taken[start : start + n]):
                found.append((start, n, label))
                for i in range(start, start + n):
                    taken[i] = True
    found.sort()
    if not found:
        return LabelAnswer(None, False, raw, f"no label of {list(labels)} in the answer")

    # 2. the answer opens with a label (after filler words)
    first_start, first_len, first_label = found[0]
    lead = words[:first_start]
    if all(w in _FILLER for w in lead):
        letter = " ".join(words[first_start : first_start + first_len])
        # A one-character label ("A") must stand as an answer: "(A)", "A)", "A." or at the end, not "a simile".
        if len(letter) > 1 or re.search(rf"(?<![0-9a-z]){re.escape(letter)}(?=\s*$|[)\].:,;!?*])", raw.lower()):
            return LabelAnswer(first_label, True, raw)

    # 3. exactly one distinct label, not negated; single-letter labels only count in rules 1-2
    distinct = {label for _, _, label in found}
    if len(distinct) > 1:
        return LabelAnswer(None, False, raw, f"several labels in the answer: {sorted(distinct)}")
    start, n, label = found[0]
    if any(len(" ".join(words[s : s + k])) <= 1 for s, k, _ in found):
        return LabelAnswer(None, False, raw, f"a one-character label ({label!r}) found inside the text, not as the answer")
    for s, _, _ in found:
        if s > 0 and words[s - 1] in _NEGATIONS:
            return LabelAnswer(None, False, raw, f"the label {label!r} is negated in the answer")
    return LabelAnswer(label, True, raw)
