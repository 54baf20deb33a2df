"""What the builders' verification queues share (FLUTE creator, IMPLI generator): reading and writing queue tables,
the import report, and the checks every verdict row goes through (id, duplicates, verdict word, edits).

Each builder's review module adds what is its own: where its pairs are, what is editable, its labels, its reasons,
and offers it as one :class:`ReviewQueue` (``flute_review.REVIEW``, ``impli.review.REVIEW``), the interface the web
app's review pages and the CLI's review commands use.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

from figlang.core.errors import DataError, DataNotFoundError
from figlang.core.io import atomic_write, parse_jsonl, parse_table, read_jsonl, read_text, write_jsonl
from figlang.core.text import collapse_spaces

VERDICTS = {
    "accept": "accept",
    "accepted": "accept",
    "a": "accept",
    "yes": "accept",
    "ok": "accept",
    "edit": "edit",
    "edited": "edit",
    "e": "edit",
    "reject": "reject",
    "rejected": "reject",
    "r": "reject",
    "no": "reject",
}
RATE_KEYS = ("candidates", "reviewed", "accept", "edit", "reject", "unreviewed")
REVIEW_DIR = "review"  # <run>/review/verdicts.jsonl: every stored verdict, the latest import last
VERDICTS_FILE = "verdicts.jsonl"


def verdicts_path(run: str | Path) -> Path:
    """Where a builder run keeps its reviewers' verdicts."""
    return Path(run) / REVIEW_DIR / VERDICTS_FILE


