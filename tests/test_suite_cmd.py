"""`figlang suite` end to end: the real smollm2-135m on small label-stratified samples of every entry."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import os
import subprocess
import sys

import pytest

from figlang.data.errors import FiglangError
from figlang.data.registry import get_task
from figlang.evaluation.suite import DEFAULT_SUITE, SuiteResult, SuiteRow, entry_command, stratified_sample, suite_entries, suite_markdown

pytestmark = pytest.mark.slow

N = 4
# `figlang suite` is registered in cli/main.py; this runs the command function the same way, in its own process
SUITE = "import typer; from figlang.cli.suite_cmds import suite_cmd; app = typer.Typer(); app.command()(suite_cmd); app()"


def suite(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SUITE, *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})  # fmt: skip


def test_entries_and_selection() -> None:
    names = [e.name for e in DEFAULT_SUITE]
    assert names == ["idiom-dev", "simile-dev", "flute-val", "impli-idioms-manual"]
    assert [e.name for e in suite_entries(["flute", "idiom-dev"])] == ["idiom-dev", "flute-val"]
    assert [e.name for e in suite_entries(["simile-dev,impli-idioms-manual"])] == ["simile-dev", "impli-idioms-manual"]
    with pytest.raises(FiglangError, match="unknown suite entry"):
        suite_entries(["nope"])


def test_stratified_sample_keeps_every_label(data_dir: Path) -> None:
    records = get_task("impli-idioms-manual").load("all", data_dir)
    first = Counter(str(r.label) for r in records[:20])
    assert len(first) == 1  # why the suite samples instead of taking the first N: the files are label by label
    sample = stratified_sample(records, 20, seed=0)
    assert len(sample) == 20 and len({r.id for r in sample}) == 20
    counts = Counter(str(r.label) for r in sample)
    share = Counter(str(r.label) for r in records)
    for label, k in counts.items():
        assert abs(k - 20 * share[label] / len(records)) <= 1
    assert sample == stratified_sample(records, 20, seed=0)  # seeded
    order = {r.id: i for i, r in enumerate(records)}
    assert [order[r.id] for r in sample] == sorted(order[r.id] for r in sample)  # original order
    assert stratified_sample(records[:5], 20, seed=0) == records[:5]


def test_suite_runs_and_writes_the_table(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    args = ["--model", "smollm2-135m", "--data-dir", str(data_dir), "--out", str(out), "--limit", str(N),
            "--cache-dir", str(tmp_path / "cache"), "--threads", "1", "--quiet"]  # fmt: skip
    result = suite(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    for entry in DEFAULT_SUITE:
        assert entry.task in result.stdout
    assert "[95% CI]" in result.stdout and "wall time" in result.stdout

    summary = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    assert summary["model"] == "smollm2-135m" and summary["threads"] == 1
    rows = {r["entry"]: r for r in summary["rows"]}
    assert list(rows) == [e.name for e in DEFAULT_SUITE]
    for entry in DEFAULT_SUITE:
        row = rows[entry.name]
        assert row["n"] == N and row["sampled"] and row["n_split"] > N
        assert row["method"] == entry.method and row["n_invalid"] == 0
        acc = row["accuracy"]
        assert acc["n"] == N and 0 <= acc["ci_low"] <= acc["accuracy"] <= acc["ci_high"] <= 1
        assert sum(g["n"] for g in row["by_gold_label"].values()) == N
        assert 0.5 <= row["majority"] <= 1
        folder = out / entry.name
        lines = (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == N
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        assert results["task"]["name"] == entry.task and results["task"]["items"] == N
        assert results["method"]["name"] == entry.method and results["method"]["model"] == "smollm2-135m"
        assert results["suite_sample"] == {"n": N, "of": row["n_split"], "how": "stratified by gold label", "seed": 0}
        assert (folder / "results.md").is_file()
    # both IMPLI labels are in the sample (the first N pairs would all be entailments)
    assert set(rows["impli-idioms-manual"]["by_gold_label"]) == {"entailment", "non-entailment"}
    assert rows["flute-val"]["by_type"]["kind"] == "figure_type"

    md = (out / "suite.md").read_text(encoding="utf-8")
    table = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert table[0].startswith("| task | split | method | n | accuracy % [95% CI]")
    assert len(table) == 1 + len(DEFAULT_SUITE)
    assert re.search(r"\| idiom-cloze \| dev \| lm-score norm=pmi \| 4 of 355\* \| \d+\.\d \[", md)
    assert "stratified by gold label" in md and "Wall time" in md
    commands = md.split("The same runs one at a time:")[1]
    for entry in DEFAULT_SUITE:  # every entry, the sampled IMPLI one too
        assert f"--only {entry.name} " in commands

    # a rerun answers from the request cache and gives the same numbers
    again = suite(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    for a, b in zip(summary["rows"], rerun["rows"]):
        assert a["accuracy"] == b["accuracy"] and b["cache"]["computed"] == 0 and b["cache"]["cached"] == N


def _row(entry, n: int, n_split: int, acc: float) -> SuiteRow:
    groups = {"entailment": {"accuracy": 1.0, "n": n // 2}, "non-entailment": {"accuracy": 0.0, "n": n - n // 2}}
    metrics = {"accuracy": {"accuracy": acc, "ci_low": acc - 0.031, "ci_high": acc + 0.029, "n": n}, "by_gold_label": groups,
               "by_pair_type": {"manual": {"accuracy": 0.675, "n": 300}, "manual_antonym": {"accuracy": 0.0, "n": 200}}}  # fmt: skip
    return SuiteRow(entry, entry.split or "dev", n, n_split, n < n_split, metrics, 0.544, 1.0, None, {})


def _result() -> SuiteResult:
    sizes = {"idiom-dev": (355, 355), "simile-dev": (376, 376), "flute-val": (499, 499), "impli-idioms-manual": (500, 1157)}
    rows = [_row(e, *sizes[e.name], 0.571) for e in DEFAULT_SUITE]
    return SuiteResult("smollm2-135m", rows, 551.0, (1.9, 1.8, 1.7), None, None, "float32", 1079.0)


def test_terminal_table_fits_80_columns() -> None:
    """The table a newcomer sees in an 80-column terminal: every line fits, no cell is folded over two lines."""
    from rich.console import Console

    from figlang.cli.suite_cmds import print_suite

    console = Console(width=80, record=True, color_system=None, force_terminal=False)
    print_suite(_result(), to=console)
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 80, "\n" + text
    for entry in DEFAULT_SUITE:  # one line per entry, with its task, method, size and accuracy whole
        [line] = [ln for ln in lines if ln.lstrip().startswith(entry.task + " ")]
        assert entry.method in line and "57.1 [54.0, 60.0]" in line, line
    assert "500*" in text and "a seeded sample of 500 of 1157" in text


def test_markdown_names_every_entry_with_its_command() -> None:
    md = suite_markdown(_result())
    block = md.split("The same runs one at a time:")[1]
    commands = [ln for ln in block.splitlines() if ln.startswith("figlang ")]
    assert len(commands) == len(DEFAULT_SUITE)
    assert commands[0] == "figlang eval -t idiom-cloze -s dev -m lm-score --model smollm2-135m -O norm=pmi -O dtype=float32"
    assert commands[-1] == "figlang suite --only impli-idioms-manual --model smollm2-135m --dtype float32"
    assert entry_command(_result().rows[-1], "m", None) == "figlang suite --only impli-idioms-manual --model m"
