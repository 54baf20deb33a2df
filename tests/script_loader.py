"""Load a repository script (benchmarks/, scripts/) as a module, so tests call its functions and its main()."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def load_script(path: str, name: str | None = None) -> ModuleType:
    """The module at ``REPO / path`` (e.g. "benchmarks/bench_miner.py"), executed once per call under ``name``."""
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, REPO / path)
    assert spec is not None and spec.loader is not None, f"{path} is not a Python file"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
