"""Post-processing filters: the reasons a generated pair or an input sentence is dropped."""

from __future__ import annotations

import re
from collections.abc import Sequence

from figlang.core.text import normalise_spacing


# --------------------------------------------------------------------------------------------
# Post-processing filters
# --------------------------------------------------------------------------------------------

FILTER_REASONS = {
    "span_mismatch": "the replaced text is not the idiom occurrence that was matched",
    "empty_definition": "the definition is empty after realisation",
    "unchanged": "the hypothesis is the premise (up to case and spacing)",
    "unfilled_slot": "the definition has a slot (one's, oneself, someone, something) the sentence does not fill",
    "doubled_word": "a word is doubled where the definition meets the sentence ('digging in in')",
    "bad_ending": "the hypothesis lost the premise's final punctuation",
    "spacing": "the substitution introduced a double space",
    "duplicate_pair": "the same premise-hypothesis pair was already generated",
}
SKIP_REASONS = {
    "idiom_not_in_lexicon": "the sentence names an idiom the lexicon does not have",
    "idiom_not_found": "no lexicon idiom (or not the named one) occurs in the sentence",
    "no_definition": "the idiom has no definition of the needed kind (definition / adversarial)",
    "literal_context": "adversarial and antonym pairs are made from figurative contexts only",
    "no_antonym": "no word of the definition has a WordNet antonym",
    "metaphor_not_found": "the metaphorical word was not found in the sentence",
    "no_literal_replacement": "no literal replacement was found for the metaphorical word",
}
_TERMINAL = set(".!?…\"'”’)»]")
_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)


def check_pair(
    premise: str,
    hypothesis: str,
    *,
    span: tuple[int, int] | None = None,
    matched: str | None = None,
    replacement: str | None = None,
    unfilled: Sequence[str] = (),
) -> list[str]:
    """Reasons (keys of FILTER_REASONS) to drop a generated pair; empty when it is well formed.

    ``span``/``matched``: the premise's character span that was replaced and the text the matcher
    saw there; ``replacement``: what replaced it; ``unfilled``: slots the realisation left open.
    """
    reasons: list[str] = []
    if span is not None and matched is not None and premise[span[0] : span[1]] != matched:
        reasons.append("span_mismatch")
    if replacement is not None and not replacement.strip():
        reasons.append("empty_definition")
    if normalise_spacing(hypothesis) == normalise_spacing(premise):
        reasons.append("unchanged")
    if unfilled:
        reasons.append("unfilled_slot")
    if len(_DOUBLED.findall(hypothesis)) > len(_DOUBLED.findall(premise)):
        reasons.append("doubled_word")
    p_end, h_end = premise.rstrip()[-1:], hypothesis.rstrip()[-1:]
    if p_end in _TERMINAL and h_end != p_end:
        reasons.append("bad_ending")
    if hypothesis.count("  ") > premise.count("  "):
        reasons.append("spacing")
    return reasons
