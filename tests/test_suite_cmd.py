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

from figlang.cli.suite_cmds import DEFAULT_SUITE, stratified_sample, suite_entries
from figlang.data.errors import FiglangError
from figlang.data.registry import get_task

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

    # a rerun answers from the request cache and gives the same numbers
    again = suite(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    for a, b in zip(summary["rows"], rerun["rows"]):
        assert a["accuracy"] == b["accuracy"] and b["cache"]["computed"] == 0 and b["cache"]["cached"] == N
