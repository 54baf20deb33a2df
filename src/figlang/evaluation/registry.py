"""The results registry: every figure README.md and docs/ quote, tied to the result file it comes from.

``docs/results/INDEX.yaml`` lists groups of quoted figures. A group names the document that quotes
them, the result file (relative to docs/results) and, for a figure in a results table, the table
(the Markdown table after a ``<!-- results-table: NAME -->`` comment) and a text that picks its row::

    - doc: README.md
      table: suite
      row: impli-idioms-manual
      file: zs/impli-manual-nli-score-smollm2/results.json
      figures:
        - [accuracy, "45.6", metrics.accuracy.accuracy, 100]    # id, printed text, key path, scale
        - [majority, "54.4", metrics, 100, majority]             # ... and a derivation

Why: a figure typed into a document drifts from the run that made it (a rerun, a rounding, a copy
from another table). Here each printed figure is checked against its file at the printed precision
(:func:`check_index`), every number of a marked results table must be a registered figure or sit in
a row that says it has no result file (:func:`unmarked_numbers`), and the tables can be rewritten
from the files (:func:`regenerate_tables`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.evaluation.prose_figures import (
    NUMBER,
    PAGE_MARK,
    NotFigure,
    anchor_places,
    flatten,
    printed_sign,
    sign_problem,
    unaccounted_numbers,
)

INDEX_FILE = "INDEX.yaml"
NO_RESULT_FILE = "(no result file; to be re-run)"
# <!-- results-table: NAME --> or <!-- results-table: NAME no-file=ⁿ -->: ⁿ in a cell stands for NO_RESULT_FILE
# (a table's legend must then say so), so a table of many unbacked cells stays readable
_TABLE_MARK = re.compile(r"<!--\s*results-table:\s*([\w.-]+)(?:\s+no-file=(\S+))?\s*-->")
# <!-- not-results-table: WHY -->: a table of numbers that are not quoted results (options, item numbers, a
# worked example's inputs); the reason is required so the exemption is visible in review
_NOT_RESULTS_MARK = re.compile(r"<!--\s*not-results-table:\s*(\S.*?)\s*-->")


@dataclass(frozen=True)
class Figure:
    doc: str  # the quoting document, relative to the repository root
    id: str
    text: str  # as printed: "73.24", "1,157"
    file: str  # relative to the results folder
    key: tuple[str, ...]
    scale: float = 1.0
    derive: str | None = None
    table: str | None = None
    row: str | None = None
    no_predictions: str | None = None  # why its folder keeps no per-item predictions (INDEX.yaml ``no-predictions:``)
    at: tuple[str, ...] = ()  # a prose figure's place: the words around it as the page prints them (INDEX.yaml ``at:``)
    predictions: tuple[str, ...] = ()  # the per-item predictions it recomputes from, where not in its own folder

    @property
    def where(self) -> str:
        return f"{self.doc} {self.table + ' ' if self.table else ''}{self.row + ' ' if self.row else ''}{self.id} ({self.text})"


def load_index(results_dir: str | Path) -> list[Figure]:
    """The figures of ``results_dir/INDEX.yaml``, in file order."""
    import yaml

    path = Path(results_dir) / INDEX_FILE
    if not path.exists():
        raise FiglangError(f"{path}: no results index; it lists every quoted figure and its result file")
    groups = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    out: list[Figure] = []
    for g, group in enumerate(groups):
        try:
            for item in group["figures"]:
                fid, text, key, *rest = item
                out.append(
                    Figure(
                        doc=group["doc"],
                        id=str(fid),
                        text=str(text),
                        file=group["file"],
                        key=tuple(str(key).split(".")) if key else (),
                        scale=float(rest[0]) if rest else 1.0,
                        derive=rest[1] if len(rest) > 1 else None,
                        table=group.get("table"),
                        row=group.get("row"),
                        no_predictions=group.get("no-predictions"),
                        at=_as_tuple((group.get("at") or {}).get(str(fid))),
                        predictions=_as_tuple(group.get("predictions")),
                    )
                )
        except (KeyError, TypeError, ValueError) as err:
            raise FiglangError(f"{path}: group {g + 1} is malformed ({err}); see figlang.evaluation.registry for the format") from None
    return out


def _as_tuple(value: Any) -> tuple[str, ...]:
    return () if value is None else (str(value),) if isinstance(value, str) else tuple(str(v) for v in value)


def _majority(node: Any) -> float:
    """The majority-label rate of a scored split: the largest gold label's share."""
    counts = [v["n"] for v in node["by_gold_label"].values()]
    return max(counts) / sum(counts)


