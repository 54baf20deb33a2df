"""benchmarks/explain_baselines.py, behind docs/research/flute_explanations.md's "What needs no model" table: rerun on the
committed val predictions, it gives the committed ROUGE-L figures, keeps the run's labels, and records how it was made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results" / "explain"


def _baselines():
    return load_script("benchmarks/explain_baselines.py")


def test_each_baseline_is_the_trivial_text_it_names():
    module = _baselines()
    row = {"premise": "He  was sad.", "hypothesis": "He was  over the moon.", "meta": {"examples": ["train-7", "train-9"]}}
    train = {"train-7": "To be over the moon means to be very happy.", "train-9": "other"}
    assert module.baseline_explanation("hypothesis", row, train) == "He was over the moon."
    assert module.baseline_explanation("premise-hypothesis", row, train) == "He was sad. He was over the moon."
    assert module.baseline_explanation("nearest-example", row, train) == "To be over the moon means to be very happy."
    assert module.baseline_explanation("nearest-example", {**row, "meta": {}}, train) is None  # no example shown: scores 0
    with pytest.raises(ValueError, match="unknown baseline"):
        module.baseline_explanation("oracle", row, train)


def test_rerun_on_the_committed_val_run_gives_the_committed_figures(data_dir: Path, tmp_path: Path):
    _baselines().main([str(RESULTS / "flute-val-compact"), "--data-dir", str(data_dir), "--bertscore-model", "", "--out", str(tmp_path)])
    fresh = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    committed = json.loads((RESULTS / "baselines-val" / "summary.json").read_text(encoding="utf-8"))
    for name in ("system", "hypothesis", "premise-hypothesis", "nearest-example"):
        assert fresh["rows"][name]["rougeL_f1"] == committed["rows"][name]["rougeL_f1"], name
        assert fresh["rows"][name]["by_figure_type"] == committed["rows"][name]["by_figure_type"], name
    # the floor is a floor: every trivial explanation scores below the system overall
    system = fresh["rows"]["system"]
    for name in ("hypothesis", "premise-hypothesis", "nearest-example"):
        assert fresh["rows"][name]["rougeL_f1"] < system["rougeL_f1"]
    assert committed["pool"]["split"] == "train" and committed["pool"]["items"] == 7035 and committed["pool"]["data"][0]["sha256"]
    assert committed["provenance"]["git_commit"]
    # the labels are the run's: a baseline changes the explanation only
    rows = [json.loads(line) for line in (tmp_path / "hypothesis" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 499 and all(r["explanation"] == " ".join(r["hypothesis"].split()) for r in rows)
    scored = json.loads((tmp_path / "hypothesis" / "explanations.json").read_text(encoding="utf-8"))
    assert scored["label"] and scored["overall"]["label_accuracy"] == 91.78
