"""The documentation site builds offline in strict mode (`make docs`), covers every CLI command and public API
function, and fails on a broken link or a stale generated page.

`mkdocs build --strict` turns every warning into a failure: a link to a page or anchor that does not exist, a page
left out of the navigation, a docstring mkdocstrings cannot render, and (scripts/mkdocs_hooks.py) a generated page
(scripts/docs_pages.py) whose committed copy differs from a fresh generation.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([*MKDOCS, "-f", str(config), "-d", str(site)], capture_output=True, text=True, env=env, timeout=600, cwd=REPO)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    res = _build(REPO / "mkdocs.yml", out)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    assert "WARNING" not in res.stderr, res.stderr[-3000:]
    return out


def test_the_site_builds_offline_and_strict(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "figlang" in index
    # offline: no web fonts or CDN assets on any page (Material's `offline` plugin, `font: false`)
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, page
        assert not re.search(r"<script[^>]+src=\"https?://", text), page
    # the web app's screenshots and the research pages are in it
    assert (site / "images" / "web-run.png").is_file()
    assert (site / "research" / "flute_explanations" / "index.html").is_file() or (site / "research" / "flute_explanations.html").is_file()


def _html(site: Path, page: str) -> str:
    for candidate in (site / page / "index.html", site / f"{page}.html"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise AssertionError(f"no page {page} in the built site")


def test_every_cli_command_has_its_reference_entry(site):
    import typer

    from figlang.cli.main import app

    def walk(command, path):
        yield " ".join(path)
        for name, sub in (getattr(command, "commands", {}) or {}).items():
            yield from walk(sub, (*path, name))

    commands = list(walk(typer.main.get_command(app), ("figlang",)))
    assert len(commands) >= 40
    html = _html(site, "reference/cli")
    missing = [c for c in commands if f"<code>{c}</code>" not in html]
    assert not missing, missing


def test_every_public_api_function_has_its_reference_entry(site):
    import figlang

    html = _html(site, "reference/api")
    names = [n for n in figlang.__all__ if n != "__version__"] + ["explain", "interpret"]
    missing = [n for n in names if not re.search(rf'id="[\w.]*\.{n}"', html)]
    assert not missing, missing
    assert "Score an existing prediction file" in html  # rendered from the docstring, not just named


def test_a_broken_link_or_a_stale_generated_page_fails_the_build(tmp_path):
    """The same build on a copy of the docs with one broken link and one edited generated page fails, naming both."""
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs, ignore=lambda d, names: ["results"] if Path(d) == REPO / "docs" else [])
    (docs / "results").symlink_to(REPO / "docs" / "results")
    page = docs / "how-to" / "data.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    tasks = docs / "reference" / "tasks.md"
    tasks.write_text(tasks.read_text(encoding="utf-8").replace("| `flute` |", "| `flute-old` |"), encoding="utf-8")
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "#"))
    config["docs_dir"] = str(docs)
    config["hooks"] = [str(REPO / h) for h in config["hooks"]]
    cfg = tmp_path / "mkdocs.yml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    res = _build(cfg, tmp_path / "site")
    assert res.returncode != 0
    assert "no-such-page.md" in res.stderr, res.stderr[-3000:]
    assert "stale generated page docs/reference/tasks.md" in res.stderr, res.stderr[-3000:]


def test_the_readme_is_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250
