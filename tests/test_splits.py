"""Expression-disjoint splits and folds: disjoint, complete, deterministic (also across hash seeds), balanced."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from figlang.core.errors import DataError
from figlang.data.records import ClozeRecord, NLIPair, expression_of
from figlang.data.splits import (
    expression_disjoint_split,
    expression_folds,
    figurative_links,
    linked_key,
    narrative_links,
    normalise_expression,
)

REPO = Path(__file__).resolve().parents[1]


def toy_records(n_expressions: int = 40, seed: int = 7) -> list[ClozeRecord]:
    """Records of n expressions with uneven group sizes (1-12), interleaved so that order matters."""
    rng = random.Random(seed)
    sizes = {f"idiom {i:02d}": rng.randint(1, 12) for i in range(n_expressions)}
    pool = [name for name, size in sizes.items() for _ in range(size)]
    rng.shuffle(pool)
    # vary case/spacing: expression_of normalises, so these must still group together
    return [
        ClozeRecord(
            id=f"r{i}",
            narrative=f"story {i}",
            options=("a", "b"),
            label=0,
            expression=name.upper() if i % 3 == 0 else name.replace(" ", "  "),
        )
        for i, name in enumerate(pool)
    ]


def ids(records) -> list[str]:
    return [r.id for r in records]


def expressions(records) -> set[str]:
    return {expression_of(r) for r in records}


def assert_partition(records, parts) -> None:
    """The parts hold every record exactly once, each in the original order."""
    seen = [r.id for part in parts for r in part]
    assert sorted(seen) == sorted(ids(records)) and len(seen) == len(set(seen))
    position = {r.id: i for i, r in enumerate(records)}
    for part in parts:
        assert [position[r.id] for r in part] == sorted(position[r.id] for r in part)


# ---------------------------------------------------------------------------------------------
# expression_disjoint_split


def test_split_is_disjoint_complete_and_ordered():
    records = toy_records()
    rest, dev = expression_disjoint_split(records, dev_fraction=0.2, seed=3)
    assert_partition(records, [rest, dev])
    assert not expressions(rest) & expressions(dev)
    assert dev and rest


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.25, 0.5])
def test_split_reaches_the_fraction_without_overshooting_more_than_one_group(fraction):
    records = toy_records()
    largest = max(Counter(expression_of(r) for r in records).values())
    for seed in range(5):
        _, dev = expression_disjoint_split(records, dev_fraction=fraction, seed=seed)
        assert fraction * len(records) <= len(dev) < fraction * len(records) + largest


def test_split_is_deterministic_and_seed_dependent():
    records = toy_records()
    first = expression_disjoint_split(records, seed=1)
    assert [ids(p) for p in first] == [ids(p) for p in expression_disjoint_split(records, seed=1)]
    assert [ids(p) for p in expression_disjoint_split(list(records), seed=1)] == [ids(p) for p in first]
    devs = {tuple(ids(expression_disjoint_split(records, seed=s)[1])) for s in range(6)}
    assert len(devs) > 1


def test_split_does_not_depend_on_input_order_of_expressions():
    """Same records in another order: the same expressions go to dev (expressions are sorted first)."""
    records = toy_records()
    shuffled = records[::-1]
    _, dev_a = expression_disjoint_split(records, seed=4)
    _, dev_b = expression_disjoint_split(shuffled, seed=4)
    assert expressions(dev_a) == expressions(dev_b)


def test_records_without_expression_are_an_error_unless_a_key_is_given():
    records = toy_records(10) + [ClozeRecord(id="bare", narrative="n", options=("a", "b"), label=0)]
    with pytest.raises(DataError, match=r"1 of .* records have no expression to group by \(first: 'bare'\)"):
        expression_disjoint_split(records)
    rest, dev = expression_disjoint_split(records, key=lambda r: r.narrative, dev_fraction=0.3)
    assert_partition(records, [rest, dev])
    assert len(dev) >= 0.3 * len(records)


def test_split_argument_errors():
    with pytest.raises(ValueError, match="dev_fraction"):
        expression_disjoint_split(toy_records(), dev_fraction=1.0)
    one = [ClozeRecord(id=str(i), narrative="n", options=("a", "b"), label=0, expression="x") for i in range(5)]
    with pytest.raises(DataError, match="at least 2 distinct expressions"):
        expression_disjoint_split(one)
    lopsided = one + [ClozeRecord(id="y", narrative="n", options=("a", "b"), label=0, expression="y")]
    with pytest.raises(DataError, match="took every expression"):
        expression_disjoint_split(lopsided, dev_fraction=0.9, seed=0)


_SCRIPT = """
import json, random, sys
sys.path.insert(0, {tests!r})
from test_splits import toy_records
from figlang.data.splits import expression_disjoint_split, expression_folds
recs = toy_records()
rest, dev = expression_disjoint_split(recs, seed=5)
folds = expression_folds(recs, k=4, seed=2)
print(json.dumps([[r.id for r in dev], [[r.id for r in te] for _, te in folds]]))
"""


def test_split_and_folds_are_identical_under_different_hash_seeds():
    script = _SCRIPT.format(tests=str(REPO / "tests"))
    outputs = []
    for hash_seed in ("1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1] == outputs[2]
    records = toy_records()
    _, dev = expression_disjoint_split(records, seed=5)
    assert outputs[0][0] == ids(dev)
    assert outputs[0][1] == [ids(te) for _, te in expression_folds(records, k=4, seed=2)]


# ---------------------------------------------------------------------------------------------
# expression_folds


def test_folds_cover_every_expression_exactly_once():
    records = toy_records()
    folds = expression_folds(records, k=5)
    assert len(folds) == 5
    assert_partition(records, [test for _, test in folds])
    for train, test in folds:
        assert_partition(records, [train, test])
        assert not expressions(train) & expressions(test)
    owner = Counter(e for _, test in folds for e in expressions(test))
    assert set(owner.values()) == {1} and set(owner) == expressions(records)


def test_folds_are_balanced_by_record_count():
    records = toy_records(60)
    largest = max(Counter(expression_of(r) for r in records).values())
    sizes = [len(test) for _, test in expression_folds(records, k=10)]
    assert max(sizes) - min(sizes) <= largest  # greedy largest-first bound
    assert max(sizes) - min(sizes) <= 2  # in practice: many small groups even out the folds


def test_folds_greedy_assignment_on_a_worked_example():
    sizes = {"a": 5, "b": 4, "c": 3, "d": 3, "e": 1}
    records = [
        NLIPair(id=f"{e}{i}", premise="p", hypothesis="h", label="entailment", expression=e) for e, n in sizes.items() for i in range(n)
    ]
    folds = expression_folds(records, k=2, seed=0)
    tests = sorted((sorted(expressions(test)) for _, test in folds), key=len)
    # largest first, each to the lighter fold: a(5)->f0=5; b(4)->f1=4; c(3)->f1=7; d(3)->f0=8; e(1)->f1=8
    assert tests == [["a", "d"], ["b", "c", "e"]]
    assert sorted(len(test) for _, test in folds) == [8, 8]


def test_folds_seed_only_relabels_the_folds():
    records = toy_records()
    by_seed = [expression_folds(records, k=4, seed=s) for s in range(4)]
    partitions = [sorted(tuple(ids(te)) for _, te in folds) for folds in by_seed]
    assert all(p == partitions[0] for p in partitions)
    assert len({tuple(ids(folds[0][1])) for folds in by_seed}) > 1
    assert [ids(te) for _, te in expression_folds(records, k=4, seed=1)] == [ids(te) for _, te in by_seed[1]]


def test_folds_need_enough_expressions():
    with pytest.raises(DataError, match="3 folds need at least 3 distinct expressions, found 2"):
        expression_folds(toy_records(2), k=3)
    with pytest.raises(ValueError, match="k must be at least 2"):
        expression_folds(toy_records(), k=1)


# ---------------------------------------------------------------------------------------------
# real data


def test_idiom_train_expression_disjoint_split(data_dir):
    from figlang.data.registry import get_task

    train = get_task("idiom-cloze").load("train", data_dir)
    assert len(train) == 2715
    rest, dev = expression_disjoint_split(train, dev_fraction=0.1, seed=0)
    assert_partition(train, [rest, dev])
    assert not expressions(rest) & expressions(dev)
    assert 0.1 <= len(dev) / len(train) < 0.13
    again = expression_disjoint_split(train, dev_fraction=0.1, seed=0)
    assert ids(again[1]) == ids(dev)


def test_idiom_train_folds(data_dir):
    from figlang.data.registry import get_task

    train = get_task("idiom-cloze").load("train", data_dir)
    folds = expression_folds(train, k=10)
    assert_partition(train, [test for _, test in folds])
    sizes = [len(test) for _, test in folds]
    assert max(sizes) - min(sizes) <= max(Counter(expression_of(r) for r in train).values())
    for train_part, test in folds:
        assert not expressions(train_part) & expressions(test)


def test_impli_folds_by_expression(data_dir):
    """IMPLI has no official split; the paper evaluates on 10 folds by idiom."""
    from figlang.data.registry import get_task

    pairs = get_task("impli-idioms").load("all", data_dir)
    with_expression = [p for p in pairs if p.expression]
    if not with_expression:
        pytest.skip("the IMPLI loader sets no expressions")
    folds = expression_folds(with_expression, k=10, seed=0)
    assert_partition(with_expression, [test for _, test in folds])
    owner = Counter(e for _, test in folds for e in expressions(test))
    assert set(owner.values()) == {1}
    sizes = [len(test) for _, test in folds]
    assert max(sizes) - min(sizes) <= max(Counter(expression_of(p) for p in with_expression).values())


# ---------------------------------------------------------------------------------------------
# linked groups: one expression known by several spellings or spans


def test_normalise_expression_drops_punctuation_and_case():
    assert normalise_expression("Out - of - the - blue’") == "out of the blue"
    assert normalise_expression("out ~ of ~ the ~ blue") == normalise_expression("out of the blue.")
    assert normalise_expression("-") == "" and normalise_expression(None) == ""


def test_linked_key_joins_records_that_share_any_link_transitively():
    def pair(i, premise, expression):
        return NLIPair(id=f"p{i}", premise=premise, hypothesis=f"h{i}", label="entailment", expression=expression)

    records = [
        pair(0, "He held the line.", "hold the line"),
        pair(1, "He held the line.", "the line"),  # same premise, another derived span
        pair(2, "They held the line at dawn.", "The line"),  # same span as p1, other premise
        pair(3, "She came out of the blue.", "out of the blue"),
        pair(4, "Nothing shared here.", None),
    ]
    key = linked_key(records, figurative_links)
    groups = Counter(key(r) for r in records)
    assert key(records[0]) == key(records[1]) == key(records[2])
    assert len({key(records[0]), key(records[3]), key(records[4])}) == 3 and len(groups) == 3
    assert key(records[4]) == linked_key(records[::-1], figurative_links)(records[4])  # names do not depend on order
    with pytest.raises(DataError, match="twice"):
        linked_key(records + [records[0]], figurative_links)
    with pytest.raises(DataError, match="not among"):
        key(pair(9, "x", "y"))


def test_split_links_keep_variants_out_of_train_and_leave_dev_unchanged():
    records = [
        ClozeRecord(id=f"r{i}", narrative=f"story {i}", options=("a", "b"), label=0, expression=e, expression_type="idiom", meaning=m)
        for i, (e, m) in enumerate(
            [("to the hilt", "completely")] * 3 + [("up to the hilt", "completely")] * 3 + [(f"idiom {k}", f"gloss {k}") for k in range(30)]
        )
    ]
    plain_rest, plain_dev = expression_disjoint_split(records, dev_fraction=0.2, seed=1)
    rest, dev = expression_disjoint_split(records, dev_fraction=0.2, seed=1, links=narrative_links)
    assert ids(dev) == ids(plain_dev)
    hilt = {expression_of(r) for r in dev} & {"to the hilt", "up to the hilt"}
    if hilt:  # one spelling went to dev: the other must not stay in train
        assert not {expression_of(r) for r in rest} & {"to the hilt", "up to the hilt"}
    assert set(ids(rest)) <= set(ids(plain_rest))


def test_impli_folds_share_no_premise_and_no_normalised_idiom(data_dir):
    """Grouping by the derived span alone put one premise (and "out of the blue") into several folds."""
    from figlang.data.registry import get_task

    pairs = get_task("impli").load("all", data_dir)
    key = linked_key(pairs, figurative_links)
    folds = expression_folds(pairs, k=10, seed=0, key=key)
    assert_partition(pairs, [test for _, test in folds])
    fold_of_premise: dict[str, set[int]] = {}
    fold_of_idiom: dict[str, set[int]] = {}
    for f, (_, test) in enumerate(folds):
        for p in test:
            fold_of_premise.setdefault(" ".join(p.premise.lower().split()), set()).add(f)
            if normalise_expression(p.expression):
                fold_of_idiom.setdefault(normalise_expression(p.expression), set()).add(f)
    assert all(len(v) == 1 for v in fold_of_premise.values())
    assert all(len(v) == 1 for v in fold_of_idiom.values())
    assert len(fold_of_idiom["out of the blue"]) == 1
    sizes = [len(test) for _, test in folds]
    assert max(sizes) - min(sizes) < 0.05 * len(pairs) / 10


def test_narrative_disjoint_splits_have_no_variant_leak_and_shapes_agree(data_dir):
    from figlang.data.registry import get_task

    for kind in ("idiom", "simile"):
        cloze, gen = get_task(f"{kind}-cloze"), get_task(f"{kind}-generation")
        dev, rest = cloze.load("dev-disjoint", data_dir), cloze.load("train-disjoint", data_dir)
        dev_links = {v for r in dev for v in narrative_links(r)}
        assert not any(v in dev_links for r in rest for v in narrative_links(r))
        # the generation items of an expression are on the same side as its cloze records
        gen_dev, gen_rest = gen.load("dev-disjoint", data_dir), gen.load("train-disjoint", data_dir)
        assert {i for g in gen_dev for i in g.meta["cloze_ids"]} <= set(ids(dev))
        assert {i for g in gen_rest for i in g.meta["cloze_ids"]} <= set(ids(rest))
        assert {expression_of(g) for g in gen_dev} == {expression_of(r) for r in dev if r.reference}
    assert len(get_task("idiom-cloze").load("dev-disjoint", data_dir)) == 278  # the published split did not move


def test_selection_split_is_carved_from_train_disjoint_by_whole_linked_expressions(data_dir):
    """`selection` (where every choice is made) and `train-fit` partition train-disjoint; neither shares an
    expression, a punctuation variant or an idiom gloss with the other or with dev-disjoint; the size is
    about dev-disjoint's; the carving is the same on every load; generation follows cloze."""
    from figlang.data.registry import get_task

    for kind in ("idiom", "simile"):
        cloze, gen = get_task(f"{kind}-cloze"), get_task(f"{kind}-generation")
        assert {"selection", "train-fit"} <= set(cloze.splits) and {"selection", "train-fit"} <= set(gen.splits)
        parts = {s: cloze.load(s, data_dir) for s in ("dev-disjoint", "train-disjoint", "selection", "train-fit")}
        assert_partition(parts["train-disjoint"], [parts["selection"], parts["train-fit"]])
        links = {s: {v for r in rs for v in narrative_links(r)} for s, rs in parts.items()}
        assert not links["selection"] & links["train-fit"]
        assert not links["selection"] & links["dev-disjoint"] and not links["train-fit"] & links["dev-disjoint"]
        assert 0.9 * len(parts["dev-disjoint"]) <= len(parts["selection"]) <= 1.25 * len(parts["dev-disjoint"])
        assert len({expression_of(r) for r in parts["selection"]}) >= 20  # many expressions, not one big one
        assert ids(cloze.load("selection", data_dir)) == ids(parts["selection"])  # deterministic
        gen_sel, gen_fit = gen.load("selection", data_dir), gen.load("train-fit", data_dir)
        assert {i for g in gen_sel for i in g.meta["cloze_ids"]} <= set(ids(parts["selection"]))
        assert {i for g in gen_fit for i in g.meta["cloze_ids"]} <= set(ids(parts["train-fit"]))
    assert len(get_task("idiom-cloze").load("selection", data_dir)) == 281  # the published selection split did not move


def test_carve_selection_keeps_linked_variants_together_and_refuses_impossible_sizes():
    from figlang.core.errors import DataError
    from figlang.data.records import ClozeRecord
    from figlang.data.splits import carve_selection

    def rec(i: int, idiom: str, meaning: str) -> ClozeRecord:
        return ClozeRecord(
            id=f"r{i}", narrative=f"story {i}", options=("a", "b"), label=0, expression=idiom, expression_type="idiom", meaning=meaning
        )

    records = [rec(0, "to the hilt", "completely"), rec(1, "up to the hilt", "completely")]
    records += [rec(2 + i, f"idiom {i}", f"gloss {i}") for i in range(20)]
    for seed in range(5):
        fit, sel = carve_selection(records, size=4, seed=seed)
        assert len(fit) + len(sel) == len(records)
        hilt = {r.id for r in sel} & {"r0", "r1"}
        assert hilt in (set(), {"r0", "r1"})  # the two spellings share a gloss: one group, never split
    with pytest.raises(DataError, match="cannot be carved"):
        carve_selection(records, size=len(records), seed=0)
