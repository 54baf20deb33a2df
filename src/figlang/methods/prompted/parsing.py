"""Reading models' free-text answers: NLI label + explanation, and sentence cutting.

The parsers are pure functions of the text (no state between items, so an answer can never
be copied from a previous one) and never raise on model output: an answer that cannot be
read comes back with ``valid=False``, the reason, and the raw text kept by the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT

# Answer classes before they are mapped onto a task's label set.
ENT, CON, NEG = "ENT", "CON", "NEG"

# Order matters: negated forms are matched (and masked) before the plain word inside them.
_NEGATED_CONTRADICT = re.compile(r"\b(?:(?:does|do|did|is|are|was|were)\s*(?:not|n['’]?t)|not|never|no)\s+(?:a\s+)?contradict\w*", re.I)
_NEG_PATTERNS = [
    re.compile(r"\b(?:does|do|did|can|could|would|will)\s*(?:not|n['’]?t)\s+(?:necessarily\s+)?entail\w*", re.I),
    re.compile(r"\b(?:is|are|was|were)\s*(?:not|n['’]?t)\s+(?:an?\s+)?entail\w*", re.I),
    re.compile(r"\bnot\s+(?:an?\s+)?entail\w*", re.I),
    re.compile(r"\bnon[-\s]?entail\w*", re.I),
    re.compile(r"\bno\s+entailment\b", re.I),
    re.compile(r"\bneither\s+entail\w*", re.I),
    re.compile(r"\bneutral\b", re.I),
]
_CON_PATTERN = re.compile(r"\bcontradict\w*", re.I)
_ENT_PATTERN = re.compile(r"\bentail\w*", re.I)
_YES_NO = re.compile(r"^(yes|no)\b", re.I)
# An option marker before the label ("(B) Contradicts", "B) Contradicts", "B. Contradicts"): not part of the answer.
_OPTION = re.compile(r"^\(?[a-d1-4](?:\)|[.:](?=\s*[\"'“‘*(]*\s*(?:entail|contradict|non[-\s]?entail|neutral|not\b|does)))\s*(?=\S)", re.I)
# What follows a label when the answer offers a choice rather than an explanation ('Entails, or "Contradicts"').
_ALTERNATIVE = re.compile(r"^[\s,;:\-–—(]*(?:or|nor|and|vs\.?|versus)\b", re.I)
# Spans in double quotes (an unclosed quote runs to the end of the text).
_QUOTED = re.compile(r"\"[^\"\n]*(?:\"|$)|“[^”\n]*(?:”|$)")

_PREFIX = re.compile(r"^\s*(?:(?:final\s+)?answer|label|prediction|output|a|response|assistant|verdict|relation(?:ship)?)\s*[:\-]\s*", re.I)
_ANSWER_IS = re.compile(r"^\s*(?:the\s+)?(?:correct\s+)?(?:answer|label|relation(?:ship)?)\s+is\s*:?\s*", re.I)
_EXPLANATION_PREFIX = re.compile(r"^\s*(?:explanation|reason(?:ing)?|because of this|justification)\s*[:\-]\s*", re.I)
_MARKUP = re.compile(r"[*`#]+")
# Words that may precede a label without making the sentence an explanation of its own ("It contradicts").
_FILLER = re.compile(r"^\s*(?:(?:i think|i believe|so|thus|therefore|hence|yes|no)\W*)?(?:it|this|that|this pair)?\s*$", re.I)
# What follows a label when the rest of the sentence explains it: punctuation or a connective.
_DETACHED = re.compile(r"^\s*(?:$|[,:;\-–—(]|(?:because|since|as|for|given|due|so)\b)", re.I)
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "e.g", "i.e", "u.s", "mt"}


@dataclass(frozen=True)
class ParsedAnswer:
    label: str | None  # one of the task's labels, or None when the answer is unreadable
    explanation: str | None
    valid: bool
    error: str | None = None
    answer_class: str | None = None  # ENT / CON / NEG before mapping onto the label set


def class_to_label(answer_class: str, labels: tuple[str, ...] | list[str]) -> str | None:
    """Map an answer class onto the task's label set (binary sets absorb the other negative class).

    FLUTE (entailment, contradiction): "does not entail" → contradiction.
    IMPLI (entailment, non-entailment): "contradicts" → non-entailment.
    """
    labels = tuple(labels)
    if answer_class == ENT:
        return ENTAILMENT if ENTAILMENT in labels else None
    if answer_class == CON:
        if CONTRADICTION in labels:
            return CONTRADICTION
        return NON_ENTAILMENT if NON_ENTAILMENT in labels else None
    if answer_class == NEG:
        if NON_ENTAILMENT in labels:
            return NON_ENTAILMENT
        return CONTRADICTION if CONTRADICTION in labels else None
    return None


def _mentions(text: str) -> list[tuple[int, int, str]]:
    """Label mentions as (start, end, class), negated forms first so their inner word does not count twice."""
    found: list[tuple[int, int, str]] = []
    taken = [False] * len(text)

    def add(pattern: re.Pattern, cls: str | None) -> None:
        for m in pattern.finditer(text):
            if any(taken[m.start() : m.end()]):
                continue
            for i in range(m.start(), m.end()):
                taken[i] = True
            if cls is not None:
                found.append((m.start(), m.end(), cls))

    add(_NEGATED_CONTRADICT, None)  # "does not contradict" is no answer either way: mask it
    for p in _NEG_PATTERNS:
        add(p, NEG)
    add(_CON_PATTERN, CON)
    add(_ENT_PATTERN, ENT)
    return sorted(found)


def _hidden(text: str) -> list[tuple[int, int]]:
    """Spans of the negated "contradict" forms that :func:`_mentions` masks ("no contradiction", "does not contradict")."""
    return [m.span() for m in _NEGATED_CONTRADICT.finditer(text)]


def _unquoted_tail(first: str, mentions: list[tuple[int, int, str]]) -> list[tuple[int, int, str]] | None:
    """``mentions`` less those in quotes, when the first one is a label at the very start of the sentence
    followed by its explanation ("Contradicts, because the premise says \"it entails …\""); otherwise None.

    A label that opens the answer wins over label words the explanation quotes; an answer echoing
    the choices ('"Entails" or "Contradicts"') has no such leading label and stays ambiguous.
    """
    start, end, _ = mentions[0]
    after = first[end:]
    offset = end + len(after) - len(after.lstrip("\"”'’"))  # a closing quote left by the label ('"Contradicts" because …')
    after = first[offset:]
    if not (_FILLER.match(first[:start]) and _DETACHED.match(after) and after.strip(" \t.!?")):
        return None
    if _ALTERNATIVE.match(after):  # 'Entails, or "Contradicts"' offers a choice, it explains nothing
        return None
    quoted = [(qs + offset, qe + offset) for qs, qe in (m.span() for m in _QUOTED.finditer(after))]
    return [(s, e, c) for s, e, c in mentions if s < offset or not any(qs <= s < qe for qs, qe in quoted)]


def _first_sentence_end(text: str) -> int:
    """Index just past the first sentence of ``text`` (or its length)."""
    newline = text.find("\n")
    for m in _SENTENCE_END.finditer(text):
        if newline != -1 and m.start() > newline:
            break
        word = re.search(r"([\w.]+)$", text[: m.start()])
        if word and word.group(1).lower().rstrip(".") in _ABBREVIATIONS and m.group(0) == ".":
            continue
        return m.end()
    return newline if newline != -1 else len(text)


def _clean(text: str) -> str:
    text = _MARKUP.sub("", text).strip()
    for _ in range(3):  # "Answer: The answer is: Entails"
        new = _PREFIX.sub("", text)
        new = _ANSWER_IS.sub("", new)
        new = new.lstrip(" \t\"'“”‘’([{").strip()
        new = _OPTION.sub("", new)
        if new == text:
            break
        text = new
    return text


def clean_explanation(text: str) -> str | None:
    text = text.strip().lstrip(".,:;!-–— \t\"'”’)")
    text = _EXPLANATION_PREFIX.sub("", text).strip()
    paragraph = text.split("\n\n", 1)[0].strip()
    return paragraph or None


def parse_nli_answer(text: str | None, labels: tuple[str, ...] | list[str]) -> ParsedAnswer:
    """A generated NLI answer → label (from ``labels``) and explanation; ``valid=False`` when unreadable.

    Understands FLUTE's "Entails. <explanation>" and "Contradicts. …", the label names
    ("entailment", "contradiction", "non-entailment"), negations ("does not entail",
    "doesn't entail", "not entailed"), answers wrapped in markdown or quotes or after
    "Answer:", a sentence that states the relation ("The first sentence entails the
    second."), an option marker ("(B) Contradicts"), and a leading Yes/No. An answer naming
    two different labels in its first sentence (e.g. echoing '"Entails" or "Contradicts"') is
    ambiguous, hence invalid, except that a label opening the answer and followed by its
    explanation wins over label words the explanation quotes ('Contradicts, because it says
    "entails"'). "No contradiction" / "does not contradict" names no label, and a Yes/No that
    comes with it is no answer either ("No, it does not contradict." is invalid).
    """
    labels = tuple(labels)
    if text is None or not str(text).strip():
        return ParsedAnswer(None, None, False, "empty answer")
    cleaned = _clean(str(text))
    if not cleaned:
        return ParsedAnswer(None, None, False, "empty answer")
    cut = _first_sentence_end(cleaned)
    first, rest = cleaned[:cut], cleaned[cut:]
    mentions = [(s, e, c) for s, e, c in _mentions(first) if class_to_label(c, labels) is not None]
    region_mentions, in_first = mentions, True
    if not mentions:
        yes_no = _YES_NO.match(first)
        # "No contradiction.", "No, it does not contradict.": the No belongs to (or comes with) a negated
        # "contradict", which answers neither way; it is not a leading "No" for the negative class.
        if yes_no and not _hidden(first) and not any(s <= yes_no.start() < e for s, e in _hidden(cleaned)):
            cls = ENT if yes_no.group(1).lower() == "yes" else NEG
            label = class_to_label(cls, labels)
            if label is not None:
                return ParsedAnswer(label, clean_explanation(cleaned[yes_no.end() :]), True, None, cls)
        region_mentions = [(s, e, c) for s, e, c in _mentions(cleaned) if class_to_label(c, labels) is not None]
        in_first = False
    if not region_mentions:
        return ParsedAnswer(None, None, False, f"no label in the answer (expected one of: {', '.join(labels)})")
    mapped = {class_to_label(c, labels) for _, _, c in region_mentions}
    if len(mapped) > 1 and in_first:
        unquoted = _unquoted_tail(first, region_mentions)
        if unquoted is not None and len({class_to_label(c, labels) for _, _, c in unquoted}) == 1:
            region_mentions = unquoted
            mapped = {class_to_label(c, labels) for _, _, c in region_mentions}
    if len(mapped) > 1:
        where = "its first sentence" if in_first else "the answer"
        return ParsedAnswer(None, None, False, f"ambiguous answer: {where} names {', '.join(sorted(mapped))}")  # type: ignore[arg-type]
    start, end, cls = region_mentions[0]
    label = class_to_label(cls, labels)
    if not in_first:
        return ParsedAnswer(label, clean_explanation(cleaned), True, None, cls)
    if rest.strip():  # "Entails. <explanation>"
        explanation = clean_explanation(rest)
    else:
        after = first[end:].lstrip("\"”'’")  # a closing quote left by the label ('"Entails" because …')
        if _FILLER.match(first[:start]) and not after.strip(" \t.!?\"'”’)"):  # "Contradicts." alone
            explanation = None
        elif _FILLER.match(first[:start]) and _DETACHED.match(after):  # "Entails because …", "It contradicts, since …"
            explanation = clean_explanation(after)
        else:  # "The first sentence entails the second because …": the sentence is the explanation
            explanation = clean_explanation(first)
    return ParsedAnswer(label, explanation, True, None, cls)


def first_sentence(text: str) -> tuple[str, bool]:
    """The first sentence of the first non-empty line, stripped, and whether a sentence end was found.

    Closing quotes/brackets after the end mark stay with the sentence; common abbreviations
    ("Mr.", "Dr.") do not end it.
    """
    lines = [ln.strip() for ln in (text or "").splitlines()]
    line = next((ln for ln in lines if ln), "")
    if not line:
        return "", False
    for m in _SENTENCE_END.finditer(line):
        word = re.search(r"([\w.]+)$", line[: m.start()])
        if word and m.group(0) == "." and word.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        return line[: m.end()].strip(), True
    return line, False
