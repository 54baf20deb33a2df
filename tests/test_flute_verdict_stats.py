"""`figlang build flute verdict-stats`: a committed reviewed queue (docs/research/flute_run50_verdicts.csv) counted on its own,
without the run folder, and written as a result file (no model is run)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from figlang.builders.flute_inputs import load_idioms, select
from figlang.builders.flute_review import verdict_file_results
from figlang.cli.build_flute import app
from figlang.core.io import file_sha256, read_jsonl

REPO = Path(__file__).resolve().parents[1]
VERDICTS = REPO / "docs" / "research" / "flute_run50_verdicts.csv"


def test_the_committed_verdicts_give_the_documented_counts() -> None:
    result, records = verdict_file_results(VERDICTS)
    assert not result["problems"] and len(records) == 37
    assert result["rates"]["idiom"] == {"candidates": 37, "reviewed": 37, "accept": 1, "edit": 8, "reject": 28, "unreviewed": 0}
    assert [round(result["shares_of_reviewed"]["idiom"][k]) for k in ("accept", "edit", "reject")] == [3, 22, 76]
    edited = result["edited_fields"]["idiom"]
    assert (edited["premise"], edited["hypothesis"]["all"], edited["label"]["all"], edited["explanation"]["all"]) == (
        {"all": 6, "E": 2, "C": 4},
        1,
        0,
        8,
    )
    c = result["candidates"]["idiom"]
    assert (c["entailment"], c["contradiction"], c["inputs_with_a_candidate"], c["inputs_with_both"], c["inputs_with_one"]) == (
        23,
        14,
        23,
        14,
        9,
    )
    assert "inputs" not in c and "inputs" not in result  # only when the run's inputs are drawn again


def test_cli_with_the_inputs_drawn_again_writes_a_result_file(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "review"
    res = CliRunner().invoke(
        app,
        [
            "verdict-stats",
            str(VERDICTS),
            "--idioms",
            "benchmark",
            "--limit",
            "50",
            "--sample-seed",
            "0",
            "--data-dir",
            str(data_dir),
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 (3%)" in res.output and "28 (76%)" in res.output
    data = json.loads((out / "review.json").read_text(encoding="utf-8"))
    assert data["command"].startswith("figlang build flute verdict-stats ") and "--limit 50 --sample-seed 0" in data["command"]
    assert data["verdicts_file"]["sha256"] == file_sha256(VERDICTS) and data["verdicts_file"]["rows"] == 37
    c = data["candidates"]["idiom"]
    assert (c["inputs"], c["pairs_possible"], c["inputs_without_a_candidate"]) == (50, 100, 27)
    assert data["inputs"]["items"] == 50 and all(not f["path"].startswith("/") and f["sha256"] for f in data["inputs"]["data"])
    assert data["code"]["figlang"]
    records = read_jsonl(out / "predictions.jsonl.gz")
    assert len(records) == 37 and sum(r["verdict"] == "edit" for r in records) == 8
    # the inputs drawn again are the run's: the ids name the idioms docs/research/flute_creator.md names
    by_id = {r["id"]: r["expression"] for r in records}
    assert (by_id["idiom-0021-E"], by_id["idiom-0008-C"], by_id["idiom-0040-E"]) == ("under fire", "make short work of", "up with the lark")
    inputs = select(load_idioms("benchmark", data_dir), 50, 0)
    assert {r["input"] for r in records} <= {it.uid for it in inputs.items}


def test_bad_rows_are_reported_and_not_counted(data_dir: Path, tmp_path: Path) -> None:
    lines = VERDICTS.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "verdicts.csv"
    bad.write_text(
        "\n".join(
            lines
            + [lines[1], "idiom-0099-E,0,accept,,,,,", "idiom-0001,0,accept,,,,,", "idiom-0002-E,0,maybe,,,,,", "idiom-0004-C,0,edit,,,,,"]
        )
        + "\n",
        encoding="utf-8",
    )
    inputs = select(load_idioms("benchmark", data_dir), 50, 0)
    result, records = verdict_file_results(bad, inputs)
    assert len(records) == 37 and result["rates"]["idiom"]["candidates"] == 37
    why = [p.split(": ", 2)[2] for p in result["problems"]]
    assert why == [
        "duplicate id (first at line 2)",
        "not one of the 50 inputs",
        "not a creator pair id (<figure>-NNNN-E or -C)",
        "verdict 'maybe' is not accept, edit or reject",
        "an edit without an edited field",
    ]
    res = CliRunner().invoke(app, ["verdict-stats", str(bad)])
    assert res.exit_code == 1 and "rows not counted" in res.output
