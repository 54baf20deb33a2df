"""The run context: what a run is given once where it starts, and hands down to the parts that need it.

A CLI command, a ``figlang.*`` API function or the web app builds one :class:`RunContext` (data
folder, cache folder, seed, device, threads) with :meth:`RunContext.create`; the harness, the task
loaders, the methods (``Method.bind(task, ctx)``) and the trainer read it, instead of each taking
``data_dir``/``cache_dir``/``seed`` of its own and resolving them again. The data folder is resolved
here, by :func:`figlang.core.paths.resolve_data_dir`'s one rule (explicit folder, then
``$FIGLANG_DATA_DIR``, then the user cache; made absolute as given, links not followed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from figlang.core.errors import FiglangError
from figlang.core.paths import default_cache_dir, resolve_data_dir


@dataclass(frozen=True)
class RunContext:
    """Where a run reads its data and keeps its caches, its seed, and the device and threads it may use.

    Frozen: every part of one run sees the same folders and seed. Build it with :meth:`create`, which
    resolves the folders; the fields are then absolute paths.
    """

    data_dir: Path  # the datasets (<data_dir>/fig_narrative, flute, impli …)
    cache_dir: Path  # the request cache (answers keyed by method fingerprint and item)
    seed: int = 0
    device: str | None = None
    threads: int | None = None

    @classmethod
    def create(
        cls,
        data_dir: str | Path | None = None,
        cache_dir: str | Path | None = None,
        seed: int = 0,
        device: str | None = None,
        threads: int | None = None,
    ) -> RunContext:
        """The context of a run: ``data_dir`` as given (else ``$FIGLANG_DATA_DIR``, else the user cache's
        ``data``), ``cache_dir`` as given (else ``$FIGLANG_CACHE_DIR``, else the user cache)."""
        cache = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        return cls(resolve_data_dir(data_dir), cache, int(seed), device, threads)

    def with_seed(self, seed: int) -> RunContext:
        """The same context with another seed (a sweep's runs share folders, not seeds)."""
        return replace(self, seed=int(seed))


def run_context(
    ctx: RunContext | None = None,
    *,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    seed: int | None = None,
) -> RunContext:
    """``ctx``, or a context made from the old keyword arguments of a public function (``data_dir=`` …).

    A public function that takes both refuses a context *and* a folder: the run would read two folders."""
    if ctx is not None:
        given = [name for name, value in (("data_dir", data_dir), ("cache_dir", cache_dir)) if value is not None]
        if given:
            raise FiglangError(f"give either ctx= or {' and '.join(given)}=, not both: the run context already names its folders")
        return ctx if seed is None or seed == ctx.seed else ctx.with_seed(seed)
    return RunContext.create(data_dir, cache_dir, 0 if seed is None else seed)
