"""`pip install figlang` installs the core without torch, transformers, spaCy or Flask; the extras add them.

The wheel is built from this tree and installed alone into a fresh virtual environment, offline, from the core's
own dependencies kept as wheels by `make setup` (``$FIGLANG_CORE_WHEELS``, default ~/.cache/figlang/wheels/core).
There it scores a FLUTE and an idiom-cloze prediction file to the figures docs/results commits, and a command that
needs an extra says which one in one line. ``twine check`` passes on the wheel and the sdist.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "spacy", "flask")
CORE_WHEELS = Path(os.environ.get("FIGLANG_CORE_WHEELS", Path.home() / ".cache/figlang/wheels/core"))


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    return requirement.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip().lower()


def test_the_core_dependencies_leave_the_heavy_libraries_to_extras():
    project = _project()
    core = {_name(r) for r in project["dependencies"]}
    assert not core & set(HEAVY), f"the core install pulls {core & set(HEAVY)}"
    extras = project["optional-dependencies"]
    assert {"models", "train", "web", "build", "all"} <= set(extras)
    assert {"torch", "transformers"} <= {_name(r) for r in extras["models"]}
    assert "flask" in {_name(r) for r in extras["web"]} and "spacy" in {_name(r) for r in extras["build"]}
    assert extras["all"] == ["figlang[models,train,web,build]"]
    # the Makefile installs everything, so `make test` exercises every extra
    assert '-e ".[all,test,server]"' in (REPO / "Makefile").read_text(encoding="utf-8")


def test_a_missing_extra_is_named_in_one_line(monkeypatch, capsys):
    """A command whose library is absent prints which extra installs it, in one line, and exits 3."""
    from figlang.cli import main as cli_main

    monkeypatch.setitem(sys.modules, "flask", None)  # `import flask` now raises ModuleNotFoundError(name="flask")
    for name in [m for m in sys.modules if m == "figlang.web" or m.startswith("figlang.web.")]:
        monkeypatch.delitem(sys.modules, name)  # an earlier test's import of the web app must not hide the missing extra
    monkeypatch.setattr(sys, "argv", ["figlang", "serve", "--runs", "nowhere"])
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exit_:
        cli_main.main()
    err = capsys.readouterr().err
    assert exit_.value.code == 3
    assert err.strip().count("\n") == 0, err  # one line, even at 80 columns
    assert "pip install 'figlang[web]'" in err and "flask" in err


def test_an_import_error_outside_the_extras_is_not_hidden():
    from figlang.core.errors import missing_extra

    assert missing_extra(ModuleNotFoundError("No module named 'nosuch'", name="nosuch")) is None
    wrapped = ImportError("bert_score needs torch")
    wrapped.__cause__ = ModuleNotFoundError("No module named 'torch'", name="torch")
    assert missing_extra(wrapped).extra == "models"
    assert missing_extra(ModuleNotFoundError("x", name="spacy.tokens")).extra == "build"


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"COLUMNS": "80", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"})
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900, **kw)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> Path:
    """figlang's wheel and sdist, built offline (no build isolation: setuptools is installed) from a copy of what the
    sdist needs, so that no build/ or egg-info folder is left in the working tree and none of theirs is reused."""
    import shutil

    out, tree = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        shutil.copy2(REPO / name, tree / name)
    shutil.copytree(REPO / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    res = _run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out), str(tree)])
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return out


def test_twine_check_passes(dists):
    files = sorted(str(p) for p in dists.iterdir())
    assert any(f.endswith(".whl") for f in files) and any(f.endswith(".tar.gz") for f in files)
    res = _run([sys.executable, "-m", "twine", "check", "--strict", *files])
    assert res.returncode == 0 and res.stdout.count("PASSED") == len(files), res.stdout + res.stderr


def _committed_predictions(run: str, dest: Path) -> tuple[Path, float]:
    folder = REPO / "docs/results/baselines" / run
    dest.write_bytes(gzip.decompress((folder / "predictions.jsonl.gz").read_bytes()))
    return dest, json.loads((folder / "results.json").read_text(encoding="utf-8"))["metrics"]["accuracy"]["accuracy"]


@pytest.mark.slow
def test_the_core_alone_scores_prediction_files_without_torch(dists, data_dir, tmp_path):
    """The wheel alone in a fresh venv: no torch, transformers, spaCy or Flask; it scores FLUTE and idiom-cloze
    prediction files to the committed accuracies, checks data, exports to lm-eval and Hugging Face, and names the
    extra a model command needs."""
    if not any(CORE_WHEELS.glob("numpy-*.whl")):
        pytest.fail(f"no core dependency wheels in {CORE_WHEELS}: `make setup` keeps them there (pip wheel --wheel-dir {CORE_WHEELS} .)")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    py, figlang = venv / "bin/python", venv / "bin/figlang"
    wheel = next(dists.glob("figlang-*.whl"))
    res = _run([str(py), "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(CORE_WHEELS), str(wheel)])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]

    # nothing heavy came along, and the core's own import does not reach for it
    probe = f"import importlib.util, sys, figlang.cli.main; print([m for m in {HEAVY!r} if importlib.util.find_spec(m)])"
    res = _run([str(py), "-c", probe])
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr

    for task, split, run in (("flute", "val", "flute-val-majority"), ("idiom-cloze", "dev", "idiom-dev-longer-option")):
        predictions, expected = _committed_predictions(run, tmp_path / f"{run}.jsonl")
        out = tmp_path / f"scored-{run}"
        argv = [str(figlang), "eval", "-t", task, "-s", split, "-p", str(predictions), "--data-dir", str(data_dir), "-o", str(out)]
        res = _run(argv)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        scored = json.loads((out / "results.json").read_text(encoding="utf-8"))
        assert scored["metrics"]["accuracy"]["accuracy"] == pytest.approx(expected)
        assert max(len(line) for line in res.stdout.splitlines()) <= 80  # the results table fits the terminal

    # the rest of the core: data checks, and the lm-eval and Hugging Face exports
    for argv in (
        ["data", "stats", "--task", "flute"],
        ["export", "lm-eval", "idiom-cloze", "-s", "dev", "-o", str(tmp_path / "lm-eval")],
        ["export", "hf", "idiom-cloze", "-o", str(tmp_path / "hf")],
    ):
        res = _run([str(figlang), *argv, "--data-dir", str(data_dir)])
        assert res.returncode == 0, f"figlang {' '.join(argv)}: " + res.stdout[-2000:] + res.stderr[-2000:]
    assert (tmp_path / "lm-eval" / "figlang_idiom_cloze_dev.yaml").is_file() and list((tmp_path / "hf" / "data").glob("dev-*.parquet"))

    # a command that needs an extra says which, in one line
    res = _run([str(figlang), "interpret", "He kicked the bucket.", "--data-dir", str(data_dir)])
    assert res.returncode == 3, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [
        "error: this needs spacy, which figlang's 'build' extra installs: pip install 'figlang[build]'"
    ]


SCORE_AND_LIST = """
import json, sys
from figlang.cli.main import main
sys.argv = ["figlang", *sys.argv[1:]]
try:
    main()
except SystemExit as exit_:
    assert not exit_.code, exit_.code
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "spacy", "flask"))))
"""


def test_scoring_a_prediction_file_imports_nothing_heavy_even_where_it_is_installed(data_dir, tmp_path):
    """In the full environment (every extra installed), the core paths still import no torch, transformers, spaCy or
    Flask: the heavy imports are lazy, not merely absent."""
    predictions, _ = _committed_predictions("flute-val-majority", tmp_path / "flute.jsonl")
    argv = ["eval", "-t", "flute", "-s", "val", "-p", str(predictions), "--data-dir", str(data_dir), "-o", str(tmp_path / "scored")]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "80"}
    res = subprocess.run([sys.executable, "-c", SCORE_AND_LIST, *argv], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []
