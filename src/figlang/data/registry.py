"""The task registry: a name → a Task that knows its shape, splits and how to load them.

Built-in tasks register themselves in ``figlang.data.tasks``; a user's own task is a
spec file (``figlang.data.custom``) and, once loaded, is an ordinary Task. Anything
that takes a task name (the CLI, the harness) also takes a path to a spec file.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DataError, FiglangError, LoadOptions, LoadReport
from .paths import resolve_data_dir
from .records import Record, Shape

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
        data_dir: str | Path | None = None,
        lenient: bool = False,
        report: LoadReport | None = None,
    ) -> list[Record]:
        """Load one split. Strict by default; ``lenient=True`` skips bad records into ``report``."""
        split = self.check_split(split)
        root = resolve_data_dir(data_dir) if self.spec_path is None else Path(data_dir or ".")
        options = LoadOptions(lenient=lenient, report=report if report is not None else LoadReport())
        return self.loader(split, root, options)

    def files(self, split: str | None = None, data_dir: str | Path | None = None) -> list[Path]:
        split = self.check_split(split)
        root = resolve_data_dir(data_dir) if self.spec_path is None else Path(data_dir or ".")
        return self.files_for(split, root)


class TaskRegistry:
    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}

    def add(self, task: Task) -> Task:
        if task.name in self._tasks:
            raise FiglangError(f"a task named {task.name!r} is already registered")
        self._tasks[task.name] = task
        return task

    def get(self, name: str) -> Task:
        if name in self._tasks:
            return self._tasks[name]
        path = Path(name)
        if path.suffix.lower() in {".yaml", ".yml", ".json"}:
            from .custom import load_task_spec

            return load_task_spec(path)
        close = difflib.get_close_matches(name, list(self._tasks), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise FiglangError(
            f"unknown task {name!r}.{hint} Run `figlang data tasks` for the list, or pass a task spec file (.yaml/.json)."
        )

    def names(self) -> list[str]:
        return list(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks.values())

    def __contains__(self, name: str) -> bool:
        return name in self._tasks


TASKS = TaskRegistry()


def get_task(name: str) -> Task:
    """A built-in task by name, or a user task from a spec file path."""
    from . import tasks as _builtin  # noqa: F401  (registers the built-in tasks)

    return TASKS.get(name)


def all_tasks() -> list[Task]:
    from . import tasks as _builtin  # noqa: F401

    return list(TASKS)


def ensure_labels_scoreable(records: list[Record], where: str) -> None:
    """Refuse to score against placeholder gold labels (the narrative test set hides its labels)."""
    from .errors import PlaceholderLabelError

    placeholders = sum(1 for r in records if getattr(r, "label_is_placeholder", False))
    if placeholders:
        raise PlaceholderLabelError(
            f"{placeholders} of {len(records)} gold labels are placeholders: the authors hid these test labels "
            "(every narrative test record says 'option1'), so any accuracy against them is meaningless",
            where,
            hint="score on dev or an expression-disjoint dev split, or submit test predictions to the official leaderboard",
        )
    missing = sum(1 for r in records if getattr(r, "label", None) is None)
    if missing:
        raise DataError(f"{missing} of {len(records)} records have no gold label", where, hint="this split is unlabeled")


def ensure_unique_ids(records: list[Record], where: str) -> None:
    """Refuse records that share an id: predictions are keyed by id, so two gold items with one id would each be
    scored against the other's prediction, silently (user specs are checked as they load; this covers every task)."""
    seen: set[str] = set()
    repeated: list[str] = []
    for r in records:
        if r.id in seen and r.id not in repeated:
            repeated.append(r.id)
        seen.add(r.id)
    if repeated:
        raise DataError(
            f"{len(repeated)} record ids occur more than once (e.g. {', '.join(map(repr, repeated[:3]))}): "
            "predictions are matched by id, so those items would be scored against each other's predictions",
            where,
            hint="give every record a unique id (keep the source's id in meta, e.g. meta['gold_id'])",
        )
