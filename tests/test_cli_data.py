"""`figlang data …` end to end, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def figlang(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_stats_json_reports_the_benchmarks(data_dir: Path) -> None:
    run = figlang("data", "stats", "--json", "--data-dir", str(data_dir))
    assert run.returncode == 0, run.stderr
    tasks = {t["task"]: t for t in json.loads(run.stdout)["tasks"]}
    assert list(tasks) == ["idiom-cloze", "simile-cloze", "flute", "impli"]

    def split(task: str, name: str) -> dict:
        return next(s for s in tasks[task]["splits"] if s["split"] == name)

    assert [split("idiom-cloze", s)["records"] for s in ("train", "dev", "test")] == [2715, 355, 1542]
    assert [split("simile-cloze", s)["records"] for s in ("train", "dev", "test")] == [2627, 376, 1520]
    assert split("idiom-cloze", "test")["placeholder"] and split("simile-cloze", "test")["placeholder"]
    assert split("idiom-cloze", "dev")["placeholder"] is None
    assert split("idiom-cloze", "dev")["expressions"] == 230
    for name, n in (("train", 7035), ("val", 499)):
        s = split("flute", name)
        assert s["records"] == n
        groups = s["groups"]["figure_type"]
        assert sum(groups.values()) == n and not any(k.startswith(("n/a", "None")) for k in groups)
    impli = split("impli", "all")
    assert impli["records"] == 26124
    assert impli["groups"]["pair_type"]["fig_context / entailment"] == 16652
    assert impli["groups"]["pair_type"]["adversarial_definition / non-entailment"] == 6116
    assert impli["labels"] == {"entailment": 18212, "non-entailment": 7912}
    overlap = tasks["idiom-cloze"]["overlap"]
    train_dev = next(p for p in overlap["pairs"] if (p["a"], p["b"]) == ("train", "dev"))
    assert train_dev["shared_expressions"]["distinct"] == 230
    assert [len(tasks[t]["conflicts"]) for t in tasks] == [0, 0, 1, 11]
    assert {r["id"] for r in tasks["flute"]["conflicts"][0]["records"]} == {"train-4539", "train-5830"}


def test_stats_tables_and_env_var(data_dir: Path) -> None:
    run = figlang("data", "stats", "--task", "idiom-cloze", env={"FIGLANG_DATA_DIR": str(data_dir)})
    assert run.returncode == 0, run.stderr
    assert "2,715" in run.stdout and "placeholder labels" in run.stdout and "overlap between splits" in run.stdout


def test_overlap_names_items_with_different_gold_labels(data_dir: Path) -> None:
    run = figlang("data", "overlap", "flute", "--data-dir", str(data_dir))
    assert run.returncode == 0, run.stderr
    out = " ".join(run.stdout.split())
    assert "flute: 1 item(s) occur with different gold labels" in out and "train:train-5830 → 'entailment'" in out


def test_missing_data_dir_says_how_to_fix(tmp_path: Path) -> None:
    run = figlang("data", "stats", "--task", "flute", "--data-dir", str(tmp_path))
    assert run.returncode == 1
    assert "figlang data download" in run.stdout.replace("\n", "")


def test_tasks_show_split_and_template(data_dir: Path, tmp_path: Path) -> None:
    run = figlang("data", "tasks")
    assert run.returncode == 0 and "impli-idioms-manual" in run.stdout
    assert "selection" in run.stdout and "train-fit" in run.stdout  # the model-selection splits are listed
    run = figlang("data", "show", "flute-idiom", "-s", "val", "-n", "1", "--data-dir", str(data_dir))
    record = json.loads(run.stdout)
    assert record["figure_type"] == "idiom" and record["expression"]
    run = figlang("data", "split", "idiom-cloze", "-o", str(tmp_path / "split"), "--data-dir", str(data_dir))
    assert run.returncode == 0, run.stderr
    train = [json.loads(x) for x in (tmp_path / "split" / "train.jsonl").read_text().splitlines()]
    dev = [json.loads(x) for x in (tmp_path / "split" / "dev.jsonl").read_text().splitlines()]
    assert len(train) + len(dev) == 2715 and not {r["expression"] for r in train} & {r["expression"] for r in dev}
    run = figlang("data", "spec-template", "nli")
    assert run.returncode == 0 and "shape: nli" in run.stdout


def test_help_teaches() -> None:
    run = figlang("--help")
    assert run.returncode == 0 and "data" in run.stdout and "eval" in run.stdout
    run = figlang("eval", "--help")
    assert "--predictions" in run.stdout and "--allow-partial" in run.stdout
