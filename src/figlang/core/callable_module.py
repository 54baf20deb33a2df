"""Keep ``figlang.explain`` and ``figlang.interpret`` callable after their modules are imported.

Why: the package root exports the functions lazily, but ``import figlang.explain`` binds the *module*
over that name on the package, after which ``figlang.explain(...)`` would fail. Giving such a module a
class with ``__call__`` makes both spellings work.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Let module ``a.b.name`` be called as its own function ``name``."""
    sys.modules[module_name].__class__ = _CallableModule
