"""Placeholder gold labels and overlap between splits, on hand-made records and on the real benchmarks."""

from __future__ import annotations

import json

import pytest

from figlang.data.hygiene import (
    context_key,
    detect_placeholder_labels,
    item_key,
    label_conflicts,
    normalise_text,
    overlap_report,
)
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT, ClozeRecord, GenerationRecord, NLIPair


def cloze(i: int, narrative: str = "n", options=("a", "b"), label: int | None = 0, expression: str | None = "x", **kw) -> ClozeRecord:
    return ClozeRecord(id=f"c{i}", narrative=narrative, options=tuple(options), label=label, expression=expression, **kw)


def nli(i: int, premise: str, hypothesis: str, label: str | None = ENTAILMENT, expression: str | None = None) -> NLIPair:
    return NLIPair(id=f"p{i}", premise=premise, hypothesis=hypothesis, label=label, expression=expression)


# ---------------------------------------------------------------------------------------------
# placeholder labels


def test_flagged_placeholders_are_reported():
    records = [cloze(i, label=0, label_is_placeholder=True) for i in range(3)] + [cloze(9)]
    reason = detect_placeholder_labels(records)
    assert reason is not None and reason.startswith("3 of 4 records carry placeholder gold labels")


def test_identical_labels_over_enough_records_look_like_placeholders():
    assert "all 50 labelled records have the same gold label, option 0" in detect_placeholder_labels([cloze(i) for i in range(50)])
    assert detect_placeholder_labels([cloze(i) for i in range(49)]) is None  # too few to tell
    mixed = [cloze(i, label=i % 2) for i in range(200)]
    assert detect_placeholder_labels(mixed) is None
    nli_same = [nli(i, "p", "h", NON_ENTAILMENT) for i in range(60)]
    assert "'non-entailment'" in detect_placeholder_labels(nli_same)
    # unlabelled records are not evidence either way
    assert detect_placeholder_labels([cloze(i, label=None) for i in range(100)]) is None
    # a single-option "cloze" cannot have any other label
    assert detect_placeholder_labels([cloze(i, options=("only",)) for i in range(60)]) is None
    assert detect_placeholder_labels([cloze(i) for i in range(10)], min_records=10) is not None


def test_generation_records_with_hidden_references_are_placeholders():
    hidden = [GenerationRecord(id="g", source="s", references=(), meta={"references_hidden": True})]
    assert detect_placeholder_labels(hidden) is not None
    assert detect_placeholder_labels([GenerationRecord(id="g", source="s", references=("r",))]) is None


# ---------------------------------------------------------------------------------------------
# keys


def test_normalisation_strips_markup_case_and_whitespace():
    assert normalise_text("He  <b>Spilled the\nBeans</b>. ") == "he spilled the beans."
    a = cloze(1, narrative="He <b>spilled</b> it", options=("Yes", "no"))
    b = cloze(2, narrative="he spilled  it", options=("no", "yes"))
    assert item_key(a) == item_key(b) and context_key(a) == context_key(b)
    c = cloze(3, narrative="he spilled it", options=("no", "maybe"))
    assert context_key(a) == context_key(c) and item_key(a) != item_key(c)
    assert item_key(nli(1, "P", "H")) != item_key(nli(2, "P", "other"))
    assert context_key(nli(1, "P", "H")) == context_key(nli(2, "p", "other"))


# ---------------------------------------------------------------------------------------------
# overlap on hand-made records (exact counts)


def hand_made():
    train = [
        cloze(1, "Story <b>one</b>.", ("a", "b"), expression="spill the beans"),
        cloze(2, "story one.", ("c", "d"), expression="Spill  the beans"),  # same context, other item
        cloze(3, "Story two.", ("a", "b"), expression="break the ice"),
        cloze(4, "Story three.", ("a", "b"), expression="kick the bucket"),
        cloze(5, "Story four.", ("a", "b"), expression=None),
    ]
    dev = [
        cloze(6, "STORY ONE.", ("b", "a"), expression="spill the beans"),  # identical item to train #1
        cloze(7, "Story five.", ("a", "b"), expression="break the ice"),
        cloze(8, "Story six.", ("a", "b"), expression="new idiom"),
    ]
    test = [cloze(9, "Story seven.", ("a", "b"), expression="other idiom")]
    return {"train": train, "dev": dev, "test": test}


