"""The pages that browse: home, the tasks and their records, the runs with their predictions and plots, a comparison of
two runs (`figlang compare`), and the interpret form."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request, send_file

from figlang.core.errors import FiglangError
from figlang.data.records import expression_of
from figlang.data.registry import all_tasks
from figlang.evaluation.compare import compare_runs
from figlang.evaluation.run_index import PREDICTIONS_FILE, Filters, PredictionIndex, describe_run, find_runs, read_results
from figlang.interpret import interpret
from figlang.interpret.use_label import USE_MODELS
from figlang.web.paths import resolve_under
from figlang.web.review_pages import review_folders
from figlang.web.serving import IMAGE_TYPES, PAGE_SIZE, check_post, config, fail, index_of, page_of, run_folder, state

pages = Blueprint("browse", __name__)


@pages.get("/")
def index() -> str:
    runs_root = config().runs_dir
    return render_template("index.html", runs=find_runs(runs_root), tasks=all_tasks(), reviews=review_folders(runs_root))


@pages.get("/tasks")
def tasks() -> str:
    return render_template("tasks.html", tasks=all_tasks())


@pages.get("/tasks/<name>/<split>")
def task_page(name: str, split: str) -> Any:
    task = next((t for t in all_tasks() if t.name == name), None)  # registered names only: never a spec path
    if task is None:
        return fail(404, "Unknown task", f"There is no task {name!r}; the tasks page lists them.")
    split = task.check_split(split)
    ctx = config().ctx
    records = state().jobs.get(
        ("task", name, split),
        lambda: task.load(split, ctx),
        f"loading {name} / {split} from the data folder, once per split",
    )
    query = request.args.get("q", "").strip()
    shown = [r for r in records if query.lower() in (expression_of(r) or "")] if query else records
    chunk, page, pages_ = page_of(shown)
    items = [r.to_dict() for r in chunk]
    return render_template(
        "task.html",
        task=task,
        split=split,
        items=items,
        total=len(records),
        matched=len(shown),
        q=query,
        page=page,
        pages=pages_,
        first=(page - 1) * PAGE_SIZE,
    )


@pages.get("/runs")
def runs() -> str:
    return render_template("runs.html", runs=find_runs(config().runs_dir))


def _filters(has_correct: bool) -> Filters:
    """The run page's prediction filters, from the request."""
    return Filters(
        wrong=request.args.get("show", "wrong" if has_correct else "all") == "wrong",
        label=request.args.get("label", ""),
        figure_type=request.args.get("type", ""),
        pair_type=request.args.get("pair", ""),
        expression=request.args.get("expr", "").strip(),
    )


def _listing(index: PredictionIndex | None, filters: Filters, has_correct: bool) -> dict[str, Any]:
    """The page of predictions the run page lists, with the filters' choices."""
    listing: dict[str, Any] = {"present": index is not None}
    if index is None:
        return listing
    chosen = index.select(filters)
    chunk, page, pages_ = page_of(chosen)
    listing.update(
        total=len(index),
        matched=len(chosen),
        page=page,
        pages=pages_,
        problems=index.problems[:5],
        n_problems=len(index.problems),
        rows=index.rows(list(chunk)),
        labels=index.values("gold"),
        types=index.values("figure_type"),
        pairs=index.values("pair_type"),
        has_correct=has_correct,
    )
    return listing


@pages.get("/run/<path:rel>")
def run_page(rel: str) -> Any:
    runs_root = config().runs_dir
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
    index = index_of(preds) if preds.is_file() else None
    has_correct = index is not None and any("correct" in k for k in index.keys)
    filters = _filters(has_correct)
    return render_template(
        "run.html",
        rel=info.rel,
        info=info,
        results=results,
        groups=groups,
        plots=plots,
        f=filters,
        show="wrong" if filters.wrong else "all",
        listing=_listing(index, filters, has_correct),
    )


@pages.get("/file/<path:rel>")
def run_file(rel: str) -> Any:
    path = resolve_under(config().runs_dir, rel)
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None or not path.is_file():
        return fail(404, "Not found", f"No image {rel!r} under the runs folder (only plots are served).")
    return send_file(path, mimetype=kind, max_age=0)


@pages.get("/compare")
def compare() -> Any:
    all_runs = [r for r in find_runs(config().runs_dir) if r.has_predictions and not r.problem]
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
    ctx = config().ctx  # read here: the job runs in a worker thread, outside the request
    c = state().jobs.get(
        ("compare", str(fa), str(fb), stamp),
        lambda: compare_runs(fa, fb, ctx=ctx),
        f"running figlang compare's paired tests and bootstrap over {min(len(ia), len(ib)):,} items, once per pair of runs",
    )
    generation = c.get("kind") == "generation"
    field_ = "prediction" if generation else "correct"
    differ = [
        (i, ib.by_id[k["id"]])
        for i, k in enumerate(ia.keys)
        if k["id"] in ib.by_id and (k.get(field_) != ib.keys[ib.by_id[k["id"]]].get(field_) or generation)
    ]
    chunk, page, pages_ = page_of(differ)
    pairs = list(zip(ia.rows([x for x, _ in chunk]), ib.rows([y for _, y in chunk])))
    return render_template(
        "compare.html", runs=all_runs, a=a, b=b, c=c, pairs=pairs, n_differ=len(differ), page=page, pages=pages_, generation=generation
    )


@pages.route("/interpret", methods=["GET", "POST"])
def interpret_page() -> Any:
    text, result, error = "", None, None
    paraphrase, figurative_only, use_model = True, False, "default"
    if request.method == "POST":
        check_post()
        text = request.form.get("text", "")
        paraphrase = request.form.get("paraphrase") == "on"
        figurative_only = request.form.get("figurative_only") == "on"
        use_model = request.form.get("use_model", "default")
        try:
            if use_model not in USE_MODELS:  # the page offers the shipped use models only, never a path on this machine
                raise FiglangError(f"unknown use model {use_model!r}: choose one of {', '.join(USE_MODELS)}")
            found = interpret(text, ctx=config().ctx, paraphrase=paraphrase, figurative_only=figurative_only, use_model=use_model)
            result = found.to_dict()
        except FiglangError as exc:
            error = str(exc)
    return render_template(
        "interpret.html",
        text=text,
        result=result,
        error=error,
        paraphrase=paraphrase,
        figurative_only=figurative_only,
        use_model=use_model,
        use_models=USE_MODELS,
    )
