"""`figlang data …`: look at, check, split and fetch the benchmarks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape as rich_escape
from rich.table import Table

from figlang.core.errors import LoadReport
from figlang.data.hygiene import label_conflicts, overlap_report
from figlang.core.io import write_jsonl
from figlang.core.context import RunContext
from figlang.data.records import expression_of, records_with_ids
from figlang.data.registry import all_tasks, get_task
from figlang.data.splits import expression_disjoint_split, expression_folds, figurative_links, linked_key
from figlang.data.stats import DEFAULT_TASKS, TaskStats, task_stats
from figlang.cli.common import DataDirOption, JsonOption, TaskSplitOption, console

app = typer.Typer(help="Look at, check, split and fetch the benchmarks.", no_args_is_help=True)

TaskOption = Annotated[
    list[str] | None,
    typer.Option("--task", "-t", help="Task name (see `figlang data tasks`) or a task spec file; repeat for several."),
]
_TaskArgument = Annotated[str, typer.Argument(help="Task name or spec file.")]


@app.command("tasks")
def tasks_cmd() -> None:
    """List the registered tasks with their shape and splits."""
    table = Table(title="figlang tasks", show_lines=False)
    for col in ("task", "shape", "splits", "description"):
        table.add_column(col, overflow="fold")
    for task in all_tasks():
        table.add_row(task.name, task.shape, ", ".join(task.splits), task.description)
    console.print(table)
    console.print("Your own data: `figlang data spec-template cloze > my-task.yaml`, edit it, then pass the file as --task.")


@app.command("stats")
def stats_cmd(
    task: TaskOption = None,
    data_dir: DataDirOption = None,
    split: Annotated[list[str] | None, typer.Option("--split", "-s", help="Only these splits (default: all official splits).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")] = False,
) -> None:
    """Records, distinct expressions, label balance, mean lengths and cross-split overlap per task and split.

    Without --task it covers the three benchmarks: idiom-cloze, simile-cloze, flute and impli.
    """
    names = task or list(DEFAULT_TASKS)
    ctx = RunContext.create(data_dir)  # the run's context: built here, once; a spec task's {data_dir}/... paths need it too
    results = [task_stats(get_task(name), splits=split, ctx=ctx) for name in names]
    if as_json:
        typer.echo(json.dumps({"data_dir": str(ctx.data_dir), "tasks": [r.to_dict() for r in results]}, indent=2))
        return
    console.print(f"[dim]data dir: {ctx.data_dir}[/dim]", soft_wrap=True)
    for result in results:
        render_stats(result)
    if any(s.error for r in results for s in r.splits):
        raise typer.Exit(1)


def _fmt_counts(counts: dict[str, int]) -> str:
    total = sum(counts.values()) or 1
    return ", ".join(f"{k} {v:,} ({100 * v / total:.0f}%)" for k, v in counts.items())


def render_stats(result: TaskStats) -> None:
    table = Table(title=f"{result.task} ({result.shape})", title_justify="left")
    for col, just in (
        ("split", "left"),
        ("records", "right"),
        ("expressions", "right"),
        ("labels", "left"),
        ("mean words", "left"),
        ("notes", "left"),
    ):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for s in result.splits:
        if s.error:
            table.add_row(s.split, "-", "-", "-", "-", "[red]not loaded (below)[/red]")
            continue
        notes = []
        if s.placeholder:
            notes.append("[bold yellow]placeholder labels[/bold yellow]: hidden by the authors, never scored")
        notes += [f"[yellow]{w}[/yellow]" for w in s.warnings]
        words = ", ".join(f"{k} {v}" for k, v in s.mean_words.items())
        table.add_row(s.split, f"{s.records:,}", f"{s.expressions:,}", _fmt_counts(s.labels), words, "\n".join(notes))
    console.print(table)
    # a load error names a path and its fix: printed whole below the table (soft-wrapped, so a path copies as one)
    for s in result.splits:
        if s.error:
            console.print(f"[red]{result.task} {s.split}[/red]: {rich_escape(str(s.error))}", soft_wrap=True)
    for s in result.splits:
        for field, counts in s.groups.items():
            if len(result.splits) > 1 and len(counts) <= 1:
                continue
            g = Table(title=f"{result.task} {s.split}: by {field} / label", title_justify="left")
            g.add_column(f"{field} / label")
            g.add_column("records", justify="right")
            for k, v in counts.items():
                g.add_row(k, f"{v:,}")
            console.print(g)
    if result.overlap:
        render_overlap(result.task, result.overlap)
    render_conflicts(result.task, result.conflicts)


def render_overlap(task: str, overlap) -> None:
    console.print(f"[bold]{task}[/bold]: overlap between splits (leakage check)")
    console.print(overlap)


def render_conflicts(task: str, conflicts, shown: int = 10) -> None:
    """Identical items with different gold labels: no model can be right on both copies."""
    if not conflicts:
        return
    console.print(
        f"[bold yellow]{task}: {len(conflicts)} item(s) occur with different gold labels[/bold yellow] "
        "(same text shown to the model; no model can be right on every copy)"
    )
    for c in conflicts[:shown]:
        console.print(f"  {rich_escape(str(c))}")
    if len(conflicts) > shown:
        console.print(f"  … and {len(conflicts) - shown} more (--json lists all)")


@app.command("show")
def show_cmd(
    task: _TaskArgument,
    split: TaskSplitOption = None,
    n: Annotated[int, typer.Option("-n", help="How many records.")] = 3,
    ids: Annotated[
        list[str] | None,
        typer.Option("--id", help="Print the record of this id instead: e.g. an item a published table names by id."),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Print the first records of a task (or those of --id) as JSON, to see exactly what methods will receive."""
    t = get_task(task)
    records = t.load(split, RunContext.create(data_dir))
    for r in records_with_ids(records, ids) if ids else records[:n]:
        typer.echo(json.dumps(r.to_dict(), ensure_ascii=False, indent=2))


