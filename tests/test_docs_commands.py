"""Every `figlang …` command that README.md and docs/*.md show in a code block parses as written.

Each command is parsed by figlang's own command-line app down to its leaf command (the subcommand path,
every option and argument, the required ones present, values converted), without running it: a renamed
command, a dropped, misspelt or newly required option fails here, while nothing is computed. Commands are read from the repository root, as a reader
would paste them.
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import click.exceptions as _click_exceptions
import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
# README and every page of the documentation site (docs/results/ holds result files, not pages)
DOCS = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if "results" not in p.relative_to(REPO / "docs").parts[:1])]
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_PREFIXES = ("figlang ", ".venv/bin/figlang ", "python -m figlang.cli.main ", ".venv/bin/python -m figlang.cli.main ")


def _logical_lines(block: str) -> list[str]:
    """Lines with backslash continuations joined and trailing comments dropped."""
    out, current = [], ""
    for raw in block.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        out.append(current + line)
        current = ""
    if current:
        out.append(current)
    return out


def _argv(line: str) -> list[str] | None:
    """figlang's arguments in one shell line (after a prompt or an env assignment, before a pipe or a redirect)."""
    line = line.strip().removeprefix("$ ")
    for part in re.split(r"\s(?:&&|\|\||;)\s", line):
        part = part.strip()
        while re.match(r"^[A-Z_][A-Z0-9_]*=\S*\s", part):  # FOO=bar figlang …
            part = part.split(None, 1)[1]
        prefix = next((p for p in _PREFIXES if part.startswith(p)), None)
        if prefix is None:
            continue
        try:
            tokens = shlex.split(part[len(prefix) :], comments=True)
        except ValueError:
            return None
        cut = next((i for i, t in enumerate(tokens) if t in ("|", ">", ">>", "2>", "&>", "2>&1") or t.startswith((">", "2>"))), len(tokens))
        return tokens[:cut]
    return None


_ASSIGN = re.compile(r"(?:^|;\s*)([A-Z_][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)")


def _expand(line: str, variables: dict[str, str]) -> str:
    """$NAME / ${NAME} replaced by the values the same code block assigned them (as the shell would)."""
    return re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: variables.get(m.group(1), m.group(0)), line)


def documented_commands() -> list[tuple[str, int, list[str]]]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in _FENCE.finditer(text):
            first_line = text[: block.start()].count("\n") + 1
            variables: dict[str, str] = {}
            for offset, line in enumerate(_logical_lines(block.group(1))):
                if re.match(r"^\s*[A-Z_][A-Z0-9_]*=", line) and not _argv(line):  # D="--data-dir …"; G="…" (not FOO=1 figlang …)
                    for name, value in _ASSIGN.findall(line.split(" #", 1)[0]):
                        variables[name] = _expand(value.strip("\"'"), variables)
                    continue
                argv = _argv(_expand(line, variables))
                if argv:
                    found.append((f"{doc.relative_to(REPO)}:{first_line + offset + 1}", offset, argv))
    return found


COMMANDS = documented_commands()
try:  # typer ships its own copy of click in recent versions
    from typer._click.exceptions import UsageError as _TyperUsageError
except ImportError:  # pragma: no cover
    _TyperUsageError = None

CLICK_ERRORS = tuple(e for e in (_TyperUsageError, _click_exceptions.UsageError) if e is not None)


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 40
    assert {where.split(":")[0] for where, _, _ in COMMANDS} >= {
        "README.md",
        "docs/research/trained_models.md",
        "docs/research/zero_shot_results.md",
    }


@functools.lru_cache(maxsize=1)
def _root_command():
    """figlang's click command tree (typer builds it from the signatures: about 2 s, so once)."""
    import typer

    from figlang.cli.main import app

    return typer.main.get_command(app)


def parse(argv: list[str]):
    """Parse ``figlang ARGV`` down to its leaf command as click would before running it (subcommand path, every
    option and argument, required ones present, values converted), without running it; the leaf command."""
    root = _root_command()
    ctx = root.make_context("figlang", list(argv))
    command = root
    while hasattr(command, "resolve_command"):  # a group (typer ships its own click: no isinstance on click.Group)
        name, sub, rest = command.resolve_command(ctx, [*getattr(ctx, "_protected_args", getattr(ctx, "protected_args", [])), *ctx.args])
        ctx = sub.make_context(name, rest, parent=ctx)
        command = sub
    return command


@pytest.mark.parametrize("where,argv", [(w, a) for w, _, a in COMMANDS], ids=[w for w, _, _ in COMMANDS])
def test_documented_command_parses(where, argv, monkeypatch):
    monkeypatch.chdir(REPO)
    try:
        parse(argv)
    except CLICK_ERRORS as err:
        pytest.fail(f"{where}: figlang {' '.join(argv)}: {err.format_message()}")


def test_a_misspelt_option_or_command_fails():
    from figlang.cli.main import app

    with pytest.raises(CLICK_ERRORS, match="methd"):
        parse(["eval", "-t", "flute", "--methd", "majority"])
    with pytest.raises(CLICK_ERRORS, match="evaluate"):
        parse(["evaluate", "-t", "flute"])
    with pytest.raises(CLICK_ERRORS, match="model"):
        parse(["train", "-t", "idiom-cloze", "-m", "mc", "-o", "runs/x"])  # --model is required
    assert parse(["eval", "-t", "flute", "-m", "majority"]).name == "eval"
    assert CliRunner().invoke(app, ["eval", "-t", "flute", "-m", "majority", "--help"]).exit_code == 0


def test_no_absolute_machine_paths_in_readme_or_docs():
    """Docs and committed result files name paths relative to the repository (or ~): another machine's /tmp,
    /root or /work means nothing to a reader."""
    pattern = re.compile(r"/(root|home|work|tmp)/")
    files = [REPO / "README.md", *(p for p in (REPO / "docs").rglob("*") if p.is_file() and p.suffix != ".png")]
    found = []
    from figlang.core.io import read_bytes

    for path in files:
        try:
            text = read_bytes(path).decode("utf-8")  # committed predictions are gzip'd: read them too
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found[:20])
