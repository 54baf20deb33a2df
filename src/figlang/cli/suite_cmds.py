"""`figlang suite`: options in, a table out. The suite itself is :func:`figlang.suite`
(:mod:`figlang.evaluation.suite`); this module only parses options and prints.

The terminal table fits an 80-column terminal (task, split, method, items, accuracy with its CI,
majority rate); the per-label and per-type breakdowns, the method options and the commands that
rerun each entry are in ``<out>/suite.md`` and ``suite.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from ..evaluation.suite import DEFAULT_DTYPE, DEFAULT_MODEL, SuiteResult
from .common import DataDirOption, console


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def suite_table(result: SuiteResult) -> Table:
    """The suite's rows as a table that fits 80 columns: one line per entry, nothing folded."""
    table = Table(title=f"figlang suite: {result.model}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", no_wrap=True)
    table.add_column("split", no_wrap=True)
    table.add_column("method", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("acc. % [95% CI]", justify="right", no_wrap=True)
    table.add_column("maj. %", justify="right", no_wrap=True)
    for r in result.rows:
        acc = r.metrics.get("accuracy")
        acc_cell = f"{_pct(acc['accuracy'])} [{_pct(acc['ci_low'])}, {_pct(acc['ci_high'])}]" if acc else "-"
        table.add_row(r.entry.task, r.split, r.entry.method, f"{r.n}*" if r.sampled else str(r.n), acc_cell, _pct(r.majority))
    return table


def print_suite(result: SuiteResult, to: Console | None = None) -> None:
    """The table and the run's footnotes, on ``to`` (default: the terminal)."""
    out = to or console
    out.print(suite_table(result))
    for r in result.rows:
        if r.sampled:
            out.print(f"* {r.entry.task}: a seeded sample of {r.n} of {r.n_split}, stratified by gold label")
    load = ", ".join(f"{x:.2f}" for x in result.load_average) if result.load_average else "n/a"
    cpu = f", {result.cpu_seconds:.0f} CPU s" if result.cpu_seconds is not None else ""
    out.print(f"wall time {result.seconds:.0f} s{cpu} (load average {load}); weights in {result.dtype or 'default dtype'}")


def suite_cmd(
    model: Annotated[str, typer.Option("--model", help="Catalog name, Hugging Face id or local path of the model to evaluate.")] = DEFAULT_MODEL,
    data_dir: DataDirOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for suite.md, suite.json and one subfolder per entry.")] = Path("runs/suite"),
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="At most N items per entry (a seeded sample stratified by gold label): a quick look.")] = None,
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Run only these entries (names or task names; comma-separated or repeated).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", help="Request cache folder (default: figlang's user cache).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")] = False,
    threads: Annotated[Optional[int], typer.Option("--threads", help="torch threads (default: torch's, one per core).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for samples and bootstrap CIs.")] = 0,
    full: Annotated[bool, typer.Option("--full", help="Whole splits even where an entry has a cap of its own (of the built-in entries only IMPLI has one: 500 of its 1,157 pairs).")] = False,
    dtype: Annotated[str, typer.Option("--dtype", help="Model weights: auto (default: bfloat16 on CPUs with AVX512-BF16/AMX, where it halves CPU time; float32 elsewhere), bfloat16, or float32 (the `figlang eval` default).")] = DEFAULT_DTYPE,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Evaluate one offline model on the dev sets of all three benchmarks.

    Entries: idiom and simile cloze dev (lm-score, PMI), FLUTE val
    (nli-score; Acc@0 by figure type), each on its whole split, and IMPLI's
    manual idiom pairs (nli-score) on a seeded 500-pair sample stratified by
    gold label (--full: all 1,157). About 6 minutes with smollm2-135m on an
    idle 2-core CPU with AVX512-BF16, about 9 in float32 on an AVX2-only one.
    --limit 75 gives a quick look at every entry.

    The terminal shows one line per entry; suite.md has the breakdowns by
    gold label and by figure / pair type, and a command per entry.

      figlang suite --model smollm2-135m --data-dir ../shared/data
    """
    from ..api import suite

    result = suite(model, data_dir=data_dir, out=out, limit=limit, only=only, cache_dir=cache_dir, use_cache=not no_cache,
                   threads=threads, seed=seed, progress=not quiet, full=full, dtype=dtype)  # fmt: skip
    print_suite(result)
    console.print(f"[dim]breakdowns by label and type, and the commands: {out}/suite.md[/dim]")
