"""The local web app (`figlang serve`): pages over figlang's data, runs, interpretation and review queues."""

from figlang.web.app import create_app

__all__ = ["create_app"]
