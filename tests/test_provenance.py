"""Result files name the code that made them, the exact records of every split, and where each choice was made."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.evaluation.provenance import code_provenance, portable_path, split_fingerprint

REPO = Path(__file__).resolve().parents[1]


def test_code_provenance_names_the_checkout_figlang_runs_from():
    code = code_provenance()
    assert code["figlang"]
    import figlang

    inside = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(figlang.__file__).parent, capture_output=True, text=True)
    if inside.returncode == 0:  # a checkout: the commit of the package's own tree, and whether it has changes
        assert code["git_commit"] == inside.stdout.strip() and re.fullmatch(r"[0-9a-f]{40}", code["git_commit"])
        assert isinstance(code["git_dirty"], bool) and code["source"] == "git checkout"
    else:  # an installed package: nothing to name
        assert code["git_commit"] is None and code["git_dirty"] is None


def test_split_fingerprint_tells_carved_splits_apart(data_dir):
    task = get_task("idiom-cloze")
    dev, selection = task.load("dev-disjoint", data_dir), task.load("selection", data_dir)
    a, b = split_fingerprint(dev), split_fingerprint(selection)
    assert a["items"] == len(dev) and a["ids_sha256"] != b["ids_sha256"]
    assert a["ids_sha256"] == hashlib.sha256("\n".join(sorted(r.id for r in dev)).encode()).hexdigest()
    assert split_fingerprint(list(reversed(dev))) == a  # the set of records, not their order
    assert split_fingerprint(dev[1:])["ids_sha256"] != a["ids_sha256"]  # one record less shows


def test_results_json_records_code_splits_and_choices(data_dir, tmp_path):
    run = evaluate(
        "flute",
        "majority",
        split="val",
        data_dir=data_dir,
        out_dir=tmp_path / "run",
        use_cache=False,
        progress=False,
        chosen_on={"threshold": "selection"},
    )
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    prov = saved["provenance"]
    assert prov == run.results["provenance"]
    assert prov["code"]["figlang"] and "git_commit" in prov["code"] and "git_dirty" in prov["code"]
    assert prov["splits"]["val"] == split_fingerprint(run.records)
    assert prov["selection_split"] == {"threshold": "selection"} and prov["chosen_on_evaluated_split"] is False
    assert saved["data"]["data_dir"] == portable_path(
        data_dir
    )  # as given (a link stays a link), relative where near, never this machine's root
    # a choice made on the split the run scores is flagged, from the command line too
    out = tmp_path / "cli"
    res = CliRunner().invoke(
        __import__("figlang.cli.main", fromlist=["app"]).app,
        [
            "eval",
            "-t",
            "flute",
            "-m",
            "majority",
            "-s",
            "val",
            "--chosen-on",
            "prompt=val",
            "--no-cache",
            "-q",
            "-o",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    prov = json.loads((out / "results.json").read_text())["provenance"]
    assert prov["selection_split"] == {"prompt": "val"} and prov["chosen_on_evaluated_split"] is True
    bad = CliRunner().invoke(
        __import__("figlang.cli.main", fromlist=["app"]).app,
        ["eval", "-t", "flute", "-m", "majority", "--chosen-on", "prompt", "--data-dir", str(data_dir)],
    )
    assert bad.exit_code != 0 and "CHOICE=SPLIT" in str(bad.exception)


def test_portable_paths_keep_no_machine_prefix(tmp_path, monkeypatch):
    """The cache under the home directory is recorded as ~/..., wherever the working directory is: outside the home
    (a CI checkout in /tmp) or deep inside it (~/work/figlang, where the relative path would climb out twice)."""
    home = tmp_path / "home" / "someone"
    monkeypatch.setenv("HOME", str(home))
    cache = home / ".cache" / "figlang"
    for cwd in (tmp_path / "ci" / "figlang", home / "work" / "figlang", home / "figlang"):
        (cwd / "data").mkdir(parents=True)
        monkeypatch.chdir(cwd)
        assert portable_path(cwd / "data") == "data"
        assert portable_path(cache) == ("../.cache/figlang" if cwd == home / "figlang" else "~/.cache/figlang"), cwd
        assert str(home) not in (portable_path(cache) or "")
        assert portable_path(cwd.parent / "shared" / "data") == "../shared/data"  # the data beside the checkout stays relative
    assert portable_path("runs/x") == "runs/x" and portable_path(None) is None


# --- runs anyone can re-make: a modified tree's patch --------------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _repo(root: Path) -> Path:
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.org")
    _git(root, "config", "user.name", "t")
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (root / "pkg" / "gone.py").write_text("y = 2\n", encoding="utf-8")
    (root / "docs" / "results").mkdir(parents=True)
    (root / "docs" / "results" / "r.json").write_text("{}\n", encoding="utf-8")
    (root / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_tree_state_names_the_patch_that_re_makes_the_working_tree(tmp_path):
    from figlang.core.provenance import tree_state

    repo = _repo(tmp_path / "repo")
    clean, patch = tree_state(repo / "pkg")
    assert clean["git_dirty"] is False and clean["git_patch"] is None and patch == b""
    (repo / "pkg" / "a.py").write_text("x = 3  # changed\n", encoding="utf-8")
    (repo / "pkg" / "gone.py").unlink()
    (repo / "pkg" / "new.py").write_text("z = 'untracked, not ignored'\n", encoding="utf-8")
    (repo / "pkg" / "bin.dat").write_bytes(bytes(range(256)))
    (repo / "ignored").mkdir()
    (repo / "ignored" / "weights.bin").write_bytes(b"\0" * 100)
    (repo / "docs" / "results" / "r.json").write_text('{"rerun": true}\n', encoding="utf-8")
    state, patch = tree_state(repo / "pkg")
    assert state["git_dirty"] is True and state["git_commit"] == _git(repo, "rev-parse", "HEAD").strip()
    assert state["git_patch"] == {"file": "code.patch", "sha256": hashlib.sha256(patch).hexdigest(), "bytes": len(patch)}
    assert state["git_patch_excludes"] == ["docs/results/"]
    text = patch.decode("utf-8", "replace")
    assert "pkg/a.py" in text and "pkg/gone.py" in text and "pkg/new.py" in text and "pkg/bin.dat" in text
    assert "weights.bin" not in text and "docs/results" not in text
    # the commit plus the patch is the working tree (the excluded results and the ignored files aside)
    copy = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(repo), str(copy)], check=True)
    (tmp_path / "code.patch").write_bytes(patch)
    _git(copy, "apply", "--binary", str(tmp_path / "code.patch"))
    for rel in ("pkg/a.py", "pkg/new.py", "pkg/bin.dat"):
        assert (copy / rel).read_bytes() == (repo / rel).read_bytes(), rel
    assert not (copy / "pkg" / "gone.py").exists()
    # only the excluded results changed: dirty, and no patch is needed
    _git(repo, "checkout", "-q", "--", "pkg")
    for rel in ("pkg/new.py", "pkg/bin.dat"):
        (repo / rel).unlink()
    only_results, patch = tree_state(repo / "pkg")
    assert only_results["git_dirty"] is True and only_results["git_patch"] is None and patch == b""


def test_a_run_of_a_modified_checkout_writes_its_patch_beside_results(data_dir, tmp_path):
    """figlang imported from a modified clone of this checkout: the run's results.json names the patch and
    code.patch beside it has that sha256; applied to the commit it names, it gives the clone's code back."""
    import os
    import shutil
    import sys

    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(REPO), str(clone)], check=True)
    _git(clone, "sparse-checkout", "set", "--no-cone", "/src/", "/pyproject.toml")
    _git(clone, "checkout", "-q", _git(REPO, "rev-parse", "HEAD").strip())
    # the code under test is this working tree's (committed or not), then one more local change on top
    shutil.copytree(REPO / "src", clone / "src", dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    marker = "# a local change that a published result must carry\n"
    init = clone / "src" / "figlang" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + marker, encoding="utf-8")
    out = tmp_path / "run"
    script = (
        "import sys; from figlang.evaluation import evaluate; "
        f"evaluate('flute', 'majority', split='val', data_dir={str(data_dir)!r}, out_dir={str(out)!r}, use_cache=False, progress=False)"
    )
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    code = json.loads((out / "results.json").read_text())["provenance"]["code"]
    patch = (out / "code.patch").read_bytes()
    assert code["git_dirty"] is True and code["git_commit"] == _git(REPO, "rev-parse", "HEAD").strip()
    assert code["git_patch"]["sha256"] == hashlib.sha256(patch).hexdigest() and marker.strip() in patch.decode()
    _git(clone, "checkout", "-q", "--", ".")
    _git(clone, "apply", str(out / "code.patch"))
    assert init.read_text(encoding="utf-8").endswith(marker)
    assert (clone / "src" / "figlang" / "core" / "provenance.py").read_bytes() == (REPO / "src/figlang/core/provenance.py").read_bytes()
