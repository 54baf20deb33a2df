"""Fetch the datasets from their public repositories at pinned commits, and check local copies.

Every file is checked against the git blob SHA-1 recorded in the manifest (``sources.json``)
*before* it is moved into place, so a data directory only ever holds complete, verified files:
a half-finished transfer stays in ``<file>.part`` and the next run resumes it with an HTTP
``Range`` request. One failing file does not stop the others; the report lists every failure.
"""

from __future__ import annotations

import os
import shutil
import time
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import httpx

from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write, git_blob_sha1
from figlang.core.context import RunContext, run_context
from figlang.data.sources import BASE_URL_ENV, DEFAULT_BASE_URL, DatasetSource, SourceFile, select

CHUNK = 1 << 16
RETRY_BACKOFF = 0.25  # seconds, times the attempt number, before retrying a dropped transfer or a 5xx
PART_SUFFIX = ".part"

Status = Literal["downloaded", "resumed", "skipped", "kept", "failed"]
CheckStatus = Literal["ok", "missing", "modified"]


class DownloadError(FiglangError):
    """A file could not be fetched; says which URL and what to do instead."""

    def __init__(self, message: str, url: str | None = None, hint: str | None = None):
        self.message = message
        self.url = url
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = self.message
        if self.url and self.url not in text:
            text += f" [{self.url}]"
        if self.hint:
            text += f" ({self.hint})"
        return text


class ChecksumError(DownloadError):
    """The bytes received are not the published file (wrong SHA-1 or size)."""

    def __init__(self, path: str, expected: str, actual: str, size: int, expected_size: int | None, url: str | None = None):
        self.path = path
        self.expected = expected
        self.actual = actual
        size_note = f", {size} bytes" + (f" (expected {expected_size})" if expected_size is not None and expected_size != size else "")
        super().__init__(
            f"{path}: checksum mismatch after download: expected git blob SHA-1 {expected}, got {actual}{size_note}; "
            "the corrupt file was deleted and nothing was put in place",
            url,
            "a proxy or mirror may be altering files; try again, use another --base-url, or copy the file in by hand",
        )


@dataclass
class FileResult:
    """What happened to one manifest file in a download run."""

    dataset: str
    path: str
    status: Status
    url: str
    bytes: int = 0  # bytes received in this run
    error: DownloadError | None = None
    note: str | None = None

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.path}"


class _FilesReport:
    """What a report over the manifest's files answers from its per-file entries: whether none failed, and the
    statuses per dataset."""

    @property
    def failures(self) -> Sequence[FileResult | FileCheck]:
        raise NotImplementedError

    def entries(self) -> Sequence[FileResult | FileCheck]:
        """One entry per file."""
        raise NotImplementedError

    @property
    def ok(self) -> bool:
        return not self.failures

    def counts(self) -> dict[str, Counter[str]]:
        """Per dataset, how many files ended in each status."""
        out: dict[str, Counter[str]] = {}
        for e in self.entries():
            out.setdefault(e.dataset, Counter())[e.status] += 1
        return out


@dataclass
class DownloadReport(_FilesReport):
    data_dir: Path
    base_url: str
    results: list[FileResult] = field(default_factory=list)

    @property
    def failures(self) -> list[FileResult]:
        return [r for r in self.results if r.status == "failed"]

    def entries(self) -> list[FileResult]:
        return self.results

    def raise_for_failures(self) -> None:
        """Raise one DownloadError listing every failed file (for callers that want an exception)."""
        if self.failures:
            lines = "\n".join(f"  {r.key}: {r.error}" for r in self.failures)
            raise DownloadError(f"{len(self.failures)} of {len(self.results)} files failed:\n{lines}")


@dataclass
class FileCheck:
    """The state of one manifest file in a data directory."""

    dataset: str
    path: str
    status: CheckStatus
    expected_sha1: str
    actual_sha1: str | None = None
    expected_size: int | None = None
    actual_size: int | None = None
    note: str | None = None
    known: bool = False  # a modification the manifest expects (the shared copy's narrative train files)

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.path}"

    @property
    def failed(self) -> bool:
        return self.status == "missing" or (self.status == "modified" and not self.known)


@dataclass
class VerifyReport(_FilesReport):
    data_dir: Path
    checks: list[FileCheck] = field(default_factory=list)

    @property
    def failures(self) -> list[FileCheck]:
        return [c for c in self.checks if c.failed]

    def entries(self) -> list[FileCheck]:
        return self.checks

    def by_status(self, status: CheckStatus) -> list[FileCheck]:
        return [c for c in self.checks if c.status == status]


