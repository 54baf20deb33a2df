"""benchmarks/flute_zero_shot_selection.py: the label × figure-type sample, the choice rule (ties to the simpler
configuration), the per-choice spread, and the uncalibrated labels it reads off a content-free run, checked
against a real calibrate=none run of smollm2-135m on FLUTE selection pairs."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from script_loader import load_script

grid = load_script("benchmarks/flute_zero_shot_selection.py")


def _row(question: str, calibrate: str, shots: int, right: int, n: int = 10) -> dict:
    return {
        "config": {"question": question, "calibrate": calibrate, "shots": shots},
        "n_correct": right,
        "n": n,
        "accuracy": round(100 * right / n, 2),
    }


def test_choice_takes_the_most_right_and_breaks_ties_to_the_simpler() -> None:
    rows = [
        _row("meaning", "content-free", 4, 8),
        _row("meaning", "none", 0, 8),
        _row("task", "content-free", 0, 8),
        _row("task", "none", 4, 7),
    ]
    # three tie at 8: zero shots beat four; then no calibration beats content-free
    assert grid.choose(rows)["config"] == {"question": "meaning", "calibrate": "none", "shots": 0}
    rows.append(_row("meaning", "content-free", 4, 9))
    assert grid.choose(rows)["config"] == {"question": "meaning", "calibrate": "content-free", "shots": 4}
    assert grid.choose([_row("meaning", "none", 0, 5), _row("task", "none", 0, 5)])["config"]["question"] == "task"
    with pytest.raises(ValueError):
        grid.choose([])


def test_spread_is_the_range_when_one_choice_varies() -> None:
    rows = [
        _row(q, c, s, r)
        for (q, c, s), r in zip(
            [(q, c, s) for q in ("task", "meaning") for c in ("none", "content-free") for s in (0, 4)], [5, 6, 7, 9, 6, 6, 8, 8]
        )
    ]
    out = grid.spread(rows)
    # question varies with (calibrate, shots) fixed: |50-60|, |60-60|, |70-80|, |90-80|
    assert sorted(x["range"] for x in out["question"]["ranges"]) == [0.0, 10.0, 10.0, 10.0]
    assert out["calibrate"]["max_range"] == 30.0 and out["shots"]["min_range"] == 0.0
    assert out["grid"] == {"min": 50.0, "max": 90.0, "range": 40.0}


def test_sample_is_proportional_by_label_and_type_and_seeded(data_dir: Path) -> None:
    selection = get_task("flute").load("selection", data_dir)
    a = grid.stratified_by(selection, 100, 0, grid.label_type)
    assert len(a) == 100 and a == grid.stratified_by(selection, 100, 0, grid.label_type)
    assert [r.id for r in a] != [r.id for r in grid.stratified_by(selection, 100, 1, grid.label_type)]
    whole, part = Counter(map(grid.label_type, selection)), Counter(map(grid.label_type, a))
    assert set(part) == set(whole)
    for k in whole:  # largest remainders: within one of the exact quota
        assert abs(part[k] - 100 * whole[k] / len(selection)) < 1
    assert grid.stratified_by(selection, 0, 0, grid.label_type) == selection


@pytest.mark.slow
def test_uncalibrated_labels_equal_a_calibrate_none_run(data_dir: Path, tmp_path: Path) -> None:
    flute = get_task("flute")
    picked = grid.stratified_by(flute.load("selection", data_dir), 8, 0, grid.label_type)
    task = dataclasses.replace(flute, loader=lambda s, d, o: list(picked))
    runs = {}
    for calibrate in ("content-free", "none"):
        runs[calibrate] = evaluate(
            task,
            "nli-score",
            model="smollm2-135m",
            split="selection",
            data_dir=data_dir,
            cache_dir=tmp_path,
            progress=False,
            method_options={"explain": False, "question": "meaning", "calibrate": calibrate, "dtype": "float32", "threads": 1},
        )
    cf, none = runs["content-free"].predictions, runs["none"].predictions
    derived = {i: grid.uncalibrated(p) for i, p in cf.items()}
    assert derived == {i: p.prediction for i, p in none.items()}
    assert any(derived[i] != cf[i].prediction for i in cf)  # calibration moved some decision, so the check has teeth
    with pytest.raises(ValueError):
        grid.uncalibrated(next(iter(none.values())))