def test_overlap_exact_counts():
    report = overlap_report(hand_made())
    assert [(p.a, p.b) for p in report.pairs] == [("train", "dev"), ("train", "test"), ("dev", "test")]
    p = report.pair("train", "dev")
    assert (p.items.distinct, p.items.a_records, p.items.b_records) == (1, 1, 1)
    assert (p.contexts.distinct, p.contexts.a_records, p.contexts.b_records) == (1, 2, 1)
    assert (p.contexts.a_distinct, p.contexts.b_distinct) == (4, 3)
    assert (p.expressions.distinct, p.expressions.a_distinct, p.expressions.b_distinct) == (2, 3, 3)
    assert p.expressions.a_distinct_share == pytest.approx(2 / 3)
    assert p.expressions.b_distinct_share == pytest.approx(2 / 3)
    assert p.a_record_share_with_shared_expression == pytest.approx(3 / 5)  # records 1, 2, 3 of 5
    assert p.b_record_share_with_shared_expression == pytest.approx(2 / 3)
    assert p.leaks
    q = report.pair("dev", "test")
    assert not q.leaks and q.expressions.a_distinct_share == 0.0
    train_summary = report.splits[0]
    assert (
        train_summary.records,
        train_summary.distinct_contexts,
        train_summary.distinct_expressions,
        train_summary.records_without_expression,
    ) == (5, 4, 3, 1)


def test_pair_lookup_swaps_sides():
    report = overlap_report(hand_made())
    p, q = report.pair("train", "dev"), report.pair("dev", "train")
    assert (q.a, q.b) == ("dev", "train")
    assert (q.contexts.a_records, q.contexts.b_records) == (p.contexts.b_records, p.contexts.a_records)
    assert q.a_record_share_with_shared_expression == p.b_record_share_with_shared_expression
    with pytest.raises(KeyError, match="no pair"):
        report.pair("train", "nope")


def test_overlap_for_nli_and_generation():
    a = [nli(1, "The ice broke.", "Things relaxed.", expression="break the ice"), nli(2, "P", "H1")]
    b = [nli(3, "the  ICE broke.", "things relaxed.", expression="break the ice"), nli(4, "P", "H2")]
    p = overlap_report({"a": a, "b": b}).pair("a", "b")
    assert p.items.distinct == 1 and p.contexts.distinct == 2 and p.expressions.distinct == 1
    assert p.expressions.a_distinct == 1  # records without an expression are left out of the expression counts
    g = [GenerationRecord(id="g1", source="S <b>x</b>", references=("r",))]
    h = [GenerationRecord(id="g2", source="s x", references=("other",))]
    assert overlap_report({"g": g, "h": h}).pair("g", "h").items.distinct == 1


def test_renderings():
    report = overlap_report(hand_made())
    d = report.to_dict()
    json.dumps(d)  # JSON-serialisable
    assert d["pairs"][0]["shared_expressions"]["distinct"] == 2
    assert d["pairs"][0]["shared_expressions"]["a_record_share"] == pytest.approx(0.6)
    assert d["splits"][1]["name"] == "dev"
    md = report.to_markdown()
    assert md.splitlines()[0].startswith("| a / b |")
    assert "| train / dev | 1 / 1 | 1 (25.0% / 33.3%) | 2 (66.7% / 66.7%) | 60.0% / 66.7% |" in md

    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(report)
    assert "train / dev" in console.export_text()


def test_empty_split_has_no_shares():
    report = overlap_report({"a": [], "b": [cloze(1)]})
    p = report.pair("a", "b")
    assert p.expressions.a_distinct_share is None and p.a_record_share_with_shared_expression is None
    assert "–" in report.to_markdown()


# ---------------------------------------------------------------------------------------------
# the real benchmarks


@pytest.fixture(scope="module")
def idiom_splits(data_dir):
    from figlang.data.registry import get_task

    task = get_task("idiom-cloze")
    return {split: task.load(split, data_dir) for split in ("train", "dev", "test")}