# --------------------------------------------------------------------------- hashing


def blob_sha1_file(path: str | Path) -> str:
    """Git blob SHA-1 of a file, streamed (``io.git_blob_sha1``)."""
    return git_blob_sha1(path=path)


# --------------------------------------------------------------------------- progress


class _Progress:
    """A rich progress display (bytes, rate, ETA), or nothing when disabled."""

    def __init__(self, enabled: bool, total_bytes: int, total_files: int):
        self.enabled = enabled and total_files > 0
        self.total_files = total_files
        self.done_files = 0
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description}", style="bold"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.overall = self.bar.add_task("all files", total=total_bytes or None)
        self.current = self.bar.add_task("", total=None, visible=False)

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.bar.stop()

    def start_file(self, label: str, total: int | None, completed: int) -> None:
        if self.enabled:
            desc = f"[{self.done_files + 1}/{self.total_files}] {label}"
            self.bar.reset(self.current, total=total, completed=completed, description=desc, visible=True)

    def restart_file(self) -> None:
        if self.enabled:  # take back what the failed attempt added to the total
            done = next(t.completed for t in self.bar.tasks if t.id == self.current)
            self.bar.advance(self.overall, -done)
            self.bar.update(self.current, completed=0)

    def advance(self, n: int) -> None:
        if self.enabled:
            self.bar.advance(self.current, n)
            self.bar.advance(self.overall, n)

    def end_file(self) -> None:
        self.done_files += 1
        if self.enabled:
            self.bar.update(self.current, visible=False)


# --------------------------------------------------------------------------- transfer


class _Restart(Exception):
    """The part file cannot be continued; start the transfer from zero."""


def _range_start(content_range: str | None) -> int | None:
    # "bytes 100-999/1000" -> 100
    if not content_range or not content_range.startswith("bytes "):
        return None
    try:
        return int(content_range[6:].split("-", 1)[0])
    except ValueError:
        return None


def _fetch(client: httpx.Client, url: str, part: Path, size: int | None, progress: _Progress, label: str) -> tuple[int, bool]:
    """Stream ``url`` into ``part``, continuing from what ``part`` already holds.

    Returns (bytes received, whether the server continued a partial file with a 206 answer)."""
    offset = part.stat().st_size if part.exists() else 0
    if size is not None and offset > size:
        part.unlink()
        offset = 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    received = 0
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code == 416 and offset:
            return 0, True  # nothing after `offset`: the part file is already complete (verification decides)
        response.raise_for_status()
        if response.status_code == 206:
            if _range_start(response.headers.get("content-range")) != offset:
                part.unlink(missing_ok=True)
                raise _Restart
            mode, resumed = "ab", True
        else:  # 200: no Range sent, or the server ignored it: the body is the whole file
            mode, offset, resumed = "wb", 0, False
        progress.start_file(label, size, offset)
        with open(part, mode) as f:
            for chunk in response.iter_bytes():  # as it arrives, so a dropped connection keeps all it got
                f.write(chunk)
                received += len(chunk)
                progress.advance(len(chunk))
            f.flush()
            os.fsync(f.fileno())
    return received, resumed


def _offline_hint(data_dir: Path, dataset: str) -> str:
    return f"no network? copy the files into {data_dir / dataset}/ instead, or pass --base-url URL (or set {BASE_URL_ENV}) to use a mirror"


class _Unreachable(DownloadError):
    pass


