"""Human evaluation of generated continuations: export for judges, import answers, aggregate, agree.

The narrative paper (Chakrabarty, Choi, Shwartz, TACL 2022) judged generated next sentences in two ways:

* **absolute**: for each candidate continuation, is it plausible (yes/no)?  A system's figure is the
  share of items whose candidate the majority of the 3 judges found plausible.
* **comparative**: which candidate is best, or "all" equally good, or "neither" (all equally bad)?
  A system's figure is the share of items whose majority choice was that system's candidate.

The round trip here keeps judges blind: candidates are shuffled per item with a fixed seed and the
system ids go to a separate key file. Agreement is Krippendorff's alpha (nominal, via ``krippendorff``).

``table5`` recomputes the paper's Table 5 from its published crowd files; see docs/human_eval_table5.md
for what matches, what does not, and why.
"""

from __future__ import annotations

import csv
import io
import json
import random
import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import krippendorff
import numpy as np

from ..data.errors import DataError
from ..data.io import atomic_write, iter_jsonl, read_text, write_json, write_jsonl
from ..data.paths import dataset_dir
from ..data.provenance import _relative, code_provenance, data_checksums, portable_path

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
    "PUBLISHED_TABLE5",
    "PlausibilityFile",
    "Table5",
    "Table5Column",
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
    "render_table5_markdown",
    "shuffled_systems",
    "summarize_absolute",
    "summarize_comparative",
    "table5",
    "table5_results",
    "write_table5_results",
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


def import_absolute_answers(
    path: str | Path, key: str | Path | Mapping[str, Sequence[str]], judges_per_item: int | None = 3
) -> list[AbsoluteJudgement]:
    """Read yes/no answers (columns item_id, judge, candidate_1..N) and map positions back to system ids.

    Unknown item ids, missing or out-of-set answers, duplicate (item, judge) rows and items without the
    expected number of judges raise a DataError naming the file and line.
    """
    mapping = _key_mapping(key)
    out: list[AbsoluteJudgement] = []
    counts: Counter[str] = Counter()
    first_line: dict[str, int] = {}
    for line, row, item_id, judge in checked_answer_rows(path, mapping, _iter_answer_rows(path)):
        systems = mapping[item_id]
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
        counts[item_id] += 1
        first_line.setdefault(item_id, line)
    _check_coverage(counts, mapping, path, judges_per_item, first_line)
    return out


def import_comparative_answers(
    path: str | Path, key: str | Path | Mapping[str, Sequence[str]], judges_per_item: int | None = 3
) -> list[ComparativeJudgement]:
    """Read best-candidate answers (columns item_id, judge, best = 1..N | all | neither) and map them to system ids."""
    mapping = _key_mapping(key)
    out: list[ComparativeJudgement] = []
    counts: Counter[str] = Counter()
    first_line: dict[str, int] = {}
    for line, row, item_id, judge in checked_answer_rows(path, mapping, _iter_answer_rows(path)):
        systems = mapping[item_id]
        raw = row.get("best")
        value = _text(raw).lower()
        allowed = [str(k) for k in range(1, len(systems) + 1)] + [ALL, NEITHER]
        if not value:
            raise DataError(f"missing answer 'best' for item {item_id!r} (judge {judge!r})", path, line)
        if isinstance(raw, bool) or value not in allowed:
            raise DataError(f"answer {raw!r} in 'best' for item {item_id!r} is not one of: {', '.join(allowed)}", path, line)
        choice = value if value in (ALL, NEITHER) else systems[int(value) - 1]
        out.append(ComparativeJudgement(item_id, judge, choice))
        counts[item_id] += 1
        first_line.setdefault(item_id, line)
    _check_coverage(counts, mapping, path, judges_per_item, first_line)
    return out


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


# --------------------------------------------------------------------------------------------
# Table 5
# --------------------------------------------------------------------------------------------

ROW_NAMES = {"baseline": "GPT2-XL", "context": "+context", "literal": "+literal", "human": "Human", ALL: "All", NEITHER: "Neither"}

