"""``--discover``: an offline LM proposes figurative spans the lexicon did not match.

Opt-in and marked as such: each sentence in which the lexicon found no idiom or simile is shown to a
catalog LM (``qwen2.5-1.5b`` by default, through figlang's backends) with the question "which words
in this sentence are an idiom or figurative phrase? copy them exactly, or answer none". An answer
is kept only when it is copied from the sentence (two to eight words, not only function words, not
most of the sentence) and
does not overlap what the lexicon already found; it becomes an ``idiom`` expression with
``details["discovered_by"] = "lm:<model>"``, no lexicon meaning (``--meaning-model`` may add one)
and a low confidence (0.30). Its precision is measured by ``benchmarks/bench_everyday_idioms.py
--discover``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from figlang.backends.backend_cache import backend_for
from figlang.backends.base import ChatMessage, GenerationRequest

DISCOVER_MODEL = "qwen2.5-1.5b"
DISCOVER_OPTIONS: dict[str, Any] = {"backend": "llama.cpp", "threads": 1}
QUESTION = (
    "Which words in this sentence form an idiom or a figurative phrase (words not meant literally)? "
    'Copy the phrase exactly as it is written in the sentence. If every word is meant literally, answer "none".\n'
    "Sentence: {sentence}"
)
_FUNCTION = frozenset("a an the of to in on at by for with and or but is are was were be it he she they i you we his her their my".split())


def _candidates(answer: str) -> list[str]:
    out = []
    for line in re.split(r"[\n;]", answer):
        for part in re.findall(r'"([^"]+)"|\u201c([^\u201d]+)\u201d', line) or [("", line)]:
            phrase = (part[0] or part[1]).strip().strip(".,:;!?'\"*- ").strip()
            phrase = re.sub(r"^(?:\d+[.)]\s*|the (?:idiom|phrase) (?:is )?)", "", phrase, flags=re.I).strip()
            if phrase and phrase.lower() != "none":
                out.append(phrase)
    return out


def find_spans(sentence: str, answer: str) -> list[tuple[int, int]]:
    """Character spans of the answer's phrases that are copied from ``sentence`` (2+ words, a content word)."""
    spans: list[tuple[int, int]] = []
    low = sentence.lower()
    for phrase in _candidates(answer):
        words = phrase.lower().split()
        if len(words) < 2 or len(words) > 8 or all(w in _FUNCTION for w in words):
            continue
        if len(words) >= 0.75 * len(low.split()):  # the sentence copied back (what smollm2-135m answers) is no idiom
            continue
        at = low.find(" ".join(words))
        if at >= 0 and not any(a < at + len(phrase) and at < b for a, b in spans):
            spans.append((at, at + len(" ".join(words))))
    return spans


class Discoverer:
    """One LM, asked sentence by sentence; ``propose`` returns spans per sentence."""

    def __init__(self, model: str = DISCOVER_MODEL, **options: Any) -> None:
        self.model = model
        opts = {**(DISCOVER_OPTIONS if model == DISCOVER_MODEL else {}), **options}
        self.lm = backend_for(model, **opts)

    def _prompt(self, sentence: str) -> str:
        q = QUESTION.format(sentence=" ".join(sentence.split()))
        return self.lm.chat_prompt([ChatMessage("user", q)]) if self.lm.has_chat_template else f"Question: {q}\nAnswer:"

    def propose(self, sentences: Sequence[str]) -> list[list[tuple[int, int]]]:
        if not sentences:
            return []
        outs = self.lm.generate([GenerationRequest(self._prompt(s), max_new_tokens=24, stop=("\n\n",)) for s in sentences])
        return [find_spans(s, o[0] if o else "") for s, o in zip(sentences, outs)]