def verdicts_by_revision(run: str | Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Every stored verdict of a run, by (pair id, revision); the latest import wins."""
    return {(v["id"], int(v["revision"])): v for v in read_jsonl(verdicts_path(run))}


def read_table(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Rows of a CSV (header row) or JSONL file with their line numbers, and the lines that could not be read."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError("file not found", path)
    text = read_text(path)  # an empty file raises here, with its path
    rows: list[tuple[int, dict[str, Any]]] = []
    problems: list[str] = []
    if path.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        for number, obj, problem in parse_jsonl(text):
            if obj is None:
                problems.append(f"{path}:{number}: {problem}")
                continue
            rows.append((number, obj))
        return rows, problems
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    header, table = parse_table(text, delimiter)
    for line, row in table:
        if len(row) > len(header) and any(c.strip() for c in row[len(header) :]):
            problems.append(f"{path}:{line}: {len(row)} cells but the header has {len(header)} columns")
            continue
        rows.append((line, dict(zip(header, row))))
    return rows, problems


def write_table(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...], fmt: str | None) -> None:
    """Write rows as CSV (TSV for a .tsv name) or JSONL, atomically; the format follows the name unless given."""
    fmt = fmt or ("csv" if path.suffix.lower() in (".csv", ".tsv") else "jsonl")
    if fmt == "csv":
        with atomic_write(path, encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(columns), lineterminator="\n", delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            w.writeheader()
            for r in rows:
                w.writerow({c: "" if r.get(c) is None else r.get(c) for c in columns})
    elif fmt == "jsonl":
        write_jsonl(path, [{c: r.get(c) for c in columns} for r in rows])
    else:
        raise DataError(f"unknown format {fmt!r}: use csv or jsonl")


def write_queue(
    dest: str | Path, items: Iterable[dict[str, Any]], columns: tuple[str, ...], fmt: str | None, limit: int | None = None
) -> int:
    """Write a review queue: each item's fields for the columns before ``verdict``, the columns from ``verdict`` on
    left blank for the reviewer; at most ``limit`` rows. Returns the rows written."""
    fill = set(columns[columns.index("verdict") :])
    rows = [{c: "" if c in fill else item.get(c) for c in columns} for item in islice(items, limit)]
    write_table(Path(dest), rows, columns, fmt)
    return len(rows)


@dataclass
class VerdictsImportReport:
    rows: int = 0
    stored: int = 0
    blank: int = 0
    verdicts: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdicts": dict(self.verdicts)}  # the fields, in order; the counter as a plain dict


def located_rows(path: str | Path, report: VerdictsImportReport) -> list[tuple[str, int, dict[str, Any]]]:
    """A reviewed queue file's rows as (file:line, line, row); unreadable lines go to ``report.errors``."""
    rows, problems = read_table(path)
    report.errors.extend(problems)
    return [(f"{path}:{line}", line, row) for line, row in rows]


def import_file(store: Callable[..., VerdictsImportReport], folder: str | Path, path: str | Path) -> VerdictsImportReport:
    """Run a review module's ``store(folder, rows, report)`` over a reviewed queue file (rows located file:line)."""
    report = VerdictsImportReport()
    return store(folder, located_rows(path, report), report)


def save_verdicts(
    folder: str | Path, stored: dict[Any, dict[str, Any]], new: dict[Any, dict[str, Any]], report: VerdictsImportReport
) -> VerdictsImportReport:
    """The end of every ``store_verdicts``: the new verdicts join (or replace) the stored ones, and the verdicts file is
    rewritten (temp file + os.replace: all or nothing); ``report.stored`` counts the new ones."""
    stored.update(new)
    report.stored = len(new)
    write_jsonl(verdicts_path(folder), list(stored.values()))
    return report


def changed_verdict_note(where: str, pid: str, old: Mapping[str, Any], verdict: str) -> str:
    """The note a verdict that replaces a different stored one leaves in the import report."""
    return f"{where}: {pid} had verdict {old['verdict']!r} ({old['from']}); now {verdict!r}"


#: A review module's ``store_verdicts(folder, [(origin, line, row)], report)``: check rows against the folder's pairs, store the good ones.
StoreVerdicts = Callable[[str | Path, list[tuple[str, int, dict[str, Any]]], VerdictsImportReport], VerdictsImportReport]


class ReviewQueue(Protocol):
    """One builder's verification queue (FLUTE creator runs, IMPLI generator outputs), as its users see it."""

    # read-only: a queue is a frozen value (BuilderReview)
    @property
    def kind(self) -> str:
        """ "flute", "impli": the web app's URLs name it."""
        ...

    @property
    def title(self) -> str:
        """What a folder of this kind is, for people."""
        ...

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels an edit may choose."""
        ...

    @property
    def editable(self) -> tuple[str, ...]:
        """The pair fields a verdict may edit (``edited_<field>`` in a queue row)."""
        ...

    @property
    def reject_reasons(self) -> Mapping[str, str]:
        """The fixed reasons a rejection names; empty: a free note is the reason."""
        ...

    @property
    def import_cmd(self) -> str:
        """The CLI command that imports a reviewed queue file."""
        ...

    @property
    def finalize_cmd(self) -> str:
        """The CLI command that writes the verified files."""
        ...

    def holds_queue(self, folder: Path) -> bool:
        """Whether ``folder`` is a folder of this kind (a creator run, a generator output)."""
        ...

    def queue_items(self, folder: str | Path) -> list[dict[str, Any]]:
        """The pairs with their verdict under ``review`` (None while unreviewed), in queue order."""
        ...

    def review_rates(self, folder: str | Path) -> dict[str, dict[str, int]]:
        """Accept / edit / reject counts by type."""
        ...

    def import_verdicts(self, folder: str | Path, path: str | Path) -> VerdictsImportReport:
        """Check and store a reviewed queue file; bad rows are reported (file:line) and left out."""
        ...

    def record_verdict(self, folder: str | Path, row: dict[str, Any], where: str) -> VerdictsImportReport:
        """Store one verdict given as a queue row, checked as an imported row is; ``where`` is its origin."""
        ...


@dataclass(frozen=True)
class BuilderReview:
    """A :class:`ReviewQueue` made of a builder review module's functions: importing a file and recording one verdict
    both go through its ``store_verdicts``, so a verdict from the web form is checked exactly as an imported row."""

    kind: str
    title: str
    labels: tuple[str, ...]
    editable: tuple[str, ...]
    reject_reasons: Mapping[str, str]
    import_cmd: str
    finalize_cmd: str
    holds_queue: Callable[[Path], bool]
    queue_items: Callable[[str | Path], list[dict[str, Any]]]
    review_rates: Callable[[str | Path], dict[str, dict[str, int]]]
    store_verdicts: StoreVerdicts

    def import_verdicts(self, folder: str | Path, path: str | Path) -> VerdictsImportReport:
        """Check and store a reviewed queue file; bad rows are reported (file:line) and left out."""
        return import_file(self.store_verdicts, folder, path)

    def record_verdict(self, folder: str | Path, row: dict[str, Any], where: str) -> VerdictsImportReport:
        """Store one verdict given as a queue row (``id``, ``revision``, ``verdict``, ``edited_*``, ``note``), checked
        exactly as an imported queue row is; ``where`` is recorded as its origin (e.g. "figlang serve"). The verdicts
        file is rewritten atomically, so a review stopped between two verdicts keeps every one stored before."""
        return self.store_verdicts(folder, [(where, 1, row)], VerdictsImportReport())


def verdict_of(
    where: str, line: int, row: dict[str, Any], pairs: dict[str, Any], seen: dict[str, int], report: VerdictsImportReport, owner: str
) -> tuple[str, Any, str] | None:
    """The checks every verdict row starts with: an id, not seen before in this import, of a known pair (``owner``
    names where pairs come from), and a verdict word. Returns (id, pair, verdict), or None after reporting why
    (a blank verdict only counts as not reviewed yet)."""
    report.rows += 1
    pid = collapse_spaces(row.get("id"))
    if not pid:
        report.errors.append(f"{where}: no id")
        return None
    if pid in seen:
        report.errors.append(f"{where}: duplicate id {pid!r} (first at line {seen[pid]})")
        return None
    seen[pid] = line
    pair = pairs.get(pid)
    if pair is None:
        report.errors.append(f"{where}: unknown id {pid!r} (not a pair of {owner})")
        return None
    raw = collapse_spaces(row.get("verdict")).lower()
    if not raw:
        report.blank += 1
        return None
    verdict = VERDICTS.get(raw)
    if verdict is None:
        report.errors.append(f"{where}: verdict {row.get('verdict')!r} is not accept, edit or reject")
        return None
    return pid, pair, verdict


def edits_of(
    where: str,
    row: dict[str, Any],
    pair: dict[str, Any],
    verdict: str,
    editable: tuple[str, ...],
    label: Callable[[str], str | None],
    labels_hint: str,
    report: VerdictsImportReport,
) -> dict[str, str] | None:
    """The ``edited_*`` fields of a row that change the pair (labels through ``label``, None if unknown), checked
    against the verdict: an edit must change something, an accept or reject must not. None after reporting why."""
    edits: dict[str, str] = {}
    for f in editable:
        value = collapse_spaces(row.get(f"edited_{f}"))
        if not value:
            continue
        if f == "label":
            normal = label(value)
            if normal is None:
                report.errors.append(f"{where}: edited_label {value!r} is not {labels_hint}")
                return None
            value = normal
        if value != collapse_spaces(pair[f]):
            edits[f] = value
    if verdict == "edit" and not edits:
        report.errors.append(f"{where}: verdict 'edit' but no edited_{'/'.join(editable)} changes the pair")
        return None
    if verdict != "edit" and edits:
        report.errors.append(f"{where}: verdict {verdict!r} with edited fields ({', '.join(edits)}): use verdict 'edit' to keep them")
        return None
    final = {f: edits.get(f, pair[f]) for f in ("premise", "hypothesis")}
    if verdict == "edit" and collapse_spaces(final["premise"]).lower() == collapse_spaces(final["hypothesis"]).lower():
        report.errors.append(f"{where}: the edited premise and hypothesis are the same sentence")
        return None
    return edits


def reviewed_fields(
    item: Mapping[str, Any],
    verdict: Mapping[str, Any] | None,
    editable: Iterable[str],
    include_unreviewed: bool,
    left_out: Counter,
    *,
    by_reason: bool = False,
) -> tuple[str, dict[str, Any]] | None:
    """Whether a pair goes into a builder's final files: (its review: the verdict, or ``unreviewed``; its ``editable``
    fields with the reviewer's edits), or None after counting in ``left_out`` why not: rejected (``rejected: <reason>``
    with ``by_reason``), or unreviewed without ``include_unreviewed``."""
    review = verdict["verdict"] if verdict else "unreviewed"
    if review == "reject":
        left_out[f"rejected: {verdict['reason']}" if by_reason and verdict else "rejected"] += 1
        return None
    if review == "unreviewed" and not include_unreviewed:
        left_out["unreviewed"] += 1
        return None
    edits = verdict["edits"] if verdict else {}
    return review, {f: edits.get(f, item[f]) for f in editable}


def tally(items: Iterable[tuple[str, str | None]], order: Iterable[str]) -> dict[str, dict[str, int]]:
    """Review rates from (group, verdict or None) pairs: per group in ``order`` (others after, sorted), plus ``all``
    when there are several groups."""
    rates: dict[str, Counter] = {}
    for group, verdict in items:
        r = rates.setdefault(group, Counter(dict.fromkeys(RATE_KEYS, 0)))
        r["candidates"] += 1
        if verdict is None:
            r["unreviewed"] += 1
        else:
            r["reviewed"] += 1
            r[verdict] += 1
    order = list(order)
    ordered = {t: dict(rates[t]) for t in order + sorted(set(rates) - set(order)) if t in rates}
    if len(ordered) > 1:
        total: Counter = Counter()
        for counts in ordered.values():
            total.update(counts)
        ordered["all"] = dict(total)
    return ordered
