"""One name per concept in the Python API: figlang.evaluate and figlang.evaluation.evaluate name a method's options alike."""

from __future__ import annotations

import inspect

import pytest

import figlang
from figlang.evaluation import evaluate as harness_evaluate


def test_both_evaluate_functions_call_the_method_options_method_options():
    api, harness = inspect.signature(figlang.evaluate).parameters, inspect.signature(harness_evaluate).parameters
    assert "method_options" in api and "method_options" in harness
    shared = {"task", "method", "model", "split", "data_dir", "limit", "out_dir", "seed", "cache_dir", "use_cache", "metric_options"}
    assert shared <= set(api) and shared <= set(harness)


def test_method_options_reach_the_method_and_the_old_name_warns(data_dir):
    def run(**options):
        result = figlang.evaluate("flute", "always-first", split="val", data_dir=data_dir, limit=4, use_cache=False, **options)
        return {p.prediction for p in result.predictions.values()}

    assert run() == {"entailment"}  # the task's first label
    assert run(method_options={"labels": ["contradiction", "entailment"]}) == {"contradiction"}
    with pytest.warns(DeprecationWarning, match="method_options"):
        assert run(options={"labels": ["contradiction", "entailment"]}) == {"contradiction"}
    with pytest.raises(TypeError, match="not both"):
        run(options={}, method_options={})


def test_figlang_methods_stays_callable_after_its_package_is_imported() -> None:
    """figlang.methods is both the public function and, since the folder move, the methods package: importing the
    package binds it over the function on the root, so the package must answer the call the same way."""
    import subprocess
    import sys

    code = "import figlang.methods.base, figlang; import figlang.api; names = figlang.methods(); assert names == figlang.api.methods(); print(len(names))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 10
