"""What a results file must say about how it was made: data checksums, versions, machine, the code's commit.

In the data layer so that builders and metrics that write result files (no model code) can record it too;
`figlang.evaluation.provenance` re-exports these beside its evaluation-only helper."""

from __future__ import annotations

import functools
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from figlang.core.io import atomic_write, file_sha256, write_json, write_jsonl

LIBRARIES = (
    "figlang",
    "torch",
    "transformers",
    "tokenizers",
    "bert-score",
    "bleurt-pytorch",
    "rouge-score",
    "sacrebleu",
    "nltk",
    "scipy",
    "numpy",
    "httpx",
)


def package_version(name: str) -> str | None:
    """An installed distribution's version, None when it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def library_versions() -> dict[str, str | None]:
    return {"python": sys.version.split()[0], **{name: package_version(name) for name in LIBRARIES}}


def machine() -> dict[str, Any]:
    import os

    return {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()}


def records_digest(records: Any) -> str:
    """sha256 over the records' content (ids, texts, labels; not file paths): the provenance of a set of
    records that is not a whole task split (a carved dev, a test fold, a sample)."""
    import hashlib
    import json

    h = hashlib.sha256()
    for r in records:
        d = r.to_dict()
        d.pop("meta", None)
        h.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _relative(f: Path, roots: tuple[Path, ...]) -> str:
    """``f`` relative to the first root that holds it (as given, then with links resolved on both sides), else as given."""
    for root in roots:
        for a, b in ((f, root), (f.resolve(), root.resolve())):
            try:
                return str(a.relative_to(b))
            except ValueError:
                continue
    return str(f)


def data_checksums(files: list[Path], root: str | Path | None = None, *more_roots: str | Path) -> list[dict[str, Any]]:
    """sha256 and size of every file a split was read from.

    Paths are relative to the data directory ``root`` where possible, else to the next of
    ``more_roots`` that holds them (a spec task's own folder), so that results carry no machine paths.
    """
    roots = tuple(Path(r) for r in (root, *more_roots) if r is not None)
    out = []
    for f in files:
        f = Path(f)
        rel = _relative(f, roots)
        if f.exists():
            out.append({"path": rel, "sha256": file_sha256(f), "bytes": f.stat().st_size})
        else:
            out.append({"path": rel, "sha256": None, "bytes": None})
    return out


def _git(args: list[str], cwd: Path) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


PATCH_FILE = "code.patch"
# what a run's patch leaves out: the committed result files, outputs of runs rather than code a run executes
PATCH_EXCLUDES = ("docs/results",)


def _git_bytes(args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> bytes | None:
    import subprocess

    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode in ok else None


def working_tree_patch(top: Path) -> bytes | None:
    """The checkout's changes against HEAD as one patch ``git apply`` takes: the tracked files' diff and every
    untracked file that is not ignored, as a new file; :data:`PATCH_EXCLUDES` left out. b"" for a clean tree,
    None when git cannot say."""
    spec = ["--", ".", *(f":(exclude){p}" for p in PATCH_EXCLUDES)]
    tracked = _git_bytes(["diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", "--no-renames", *spec], top)
    untracked = _git_bytes(["ls-files", "--others", "--exclude-standard", "-z", *spec], top)
    if tracked is None or untracked is None:
        return None
    parts = [tracked]
    for name in sorted(n for n in untracked.decode("utf-8", "surrogateescape").split("\0") if n):
        # exit status 1: the file differs from /dev/null, which is the point
        added = _git_bytes(["diff", "--no-index", "--binary", "--no-color", "--no-ext-diff", "--", "/dev/null", name], top, ok=(0, 1))
        if added is None:
            return None
        parts.append(added)
    return b"".join(parts)


def tree_state(source: Path) -> tuple[dict[str, Any], bytes]:
    """The commit of the git checkout holding ``source``, whether its tracked files have uncommitted changes
    (``git_dirty``), and the patch that turns that commit into the working tree (``git_patch``: its file name,
    sha256 and size; None for no change outside :data:`PATCH_EXCLUDES`). Outside a checkout: all None, no patch."""
    import hashlib

    top = _git(["rev-parse", "--show-toplevel"], source)
    commit = dirty = None
    patch = b""
    info: dict[str, Any] = {}
    if top and source.resolve().is_relative_to(Path(top).resolve()):
        commit = _git(["rev-parse", "HEAD"], source)
        status = _git(["status", "--porcelain", "--untracked-files=no"], source)
        dirty = None if status is None else bool(status)
        if commit:
            made = working_tree_patch(Path(top))
            patch = made or b""
            info["git_patch"] = None if not made else {"file": PATCH_FILE, "sha256": hashlib.sha256(made).hexdigest(), "bytes": len(made)}
            if made is None:
                info["git_patch_error"] = "git could not make the working tree's patch"
            info["git_patch_excludes"] = [f"{p}/" for p in PATCH_EXCLUDES]
    return {"git_commit": commit, "git_dirty": dirty, **info}, patch


@functools.lru_cache(maxsize=1)
def _code_state() -> tuple[dict[str, Any], bytes]:
    try:
        figlang_version: str | None = version("figlang")
    except PackageNotFoundError:
        figlang_version = None
    git, patch = tree_state(Path(__file__).resolve().parents[1])  # the figlang package folder
    code = {"figlang": figlang_version, **git, "source": "git checkout" if git["git_commit"] else "installed package"}
    return code, patch


def code_provenance() -> dict[str, Any]:
    """Which code made a result: figlang's version and, when figlang runs from a git checkout, its commit,
    whether the tree had uncommitted changes (``git_dirty``) and the patch of those changes (``git_patch``, see
    :func:`tree_state`; :func:`write_code_patch` writes it beside a result). Found from the imported package's own
    source tree, not the working directory, so a run made from elsewhere still names its code; None outside a
    checkout. Read once per process (the harness asks when a run starts): the code a process runs is the code it
    loaded."""
    import copy

    return copy.deepcopy(_code_state()[0])


def code_patch() -> bytes:
    """The patch :func:`code_provenance` names (b"" when it names none), read at the same moment."""
    return _code_state()[1]


def write_code_patch(folder: str | Path) -> Path | None:
    """Write this process's code patch as ``folder/code.patch`` when the code has one (a run made from a modified
    tree), so that the result beside it can be re-made: check out ``git_commit``, then ``git apply code.patch``."""
    patch = code_patch()
    if not patch:
        return None
    path = Path(folder) / PATCH_FILE
    if not (path.is_file() and path.read_bytes() == patch):
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "wb") as f:
            f.write(patch)
    return path


#: the gzip'd per-item records a published result keeps beside it (a run folder's own file is predictions.jsonl:
#: figlang.evaluation.run_index.PREDICTIONS_FILE)
PUBLISHED_PREDICTIONS = "predictions.jsonl.gz"


def write_result_files(out_dir: str | Path, name: str, result: Any, records: Any) -> tuple[Path, Path]:
    """Write a result file that a document quotes (``out_dir/name``: its figures and their provenance), the code
    patch that provenance names (a modified tree) and ``out_dir/predictions.jsonl.gz`` (its per-item records);
    returns the two files' paths."""
    out = Path(out_dir)
    write_json(out / name, result)
    write_code_patch(out)
    write_jsonl(out / PUBLISHED_PREDICTIONS, records)
    return out / name, out / PUBLISHED_PREDICTIONS


