"""The results document of a run (``results.json``), as a typed object.

:func:`figlang.evaluation.harness.build_results` makes a :class:`ResultsDocument`; its sections are fields, the
per-item scores (FLUTE's explanation scores) a field of their own that goes into the predictions file, not into
``results.json``; :meth:`ResultsDocument.write` is the one place its JSON is written. The JSON keeps the order and
bytes figlang has always written (``format``, ``task``, ``data``, ``method``, ``metrics``, ``metric_config``,
``problems``, ``versions``, ``machine``, ``timing``, ``provenance``, then what the caller added), so every figure
of the results registry still re-derives from its file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.io import write_json

RESULTS_FORMAT = 1
SECTIONS = ("task", "data", "method", "metrics", "metric_config", "problems", "versions", "machine", "timing", "provenance")


@dataclass
class ResultsDocument:
    """One run's results: what was scored, how, the metrics, and where it came from."""

    task: dict[str, Any]  # name, split, shape, items, spec_path, labels (and fold numbers …)
    data: dict[str, Any]  # the data folder and the split files' checksums, or the records' content digest
    method: dict[str, Any]  # name, model, options as given, fingerprint
    metrics: dict[str, Any]
    metric_config: dict[str, Any]
    problems: dict[str, Any]  # what was wrong with the predictions (missing, duplicated, invalid)
    versions: dict[str, Any]
    machine: dict[str, Any]
    timing: dict[str, Any]
    provenance: dict[str, Any]  # the code, the evaluated ids, the split of every choice
    extra: dict[str, Any] = field(default_factory=dict)  # top-level keys a caller adds (seed, seeds, limit, run …), in order
    per_item: dict[str, dict[str, Any]] = field(default_factory=dict)  # score name → item id → score: the predictions file's
    format: int = RESULTS_FORMAT

    @property
    def scored(self) -> bool:
        """Whether the predictions were scored (False for --predict-only: the gold labels may be placeholders)."""
        return bool(self.extra.get("scored", True))

    def to_dict(self) -> dict[str, Any]:
        """``results.json``'s content: the sections in their order, then the caller's keys (per-item scores left out)."""
        return {"format": self.format, **{name: getattr(self, name) for name in SECTIONS}, **self.extra}

    def write(self, path: str | Path) -> None:
        """Write ``results.json`` (atomically): the one place its JSON is made."""
        write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ResultsDocument:
        """A document read back from a ``results.json`` (its per-item scores are in the predictions file, not here)."""
        sections = {name: d.get(name) or {} for name in SECTIONS}
        extra = {k: v for k, v in d.items() if k != "format" and k not in SECTIONS}
        return cls(**sections, extra=extra, format=int(d.get("format", RESULTS_FORMAT)))

    @classmethod
    def read(cls, path: str | Path) -> ResultsDocument:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
