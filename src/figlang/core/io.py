"""Reading and writing files without losing anything: located errors, explicit encodings, atomic writes."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from figlang.core.errors import STRICT, DataError, DataNotFoundError, FiglangError, LoadOptions


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """Read a whole text file, turning a missing file, an empty file or a wrong encoding into a DataError."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(
            "file not found", path, hint="run `figlang data download` or point --data-dir / FIGLANG_DATA_DIR at your copy"
        )
    raw = read_bytes(path)
    if not raw.strip():
        raise DataError("file is empty", path)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"cannot decode byte 0x{raw[exc.start]:02x} as {encoding}",
            path,
            line,
            hint="the file has another encoding; convert it to UTF-8 or declare its encoding",
        ) from None


def read_bytes(path: str | Path) -> bytes:
    """A file's bytes, decompressed when its name ends in ``.gz``: the one place figlang reads gzip'd text
    (committed predictions are ``predictions.jsonl.gz``), so every JSON-lines reader takes either."""
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix != ".gz":
        return raw
    import gzip
    import zlib

    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"not a readable gzip file ({exc})", path, hint="re-create it with `figlang report DIR --pack` or gzip") from None


def existing_or_gz(path: str | Path) -> Path | None:
    """``path`` if it exists, else ``path.gz`` if that exists, else None: a run folder's predictions.jsonl may be
    committed gzip'd."""
    path = Path(path)
    if path.is_file():
        return path
    gz = path.with_name(path.name + ".gz")
    return gz if gz.is_file() else None


def gzip_file(path: str | Path, remove: bool = True) -> Path:
    """Write ``path.gz`` beside ``path`` (atomically, byte-for-byte reproducible: no name or time in the header)
    and remove ``path``; the gzip'd copy is what docs/results commits."""
    import gzip

    path = Path(path)
    target = path.with_name(path.name + ".gz")
    with atomic_write(target, "wb") as f:
        f.write(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))
    if remove:
        path.unlink()
    return target


def decode_utf8(data: bytes, where: str | Path) -> str:
    """UTF-8 text of a user's file, or a FiglangError naming the file, line and byte (what to fix, not a traceback)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise FiglangError(f"{where}:{line}: not UTF-8 (byte {err.start}); re-save the file as UTF-8") from None


def iter_lines(path: str | Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its newline) for every non-blank line.

    Splits on "\n" only: str.splitlines() would also split on U+2028/U+0085, which JSON allows
    raw inside strings, breaking valid lines and shifting every reported line number.
    """
    text = read_text(path, encoding)
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield number, line


