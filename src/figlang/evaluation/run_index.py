"""Finding run folders and paging through a run's predictions without holding them all.

A 26,124-item IMPLI run's predictions.jsonl is tens of megabytes; a page that shows 50 of its items
should not parse, keep or send the rest. :class:`PredictionIndex` reads the file once, keeping per
line only its byte offset and the few fields people filter on (correctness, gold, prediction, figure
and pair type, expression); a page then seeks to its lines and parses only those. The web app and
anything else that browses runs use it (keyed by the file's modification time and size, so a changed file is
indexed again).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import DataError, FiglangError

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.jsonl"

#: Row fields kept in the index (everything a filter or a disagreement list needs).
_KEYS = ("id", "correct", "gold", "prediction", "figure_type", "pair_type", "expression", "valid", "missing")


@dataclass(frozen=True)
class RunFolder:
    """A folder under the runs root that holds a results.json (``problem`` says why it cannot be read, if so)."""

    rel: str  # path relative to the runs root, with forward slashes
    path: Path
    task: str = ""
    split: str = ""
    method: str = ""
    model: str = ""
    items: int | None = None
    accuracy: float | None = None
    has_predictions: bool = False
    problem: str | None = None


def read_results(folder: Path) -> dict[str, Any]:
    """A run folder's results.json, or a FiglangError that says what is wrong with it and how to fix it."""
    path = folder / RESULTS_FILE
    if not folder.is_dir():
        raise FiglangError(f"{folder.name or folder} is not a folder")
    if not path.is_file():
        raise FiglangError(f"{folder.name} has no {RESULTS_FILE}: it is not a figlang run folder (make one with `figlang eval --out DIR`)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(f"{RESULTS_FILE} is not UTF-8 text (byte {exc.start})", path) from None
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed {RESULTS_FILE} ({exc.msg} at line {exc.lineno}, column {exc.colno}); rerun `figlang eval` to remake it",
            path,
            exc.lineno,
        ) from None
    if (
        not isinstance(results, dict)
        or not isinstance(results.get("task"), dict)
        or not isinstance(results.get("method"), dict)
        or not isinstance(results.get("metrics"), dict)
    ):
        raise DataError(f"{RESULTS_FILE} lacks the task, method or metrics block of a figlang results file", path)
    return results


def find_runs(root: Path, max_depth: int = 6) -> list[RunFolder]:
    """Every folder under ``root`` (to ``max_depth`` levels) holding a results.json, sorted by path."""
    root = root.resolve()
    out: list[RunFolder] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        if any(e.name == RESULTS_FILE for e in entries):
            out.append(describe_run(root, folder))
        if depth >= max_depth:
            return
        for e in entries:
            if e.is_dir() and not e.is_symlink() and not e.name.startswith("."):
                walk(e, depth + 1)

    walk(root, 0)
    return out


def describe_run(root: Path, folder: Path) -> RunFolder:
    rel = folder.resolve().relative_to(root.resolve()).as_posix()
    has_preds = (folder / PREDICTIONS_FILE).is_file()
    try:
        r = read_results(folder)
    except FiglangError as exc:
        return RunFolder(rel, folder, has_predictions=has_preds, problem=str(exc))
    acc = (r["metrics"].get("accuracy") or {}).get("accuracy")
    return RunFolder(
        rel,
        folder,
        task=str(r["task"].get("name", "")),
        split=str(r["task"].get("split", "")),
        method=str(r["method"].get("name", "")),
        model=str(r["method"].get("model") or ""),
        items=r["metrics"].get("n_scored"),
        accuracy=acc if isinstance(acc, (int, float)) else None,
        has_predictions=has_preds,
    )


@dataclass
class Filters:
    """What a page of predictions shows: only wrong items, a gold label, a figure or pair type, an expression substring."""

    wrong: bool = False
    label: str = ""
    figure_type: str = ""
    pair_type: str = ""
    expression: str = ""

    def keep(self, row: dict[str, Any]) -> bool:
        if self.wrong and row.get("correct") is not False:
            return False
        if self.label and str(row.get("gold")) != self.label:
            return False
        if self.figure_type and row.get("figure_type") != self.figure_type:
            return False
        if self.pair_type and row.get("pair_type") != self.pair_type:
            return False
        if self.expression and self.expression.lower() not in (row.get("expression") or "").lower():
            return False
        return True


@dataclass
class PredictionIndex:
    """Byte offsets and filter fields of every line of one predictions.jsonl."""

    path: Path
    stamp: tuple[int, int]
    offsets: list[int] = field(default_factory=list)
    keys: list[dict[str, Any]] = field(default_factory=list)
    by_id: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, path: Path) -> PredictionIndex:
        st = path.stat()
        index = cls(path, (st.st_mtime_ns, st.st_size))
        with open(path, "rb") as fh:
            offset = 0
            for number, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    index.problems.append(f"{path.name}:{number}: malformed JSON line ({getattr(exc, 'msg', exc)}); left out")
                    continue
                if not isinstance(obj, dict) or "id" not in obj:
                    index.problems.append(f"{path.name}:{number}: not a prediction row (a JSON object with an id); left out")
                    continue
                keys: dict[str, Any] = {k: obj.get(k) for k in _KEYS if k in obj}
                for k in ("gold", "prediction"):
                    if isinstance(keys.get(k), (list, dict)):
                        keys[k] = None  # generation samples: not a filter value
                keys["id"] = str(obj["id"])
                index.by_id.setdefault(keys["id"], len(index.offsets))
                index.offsets.append(start)
                index.keys.append(keys)
        return index

    def __len__(self) -> int:
        return len(self.offsets)

    def values(self, key: str) -> list[tuple[str, int]]:
        """The values of ``key`` over the rows, with their counts (for filter menus)."""
        counts = Counter(str(k[key]) for k in self.keys if k.get(key) is not None)
        return sorted(counts.items())

    def select(self, filters: Filters) -> list[int]:
        return [i for i, k in enumerate(self.keys) if filters.keep(k)]

    def rows(self, positions: list[int]) -> list[dict[str, Any]]:
        """The full rows at the given positions (read from the file now)."""
        out = []
        with open(self.path, "rb") as fh:
            for i in positions:
                fh.seek(self.offsets[i])
                out.append(json.loads(fh.readline()))
        return out
