"""Human evaluation of generated continuations: export for judges, import answers, aggregate, agree.

The narrative paper (Chakrabarty, Choi, Shwartz, TACL 2022) judged generated next sentences in two ways:

* **absolute**: for each candidate continuation, is it plausible (yes/no)?  A system's figure is the
  share of items whose candidate the majority of the 3 judges found plausible.
* **comparative**: which candidate is best, or "all" equally good, or "neither" (all equally bad)?
  A system's figure is the share of items whose majority choice was that system's candidate.

The round trip here keeps judges blind: candidates are shuffled per item with a fixed seed and the
system ids go to a separate key file. Agreement is Krippendorff's alpha (nominal, via ``krippendorff``).

``table5`` recomputes the paper's Table 5 from its published crowd files; see docs/research/human_eval_table5.md
for what matches, what does not, and why.
"""

from __future__ import annotations

import csv
import io
import json
import random
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import krippendorff
import numpy as np

from figlang.core.errors import DataError
from figlang.core.io import atomic_write, iter_jsonl, read_text, write_jsonl

ALL = "all"
NEITHER = "neither"
YES = "yes"
NO = "no"

__all__ = [
    "ALL",
    "NEITHER",
    "AbsoluteJudgement",
    "AbsoluteSummary",
    "ComparativeFile",
    "ComparativeItem",
    "ComparativeJudgement",
    "ComparativeSummary",
    "DataRepairWarning",
    "EvalItem",
    "ExportPaths",
    "PlausibilityFile",
    "comparative_summary_from_file",
    "export_for_judges",
    "import_absolute_answers",
    "import_comparative_answers",
    "load_amt_comparative",
    "load_key",
    "load_mturk_plausibility",
    "majority_label",
    "nominal_alpha",
    "parse_json_array",
    "shuffled_systems",
    "summarize_absolute",
    "summarize_comparative",
]


class DataRepairWarning(UserWarning):
    """An input file was malformed and repaired in a documented, minimal way (never silently)."""


# --------------------------------------------------------------------------------------------
# Export for judges
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalItem:
    """One narrative to judge, with each system's candidate continuation (system id -> text)."""

    item_id: str
    narrative: str
    meaning: str | None  # idiom meaning or simile property, shown to judges
    candidates: Mapping[str, str]


@dataclass(frozen=True)
class ExportPaths:
    items_csv: Path
    items_jsonl: Path
    key_jsonl: Path


def shuffled_systems(item_id: str, systems: Iterable[str], seed: int) -> list[str]:
    """The display order of an item's systems: depends only on (seed, item id), not on item order."""
    order = sorted(systems)
    random.Random(f"{seed}\x1f{item_id}").shuffle(order)  # str seeds hash with SHA-512: stable across runs
    return order


def export_for_judges(items: Sequence[EvalItem], out_dir: str | Path, seed: int = 13, stem: str = "human_eval") -> ExportPaths:
    """Write ``<stem>_items.csv``/``.jsonl`` for judges (no system ids) and ``<stem>_key.jsonl`` (the hidden order)."""
    if not items:
        raise DataError("nothing to export: no items")
    seen: set[str] = set()
    for item in items:
        if not item.item_id:
            raise DataError("an item has an empty item_id")
        if item.item_id in seen:
            raise DataError(f"duplicate item_id {item.item_id!r}")
        seen.add(item.item_id)
        if len(item.candidates) < 2:
            raise DataError(f"item {item.item_id!r} has {len(item.candidates)} candidate(s); judging needs at least 2")
        empty = [s for s, text in item.candidates.items() if not str(text).strip()]
        if empty:
            raise DataError(f"item {item.item_id!r} has an empty candidate for system(s) {', '.join(empty)}")
    out = Path(out_dir)
    paths = ExportPaths(out / f"{stem}_items.csv", out / f"{stem}_items.jsonl", out / f"{stem}_key.jsonl")
    width = max(len(item.candidates) for item in items)
    judge_rows: list[dict[str, Any]] = []
    key_rows: list[dict[str, Any]] = []
    for item in items:
        order = shuffled_systems(item.item_id, item.candidates, seed)
        judge_rows.append(
            {
                "item_id": item.item_id,
                "narrative": item.narrative,
                "meaning": item.meaning,
                "candidates": [item.candidates[s] for s in order],
            }
        )
        key_rows.append({"item_id": item.item_id, "systems": order, "seed": seed})
    write_jsonl(paths.items_jsonl, judge_rows)
    write_jsonl(paths.key_jsonl, key_rows)
    header = ["item_id", "narrative", "meaning"] + [f"candidate_{k}" for k in range(1, width + 1)]
    with atomic_write(paths.items_csv) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for row in judge_rows:
            cands = row["candidates"] + [""] * (width - len(row["candidates"]))
            writer.writerow([row["item_id"], row["narrative"], row["meaning"] or "", *cands])
    return paths