def parse_jsonl(text: str) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(1-based line number, object, problem) for each non-blank line of JSON-lines text.

    The one JSON-lines parser: ``problem`` says why a line is not a JSON object ("malformed JSON
    (... at column N)", "expected a JSON object, got list"), and ``object`` is then None, so each
    caller decides whether a bad line raises, is reported, or (a journal's torn last line) is redone.
    Splits on "\n" only, like :func:`iter_lines`.
    """
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, *parse_json_line(line)


def parse_json_line(line: str) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """(object, None) for a line holding one JSON object, else (None, why not): :func:`parse_jsonl` for one line."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"malformed JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(obj, dict):
        return None, f"expected a JSON object, got {type(obj).__name__}"
    return obj, None


def read_jsonl(path: str | Path, encoding: str = "utf-8") -> list[dict[str, Any]]:
    """Every object of a JSON-lines file figlang wrote itself (a missing or empty file: none); a bad line raises, located."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for number, obj, problem in parse_jsonl(read_bytes(path).decode(encoding)):
        if obj is None:
            raise DataError(problem or "unreadable line", path, number)
        out.append(obj)
    return out


def iter_jsonl(path: str | Path, options: LoadOptions = STRICT, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSON line; malformed lines raise (strict) or are skipped and reported (lenient)."""
    for number, obj, problem in parse_jsonl(read_text(path, encoding)):
        if obj is None:
            options.fail(DataError(problem or "unreadable line", path, number))
            continue
        yield number, obj


def iter_json_objects(path: str | Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each object of a JSON Lines file, or of a file holding one JSON array of objects.

    Why both: the FLUTE repository publishes its model predictions as one pretty-printed JSON array per
    figure type, while figlang and most tools write JSON Lines. An array element's line is the line its
    ``{`` opens on, so errors point into the file either way.
    """
    text = read_text(path, encoding)
    start = len(text) - len(text.lstrip())
    if not text[start : start + 1] == "[":
        yield from iter_jsonl(path, encoding=encoding)
        return
    decoder = json.JSONDecoder()
    line_of = lambda pos: text.count("\n", 0, pos) + 1  # noqa: E731

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    pos, n = skip(start + 1), 0
    if text[pos : pos + 1] == "]":
        return
    while True:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise DataError(f"malformed JSON array ({exc.msg} at column {exc.colno})", path, exc.lineno) from None
        n += 1
        if not isinstance(obj, dict):
            raise DataError(f"element {n} of the JSON array should be an object, got {type(obj).__name__}", path, line_of(pos))
        yield line_of(pos), obj
        pos = skip(end)
        if text[pos : pos + 1] == ",":
            pos = skip(pos + 1)
            continue
        if text[pos : pos + 1] == "]" and not text[pos + 1 :].strip():
            return
        what = "text after the closing ]" if text[pos : pos + 1] == "]" else "expected ',' or ']' after an element"
        raise DataError(f"malformed JSON array ({what})", path, line_of(pos))


def iter_tsv(
    path: str | Path, options: LoadOptions = STRICT, encoding: str = "utf-8", min_columns: int = 2
) -> Iterator[tuple[int, list[str]]]:
    """(line number, columns) for each line, split on tabs with quotes left alone (IMPLI has bare '"' characters)."""
    for number, line in iter_lines(path, encoding):
        cols = line.split("\t")
        if len(cols) < min_columns:
            options.fail(DataError(f"expected at least {min_columns} tab-separated columns, found {len(cols)}", path, number))
            continue
        yield number, cols


def parse_table(text: str, delimiter: str = ",", quoting: bool = True) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line number, cells)]) of CSV/TSV text with a header row: blank rows skipped, header cells
    stripped, a byte-order mark dropped. ``quoting=False`` reads quotes as text (TSV cells with a bare '"')."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")), delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoting else csv.QUOTE_NONE)
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    for row in reader:
        if not any(c.strip() for c in row):
            continue
        if header is None:
            header = [c.strip() for c in row]
            continue
        rows.append((reader.line_num, row))
    return header or [], rows


def require(obj: dict[str, Any], key: str, path: str | Path, line: int, kinds: type | tuple[type, ...] = str) -> Any:
    """obj[key], or a DataError naming the missing or mistyped field."""
    if key not in obj:
        raise DataError(f"missing field {key!r} (fields present: {', '.join(sorted(obj)) or 'none'})", path, line)
    value = obj[key]
    if not isinstance(value, kinds):
        want = kinds.__name__ if isinstance(kinds, type) else " or ".join(k.__name__ for k in kinds)
        raise DataError(f"field {key!r} should be {want}, got {type(value).__name__} {value!r}", path, line)
    return value


def git_blob_sha1(data: bytes | None = None, path: str | Path | None = None) -> str:
    """The SHA-1 git gives a file's contents (what the PROVENANCE files list): of ``data``, or of the file at ``path``
    read in 1 MiB blocks (a large download is never held in memory)."""
    if path is None:
        h = hashlib.sha1(b"blob %d\0" % len(data or b""))
        h.update(data or b"")
        return h.hexdigest()
    h = hashlib.sha1(b"blob %d\0" % Path(path).stat().st_size)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks (the one file-hash helper: data checksums, model files)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _file_mode(path: Path) -> int:
    """The replaced file's permissions, or what ``open`` would give a new file under the current umask."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Write to a temporary file beside ``path`` and rename it into place, so readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(path))  # mkstemp makes it 0600; a results file must read like any other file
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def file_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if absent) for the block: processes that read, merge and
    rewrite one shared file take turns, so none overwrites what another added meanwhile. POSIX only."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """One JSON object a line, atomically; gzip'd (reproducibly) when the name ends in ``.gz``."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if Path(path).suffix == ".gz":
        import gzip

        with atomic_write(path, "wb") as f:
            f.write(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
        return
    with atomic_write(path) as f:
        f.write(text)


def write_json(path: str | Path, obj: Any) -> None:
    with atomic_write(path) as f:
        json.dump(obj, f, ensure_ascii=False, indent=2)
        f.write("\n")
