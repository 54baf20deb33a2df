"""Run a method on a task split (or score a prediction file) and write predictions, results and a table.

Every prediction goes through the request cache keyed by the method's fingerprint and the
item's content, so a killed run resumes where it stopped and a rerun costs nothing: the
second run's predictions and metrics are identical to an uninterrupted run's.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError, LoadReport
from figlang.core.io import atomic_write, file_sha256
from figlang.core.context import RunContext, run_context
from figlang.data.records import Record
from figlang.data.registry import Task, ensure_labels_scoreable, ensure_unique_ids, get_task
from figlang.methods.base import Method, Prediction, bind_method, get_methods
from figlang.core.options import option_names
from figlang.backends.cache import RequestCache, cache_key
from figlang.core.progress import columns as progress_columns
from figlang.core.progress import clock, compact_number
from figlang.core.progress import display as progress_display
from figlang.evaluation.predictions import PredictionProblems, prediction_files, prediction_rows, read_predictions, write_predictions
from figlang.evaluation.provenance import (
    code_provenance,
    data_checksums,
    write_code_patch,
    library_versions,
    machine,
    portable_path,
    provenance,
    records_digest,
)
from figlang.evaluation.results import ResultsDocument
from figlang.evaluation.scoring import MetricOptions, is_correct, score


@dataclass
class RunResult:
    """A finished run: its results document (typed, and as the dict results.json holds), predictions and records."""

    document: ResultsDocument
    predictions: dict[str, Prediction]
    records: list[Record]
    out_dir: Path | None = None
    problems: PredictionProblems = field(default_factory=PredictionProblems)
    results: dict[str, Any] = field(init=False)  # results.json's content (document.to_dict())

    def __post_init__(self) -> None:
        self.results = self.document.to_dict()

    @property
    def metrics(self) -> dict[str, Any]:
        return self.results["metrics"]


def _record_input(record: Record) -> dict[str, Any]:
    """The part of a record a method sees, for cache keys: no file paths or line numbers."""
    d = record.to_dict()
    d.pop("meta", None)
    return d


def _load(task: Task, split: str | None, ctx: RunContext, limit: int | None) -> tuple[str, list[Record], LoadReport]:
    split = task.check_split(split)
    report = LoadReport()
    records = task.load(split, ctx, report=report)
    ensure_unique_ids(records, f"{task.name}/{split}")  # predictions are keyed by id: a shared id hands out a sibling's answer
    if limit is not None:
        records = records[:limit]
    return split, records, report


def run_method(
    method: Method,
    records: Sequence[Record],
    cache: RequestCache | None = None,
    chunk_size: int = 32,
    progress: bool = True,
    description: str = "predicting",
) -> tuple[dict[str, Prediction], dict[str, int]]:
    """Predictions for every record, from the cache where possible; new ones are cached chunk by chunk."""
    fingerprint = method.fingerprint()
    keys = {r.id: cache_key("prediction", fingerprint, _record_input(r)) for r in records}
    cached = cache.get_many(keys.values()) if cache is not None else {}
    out: dict[str, Prediction] = {}
    todo: list[Record] = []
    for r in records:
        hit = cached.get(keys[r.id])
        if hit is not None:
            out[r.id] = Prediction.from_dict({**hit, "id": r.id})
        else:
            todo.append(r)
    stats = {"cached": len(records) - len(todo), "computed": len(todo)}
    if not todo:
        return out, stats
    from rich.progress import Progress

    # one line per job (figlang.core.progress.columns); a model loaded inside predict() draws its library's bars as a
    # transient line of this display (figlang.core.progress.route_transformers_bars), not over it
    with Progress(*progress_columns(), disable=not progress, transient=False) as bar, progress_display(bar):
        job = bar.add_task(description, total=len(records), completed=stats["cached"], rate="")
        start = time.perf_counter()
        done = 0
        for i in range(0, len(todo), chunk_size):
            chunk = todo[i : i + chunk_size]
            preds = method.predict(chunk)
            if len(preds) != len(chunk) or any(p.id != r.id for p, r in zip(preds, chunk)):
                raise FiglangError(f"method {method.name!r} returned predictions out of order or incomplete")
            if cache is not None:
                cache.put_many([(keys[p.id], p.to_dict()) for p in preds], namespace=method.name)
            for p in preds:
                out[p.id] = p
            done += len(chunk)
            elapsed = time.perf_counter() - start
            rate = done / max(elapsed, 1e-9)
            bar.update(job, advance=len(chunk), rate=f"{compact_number(rate)} items/s")
            if progress and not bar.console.is_terminal:  # a log file: one plain line per chunk instead of a live bar
                print(
                    _progress_line(description, stats["cached"] + done, len(records), rate, elapsed, len(todo) - done),
                    file=sys.stderr,
                    flush=True,
                )
    return out, stats


def _progress_line(description: str, done: int, total: int, rate: float, elapsed: float, left: int) -> str:
    """``idiom-cloze/dev 64/355 items, 0.11 items/s, 0:09:40 elapsed, ETA 0:44:05`` (for logs, where no bar is drawn)."""
    eta = clock(left / rate) if rate > 0 else "?"
    return f"{description} {done}/{total} items, {rate:.2f} items/s, {clock(elapsed)} elapsed, ETA {eta}"


def build_results(
    task: Task,
    split: str,
    records: Sequence[Record],
    predictions: dict[str, Prediction],
    method_info: dict[str, Any],
    options: MetricOptions,
    seconds: float,
    *,
    data_dir: Path | None = None,
    problems: PredictionProblems | None = None,
    extra: dict[str, Any] | None = None,
    task_extra: dict[str, Any] | None = None,
) -> ResultsDocument:
    """The results document of a run: metrics of ``predictions`` on ``records`` and how they were made.

    ``data_dir`` (already resolved by the caller) is given when ``records`` are a whole task split:
    the split's files are checksummed, with paths relative to the data directory (or to a spec
    task's folder). Without it the records are a set made on the fly (a carved dev, a test fold, a
    pooled set) and their content digest stands for the files. ``task_extra`` goes into the task
    section (fold numbers), ``extra`` at the top level.
    """
    records = list(records)
    metrics = score(records, predictions, task.group_by, options, labels=task.labels)
    per_item = (metrics.get("explanations") or {}).pop("explanation_scores", None) or {}
    metrics["coverage"] = {"gold_items": len(records), "predicted": sum(r.id in predictions for r in records)}
    task_info: dict[str, Any] = {
        "name": task.name,
        "split": split,
        "shape": task.shape,
        "items": len(records),
        "spec_path": task.spec_path,
        "labels": list(task.labels),
    }
    if data_dir is not None:
        spec_dir = (Path(task.spec_path).parent,) if task.spec_path else ()
        data: dict[str, Any] = {
            "data_dir": portable_path(data_dir),
            "files": data_checksums(task.files(split, data_dir), data_dir, *spec_dir),
        }
    else:
        task_info["records_sha256"] = records_digest(records)
        data = {"records_sha256": task_info["records_sha256"]}
    task_info.update(task_extra or {})
    extra = dict(extra or {})
    chosen = extra.pop("selection_split", None) or {}
    return ResultsDocument(
        task=task_info,
        data=data,
        method=method_info,
        metrics=metrics,
        metric_config={**options.__dict__, "accuracy": options.accuracy().config()},
        problems=(problems or PredictionProblems()).to_dict(),
        versions=library_versions(),
        machine=machine(),
        timing={"finished": datetime.now(UTC).isoformat(timespec="seconds"), "seconds": round(seconds, 2)},
        # the code, the evaluated ids and the split of every choice: a figure chosen on the split it reports says so
        provenance=provenance({split: records}, chosen, chosen_on_evaluated_split=split in chosen.values()),
        extra=extra,
        per_item={"explanation_score": per_item} if per_item else {},
    )


def write_run(out_dir: str | Path | None, results: ResultsDocument, records: Sequence[Record], predictions: dict[str, Prediction]) -> None:
    """Write a run folder: ``predictions.jsonl``, ``results.json`` and ``results.md``, each atomically.

    ``results`` is what :func:`build_results` made; its per-item scores go into the predictions file,
    the rest into results.json. Nothing is written when ``out_dir`` is None.
    """
    if out_dir is None:
        return
    from figlang.evaluation.tables import results_markdown

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if results.scored:
        correct = {r.id: is_correct(r, predictions.get(r.id)) if r.id in predictions else None for r in records}
    else:  # predict-only: the gold labels may be hidden placeholders, so no row may claim to be right or wrong
        correct = {r.id: None for r in records}
    write_predictions(out_dir / "predictions.jsonl", prediction_rows(list(records), predictions, correct, results.per_item))
    results.write(out_dir / "results.json")
    write_code_patch(out_dir)  # a run of a modified tree: the diff that re-makes its code, named in provenance.code
    with atomic_write(out_dir / "results.md") as f:
        f.write(results_markdown(results.to_dict()))


def evaluate_records(
    task: Task,
    method: Method,
    records: Sequence[Record],
    name: str,
    *,
    out_dir: str | Path | None = None,
    seed: int = 0,
    metric_options: MetricOptions | None = None,
    task_extra: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    ctx: RunContext | None = None,
) -> RunResult:
    """Run ``method`` on records that are not a whole task split (a carved dev, a test fold) and score them.

    The harness's results and run folder, with ``name`` standing for the split and the records'
    content digest for the data files. Not cached: such sets are made on the fly. ``ctx`` is the run's
    context, handed to the method (``bind``).
    """
    records = list(records)
    start = time.perf_counter()
    bind_method(method, task, ctx)
    predictions, _ = run_method(method, records, None, chunk_size=max(1, len(records)), progress=False, description=f"{task.name}/{name}")
    options = metric_options or MetricOptions(seed=seed)
    info = {
        "name": method.name,
        "model": str(getattr(method, "model_dir", None) or getattr(method, "model", None)),
        "fingerprint": method.fingerprint(),
    }
    results = build_results(
        task, name, records, predictions, info, options, time.perf_counter() - start, task_extra=task_extra, extra=extra
    )
    write_run(out_dir, results, records, predictions)
    return RunResult(results, predictions, records, Path(out_dir) if out_dir else None)


def _takes_seed(factory: Callable[..., Any]) -> bool:
    """Whether a method factory has a ``seed`` parameter, so that `--seed` reaches the methods that draw random
    numbers and only them (a backend given an unknown ``seed`` option would refuse it). A factory that forwards
    ``**options`` to the class it returns (``trained``) is judged by that class's constructor."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    if "seed" in params and params["seed"].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        return True
    if inspect.isclass(factory) or not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return False
    import typing

    try:
        returned = typing.get_type_hints(factory).get("return")
    except Exception:  # unresolvable annotations: say no rather than guess
        return False
    return inspect.isclass(returned) and _takes_seed(returned)


