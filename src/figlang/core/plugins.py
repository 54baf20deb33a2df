"""Third-party tasks and methods: the package entry points figlang reads (``figlang.tasks``, ``figlang.methods``).

A package adds to figlang by declaring entry points in its ``pyproject.toml``::

    [project.entry-points."figlang.tasks"]
    my-task = "my_package.tasks:my_task"          # a Task, or a callable returning Task(s)

    [project.entry-points."figlang.methods"]
    my-method = "my_package.methods:MyMethod"     # a Method subclass, or register(registry)

The registries read them once, on first use, after the built-ins: installing a package is all it
takes, and importing figlang never imports a plugin. It sits in the lowest layer (it imports only
figlang.core.errors), so every layer may use it.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from figlang.core.errors import FiglangError


def _where(ep: EntryPoint) -> str:
    dist = getattr(getattr(ep, "dist", None), "name", None)
    return f"{ep.name} = {ep.value}" + (f" (package {dist})" if dist else "")


def entry_point_objects(group: str) -> list[tuple[str, Any]]:
    """(description, loaded object) of every entry point of ``group``, sorted by name for a stable order.

    A plugin that fails to import raises :class:`figlang.core.errors.FiglangError` naming the
    entry point and its package, so a broken plugin says which one it is and how to get rid of it.
    """
    out: list[tuple[str, Any]] = []
    for ep in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
        try:
            obj = ep.load()
        except Exception as err:  # any import error of a third-party package: say which one
            raise FiglangError(
                f"cannot load the figlang plugin {_where(ep)} from entry-point group {group!r}: {type(err).__name__}: {err}. "
                "Fix or uninstall that package (pip uninstall ...)"
            ) from err
        out.append((_where(ep), obj))
    return out
