"""The task registry: a name → a Task that knows its shape, splits and how to load them.

Nothing registers itself by being imported. The registry fills itself on first use from an
explicit list: the built-in tasks (:func:`figlang.data.tasks.builtin_tasks`), then the tasks
third-party packages declare under the ``figlang.tasks`` entry-point group (an entry point
names a :class:`Task`, or a callable returning one Task or an iterable of them). A user's own
task is a spec file (``figlang.data.custom``) and, once loaded, is an ordinary Task. Anything
that takes a task name (the CLI, the harness) also takes a path to a spec file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path

from figlang.core.plugins import entry_point_objects
from figlang.core.errors import DataError, FiglangError, PlaceholderLabelError
from figlang.data.records import Record
from figlang.data.task import FilesFor, Loader, Task

__all__ = [
    "TASKS",
    "TASK_ENTRY_POINTS",
    "FilesFor",
    "Loader",
    "Task",
    "TaskRegistry",
    "all_tasks",
    "ensure_labels_scoreable",
    "ensure_unique_ids",
    "get_task",
]

TASK_ENTRY_POINTS = "figlang.tasks"


class TaskRegistry:
    """Tasks by name. Filled on first use: the built-in tasks, then the ``figlang.tasks`` entry points."""

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._filled = False

    def _fill(self) -> None:
        if self._filled:
            return
        self._filled = True  # set first: a plugin that looks a task up while loading must not recurse
        from figlang.data.tasks import builtin_tasks  # here, not at the top: every figlang command imports the registry at start-up

        for task in builtin_tasks():
            self.add(task)
        for where, obj in entry_point_objects(TASK_ENTRY_POINTS):
            made = obj() if callable(obj) and not isinstance(obj, Task) else obj
            tasks = [made] if isinstance(made, Task) else list(made) if made is not None else []
            for task in tasks:
                if not isinstance(task, Task):
                    raise FiglangError(
                        f"entry point {where} (group {TASK_ENTRY_POINTS}) gave a {type(task).__name__}, "
                        "not a figlang.data.registry.Task: it must name a Task or a callable returning Tasks"
                    )
                if task.name in self._tasks:
                    raise FiglangError(f"entry point {where} registers task {task.name!r}, which already exists: rename the plugin's task")
                self._tasks[task.name] = task

    def add(self, task: Task) -> Task:
        """Register a task (a program's own; packages use the ``figlang.tasks`` entry-point group)."""
        self._fill()
        if task.name in self._tasks:
            raise FiglangError(f"a task named {task.name!r} is already registered")
        self._tasks[task.name] = task
        return task

    def get(self, name: str) -> Task:
        self._fill()
        if name in self._tasks:
            return self._tasks[name]
        path = Path(name)
        if path.suffix.lower() in {".yaml", ".yml", ".json"}:
            from figlang.data.custom import load_task_spec  # the same: a spec file is read only when one is named

            return load_task_spec(path)
        close = difflib.get_close_matches(name, list(self._tasks), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise FiglangError(f"unknown task {name!r}.{hint} Run `figlang data tasks` for the list, or pass a task spec file (.yaml/.json).")

    def names(self) -> list[str]:
        self._fill()
        return list(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        self._fill()
        return iter(list(self._tasks.values()))

    def __contains__(self, name: str) -> bool:
        self._fill()
        return name in self._tasks


TASKS = TaskRegistry()


def get_task(name: str) -> Task:
    """A registered task by name (built-in or a plugin's), or a user task from a spec file path."""
    return TASKS.get(name)


def all_tasks() -> list[Task]:
    """Every registered task: the built-in ones, then the plugins'."""
    return list(TASKS)


def ensure_labels_scoreable(records: list[Record], where: str) -> None:
    """Refuse to score against placeholder gold labels (the narrative test set hides its labels)."""
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
