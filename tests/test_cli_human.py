"""`figlang human`: export real generations for judges, import answers, and Table 5."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

GEN = "fig_narrative/output/idiom/generative"


def figlang(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )


def test_export_import_round_trip(data_dir: Path, tmp_path: Path) -> None:
    for system in ("gpt2-xl_dev_predictions_k5", "t5-large_dev_predictions_k5"):
        run = figlang(
            "eval",
            "-t",
            "idiom-generation",
            "-p",
            str(data_dir / GEN / f"{system}.jsonl"),
            "--data-dir",
            str(data_dir),
            "-o",
            str(tmp_path / system),
            "-q",
        )
        assert run.returncode == 0, run.stderr
    run = figlang(
        "human",
        "export",
        str(tmp_path / "gpt2-xl_dev_predictions_k5"),
        str(tmp_path / "t5-large_dev_predictions_k5"),
        "-o",
        str(tmp_path / "he"),
        "--limit",
        "4",
    )
    assert run.returncode == 0, run.stderr
    with open(tmp_path / "he" / "human_eval_items.csv", newline="") as f:
        items = list(csv.DictReader(f))
    assert len(items) == 4 and items[0]["meaning"].startswith("To progress")
    assert "gpt2" not in json.dumps(items)  # judges never see system ids
    key = {json.loads(x)["item_id"]: json.loads(x)["systems"] for x in (tmp_path / "he" / "human_eval_key.jsonl").read_text().splitlines()}
    # three judges: every candidate plausible except the one the key says is t5's
    rows = []
    for item in items:
        order = key[item["item_id"]]
        for judge in ("j1", "j2", "j3"):
            rows.append(
                {
                    "item_id": item["item_id"],
                    "judge": judge,
                    **{f"candidate_{i + 1}": ("no" if s.startswith("t5") else "yes") for i, s in enumerate(order)},
                }
            )
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = figlang("human", "import", str(answers), "--key", str(tmp_path / "he" / "human_eval_key.jsonl"))
    assert run.returncode == 0, run.stderr
    lines = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in run.stdout.splitlines() if line.count("│") == 3}
    assert lines["human"] == "100.0" and lines["gpt2-xl_dev_predictions_k5"] == "100.0" and lines["t5-large_dev_predictions_k5"] == "0.0"


def test_table5_command(data_dir: Path) -> None:
    run = figlang("human", "table5", "--data-dir", str(data_dir))
    assert run.returncode == 0, run.stderr
    assert "| +context | 68.0 | 68 | 68.0 | 68 |" in run.stdout
    assert "amtsimile.json:963" in run.stderr  # the repair is reported, never hidden
