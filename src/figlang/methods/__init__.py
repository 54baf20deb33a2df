"""Methods: the Method interface and registry (:mod:`.base`), baselines, the prompted LM methods (:mod:`.prompted`)
and figlang's trained models (:mod:`.trained`).

The package also holds the public ``figlang.methods()`` (the registered method names): once this package is
imported, ``figlang.methods`` names the package on the root, so the package is made callable as that function.
"""

from __future__ import annotations

from figlang.core.callable_module import make_callable
from figlang.methods.base import get_methods


def methods() -> list[str]:
    """The registered method names: baselines, model-backed, ``trained``, then plugins' (entry points ``figlang.methods``)."""
    return get_methods().names()


make_callable(__name__)  # figlang.methods() keeps working after `import figlang.methods.…`