def load_key(path: str | Path) -> dict[str, tuple[str, ...]]:
    """item id -> system ids in display order (candidate_1 first), validated and located."""
    key: dict[str, tuple[str, ...]] = {}
    for line, obj in iter_jsonl(path):
        item_id = obj.get("item_id")
        systems = obj.get("systems")
        if not isinstance(item_id, str) or not item_id:
            raise DataError("key line has no string 'item_id'", path, line)
        if not isinstance(systems, list) or len(systems) < 2 or not all(isinstance(s, str) and s for s in systems):
            raise DataError("key line needs 'systems': a list of at least 2 system ids", path, line)
        if len(set(systems)) != len(systems):
            raise DataError(f"key for item {item_id!r} repeats a system id", path, line)
        if item_id in key:
            raise DataError(f"duplicate item_id {item_id!r} in key", path, line)
        key[item_id] = tuple(systems)
    return key


# --------------------------------------------------------------------------------------------
# Import judges' answers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AbsoluteJudgement:
    item_id: str
    judge: str
    system: str
    plausible: bool


@dataclass(frozen=True)
class ComparativeJudgement:
    item_id: str
    judge: str
    choice: str  # a system id, ALL or NEITHER


def _iter_answer_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line, row) from a CSV (header row) or JSONL answers file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        yield from iter_jsonl(path)
        return
    if suffix != ".csv":
        raise DataError(f"unknown answers format {suffix!r}", path, hint="use .csv (with a header row) or .jsonl")
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    if not reader.fieldnames:
        raise DataError("CSV has no header row", path, 1)
    start = reader.line_num + 1
    for row in reader:
        if None in row:
            raise DataError(f"row has {len(row[None])} more field(s) than the header", path, start)
        yield start, dict(row)
        start = reader.line_num + 1


