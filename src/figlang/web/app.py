"""`figlang serve`: the local web app over figlang's data, runs, interpretation and review queues.

Every page calls figlang's own functions (the task registry, the run readers, `figlang compare`, the FLUTE
creator's and IMPLI generator's review modules, `figlang.interpret`); this module only routes requests to them and
renders the answers. It serves files only from the configured runs folder (plots) and writes only the review files
the CLI writes (``RUN/review/verdicts.jsonl``, through the review module's ``record_verdict``).
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask, redirect, render_template, request, send_file, url_for
from markupsafe import Markup, escape

from ..builders import flute_review
from ..builders.flute_creator import CANDIDATES_FILE, ITEMS_FILE
from ..builders.impli import review as impli_review
from ..builders.impli.review import is_output_folder
from ..data.context import RunContext
from ..data.errors import FiglangError
from ..data.io import iter_json_objects, write_jsonl
from ..data.records import expression_of
from ..data.registry import all_tasks
from ..evaluation.compare import compare_runs
from ..evaluation.run_index import PREDICTIONS_FILE, Filters, PredictionIndex, describe_run, find_runs, read_results
from ..interpret import interpret
from ..metrics.flute_human_eval import RATING_NAMES, SHORTCOMINGS, import_flute_judgements, load_flute_key
from .paths import OutsideRootError, resolve_under

PAGE_SIZE = 25
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
#: Where `figlang serve` records itself as the origin of a verdict (the CLI records the queue file:line).
VERDICT_ORIGIN = "figlang serve"
#: `figlang human flute-export`'s file stem, and the judgement file the form writes beside them (one row per item and
#: judge, the format `figlang human flute-import` reads).
HUMAN_STEM = "flute_human_eval"
HUMAN_ANSWERS = "answers.jsonl"


@dataclass
class ServeConfig:
    runs_dir: Path
    data_dir: Path | None
    started: float = field(default_factory=time.time)


class _FormExpired(Exception):
    """A form posted without this server's token (an old page, or another site posting to localhost)."""


class _StillLoading(Exception):
    """Work behind a page (loading a 26k-record split, indexing a run, `figlang compare`) is still running."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _Jobs:
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
            raise _StillLoading(what) from None
        except BaseException:
            with self._lock:
                if self._futures.get(key) is fut:
                    del self._futures[key]
            raise


def _bold_markup(text: Any) -> Markup:
    """The narrative benchmark marks its idiom with <b>…</b>: keep that one tag, escape everything else."""
    safe = str(escape("" if text is None else text))
    return Markup(safe.replace("&lt;b&gt;", "<b>").replace("&lt;/b&gt;", "</b>"))


def _pct(x: Any) -> str:
    return "–" if not isinstance(x, (int, float)) or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.2f}"


def _num(x: Any, fmt: str = ".4g") -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and math.isnan(x):
        return "undefined"
    return format(x, fmt) if isinstance(x, (int, float)) else str(x)


def _page_of(total: int) -> tuple[int, int]:
    """(page number, number of pages) from the request's ``page`` argument, clamped."""
    pages = max(1, math.ceil(total / PAGE_SIZE))
    try:
        page = int(request.args.get("page", "1"))
    except ValueError:
        page = 1
    return min(max(page, 1), pages), pages


