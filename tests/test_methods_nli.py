"""NLI methods: the answer parser on hand-written outputs, then nli-generate / nli-score with the real smollm2-135m
backend on balanced slices of FLUTE val and IMPLI's hand-written idiom pairs."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT
from figlang.data.registry import Task, get_task
from figlang.evaluation import evaluate
from figlang.methods.base import get_methods
from figlang.methods.prompted.parsing import class_to_label, parse_nli_answer

MODEL = "smollm2-135m"
FLUTE = (ENTAILMENT, CONTRADICTION)
IMPLI = (ENTAILMENT, NON_ENTAILMENT)

# (model output, FLUTE label, IMPLI label, explanation for FLUTE); None label = must be invalid
CASES = [
    ("Entails. The premise says the same thing in plain words.", ENTAILMENT, ENTAILMENT, "The premise says the same thing in plain words."),
    (
        "Contradicts. To be over the moon means to be very happy.",
        CONTRADICTION,
        NON_ENTAILMENT,
        "To be over the moon means to be very happy.",
    ),
    ("contradicts.", CONTRADICTION, NON_ENTAILMENT, None),
    ("Entailment", ENTAILMENT, ENTAILMENT, None),
    ("Contradiction. Sarcasm inverts the meaning.", CONTRADICTION, NON_ENTAILMENT, "Sarcasm inverts the meaning."),
    ("**Entails**\nExplanation: both describe a calm sea.", ENTAILMENT, ENTAILMENT, "both describe a calm sea."),
    ("Answer: Contradicts. The sky is not green.", CONTRADICTION, NON_ENTAILMENT, "The sky is not green."),
    ("The answer is: Entails. It is fine.", ENTAILMENT, ENTAILMENT, "It is fine."),
    ('"Contradicts." The idiom means the opposite.', CONTRADICTION, NON_ENTAILMENT, "The idiom means the opposite."),
    ("Entails because a storm is a difficult situation.", ENTAILMENT, ENTAILMENT, "because a storm is a difficult situation."),
    ("It contradicts: the simile means slow.", CONTRADICTION, NON_ENTAILMENT, "the simile means slow."),
    ("Does not entail.", CONTRADICTION, NON_ENTAILMENT, None),
    ("doesn't entail, since the premise is literal", CONTRADICTION, NON_ENTAILMENT, "since the premise is literal"),
    ("The first sentence does not entail the second.", CONTRADICTION, NON_ENTAILMENT, "The first sentence does not entail the second."),
    ("The hypothesis is not entailed by the premise.", CONTRADICTION, NON_ENTAILMENT, "The hypothesis is not entailed by the premise."),
    ("non-entailment", CONTRADICTION, NON_ENTAILMENT, None),
    ("Neutral.", CONTRADICTION, NON_ENTAILMENT, None),
    (
        "The first sentence entails the second because both mean success.",
        ENTAILMENT,
        ENTAILMENT,
        "The first sentence entails the second because both mean success.",
    ),
    ("I think it contradicts. It is sarcastic.", CONTRADICTION, NON_ENTAILMENT, "It is sarcastic."),
    ("Yes, because it is the same.", ENTAILMENT, ENTAILMENT, "because it is the same."),
    ("No. The hypothesis says the opposite.", CONTRADICTION, NON_ENTAILMENT, "The hypothesis says the opposite."),
    (
        "The two sentences are related. The second contradicts the first.",
        CONTRADICTION,
        NON_ENTAILMENT,
        "The two sentences are related. The second contradicts the first.",
    ),
    ("  entails  \n\nThe sea is calm in both.", ENTAILMENT, ENTAILMENT, "The sea is calm in both."),
    # unreadable: never a crash, never a guess
    ("", None, None, None),
    ("   \n ", None, None, None),
    ("asdkjh qwe zxc", None, None, None),
    ("1234 !!! ???", None, None, None),
    ('Please answer between "Entails" or "Contradicts"', None, None, None),
    ("Entails or contradicts? Hard to say.", None, None, None),
    ("The premise does not contradict the hypothesis.", None, None, None),
    ("<|im_end|>", None, None, None),
    ("The sentence is a metaphor about the sea.", None, None, None),
]


@pytest.mark.parametrize(("text", "flute", "impli", "explanation"), CASES)
def test_parse_nli_answer(text: str, flute: str | None, impli: str | None, explanation: str | None) -> None:
    for labels, gold in ((FLUTE, flute), (IMPLI, impli)):
        parsed = parse_nli_answer(text, labels)
        assert parsed.label == gold
        assert parsed.valid is (gold is not None)
        if gold is None:
            assert parsed.error and parsed.explanation is None
    if flute is not None:
        assert parse_nli_answer(text, FLUTE).explanation == explanation


# A "No" that is part of (or comes with) "no contradiction" / "does not contradict" is not a leading No.
NEGATED_CONTRADICTION = [
    "No contradiction here; the sentences agree.",
    "No contradiction.",
    "No, it does not contradict.",
    "No\ncontradiction",
    "Yes, no contradiction.",
]


@pytest.mark.parametrize("text", NEGATED_CONTRADICTION)
def test_parse_no_contradiction_is_not_a_leading_no(text: str) -> None:
    for labels in (FLUTE, IMPLI):
        parsed = parse_nli_answer(text, labels)
        assert parsed.label is None and parsed.valid is False
        assert parsed.error and parsed.explanation is None


def test_parse_no_contradiction_with_another_clear_label() -> None:
    parsed = parse_nli_answer("No contradiction. The first sentence entails the second.", IMPLI)
    assert parsed.label == ENTAILMENT and parsed.valid


@pytest.mark.parametrize(
    ("text", "flute", "explanation"),
    [
        ("Answer: (B) Contradicts", CONTRADICTION, None),
        ("(B) Contradicts", CONTRADICTION, None),
        ("B) contradicts, since the idiom is ironic.", CONTRADICTION, "since the idiom is ironic."),
        ("Answer: (A) Entails. Both mean happy.", ENTAILMENT, "Both mean happy."),
        ("B. Contradicts", CONTRADICTION, None),
    ],
)
def test_parse_option_marker_is_not_the_explanation(text: str, flute: str, explanation: str | None) -> None:
    parsed = parse_nli_answer(text, FLUTE)
    assert parsed.label == flute and parsed.valid
    assert parsed.explanation == explanation
    assert parse_nli_answer(text, IMPLI).label == (ENTAILMENT if flute == ENTAILMENT else NON_ENTAILMENT)


@pytest.mark.parametrize(
    ("text", "explanation"),
    [
        ('Contradicts, because the premise says "it entails …"', 'because the premise says "it entails …"'),
        ('Contradicts, because the premise says "it entails the opposite".', 'because the premise says "it entails the opposite".'),
        ('"Contradicts" because "entails" would need the literal sense.', 'because "entails" would need the literal sense.'),
        ('It contradicts: the premise says "it entails', 'the premise says "it entails'),  # cut off inside the quote
    ],
)
def test_parse_leading_label_wins_over_quoted_label_words(text: str, explanation: str) -> None:
    parsed = parse_nli_answer(text, FLUTE)
    assert parsed.label == CONTRADICTION and parsed.valid and parsed.explanation == explanation
    assert parse_nli_answer(text, IMPLI).label == NON_ENTAILMENT


@pytest.mark.parametrize(
    "text",
    [
        '"Entails" or "Contradicts"',
        'Entails, or "Contradicts"',
        "Contradicts, because it entails the opposite.",  # unquoted: still two labels
        'The premise says "it entails", so it contradicts.',  # no leading label
    ],
)
def test_parse_quoted_labels_without_a_leading_label_stay_ambiguous(text: str) -> None:
    for labels in (FLUTE, IMPLI):
        parsed = parse_nli_answer(text, labels)
        assert parsed.label is None and parsed.valid is False and parsed.error


def test_parser_has_no_memory_and_maps_label_sets() -> None:
    outputs = ["Entails. A.", "garbage", "Contradicts. B.", None, "Entails"]
    parsed = [parse_nli_answer(t, FLUTE) for t in outputs]
    assert [p.label for p in parsed] == [ENTAILMENT, None, CONTRADICTION, None, ENTAILMENT]
    assert parsed[1].explanation is None and parsed[3].error == "empty answer"
    assert class_to_label("NEG", FLUTE) == CONTRADICTION and class_to_label("CON", IMPLI) == NON_ENTAILMENT
    assert class_to_label("ENT", (CONTRADICTION,)) is None


def balanced(task_name: str, split: str, data_dir: Path, n: int) -> Task:
    """The task restricted to its first n/2 pairs of each label (the files are sorted by label)."""
    task = get_task(task_name)
    records = task.load(split, data_dir)
    picked = [r for r in records if r.label == task.labels[0]][: n // 2] + [r for r in records if r.label == task.labels[1]][: n // 2]
    return dataclasses.replace(task, loader=lambda s, d, o: list(picked))


def check_nli(result, labels: tuple[str, ...]) -> list:
    preds = [result.predictions[r.id] for r in result.records]
    for p in preds:
        if p.valid:
            assert p.prediction in labels and p.error is None
        else:  # recorded, never replaced by a guess or another item's answer
            assert p.prediction is None and p.error and p.raw is not None
    return preds


slow = pytest.mark.slow


@slow
def test_nli_generate_flute(data_dir: Path, tmp_path: Path) -> None:
    task = balanced("flute", "val", data_dir, 6)
    result = evaluate(
        task,
        "nli-generate",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path,
        progress=False,
        method_options={"max_new_tokens": 40},
    )
    preds = check_nli(result, FLUTE)
    assert all(isinstance(p.raw, str) for p in preds)
    assert len({p.raw for p in preds}) == len(preds)  # every answer is the item's own
    for p in preds:
        assert p == dataclasses.replace(p)  # plain data
        expected = parse_nli_answer(p.raw, FLUTE)
        assert (p.prediction, p.valid) == (expected.label, expected.valid)
    fp = result.results["method"]["fingerprint"]
    assert fp["instruction"].startswith('Does the sentence "{premise}" entail or contradict') and fp["chat_used"] is True
    assert fp["labels"] == list(FLUTE) and fp["explain"] is True


@slow
def test_nli_score_flute_with_explanations(data_dir: Path, tmp_path: Path) -> None:
    task = balanced("flute", "val", data_dir, 6)
    result = evaluate(
        task,
        "nli-score",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path,
        progress=False,
        method_options={"max_new_tokens": 24},
    )
    preds = check_nli(result, FLUTE)
    for p in preds:
        assert p.valid and set(p.scores) == set(FLUTE) and all(math.isfinite(v) for v in p.scores.values())
        assert p.prediction == max(FLUTE, key=lambda lb: (p.scores[lb], -FLUTE.index(lb)))
        assert p.raw.startswith({ENTAILMENT: "Entails.", CONTRADICTION: "Contradicts."}[p.prediction])
    assert sum(bool(p.explanation) for p in preds) >= len(preds) // 2
    margins = {round(p.scores[ENTAILMENT] - p.scores[CONTRADICTION], 4) for p in preds}
    assert len(margins) == len(preds)  # the scores answer to each pair, not to a constant prompt
    fp = result.results["method"]["fingerprint"]
    assert fp["label_words"] == {ENTAILMENT: "Entails", CONTRADICTION: "Contradicts"} and fp["explain"] is True


@slow
def test_nli_score_impli_entailment_vs_non_entailment(data_dir: Path, tmp_path: Path) -> None:
    task = balanced("impli-idioms-manual", "all", data_dir, 6)
    result = evaluate(task, "nli-score", model=MODEL, split="all", data_dir=data_dir, cache_dir=tmp_path, progress=False)
    preds = check_nli(result, IMPLI)
    assert {r.label for r in result.records} == set(IMPLI)
    for p in preds:
        assert p.valid and set(p.scores) == set(IMPLI) and p.explanation is None and p.raw is None
    fp = result.results["method"]["fingerprint"]
    assert fp["label_words"] == {ENTAILMENT: "Entails", NON_ENTAILMENT: "Does not entail"} and fp["explain"] is False
    assert '"Does not entail"' in fp["instruction"]
    # calibration against a content-free input moves the decision, with the offsets recorded
    method = get_methods().create("nli-score", model=MODEL, calibrate="content-free", chat=False)
    method.bind(task)
    calibrated = method.predict(result.records[:2])
    for p, raw in zip(calibrated, preds[:2]):
        offsets = p.meta["content_free"]
        assert set(offsets) == set(IMPLI) and p.scores[ENTAILMENT] != raw.scores[ENTAILMENT]
    assert method.config()["chat_used"] is False and method.config()["plain_template"] == "{instruction}\nAnswer:"


@slow
def test_nli_score_with_train_examples(data_dir: Path, tmp_path: Path) -> None:
    """shots=K: K balanced train pairs before every item, one shared set (a common prefix), the item never its own example."""
    val = balanced("flute", "val", data_dir, 4)
    full = get_task("flute")
    task = dataclasses.replace(val, loader=lambda s, d, o: val.loader(s, d, o) if s == "val" else full.loader(s, d, o))
    result = evaluate(
        task,
        "nli-score",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path,
        progress=False,
        method_options={"shots": 4, "explain": False},
    )
    preds = check_nli(result, FLUTE)
    assert all(p.valid and set(p.scores) == set(FLUTE) for p in preds)
    fp = result.results["method"]["fingerprint"]
    assert fp["shots"] == 4 and len(fp["examples"]) == 4 and fp["seed"] == 0
    train = {r.id: r for r in get_task("flute").load("train", data_dir)}
    shown = [train[i] for i in fp["examples"]]
    assert sorted(r.label for r in shown) == sorted([ENTAILMENT, ENTAILMENT, CONTRADICTION, CONTRADICTION])
    assert len({r.figure_type for r in shown}) >= 3  # figure types spread, not the first four of one kind

    method = get_methods().create("nli-score", model=MODEL, shots=4, explain=False)
    method.bind(get_task("flute"))
    method.fit(list(train.values()))
    assert [r.id for r in method.examples] == fp["examples"]  # seeded: the same set again
    item = method.examples[1]
    swapped = method.examples_for(item)
    assert item not in swapped and len(swapped) == 4
    assert [r.label for r in swapped] == [r.label for r in method.examples]  # the replacement keeps the label
    prompt = method.prompt(item.premise, item.hypothesis, item)
    assert prompt.count(method.examples[0].premise) == 1 and prompt.count(item.premise) == 1
    zero = get_methods().create("nli-score", model=MODEL, explain=False)
    zero.bind(get_task("flute"))
    assert "shots" not in zero.config() and not zero.needs_train  # zero-shot fingerprints are unchanged
    with pytest.raises(Exception, match="train split"):
        method.fit([])
    # question=meaning asks whether the sentences say the same thing, answered Yes / No
    meaning = get_methods().create("nli-score", model=MODEL, question="meaning", explain=False)
    meaning.bind(get_task("flute"))
    assert meaning.words() == {ENTAILMENT: "Yes", CONTRADICTION: "No"}
    text = meaning.prompt("It rained all day.", "The sky wept like a child.")
    assert 'Sentence 2: "The sky wept like a child."' in text and "say the same thing" in text
    assert meaning.config()["question"] == "meaning" and "Sentence 2 may use sarcasm" in meaning.config()["instruction"]
