"""MkDocs hooks for figlang's site (mkdocs.yml ``hooks:``).

Before each build, the generated pages (scripts/docs_pages.py: the CLI reference, the task, method and model
catalogues, the results pages) are generated afresh and compared with the committed copies: a stale or missing
one is a warning, which `mkdocs build --strict` (and so `make test`) turns into a failure, naming the command
that rewrites them.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.figlang")


def _pages_module():
    path = Path(__file__).with_name("docs_pages.py")
    spec = importlib.util.spec_from_file_location("figlang_docs_pages", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_pre_build(config, **kwargs) -> None:
    pages = _pages_module()
    for page in pages.stale(Path(config["docs_dir"])):
        log.warning(f"stale generated page docs/{page}: run `python scripts/docs_pages.py` and commit it")


_ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|obj|exc):(?=<code>)")


def on_page_content(html: str, **kwargs) -> str:
    """Docstrings cross-reference in Sphinx's style (:func:`tasks`); mkdocstrings renders the name as code and leaves
    the role's text in front of it: drop that text."""
    return _ROLE.sub("", html)
