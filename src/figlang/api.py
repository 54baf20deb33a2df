"""figlang's public Python API: what ``import figlang`` offers (``figlang.evaluate`` …).

One function per thing a person does, each a thin, typed face over the layer that does the work
(the registries, :mod:`figlang.evaluation`, :mod:`figlang.training`); the CLI calls the
same functions, so Python and the command line cannot drift apart. Heavy libraries (torch,
transformers) load only when a function needs a model.

    import figlang

    task = figlang.load_task("idiom-cloze")
    run = figlang.evaluate("idiom-cloze", "lm-score", model="smollm2-135m", split="dev", out_dir="runs/idiom")
    print(run.metrics["accuracy"])
    figlang.compare("runs/a", "runs/b")["bootstrap"]
    figlang.suite("smollm2-135m", limit=20, out="runs/suite")
    figlang.train("idiom-cloze", "mc", "distilroberta-base", "runs/idiom-mc", preset="cpu-fast")
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from figlang.core.context import RunContext, run_context
from figlang.data.registry import TASKS, get_task
from figlang.explain import explain_pairs
from figlang.methods import methods  # noqa: F401  (figlang.methods(): the package is callable as it)

if TYPE_CHECKING:  # names for the annotations only: importing the API loads nothing heavy
    from figlang.data.registry import Task
    from figlang.evaluation.harness import RunResult
    from figlang.evaluation.scoring import MetricOptions
    from figlang.evaluation.suite import SuiteResult
    from figlang.methods.base import Method
    from figlang.training.trainer import TrainResult

__all__ = ["RunContext", "compare", "ensemble", "evaluate", "load_task", "methods", "score_predictions", "suite", "tasks", "train"]


def load_task(task: str | Path) -> Task:
    """A task by name (built-in or a plugin's: see :func:`tasks`) or from a task spec file (.yaml/.json).

    ``figlang.load_task("flute").load("val", data_dir)`` gives the split's typed records.
    """
    return get_task(str(task))


def tasks() -> list[str]:
    """The registered task names: figlang's own, then those of installed plugins (entry points ``figlang.tasks``)."""
    return TASKS.names()


def evaluate(
    task: str | Path | Task,
    method: str | Method,
    model: str | None = None,
    *,
    split: str | None = None,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    out_dir: str | Path | None = None,
    method_options: dict[str, Any] | None = None,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    metric_options: MetricOptions | None = None,
    predict_only: bool = False,
    progress: bool = False,
    options: dict[str, Any] | None = None,
    ctx: RunContext | None = None,
) -> RunResult:
    """Run ``method`` on one split of ``task`` and score it, as `figlang eval` does.

    ``method`` is a registered name (``method_options`` are its ``-O key=value`` options, the name
    :func:`figlang.evaluation.evaluate` uses too; ``model`` a catalog name, hub id, local path, endpoint,
    or a `figlang train` folder for ``trained``) or a Method object. Every prediction goes through the
    request cache, so a rerun costs nothing. With ``out_dir`` the run folder (predictions.jsonl,
    results.json, results.md) is written. ``options`` is the old name of ``method_options`` (deprecated).

    ``ctx`` (a :class:`figlang.RunContext`) names the data folder, request cache folder and seed at once;
    without it they come from ``data_dir``, ``cache_dir`` and ``seed``.
    """
    from figlang.evaluation.harness import evaluate as _evaluate

    if options is not None:
        if method_options is not None:
            raise TypeError("evaluate() takes method_options, not both method_options and its old name options")
        warnings.warn("figlang.evaluate(options=...) is now method_options=...", DeprecationWarning, stacklevel=2)
        method_options = options

    return _evaluate(
        task if not isinstance(task, Path) else str(task),
        method,
        model=model,
        split=split,
        limit=limit,
        out_dir=out_dir,
        use_cache=use_cache,
        metric_options=metric_options,
        method_options=method_options,
        progress=progress,
        predict_only=predict_only,
        ctx=run_context(ctx, data_dir=data_dir, cache_dir=cache_dir, seed=seed if ctx is None else None),
    )


def score_predictions(
    path: str | Path,
    task: str | Path | Task,
    split: str | None = None,
    *,
    data_dir: str | Path | None = None,
    fmt: str | None = None,
    allow_partial: bool = False,
    out_dir: str | Path | None = None,
    seed: int = 0,
    ctx: RunContext | None = None,
) -> RunResult:
    """Score an existing prediction file (figlang's, the papers' released outputs, a FLUTE submission), as `figlang eval -p`."""
    from figlang.evaluation.harness import score_predictions_file

    context = run_context(ctx, data_dir=data_dir, seed=seed if ctx is None else None)
    return score_predictions_file(
        path, task if not isinstance(task, Path) else str(task), split, None, fmt, allow_partial, out_dir, ctx=context
    )


def compare(
    run_a: str | Path,
    run_b: str | Path,
    *,
    seed: int = 0,
    n_resamples: int = 10_000,
    ci_cluster: str | None = None,
    data_dir: str | Path | None = None,
    ctx: RunContext | None = None,
) -> dict[str, Any]:
    """Paired tests between two run folders on the same items, as `figlang compare --json` prints them.

    Discriminative runs: paired t-test, McNemar (and Wilcoxon on explanation scores) and a paired
    bootstrap CI of the accuracy difference (``ci_cluster``: context | expression resamples clusters);
    generation runs: per-item metric scores. Runs published without their dataset texts get them back from the
    data folder: ``ctx``'s (a :class:`figlang.RunContext`, which names the seed too), else ``data_dir``'s.
    """
    from figlang.evaluation.compare import compare_runs

    context = run_context(ctx, data_dir=data_dir, seed=seed if ctx is None else None)
    return compare_runs(run_a, run_b, n_resamples=n_resamples, ci_cluster=ci_cluster, ctx=context)


def ensemble(
    selection: Sequence[str | Path],
    report: Sequence[str | Path],
    out: str | Path,
    *,
    data_dir: str | Path | None = None,
    step: float = 0.1,
    names: Sequence[str] | None = None,
    seed: int = 0,
    ctx: RunContext | None = None,
) -> dict[str, Any]:
    """A calibrated ensemble of finished runs, as `figlang ensemble` makes it: temperatures and convex weights
    chosen on the ``selection`` runs (one per member), applied once to the ``report`` runs (same members, same
    order) and scored into ``out/results.json``, which is returned (its ``ensemble`` block says what was chosen).

    ``ctx`` (a :class:`figlang.RunContext`) names the data folder and seed at once; without it they come from
    ``data_dir`` and ``seed``."""
    from figlang.evaluation.ensemble import ensemble_runs

    context = run_context(ctx, data_dir=data_dir, seed=seed if ctx is None else None)
    return ensemble_runs(selection, report, out, step=step, names=names, ctx=context)


def suite(
    model: str | None = None,
    *,
    data_dir: str | Path | None = None,
    out: str | Path | None = None,
    limit: int | None = None,
    only: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    threads: int | None = None,
    seed: int = 0,
    progress: bool = False,
    full: bool = False,
    dtype: str | None = None,
    ctx: RunContext | None = None,
) -> SuiteResult:
    """The main job, as `figlang suite`: figlang's strongest offline CPU system on each benchmark, and ``model``
    (default smollm2-135m) beside it on the same items.

    ``only`` picks entries (names, task names, or the groups ``best`` / ``model``); ``limit`` caps every entry with a seeded,
    label-stratified sample; ``full`` lifts the entries' own caps. With ``out``: suite.md,
    suite.json and one run folder per entry. ``dtype``: the weights of ``model`` (default float32, as `figlang suite`;
    ``"auto"`` takes bfloat16 where the CPU has AMX or is an AMD CPU with AVX512-BF16). ``ctx`` (a :class:`figlang.RunContext`) replaces ``data_dir``,
    ``cache_dir`` and ``seed``.
    """
    from figlang.evaluation.suite import DEFAULT_DTYPE, DEFAULT_MODEL, run_suite, suite_entries

    ctx = run_context(ctx, data_dir=data_dir, cache_dir=cache_dir, seed=seed if ctx is None else None)
    return run_suite(
        model or DEFAULT_MODEL,
        out=out,
        limit=limit,
        entries=suite_entries(list(only) if only else None),
        use_cache=use_cache,
        threads=threads,
        progress=progress,
        full=full,
        dtype=DEFAULT_DTYPE if dtype is None else dtype,
        ctx=ctx,
        explain=_suite_explainer(ctx, use_cache, progress),
    )


def _suite_explainer(ctx: RunContext, use_cache: bool, progress: bool) -> Any:
    """What the suite explains its FLUTE pairs with: figlang's default `explain` (the pair alone: the figure type and
    idiom detected, the shipped FLUTE label model, qwen2.5-1.5b writing), answers as plain dicts."""

    def explain(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for e in explain_pairs(pairs, use_cache=use_cache, progress=progress, ctx=ctx):
            detected = e.produced_by.get("detected") or {}
            out.append(
                {
                    "label": e.label,
                    "explanation": e.explanation,
                    "figure_type": e.figure_type,
                    "idiom": detected.get("idiom"),
                    "meaning": detected.get("meaning"),
                    "label_method": e.produced_by.get("label_method"),
                    "label_model": e.produced_by.get("label_model"),
                    "model": e.produced_by.get("model"),
                }
            )
        return out

    return explain


def train(
    task: str | Path | Task,
    method: str,
    model: str,
    out_dir: str | Path,
    *,
    restart: bool = False,
    ctx: RunContext | None = None,
    **config: Any,
) -> TrainResult:
    """Train a figlang model (``mc``, ``nli``, ``iro``, ``generator`` …) on ``task`` from base ``model``, as `figlang train`.

    ``config`` takes any training option (``preset``, ``epochs``, ``lr``, ``batch_size``, ``seed``,
    ``limit``, ``data_dir`` …). ``ctx`` (a :class:`figlang.RunContext`) names the data folder, and the seed, device
    and threads unless ``config`` gives them; not together with ``data_dir``. A run left in ``out_dir`` resumes.
    Evaluate the result with ``figlang.evaluate(task, "trained", model=out_dir)``.
    """
    from figlang.training.trainer import train as _train

    return _train(task if not isinstance(task, Path) else str(task), method, model, out_dir, restart=restart, ctx=ctx, **config)