def _fold_accuracies(node: Any) -> list[float]:
    """The test-fold accuracies of a folds_summary.json ``per_fold``."""
    return [v["accuracy"]["accuracy"] if isinstance(v["accuracy"], dict) else v["accuracy"] for v in node.values()]


DERIVATIONS: dict[str, Callable[[Any], float]] = {
    "majority": _majority,
    "count": lambda node: float(len(node)),
    "abs": lambda node: abs(float(node)),  # a difference printed with its sign outside the number: the sign is checked
    "items_per_second": lambda node: node["items"] / node["seconds"],  # a benchmark mode's throughput (wall clock)
    "min_fold": lambda node: min(_fold_accuracies(node)),
    "max_fold": lambda node: max(_fold_accuracies(node)),
}


def _read(path: Path, cache: dict[Path, Any]) -> Any:
    if path not in cache:
        cache[path] = json.loads(path.read_text(encoding="utf-8"))
    return cache[path]


def figure_value(figure: Figure, results_dir: str | Path, cache: dict[Path, Any] | None = None, signed: bool = False) -> float:
    """The value the figure's key path names in its file, derived and scaled as the index says (``signed``: before
    the ``abs`` derivation, whose sign the page must print)."""
    path = Path(results_dir) / figure.file
    if not path.exists():
        raise FiglangError(f"{figure.where}: result file {path} does not exist")
    node = _read(path, {} if cache is None else cache)
    parts = list(figure.key)
    while parts:
        part = parts.pop(0)
        while isinstance(node, dict) and part not in node and parts:  # a key that holds dots (modes.qwen-llama.cpp)
            part += "." + parts.pop(0)
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise FiglangError(f"{figure.where}: {path} has no {'.'.join(figure.key)} (stops at {part!r})") from None
    if figure.derive and not (signed and figure.derive == "abs"):
        if figure.derive not in DERIVATIONS:
            raise FiglangError(f"{figure.where}: unknown derivation {figure.derive!r} (known: {', '.join(DERIVATIONS)})")
        node = DERIVATIONS[figure.derive](node)
    if not isinstance(node, (int, float)) or isinstance(node, bool):
        raise FiglangError(f"{figure.where}: {path} {'.'.join(figure.key)} is not a number: {node!r}")
    return float(node) * figure.scale


def decimals(text: str) -> int:
    mantissa = text.split("e", 1)[0]
    return len(mantissa.split(".", 1)[1]) if "." in mantissa else 0


def format_like(value: float, text: str) -> str:
    """``value`` printed as ``text`` is: the same number of decimals, thousands separators if it has them,
    scientific notation as the documents write it (1.4e-5)."""
    places = decimals(text)
    if "e" in text:
        mantissa, exponent = f"{value:.{places}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{value:,.{places}f}" if "," in text else f"{value:.{places}f}"


def matches(value: float, text: str) -> bool:
    """Whether ``text`` is ``value`` rounded at its printed precision (half a unit of its last digit either way)."""
    printed = float(text.replace(",", ""))
    unit = 10 ** -decimals(text) * (10 ** int(text.split("e", 1)[1]) if "e" in text else 1)
    return abs(value - printed) <= 0.5 * unit + 1e-9 * (abs(printed) if "e" in text else max(1.0, abs(printed)))


