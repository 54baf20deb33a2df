"""Options and helpers shared by the figlang commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from figlang.core.errors import FiglangError

console = Console()
err_console = Console(stderr=True)

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        envvar="FIGLANG_DATA_DIR",
        help="Folder holding the datasets (<data-dir>/fig_narrative, flute, impli …). "
        "Default: $FIGLANG_DATA_DIR, else figlang's user cache (filled by `figlang data download`).",
        show_default=False,
    ),
]

RequestCacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Request cache folder (default: figlang's user cache). Reruns and resumed runs read it."),
]
NoRequestCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the request cache.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
JsonReportOption = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
QueueLimitOption = Annotated[int | None, typer.Option("--limit", min=1, help="At most N rows.")]
SpacyModelOption = Annotated[str, typer.Option("--model", help="spaCy pipeline (package name or path).")]
TaskSplitOption = Annotated[str | None, typer.Option("--split", "-s", help="Split (default: the task's default).")]
EvalSplitOption = Annotated[str | None, typer.Option("--split", "-s", help="Split (default: the task's dev/val split).")]


def parse_key_values(pairs: list[str] | None, flag: str = "--option") -> dict[str, Any]:
    """``-O KEY=VALUE`` pairs as a dict: each value read as JSON (5, 0.5, true, [1, 2], "x"), else kept as text.

    One parser for every command's ``-O``, so one value means the same everywhere; ``True``/``False``
    count as booleans too (people write them as in Python). A pair without ``=`` is refused, naming it.
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise FiglangError(f"{flag} expects KEY=VALUE (e.g. {flag} threads=1), got {pair!r}")
        value = value.strip()
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = {"true": True, "false": False}.get(value.lower(), value)
    return out


def merge_flag_options(flags: dict[str, tuple[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    """A command's options: its flags that were given (``{"k": ("--k", 3)}``; None: not given) and its ``-O`` pairs.

    A key given both ways is refused, naming both: one run, one value (``-O k=9`` never silently overrides ``--k 3``).
    """
    given = {key: (flag, value) for key, (flag, value) in flags.items() if value is not None}
    twice = sorted(set(given) & set(options))
    if twice:
        said = "; ".join(f"{given[key][0]} {given[key][1]} and -O {key}={options[key]}" for key in twice)
        raise FiglangError(f"option {', '.join(map(repr, twice))} given twice ({said}): give it once")
    return {**{key: value for key, (_, value) in given.items()}, **options}


def print_problems(what: str, problems: list[str], limit: int = 10, counted: str = "problem(s)") -> None:
    """Problems found in a user's file: a count (``counted`` says of what), the first ``limit`` with their locations,
    and how many more."""
    if not problems:
        return
    err_console.print(f"[yellow]{what}: {len(problems)} {counted}[/yellow]")
    for p in problems[:limit]:
        err_console.print(f"  {p}", soft_wrap=True)  # each names a file and line: whole, so it copies as one
    if len(problems) > limit:
        err_console.print(f"  … and {len(problems) - limit} more")