PUBLISHED_TABLE5: dict[str, dict[str, dict[str, float]]] = {
    "absolute": {
        "idiom": {"baseline": 56, "context": 68, "literal": 48, "human": 80},
        "simile": {"baseline": 60, "context": 68, "literal": 76, "human": 88},
    },
    "comparative": {
        "idiom": {"baseline": 15, "context": 45, "literal": 13, ALL: 8, NEITHER: 17},
        "simile": {"baseline": 18.6, "context": 16, "literal": 46.7, ALL: 12, NEITHER: 6.7},
    },
    "alpha": {"idiom": {"alpha": 0.68}, "simile": {"alpha": 0.63}},
}
"""Table 5 of the paper as printed (percentages; alpha as a fraction)."""


@dataclass(frozen=True)
class Table5Column:
    """One figure type's recomputed Table 5 figures (shares in percent)."""

    absolute: dict[str, float]  # baseline, context, literal, human (mean over the human continuations)
    absolute_human_columns: dict[str, float]  # human1.. each on its own
    comparative: dict[str, float]  # baseline, context, literal, all, neither; over items with a majority
    comparative_counts: dict[str, int]
    n_absolute_items: int
    n_absolute_assignments: int
    n_comparative_items: int
    n_comparative_no_majority: int
    alpha_absolute: float  # all shown sentences (models and humans)
    alpha_absolute_models: float  # the three model sentences only
    alpha_comparative: float
    warnings: tuple[DataError, ...]


@dataclass(frozen=True)
class Table5:
    idiom: Table5Column
    simile: Table5Column
    example_widget_value: ExampleWidgetValue

    def column(self, figure: str) -> Table5Column:
        return {"idiom": self.idiom, "simile": self.simile}[figure]

    def to_markdown(self) -> str:
        return render_table5_markdown(self)


def _table5_column(root: Path, figure: str, example_widget_value: ExampleWidgetValue) -> Table5Column:
    gen = root / "output" / figure / "generative"
    plaus = load_mturk_plausibility(gen / f"{figure}plausible.json", example_widget_value)
    summary = summarize_absolute(plaus.judgements, plaus.systems)
    models = summarize_absolute([j for j in plaus.judgements if j.system in _TEMPLATE_MODELS], _TEMPLATE_MODELS)
    humans = [s for s in plaus.systems if s.startswith("human")]
    absolute = {s: 100 * summary.share_plausible[s] for s in _TEMPLATE_MODELS}
    absolute["human"] = 100 * float(np.mean([summary.share_plausible[s] for s in humans]))
    comp_file = load_amt_comparative(gen / f"amt{figure}.json")
    comp = comparative_summary_from_file(comp_file)
    return Table5Column(
        absolute=absolute,
        absolute_human_columns={s: 100 * summary.share_plausible[s] for s in humans},
        comparative={k: 100 * v for k, v in comp.shares("majority").items()},
        comparative_counts=dict(comp.counts),
        n_absolute_items=summary.n_items,
        n_absolute_assignments=plaus.n_assignments,
        n_comparative_items=comp.n_items,
        n_comparative_no_majority=comp.n_no_majority,
        alpha_absolute=summary.alpha,
        alpha_absolute_models=models.alpha,
        alpha_comparative=comp.alpha,
        warnings=plaus.warnings + comp_file.repairs,
    )


def table5(data_dir: str | Path | None = None, example_widget_value: ExampleWidgetValue = "not_plausible") -> Table5:
    """Recompute Table 5 from the published crowd files under ``<data_dir>/fig_narrative/output``.

    Absolute: strict majority of the 3 workers per (HIT, sentence); share of the 25 HITs. "Human" is the
    mean over the human continuations shown (3 for idioms, 5 for similes; per-column values are kept).
    Comparative: majority of the 3 responses; shares over the items that have one ("inconsistent" excluded).
    """
    root = dataset_dir("fig_narrative", data_dir)
    return Table5(
        idiom=_table5_column(root, "idiom", example_widget_value),
        simile=_table5_column(root, "simile", example_widget_value),
        example_widget_value=example_widget_value,
    )


def _fmt(x: float, digits: int = 1) -> str:
    return "n/a" if x != x else f"{x:.{digits}f}"  # noqa: PLR0124 (NaN check)


