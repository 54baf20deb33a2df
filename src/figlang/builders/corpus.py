"""Reading a raw corpus into documents made of clean, unwrapped paragraphs.

Input: files, folders (searched recursively, in sorted order), ``.gz`` files, and JSONL files
with one document per line in a text field. Nothing is dropped silently: every file, line or
paragraph that is not read is recorded as a :class:`Skip` with its location and a reason, and
the miner prints the counts.

What happens to a text:

* bytes → str: a byte-order mark decides UTF-8/16/32; otherwise UTF-8, then Windows-1252 with a
  warning ("auto"), or exactly the encoding asked for. Binary files (NUL bytes, control
  characters) and undecodable files are skipped and reported, never guessed at.
* CRLF / CR → LF.
* Project Gutenberg boilerplate is stripped: the ``*** START OF ... ***`` / ``*** END OF ...``
  markers (the title may wrap onto the next line), the credit lines right after the start
  ("Produced by ...", the "early file" asterisk box), the "End of the Project Gutenberg EBook"
  line, and the old 1990s layout (``*END*THE SMALL PRINT!...*END*`` header, "End Project
  Gutenberg's ..." or "End of The Project Gutenberg Etext" footer).
* hard-wrapped lines → paragraphs (blank-line separated) → one line each; ``_emphasis_``
  underscores and ``[Illustration ...]`` tags are removed; a line break after a hyphen joins
  without a space ("to-\\nmorrow" → "to-morrow").
* headings (no lower-case letter, or "CHAPTER IV"-like) are kept as *breaks*: a narrative
  window never crosses one.
* a paragraph longer than ``max_paragraph_chars`` (an "enormous line", typically a file that
  is not prose) is skipped and reported.
"""

from __future__ import annotations

import fnmatch
import gzip
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from figlang.core.io import parse_json_line

DEFAULT_PATTERNS = ("*.txt", "*.text", "*.jsonl", "*.txt.gz", "*.jsonl.gz", "*.text.gz")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")

# --------------------------------------------------------------------------------------------
# reports


@dataclass(frozen=True)
class Skip:
    """Something that was not read, where it is, and why."""

    path: str
    reason: str
    line: int | None = None
    detail: str = ""

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "reason": self.reason, "detail": self.detail}

    @classmethod
    def from_dict(cls, d: dict) -> Skip:
        return cls(path=d["path"], reason=d["reason"], line=d.get("line"), detail=d.get("detail", ""))


@dataclass
class CorpusReport:
    """Counts of what was read and every item that was skipped (with its location)."""

    files: int = 0
    documents: int = 0
    paragraphs: int = 0
    skipped: list[Skip] = field(default_factory=list)
    notes: list[Skip] = field(default_factory=list)  # read, but worth knowing (decoded as cp1252, no Gutenberg end marker …)
    counts: Counter = field(default_factory=Counter)  # removed boilerplate, headings …

    def skip(self, path: str | Path, reason: str, line: int | None = None, detail: str = "") -> None:
        self.skipped.append(Skip(str(path), reason, line, detail))

    def note(self, path: str | Path, reason: str, line: int | None = None, detail: str = "") -> None:
        self.notes.append(Skip(str(path), reason, line, detail))

    def skipped_by_reason(self) -> Counter:
        return Counter(s.reason for s in self.skipped)


# --------------------------------------------------------------------------------------------
# sources


@dataclass(frozen=True)
class CorpusFile:
    """One input file of a corpus (not :class:`figlang.data.sources.SourceFile`, a dataset's download). ``display`` is the stable name used in document ids (relative to the input)."""

    path: str
    display: str
    kind: str  # "text" | "jsonl"
    compressed: bool = False

    def to_dict(self) -> dict:
        return {"path": self.path, "display": self.display, "kind": self.kind, "compressed": self.compressed}

    @classmethod
    def from_dict(cls, d: dict) -> CorpusFile:
        return cls(d["path"], d["display"], d["kind"], d.get("compressed", False))


def _kind_of(path: Path) -> tuple[str, bool]:
    name = path.name.lower()
    compressed = name.endswith(".gz")
    return ("jsonl" if name.endswith(JSONL_SUFFIXES) else "text"), compressed


