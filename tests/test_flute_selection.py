"""FLUTE's model-selection split: `selection` carved from train (never val), `train-fit` the rest.

Pick prompts, thresholds and checkpoints on `selection`; val-chosen methods came out 3 to 5 points
lower on held-out pairs than on val, so val must stay untouched by selection.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from figlang.core.errors import DataError
from figlang.data.flute import SELECTION_SPLITS, carve_selection, selection_links
from figlang.data.records import NLIPair
from figlang.data.registry import get_task
from figlang.data.splits import grouped_stratified_split, normalise_expression

# sha256 over the sorted ids of flute/selection, one per line: changes only when the carve does
SELECTION_CHECKSUM = "4d5a195345dbf4ecf1169452fcd75bcac5117b8786a7e1e36bafcae54754a9ee"
FIGURES = ("sarcasm", "simile", "metaphor", "idiom")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _ids_checksum(records) -> str:
    return hashlib.sha256("\n".join(sorted(r.id for r in records)).encode()).hexdigest()


@pytest.fixture(scope="module")
def parts(data_dir):
    task = get_task("flute")
    return task.load("train", data_dir), task.load("selection", data_dir), task.load("train-fit", data_dir)


def test_flute_tasks_list_the_selection_splits():
    for name in ("flute",) + tuple(f"flute-{f}" for f in FIGURES):
        splits = get_task(name).splits
        assert "selection" in splits and "train-fit" in splits, name


def test_selection_and_train_fit_partition_train(parts):
    train, selection, fit = parts
    sel_ids, fit_ids = {r.id for r in selection}, {r.id for r in fit}
    assert len(sel_ids) == len(selection) and len(fit_ids) == len(fit)
    assert not sel_ids & fit_ids
    assert sel_ids | fit_ids == {r.id for r in train}
    assert 0.09 <= len(selection) / len(train) <= 0.11


def test_no_premise_hypothesis_or_idiom_crosses(parts):
    _, selection, fit = parts
    for field in ("premise", "hypothesis"):
        crossing = {_norm(getattr(r, field)) for r in selection} & {_norm(getattr(r, field)) for r in fit}
        assert not crossing, (field, sorted(crossing)[:3])
    idioms = lambda rs: {normalise_expression(r.expression) for r in rs if r.figure_type == "idiom" and r.expression}  # noqa: E731
    assert idioms(selection) and not idioms(selection) & idioms(fit)
    phenomena = lambda rs: {(r.figure_type, r.meta["phenomenon_id"]) for r in rs}  # noqa: E731
    assert not phenomena(selection) & phenomena(fit)


def test_selection_is_stratified_by_figure_type_and_label(parts):
    train, selection, _ = parts
    whole, held = Counter((r.figure_type, r.label) for r in train), Counter((r.figure_type, r.label) for r in selection)
    assert set(held) == set(whole)
    for cell, n in whole.items():
        assert abs(held[cell] / n - 0.1) < 0.015, (cell, held[cell], n)


def test_selection_is_never_val(parts, data_dir):
    _, selection, _ = parts
    val = get_task("flute").load("val", data_dir)
    assert not {(_norm(r.premise), _norm(r.hypothesis)) for r in val} & {(_norm(r.premise), _norm(r.hypothesis)) for r in selection}
    assert all(r.meta["file"].endswith("FLUTEfinaltrain.json") for r in selection)


def test_the_carve_is_stable(parts):
    _, selection, _ = parts
    assert _ids_checksum(selection) == SELECTION_CHECKSUM  # pytest runs under a random hash seed: this covers it too


def test_figure_type_tasks_carve_the_same_selection(parts, data_dir):
    _, selection, fit = parts
    for figure in FIGURES:
        task = get_task(f"flute-{figure}")
        assert [r.id for r in task.load("selection", data_dir)] == [r.id for r in selection if r.figure_type == figure]
        assert [r.id for r in task.load("train-fit", data_dir)] == [r.id for r in fit if r.figure_type == figure]
    assert get_task("flute").files("selection", data_dir) == get_task("flute").files("train", data_dir)


def _pair(i: int, premise: str, hypothesis: str, label: str, figure: str = "simile", idiom: str | None = None) -> NLIPair:
    return NLIPair(id=f"p{i}", premise=premise, hypothesis=hypothesis, label=label, figure_type=figure, expression=idiom, meta={})


def test_grouped_split_keeps_linked_pairs_together():
    # 60 families of (entailing, contradicting) pairs; the idiom of family k is shared with family k+30,
    # so idiom families link across different premises and hypotheses
    records = []
    for k in range(60):
        idiom = f"idiom {k % 30}"
        records.append(_pair(2 * k, f"literal {k}", f"figurative {k}", "entailment", "idiom", idiom))
        records.append(_pair(2 * k + 1, f"opposite {k}", f"figurative {k}", "contradiction", "idiom", idiom))
    rest, held = carve = grouped_stratified_split(records, 0.1, 0, selection_links, lambda g: len(g))
    assert len(held) == 12 and len(rest) == 108  # 30 linked groups of 4 pairs: 3 of them held out
    held_idioms = {r.expression for r in held}
    assert not held_idioms & {r.expression for r in rest}
    assert grouped_stratified_split(list(records), 0.1, 0, selection_links, lambda g: len(g)) == carve
    assert grouped_stratified_split(records, 0.1, 1, selection_links, lambda g: len(g)) != carve
    with pytest.raises(DataError):
        grouped_stratified_split(records[:4], 0.1, 0, selection_links, lambda g: len(g))


def test_carve_selection_refuses_duplicate_ids():
    records = [_pair(0, "a", "b", "entailment"), _pair(0, "c", "d", "contradiction")]
    with pytest.raises(DataError, match="occurs twice"):
        carve_selection(records)


def test_selection_splits_are_named():
    assert SELECTION_SPLITS == ("selection", "train-fit")