def render_table5_markdown(table: Table5) -> str:
    """Recomputed figures beside the published ones, as a Markdown table."""
    pub = PUBLISHED_TABLE5
    lines = [
        "| | Idiom (recomputed) | Idiom (paper) | Simile (recomputed) | Simile (paper) |",
        "|---|---:|---:|---:|---:|",
        "| **Absolute: % plausible** | | | | |",
    ]
    for key in ("baseline", "context", "literal", "human"):
        lines.append(
            f"| {ROW_NAMES[key]} | {_fmt(table.idiom.absolute[key])} | {pub['absolute']['idiom'][key]:g} "
            f"| {_fmt(table.simile.absolute[key])} | {pub['absolute']['simile'][key]:g} |"
        )
    lines.append("| **Comparative: % preferred** | | | | |")
    for key in ("baseline", "context", "literal", ALL, NEITHER):
        lines.append(
            f"| {ROW_NAMES[key]} | {_fmt(table.idiom.comparative[key])} | {pub['comparative']['idiom'][key]:g} "
            f"| {_fmt(table.simile.comparative[key])} | {pub['comparative']['simile'][key]:g} |"
        )
    lines.append("| **Krippendorff's alpha (nominal)** | | | | |")
    lines.append(f"| as published | | {pub['alpha']['idiom']['alpha']:g} | | {pub['alpha']['simile']['alpha']:g} |")
    lines.append(f"| absolute (all sentences) | {_fmt(table.idiom.alpha_absolute, 2)} | | {_fmt(table.simile.alpha_absolute, 2)} | |")
    lines.append(
        f"| absolute (model sentences) | {_fmt(table.idiom.alpha_absolute_models, 2)} | | {_fmt(table.simile.alpha_absolute_models, 2)} | |"
    )
    lines.append(f"| comparative | {_fmt(table.idiom.alpha_comparative, 2)} | | {_fmt(table.simile.alpha_comparative, 2)} | |")
    lines.append("| **Counts** | | | | |")
    lines.append(
        f"| absolute HITs / assignments | {table.idiom.n_absolute_items} / {table.idiom.n_absolute_assignments} | "
        f"| {table.simile.n_absolute_items} / {table.simile.n_absolute_assignments} | |"
    )
    # the "(paper)" cells stay empty: the published Table 5 prints no counts (a 25 / 75 once quoted for it had no source)
    lines.append(
        f"| comparative items (no majority) | {table.idiom.n_comparative_items} ({table.idiom.n_comparative_no_majority}) | "
        f"| {table.simile.n_comparative_items} ({table.simile.n_comparative_no_majority}) | |"
    )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Table 5 as a result file: every figure docs/human_eval_table5.md quotes, with the per-unit votes
# --------------------------------------------------------------------------------------------

TABLE5_SOURCE = (
    'Chakrabarty, Choi and Shwartz, "It\'s not Rocket Science: Interpreting Figurative Language in Narratives", '
    "TACL 2022, Table 5 (human evaluation of generated continuations)"
)
TABLE5_FILES = ("{figure}plausible.json", "amt{figure}.json")


def _pairwise_agreement(units: Iterable[Sequence[Hashable]]) -> float:
    """Raw agreement: the share of equal pairs among all pairs of judgements within a unit, pooled over units."""
    agree = pairs = 0
    for values in units:
        for a in range(len(values)):
            for b in range(a + 1, len(values)):
                agree += values[a] == values[b]
                pairs += 1
    return agree / pairs if pairs else float("nan")


def _warning_record(w: DataError, data_root: Path) -> dict[str, Any]:
    """A data warning as a result file keeps it: the file relative to the data folder (no machine paths), line, message."""

    return {"file": _relative(Path(w.path), (data_root,)) if w.path else None, "line": w.line, "message": w.message}


def _pct(part: float, whole: float) -> float:
    return 100 * part / whole if whole else float("nan")


