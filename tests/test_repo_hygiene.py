"""What the repository tracks: no model weights (beyond the small shipped heads, each with its record) and no
file over 5 MB, and every folder a script writes weights or staged wheels to is git-ignored.

``scripts/gpu/writer_prep.sh`` once put about 270 MB of weight shards in ``.gpu/``, which was not ignored: one
``git add -A`` from committing them. These tests read the real checkout with git; outside a git checkout (an
sdist) there is nothing tracked to check.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_BYTES = 5 * 1024 * 1024
WEIGHT_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".gguf",
    ".ckpt",
    ".onnx",
    ".h5",
    ".msgpack",
    ".pkl",
    ".pickle",
    ".npz",
    ".tflite",
)
SHIPPED_HEADS = "src/figlang/resources/heads/"
# folders that scripts/, benchmarks/ and the CLI's defaults write weights, wheels, caches or runs into
WRITTEN_FOLDERS = (".gpu", "runs", ".figlang-cache", "benchmarks/results", "mutants", ".whl", ".gl", ".venv")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def tracked() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing is tracked")
    out = _git("ls-files", "-z")
    assert out.returncode == 0, out.stderr
    return [p for p in out.stdout.split("\0") if p]


def weights_and_large_files(repo: Path, paths: list[str]) -> list[str]:
    """The tracked paths that must not be: weights outside the shipped heads (or a head without a matching
    record), and anything over 5 MB."""
    bad = []
    for rel in paths:
        path = repo / rel
        if not path.is_file():
            continue  # deleted in the working tree; git add decides
        size = path.stat().st_size
        if size > MAX_BYTES:
            bad.append(f"{rel}: {size / 2**20:.1f} MB (over 5 MB)")
        if rel.lower().endswith(WEIGHT_SUFFIXES):
            if not rel.startswith(SHIPPED_HEADS):
                bad.append(f"{rel}: a weights file")
                continue
            record = path.parent / "record.json"
            head = json.loads(record.read_text()).get("head", {}) if record.is_file() else {}
            if head.get("file") != path.name or head.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
                bad.append(f"{rel}: a shipped head without a record.json that names it with its sha256")
    return bad


def test_no_weights_or_large_file_is_tracked(tracked: list[str]) -> None:
    assert weights_and_large_files(REPO, tracked) == []


def test_the_check_catches_weights_large_files_and_unrecorded_heads(tmp_path: Path) -> None:
    (tmp_path / ".gpu").mkdir()
    (tmp_path / ".gpu" / "model.safetensors").write_bytes(b"\0" * 10)
    (tmp_path / "big.jsonl").write_bytes(b"x" * (MAX_BYTES + 1))
    (tmp_path / "ok.jsonl").write_bytes(b"x" * MAX_BYTES)
    head = tmp_path / SHIPPED_HEADS / "h"
    head.mkdir(parents=True)
    (head / "choice_head.safetensors").write_bytes(b"head")
    (head / "record.json").write_text(json.dumps({"head": {"file": "choice_head.safetensors", "sha256": "0" * 64}}))
    paths = [".gpu/model.safetensors", "big.jsonl", "ok.jsonl", f"{SHIPPED_HEADS}h/choice_head.safetensors"]
    assert weights_and_large_files(tmp_path, paths) == [
        ".gpu/model.safetensors: a weights file",
        "big.jsonl: 5.0 MB (over 5 MB)",
        f"{SHIPPED_HEADS}h/choice_head.safetensors: a shipped head without a record.json that names it with its sha256",
    ]
    (head / "record.json").write_text(
        json.dumps({"head": {"file": "choice_head.safetensors", "sha256": hashlib.sha256(b"head").hexdigest()}})
    )
    assert weights_and_large_files(tmp_path, paths[-1:]) == []


def _folders_scripts_write() -> set[str]:
    """Repository-relative folders named as outputs in scripts/ and benchmarks/: ``.gpu/...`` staging paths and
    ``runs/...`` defaults (a script writing elsewhere in the tree must be added to WRITTEN_FOLDERS)."""
    found = set()
    for path in [*REPO.glob("scripts/**/*.sh"), *REPO.glob("scripts/**/*.py"), *REPO.glob("benchmarks/*.py")]:
        for m in re.finditer(r"(?<![\w./-])(\.gpu|runs|\.figlang-cache|benchmarks/results)/[\w.{}$-]+", path.read_text(encoding="utf-8")):
            found.add(m.group(1))
    return found


def test_every_folder_a_script_writes_weights_to_is_ignored(tracked: list[str]) -> None:
    assert {".gpu", "runs"} <= _folders_scripts_write()  # the scan still sees writer_prep.sh's and the runs/ defaults
    for folder in sorted(set(WRITTEN_FOLDERS) | _folders_scripts_write()):
        probe = f"{folder}/w1/base.part0"
        assert _git("check-ignore", "-q", probe).returncode == 0, f"{folder}/ is not git-ignored"
        assert not [p for p in tracked if p.startswith(folder + "/")], f"{folder}/ has tracked files"
