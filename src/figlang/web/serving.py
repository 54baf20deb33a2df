"""What every page of `figlang serve` shares: the configuration the app reads, the slow-load worker pool, and the small
helpers for answering a request (errors, form tokens, run folders, page numbers, the template filters)."""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import current_app, render_template, request
from markupsafe import Markup, escape

from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.evaluation.run_index import PredictionIndex
from figlang.web.paths import resolve_under

PAGE_SIZE = 25
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


@dataclass(frozen=True)
class ServeConfig:
    """What `figlang serve` serves and how; the app reads it (``app.config["FIGLANG"]``) on every request."""

    runs_dir: Path  # the folder of runs, creator runs and generator outputs (resolved); nothing is served from outside it
    ctx: (
        RunContext  # the run's context, built once where `figlang serve` starts: the task, interpret and compare pages read its data folder
    )
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))  # forms carry it: no other site posts verdicts
    wait: float = 0.6  # seconds a page waits for a slow load before it shows a "loading" page that reloads itself
    warm: bool = True  # index every run's predictions in the background once the first page is out
    testing: bool = False
    started: float = field(default_factory=time.time)

    @property
    def data_dir(self) -> Path:
        """The datasets folder the pages read (the context's)."""
        return self.ctx.data_dir

    @classmethod
    def of(cls, runs_dir: str | Path, data_dir: str | Path | None = None, *, ctx: RunContext | None = None, **options: Any) -> ServeConfig:
        """The configuration for serving ``runs_dir`` (which must be a folder) and the datasets of ``ctx`` (else of
        ``data_dir``, by figlang's one rule: as given, links not followed, as every other command reads it)."""
        runs_root = Path(runs_dir).resolve()
        if not runs_root.is_dir():
            raise FiglangError(f"--runs {runs_dir} is not a folder: point it at the folder that holds your `figlang eval --out` runs")
        return cls(runs_root, run_context(ctx, data_dir=data_dir), **options)


class FormExpired(Exception):
    """A form posted without this server's token (an old page, or another site posting to localhost)."""


class StillLoading(Exception):
    """Work behind a page (loading a 26k-record split, indexing a run, `figlang compare`) is still running."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class Jobs:
    """Slow loads run in worker threads, cached by key (which includes the files' modification stamps).

    A page waits for its load at most ``wait`` seconds; if it is not done the page says what is being loaded and
    reloads itself, so no request blocks for long and the work is done once. A load that failed is forgotten
    (the next request tries again) after its error was shown.
    """

    def __init__(self, workers: int = 2, size: int = 24, wait: float = 0.6) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="figlang-serve")
        self._futures: OrderedDict[Any, Future] = OrderedDict()
        self._lock = threading.Lock()
        self._size, self.wait = size, wait

    def submit(self, key: Any, make: Callable[[], Any]) -> Future:
        with self._lock:
            fut = self._futures.get(key)
            if fut is None:
                fut = self._futures[key] = self._pool.submit(make)
                while len(self._futures) > self._size:
                    self._futures.popitem(last=False)
            else:
                self._futures.move_to_end(key)
            return fut

    def get(self, key: Any, make: Callable[[], Any], what: str) -> Any:
        fut = self.submit(key, make)
        try:
            return fut.result(timeout=self.wait)
        except FutureTimeout:
            raise StillLoading(what) from None
        except BaseException:
            with self._lock:
                if self._futures.get(key) is fut:
                    del self._futures[key]
            raise


@dataclass
class ServeState:
    """What the pages share while the app runs: the slow-load pool and the lock around review and answer files."""

    jobs: Jobs
    file_lock: threading.Lock = field(default_factory=threading.Lock)  # one read-modify-write of a verdicts/answers file at a time


def config() -> ServeConfig:
    """The running app's configuration."""
    return current_app.config["FIGLANG"]


def state() -> ServeState:
    return current_app.extensions["figlang"]


def fail(status: int, title: str, message: str) -> tuple[str, int]:
    return render_template("error.html", title=title, message=message, status=status), status


def check_post() -> None:
    if not secrets.compare_digest(request.form.get("csrf", ""), config().csrf_token):
        raise FormExpired()


def run_folder(rel: str) -> Path:
    """A folder under the runs folder named by a URL; refused when it leads outside, an error when it is not there."""
    folder = resolve_under(config().runs_dir, rel)
    if not folder.exists():
        raise FiglangError(f"no run folder {rel!r} under the runs folder (see the list of runs)")
    return folder


def index_key(path: Path) -> tuple[str, str, int, int]:
    """The slow-load key of a predictions file's index: it changes when the file does."""
    st = path.stat()
    return ("index", str(path), st.st_mtime_ns, st.st_size)


def index_of(path: Path) -> PredictionIndex:
    key = index_key(path)
    size = key[3]
    return state().jobs.get(
        key,
        lambda: PredictionIndex.build(path),
        f"indexing {path.parent.name}/{path.name} ({size / 1e6:.1f} MB), once per file",
    )


def page_of(items: Sequence[Any], per_page: int = PAGE_SIZE) -> tuple[Sequence[Any], int, int]:
    """The request's page of ``items`` (its ``page`` argument, clamped): (the page's items, page number, number of pages)."""
    pages = max(1, math.ceil(len(items) / per_page))
    try:
        page = int(request.args.get("page", "1"))
    except ValueError:
        page = 1
    page = min(max(page, 1), pages)
    return items[(page - 1) * per_page : page * per_page], page, pages


def queue_page(
    items: Sequence[dict[str, Any]], todo: Callable[[dict[str, Any]], bool], per_page: int = PAGE_SIZE
) -> tuple[Sequence[dict[str, Any]], dict[str, Any]]:
    """The request's page of a work queue, shown whole (``show=all``) or only its ``todo`` items (the default):
    the page's items, and the page's template arguments (show, page, pages, and the message or error a redirect left)."""
    show = request.args.get("show", "todo")
    shown = [i for i in items if todo(i)] if show == "todo" else items
    chunk, page, pages = page_of(shown, per_page)
    view = {"show": show, "matched": len(shown), "page": page, "pages": pages}
    return chunk, {**view, "message": request.args.get("msg", ""), "error": request.args.get("err", "")}


def bold_markup(text: Any) -> Markup:
    """The narrative benchmark marks its idiom with <b>…</b>: keep that one tag, escape everything else."""
    safe = str(escape("" if text is None else text))
    return Markup(safe.replace("&lt;b&gt;", "<b>").replace("&lt;/b&gt;", "</b>"))


def pct(x: Any) -> str:
    return "–" if not isinstance(x, (int, float)) or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.2f}"


def num(x: Any, fmt: str = ".4g") -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and math.isnan(x):
        return "undefined"
    return format(x, fmt) if isinstance(x, (int, float)) else str(x)