def _table5_readings(
    gen: Path, figure: str, plaus: PlausibilityFile, comp_file: ComparativeFile
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The other readings the doc reports for one figure type, and the per-unit records behind them."""
    votes: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for j in plaus.judgements:
        votes[(j.item_id, j.system)][j.judge] = j.plausible
    hits = sorted({h for h, _ in votes})
    humans = [s for s in plaus.systems if s.startswith("human")]

    def verdict(hit: str, system: str) -> bool:
        return majority_label(list(votes[(hit, system)].values())) is True

    pooled = [[v for s in humans for v in votes[(h, s)].values()] for h in hits]
    column_verdicts = [[verdict(h, s) for s in humans] for h in hits]
    by_column = {s: [list(votes[(h, s)].values()) for h in hits] for s in plaus.systems}
    readings: dict[str, Any] = {
        "human_votes_per_hit": len(pooled[0]),
        "human_majority_of_all_votes": _pct(sum(1 for p in pooled if 2 * sum(p) > len(p)), len(hits)),
        "human_majority_of_column_verdicts": _pct(sum(1 for c in column_verdicts if 2 * sum(c) > len(c)), len(hits)),
        "absolute_majority_by_column": {s: _pct(sum(1 for h in hits if verdict(h, s)), len(hits)) for s in plaus.systems},
        "absolute_share_of_all_votes": {s: _pct(sum(map(sum, v)), sum(map(len, v))) for s, v in by_column.items()},
        "absolute_at_least_one_plausible": {s: _pct(sum(1 for x in v if any(x)), len(hits)) for s, v in by_column.items()},
        "alpha_absolute_by_column": {s: nominal_alpha({u: v for u, v in votes.items() if u[1] == s}) for s in plaus.systems},
        "pairwise_agreement_absolute": _pairwise_agreement([list(v.values()) for v in votes.values()]),
        "pairwise_agreement_absolute_models": _pairwise_agreement(
            [list(v.values()) for (_, s), v in votes.items() if s in _TEMPLATE_MODELS]
        ),
    }
    comp = comparative_summary_from_file(comp_file)
    first = comparative_summary_from_file(ComparativeFile(comp_file.path, comp_file.items[:100], comp_file.repairs))
    with_majority = {it.line: dict(enumerate(it.responses)) for it in comp_file.items if majority_label(it.responses) is not None}
    readings.update(
        {
            "comparative_shares_over_all_items": {k: 100 * v for k, v in comp.shares("all").items()},
            "comparative_first_100_items": {
                "items": first.n_items,
                "shares_over_all_items": {k: 100 * v for k, v in first.shares("all").items()},
            },
            "alpha_comparative_items_with_majority": nominal_alpha(with_majority),
            "pairwise_agreement_comparative": _pairwise_agreement([it.responses for it in comp_file.items]),
        }
    )
    # the example widget's stray value: each reading's figures
    readings["example_widget"] = {}
    for reading in ("not_plausible", "plausible", "missing"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other = load_mturk_plausibility(gen / f"{figure}plausible.json", reading)
        s = summarize_absolute(other.judgements, other.systems)
        readings["example_widget"][reading] = {
            "absolute": {m: 100 * s.share_plausible[m] for m in _TEMPLATE_MODELS},
            "alpha_absolute": s.alpha,
        }
    alphas = [r["alpha_absolute"] for r in readings["example_widget"].values()]
    readings["example_widget"]["alpha_absolute_range"] = max(alphas) - min(alphas)
    readings["stray_answers"] = [{**_warning_record(w, gen.parents[3]), "value": 2} for w in plaus.warnings if "= 2 (" in w.message]

    records: list[dict[str, Any]] = []
    judge = {w: f"judge{k}" for k, w in enumerate(sorted({j.judge for j in plaus.judgements}), start=1)}  # no MTurk worker ids
    for (hit, system), v in sorted(votes.items()):
        records.append(
            {
                "figure": figure,
                "evaluation": "absolute",
                "hit": hit,
                "system": system,
                "votes": {judge[w]: int(x) for w, x in sorted(v.items())},
                "plausible": verdict(hit, system),
            }
        )
    for it in comp_file.items:
        m = majority_label(it.responses)
        records.append(
            {
                "figure": figure,
                "evaluation": "comparative",
                "line": it.line,
                "responses": list(it.responses),
                "file_majority": it.majority,
                "majority_of_responses": m,
                "counted_as": None if m is None else (str(m) if m in (ALL, NEITHER) else it.majority),
            }
        )
    return readings, records


def table5_results(
    data_dir: str | Path | None = None, example_widget_value: ExampleWidgetValue = "not_plausible", command: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Everything docs/human_eval_table5.md quotes about Table 5, as one result record, and its per-unit records.

    ``recomputed``: :func:`table5`'s figures; ``readings``: the other readings the doc compares (pooled human votes,
    single columns, other denominators, alphas over other units, raw pairwise agreement, the stray 2 read three
    ways); ``published``: the paper's Table 5 as printed (:data:`PUBLISHED_TABLE5`, with its source);
    ``comparison``: how the two differ; ``data``: the crowd files' checksums; ``code``: figlang's version and commit.
    The records are one per (HIT, shown sentence) with the workers' votes and one per comparative item.
    """

    root = dataset_dir("fig_narrative", data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataRepairWarning)  # reported in the record's warnings
        t = table5(data_dir, example_widget_value)
    recomputed: dict[str, Any] = {}
    readings: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    files: list[Path] = []
    for figure in ("idiom", "simile"):
        col = t.column(figure)
        gen = root / "output" / figure / "generative"
        files += [gen / f.format(figure=figure) for f in TABLE5_FILES]
        recomputed[figure] = {
            "absolute": col.absolute,
            "absolute_human_columns": col.absolute_human_columns,
            "comparative": col.comparative,
            "comparative_counts": col.comparative_counts,
            "n_absolute_items": col.n_absolute_items,
            "n_absolute_assignments": col.n_absolute_assignments,
            "n_comparative_items": col.n_comparative_items,
            "n_comparative_no_majority": col.n_comparative_no_majority,
            "n_comparative_with_majority": col.n_comparative_items - col.n_comparative_no_majority,
            "alpha": {"absolute": col.alpha_absolute, "absolute_models": col.alpha_absolute_models, "comparative": col.alpha_comparative},
            "warnings": [_warning_record(w, root.parent) for w in col.warnings],
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataRepairWarning)
            plaus = load_mturk_plausibility(gen / f"{figure}plausible.json", example_widget_value)
            comp_file = load_amt_comparative(gen / f"amt{figure}.json")
        readings[figure], recs = _table5_readings(gen, figure, plaus, comp_file)
        records += recs
    pub = PUBLISHED_TABLE5
    idiom_truncated = {k: int(v) for k, v in recomputed["idiom"]["comparative"].items()}
    comparison = {
        "human_gap": {f: pub["absolute"][f]["human"] - recomputed[f]["absolute"]["human"] for f in ("idiom", "simile")},
        "idiom_comparative_equal_to_truncated_share": sum(idiom_truncated[k] == pub["comparative"]["idiom"][k] for k in idiom_truncated),
        "idiom_comparative_equal_to_count": sum(
            recomputed["idiom"]["comparative_counts"][k] == pub["comparative"]["idiom"][k] for k in idiom_truncated
        ),
        "idiom_comparative_figures": len(idiom_truncated),
    }
    comparison["human_max_gap"] = max(comparison["human_gap"].values())
    result = {
        "format": "figlang.human.table5/1",
        "what": "Table 5 of the narrative paper recomputed from its published crowd files (docs/human_eval_table5.md)",
        "command": command,
        "example_widget_value": example_widget_value,
        "recomputed": recomputed,
        "readings": readings,
        "published": {
            "source": TABLE5_SOURCE,
            "note": "as printed in the paper: percentages, alpha as a fraction",
            **{k: v for k, v in pub.items()},
        },
        "comparison": comparison,
        "items_file": (
            "predictions.jsonl.gz: one record per (HIT, shown sentence) with the workers' votes (workers as judge1.., "
            "in the order of their MTurk ids), one per comparative item"
        ),
        "data": {"data_dir": portable_path(data_dir) if data_dir is not None else None, "files": data_checksums(files, root.parent)},
        "code": code_provenance(),
    }
    return result, records


def write_table5_results(
    out_dir: str | Path,
    data_dir: str | Path | None = None,
    example_widget_value: ExampleWidgetValue = "not_plausible",
    command: str | None = None,
) -> tuple[Path, Path]:
    """Write ``out_dir/table5.json`` (:func:`table5_results`) and ``out_dir/predictions.jsonl.gz`` (its per-unit records)."""

    result, records = table5_results(data_dir, example_widget_value, command)
    out = Path(out_dir)
    write_json(out / "table5.json", result)
    write_jsonl(out / "predictions.jsonl.gz", records)
    return out / "table5.json", out / "predictions.jsonl.gz"