def results_tables(markdown: str) -> dict[str, list[str]]:
    """NAME -> the data rows of the Markdown table that follows ``<!-- results-table: NAME -->``."""
    lines = markdown.splitlines()
    out: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        mark = _TABLE_MARK.search(line)
        if not mark:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith("|"):
            j += 1
        rows = []
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            rows.append(lines[j])
            j += 1
        out[mark.group(1)] = [r for r in rows[2:]]  # header and its |---| line carry no figures
    return out


def markdown_tables(markdown: str) -> list[tuple[int, str | None, list[str]]]:
    """Every Markdown table: (1-based line of its header, the marker comment above it or None, its data rows).

    The marker is the nearest non-blank line above the header when it is a ``results-table`` or
    ``not-results-table`` comment."""
    lines = markdown.splitlines()
    out: list[tuple[int, str | None, list[str]]] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"):
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        above = lines[k] if k >= 0 else ""
        mark = above.strip() if _TABLE_MARK.search(above) or _NOT_RESULTS_MARK.search(above) else None
        out.append((i + 1, mark, lines[i + 2 : j]))
        i = j
    return out


def unmarked_tables(doc: str, text: str) -> list[str]:
    """Tables of ``doc`` that print numbers in their data rows but carry neither ``<!-- results-table: NAME -->``
    (their figures registered, or marked as having no result file) nor ``<!-- not-results-table: WHY -->``."""
    problems = []
    for line, mark, rows in markdown_tables(text):
        numbers = [m.group(0) for r in rows for m in NUMBER.finditer(r)]
        if numbers and mark is None:
            problems.append(
                f"{doc}:{line}: a table with {len(numbers)} number(s) ({', '.join(numbers[:4])}…) and no "
                "<!-- results-table: NAME --> (register its figures in INDEX.yaml or mark cells without a file) "
                "or <!-- not-results-table: WHY --> comment above it"
            )
    return problems


def table_markers(markdown: str) -> dict[str, str]:
    """NAME -> the short marker a table declares for cells without a result file (``no-file=ⁿ``), if any."""
    return {m.group(1): m.group(2) for m in _TABLE_MARK.finditer(markdown) if m.group(2)}


def _row_of(rows: Sequence[str], figure: Figure) -> int | None:
    found = [i for i, r in enumerate(rows) if figure.row and figure.row in r]
    return found[0] if len(found) == 1 else None


def assign(rows: Sequence[str], figures: Sequence[Figure]) -> tuple[dict[int, dict[int, Figure]], list[str]]:
    """Each table figure bound to a number token of its row (in index order, first free equal token), and problems."""
    bound: dict[int, dict[int, Figure]] = {}
    problems: list[str] = []
    for figure in figures:
        i = _row_of(rows, figure)
        if i is None:
            problems.append(f"{figure.where}: the row text {figure.row!r} picks no single row of table {figure.table!r}")
            continue
        tokens = [m.group(0) for m in NUMBER.finditer(rows[i])]
        taken = bound.setdefault(i, {})
        slot = next((t for t, tok in enumerate(tokens) if tok == figure.text and t not in taken), None)
        if slot is None:
            problems.append(f"{figure.where}: {figure.text!r} is not printed (or printed fewer times than registered) in its row")
            continue
        taken[slot] = figure
    return bound, problems


def _unit(text: str) -> float:
    return 10 ** -decimals(text) * (10 ** int(text.split("e", 1)[1]) if "e" in text else 1)


def _raw(figure: Figure, value: float, results_dir: str | Path, cache: dict[Path, Any]) -> float:
    """The signed value: before ``abs``, whose sign the page prints outside the number."""
    return figure_value(figure, results_dir, cache, signed=True) if figure.derive == "abs" else value