def _recorded_selection(method: Method) -> dict[str, str]:
    """The choices a trained model's figlang.json says were made, and on which split (empty for other methods)."""
    meta = getattr(method, "meta", None)
    found = (meta.get("provenance") or {}).get("selection_split") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _create_method(name: str, model: str | None, options: dict[str, Any], seed: int) -> tuple[Method, Any]:
    """The method, given the run seed when it takes one and ``-O seed=N`` did not set it (an explicit option wins);
    the seed it was given, or None. The seed goes through the constructor, so it is in the method's configuration
    and fingerprint: runs with other seeds never share cached predictions."""
    registry = get_methods()
    if "seed" in options:
        return registry.create(name, model=model, **options), options["seed"]
    factory = registry.info(name).factory
    declared = getattr(factory, "Options", None)  # a method whose constructor takes its options dataclass's fields as **options
    if _takes_seed(factory) or (declared is not None and "seed" in option_names(declared)):
        return registry.create(name, model=model, **options, seed=seed), seed
    return registry.create(name, model=model, **options), None


def _prepare(method: Method, task: Task, ctx: RunContext) -> None:
    """Bind the method to the task and the run's context; fit it on the train split when it learns from one."""
    bind_method(method, task, ctx)
    if not method.needs_train:
        return
    if "train" not in task.splits:
        raise FiglangError(
            f"{method.name} learns from the task's train split, and {task.name!r} has none (its splits: {', '.join(task.splits)}); "
            "use a method that needs no training data, or train on another task (figlang train) and evaluate that model here"
        )
    method.fit(task.load("train", ctx))


