"""A rerun answered wholly from the request cache loads no model weights.

The cache key is the method's fingerprint (method, options, model identity: name, revision, kind, dtype,
device, max length) and the record. The Transformers backend knows that identity from the model's
configuration and tokenizer; its weights load on first use. Real model (smollm2-135m), real data, the
real CLI, twice; what is counted is the backend's own count of weight loads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.cli.main import app
from figlang.backends import base
from figlang.backends.catalog import get
from figlang.methods.prompted import clear_backends

pytestmark = pytest.mark.usefixtures("one_torch_thread")

MODEL = "smollm2-135m"


def _eval(data_dir: Path, cache: Path, out: Path) -> dict:
    args = [
        "eval",
        "-t",
        "idiom-cloze",
        "-s",
        "dev",
        "-m",
        "lm-score",
        "--model",
        MODEL,
        "-n",
        "5",
        "-O",
        "threads=1",
        "--data-dir",
        str(data_dir),
        "--cache-dir",
        str(cache),
        "-o",
        str(out),
        "--quiet",
    ]
    clear_backends()  # a fresh process would have no backend either: nothing carries over but the cache
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_a_rerun_from_a_warm_cache_loads_no_weights(data_dir: Path, tmp_path: Path) -> None:
    if not get(MODEL).is_installed():
        pytest.skip(f"{MODEL} is not installed: figlang models install {MODEL}")
    cache = tmp_path / "cache"
    before = base.weight_loads
    first = _eval(data_dir, cache, tmp_path / "first")
    assert base.weight_loads == before + 1  # the counter counts: a cold run loads the weights once

    second = _eval(data_dir, cache, tmp_path / "second")
    assert base.weight_loads == before + 1, "the rerun loaded the weights although every answer was cached"
    assert second["method"]["fingerprint"] == first["method"]["fingerprint"]
    a = [json.loads(line) for line in (tmp_path / "first" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    b = [json.loads(line) for line in (tmp_path / "second" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(a) == 5 and [p["prediction"] for p in a] == [p["prediction"] for p in b]
    clear_backends()


def test_identity_needs_no_weights_and_scoring_loads_them() -> None:
    from figlang.backends.base import ScoreRequest
    from figlang.backends.loading import load_backend

    if not get(MODEL).is_installed():
        pytest.skip(f"{MODEL} is not installed")
    lm = load_backend(MODEL, threads=1)
    fingerprint = lm.fingerprint()
    assert not lm.weights_loaded and fingerprint["kind"] == "causal" and fingerprint["revision"]
    lm.score([ScoreRequest("The cat sat on the", " mat")])
    assert lm.weights_loaded and lm.fingerprint() == fingerprint  # the identity does not change once the weights are in


def test_llama_cpp_identity_needs_no_weights() -> None:
    pytest.importorskip("llama_cpp")
    from test_backend_llamacpp import _smollm_gguf

    from figlang.backends.base import ScoreRequest
    from figlang.backends.llamacpp_backend import LlamaCppBackend

    lm = LlamaCppBackend(_smollm_gguf(), name="smollm2-gguf", threads=1, n_ctx=256)
    fingerprint = lm.fingerprint()
    assert not lm.weights_loaded
    lm.score([ScoreRequest("The cat sat on the", " mat")])
    assert lm.weights_loaded and lm.fingerprint() == fingerprint
