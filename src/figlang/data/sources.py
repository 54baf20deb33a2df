"""Where each dataset comes from: repository, pinned commit, license and every file's checksum.

The manifest (``figlang/resources/sources.json``) is generated from the datasets' PROVENANCE.md
files by ``scripts/make_sources.py``. Pinning a commit and a git blob SHA-1 per file is what lets
``figlang data download`` prove it fetched exactly the published bytes, and ``figlang data
verify`` tell a user's copy apart from a damaged or edited one.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from figlang.core.errors import DataError, FiglangError

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_ENV = "FIGLANG_DOWNLOAD_BASE_URL"
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class SourceFile:
    """One file of a dataset: where it lives locally and in the repository, and its checksum."""

    path: str  # relative to <data_dir>/<dataset>/
    sha1: str  # git blob SHA-1 of the published file
    size: int | None = None  # bytes; None where the manifest does not know it
    repo_path: str | None = None  # path in the repository when it differs from ``path`` (gutenberg)
    extract_to: str | None = None  # archive members are unpacked into <dataset>/<extract_to>/
    known_modification: str | None = None  # why a local copy may legitimately differ

    @property
    def remote_path(self) -> str:
        return self.repo_path or self.path


@dataclass(frozen=True)
class DatasetSource:
    """A dataset's canonical public repository at a pinned commit."""

    name: str
    title: str
    owner: str
    repo: str
    commit: str
    license: str
    files: tuple[SourceFile, ...]

    @property
    def github_url(self) -> str:
        return f"https://github.com/{self.owner}/{self.repo}/tree/{self.commit}"

    def url(self, file: SourceFile, base_url: str | None = None) -> str:
        """``{base}/{owner}/{repo}/{commit}/{path}``, the raw.githubusercontent.com layout (path URL-quoted)."""
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/{self.owner}/{self.repo}/{self.commit}/{quote(file.remote_path, safe='/')}"

    def file(self, path: str) -> SourceFile:
        for f in self.files:
            if f.path == path:
                return f
        raise FiglangError(f"dataset {self.name!r} has no file {path!r} in the manifest")

    @property
    def total_size(self) -> int:
        return sum(f.size or 0 for f in self.files)


def _parse_file(raw: Any, where: str) -> SourceFile:
    if not isinstance(raw, dict):
        raise DataError(f"{where}: expected an object, got {type(raw).__name__}")
    for key in ("path", "sha1"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise DataError(f"{where}: missing or empty {key!r}")
    if not _SHA1.match(raw["sha1"]):
        raise DataError(f"{where}: {raw['sha1']!r} is not a 40-hex git blob SHA-1")
    size = raw.get("size")
    if size is not None and (not isinstance(size, int) or size < 0):
        raise DataError(f"{where}: size should be a non-negative integer or null, got {size!r}")
    path = raw["path"]
    if path.startswith("/") or ".." in Path(path).parts:
        raise DataError(f"{where}: path {path!r} must stay inside the dataset folder")
    return SourceFile(
        path=path,
        sha1=raw["sha1"],
        size=size,
        repo_path=raw.get("repo_path"),
        extract_to=raw.get("extract_to"),
        known_modification=raw.get("known_modification"),
    )


def parse_sources(obj: Any, origin: str = "sources.json") -> dict[str, DatasetSource]:
    """Validate a manifest object; errors name the dataset and file entry at fault."""
    if not isinstance(obj, dict) or not isinstance(obj.get("datasets"), dict):
        raise DataError("expected an object with a 'datasets' object", origin)
    out: dict[str, DatasetSource] = {}
    for name, raw in obj["datasets"].items():
        for key in ("owner", "repo", "commit", "files"):
            if key not in raw:
                raise DataError(f"dataset {name!r}: missing {key!r}", origin)
        if not _SHA1.match(str(raw["commit"])):
            raise DataError(f"dataset {name!r}: commit {raw['commit']!r} is not a 40-hex SHA", origin)
        files = tuple(_parse_file(f, f"dataset {name!r} file #{i}") for i, f in enumerate(raw["files"]))
        out[name] = DatasetSource(
            name=name,
            title=raw.get("title", name),
            owner=raw["owner"],
            repo=raw["repo"],
            commit=raw["commit"],
            license=raw.get("license", "not stated"),
            files=files,
        )
    return out


@lru_cache(maxsize=4)
def load_sources(path: str | Path | None = None) -> dict[str, DatasetSource]:
    """The manifest: the packaged ``sources.json`` unless ``path`` names another one."""
    if path is None:
        text = resources.files("figlang").joinpath("resources/sources.json").read_text(encoding="utf-8")
        origin = "figlang/resources/sources.json"
    else:
        origin = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise DataError("manifest not found", origin) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON ({exc.msg})", origin, exc.lineno) from None
    return parse_sources(obj, origin)


def dataset_names() -> list[str]:
    return list(load_sources())


def get_source(name: str) -> DatasetSource:
    """A dataset by folder name, with a did-you-mean on typos."""
    sources = load_sources()
    if name in sources:
        return sources[name]
    close = difflib.get_close_matches(name, list(sources), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise FiglangError(f"unknown dataset {name!r}; {hint}known datasets: {', '.join(sources)}")


def select(names: Iterable[str] | None = None) -> list[tuple[DatasetSource, list[SourceFile]]]:
    """Resolve names to (dataset, files). A name is a dataset (``flute``) or a dataset and a glob
    over its paths (``flute/testgolddata/*``, ``fig_narrative/data/idiom/*``) to fetch a subset.
    No names means every dataset."""
    sources = load_sources()
    if not names:
        return [(src, list(src.files)) for src in sources.values()]
    chosen: dict[str, list[SourceFile]] = {}
    for name in names:
        dataset, _, pattern = name.strip().strip("/").partition("/")
        src = get_source(dataset)
        files = [f for f in src.files if not pattern or fnmatch.fnmatchcase(f.path, pattern)]
        if not files:
            raise FiglangError(
                f"no file of {dataset!r} matches {pattern!r}; its files include: "
                + ", ".join(f.path for f in src.files[:5])
                + (" ..." if len(src.files) > 5 else "")
            )
        seen = chosen.setdefault(dataset, [])
        seen.extend(f for f in files if f not in seen)
    return [(sources[d], fs) for d, fs in chosen.items()]
