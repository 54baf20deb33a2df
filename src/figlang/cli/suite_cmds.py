"""`figlang suite`: options in, a table out. The suite itself is :func:`figlang.suite`
(:mod:`figlang.evaluation.suite`); this module only parses options and prints.

The terminal table fits an 80-column terminal: per benchmark a heading (benchmark, items), then each
system in plain words (wrapped) with its accuracy, CI and the majority rate; suite.md (and README) hold
the same cells one line a row, the commands that rerun each row and the breakdowns by gold label and by
figure / pair type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from figlang.evaluation.suite import DEFAULT_DTYPE, DEFAULT_MODEL, HEADERS, SuiteResult, timing_line
from figlang.cli.common import DataDirOption, NoRequestCacheOption, RequestCacheDirOption, console


def suite_table(result: SuiteResult) -> Table:
    """The suite's rows as a table that fits 80 columns: the cells of suite.md, each benchmark (with its items)
    heading its rows, each system's plain-words description wrapped, the figures whole."""
    table = Table(
        title=f"figlang suite: the strongest offline CPU systems, and {result.model} beside them",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column(HEADERS["system"], ratio=1, overflow="fold")
    table.add_column("acc. % [95% CI]", justify="right", no_wrap=True)
    table.add_column("maj. %", justify="right", no_wrap=True)
    benchmark = None
    for r in result.rows:
        cells = r.cells()
        heading = f"{cells['benchmark']}: n = {cells['n']}"
        if heading != benchmark:
            if benchmark is not None:
                table.add_section()
            table.add_row(f"[bold]{heading}[/bold]", "", "")
            benchmark = heading
        table.add_row(cells["system"], cells["accuracy"], cells["majority"])
    return table


def print_suite(result: SuiteResult, to: Console | None = None) -> None:
    """The table and the run's footnotes, on ``to`` (default: the terminal)."""
    out = to or console
    out.print(suite_table(result))
    if any(r.sampled for r in result.rows):
        out.print(
            "n: a seeded sample stratified by gold label where the whole split does not fit 10 minutes; "
            "where both rows of a benchmark are sampled, they score the same items."
        )
    out.print(timing_line(result))
    print_explained(result, out)


def print_explained(result: SuiteResult, out: Console) -> None:
    """The FLUTE val pairs figlang explained, each with its gold, wrapped to the terminal."""
    if not result.explained:
        return
    out.print()
    out.print("[bold]Three FLUTE val pairs, explained[/bold] (premise and hypothesis only, as `figlang explain` takes them):")
    for p in result.explained:
        found = p.get("figure_type") or "no type"
        if p.get("idiom"):
            found += f", idiom '{p['idiom']}'"
        out.print()
        out.print(f"[dim]premise[/dim]    {escape(p['premise'])}")
        out.print(f"[dim]hypothesis[/dim] {escape(p['hypothesis'])}")
        out.print(f"[dim]figlang[/dim]    [bold]{p.get('label')}[/bold] ({escape(found)}): {escape(p.get('explanation') or '')}")
        out.print(f"[dim]gold[/dim]       [bold]{p['gold']}[/bold]: {escape(p.get('gold_explanation') or '')}")


def suite_cmd(
    model: Annotated[
        str, typer.Option("--model", help="The model beside figlang's best systems: catalog name, Hugging Face id or local path.")
    ] = DEFAULT_MODEL,
    data_dir: DataDirOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for suite.md, suite.json and one subfolder per entry.")] = Path(
        "runs/suite"
    ),
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", help="At most N items per entry (a seeded sample stratified by gold label): a quick look."),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Run only these entries: names (idiom-best, idiom-model …), task names, or the groups best / model; comma-separated or repeated.",
        ),
    ] = None,
    cache_dir: RequestCacheDirOption = None,
    no_cache: NoRequestCacheOption = False,
    threads: Annotated[int | None, typer.Option("--threads", help="torch threads (default: torch's, one per core).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for samples and bootstrap CIs.")] = 0,
    full: Annotated[
        bool, typer.Option("--full", help="Whole splits instead of the entries' seeded samples (hours with qwen2.5-1.5b on a CPU).")
    ] = False,
    dtype: Annotated[
        str,
        typer.Option(
            "--dtype",
            help="Weights of --model (Transformers): float32 (default, as `figlang eval`: the same answers on every CPU and thread count), auto (bfloat16 on CPUs with AMX or AMD's AVX512-BF16, where it is the faster dtype, else float32), or bfloat16 (its scores move with the thread count).",
        ),
    ] = DEFAULT_DTYPE,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """figlang's strongest offline CPU system on each benchmark, and --model beside it.

    Two rows per benchmark: idiom and simile cloze on unseen expressions
    (dev-disjoint; the shipped heads on the frozen qwen2.5-1.5b, against
    --model's PMI scoring),
    FLUTE val (the shipped LoRA label model on mpnet) and IMPLI's
    hand-written idiom pairs (the shipped IMPLI fold heads), against
    --model's label scoring. The cloze rows and --model's rows run on a
    seeded sample stratified by gold label, sized so that the whole suite
    takes under 10 minutes on 2 cores (--full: whole splits); figlang's
    FLUTE and IMPLI rows score the whole split. Below the table, three
    FLUTE val pairs explained by `figlang explain`'s defaults. Needs
    `figlang models install qwen2.5-1.5b mpnet` and the --model.

    The terminal shows the table; suite.md has the same cells, the command
    that reruns each row, the breakdowns by gold label and type, and the
    explained pairs.

      figlang suite --model smollm2-135m --data-dir ../shared/data
      figlang suite --only model --model gemma3-270m --limit 20
    """
    from figlang.api import suite

    result = suite(
        model,
        data_dir=data_dir,
        out=out,
        limit=limit,
        only=only,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        threads=threads,
        seed=seed,
        progress=not quiet,
        full=full,
        dtype=dtype,
    )
    print_suite(result)
    console.print(f"[dim]breakdowns by label and type, and the commands: {out}/suite.md[/dim]")
