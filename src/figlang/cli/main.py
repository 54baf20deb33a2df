"""The `figlang` command line. It depends on everything; nothing depends on it."""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from figlang import __version__
from figlang.core.errors import FiglangError, missing_extra
from figlang.cli import (
    build_flute,
    build_impli,
    build_narratives,
    data_cmds,
    eval_cmds,
    human_cmds,
    knowledge_cmds,
    models_cmds,
    suite_cmds,
    train_cmds,
)
from figlang.cli.common import err_console
from figlang.cli.data_download import download_cmd, verify_cmd
from figlang.cli.explain_cmds import explain_cmd
from figlang.cli.export_cmds import app as export_app
from figlang.cli.interpret_cmds import interpret_cmd
from figlang.cli.serve_cmds import serve_cmd

app = typer.Typer(
    name="figlang",
    help="figlang: figurative-language benchmarks (figurative narratives, FLUTE, IMPLI), "
    "the methods that solve them and the pipelines that build them.\n\n"
    "Start with `figlang data stats --data-dir DIR` to see the benchmarks, and "
    "`figlang suite --data-dir DIR` to evaluate the default offline model on all three.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(data_cmds.app, name="data")
data_cmds.app.command("download")(download_cmd)
data_cmds.app.command("verify")(verify_cmd)
app.command("suite")(suite_cmds.suite_cmd)
app.command("eval")(eval_cmds.eval_cmd)
app.command("methods")(eval_cmds.methods_cmd)
app.command("compare")(eval_cmds.compare_cmd)
app.command("ensemble")(eval_cmds.ensemble_cmd)
app.command("report")(eval_cmds.report_cmd)
app.add_typer(human_cmds.app, name="human")
app.add_typer(models_cmds.app, name="models")
app.add_typer(knowledge_cmds.app, name="knowledge")
app.add_typer(export_app, name="export")
app.command("train")(train_cmds.train_cmd)
app.command("relations")(train_cmds.relations_cmd)
app.command("simulatability")(train_cmds.simulatability_cmd)
app.command("figure-type")(train_cmds.figure_type_cmd)
app.command("serve")(serve_cmd)
app.command("interpret")(interpret_cmd)
app.command("explain")(explain_cmd)

build_app = typer.Typer(
    help="Build new figurative data with the papers' pipelines: `narratives` (mine a corpus for idiom and "
    "simile narratives), `impli` (IMPLI-style NLI pairs), `flute` (FLUTE-style pairs with an LLM in the loop "
    "and expert verification).",
    no_args_is_help=True,
)
build_app.add_typer(build_narratives.app, name="narratives")
build_app.add_typer(build_impli.app, name="impli")
build_app.add_typer(build_flute.app, name="flute")
app.add_typer(build_app, name="build")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"figlang {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """figlang command line."""


def main() -> None:
    """Entry point: run the app, printing figlang's own errors as one clear line instead of a traceback."""
    try:
        rc = app(standalone_mode=False)  # click returns a command's typer.Exit code instead of exiting
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except FiglangError as err:
        err_console.print(f"[bold red]error:[/bold red] {err}")
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except ImportError as exc:
        extra = missing_extra(exc)  # a library of an extra the core install leaves out: say which extra, in one line
        if extra is None:
            raise
        err_console.print(f"[bold red]error:[/bold red] {escape(str(extra))}", soft_wrap=True)
        sys.exit(3)
    except Exception as exc:
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # click's usage errors (typer vendors click)
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
