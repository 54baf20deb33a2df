"""Per-item predictions committed gzip'd (predictions.jsonl.gz) read exactly like plain predictions.jsonl.

docs/results commits every quoted figure's predictions gzip'd; ``figlang compare``, ``figlang report``, the
registry test and every JSON-lines reader go through ``data.io.read_bytes``, so a packed run folder must load
the same rows, and packing must be byte-for-byte reproducible (a re-pack does not show as a change in git).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from figlang.core.errors import DataError
from figlang.core.io import iter_jsonl, read_jsonl, write_jsonl
from figlang.evaluation.runs import load_run, pack_predictions, predictions_file

REPO = Path(__file__).resolve().parents[1]
PACKED = REPO / "docs" / "results" / "suite-smollm2" / "idiom-dev"  # a committed run, predictions gzip'd


def test_a_packed_run_loads_the_same_rows_as_the_plain_one(tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(PACKED, plain)
    gz = plain / "predictions.jsonl.gz"
    (plain / "predictions.jsonl").write_bytes(gzip.decompress(gz.read_bytes()))
    gz.unlink()
    a, b = load_run(PACKED), load_run(plain)
    assert predictions_file(PACKED).name == "predictions.jsonl.gz" and predictions_file(plain).name == "predictions.jsonl"
    assert len(a.rows) == 355 and a.rows == b.rows
    # packing is reproducible: the same bytes as the committed file, and the plain file is gone
    assert pack_predictions(tmp_path) == [gz]
    assert gz.read_bytes() == (PACKED / "predictions.jsonl.gz").read_bytes() and not (plain / "predictions.jsonl").exists()
    assert pack_predictions(tmp_path) == []  # nothing left to pack


def test_jsonl_readers_and_writer_take_gz(tmp_path):
    rows = [{"id": "a", "correct": True}, {"id": "b", "text": "naïve\u2028ok"}]
    write_jsonl(tmp_path / "x.jsonl.gz", rows)
    assert (tmp_path / "x.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert read_jsonl(tmp_path / "x.jsonl.gz") == rows
    assert [obj for _, obj in iter_jsonl(tmp_path / "x.jsonl.gz")] == rows
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    with pytest.raises(DataError, match="not a readable gzip file"):
        read_jsonl(tmp_path / "bad.jsonl.gz")


def test_a_folder_without_predictions_says_both_names(tmp_path):
    shutil.copy(PACKED / "results.json", tmp_path / "results.json")
    from figlang.core.errors import FiglangError

    with pytest.raises(FiglangError, match=r"predictions\.jsonl\(\.gz\)"):
        load_run(tmp_path)
    assert load_run(tmp_path, need_predictions=False).rows == []


def test_figlang_compare_reads_packed_runs():
    """The README's suite row against the longer-option baseline, both committed gzip'd."""
    from figlang.evaluation.compare import compare_runs

    result = compare_runs(PACKED, REPO / "docs" / "results" / "baselines" / "idiom-dev-longer-option", n_resamples=1000)
    assert result["n_paired"] == 355 and (result["only_a_right"], result["only_b_right"]) == (91, 77)
    mcnemar = next(t for t in result["tests"] if t["test"].startswith("McNemar"))
    assert f"{mcnemar['p_value']:.4f}" == "0.3159"


def test_figlang_report_reads_packed_runs(tmp_path):
    """figlang report on committed (gzip'd) runs has their rows: none is listed as without predictions."""
    from figlang.evaluation.report import build_report

    runs = [PACKED, REPO / "docs" / "results" / "zs" / "impli-manual-nli-score-smollm2"]
    build_report(runs, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    without = next((line for line in md.splitlines() if line.startswith("Without predictions")), "")
    assert "idiom-dev" not in without  # its predictions.jsonl.gz was read
    assert ("impli-manual-nli-score-smollm2" in without) == (not (runs[1] / "predictions.jsonl.gz").exists())
