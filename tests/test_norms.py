"""sum / token / char accuracies derived from a committed pmi run's recorded log-probabilities (norms.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from figlang.core.errors import FiglangError
from figlang.core.io import file_sha256, read_jsonl
from figlang.evaluation.norms import norm_accuracies
from figlang.evaluation.runs import load_run, predictions_file

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
RUNS = sorted(p.parent for p in RESULTS.rglob("norms.json"))


def test_there_are_norm_files():
    assert len(RUNS) >= 2


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_norms_json_recomputes_from_the_committed_predictions(run):
    saved = json.loads((run / "norms.json").read_text(encoding="utf-8"))
    preds = predictions_file(run)
    assert saved["source_sha256"] == file_sha256(preds)
    again = norm_accuracies(read_jsonl(preds))
    assert again == saved["norms"]
    # pmi is the run's own method: its accuracy is the run's
    assert again["pmi"]["accuracy"] == pytest.approx(load_run(run).results["metrics"]["accuracy"]["accuracy"])


def test_a_run_without_log_probabilities_is_refused():
    rows = read_jsonl(predictions_file(RESULTS / "baselines" / "idiom-dev-longer-option"))
    with pytest.raises(FiglangError, match="norm=pmi"):
        norm_accuracies(rows)