def prose_places(figure: Figure, page: str, raw: float) -> tuple[list[str], list[int]]:
    """(problems, offsets in :func:`~figlang.evaluation.prose_figures.flatten`'s text) of a prose figure's anchors:
    each found once, holding the figure, with the sign its value has."""
    if not figure.at:
        return [f"{figure.where}: a prose figure without its place (at:); scripts/results_index.py writes it"], []
    flat = flatten(page)
    problems, places = [], []
    for at in figure.at:
        place, why = anchor_places(flat, at, figure.text)
        if place is None:
            problems.append(f"{figure.where}: {why}")
            continue
        places.append(place)
        wrong = sign_problem(figure.where, raw, printed_sign(flat.text, place), figure.text, _unit(figure.text))
        problems += [wrong] if wrong else []
    return problems, places


def _table_signs(figures: Sequence[Figure], rows: Sequence[str], values: dict[int, float]) -> list[str]:
    """A table figure printed with a sign its value does not have (−1.69 for +1.69, or the reverse)."""
    problems = []
    bound, _ = assign(rows, figures)
    for i, slots in bound.items():
        starts = [m.start() for m in NUMBER.finditer(rows[i])]
        for t, figure in slots.items():
            raw = values.get(id(figure))
            wrong = raw is not None and sign_problem(figure.where, raw, printed_sign(rows[i], starts[t]), figure.text, _unit(figure.text))
            problems += [wrong] if wrong else []
    return problems


def check_index(figures: Sequence[Figure], results_dir: str | Path, root: str | Path) -> list[str]:
    """Every problem with the registered figures: a missing file or key, a value that the printed text does not
    round to, a sign the page prints that the value does not have, a prose figure not at its place (its anchor),
    a table figure its row does not print. Empty when all hold."""
    root = Path(root)
    problems: list[str] = []
    cache: dict[Path, Any] = {}
    docs: dict[str, str] = {}
    raws: dict[int, float] = {}
    for figure in figures:
        if figure.doc not in docs:
            if not (root / figure.doc).exists():
                problems.append(f"{figure.where}: the document {root / figure.doc} does not exist")
                continue
            docs[figure.doc] = (root / figure.doc).read_text(encoding="utf-8")
        try:
            value = figure_value(figure, results_dir, cache)
            raws[id(figure)] = _raw(figure, value, results_dir, cache)
        except FiglangError as err:
            problems.append(str(err))
            continue
        if not matches(value, figure.text):
            problems.append(
                f"{figure.where}: the file says {format_like(value, figure.text)} ({value!r}), the document prints {figure.text}"
            )
        if figure.table is None:
            problems += prose_places(figure, docs[figure.doc], raws[id(figure)])[0]
    for doc_name, text in docs.items():
        tables = results_tables(text)
        for name in sorted({f.table for f in figures if f.doc == doc_name and f.table}):
            if name not in tables:
                problems.append(f"{doc_name}: no table marked <!-- results-table: {name} --> for the registered figures")
                continue
            mine = [f for f in figures if f.doc == doc_name and f.table == name]
            problems += assign(tables[name], mine)[1] + _table_signs(mine, tables[name], raws)
    return problems


