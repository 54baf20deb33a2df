"""One name per concept across the CLI: a short option means the same long option in every command."""

from __future__ import annotations

import typer.main

from figlang.cli.main import app

# short option → the long option it stands for wherever it is used
SHORT_MEANS = {"-m": "--method"}


def _commands(command, path=()):
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _commands(sub, (*path, name))


def short_option_clashes(root) -> list[str]:
    clashes = []
    for path, command in _commands(root):
        for param in command.params:
            opts = [*param.opts, *param.secondary_opts]
            for short, long in SHORT_MEANS.items():
                if short in opts and long not in opts:
                    clashes.append(f"figlang {' '.join(path)}: {short} is {'/'.join(o for o in opts if o.startswith('--'))}, not {long}")
    return clashes


def test_m_is_always_method():
    clashes = short_option_clashes(typer.main.get_command(app))
    assert not clashes, "\n".join(clashes)


def test_the_check_sees_a_clash():
    """The check can fail: a command whose -m is --model is found."""
    probe = typer.Typer()

    @probe.command()
    def knowledge(model: str = typer.Option("x", "--model", "-m")) -> None:  # noqa: B008  the old spelling, on purpose
        pass

    @probe.command()
    def other() -> None:
        pass

    clashes = short_option_clashes(typer.main.get_command(probe))
    assert clashes == ["figlang knowledge: -m is --model, not --method"]


def test_every_data_dir_option_names_the_default_figlang_uses():
    """--data-dir defaults to $FIGLANG_DATA_DIR, then figlang's user cache (data.paths.resolve_data_dir) in every
    command, and its help says so (figlang ensemble once said ../shared/data)."""
    wrong = [
        f"figlang {' '.join(path)}: {param.help}"
        for path, command in _commands(typer.main.get_command(app))
        for param in command.params
        if "--data-dir" in param.opts and not ("$FIGLANG_DATA_DIR" in (param.help or "") and "user cache" in (param.help or ""))
    ]
    assert not wrong, "\n".join(wrong)
