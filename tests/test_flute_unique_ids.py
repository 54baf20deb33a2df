"""Every record of every built-in task has its own id, and the harness refuses a split where two share one.

FLUTE's test gold gives one id to both pairs of a premise family (``idiom-14`` named the entailing and the
contradicting pair), and the harness keys predictions by id: each pair was scored against its sibling's
prediction, silently (a ~88 classifier came out at 60.0, exactly 50.00 on three figure types).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from figlang.core.errors import DataError, DataNotFoundError
from figlang.data.registry import Task, all_tasks, get_task
from figlang.evaluation import evaluate, score_predictions_file
from figlang.methods.base import Method, Prediction


class Oracle(Method):
    """Answers every pair with its gold label: any score below 100 is the harness mixing items up."""

    name = "oracle"
    shapes = ("nli",)

    def predict(self, records):
        return [Prediction(r.id, r.label) for r in records]

    def config(self):
        return {"version": 1}


def test_flute_test_gold_ids_are_unique_and_keep_the_gold_id(flute_gold_data_dir: Path) -> None:
    test = get_task("flute").load("test", flute_gold_data_dir)
    assert len(test) == 19 and len({r.id for r in test}) == 19
    idiom = [r for r in test if r.figure_type == "idiom"]
    assert [(r.id, r.meta["gold_id"], r.label) for r in idiom] == [
        ("idiom-14-0", 14, "entailment"),
        ("idiom-14-1", 14, "contradiction"),
        ("idiom-21-0", 21, "entailment"),
        ("idiom-21-1", 21, "contradiction"),
    ]
    sarcasm = [r.id for r in test if r.figure_type == "sarcasm"]
    assert sarcasm == ["sarcasm-3-0", "sarcasm-3-1", "sarcasm-3-2", "sarcasm-8-0", "sarcasm-8-1"]
    assert [r.id for r in get_task("flute-simile").load("test", flute_gold_data_dir)] == [
        "simile-5-0",
        "simile-5-1",
        "simile-9-0",
        "simile-9-1",
        "simile-10-0",
        "simile-10-1",
    ]


def test_an_oracle_scores_100_on_test_gold_with_shared_ids(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    """The regression: with ids shared within a premise family every figure type came out at exactly 50."""
    result = evaluate(
        "flute", Oracle(), split="test", data_dir=flute_gold_data_dir, use_cache=False, progress=False, out_dir=tmp_path / "run"
    )
    m = result.metrics
    assert m["accuracy"]["n"] == 19 and m["accuracy"]["accuracy"] == 1.0
    assert {k: v["accuracy"] for k, v in m["by_figure_type"].items()} == {"idiom": 1.0, "metaphor": 1.0, "sarcasm": 1.0, "simile": 1.0}
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len({row["id"] for row in rows}) == 19 and all(row["correct"] for row in rows)


def test_a_figlang_prediction_file_is_matched_by_the_unique_ids(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    test = get_task("flute").load("test", flute_gold_data_dir)
    wrong_on = {"idiom-14-1", "simile-9-0"}  # one pair of a family right, its sibling wrong: needs per-pair ids
    flip = {"entailment": "contradiction", "contradiction": "entailment"}
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps({"id": r.id, "prediction": flip[r.label] if r.id in wrong_on else r.label}) + "\n" for r in test))
    result = score_predictions_file(path, "flute", "test", flute_gold_data_dir)
    assert result.metrics["accuracy"]["n_correct"] == 17
    assert result.metrics["by_figure_type"]["idiom"]["n_correct"] == 3


def test_every_builtin_task_has_unique_ids(data_dir: Path) -> None:
    """Every official split of every task that is not a filtered view of another (flute-idiom, impli-idioms … are
    subsets of flute and impli, and dev-disjoint, selection … subsets of train, all with the parent's ids)."""
    from figlang.data.flute import SELECTION_SPLITS

    checked = 0
    for task in all_tasks():
        if task.name.startswith(("flute-", "impli-")):
            continue
        for split in task.splits:
            if "disjoint" in split or split in SELECTION_SPLITS:
                continue
            try:
                records = task.load(split, data_dir)
            except DataNotFoundError:  # FLUTE's per-type test needs the gold, absent from the shared data
                continue
            repeated = [i for i, n in Counter(r.id for r in records).items() if n > 1]
            assert not repeated, (task.name, split, repeated[:3])
            checked += 1
    assert checked == 4 * 3 + 3 + 1  # narrative cloze/generation × train/dev/test, flute × 3, impli


def _duplicated_task() -> Task:
    from figlang.data.records import NLIPair

    def loader(split, data_dir, options):
        return [
            NLIPair(id="pair-1", premise="It rained all day.", hypothesis="It poured.", label="entailment"),
            NLIPair(id="pair-1", premise="It was sunny all day.", hypothesis="It poured.", label="contradiction"),
        ]

    return Task(
        name="dup",
        shape="nli",
        description="two records, one id",
        splits=("test",),
        loader=loader,
        files_for=lambda split, root: [],
        default_split="test",
        labels=("entailment", "contradiction"),
    )


def test_the_harness_refuses_duplicate_ids_in_a_task(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"1 record ids occur more than once \(e.g. 'pair-1'\).*each other's predictions") as err:
        evaluate(_duplicated_task(), Oracle(), data_dir=tmp_path, use_cache=False, progress=False)
    assert "dup/test" in str(err.value)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "pair-1", "prediction": "entailment"}) + "\n")
    with pytest.raises(DataError, match="occur more than once"):
        score_predictions_file(path, _duplicated_task(), data_dir=tmp_path)