def check_pages(
    figures: Sequence[Figure], marks: Sequence[NotFigure], root: str | Path, docs: Sequence[str]
) -> tuple[list[str], dict[str, int]]:
    """(problems, counts) of every page's prose: each headline-like number (a percentage, a decimal, a ratio, a
    time, a speed-up) is a registered figure at its anchored place or lies in a NOT-FIGURES.yaml entry, unless
    the page is a research note marked ``<!-- unverified-figures: WHY -->`` (docs/research/ only)."""
    root = Path(root)
    marks = [m for m in marks if m.doc in (*docs, "*")]
    places: dict[str, dict[int, Figure]] = {}
    for figure in figures:
        if figure.table is None and figure.doc in docs and (root / figure.doc).exists():
            page = (root / figure.doc).read_text(encoding="utf-8")
            for place in prose_places(figure, page, 0.0)[1]:
                places.setdefault(figure.doc, {})[place] = figure
    problems: list[str] = []
    counts = {"pages": 0, "excluded_pages": 0, "registered": 0, "marked": 0, "unaccounted": 0}
    used: set[NotFigure] = set()
    for doc in docs:
        text = (root / doc).read_text(encoding="utf-8")
        counts["pages"] += 1
        if PAGE_MARK.search(text):
            counts["excluded_pages"] += 1
            if not doc.startswith("docs/research/"):
                problems.append(f"{doc}: <!-- unverified-figures --> is for research notes (docs/research/) only")
            continue
        mine = [m for m in marks if m.doc in (doc, "*")]
        found, by_figure, by_mark = unaccounted_numbers(doc, text, places.get(doc, {}), mine)
        used.update(m for m in mine if m.spans(flatten(text).text))
        problems += found
        counts["registered"] += by_figure
        counts["marked"] += by_mark
        counts["unaccounted"] += sum("is neither a registered figure" in p for p in found)
    problems += [
        f"{m.doc}: NOT-FIGURES.yaml entry {m.at or m.pattern!r} marks nothing on a checked page"
        for m in marks
        if m not in used and m.doc != "*"
    ]
    counts["unused_patterns"] = sum(m not in used for m in marks if m.doc == "*")
    return problems, counts


def check_all(
    figures: Sequence[Figure], marks: Sequence[NotFigure], results_dir: str | Path, root: str | Path, docs: Sequence[str]
) -> list[str]:
    """Every problem the registry test reports for the pages ``docs`` under ``root``: their registered figures
    (:func:`check_index`), their results tables' unregistered numbers, tables of numbers without a marker, and
    their prose's unaccounted numbers (:func:`check_pages`). Used by scripts/registry_mutations.py on a copy."""
    root = Path(root)
    mine = [f for f in figures if f.doc in docs]
    problems = check_index(mine, results_dir, root)
    for doc in docs:
        text = (root / doc).read_text(encoding="utf-8")
        problems += unmarked_numbers(doc, text, mine) + unmarked_tables(doc, text)
    return problems + check_pages(mine, marks, root, docs)[0]