def discover(
    inputs: Iterable[str | Path], patterns: tuple[str, ...] = DEFAULT_PATTERNS, report: CorpusReport | None = None
) -> list[CorpusFile]:
    """The files to read, in a deterministic order (inputs as given, folder contents sorted).

    Files named explicitly are always read. Inside folders only names matching ``patterns`` are
    read; the others (and hidden files) are recorded in ``report`` as ``not_matched`` so that a
    user sees them.
    """
    out: list[CorpusFile] = []
    seen: set[str] = set()
    for item in inputs:
        p = Path(item)
        if not p.exists():
            if report is not None:
                report.skip(p, "not_found", detail="no such file or folder")
            continue
        if p.is_file():
            files = [(p, p.name)]
        else:
            files = []
            root = p.resolve()
            for f in sorted(root.rglob("*")):
                if not f.is_file():
                    continue
                rel = f.relative_to(root).as_posix()
                if any(part.startswith(".") for part in f.relative_to(root).parts) or not any(
                    fnmatch.fnmatch(f.name.lower(), pat) for pat in patterns
                ):
                    if report is not None:
                        report.skip(f, "not_matched", detail=f"name does not match {', '.join(patterns)}")
                    continue
                files.append((f, f"{root.name}/{rel}"))
        for f, display in files:
            key = str(f.resolve())
            if key in seen:
                continue
            seen.add(key)
            kind, compressed = _kind_of(f)
            out.append(CorpusFile(key, display, kind, compressed))
    return out


# --------------------------------------------------------------------------------------------
# bytes → text


class DecodeProblem(Exception):
    def __init__(self, reason: str, detail: str, line: int | None = None):
        super().__init__(detail)
        self.reason, self.detail, self.line = reason, detail, line


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def read_bytes(source: CorpusFile) -> bytes:
    path = Path(source.path)
    if source.compressed:
        try:
            with gzip.open(path, "rb") as f:
                return f.read()
        except (OSError, EOFError) as exc:
            raise DecodeProblem("corrupt_gzip", f"cannot decompress: {exc}") from None
    return path.read_bytes()


def decode_bytes(raw: bytes, encoding: str = "auto") -> tuple[str, str]:
    """(text, encoding used). Raises DecodeProblem(reason in {binary, undecodable}) with the line of the first bad byte."""

    def _bad(exc: UnicodeDecodeError, enc: str) -> DecodeProblem:
        line = raw[: exc.start].count(b"\n") + 1
        return DecodeProblem(
            "undecodable", f"cannot decode byte 0x{raw[exc.start]:02x} as {enc} (pass --encoding to name the file's encoding)", line
        )

    if encoding != "auto":
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise _bad(exc, encoding) from None
        except LookupError:
            raise DecodeProblem("undecodable", f"unknown encoding {encoding!r}") from None
        return _check_text(text), encoding
    for bom, enc in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if raw.startswith(bom):
            try:
                return _check_text(raw.decode(enc)), enc
            except UnicodeDecodeError as exc:
                raise _bad(exc, enc) from None
    head = raw[:8192]
    if b"\x00" in head:
        raise DecodeProblem("binary", "contains NUL bytes: not a text file", raw[: head.index(b"\x00")].count(b"\n") + 1)
    try:
        return _check_text(raw.decode("utf-8")), "utf-8"
    except UnicodeDecodeError as utf8_error:
        try:
            return _check_text(raw.decode("cp1252")), "cp1252"
        except UnicodeDecodeError:
            raise _bad(utf8_error, "utf-8") from None


