"""Options and helpers shared by the figlang commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)

DataDirOption = Annotated[
    Optional[Path],
    typer.Option(
        "--data-dir",
        envvar="FIGLANG_DATA_DIR",
        help="Folder holding the datasets (<data-dir>/fig_narrative, flute, impli …). "
        "Default: $FIGLANG_DATA_DIR, else figlang's user cache (filled by `figlang data download`).",
        show_default=False,
    ),
]


def print_problems(what: str, problems: list[str], limit: int = 10) -> None:
    """Problems found in a user's file: a count, the first ``limit`` with their locations, and how many more."""
    if not problems:
        return
    err_console.print(f"[yellow]{what}: {len(problems)} problem(s)[/yellow]")
    for p in problems[:limit]:
        err_console.print(f"  {p}")
    if len(problems) > limit:
        err_console.print(f"  … and {len(problems) - limit} more")