def numeric_leaves(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], float]]:
    """(key path, number) for every number in a parsed JSON file (lists indexed by position)."""
    if isinstance(node, bool):
        return
    if isinstance(node, (int, float)):
        yield path, float(node)
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from numeric_leaves(v, (*path, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from numeric_leaves(v, (*path, str(i)))


# keys a quoted figure never comes from: a file's format version, seeds, metric configurations, method fingerprints,
# library versions, machine load
_NOT_FIGURES = {
    "format",
    "seed",
    "configs",
    "config",
    "fingerprint",
    "versions",
    "machine",
    "checksums",
    "load_average",
    "load_average_end",
    "load_average_at_end",
    "metric_config",
}
_COUNT_KEYS = {"n", "n_items", "items", "count", "n_scored"}


def suggest_keys(
    text: str,
    files: Sequence[str],
    results_dir: str | Path,
    scales: Sequence[float] = (100, 1),
    exclude: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
) -> tuple[str, str, float, str | None] | None:
    """(file, key path, scale, derivation: "abs" for a negative value printed unsigned) of a number in ``files`` (each
    ``FILE`` or ``FILE#KEY.PATH`` for the numbers under one key) that ``text`` prints at its precision, or None.

    Why: registering a results table by hand means finding each figure's key; this proposes one (keys under
    ``metrics`` first, then the shortest path), and scripts/results_index.py writes what it finds, so a
    reviewer reads key paths rather than typing them. Never proposed: configuration and provenance keys, a key in
    ``exclude`` (already bound in the row), a percentage scale for an integer, a key other than a count for an
    integer below 10."""
    found = []
    for entry in files:
        file, _, under = entry.partition("#")  # FILE#KEY.PATH: only numbers under that key
        data = _read(Path(results_dir) / file, {})
        for path, value in numeric_leaves(data):
            dotted = ".".join(path)
            if under and not (dotted == under or dotted.startswith(under + ".")):  # keys may hold dots (qwen-llama.cpp)
                continue
            named = len(under.split(".")) if under else 0  # a sub-tree named by FILE#KEY.PATH is the figures' own home
            if (file, dotted) in exclude or _NOT_FIGURES & set(path[named:]):
                continue
            integer = not re.search(r"[.e]", text)
            if integer and float(text.replace(",", "")) < 10 and path[-1] not in _COUNT_KEYS:
                continue  # "3 epochs", "4 jobs": a small integer matches too many keys by chance
            for scale in scales if not integer else (1,):
                if matches(abs(value * scale), text):  # the sign is printed outside the number (+20.00, −23.33)
                    unlikely = (scale == 100) != ("." in text)  # a percentage prints decimals; a count does not
                    found.append(
                        (
                            "metrics" not in path[:1],
                            unlikely,
                            len(path),
                            files.index(entry),
                            file,
                            ".".join(path),
                            scale,
                            "abs" if value < 0 else None,
                        )
                    )
    if not found:
        return None
    best = min(found, key=lambda f: f[:4])
    return best[4], best[5], best[6], best[7]


def has_predictions(figure: Figure, results_dir: str | Path) -> bool:
    """Whether the figure's own run keeps its per-item predictions (plain or gzip'd): the files its INDEX.yaml group
    names (``predictions:``, every one present), else predictions.jsonl beside its file, NAME.predictions.jsonl beside
    a summary NAME.json, or NAME/predictions.jsonl (the summary's own run folder).

    Why not any folder below: a sweep's or a comparison's summary sits above many runs, and a sibling run's
    predictions do not recompute its figures (#35); such a summary names the files it comes from, or says why not."""
    results_dir = Path(results_dir)
    if figure.predictions:
        return all((results_dir / p).is_file() for p in figure.predictions)
    path = results_dir / figure.file
    own = [
        path.with_name("predictions.jsonl"),
        path.with_name(f"{path.stem}.predictions.jsonl"),
        path.with_suffix("") / "predictions.jsonl",
    ]
    return any(p.is_file() or p.with_name(p.name + ".gz").is_file() for p in own)


def missing_predictions(figures: Sequence[Figure], results_dir: str | Path) -> tuple[list[str], list[Figure]]:
    """(problems, excused): figures whose folder keeps no per-item predictions, unexcused ones as problems and
    the ones INDEX.yaml excuses with a ``no-predictions:`` reason; and a reason given where predictions exist."""
    problems: list[str] = []
    excused: list[Figure] = []
    seen: dict[tuple[str, tuple[str, ...]], bool] = {}  # by file and named runs: a summary's rows name different runs
    for figure in figures:
        own = (figure.file, figure.predictions)
        if own not in seen:
            seen[own] = has_predictions(figure, results_dir)
        if seen[own]:
            if figure.no_predictions:
                problems.append(
                    f"{figure.where}: {figure.file} has predictions, yet INDEX.yaml says no-predictions ({figure.no_predictions})"
                )
        elif figure.no_predictions:
            excused.append(figure)
        else:
            problems.append(
                f"{figure.where}: no predictions.jsonl(.gz) of its own run ({Path(figure.file).parent}/); commit them "
                "(`figlang report DIR --pack`), name them (predictions:) or give the group a no-predictions: reason in INDEX.yaml"
            )
    return problems, excused


def unmarked_numbers(doc: str, text: str, figures: Sequence[Figure]) -> list[str]:
    """Numbers in a marked results table of ``doc`` that no registered figure backs, outside rows (the marker in
    their first cell) or cells that say they have no result file."""
    problems: list[str] = []
    markers = table_markers(text)
    for name, rows in results_tables(text).items():
        bound, _ = assign(rows, [f for f in figures if f.doc == doc and f.table == name])
        said = "|".join(re.escape(m) for m in (NO_RESULT_FILE, markers.get(name)) if m)
        for i, row in enumerate(rows):
            if NO_RESULT_FILE in row.split("|")[1]:  # in the first cell: the whole row
                continue
            excused = [(m.start(), m.end()) for m in re.finditer(rf"[^|]*(?:{said})[^|]*", row)]
            for t, m in enumerate(NUMBER.finditer(row)):
                if t not in bound.get(i, {}) and not any(a <= m.start() < b for a, b in excused):
                    problems.append(f"{doc} table {name!r}: {m.group(0)} in row {row.strip()[:60]!r}… has no result file in {INDEX_FILE}")
    return problems


def marked_without_file(text: str) -> tuple[int, int]:
    """(numbers in results tables' cells or rows marked as having no result file, prose "(no result file; to be
    re-run)" marks): what is still unbacked, so a report can say how much."""
    markers = table_markers(text)
    cells = 0
    for name, rows in results_tables(text).items():
        said = "|".join(re.escape(m) for m in (NO_RESULT_FILE, markers.get(name)) if m)
        for row in rows:
            parts = row.split("|")
            if NO_RESULT_FILE in parts[1]:
                cells += len(NUMBER.findall(row))
                continue
            cells += sum(len(NUMBER.findall(c)) for c in parts if re.search(said, c))
    tables = "\n".join(r for rows in results_tables(text).values() for r in rows)
    return cells, text.count(NO_RESULT_FILE) - tables.count(NO_RESULT_FILE)


def regenerate_tables(text: str, doc: str, figures: Sequence[Figure], results_dir: str | Path) -> tuple[str, list[str]]:
    """``text`` with every registered table figure reprinted from its file at its printed precision; the changes.

    A row whose every number is registered is rewritten by position (the index lists a row's figures in the order
    the row prints them), so a figure is restored whatever it prints now; other rows by their registered texts."""
    lines = text.splitlines(keepends=True)
    tables = results_tables(text)
    changes: list[str] = []
    cache: dict[Path, Any] = {}
    for name, rows in tables.items():
        mine = [f for f in figures if f.doc == doc and f.table == name]
        bound, _ = assign(rows, mine)
        for i, row in enumerate(rows):
            in_row = [f for f in mine if _row_of(rows, f) == i]
            if in_row and len(in_row) == len(NUMBER.findall(row)):
                slots = dict(enumerate(in_row))  # every number registered, in row order: by position, whatever it prints now
            else:
                slots = bound.get(i, {})
            if not slots:
                continue
            pieces, last = [], 0
            for t, m in enumerate(NUMBER.finditer(row)):
                if t in slots:
                    new = format_like(figure_value(slots[t], results_dir, cache), slots[t].text)
                    if new != m.group(0):
                        changes.append(f"{doc} {name} {slots[t].row}: {m.group(0)} -> {new}")
                    pieces += [row[last : m.start()], new]
                    last = m.end()
            new_row = "".join(pieces) + row[last:]
            at = next(k for k, line in enumerate(lines) if line.rstrip("\r\n") == row)
            lines[at] = new_row + lines[at][len(row) :]
    return "".join(lines), changes


__all__ = [
    "Figure",
    "INDEX_FILE",
    "NO_RESULT_FILE",
    "check_all",
    "check_index",
    "check_pages",
    "figure_value",
    "format_like",
    "has_predictions",
    "load_index",
    "markdown_tables",
    "marked_without_file",
    "matches",
    "missing_predictions",
    "prose_places",
    "regenerate_tables",
    "results_tables",
    "unmarked_numbers",
    "unmarked_tables",
]