def _key_mapping(key: str | Path | Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    if isinstance(key, (str, Path)):
        return load_key(key)
    return {k: tuple(v) for k, v in key.items()}


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _check_coverage(
    counts: Mapping[str, int],
    key: Mapping[str, object],  # item id -> anything (the systems in order, a FLUTE key item): only the ids are read
    path: str | Path,
    judges_per_item: int | None,
    first_line: Mapping[str, int],
) -> None:
    missing = [i for i in key if i not in counts]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(f"missing answers: {len(missing)} item(s) of the key have none ({shown})", path)
    if judges_per_item is not None:
        for item_id, n in counts.items():
            if n != judges_per_item:
                raise DataError(f"item {item_id!r} has answers from {n} judge(s), expected {judges_per_item}", path, first_line[item_id])


def checked_answer_rows(
    path: str | Path, known: Mapping[str, Any], rows: Iterable[tuple[int, dict[str, Any]]]
) -> Iterator[tuple[int, dict[str, Any], str, str]]:
    """(line, row, item id, judge) for each judges' answer row, refusing (file:line) a missing or unknown item id,
    a missing judge and a judge who answered one item twice: the checks every human-evaluation import shares."""
    seen: set[tuple[str, str]] = set()
    for line, row in rows:
        item_id, judge = _text(row.get("item_id")), _text(row.get("judge"))
        if not item_id:
            raise DataError("missing answer field 'item_id'", path, line)
        if item_id not in known:
            raise DataError(f"unknown item id {item_id!r} (not in the key)", path, line)
        if not judge:
            raise DataError(f"missing answer field 'judge' for item {item_id!r}", path, line)
        if (item_id, judge) in seen:
            raise DataError(f"judge {judge!r} answered item {item_id!r} twice", path, line)
        seen.add((item_id, judge))
        yield line, row, item_id, judge


_J = TypeVar("_J")
_RowReader = Callable[[str | Path, int, dict[str, Any], str, str, tuple[str, ...]], list[_J]]


def _import_answers(
    path: str | Path, key: str | Path | Mapping[str, Sequence[str]], judges_per_item: int | None, read_row: _RowReader[_J]
) -> list[_J]:
    """The judgements ``read_row(path, line, row, item_id, judge, systems)`` reads from each checked answer row, once
    every item is seen to have ``judges_per_item`` judges."""
    mapping = _key_mapping(key)
    out: list[_J] = []
    counts: Counter[str] = Counter()
    first_line: dict[str, int] = {}
    for line, row, item_id, judge in checked_answer_rows(path, mapping, _iter_answer_rows(path)):
        out += read_row(path, line, row, item_id, judge, mapping[item_id])
        counts[item_id] += 1
        first_line.setdefault(item_id, line)
    _check_coverage(counts, mapping, path, judges_per_item, first_line)
    return out


def _absolute_row(
    path: str | Path, line: int, row: dict[str, Any], item_id: str, judge: str, systems: tuple[str, ...]
) -> list[AbsoluteJudgement]:
    """One judge's yes/no per candidate of an item, mapped to the systems."""
    out = []
    for k, system in enumerate(systems, start=1):
        column = f"candidate_{k}"
        raw = row.get(column)
        if isinstance(raw, bool):
            value = YES if raw else NO
        else:
            value = _text(raw).lower()
        if not value:
            raise DataError(f"missing answer {column!r} for item {item_id!r} (judge {judge!r})", path, line)
        if value not in (YES, NO):
            raise DataError(f"answer {raw!r} in {column!r} for item {item_id!r} is not one of: yes, no", path, line)
        out.append(AbsoluteJudgement(item_id, judge, system, value == YES))
    extra = [c for c in row if c.startswith("candidate_") and c not in {f"candidate_{k}" for k in range(1, len(systems) + 1)}]
    if any(_text(row[c]) for c in extra):
        raise DataError(f"item {item_id!r} has {len(systems)} candidates but the row answers {', '.join(extra)}", path, line)
    return out


def import_absolute_answers(
    path: str | Path, key: str | Path | Mapping[str, Sequence[str]], judges_per_item: int | None = 3
) -> list[AbsoluteJudgement]:
    """Read yes/no answers (columns item_id, judge, candidate_1..N) and map positions back to system ids.

    Unknown item ids, missing or out-of-set answers, duplicate (item, judge) rows and items without the
    expected number of judges raise a DataError naming the file and line.
    """
    return _import_answers(path, key, judges_per_item, _absolute_row)


def _comparative_row(
    path: str | Path, line: int, row: dict[str, Any], item_id: str, judge: str, systems: tuple[str, ...]
) -> list[ComparativeJudgement]:
    """One judge's best candidate of an item (a system, all or neither)."""
    raw = row.get("best")
    value = _text(raw).lower()
    allowed = [str(k) for k in range(1, len(systems) + 1)] + [ALL, NEITHER]
    if not value:
        raise DataError(f"missing answer 'best' for item {item_id!r} (judge {judge!r})", path, line)
    if isinstance(raw, bool) or value not in allowed:
        raise DataError(f"answer {raw!r} in 'best' for item {item_id!r} is not one of: {', '.join(allowed)}", path, line)
    choice = value if value in (ALL, NEITHER) else systems[int(value) - 1]
    return [ComparativeJudgement(item_id, judge, choice)]


def import_comparative_answers(
    path: str | Path, key: str | Path | Mapping[str, Sequence[str]], judges_per_item: int | None = 3
) -> list[ComparativeJudgement]:
    """Read best-candidate answers (columns item_id, judge, best = 1..N | all | neither) and map them to system ids."""
    return _import_answers(path, key, judges_per_item, _comparative_row)


# --------------------------------------------------------------------------------------------
# Aggregation and agreement
# --------------------------------------------------------------------------------------------


def majority_label(labels: Sequence[Hashable]) -> Hashable | None:
    """The label more than half of the judges gave, or None (a tie or a three-way split has no majority)."""
    if not labels:
        return None
    label, n = Counter(labels).most_common(1)[0]
    return label if 2 * n > len(labels) else None


def nominal_alpha(units: Mapping[Any, Mapping[Any, Hashable]]) -> float:
    """Krippendorff's alpha (nominal) for unit -> {judge: label}; NaN when only one label occurs at all.

    Alpha only compares labels within a unit, so which column a judge occupies does not matter; judges
    missing from a unit are NaN cells, which ``krippendorff.alpha`` handles.
    """
    judges = sorted({j for votes in units.values() for j in votes}, key=str)
    labels = sorted({v for votes in units.values() for v in votes.values()}, key=str)
    if len(labels) < 2:
        return float("nan")
    code = {label: float(i) for i, label in enumerate(labels)}
    row = {j: i for i, j in enumerate(judges)}
    data = np.full((len(judges), len(units)), np.nan)
    for col, votes in enumerate(units.values()):
        for judge, label in votes.items():
            data[row[judge], col] = code[label]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


@dataclass(frozen=True)
class AbsoluteSummary:
    """Share of items whose candidate the majority judged plausible, per system."""

    systems: tuple[str, ...]
    share_plausible: dict[str, float]
    plausible_items: dict[str, int]
    n_items: int
    n_judgements: int
    alpha: float  # nominal, units = (item, system)


def summarize_absolute(judgements: Iterable[AbsoluteJudgement], systems: Sequence[str] | None = None) -> AbsoluteSummary:
    """Majority vote per (item, system) -- strict: a tie counts as not plausible -- then shares and alpha."""
    votes: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    n = 0
    for j in judgements:
        votes[(j.item_id, j.system)][j.judge] = j.plausible
        n += 1
    if not votes:
        raise DataError("no judgements to summarize")
    all_systems = tuple(systems) if systems is not None else tuple(sorted({s for _, s in votes}))
    items = sorted({i for i, _ in votes})
    plausible: dict[str, int] = {}
    share: dict[str, float] = {}
    for system in all_systems:
        judged = [votes[(i, system)] for i in items if (i, system) in votes]
        if not judged:
            raise DataError(f"system {system!r} has no judgements")
        plausible[system] = sum(1 for v in judged if majority_label(list(v.values())) is True)
        share[system] = plausible[system] / len(judged)
    units = {u: v for u, v in votes.items() if u[1] in all_systems}
    return AbsoluteSummary(all_systems, share, plausible, len(items), n, nominal_alpha(units))


@dataclass(frozen=True)
class ComparativeSummary:
    """Which candidate the majority preferred. Shares are over items that have a majority (the paper's reading)."""

    systems: tuple[str, ...]
    counts: dict[str, int]  # systems + ALL + NEITHER
    n_items: int
    n_no_majority: int
    alpha: float  # nominal, units = items

    @property
    def n_with_majority(self) -> int:
        return self.n_items - self.n_no_majority

    def shares(self, over: Literal["majority", "all"] = "majority") -> dict[str, float]:
        """Shares over items with a majority (default) or over all items (then they sum to < 1)."""
        denom = self.n_with_majority if over == "majority" else self.n_items
        return {k: (v / denom if denom else float("nan")) for k, v in self.counts.items()}


def _comparative_counts(majorities: Iterable[Hashable | None], labels: Sequence[str]) -> tuple[dict[str, int], int]:
    counts = {label: 0 for label in labels}
    none = 0
    for m in majorities:
        if m is None:
            none += 1
        else:
            counts[str(m)] += 1
    return counts, none


def summarize_comparative(judgements: Iterable[ComparativeJudgement], systems: Sequence[str] | None = None) -> ComparativeSummary:
    """Majority vote per item over {systems, all, neither}; items without a majority are counted, not guessed."""
    votes: dict[str, dict[str, str]] = defaultdict(dict)
    for j in judgements:
        votes[j.item_id][j.judge] = j.choice
    if not votes:
        raise DataError("no judgements to summarize")
    chosen = {c for v in votes.values() for c in v.values()} - {ALL, NEITHER}
    all_systems = tuple(systems) if systems is not None else tuple(sorted(chosen))
    unknown = chosen - set(all_systems)
    if unknown:
        raise DataError(f"judgements choose systems not listed: {', '.join(sorted(unknown))}")
    majorities = [majority_label(list(v.values())) for v in votes.values()]
    counts, none = _comparative_counts(majorities, [*all_systems, ALL, NEITHER])
    return ComparativeSummary(all_systems, counts, len(votes), none, nominal_alpha(votes))


# --------------------------------------------------------------------------------------------
# The paper's crowd files
# --------------------------------------------------------------------------------------------


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def parse_json_array(path: str | Path, repair_missing_commas: bool = False) -> tuple[list[tuple[int, Any]], list[DataError]]:
    """(line, element) for each element of a top-level JSON array, plus the repairs made.

    With ``repair_missing_commas`` the one malformation seen in the published ``amtsimile.json`` -- two
    objects with no ',' between them -- is repaired by inserting the comma, and the repair is returned and
    emitted as a DataRepairWarning naming file, line and what was inserted. Anything else malformed raises.
    """
    text = read_text(path)
    decoder = json.JSONDecoder()
    repairs: list[DataError] = []
    elements: list[tuple[int, Any]] = []
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] != "[":
        raise DataError("expected a JSON array ('[')", path, _line_of(text, i))
    i = _skip_ws(text, i + 1)
    if i < len(text) and text[i] == "]":
        end = i + 1
    else:
        while True:
            try:
                obj, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                raise DataError(f"malformed JSON ({exc.msg} at column {exc.colno})", path, exc.lineno) from None
            elements.append((_line_of(text, i), obj))
            j = _skip_ws(text, end)
            if j >= len(text):
                raise DataError("unexpected end of file inside the array (no closing ']')", path, _line_of(text, j))
            if text[j] == ",":
                i = _skip_ws(text, j + 1)
                if i < len(text) and text[i] == "]":
                    raise DataError("trailing ',' before ']'", path, _line_of(text, j))
                continue
            if text[j] == "]":
                end = j + 1
                break
            if text[j] == "{" and isinstance(obj, dict) and repair_missing_commas:
                prev_line = _line_of(text, end - 1)
                repair = DataError(
                    f"missing ',' between two array objects: inserted ',' after the '}}' that ends line {prev_line} "
                    f"(the next object starts on line {_line_of(text, j)})",
                    path,
                    prev_line,
                    hint="repaired in memory; the file is unchanged",
                )
                repairs.append(repair)
                warnings.warn(str(repair), DataRepairWarning, stacklevel=3)
                i = j
                continue
            raise DataError(f"expected ',' or ']' after an array element, found {text[j]!r}", path, _line_of(text, j))
    rest = _skip_ws(text, end)
    if rest < len(text):
        raise DataError("unexpected content after the closing ']'", path, _line_of(text, rest))
    return elements, repairs