def _check_text(text: str) -> str:
    sample = text[:65536]
    if sample and len(_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise DecodeProblem("binary", "too many control characters: not a text file")
    return text


# --------------------------------------------------------------------------------------------
# Project Gutenberg boilerplate

_PG_START = re.compile(r"^\s*\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT)", re.I)
_PG_END = re.compile(r"^\s*\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT)", re.I)
_PG_OLD_START = re.compile(r"^\s*\*END\*?\s*THE SMALL PRINT!", re.I)
_PG_END_LINE = re.compile(r"^\s*End of (?:the )?Project Gutenberg|^\s*End Project Gutenberg|^\s*End of The Project Gutenberg", re.I)
_PG_CREDIT = re.compile(
    r"^\s*(?:Produced by|E-?text prepared by|Transcribed from|Digitized by|Prepared for Project Gutenberg|Scanned by|"
    r"This e-?text was|Etext prepared|HTML version by|Updated editions|Proofread by)",
    re.I,
)


@dataclass(frozen=True)
class GutenbergInfo:
    layout: str | None  # "new" | "old" | None (no Gutenberg markers found)
    header_lines: int = 0  # lines removed before the text
    footer_lines: int = 0
    credit_lines: int = 0  # credit/boilerplate lines removed after the start marker


def strip_gutenberg(text: str) -> tuple[str, GutenbergInfo]:
    """Remove a Project Gutenberg header and footer; ``text`` must use LF line ends.

    Returns the text between the markers and what was found. A text without any Gutenberg
    marker is returned unchanged (layout None).
    """
    lines = text.split("\n")
    start = end = None
    layout = None
    scan_head = min(len(lines), 2000)
    for i in range(scan_head):
        if _PG_START.match(lines[i]):
            start, layout = i, "new"
            # the title can wrap onto following lines; the marker ends with "***"
            j = i
            while not lines[j].rstrip().endswith("***") and j < i + 3 and j + 1 < len(lines):
                j += 1
            start = j if lines[j].rstrip().endswith("***") else i
            break
    if start is None:
        for i in range(scan_head):
            if _PG_OLD_START.match(lines[i]):
                start, layout = i, "old"
                break
    if start is None:
        # no start marker: accept a footer only if the text clearly is a Gutenberg file
        if not any("project gutenberg" in ln.lower() for ln in lines[:200]):
            return text, GutenbergInfo(None)
        start = -1
        layout = "unmarked"
    for i in range(len(lines) - 1, start, -1):
        if _PG_END.match(lines[i]):
            end = i
            break
    if end is None:  # old layout, or a new file without the end marker
        for i in range(len(lines) - 1, max(start, len(lines) - 3000), -1):
            if _PG_END_LINE.match(lines[i]):
                end = i
                break
    if end is None:
        end = len(lines)
    # "End of the Project Gutenberg EBook of ..." just before the *** END marker
    # (it may wrap onto a second line, so look back over a few non-blank lines)
    k, seen = end - 1, 0
    while k > start and seen < 3:
        if lines[k].strip():
            seen += 1
            if _PG_END_LINE.match(lines[k]):
                end = k
                break
        k -= 1
    body = lines[start + 1 : end]
    credits = _strip_credits(body)
    body = body[credits:]
    return "\n".join(body), GutenbergInfo(layout, start + 1 + credits, len(lines) - end, credits)


def _strip_credits(body: list[str]) -> int:
    """Number of leading lines that are production credits or an asterisk notice box."""
    i = n = 0
    limit = min(len(body), 80)
    while i < limit:
        line = body[i].strip()
        if not line:
            i += 1
            continue
        if _PG_CREDIT.match(line):
            # the credit paragraph: up to the next blank line
            while i < limit and body[i].strip():
                i += 1
            n = i
            continue
        if line.startswith("*****"):
            j = i + 1
            while j < limit and not body[j].strip().startswith("*****"):
                j += 1
            if j < limit:
                i = n = j + 1
                continue
        break
    return n


# --------------------------------------------------------------------------------------------
# text → paragraphs

_EMPH = re.compile(r"(?<![\w_])_(?=\S)([^_\n]{1,200}?)(?<=\S)_(?![\w_])")
_ILLUSTRATION = re.compile(r"\[(?:Illustration|Picture|Frontispiece)[^\]]*\]", re.I)
_HEADING = re.compile(r"^(?:chapter|book|part|stave|section|volume|canto|letter)\b[\s\w.,:—–-]{0,60}$|^[IVXLC]+\.?$|^the end\.?$", re.I)


@dataclass(frozen=True)
class Paragraph:
    text: str
    line: int  # 1-based line in the file (or in the JSONL record's text) where it starts
    is_break: bool = False  # a heading: narrative windows never cross it


def is_heading(text: str) -> bool:
    if not re.search(r"[a-z]", text):
        return True
    return bool(_HEADING.match(text.strip()))


def paragraphs_of(
    text: str,
    first_line: int = 1,
    max_paragraph_chars: int = 50_000,
    report: CorpusReport | None = None,
    path: str = "",
) -> list[Paragraph]:
    """Split LF text on blank lines, unwrap each paragraph, clean it, and mark headings as breaks."""
    out: list[Paragraph] = []
    buf: list[str] = []
    start = first_line

    def flush() -> None:
        if not buf:
            return
        size = sum(len(b) for b in buf)
        if size > max_paragraph_chars:
            if report is not None:
                report.skip(path, "enormous_paragraph", start, f"{size:,} characters > --max-paragraph-chars {max_paragraph_chars:,}")
            return
        joined = ""
        for piece in buf:
            piece = piece.strip()
            if not joined:
                joined = piece
            elif joined.endswith("-") and not joined.endswith("--") and len(joined) > 1 and joined[-2].isalpha() and piece[:1].islower():
                joined += piece  # a hyphenated word broken across lines
            else:
                joined += " " + piece
        cleaned = _ILLUSTRATION.sub(" ", joined)
        cleaned = _EMPH.sub(r"\1", cleaned)
        cleaned = " ".join(cleaned.replace("\u00a0", " ").split())
        if not cleaned:
            if report is not None:
                report.counts["illustration_tags"] += 1
            return
        if not re.search(r"[A-Za-z]", cleaned):
            if report is not None:
                report.counts["non_text_paragraphs"] += 1
            out.append(Paragraph(cleaned, start, True))
            return
        heading = is_heading(cleaned)
        if heading and report is not None:
            report.counts["headings"] += 1
        out.append(Paragraph(cleaned, start, heading))

    for offset, line in enumerate(text.split("\n")):
        if line.strip():
            if not buf:
                start = first_line + offset
            buf.append(line)
        else:
            flush()
            buf = []
    flush()
    return out


# --------------------------------------------------------------------------------------------
# documents


@dataclass(frozen=True)
class Document:
    doc_id: str
    path: str  # the file it came from
    line: int | None  # JSONL line (None for text files)
    paragraphs: tuple[Paragraph, ...]


@dataclass(frozen=True)
class ReadOptions:
    encoding: str = "auto"
    text_field: str = "text"
    id_field: str | None = None
    strip_gutenberg: bool = True
    max_paragraph_chars: int = 50_000


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_documents(
    source: CorpusFile,
    options: ReadOptions = ReadOptions(),
    report: CorpusReport | None = None,
    line_range: tuple[int, int] | None = None,
) -> Iterator[Document]:
    """The documents of one file (a text file is one document; a JSONL file one per line).

    ``line_range`` (1-based, inclusive start, exclusive end) restricts a JSONL file to a shard.
    Problems are recorded in ``report`` and the rest is still read.
    """
    report = report if report is not None else CorpusReport()
    path = source.path
    try:
        raw = read_bytes(source)
    except DecodeProblem as exc:
        report.skip(path, exc.reason, exc.line, exc.detail)
        return
    except OSError as exc:
        report.skip(path, "unreadable", detail=str(exc))
        return
    report.files += 1
    if not raw.strip():
        report.skip(path, "empty_file", detail="the file is empty or blank")
        return
    try:
        text, enc = decode_bytes(raw, options.encoding)
    except DecodeProblem as exc:
        report.skip(path, exc.reason, exc.line, exc.detail)
        return
    if enc == "cp1252":
        report.note(path, "decoded_as_cp1252", detail="not valid UTF-8; read as Windows-1252 (pass --encoding to override)")
    text = _normalise_newlines(text)
    if source.kind == "jsonl":
        yield from _jsonl_documents(source, text, options, report, line_range)
        return
    doc = _text_document(source.display, path, None, text, options, report)
    if doc is not None:
        yield doc


def _text_document(doc_id: str, path: str, line: int | None, text: str, options: ReadOptions, report: CorpusReport) -> Document | None:
    first_line = 1
    if options.strip_gutenberg:
        stripped, info = strip_gutenberg(text)
        if info.layout is not None:
            report.counts[f"gutenberg_{info.layout}"] += 1
            report.counts["gutenberg_lines_removed"] += info.header_lines + info.footer_lines
            first_line = info.header_lines + 1
            text = stripped
    location = f"{path}:{line}" if line is not None else path
    paragraphs = paragraphs_of(text, first_line, options.max_paragraph_chars, report, location if line is not None else path)
    if not any(not p.is_break for p in paragraphs):
        report.skip(path, "no_text", line, "no prose paragraph left after cleaning")
        return None
    report.documents += 1
    report.paragraphs += len(paragraphs)
    return Document(doc_id, path, line, tuple(paragraphs))


def _jsonl_documents(
    source: CorpusFile, text: str, options: ReadOptions, report: CorpusReport, line_range: tuple[int, int] | None
) -> Iterator[Document]:
    lo, hi = line_range if line_range is not None else (1, None)
    for number, line in enumerate(text.split("\n"), start=1):
        if number < lo:
            continue
        if hi is not None and number >= hi:
            break
        if not line.strip():
            continue
        obj, problem = parse_json_line(line)
        if obj is None:
            report.skip(source.path, "malformed_json", number, cast(str, problem))  # no object: a reason
            continue
        value = obj.get(options.text_field)
        if not isinstance(value, str):
            why = "missing" if value is None else f"not a string ({type(value).__name__})"
            report.skip(source.path, "missing_text_field", number, f"text field {options.text_field!r} {why} (use --text-field)")
            continue
        if not value.strip():
            report.skip(source.path, "empty_text", number, f"text field {options.text_field!r} is empty")
            continue
        doc_id = f"{source.display}:{number}"
        if options.id_field and isinstance(obj.get(options.id_field), (str, int)):
            doc_id = f"{source.display}:{obj[options.id_field]}"
        doc = _text_document(doc_id, source.path, number, _normalise_newlines(value), options, report)
        if doc is not None:
            yield doc


def jsonl_line_count(source: CorpusFile) -> int:
    """Number of lines of a (possibly gzipped) JSONL file, to cut it into shards."""
    opener = gzip.open if source.compressed else open
    try:
        with opener(source.path, "rb") as f:
            return sum(1 for _ in f)
    except (OSError, EOFError):
        return 0