def _method_info(method: Method, model: str | None, options: dict[str, Any] | None) -> dict[str, Any]:
    """results.json's method section: name, model, the options as given (-O key=value, for people and tables) and the
    fingerprint (the full configuration)."""
    given = {k: v if isinstance(v, (bool, int, float, str)) or v is None else str(v) for k, v in sorted((options or {}).items())}
    return {"name": method.name, "model": model, "options": given, "fingerprint": method.fingerprint()}


def evaluate(
    task: str | Task,
    method: str | Method,
    model: str | None = None,
    split: str | None = None,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    out_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    seed: int | None = None,
    metric_options: MetricOptions | None = None,
    method_options: dict[str, Any] | None = None,
    progress: bool = True,
    chunk_size: int = 32,
    predict_only: bool = False,
    extra: dict[str, Any] | None = None,
    chosen_on: dict[str, str] | None = None,
    ctx: RunContext | None = None,
) -> RunResult:
    """Run ``method`` on one split of ``task`` and score it (the Python face of `figlang eval`).

    ``predict_only`` writes predictions without scoring: the way to make test-set
    submissions, since the narrative test labels are hidden placeholders.

    ``seed`` goes to a method named by string when its constructor takes one (``method_options``'
    own ``seed`` wins) and, unless ``metric_options`` says otherwise, to the bootstrap CIs; the
    results record each (``seeds``). ``extra`` is recorded as is at the top of results.json
    (how a caller made the run: the suite's sample, say), so nothing rewrites results afterwards.


    ``chosen_on`` names the split each choice behind this run was made on (``{"prompt": "selection"}``);
    it is recorded with what a trained model's figlang.json says it chose (provenance.selection_split).

    ``ctx`` is the run's context (data folder, request cache folder, seed), built where the run starts; without
    one, it is made from ``data_dir``, ``cache_dir`` and ``seed`` (default 0). The method gets it through ``bind``.
    """
    code_provenance()  # read now: the commit and dirty state of the code this run starts with
    ctx = run_context(ctx, data_dir=data_dir, cache_dir=cache_dir, seed=seed)
    seed = ctx.seed
    t = get_task(task) if isinstance(task, str) else task
    if isinstance(method, str):
        m, method_seed = _create_method(method, model, dict(method_options or {}), seed)
    else:
        m, method_seed = method, getattr(method, "seed", None)
    m.check_shape(t.shape, t.name)
    split, records, report = _load(t, split, ctx, limit)
    scoreable = not predict_only
    if scoreable and t.shape != "generation":
        ensure_labels_scoreable(records, f"{t.name}/{split}")  # placeholder test labels are refused here
    elif scoreable:
        scoreable = any(getattr(r, "references", ()) for r in records)
    _prepare(m, t, ctx)
    options = metric_options or MetricOptions(seed=seed)
    cache = RequestCache(ctx.cache_dir) if use_cache else None
    start = time.perf_counter()
    try:
        predictions, stats = run_method(m, records, cache, chunk_size=chunk_size, progress=progress, description=f"{t.name}/{split}")
    finally:
        if cache is not None:
            cache.close()
    seconds = time.perf_counter() - start
    extra = {
        **(extra or {}),
        "seed": seed,
        "seeds": {"method": method_seed, "bootstrap": options.seed},
        "limit": limit,
        "load_warnings": [str(w) for w in report.warnings],
        "scored": scoreable,
        "run": {"cache": {**stats, "dir": portable_path(cache.directory) if cache is not None else None}},
    }
    notes = m.run_notes()
    if notes:
        extra["run"]["backend"] = notes
    info = _method_info(m, model, method_options)
    extra["selection_split"] = {**_recorded_selection(m), **(chosen_on or {})}
    results = build_results(t, split, records, predictions if scoreable else {}, info, options, seconds, data_dir=ctx.data_dir, extra=extra)
    out = Path(out_dir) if out_dir else None
    write_run(out, results, records, predictions)
    return RunResult(results, predictions, records, out)


