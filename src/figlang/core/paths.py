"""Where figlang finds datasets: ``--data-dir``, then ``FIGLANG_DATA_DIR``, then the user cache.

Inside the data directory each dataset keeps its public repository's layout:
``<data_dir>/<dataset>/<path as in the repository>`` (``fig_narrative/data/idiom/dev.jsonl``).
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

ENV_VAR = "FIGLANG_DATA_DIR"


def default_cache_dir() -> Path:
    """figlang's per-user cache root (models, request caches, downloaded data)."""
    env = os.environ.get("FIGLANG_CACHE_DIR")
    return Path(env).expanduser() if env else Path(user_cache_dir("figlang"))


def resolve_data_dir(explicit: str | Path | None = None) -> Path:
    """The data directory to use: the explicit argument, then $FIGLANG_DATA_DIR, then the user cache.

    The one rule for the data folder: a run resolves it once, when its :class:`figlang.core.context.RunContext`
    is made where the run starts (a CLI command, a ``figlang.*`` function, the web app), and carries the context down. The path is made absolute *as given*: symbolic links are not resolved, so a data
    folder reached through a link (a common way to share datasets) is reported under the name the
    user gave it, in task files, results and errors alike. Idempotent on its own output.
    """
    if explicit:
        return _absolute(explicit)
    env = os.environ.get(ENV_VAR)
    if env:
        return _absolute(env)
    return default_cache_dir() / "data"


def _absolute(path: str | Path) -> Path:
    """``path`` made absolute without resolving symbolic links (``..`` steps are collapsed as written)."""
    return Path(os.path.abspath(Path(path).expanduser()))


def dataset_dir(dataset: str, data_dir: str | Path | None = None) -> Path:
    return resolve_data_dir(data_dir) / dataset