ExampleWidgetValue = Literal["not_plausible", "plausible", "missing"]


@dataclass(frozen=True)
class PlausibilityFile:
    """The absolute evaluation as published: one AbsoluteJudgement per (HIT, worker, shown sentence)."""

    path: str
    judgements: tuple[AbsoluteJudgement, ...]
    systems: tuple[str, ...]  # baseline, context, literal, human1..humanK
    n_hits: int
    n_assignments: int
    warnings: tuple[DataError, ...]


# plausibility.html (in the paper's repository) shows ${baseline}, ${context}, ${literal}, ${human1}, ... as
# Sentence1_1, Sentence1_2, ... ; note context comes before literal although the CSV lists literal first.
_TEMPLATE_MODELS = ("baseline", "context", "literal")


def load_mturk_plausibility(path: str | Path, example_widget_value: ExampleWidgetValue = "not_plausible") -> PlausibilityFile:
    """Read ``{idiom,simile}plausible.json`` (raw MTurk results): 1 = plausible, 0 = not plausible.

    The template's instructions contain example radio buttons with the *same* field names and the values
    1 (plausible) / 2 (not plausible), so a 2 can reach the results (once, in simileplausible.json).
    ``example_widget_value`` says how to read it; each occurrence is reported as a warning.
    """
    elements, _ = parse_json_array(path)
    text_lines = read_text(path).splitlines()

    def field_line(start: int, name: str) -> int:
        """The line of ``"name":`` at or after an assignment's first line (for precise warnings)."""
        needle = f'"{name}"'
        for number in range(start, len(text_lines) + 1):
            if needle in text_lines[number - 1]:
                return number
        return start

    judgements: list[AbsoluteJudgement] = []
    notes: list[DataError] = []
    seen: set[tuple[str, str]] = set()
    hits: set[str] = set()
    systems: tuple[str, ...] | None = None
    n_assignments = 0
    for line, rec in elements:
        if not isinstance(rec, dict):
            raise DataError(f"expected an object per assignment, got {type(rec).__name__}", path, line)
        for name in ("HITId", "WorkerId", "AssignmentId"):
            if not isinstance(rec.get(name), str) or not rec[name]:
                raise DataError(f"missing field {name!r}", path, line)
        if rec.get("AssignmentStatus") == "Rejected":
            notes.append(DataError(f"assignment {rec['AssignmentId']} was rejected on MTurk; skipped", path, line))
            continue
        hit, worker = rec["HITId"], rec["WorkerId"]
        if (hit, worker) in seen:
            raise DataError(f"worker {worker} has two assignments for HIT {hit}", path, line)
        seen.add((hit, worker))
        n_humans = sum(1 for k in rec if k.startswith("Input.human"))
        rec_systems = _TEMPLATE_MODELS + tuple(f"human{k}" for k in range(1, n_humans + 1))
        if systems is None:
            systems = rec_systems
        elif rec_systems != systems:
            raise DataError(f"assignment shows {len(rec_systems)} sentences, earlier ones {len(systems)}", path, line)
        for field_name in [f"Input.{s}" for s in rec_systems]:
            if not isinstance(rec.get(field_name), str):
                raise DataError(f"missing field {field_name!r}", path, line)
        for k, system in enumerate(rec_systems, start=1):
            name = f"Answer.Sentence1_{k}"
            if name not in rec:
                raise DataError(f"missing answer {name!r} ({system})", path, line)
            raw = rec[name]
            value = int(raw) if isinstance(raw, (int, str)) and str(raw).strip() in ("0", "1", "2") else None
            if value is None or isinstance(raw, bool):
                raise DataError(f"answer {name} = {raw!r} is not one of 1 (plausible), 0 (not plausible)", path, line)
            if value == 2:
                reading = {"not_plausible": "counted as not plausible", "plausible": "counted as plausible", "missing": "left out"}[
                    example_widget_value
                ]
                notes.append(
                    DataError(
                        f"{name} = 2 ({system}, HIT {hit}, worker {worker}): not a value of the task's form; 2 is "
                        f"'not plausible' in the instructions' example buttons, which share the field name; {reading}",
                        path,
                        field_line(line, name),
                    )
                )
                if example_widget_value == "missing":
                    continue
                plausible = example_widget_value == "plausible"
            else:
                plausible = value == 1
            judgements.append(AbsoluteJudgement(hit, worker, system, plausible))
        hits.add(hit)
        n_assignments += 1
    if systems is None:
        raise DataError("no assignments in file", path)
    return PlausibilityFile(str(path), tuple(judgements), systems, len(hits), n_assignments, tuple(notes))


