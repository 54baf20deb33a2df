"""The tools that put results into docs/: scripts/publish_run.py (portable, byte-stable copies of a run's result
files) and the FLUTE sample that benchmarks/explain_selection.py chooses the explaining system's settings on."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from script_loader import load_script


publish_run = load_script("scripts/publish_run.py")
explain_selection = load_script("benchmarks/explain_selection.py")


def _fake_run(root: Path, home: Path) -> Path:
    run = root / "runs" / "r"
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / "model.safetensors").write_bytes(b"weights")
    (run / "eval" / "val").mkdir(parents=True)
    (run / "figlang.json").write_text(
        json.dumps({"base": {"path": f"{home}/.cache/figlang/models/mpnet"}, "out": f"{root}/runs/r"}), encoding="utf-8"
    )
    (run / "eval" / "val" / "results.json").write_text(json.dumps({"accuracy": 0.9}), encoding="utf-8")
    (run / "eval" / "val" / "predictions.jsonl").write_text('{"id": "a", "file": "' + str(root) + '/x.json"}\n', encoding="utf-8")
    (run / "notes.txt").write_text("not a result file", encoding="utf-8")
    return run


def test_publish_run_copies_result_files_only_with_portable_paths_and_stable_gzip(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    run = _fake_run(work, home)
    dest = work / "docs" / "results" / "r"
    written = publish_run.publish(run, dest, None)
    names = sorted(str(p.relative_to(dest)) for p in written)
    assert names == ["eval/val/predictions.jsonl.gz", "eval/val/results.json", "figlang.json"]  # no weights, no notes
    meta = json.loads((dest / "figlang.json").read_text(encoding="utf-8"))
    assert meta == {"base": {"path": "~/.cache/figlang/models/mpnet"}, "out": "runs/r"}
    rows = gzip.decompress((dest / "eval/val/predictions.jsonl.gz").read_bytes()).decode()
    assert str(work) not in rows and '"file": "x.json"' in rows
    first = (dest / "eval/val/predictions.jsonl.gz").read_bytes()
    publish_run.publish(run, dest, None)
    assert (dest / "eval/val/predictions.jsonl.gz").read_bytes() == first  # no timestamp: republishing changes nothing


def test_publish_run_refuses_a_folder_without_result_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr("sys.argv", ["publish_run.py", "empty", "out"])
    with pytest.raises(SystemExit, match="holds no result files"):
        publish_run.main()


def _dirty_run(root: Path, patch: bytes | None, recorded: bytes | None) -> Path:
    """A run whose results say they were made from a modified tree, with ``recorded``'s sha256 named as its patch
    (None: an older results file that names no patch), and ``patch`` written beside them as code.patch."""
    import hashlib

    run = root / "runs" / "dirty"
    (run / "eval" / "dev").mkdir(parents=True)
    code = {"figlang": "0.1.0", "git_commit": "a" * 40, "git_dirty": True, "source": "git checkout"}
    if recorded is not None:
        code["git_patch"] = {"file": "code.patch", "sha256": hashlib.sha256(recorded).hexdigest(), "bytes": len(recorded)}
    (run / "figlang.json").write_text(json.dumps({"provenance": {"code": code}}), encoding="utf-8")
    (run / "eval" / "dev" / "results.json").write_text(json.dumps({"provenance": {"code": code}}), encoding="utf-8")
    if patch is not None:
        (run / "code.patch").write_bytes(patch)
    return run


PATCH = b"diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_publish_run_refuses_a_dirty_run_without_its_patch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    old = _dirty_run(tmp_path / "a", None, None)  # made before figlang recorded patches
    with pytest.raises(SystemExit, match=r"modified working tree(.|\n)*figlang.json: made from a modified working tree"):
        publish_run.publish(old, tmp_path / "out-a", None)
    lost = _dirty_run(tmp_path / "b", None, PATCH)  # the patch named, the file gone
    with pytest.raises(
        SystemExit, match=r"eval/dev/results.json: its code patch \(sha256 [0-9a-f]{12}…\) is not beside it \(found: none\)"
    ):
        publish_run.publish(lost, tmp_path / "out-b", None)
    other = _dirty_run(tmp_path / "c", PATCH + b"+y = 3\n", PATCH)  # another patch than the one recorded
    with pytest.raises(SystemExit, match=r"found: code.patch"):
        publish_run.publish(other, tmp_path / "out-c", None)
    assert not (tmp_path / "out-a").exists() and not (tmp_path / "out-b").exists() and not (tmp_path / "out-c").exists()
    monkeypatch.setattr("sys.argv", ["publish_run.py", str(old), str(tmp_path / "out-d")])
    with pytest.raises(SystemExit, match="re-make the run from a clean commit"):
        publish_run.main()


def test_publish_run_publishes_a_dirty_run_with_its_patch_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    patch = PATCH.replace(b"x = 2", str(tmp_path).encode())  # even a machine path in the code stays as it is
    run = _dirty_run(tmp_path, patch, patch)
    written = publish_run.publish(run, tmp_path / "out", None)
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in written) == ["code.patch", "eval/dev/results.json", "figlang.json"]
    assert (tmp_path / "out" / "code.patch").read_bytes() == patch
    # a clean run, or one whose only changes were the excluded result files, needs no patch
    clean = tmp_path / "clean"
    clean.mkdir()
    code = {"git_commit": "b" * 40, "git_dirty": True, "git_patch": None, "git_patch_excludes": ["docs/results/"]}
    (clean / "results.json").write_text(json.dumps({"provenance": {"code": code}}), encoding="utf-8")
    assert publish_run.publish(clean, tmp_path / "out-clean", None)
    code["git_patch_error"] = "git could not make the working tree's patch"
    (clean / "results.json").write_text(json.dumps({"provenance": {"code": code}}), encoding="utf-8")
    with pytest.raises(SystemExit, match="records no patch"):
        publish_run.publish(clean, tmp_path / "out-clean2", None)


def test_explain_selection_sample_is_balanced_seeded_and_inside_selection(data_dir):
    from figlang.data.registry import get_task

    selection = get_task("flute").load("selection", data_dir)
    sample = explain_selection.sample_by_type(selection, 20, 0)
    again = explain_selection.sample_by_type(list(reversed(selection)), 20, 0)
    assert [r.id for r in sample] == sorted((r.id for r in again), key=[r.id for r in selection].index)
    counts: dict[tuple[str, str], int] = {}
    for r in sample:
        counts[(r.figure_type, r.label)] = counts.get((r.figure_type, r.label), 0) + 1
    assert counts == {(t, lb): 10 for t in ("idiom", "metaphor", "sarcasm", "simile") for lb in ("contradiction", "entailment")}
    assert {r.id for r in explain_selection.sample_by_type(selection, 20, 1)} != {r.id for r in sample}
    assert explain_selection.split_mix({"a": 10.0, "b": 40.0}, {"a": 0.75, "b": 0.25}) == 17.5
