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
    """The data directory to use: the explicit argument, then $FIGLANG_DATA_DIR, then the user cache."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    return default_cache_dir() / "data"


def dataset_dir(dataset: str, data_dir: str | Path | None = None) -> Path:
    return resolve_data_dir(data_dir) / dataset