@app.command("overlap")
def overlap_cmd(
    task: _TaskArgument,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Identical items and shared expressions between every pair of a task's splits (leakage check), and items
    that occur with different gold labels (within a split or across splits)."""
    t, ctx = get_task(task), RunContext.create(data_dir)  # one context: every split from the same folder
    loaded = {s: t.load(s, ctx, report=LoadReport()) for s in t.splits}
    report = overlap_report(loaded)
    conflicts = label_conflicts(loaded)
    if as_json:
        typer.echo(json.dumps({**report.to_dict(), "conflicts": [c.to_dict() for c in conflicts]}, indent=2))
    else:
        render_overlap(t.name, report)
        render_conflicts(t.name, conflicts)


@app.command("split")
def split_cmd(
    task: _TaskArgument,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the split files (JSONL of records).")],
    split: Annotated[
        str | None, typer.Option("--split", "-s", help="Which split to divide (default: train, else the task's default).")
    ] = None,
    folds: Annotated[int, typer.Option("--folds", "-k", help="k expression-disjoint folds (0: one dev split instead).")] = 0,
    dev_fraction: Annotated[float, typer.Option(help="Share of records in the dev split.")] = 0.1,
    seed: Annotated[int, typer.Option(help="Seed for the deterministic shuffle of expressions.")] = 0,
    data_dir: DataDirOption = None,
) -> None:
    """Write an expression-disjoint dev split, or k folds by expression (IMPLI's 10 folds by idiom)."""
    t = get_task(task)
    which = split or ("train" if "train" in t.splits else t.default_split)
    records = t.load(which, RunContext.create(data_dir, seed=seed))
    bare = sum(1 for r in records if not expression_of(r))
    if bare:
        console.print(f"[yellow]{bare} records have no expression; each is grouped with the records sharing its premise, if any[/yellow]")
    # records sharing a normalised expression or a premise form one group (IMPLI's derived spans differ
    # between pairs of one premise: grouping by the span alone let one idiom into several folds)
    key = linked_key(records, figurative_links)

    if folds:
        for i, (train, test) in enumerate(expression_folds(records, k=folds, seed=seed, key=key)):
            write_jsonl(out / f"fold{i}" / "train.jsonl", [r.to_dict() for r in train])
            write_jsonl(out / f"fold{i}" / "test.jsonl", [r.to_dict() for r in test])
            console.print(f"fold {i}: train {len(train):,}  test {len(test):,}")
    else:
        rest, dev = expression_disjoint_split(records, dev_fraction=dev_fraction, seed=seed, key=key)
        write_jsonl(out / "train.jsonl", [r.to_dict() for r in rest])
        write_jsonl(out / "dev.jsonl", [r.to_dict() for r in dev])
        console.print(f"train {len(rest):,}  dev {len(dev):,} (no expression shared) → {out}")


@app.command("spec-template")
def spec_template_cmd(
    shape: Annotated[str, typer.Argument(help="cloze | nli | generation")],
) -> None:
    """Print a starter task spec that maps your file's columns onto a figlang task shape."""
    from figlang.data.custom import write_task_spec_template

    typer.echo(write_task_spec_template(shape))
