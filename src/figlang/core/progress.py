"""figlang's one progress display: a long job draws one line (what, a bar, done/total, items/s, elapsed, ETA).

The harness draws each run's line with :func:`columns` inside :func:`display`. Libraries draw bars of their own:
transformers' "Loading weights" and "Converting and de-quantizing GGUF tensors..." are tqdm bars written to
stderr, which tore through figlang's live line during `make run`. :func:`route_transformers_bars` hands every
transformers bar to :class:`LibraryBar` instead: inside a figlang display it becomes a transient line of that
display (gone when done); outside one, on a terminal, a transient line of its own in the same style; in a log
file, nothing. Nothing here imports a heavy library at module level.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

_LIVE: list[Any] = []  # rich Progress displays being drawn now, innermost last


def rate_column(unit: str = "items"):
    """A rich column showing a task's ``rate`` field when it sets one (the harness counts cached items apart), else
    rich's own measured speed, as ``12.34 items/s``."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task):  # noqa: ANN001, ANN202
            rate = task.fields.get("rate")
            if rate is None:
                rate = f"{compact_number(task.speed)} {unit}/s" if task.speed else ""
            return Text(str(rate))

    return RateColumn()


def compact_number(x: float) -> str:
    """A rate in at most 5 characters (0.56, 12.3, 644, 6.4k), so that a line with a fast library bar still fits."""
    if x >= 1000:
        return f"{x / 1000:.1f}k"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def clock(seconds: float) -> str:
    """``0:09:40``: hours, minutes and seconds of a duration (elapsed or left), rounded to the second."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def eta_column():
    """Time left: rich's own estimate (from the last 30 s), else the whole run's average so far, so that a job whose
    batches take longer than rich's window (a 1.5B model scoring 32 items at a time) still shows an ETA."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class EtaColumn(ProgressColumn):
        def render(self, task):  # noqa: ANN001, ANN202
            left = task.time_remaining
            if left is None and task.total and task.completed and task.elapsed:
                left = task.elapsed * (task.total - task.completed) / task.completed
            if left is None:
                return Text("-:--:--", style="progress.remaining")
            return Text(clock(int(left)), style="progress.remaining")  # whole seconds left, as rich counts them

    return EtaColumn()


def columns(unit: str = "items") -> tuple:
    """The columns of every figlang progress line: description, bar, done/total, rate, elapsed, ETA (fits 80 columns
    with a description of up to 25 characters)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    return (
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        rate_column(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        eta_column(),
    )


@contextmanager
def display(progress: Any) -> Iterator[Any]:
    """Make ``progress`` (a started rich Progress) the display that library bars join while the block runs."""
    _LIVE.append(progress)
    try:
        yield progress
    finally:
        _LIVE.remove(progress)


def rate_text(done: float, seconds: float, unit: str = "items") -> str:
    return f"{compact_number(done / max(seconds, 1e-9))} {unit}/s" if done else ""


class LibraryBar:
    """A stand-in for a library's tqdm bar, drawn as one transient line of figlang's display (the subset of tqdm's
    interface that transformers uses: iteration, ``update``, ``close``, a context manager, ``set_description``)."""

    def __init__(self, iterable: Iterable | None = None, desc: str | None = None, total: float | None = None, *args: Any, **kwargs: Any):
        self.iterable = iterable
        if total is None and iterable is not None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        self.total = total
        self.n: float = 0
        self.desc = (desc or kwargs.get("unit") or "working").rstrip(" .:")
        self.disable = bool(kwargs.get("disable"))
        self._start = time.perf_counter()
        self._own: Any = None  # a rich Progress this bar started, or None
        self._progress: Any = None  # the rich Progress it draws on
        self._task: Any = None  # its task id there
        if self.disable:
            return
        if _LIVE:
            self._progress = _LIVE[-1]
        elif sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self._own = self._progress = Progress(*columns(), console=Console(stderr=True), transient=True)
            self._own.start()
        else:  # a log: a bar that redraws would only fill it; the job's own lines say what happens
            return
        self._task = self._progress.add_task(self.desc, total=total, rate="")

    def __iter__(self) -> Iterator[Any]:
        try:
            for item in self.iterable or ():
                yield item
                self.update(1)
        finally:
            self.close()

    def __len__(self) -> int:
        return int(self.total or 0)

    def update(self, n: float = 1) -> None:
        self.n += n
        if self._task is not None:
            self._progress.update(self._task, advance=n, rate=rate_text(self.n, time.perf_counter() - self._start))

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = (desc or self.desc).rstrip(" .:")
        if self._task is not None:
            self._progress.update(self._task, description=self.desc)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        if self._task is not None:
            self._progress.remove_task(self._task)
            self._task = None
        if self._own is not None:
            self._own.stop()
            self._own = None

    def __enter__(self) -> LibraryBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _transformers_hook(factory: Any, args: tuple, kwargs: dict) -> Any:
    import tqdm.auto

    if factory is not tqdm.auto.tqdm and getattr(factory, "__module__", "").startswith("transformers"):
        return factory(*args, **kwargs)  # bars switched off (EmptyTqdm): leave them off
    return LibraryBar(*args, **kwargs)


@contextmanager
def library_bars(module_name: str, attribute: str = "tqdm") -> Iterator[None]:
    """Within the block, a module that imported tqdm itself (out of reach of transformers' hook: the GGUF loader's
    "Converting and de-quantizing GGUF tensors...") draws its bars as :class:`LibraryBar` lines too."""
    import importlib

    module = importlib.import_module(module_name)
    before = getattr(module, attribute)
    setattr(module, attribute, LibraryBar)
    try:
        yield
    finally:
        setattr(module, attribute, before)


def route_transformers_bars() -> None:
    """Draw transformers' tqdm bars through figlang's display (idempotent). A transformers without the hook (before
    5.x) gets its bars switched off instead: figlang's display, or not at all."""
    from transformers.utils import logging as hf_logging

    hook = getattr(hf_logging, "set_tqdm_hook", None)
    if hook is None:
        hf_logging.disable_progress_bar()
        return
    hook(_transformers_hook)
