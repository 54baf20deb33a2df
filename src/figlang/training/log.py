"""What a run tells: train_log.jsonl, the loss curve and the progress line."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from figlang.core.io import parse_jsonl
from figlang.training.files import _finite_json


LOG_FILE = "train_log.jsonl"
PLOT_FILE = "loss_curve.png"


class TrainLog:
    """train_log.jsonl: appended line by line; on resume, lines past the checkpoint are dropped. Strict JSON: a
    non-finite number (a NaN loss) is written as null, with ``<key>_nonfinite`` saying what it was."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def truncate_after(self, step: int) -> None:
        if not self.path.exists():
            return
        text = self.path.read_text(encoding="utf-8")
        lines = text.split("\n")
        keep = [
            lines[number - 1]
            for number, row, _ in parse_jsonl(text)  # a line cut by a kill is no row
            if row is not None and (row.get("step", 0) <= step or row.get("event") in ("start",))
        ]
        self.path.write_text("".join(k + "\n" for k in keep), encoding="utf-8")

    def write(self, **row: Any) -> None:
        row = _finite_json({"time": datetime.now(UTC).isoformat(timespec="seconds"), **row})
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, default=str, allow_nan=False) + "\n")

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [row for _, row, _ in parse_jsonl(self.path.read_text(encoding="utf-8")) if row is not None]


def plot_loss_curve(log_path: Path, out_path: Path, title: str = "") -> Path | None:
    """Training loss per logged step and dev accuracy per evaluation, as a PNG."""
    rows = TrainLog(log_path).rows()
    train = [r for r in rows if r.get("event") == "train"]
    evals = [r for r in rows if r.get("event") == "eval"]  # dev accuracy (classifiers) or dev loss (generating models)
    if not train and not evals:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if train:
        ax.plot(
            [r["step"] for r in train],
            [math.nan if r.get("loss") is None else r["loss"] for r in train],
            color="tab:blue",
            lw=1.2,
            label="train loss",
        )
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy loss", color="tab:blue")
    loss_evals = [r for r in evals if "loss" in r and "accuracy" not in r]
    evals = [r for r in evals if "accuracy" in r]
    if loss_evals:
        ax.plot(
            [r["step"] for r in loss_evals],
            [math.nan if r["loss"] is None else r["loss"] for r in loss_evals],
            "o-",
            color="tab:red",
            lw=1.2,
            label="dev loss",
        )
        ax.legend(fontsize=8)
    if evals:
        ax2 = ax.twinx()
        ax2.plot(
            [r["step"] for r in evals],
            [math.nan if r["accuracy"] is None else 100 * r["accuracy"] for r in evals],
            "o-",
            color="tab:red",
            lw=1.2,
            label="dev accuracy",
        )
        ax2.set_ylabel("dev accuracy (%)", color="tab:red")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, out_path)
    return out_path


class _TrainProgress:
    """rich progress (loss, lr, ETA) on a terminal; plain lines every log step otherwise."""

    def __init__(self, enabled: bool, total: int, done: int, title: str) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.total, self.title = total, title
        self.t0 = self.start = time.perf_counter()
        self.start_done = done
        self.encode_until: int | None = None  # a probe's first epoch (encoding the base) ends at this step
        self.bar = None
        if enabled and self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self.bar.start()
            self.job = self.bar.add_task(title, total=total, completed=done, info="")

    def eta(self, done: int) -> float | None:
        """Seconds left: to the end of a probe's encoding epoch while it lasts (later epochs cost only the head,
        so the encoding pace says nothing about them), else to the end of training."""
        rate = (done - self.start_done) / max(time.perf_counter() - self.start, 1e-9)
        end = self.encode_until if self.encode_until is not None and self.encoding(done) else self.total
        return (end - done) / rate if rate > 0 else None

    def encoding(self, done: int) -> bool:
        return self.encode_until is not None and done < self.encode_until

    def update(self, done: int, info: str, log_line: bool) -> None:
        if not self.enabled:
            return
        if self.encode_until is not None and done >= self.encode_until:  # encoding over: measure the head-only pace afresh
            self.encode_until, self.start, self.start_done = None, time.perf_counter(), done
        if done > self.start_done:  # the pace beside the loss: one line says how fast and how long
            info = f"{(done - self.start_done) / max(time.perf_counter() - self.start, 1e-9):.2f} steps/s {info}"
        if self.bar is not None:
            extra = f" encoding, epoch 1 ends in ~{self._eta_text(done)}" if self.encoding(done) else ""
            self.bar.update(self.job, completed=done, info=info + extra)
        elif log_line:
            label = "ETA of epoch 1 (encoding)" if self.encoding(done) else "ETA"
            print(
                f"[{self.title}] step {done}/{self.total} {info} elapsed {(time.perf_counter() - self.t0) / 60:.1f} min {label} "
                f"{self._eta_text(done)}",
                file=sys.stderr,
                flush=True,
            )

    def _eta_text(self, done: int) -> str:
        eta = self.eta(done)
        return f"{eta / 60:.1f} min" if eta is not None else "?"

    def message(self, text: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.console.print(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