COMPARATIVE_SYSTEMS = ("baseline", "context", "literal")
_MAJORITY_VALUES = (*COMPARATIVE_SYSTEMS, ALL, NEITHER, "inconsistent")


@dataclass(frozen=True)
class ComparativeItem:
    line: int
    narrative: str
    meaning: str | None
    generations: tuple[str, ...]  # Input.gen1.. in display order
    responses: tuple[int | str, ...]  # per judge: 1..3 (generation #k), "all" or "neither"
    majority: str  # the file's field: baseline | context | literal | all | neither | inconsistent


@dataclass(frozen=True)
class ComparativeFile:
    path: str
    items: tuple[ComparativeItem, ...]
    repairs: tuple[DataError, ...]


def load_amt_comparative(path: str | Path) -> ComparativeFile:
    """Read ``amtidiom.json`` / ``amtsimile.json`` (aggregated comparative judgements), repairing only a missing comma.

    Every item is checked: 3 responses in {1, 2, 3, all, neither}, and the file's ``majority`` must agree
    with the responses (no majority <-> "inconsistent"; all/neither <-> itself; generation #k <-> a system).
    The file is the only record of which system wrote generation #k, and only for the majority choice.
    """
    elements, repairs = parse_json_array(path, repair_missing_commas=True)
    items: list[ComparativeItem] = []
    for line, rec in elements:
        if not isinstance(rec, dict):
            raise DataError(f"expected an object per item, got {type(rec).__name__}", path, line)
        gens = []
        for k in (1, 2, 3):
            g = rec.get(f"Input.gen{k}")
            if not isinstance(g, str):
                raise DataError(f"missing field 'Input.gen{k}'", path, line)
            gens.append(g)
        narrative = rec.get("Input.narrative")
        if not isinstance(narrative, str):
            raise DataError("missing field 'Input.narrative'", path, line)
        responses = rec.get("responses")
        if not isinstance(responses, list) or not responses:
            raise DataError("field 'responses' should be a non-empty list", path, line)
        for r in responses:
            if isinstance(r, bool) or r not in (1, 2, 3, ALL, NEITHER):
                raise DataError(f"response {r!r} is not one of 1, 2, 3, 'all', 'neither'", path, line)
        majority = rec.get("majority")
        if majority not in _MAJORITY_VALUES:
            raise DataError(f"majority {majority!r} is not one of {', '.join(_MAJORITY_VALUES)}", path, line)
        recomputed = majority_label(responses)
        consistent = (
            (recomputed is None and majority == "inconsistent")
            or (recomputed in (ALL, NEITHER) and majority == recomputed)
            or (isinstance(recomputed, int) and majority in COMPARATIVE_SYSTEMS)
        )
        if not consistent:
            raise DataError(f"majority {majority!r} disagrees with responses {responses!r}", path, line)
        meaning = rec.get("Input.meaning")
        items.append(
            ComparativeItem(line, narrative, meaning if isinstance(meaning, str) else None, tuple(gens), tuple(responses), majority)
        )
    return ComparativeFile(str(path), tuple(items), tuple(repairs))


def comparative_summary_from_file(data: ComparativeFile) -> ComparativeSummary:
    """Majority of the responses; when it is generation #k, the system is the file's ``majority`` field."""
    majorities: list[str | None] = []
    units: dict[int, dict[int, Hashable]] = {}
    for item in data.items:
        m = majority_label(item.responses)
        majorities.append(None if m is None else (str(m) if m in (ALL, NEITHER) else item.majority))
        # judges are anonymous slots here; alpha does not depend on which column a judge occupies
        units[item.line] = {slot: r for slot, r in enumerate(item.responses)}
    counts, none = _comparative_counts(majorities, [*COMPARATIVE_SYSTEMS, ALL, NEITHER])
    return ComparativeSummary(COMPARATIVE_SYSTEMS, counts, len(data.items), none, nominal_alpha(units))
