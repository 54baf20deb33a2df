"""What a task is: :class:`Task`, a named set of records of one shape in one or more splits.

Its own module, below the registry, the built-in tasks (:mod:`figlang.data.tasks`) and user spec
tasks (:mod:`figlang.data.custom`): each of those names a Task, and the registry reads both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError, LoadOptions, LoadReport
from figlang.core.paths import resolve_data_dir
from figlang.data.records import Record, Shape

Loader = Callable[[str, Path, LoadOptions], list[Record]]
FilesFor = Callable[[str, Path], list[Path]]


@dataclass(frozen=True)
class Task:
    """What to ask: a named set of records of one shape, in one or more splits."""

    name: str
    shape: Shape
    description: str
    splits: tuple[str, ...]
    loader: Loader
    files_for: FilesFor  # the files a split is read from (for checksums and download hints)
    default_split: str
    labels: tuple[str, ...] = ()  # closed label set (NLI); empty for cloze/generation
    datasets: tuple[str, ...] = ()  # data folders the task needs
    group_by: tuple[str, ...] = ()  # record fields worth a per-group breakdown (figure_type, pair_type …)
    spec_path: str | None = None  # set for user-defined tasks
    extra: dict = field(default_factory=dict)

    def check_split(self, split: str | None) -> str:
        split = split or self.default_split
        if split not in self.splits:
            raise FiglangError(f"task {self.name!r} has no split {split!r}; its splits are: {', '.join(self.splits)}")
        return split

    def load(
        self,
        split: str | None = None,
        ctx: RunContext | str | Path | None = None,
        lenient: bool = False,
        report: LoadReport | None = None,
        *,
        data_dir: str | Path | None = None,
    ) -> list[Record]:
        """Load one split from the run context's data folder (or a data folder given as a path, also as ``data_dir=``;
        None: the default). Strict by default; ``lenient=True`` skips bad records into ``report``."""
        split = self.check_split(split)
        options = LoadOptions(lenient=lenient, report=report if report is not None else LoadReport())
        return self.loader(split, _data_dir(ctx, data_dir), options)

    def files(
        self, split: str | None = None, ctx: RunContext | str | Path | None = None, *, data_dir: str | Path | None = None
    ) -> list[Path]:
        """The files ``split`` is read from (spec tasks: relative paths against the spec's folder,
        ``{data_dir}/…`` against the data directory)."""
        split = self.check_split(split)
        return self.files_for(split, _data_dir(ctx, data_dir))


def _data_dir(ctx: RunContext | str | Path | None, data_dir: str | Path | None = None) -> Path:
    """The data folder of a run context, or of a folder given as a path, by the one rule (:func:`resolve_data_dir`)."""
    if ctx is not None and data_dir is not None:
        raise FiglangError("give the run context (or data folder) once: ctx or data_dir=, not both")
    given = ctx if ctx is not None else data_dir
    return given.data_dir if isinstance(given, RunContext) else resolve_data_dir(given)