def split_fingerprint(records: Any) -> dict[str, Any]:
    """How many records and the sha256 of their sorted ids: a change to a carved split (dev-disjoint, selection)
    changes it, even when the data files do not change."""
    import hashlib

    ids = sorted(str(r.id) for r in records)
    return {"items": len(ids), "ids_sha256": hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()}


def provenance(splits: dict[str, Any], selection_split: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    """The ``provenance`` block of a results file: the code, every split used (name -> records) and the split each
    choice was made on (``selection_split``: choice -> split, e.g. {"epoch": "selection", "layer": "selection"});
    an empty ``selection_split`` says no choice was recorded, not that none was made."""
    return {
        "code": code_provenance(),
        "splits": {name: split_fingerprint(records) for name, records in splits.items()},
        "selection_split": dict(selection_split or {}),
        **extra,
    }


def portable_path(path: str | Path | None) -> str | None:
    """A path as a result file should record it: ``~/...`` under the home directory (the cache), relative to the
    working directory when it is near (the data in ``../shared/data``), else as given. Result files are committed and read on
    other machines, where this machine's absolute paths mean nothing."""
    import os

    if path is None:
        return None
    p = Path(path).expanduser()
    if not p.is_absolute():
        return str(path)
    home = Path.home()
    under_home = p.is_relative_to(home)
    if under_home and not Path.cwd().is_relative_to(home):
        return "~/" + str(p.relative_to(home))
    try:
        rel = os.path.relpath(p)
    except ValueError:
        rel = None
    if rel is not None and not rel.startswith("../.."):
        return rel
    return "~/" + str(p.relative_to(home)) if under_home else str(p)  # never this machine's home directory