def create_app(
    runs_dir: str | Path, data_dir: str | Path | None = None, *, testing: bool = False, warm: bool = True, wait: float = 0.6
) -> Flask:
    """The web app serving ``runs_dir`` (run folders, FLUTE creator runs) and the datasets in ``data_dir``.

    ``warm`` indexes every run's predictions in a background thread once the first page is served; ``wait`` is how long a page waits
    for a slow load before it shows a "loading" page that reloads itself."""
    runs_root = Path(runs_dir).resolve()
    if not runs_root.is_dir():
        raise FiglangError(f"--runs {runs_dir} is not a folder: point it at the folder that holds your `figlang eval --out` runs")
    # the data folder by figlang's one rule (as given, links not followed), as every other command reads it
    config = ServeConfig(runs_root, RunContext.create(data_dir).data_dir if data_dir else None)
    app = Flask(__name__)
    app.config.update(TESTING=testing, MAX_CONTENT_LENGTH=1 << 20, FIGLANG=config)
    csrf_token = secrets.token_urlsafe(24)  # forms carry it: another site cannot post verdicts into a local review
    jobs = _Jobs(wait=wait)
    review_lock = threading.Lock()

    app.jinja_env.filters.update(bold=_bold_markup, pct=_pct, num=_num)
    app.jinja_env.globals.update(csrf_token=csrf_token, runs_root=runs_root, data_dir=config.data_dir)

    def fail(status: int, title: str, message: str) -> tuple[str, int]:
        return render_template("error.html", title=title, message=message, status=status), status

    @app.errorhandler(404)
    def not_found(_e: Any) -> tuple[str, int]:
        return fail(404, "Not found", f"There is no page at {request.path}.")

    @app.errorhandler(500)
    def server_error(_e: Any) -> tuple[str, int]:  # the traceback goes to the server's terminal, not the page
        return fail(
            500,
            "Something went wrong",
            "figlang could not show this page; the terminal running `figlang serve` "
            "has the details. Please report it with the address of this page.",
        )

    @app.errorhandler(OutsideRootError)
    def outside(e: OutsideRootError) -> tuple[str, int]:
        return fail(403, "Refused", str(e))

    @app.errorhandler(FiglangError)
    def figlang_error(e: FiglangError) -> tuple[str, int]:
        return fail(422, "Cannot show this", str(e))

    @app.errorhandler(_StillLoading)
    def still_loading(e: _StillLoading) -> tuple[str, int]:
        return render_template("loading.html", what=e.what), 202

    def index_of(path: Path) -> PredictionIndex:
        st = path.stat()
        return jobs.get(
            ("index", str(path), st.st_mtime_ns, st.st_size),
            lambda: PredictionIndex.build(path),
            f"indexing {path.parent.name}/{path.name} ({st.st_size / 1e6:.1f} MB), once per file",
        )

    def run_folder(rel: str) -> Path:
        folder = resolve_under(runs_root, rel)
        if not folder.exists():
            raise FiglangError(f"no run folder {rel!r} under the runs folder (see the list of runs)")
        return folder

    @app.errorhandler(_FormExpired)
    def form_expired(_e: _FormExpired) -> tuple[str, int]:
        return fail(400, "Form expired", "This form came from an older page or another site: reload the page and try again.")

    def check_post() -> None:
        if not secrets.compare_digest(request.form.get("csrf", ""), csrf_token):
            raise _FormExpired()

    # --- home and tasks -------------------------------------------------------------------------------------------

    @app.get("/")
    def index() -> str:
        return render_template("index.html", runs=find_runs(runs_root), tasks=all_tasks(), reviews=_review_runs(runs_root))

    @app.get("/tasks")
    def tasks() -> str:
        return render_template("tasks.html", tasks=all_tasks())

    @app.get("/tasks/<name>/<split>")
    def task_page(name: str, split: str) -> Any:
        task = next((t for t in all_tasks() if t.name == name), None)  # registered names only: never a spec path
        if task is None:
            return fail(404, "Unknown task", f"There is no task {name!r}; the tasks page lists them.")
        split = task.check_split(split)
        records = jobs.get(
            ("task", name, split),
            lambda: task.load(split, data_dir=config.data_dir),
            f"loading {name} / {split} from the data folder, once per split",
        )
        query = request.args.get("q", "").strip()
        shown = [r for r in records if query.lower() in (expression_of(r) or "")] if query else records
        page, pages = _page_of(len(shown))
        items = [r.to_dict() for r in shown[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]]
        return render_template(
            "task.html",
            task=task,
            split=split,
            items=items,
            total=len(records),
            matched=len(shown),
            q=query,
            page=page,
            pages=pages,
            first=(page - 1) * PAGE_SIZE,
        )

    # --- runs -------------------------------------------------------------------------------------------------------

    @app.get("/runs")
    def runs() -> str:
        return render_template("runs.html", runs=find_runs(runs_root))

    @app.get("/run/<path:rel>")
    def run_page(rel: str) -> Any:
        folder = run_folder(rel)
        info = describe_run(runs_root, folder)
        if info.problem:
            return fail(422, "This run folder cannot be read", info.problem)
        results = read_results(folder)
        groups = {k[3:]: v for k, v in results["metrics"].items() if k.startswith("by_") and isinstance(v, dict)}
        candidates = [*folder.glob("*"), *folder.glob("*/*")]  # the folder and one level down (RUN/plots): not a model's tree
        plots = sorted(
            p.relative_to(runs_root).as_posix()
            for p in candidates
            if p.suffix.lower() in IMAGE_TYPES and p.is_file() and p.resolve().is_relative_to(runs_root)
        )
        preds = folder / PREDICTIONS_FILE
        listing: dict[str, Any] = {"present": preds.is_file()}
        index = index_of(preds) if preds.is_file() else None
        has_correct = index is not None and any("correct" in k for k in index.keys)
        filters = Filters(
            wrong=request.args.get("show", "wrong" if has_correct else "all") == "wrong",
            label=request.args.get("label", ""),
            figure_type=request.args.get("type", ""),
            pair_type=request.args.get("pair", ""),
            expression=request.args.get("expr", "").strip(),
        )
        if index is not None:
            chosen = index.select(filters)
            page, pages = _page_of(len(chosen))
            listing.update(
                total=len(index),
                matched=len(chosen),
                page=page,
                pages=pages,
                problems=index.problems[:5],
                n_problems=len(index.problems),
                rows=index.rows(chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]),
                labels=index.values("gold"),
                types=index.values("figure_type"),
                pairs=index.values("pair_type"),
                has_correct=has_correct,
            )
        return render_template(
            "run.html",
            rel=info.rel,
            info=info,
            results=results,
            groups=groups,
            plots=plots,
            f=filters,
            show="wrong" if filters.wrong else "all",
            listing=listing,
        )

    @app.get("/file/<path:rel>")
    def run_file(rel: str) -> Any:
        path = resolve_under(runs_root, rel)
        kind = IMAGE_TYPES.get(path.suffix.lower())
        if kind is None or not path.is_file():
            return fail(404, "Not found", f"No image {rel!r} under the runs folder (only plots are served).")
        return send_file(path, mimetype=kind, max_age=0)

    @app.get("/compare")
    def compare() -> Any:
        all_runs = [r for r in find_runs(runs_root) if r.has_predictions and not r.problem]
        a, b = request.args.get("a", ""), request.args.get("b", "")
        if not (a and b):
            return render_template("compare.html", runs=all_runs, a=a, b=b, c=None)
        fa, fb = run_folder(a), run_folder(b)
        pa, pb = fa / PREDICTIONS_FILE, fb / PREDICTIONS_FILE
        for rel, p in ((a, pa), (b, pb)):
            if not p.is_file():
                raise FiglangError(f"{rel} has no {PREDICTIONS_FILE}: compare needs per-item predictions")
        stamp = tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in (pa, pb))
        ia, ib = index_of(pa), index_of(pb)
        c = jobs.get(
            ("compare", str(fa), str(fb), stamp),
            lambda: compare_runs(fa, fb),
            f"running figlang compare's paired tests and bootstrap over {min(len(ia), len(ib)):,} items, once per pair of runs",
        )
        generation = c.get("kind") == "generation"
        field_ = "prediction" if generation else "correct"
        differ = [
            (i, ib.by_id[k["id"]])
            for i, k in enumerate(ia.keys)
            if k["id"] in ib.by_id and (k.get(field_) != ib.keys[ib.by_id[k["id"]]].get(field_) or generation)
        ]
        page, pages = _page_of(len(differ))
        chunk = differ[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        pairs = list(zip(ia.rows([x for x, _ in chunk]), ib.rows([y for _, y in chunk])))
        return render_template(
            "compare.html", runs=all_runs, a=a, b=b, c=c, pairs=pairs, n_differ=len(differ), page=page, pages=pages, generation=generation
        )

    # --- interpret --------------------------------------------------------------------------------------------------

    @app.route("/interpret", methods=["GET", "POST"])
    def interpret_page() -> Any:
        text, result, error = "", None, None
        paraphrase = True
        if request.method == "POST":
            check_post()
            text = request.form.get("text", "")
            paraphrase = request.form.get("paraphrase") == "on"
            try:
                result = interpret(text, data_dir=config.data_dir, paraphrase=paraphrase).to_dict()
            except FiglangError as exc:
                error = str(exc)
        return render_template("interpret.html", available=True, text=text, result=result, error=error, paraphrase=paraphrase)

    # --- review -----------------------------------------------------------------------------------------------------

    @app.get("/review")
    def review_list() -> str:
        rows = []
        for rel, path, kind in _review_runs(runs_root):
            try:
                rows.append((rel, kind, REVIEW_KINDS[kind].module.review_rates(path), None))
            except FiglangError as exc:
                rows.append((rel, kind, {}, str(exc)))
        return render_template("review_list.html", rows=rows)

    @app.get("/review/<any(flute, impli):kind>/<path:rel>")
    def review_page(kind: str, rel: str) -> Any:
        review = REVIEW_KINDS[kind]
        folder = run_folder(rel)
        items = review.module.queue_items(folder)
        show = request.args.get("show", "todo")
        shown = [i for i in items if i["review"] is None] if show == "todo" else items
        page, pages = _page_of(len(shown))
        return render_template(
            "review.html",
            rel=rel,
            kind=kind,
            review=review,
            rates=review.module.review_rates(folder),
            items=shown[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
            matched=len(shown),
            total=len(items),
            show=show,
            page=page,
            pages=pages,
            message=request.args.get("msg", ""),
            error=request.args.get("err", ""),
        )

    @app.post("/review/<any(flute, impli):kind>/<path:rel>")
    def review_post(kind: str, rel: str) -> Any:
        review = REVIEW_KINDS[kind]
        module = review.module
        check_post()
        folder = run_folder(rel)
        form = request.form
        verdict = form.get("verdict", "").strip().lower()
        row = {"id": form.get("id", ""), "revision": form.get("revision", ""), "verdict": verdict, "note": form.get("note", "")}
        if verdict == "edit":
            row.update({f"edited_{f}": form.get(f"edited_{f}", "") for f in module.EDITABLE})
        if verdict == "reject" and review.reasons:
            row["reason"] = form.get("reason", "")
        back = {"kind": kind, "rel": rel, "show": form.get("show", "todo"), "page": form.get("page", "1")}
        if verdict == "reject" and not review.reasons and not row["note"].strip():
            return redirect(url_for("review_page", err=f"{row['id']}: say why you reject it (the reason is kept with the verdict)", **back))
        with review_lock:  # one read-modify-write of verdicts.jsonl at a time
            report = module.record_verdict(folder, row, VERDICT_ORIGIN)
        if report.errors:
            return redirect(url_for("review_page", err="; ".join(e.removeprefix(f"{VERDICT_ORIGIN}: ") for e in report.errors), **back))
        if report.blank:
            return redirect(url_for("review_page", err=f"{row['id']}: choose accept, edit or reject", **back))
        return redirect(url_for("review_page", msg=f"{row['id']}: {verdict} stored", **back))

    # --- FLUTE human evaluation -------------------------------------------------------------------------------------

    @app.get("/human")
    def human_list() -> str:
        return render_template("human_list.html", exports=_human_exports(runs_root))

    def human_export(rel: str) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
        folder = run_folder(rel)
        items_file, key_file = folder / f"{HUMAN_STEM}_items.jsonl", folder / f"{HUMAN_STEM}_key.jsonl"
        if not items_file.is_file() or not key_file.is_file():
            raise FiglangError(f"{rel} is not a `figlang human flute-export` folder (it needs {items_file.name} and {key_file.name})")
        items = [obj for _line, obj in iter_json_objects(items_file)]
        return folder, items, load_flute_key(key_file)

    def human_answers(folder: Path) -> list[dict[str, Any]]:
        path = folder / HUMAN_ANSWERS
        return [obj for _line, obj in iter_json_objects(path)] if path.is_file() and path.stat().st_size else []

    @app.get("/human/flute/<path:rel>")
    def human_page(rel: str) -> Any:
        folder, items, _key = human_export(rel)
        judge = request.args.get("judge", "").strip()
        mine = {a["item_id"]: a for a in human_answers(folder) if judge and a.get("judge") == judge}
        show = request.args.get("show", "todo")
        shown = [i for i in items if i["item_id"] not in mine] if show == "todo" else items
        per_page = 5
        pages = max(1, math.ceil(len(shown) / per_page))
        try:
            page = min(max(int(request.args.get("page", "1")), 1), pages)
        except ValueError:
            page = 1
        return render_template(
            "human.html",
            rel=rel,
            judge=judge,
            items=shown[(page - 1) * per_page : page * per_page],
            mine=mine,
            n_items=len(items),
            n_done=len(mine),
            show=show,
            page=page,
            pages=pages,
            ratings=list(RATING_NAMES.values()),
            shortcomings=SHORTCOMINGS,
            answers_file=HUMAN_ANSWERS,
            message=request.args.get("msg", ""),
            error=request.args.get("err", ""),
        )

    @app.post("/human/flute/<path:rel>")
    def human_post(rel: str) -> Any:
        import tempfile

        check_post()
        folder, items, key = human_export(rel)
        form = request.form
        judge, item_id = form.get("judge", "").strip(), form.get("item_id", "")
        back = {"judge": judge, "show": form.get("show", "todo"), "page": form.get("page", "1")}
        if not judge:
            return redirect(url_for("human_page", rel=rel, err="write your judge name first", **back))
        item = next((i for i in items if i["item_id"] == item_id), None)
        if item is None:
            return redirect(url_for("human_page", rel=rel, err=f"unknown item {item_id!r}", **back))
        row: dict[str, Any] = {"item_id": item_id, "judge": judge}
        for k in range(1, len(item["explanations"]) + 1):
            row[f"rating_{k}"] = form.get(f"rating_{k}", "")
            row[f"shortcomings_{k}"] = form.getlist(f"shortcomings_{k}")
        with review_lock:
            rows = [a for a in human_answers(folder) if (a.get("item_id"), a.get("judge")) != (item_id, judge)] + [row]
            # checked by the importer itself, over the answers so far (only the items answered yet are asked for)
            with tempfile.TemporaryDirectory() as tmp:
                trial = Path(tmp) / HUMAN_ANSWERS
                write_jsonl(trial, rows)
                try:
                    import_flute_judgements(trial, {i: key[i] for i in {r["item_id"] for r in rows} if i in key}, judges_per_item=None)
                except FiglangError as exc:
                    return redirect(url_for("human_page", rel=rel, err=str(getattr(exc, "message", exc)), **back))
            write_jsonl(folder / HUMAN_ANSWERS, rows)
        return redirect(url_for("human_page", rel=rel, msg=f"item {item['position']} stored for {judge}", **back))

    if warm:
        started = threading.Event()

        def warm_up() -> None:
            for run in find_runs(runs_root):
                if run.has_predictions and not run.problem:
                    path = run.path / PREDICTIONS_FILE
                    st = path.stat()
                    jobs.submit(("index", str(path), st.st_mtime_ns, st.st_size), lambda p=path: PredictionIndex.build(p))

        @app.after_request
        def _warm_after_first_page(response: Any) -> Any:
            # index every run's predictions once the first page is out (not before: it would slow that page down)
            if not started.is_set():
                started.set()
                timer = threading.Timer(0.5, warm_up)
                timer.daemon = True
                timer.start()
            return response

    return app


def _human_exports(root: Path, max_depth: int = 5) -> list[str]:
    """Folders written by `figlang human flute-export` under ``root``."""
    return sorted(
        p.parent.relative_to(root).as_posix()
        for p in root.rglob(f"{HUMAN_STEM}_manifest.json")
        if len(p.relative_to(root).parts) <= max_depth + 1
    )


@dataclass(frozen=True)
class ReviewKind:
    """One kind of verification queue the review page serves: the builder module that holds its logic (queue_items,
    review_rates, record_verdict, EDITABLE), and what the form shows."""

    module: Any  # the builder's review module
    title: str
    labels: tuple[str, ...]
    import_cmd: str
    finalize_cmd: str

    @property
    def reasons(self) -> dict[str, str]:
        """The module's fixed reject reasons (none: a free note is the reason)."""
        return getattr(self.module, "REJECT_REASONS", {})


REVIEW_KINDS = {
    "flute": ReviewKind(
        flute_review, "FLUTE creator run", ("Entailment", "Contradiction"), "figlang build flute import", "figlang build flute finalize"
    ),
    "impli": ReviewKind(
        impli_review,
        "IMPLI generator output",
        ("entailment", "non-entailment"),
        "figlang build impli review-import",
        "figlang build impli finalize",
    ),
}


def _review_runs(root: Path, max_depth: int = 5) -> list[tuple[str, Path, str]]:
    """Folders with a verification queue under ``root``, with their kind: FLUTE creator runs (items.jsonl +
    candidates.jsonl) and IMPLI generator outputs (jsonl/*.jsonl)."""
    found: list[tuple[str, Path, str]] = []

    def walk(folder: Path, depth: int) -> None:
        if (folder / ITEMS_FILE).is_file() and (folder / CANDIDATES_FILE).is_file():
            found.append((folder.relative_to(root).as_posix(), folder, "flute"))
        elif is_output_folder(folder):
            found.append((folder.relative_to(root).as_posix(), folder, "impli"))
        if depth >= max_depth:
            return
        try:
            subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))
        except OSError:
            return
        for p in subs:
            walk(p, depth + 1)

    walk(root, 0)
    return found