def score_predictions_file(
    path: str | Path | Sequence[str | Path],
    task: str | Task,
    split: str | None = None,
    data_dir: str | Path | None = None,
    fmt: str | None = None,
    allow_partial: bool = False,
    out_dir: str | Path | None = None,
    metric_options: MetricOptions | None = None,
    seed: int | None = None,
    ctx: RunContext | None = None,
) -> RunResult:
    """Score an existing prediction file (ours, the narrative paper's committed outputs, or a FLUTE submission).

    ``path`` may also be several files or a folder, scored as one submission (the FLUTE repository
    releases one JSON array per figure type).

    The only seed a file's scoring uses is the bootstrap's: ``metric_options.seed`` when options
    are given, else ``seed``; that one is recorded.
    """
    ctx = run_context(ctx, data_dir=data_dir, seed=seed)
    seed = ctx.seed
    t = get_task(task) if isinstance(task, str) else task
    split, records, report = _load(t, split, ctx, None)
    if t.shape != "generation":
        ensure_labels_scoreable(records, f"{t.name}/{split}")
    start = time.perf_counter()
    files = prediction_files(path)
    predictions, problems, detected = read_predictions(files, records, t.labels, fmt)
    if problems.blocking and not allow_partial:
        named = str(files[0]) if len(files) == 1 else f"{len(files)} files ({', '.join(f.name for f in files)})"
        raise FiglangError(
            f"{named}: {problems.summary()}. Fix the file, or pass --allow-partial to score only the items that can be scored"
        )

    if len(files) == 1:
        info = {
            "name": "predictions-file",
            "model": files[0].name,
            "fingerprint": {"file": str(files[0]), "sha256": file_sha256(files[0]), "format": detected},
        }
    else:  # one submission in several files: each is recorded with its checksum
        info = {
            "name": "predictions-file",
            "model": " + ".join(f.name for f in files),
            "fingerprint": {"files": [{"file": str(f), "sha256": file_sha256(f)} for f in files], "format": detected},
        }
    options = metric_options or MetricOptions(seed=seed)
    extra = {
        "seed": options.seed,
        "seeds": {"method": None, "bootstrap": options.seed},
        "limit": None,
        "allow_partial": allow_partial,
        "load_warnings": [str(w) for w in report.warnings],
        "scored": True,
    }
    results = build_results(
        t, split, records, predictions, info, options, time.perf_counter() - start, data_dir=ctx.data_dir, problems=problems, extra=extra
    )
    out = Path(out_dir) if out_dir else None
    write_run(out, results, records, predictions)
    return RunResult(results, predictions, records, out, problems)
