"""Registration without import side effects, the public API, and third-party plugins through entry points.

Every check that matters runs in a fresh interpreter: what a registry holds there is exactly what a
user's script sees, whatever this test process happened to import before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "tests" / "fixtures" / "plugin"


def fresh(code: str, *paths: Path, env: dict[str, str] | None = None) -> str:
    """Run ``code`` in a new interpreter with figlang's sources (and ``paths``) first on sys.path; its stdout."""
    pythonpath = os.pathsep.join([*(str(p) for p in paths), str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": pythonpath, **(env or {})},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="session")
def toy_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/fixtures/plugin installed as a real distribution (its entry points in a dist-info) into a folder."""
    target = tmp_path_factory.mktemp("plugin-site")
    build = tmp_path_factory.mktemp("plugin-src")  # pip builds in the source tree: build from a copy, keep the repo clean
    import shutil

    shutil.copytree(PLUGIN, build / "plugin")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(build / "plugin"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(target.glob("figlang_toy_plugin-*.dist-info/entry_points.txt"))
    return target


def test_import_figlang_is_cheap_and_gives_the_api() -> None:
    out = fresh("""
        import sys, figlang
        names = ["load_task", "evaluate", "compare", "train", "suite", "score_predictions", "tasks", "methods"]
        assert all(callable(getattr(figlang, n)) for n in names)
        print(sorted(m for m in ("torch", "transformers", "figlang.methods.prompted", "figlang.data.tasks") if m in sys.modules))
    """)
    # the API's functions load nothing heavy, and no registry was filled by importing
    assert out.strip() == "[]"


def test_registries_fill_from_the_builtin_lists_not_from_imports() -> None:
    out = fresh("""
        import figlang.methods.prompted.cloze, figlang.methods.trained.methods, figlang.data.tasks
        from figlang.methods.base import METHODS
        from figlang.data.registry import TASKS
        print(len(METHODS._methods), len(TASKS._tasks))  # importing the modules registered nothing
        import figlang
        print(" ".join(figlang.methods()))
        print(" ".join(figlang.tasks()))
    """)
    counts, methods, tasks = out.strip().splitlines()
    assert counts == "0 0"
    assert {"always-first", "lm-score", "nli-score", "generate", "trained"} <= set(methods.split())
    assert {"idiom-cloze", "simile-generation", "flute", "impli-idioms-manual"} <= set(tasks.split())


def test_trained_method_in_a_fresh_interpreter(tmp_path: Path, data_dir: Path, minilm_path: Path) -> None:
    """`figlang.evaluation.evaluate(..., "trained", model=DIR)` used to fail with "unknown method" unless a CLI module
    had been imported first (the method registered itself on import)."""
    import figlang

    out = tmp_path / "mc"
    figlang.train(
        "idiom-cloze",
        "mc",
        str(minilm_path),
        out,
        data_dir=str(data_dir),
        limit=4,
        dev_limit=2,
        report_limit=2,
        epochs=1,
        batch_size=2,
        max_length=48,
        threads=1,
        progress=False,
        report_splits=("dev",),
    )
    result = fresh(
        f"""
        import json
        from figlang.evaluation import evaluate
        run = evaluate("idiom-cloze", "trained", model={str(out)!r}, split="dev", data_dir={str(data_dir)!r}, limit=2,
                       use_cache=False, progress=False)
        print(json.dumps({{"method": run.results["method"]["name"], "n": run.metrics["n_scored"]}}))
    """,
        env={"OMP_NUM_THREADS": "1"},
    )
    assert json.loads(result.strip().splitlines()[-1]) == {"method": "trained", "n": 2}


def test_plugin_task_and_method_through_entry_points(toy_plugin: Path, data_dir: Path, tmp_path: Path) -> None:
    result = fresh(
        f"""
        import json, figlang
        assert "shorter-option" in figlang.methods() and "toy-idiom-dev" in figlang.tasks()
        mine = figlang.evaluate("toy-idiom-dev", "shorter-option", split="dev", data_dir={str(data_dir)!r}, use_cache=False)
        builtin = figlang.evaluate("idiom-cloze", "shorter-option", split="dev", data_dir={str(data_dir)!r},
                                   out_dir={str(tmp_path / "run")!r}, use_cache=False)
        longer = figlang.evaluate("idiom-cloze", "longer-option", split="dev", data_dir={str(data_dir)!r}, use_cache=False)
        print(json.dumps({{"n": [mine.metrics["n_scored"], builtin.metrics["n_scored"]],
                          "acc": [mine.metrics["accuracy"]["accuracy"], builtin.metrics["accuracy"]["accuracy"]],
                          "longer": longer.metrics["accuracy"]["accuracy"],
                          "files": [f["path"] for f in mine.results["data"]["files"]]}}))
    """,
        toy_plugin,
    )
    got = json.loads(result.strip().splitlines()[-1])
    assert got["n"] == [355, 355]  # the plugin's task is the idiom dev set under another name
    assert got["acc"][0] == got["acc"][1]
    assert got["files"] == ["fig_narrative/data/idiom/dev.jsonl"]
    # two options: the shorter one is right exactly where the longer one is wrong, unless they tie in length
    assert abs(got["acc"][1] + got["longer"] - 1) < 0.03
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["method"]["name"] == "shorter-option"


def test_a_broken_plugin_says_which_one(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "broken_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[figlang.methods]\nbroken = broken_plugin_module:Nope\n", encoding="utf-8")
    out = fresh(
        """
        from figlang.core.errors import FiglangError
        from figlang.methods.base import get_methods
        try:
            get_methods().info("random")
        except FiglangError as err:
            print(err)
    """,
        site,
    )
    assert "broken = broken_plugin_module:Nope" in out and "broken-plugin" in out and "uninstall" in out


def test_optional_api_functions_follow_their_modules() -> None:
    """figlang.explain / figlang.interpret exist exactly when their modules do (added by their own features)."""
    import importlib.util

    import figlang

    for name in ("explain", "interpret"):
        if importlib.util.find_spec(f"figlang.{name}") is None:
            with pytest.raises(AttributeError, match="not part of this figlang version"):
                getattr(figlang, name)
        else:
            assert callable(getattr(figlang, name))
    with pytest.raises(AttributeError):
        figlang.no_such_function  # noqa: B018
