"""``figlang data download`` and ``figlang data verify``: typer commands the main CLI registers.

Register them with::

    data_app.command("download")(download_cmd)
    data_app.command("verify")(verify_cmd)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from figlang.core.context import RunContext
from figlang.data.download import DownloadReport, VerifyReport, download, verify
from figlang.core.errors import FiglangError
from figlang.data.sources import BASE_URL_ENV, DEFAULT_BASE_URL

NAMES_HELP = (
    "Datasets to act on (fig_narrative, flute, impli, pie_english, tsvetkov_metaphor, gutenberg), "
    "or DATASET/GLOB for some of its files, e.g. 'flute/testgolddata/*'. Default: all."
)
DATA_DIR_HELP = "Data directory (default: $FIGLANG_DATA_DIR, then the user cache). Files go to DATA_DIR/<dataset>/<path>."
_NamesArgument = Annotated[list[str] | None, typer.Argument(help=NAMES_HELP, show_default=False)]
_DataDirOption = Annotated[Path | None, typer.Option("--data-dir", help=DATA_DIR_HELP, file_okay=False)]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(1)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f}"


def print_download_report(report: DownloadReport, console: Console) -> None:
    """A per-dataset summary, then every failure and note, so nothing is reported silently."""
    table = Table(title=f"figlang data download -> {escape(str(report.data_dir))}")
    statuses = ("downloaded", "resumed", "skipped", "kept", "failed")
    table.add_column("dataset", no_wrap=True)
    for status in statuses:
        table.add_column(status, justify="right")
    table.add_column("MiB received", justify="right")
    received: dict[str, int] = {}
    for r in report.results:
        received[r.dataset] = received.get(r.dataset, 0) + r.bytes
    for dataset, counts in report.counts().items():
        cells = [str(counts.get(s, 0) or "") for s in statuses]
        if counts.get("failed"):
            cells[-1] = f"[bold red]{counts['failed']}[/]"
        table.add_row(dataset, *cells, _mib(received[dataset]))
    console.print(table)
    for r in report.results:
        if r.note:
            console.print(f"[dim]{escape(r.key)}: {escape(r.note)}[/]")
    if report.failures:
        console.print(f"[bold red]{len(report.failures)} file(s) failed:[/]")
        for r in report.failures:
            console.print(f"  [red]{escape(r.key)}[/]: {escape(str(r.error))}")
    else:
        kept = sum(r.status == "kept" for r in report.results)
        extra = f" ({kept} kept with an expected local change)" if kept else ""
        console.print(f"[green]all {len(report.results)} file(s) present and verified{extra}[/]")


def print_verify_report(report: VerifyReport, console: Console) -> None:
    table = Table(title=f"figlang data verify {escape(str(report.data_dir))}")
    for name, justify in (("dataset", "left"), ("ok", "right"), ("missing", "right"), ("modified", "right"), ("expected changes", "right")):
        table.add_column(name, justify=justify, no_wrap=name == "dataset")  # type: ignore[arg-type]
    known: dict[str, int] = {}
    for c in report.checks:
        if c.known:
            known[c.dataset] = known.get(c.dataset, 0) + 1
    for dataset, counts in report.counts().items():
        missing, modified = counts.get("missing", 0), counts.get("modified", 0)
        table.add_row(
            dataset,
            str(counts.get("ok", 0)),
            f"[red]{missing}[/]" if missing else "",
            f"[yellow]{modified}[/]" if modified else "",
            str(known.get(dataset, "")),
        )
    console.print(table)
    for c in report.checks:
        if c.status == "ok" and not c.note:
            continue
        colour = "green" if c.status == "ok" else "yellow" if c.known else "red"
        console.print(f"  [{colour}]{c.status:8}[/] {escape(c.key)}" + (f": {escape(c.note)}" if c.note else ""))
    if report.ok:
        console.print(f"[green]{len(report.checks)} file(s) checked, no problems[/]")
    else:
        console.print(f"[bold red]{len(report.failures)} of {len(report.checks)} file(s) missing or modified[/]")


def download_cmd(
    names: _NamesArgument = None,
    data_dir: _DataDirOption = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help=f"Mirror to fetch from, laid out as BASE/OWNER/REPO/COMMIT/PATH (default: ${BASE_URL_ENV}, then {DEFAULT_BASE_URL}).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Download again even files that are present and verified (also replaces deliberate local changes)."),
    ] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")] = True,
    timeout: Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds to wait for the server before giving up on a file.")] = 60.0,
) -> None:
    """Download the datasets from their public GitHub repositories at pinned commits, checking every file's SHA-1."""
    try:
        ctx = RunContext.create(data_dir)  # the run's context: built here, once, and handed down
        report = download(names or None, base_url=base_url, force=force, progress=progress, timeout=timeout, ctx=ctx)
    except FiglangError as exc:
        raise _fail(str(exc)) from None
    print_download_report(report, Console())
    if not report.ok:
        raise typer.Exit(1)


def verify_cmd(
    names: _NamesArgument = None,
    data_dir: _DataDirOption = None,
) -> None:
    """Check local dataset files against the manifest: ok, missing, or modified (exit 1 if any is missing or unexpectedly modified)."""
    try:
        report = verify(names or None, ctx=RunContext.create(data_dir))  # the run's context: built here, once
    except FiglangError as exc:
        raise _fail(str(exc)) from None
    print_verify_report(report, Console())
    if not report.ok:
        raise typer.Exit(1)