def test_idiom_dev_leaks_into_train(idiom_splits):
    report = overlap_report(idiom_splits)
    p = report.pair("dev", "train")
    assert p.expressions.a_distinct == 230 and p.expressions.distinct == 230  # every dev idiom is a train idiom
    assert p.a_record_share_with_shared_expression == 1.0
    # The README counts 288 of 299 by exact text; one more dev narrative differs from a train one only in case.
    assert p.contexts.a_distinct == 299 and p.contexts.distinct == 289
    assert p.items.distinct == 0  # the same stories, but never with the same pair of endings


def test_idiom_test_is_expression_disjoint_from_train(idiom_splits):
    report = overlap_report(idiom_splits)
    assert report.pair("test", "train").expressions.distinct == 0
    assert report.pair("test", "dev").expressions.distinct == 0


def test_narrative_test_labels_are_placeholders(idiom_splits):
    assert "placeholder" in detect_placeholder_labels(idiom_splits["test"])
    assert detect_placeholder_labels(idiom_splits["dev"]) is None
    assert detect_placeholder_labels(idiom_splits["train"]) is None


def test_placeholder_heuristic_catches_raw_narrative_test_labels(idiom_splits):
    """Even without the loader's flag, 'option1' everywhere gives the placeholders away."""
    from dataclasses import replace

    unflagged = [replace(r, label_is_placeholder=False) for r in idiom_splits["test"]]
    assert "same gold label, option 0" in detect_placeholder_labels(unflagged)


def test_disjoint_dev_split_of_the_builtin_task_shares_nothing(data_dir):
    from figlang.data.registry import get_task

    task = get_task("idiom-cloze")
    if "dev-disjoint" not in task.splits:
        pytest.skip("the idiom task offers no dev-disjoint split")
    report = overlap_report({"dev": task.load("dev-disjoint", data_dir), "rest": task.load("train-disjoint", data_dir)})
    p = report.pair("dev", "rest")
    assert p.expressions.distinct == 0 and p.contexts.distinct == 0


# ---------------------------------------------------------------------------------------------
# the same item with different gold labels


def test_label_conflicts_compare_the_gold_text_not_the_option_index():
    same_gold_swapped = [cloze(1, options=("a", "b"), label=0), cloze(2, options=("b", "a"), label=1)]
    assert label_conflicts({"train": same_gold_swapped}) == []
    other_gold = [cloze(1, options=("a", "b"), label=0), cloze(2, options=("B", "a"), label=0)]
    (c,) = label_conflicts({"train": other_gold[:1], "dev": other_gold[1:]})
    assert c.splits == ("dev", "train") and [r[1] for r in c.records] == ["c1", "c2"] and {r[2] for r in c.records} == {"a", "b"}


def test_label_conflicts_skip_placeholders_and_unlabelled_copies():
    records = [nli(1, "P", "H"), nli(2, "p", "h ", label=None), nli(3, "P", "H", label=NON_ENTAILMENT)]
    (c,) = label_conflicts({"all": records})
    assert [r[1] for r in c.records] == ["p1", "p3"] and "'P'" not in str(c) and "all:p3 → 'non-entailment'" in str(c)
    hidden = [cloze(1), cloze(2, options=("b", "a"), label=0, label_is_placeholder=True)]
    assert label_conflicts({"test": hidden}) == []


def test_real_benchmarks_hold_contradictory_duplicates(data_dir):
    """FLUTE train holds one pair with both labels; IMPLI holds sentences used as a figurative and as a literal
    context of the same idiom (source corpora disagree), and one manual pair labelled both ways."""
    from figlang.data.registry import get_task

    flute = get_task("flute")
    (c,) = label_conflicts({s: flute.load(s, data_dir) for s in ("train", "val")})
    assert {r[1] for r in c.records} == {"train-4539", "train-5830"}
    impli = label_conflicts({"all": get_task("impli").load("all", data_dir)})
    ids = {r[1] for c in impli for r in c.records}
    assert len(impli) == 11 and {"idioms/manual_e-303", "idioms/manual_ne-168", "idioms/lit_context_pie_ne-32"} <= ids
    assert all({r[2] for r in c.records} == {ENTAILMENT, NON_ENTAILMENT} for c in impli)
