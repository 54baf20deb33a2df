"""`figlang serve`: the local web app over tasks, runs, comparisons, interpretation and review queues."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.cli.common import DataDirOption, console


def serve_cmd(
    runs: Annotated[
        Path,
        typer.Option(
            "--runs",
            help="Folder holding your run folders (`figlang eval --out DIR`) and FLUTE creator runs "
            "to review; searched recursively. Only files under it (and the data folder) are served.",
        ),
    ],
    data_dir: DataDirOption = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to bind. The default serves this machine only; another address exposes the review forms to the network.",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0 picks a free one).")] = 8000,
) -> None:
    """Browse tasks, runs (errors, plots, per-group accuracy), compare two runs, interpret text and review generated pairs
    in a browser.

    Example: figlang serve --runs runs/ --data-dir ../shared/data, then open http://127.0.0.1:8000/ .
    Stop with Ctrl-C.
    """
    from werkzeug.serving import make_server

    from figlang.web import create_app

    ctx = RunContext.create(data_dir)  # the run's context: built here, once; the task, interpret and compare pages read its folder
    app = create_app(runs, ctx=ctx)
    try:
        server = make_server(host, port, app, threaded=True)
    except OSError as exc:  # the port is taken, or the address is not this machine's
        raise FiglangError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): choose another --port, or stop what uses it") from None
    url = f"http://{host}:{server.server_port}/"
    console.print(f"figlang serve: [bold]{url}[/bold] (runs: {runs}; Ctrl-C stops)", highlight=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.server_close()
