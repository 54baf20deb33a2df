"""Kill a training run, rerun it with the same out dir: it resumes and ends exactly where an
uninterrupted run ends (same weights, same dev metrics, same logged losses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetensors.torch import load_file

from figlang.methods.trained import read_figlang_json

REPO = Path(__file__).resolve().parents[1]


def _command(out: Path, data_dir: Path, model: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "figlang.cli.train_cmds",
        "train",
        "-t",
        "idiom-cloze",
        "-m",
        "mc-continuation",
        "--model",
        str(model),
        "-o",
        str(out),
        "-n",
        "24",
        "--dev-limit",
        "4",
        "--report-limit",
        "4",
        "--epochs",
        "2",
        "--batch-size",
        "2",
        "--grad-accum",
        "2",
        "--max-length",
        "32",
        "--lr",
        "1e-4",
        "--save-every",
        "1",
        "--eval-every",
        "4",
        "--patience",
        "0",
        "--threads",
        "1",
        "-q",
        "--data-dir",
        str(data_dir),
    ]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _losses(out: Path) -> list[tuple[int, float]]:
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return [(r["step"], r["loss"]) for r in rows if r["event"] == "train"]


def test_killed_run_resumes_to_the_same_result(tmp_path, data_dir, minilm_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    from figlang.training import train

    # the uninterrupted run, in this process (same options as the command line below)
    train(
        "idiom-cloze",
        "mc-continuation",
        str(minilm_path),
        straight,
        limit=24,
        dev_limit=4,
        report_limit=4,
        epochs=2,
        batch_size=2,
        grad_accum=2,
        max_length=32,
        lr=1e-4,
        save_every=1,
        eval_every=4,
        patience=0,
        threads=1,
        progress=False,
        data_dir=str(data_dir),
    )

    proc = subprocess.Popen(_command(killed, data_dir, minilm_path), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state_file = killed / "checkpoint" / "state.json"
    deadline = time.time() + 300
    killed_at = None
    while time.time() < deadline and proc.poll() is None:
        try:
            state = json.loads(state_file.read_text())
        except (OSError, json.JSONDecodeError):
            state = None
        if state and state["step"] >= 3:
            proc.send_signal(signal.SIGKILL)
            killed_at = state["step"]
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    proc.stderr.close()
    assert killed_at is not None, "the run finished (or never checkpointed) before it could be killed"
    assert proc.returncode == -signal.SIGKILL

    resumed = subprocess.run(_command(killed, data_dir, minilm_path), env=_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a, b = json.loads((straight / "train_result.json").read_text()), json.loads((killed / "train_result.json").read_text())
    assert b["resumed"] and not a["resumed"]
    assert (a["steps"], a["best_step"], a["best_dev_accuracy"]) == (b["steps"], b["best_step"], b["best_dev_accuracy"])
    for name in ("model.safetensors", "choice_head.safetensors"):
        wa, wb = load_file(str(straight / name)), load_file(str(killed / name))
        assert wa.keys() == wb.keys()
        for key in wa:
            assert (wa[key] == wb[key]).all(), f"{name}:{key} differs after resuming"
    assert _losses(straight) == _losses(killed)  # bit-identical logged losses
    ma, mb = read_figlang_json(straight)["dev_metrics"], read_figlang_json(killed)["dev_metrics"]
    assert ma == mb
    rows = [json.loads(x) for x in (killed / "train_log.jsonl").read_text().splitlines()]
    assert [r["event"] for r in rows].count("resume") == 1


def test_resuming_with_another_configuration_is_refused(tmp_path, data_dir, minilm_path):
    from figlang.core.errors import FiglangError
    from figlang.training import train

    opts = dict(limit=4, dev_limit=2, report_limit=2, epochs=1, batch_size=2, max_length=32, progress=False, data_dir=str(data_dir))
    first = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", lr=1e-4, **opts)
    again = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", lr=1e-4, **opts)
    assert again.resumed and again.steps == first.steps and again.stopped == "complete"
    with pytest.raises(FiglangError, match="another configuration.*lr"):
        train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", lr=3e-5, **opts)
    restarted = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", lr=3e-5, restart=True, **opts)
    assert not restarted.resumed


def test_time_budget_stops_cleanly_and_a_rerun_finishes(tmp_path, data_dir, minilm_path):
    from figlang.training import train

    opts = dict(
        limit=8,
        dev_limit=2,
        report_limit=2,
        epochs=1,
        batch_size=2,
        max_length=32,
        progress=False,
        data_dir=str(data_dir),
        threads=1,
        save_every=100,
    )
    part = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", max_minutes=1e-6, **opts)
    assert part.stopped == "time-budget" and part.steps == 1
    assert read_figlang_json(tmp_path / "run")["status"] == "partial"  # usable, marked as such
    done = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", **opts)
    assert done.resumed and done.stopped == "complete" and done.steps == 4
    straight = train("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "straight", **opts)
    assert straight.best_dev_accuracy == done.best_dev_accuracy
    wa, wb = load_file(str(tmp_path / "run" / "model.safetensors")), load_file(str(tmp_path / "straight" / "model.safetensors"))
    assert all((wa[k] == wb[k]).all() for k in wa)
