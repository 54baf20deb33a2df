"""`figlang serve`: the local web app over figlang's data, runs, interpretation and review queues.

Every page calls figlang's own functions (the task registry, the run readers, `figlang compare`, the FLUTE
creator's and IMPLI generator's review queues, `figlang.interpret`); the app only routes requests to them and
renders the answers. It serves files only from the configured runs folder (plots) and writes only the review files
the CLI writes (``RUN/review/verdicts.jsonl``, through the review queue's ``record_verdict``).

The pages are blueprints (:mod:`.browse_pages`, :mod:`.review_pages`, :mod:`.human_pages`) over one
:class:`~figlang.web.serving.ServeConfig`, which the app keeps in ``app.config["FIGLANG"]`` and every page reads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from flask import Flask, render_template, request

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.evaluation.run_index import PREDICTIONS_FILE, PredictionIndex, find_runs
from figlang.web import browse_pages, human_pages, review_pages
from figlang.web.paths import OutsideRootError
from figlang.web.serving import FormExpired, Jobs, ServeConfig, ServeState, StillLoading, bold_markup, fail, index_key, num, pct


def create_app(
    runs_dir: str | Path,
    data_dir: str | Path | None = None,
    *,
    ctx: RunContext | None = None,
    testing: bool = False,
    warm: bool = True,
    wait: float = 0.6,
) -> Flask:
    """The web app serving ``runs_dir`` (run folders, FLUTE creator runs) and the datasets of the run context ``ctx``
    (else of ``data_dir``).

    ``warm`` indexes every run's predictions in a background thread once the first page is served; ``wait`` is how long a page waits
    for a slow load before it shows a "loading" page that reloads itself."""
    return make_app(ServeConfig.of(runs_dir, data_dir, ctx=ctx, testing=testing, warm=warm, wait=wait))


def make_app(config: ServeConfig) -> Flask:
    """The web app for a configuration: the blueprints, the error pages, the template helpers and the warm-up."""
    app = Flask(__name__)
    app.config.update(TESTING=config.testing, MAX_CONTENT_LENGTH=1 << 20, FIGLANG=config)
    app.extensions["figlang"] = ServeState(Jobs(wait=config.wait))
    app.jinja_env.filters.update(bold=bold_markup, pct=pct, num=num)
    app.jinja_env.globals.update(csrf_token=config.csrf_token, runs_root=config.runs_dir, data_dir=config.data_dir)
    _error_pages(app)
    for blueprint in (browse_pages.pages, review_pages.pages, human_pages.pages):
        app.register_blueprint(blueprint)
    if config.warm:
        _warm_after_first_page(app, config)
    return app


def _error_pages(app: Flask) -> None:
    @app.errorhandler(404)
    def not_found(_e: Any) -> tuple[str, int]:
        return fail(404, "Not found", f"There is no page at {request.path}.")

    @app.errorhandler(500)
    def server_error(_e: Any) -> tuple[str, int]:  # the traceback goes to the server's terminal, not the page
        return fail(
            500,
            "Something went wrong",
            "figlang could not show this page; the terminal running `figlang serve` "
            "has the details. Please report it with the address of this page.",
        )

    @app.errorhandler(OutsideRootError)
    def outside(e: OutsideRootError) -> tuple[str, int]:
        return fail(403, "Refused", str(e))

    @app.errorhandler(FiglangError)
    def figlang_error(e: FiglangError) -> tuple[str, int]:
        return fail(422, "Cannot show this", str(e))

    @app.errorhandler(StillLoading)
    def still_loading(e: StillLoading) -> tuple[str, int]:
        return render_template("loading.html", what=e.what), 202

    @app.errorhandler(FormExpired)
    def form_expired(_e: FormExpired) -> tuple[str, int]:
        return fail(400, "Form expired", "This form came from an older page or another site: reload the page and try again.")


def _warm_after_first_page(app: Flask, config: ServeConfig) -> None:
    """Index every run's predictions once the first page is out (not before: it would slow that page down)."""
    started = threading.Event()
    jobs = app.extensions["figlang"].jobs

    def warm_up() -> None:
        for run in find_runs(config.runs_dir):
            if run.has_predictions and not run.problem:
                path = run.path / PREDICTIONS_FILE
                jobs.submit(index_key(path), lambda p=path: PredictionIndex.build(p))

    @app.after_request
    def _warm(response: Any) -> Any:
        if not started.is_set():
            started.set()
            timer = threading.Timer(0.5, warm_up)
            timer.daemon = True
            timer.start()
        return response