def _download_one(
    client: httpx.Client,
    src: DatasetSource,
    file: SourceFile,
    dest: Path,
    url: str,
    data_dir: Path,
    retries: int,
    progress: _Progress,
) -> tuple[int, bool]:
    """Fetch, verify and move one file into place. Returns (bytes received, resumed?). Raises DownloadError."""
    part = dest.with_name(dest.name + PART_SUFFIX)
    dest.parent.mkdir(parents=True, exist_ok=True)
    resumed = False
    received = 0
    transient_left = retries
    fresh_retry_left = True
    while True:
        try:
            got, continued = _fetch(client, url, part, file.size, progress, f"{src.name}/{file.path}")
            received += got
            resumed = resumed or continued
        except _Restart:
            progress.restart_file()
            continue
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
            raise _Unreachable(f"cannot reach {url}: {str(exc) or type(exc).__name__}", url, _offline_hint(data_dir, src.name)) from None
        except httpx.HTTPStatusError as exc:
            code = exc.response.status_code
            if code >= 500 and transient_left > 0:
                transient_left -= 1
                time.sleep(RETRY_BACKOFF * (retries - transient_left))
                continue
            hint = (
                f"the pinned commit {src.commit[:10]} or path may not be on this server; check "
                f"{src.github_url}, or copy the file to {dest} by hand"
                if code == 404
                else _offline_hint(data_dir, src.name)
            )
            raise DownloadError(f"HTTP {code} {exc.response.reason_phrase} for {url}", url, hint) from None
        except httpx.TransportError as exc:  # connection dropped or timed out mid-transfer
            have = part.stat().st_size if part.exists() else 0
            if transient_left > 0:
                transient_left -= 1
                time.sleep(RETRY_BACKOFF * (retries - transient_left))
                continue
            raise DownloadError(
                f"transfer of {url} interrupted after {have} bytes ({type(exc).__name__}: {exc})",
                url,
                f"run the command again to resume from {part.name}",
            ) from None

        got_size = part.stat().st_size if part.exists() else 0
        got_sha1 = blob_sha1_file(part) if part.exists() else git_blob_sha1(b"")
        if got_sha1 == file.sha1 and (file.size is None or got_size == file.size):
            os.replace(part, dest)
            return received, resumed
        part.unlink(missing_ok=True)
        if fresh_retry_left:  # a stale part file or a glitch: one more try from zero
            fresh_retry_left = False
            progress.restart_file()
            continue
        raise ChecksumError(f"{src.name}/{file.path}", file.sha1, got_sha1, got_size, file.size, url)


def _extract(archive: Path, target: Path, force: bool) -> int:
    """Unpack a zip archive's members into ``target`` (atomically per member). Returns how many were written."""
    written = 0
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = info.filename
                if info.is_dir() or name.startswith("__MACOSX/"):
                    continue
                if name.startswith("/") or ".." in Path(name).parts:
                    raise DownloadError(f"{archive}: refusing to extract {name!r} outside {target}")
                out = target / name
                if not force and out.is_file() and out.stat().st_size == info.file_size:
                    continue
                with atomic_write(out, "wb") as f, zf.open(info) as member:
                    shutil.copyfileobj(member, f, CHUNK)  # zipfile checks the member's CRC as it reads
                written += 1
    except zipfile.BadZipFile as exc:
        raise DownloadError(f"{archive}: cannot extract ({exc})", hint="delete the archive and download it again") from None
    return written


