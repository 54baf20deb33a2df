"""Reading finished runs back (results.json + predictions.jsonl, or the predictions.jsonl.gz a results archive commits)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import DataError, FiglangError
from figlang.core.io import existing_or_gz, gzip_file, iter_jsonl
from figlang.evaluation.texts import rejoin_texts


@dataclass
class Run:
    path: Path
    results: dict[str, Any]
    rows: list[dict[str, Any]]
    texts_note: str | None = None  # why rows published without their dataset texts still lack them (figlang.evaluation.texts)

    @property
    def label(self) -> str:
        m = self.results["method"]
        return f"{m['name']}" + (f" ({m['model']})" if m.get("model") else "") + f" [{self.path.name}]"

    @property
    def task_split(self) -> tuple[str, str]:
        return self.results["task"]["name"], self.results["task"]["split"]


PREDICTIONS = "predictions.jsonl"


def predictions_file(folder: str | Path) -> Path | None:
    """A run folder's per-item predictions: predictions.jsonl, or predictions.jsonl.gz where it was packed."""
    return existing_or_gz(Path(folder) / PREDICTIONS)


def pack_predictions(root: str | Path) -> list[Path]:
    """gzip every predictions.jsonl under ``root`` into predictions.jsonl.gz (reproducibly) and drop the plain file.

    Why: docs/results commits every quoted figure's per-item predictions; gzip'd they take a fifth of the room,
    and every reader (``load_run``, ``figlang compare``, ``figlang report``) takes either form."""
    return [gzip_file(p) for p in sorted(Path(root).rglob(PREDICTIONS)) if p.is_file()]


def load_run(path: str | Path, need_predictions: bool = True, data_dir: str | Path | None = None) -> Run:
    """A finished run; with ``need_predictions=False`` a folder that keeps only results.json (as a results
    archive in the docs does) loads too, with no rows.

    Rows published without their dataset texts (results.json ``texts_stripped``: FLUTE, PIE-English-derived IMPLI
    premises, #35) get them back by id from the data folder (``data_dir``, else the default one) when it holds the
    files the run read; otherwise they load without them and ``Run.texts_note`` says why."""
    path = Path(path)
    results_file, preds_file = path / "results.json", predictions_file(path)
    if not results_file.exists() or (need_predictions and preds_file is None):
        needs = "results.json and predictions.jsonl(.gz)" if need_predictions else "results.json"
        raise FiglangError(f"{path} is not a figlang run folder (needs {needs}; make one with `figlang eval --out`)")
    try:
        results = json.loads(results_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed results file ({exc.msg})", results_file, exc.lineno) from None
    rows = [obj for _line, obj in iter_jsonl(preds_file)] if preds_file is not None else []
    rows, note = rejoin_texts(rows, results, data_dir) if rows else (rows, None)
    return Run(path, results, rows, note)
