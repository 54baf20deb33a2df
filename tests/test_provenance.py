"""Result files name the code that made them, the exact records of every split, and where each choice was made."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

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