def resolve_base_url(base_url: str | None = None) -> str:
    """The argument, then $FIGLANG_DOWNLOAD_BASE_URL, then raw.githubusercontent.com."""
    return (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


_Todo = list[tuple[DatasetSource, SourceFile, Path, FileResult]]
_Selection = list[tuple[DatasetSource, list[SourceFile]]]


def _plan(selection: _Selection, root: Path, base: str, force: bool, report: DownloadReport) -> _Todo:
    """The files to fetch: every selected file gets its result in ``report``; one already there with the manifest's SHA-1
    (or a known, deliberate modification) is skipped unless ``force``."""
    todo: _Todo = []
    for src, files in selection:
        for file in files:
            dest = root / src.name / file.path
            result = FileResult(src.name, file.path, "skipped", src.url(file, base))
            report.results.append(result)
            if dest.is_file() and not force:
                if blob_sha1_file(dest) == file.sha1:
                    continue
                if file.known_modification:
                    result.status = "kept"
                    result.note = f"kept a modified copy: {file.known_modification}; --force replaces it"
                    continue
                result.note = "the local copy's SHA-1 did not match the manifest, so it was fetched again"
            elif force:
                (dest.with_name(dest.name + PART_SUFFIX)).unlink(missing_ok=True)
            todo.append((src, file, dest, result))
    return todo


def _fetch_all(todo: _Todo, root: Path, timeout: float, retries: int, progress: bool) -> None:
    """Download the planned files (resuming partial ones); a host that did not answer is not tried again."""
    total = sum(f.size or 0 for _, f, _, _ in todo)
    unreachable: dict[str, DownloadError] = {}
    headers = {"User-Agent": "figlang-data-download", "Accept-Encoding": "identity"}
    http_timeout = httpx.Timeout(timeout, connect=min(timeout, 15.0))
    with httpx.Client(follow_redirects=True, timeout=http_timeout, headers=headers) as client, _Progress(progress, total, len(todo)) as bar:
        for src, file, dest, result in todo:
            host = urlsplit(result.url).netloc
            if host in unreachable:
                result.status = "failed"
                result.error = DownloadError(f"not tried: {host} was unreachable (see the first failure)")
                bar.end_file()
                continue
            try:
                result.bytes, resumed = _download_one(client, src, file, dest, result.url, root, retries, bar)
                result.status = "resumed" if resumed else "downloaded"
            except _Unreachable as exc:
                unreachable[host] = exc
                result.status, result.error = "failed", exc
            except DownloadError as exc:
                result.status, result.error = "failed", exc
            except OSError as exc:  # disk full, read-only data dir, ...
                result.status = "failed"
                result.error = DownloadError(
                    f"cannot write {dest}: {exc.strerror or exc}", result.url, "pass --data-dir with a writable folder"
                )
            finally:
                bar.end_file()


def _unpack(selection: _Selection, root: Path, force: bool, report: DownloadReport) -> None:
    """Extract the archives that loaders read unpacked (those fetched now, or all with ``force``)."""
    for src, files in selection:
        for file in files:
            if not file.extract_to:
                continue
            result = next(r for r in report.results if r.dataset == src.name and r.path == file.path)
            if result.status in ("failed", "kept"):
                continue
            try:
                n = _extract(root / src.name / file.path, root / src.name / file.extract_to, force or result.status != "skipped")
            except (DownloadError, OSError) as exc:
                result.status = "failed"
                result.error = exc if isinstance(exc, DownloadError) else DownloadError(f"cannot extract {file.path}: {exc}")
                continue
            if n:
                result.note = f"extracted {n} file(s) into {file.extract_to}/"


def download(
    names: Iterable[str] | None = None,
    data_dir: str | Path | None = None,
    base_url: str | None = None,
    force: bool = False,
    progress: bool = True,
    timeout: float = 60.0,
    retries: int = 2,
    *,
    ctx: RunContext | None = None,
) -> DownloadReport:
    """Download and verify the named datasets (all when None) into ``<data_dir>/<dataset>/`` (the run context's data
    folder, or ``data_dir``).

    ``names`` are dataset folder names, or ``dataset/<glob>`` for a subset of its files.
    Files already present with the right SHA-1 are skipped; ``force`` fetches everything again
    (and replaces a known, deliberate local modification, which is otherwise kept).
    ``retries`` covers dropped connections (resumed with Range) and HTTP 5xx answers.
    Failures are collected in the report, never raised; see ``DownloadReport.raise_for_failures``.
    """
    selection = select(list(names) if names is not None else None)
    root = run_context(ctx, data_dir=data_dir).data_dir
    base = resolve_base_url(base_url)
    report = DownloadReport(data_dir=root, base_url=base)

    todo = _plan(selection, root, base, force, report)  # 1. what is already there is hashed, not fetched
    _fetch_all(todo, root, timeout, retries, progress)  # 2.
    _unpack(selection, root, force, report)  # 3. archives that loaders read unpacked
    return report


def verify(names: Iterable[str] | None = None, data_dir: str | Path | None = None, *, ctx: RunContext | None = None) -> VerifyReport:
    """Check each manifest file in the data directory (the run context's, or ``data_dir``): ok, missing, or modified
    (SHA-1 differs).

    The narrative train files of the shared data copy are modified on purpose; they are
    reported as modified with a note and ``known=True`` and do not count as failures.
    """
    selection = select(list(names) if names is not None else None)
    root = run_context(ctx, data_dir=data_dir).data_dir
    report = VerifyReport(data_dir=root)
    for src, files in selection:
        for file in files:
            path = root / src.name / file.path
            check = FileCheck(src.name, file.path, "missing", file.sha1, expected_size=file.size)
            report.checks.append(check)
            if not path.is_file():
                part = path.with_name(path.name + PART_SUFFIX)
                check.note = (
                    f"a partial download is in {part.name}; run `figlang data download {src.name}` to finish it"
                    if part.exists()
                    else f"run `figlang data download {src.name}`"
                )
                continue
            check.actual_size = path.stat().st_size
            check.actual_sha1 = blob_sha1_file(path)
            if check.actual_sha1 == file.sha1:
                check.status = "ok"
                if file.extract_to:
                    check.note = _extraction_note(path, root / src.name / file.extract_to, src.name)
                continue
            check.status = "modified"
            if file.known_modification:
                check.known = True
                check.note = file.known_modification
            else:
                check.note = f"SHA-1 differs from the published file; `figlang data download --force {src.name}/{file.path}` restores it"
    return report


def _extraction_note(archive: Path, target: Path, dataset: str) -> str | None:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")]
    except zipfile.BadZipFile:
        return None
    missing = [i.filename for i in members if not ((target / i.filename).is_file() and (target / i.filename).stat().st_size == i.file_size)]
    if missing:
        return f"not (fully) extracted into {target.name}/ ({', '.join(missing)}); run `figlang data download {dataset}`"
    return None
