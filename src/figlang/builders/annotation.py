"""The annotation round trip: mined candidates → writer tasks (CSV/JSONL) → benchmark records.

Export: one task per candidate narrative with what a writer needs (the narrative with the
expression in ``<b>…</b>``, the expression, its definition or property, the original sentence,
the matched words, the source) and four empty fields to fill: ``plausible_continuation``,
``implausible_continuation``, ``literal_use`` (yes when the expression is used literally, e.g.
"he kicked the bucket of water over") and ``notes``.

Import: validates every answer and writes the accepted ones in the benchmark's format
(``idiom.jsonl``: narrative, meaning, idiom, option1, option2, correctanswer; ``simile.jsonl``:
narrative, option1, option2, correctanswer, simile, property), the plausible continuation
placed as option1 or option2 by a seeded hash of the task id. Rejected rows (missing fields,
identical continuations, a continuation that repeats the narrative, a task answered twice, a
narrative edited after export, an unreadable literal flag) go to ``rejected.jsonl`` with file
line and reasons; rows flagged as literal uses are dropped and counted.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import DataError, DataNotFoundError
from figlang.core.io import atomic_write, parse_jsonl, write_json
from figlang.core.text import normalise_expression, strip_markup
from figlang.builders.corpus import DecodeProblem, decode_bytes

TASK_FIELDS = [
    "task_id",
    "type",
    "narrative",
    "expression",
    "definition",
    "sentence",
    "matched",
    "source",
    "plausible_continuation",
    "implausible_continuation",
    "literal_use",
    "notes",
]
ANSWER_FIELDS = ["plausible_continuation", "implausible_continuation", "literal_use", "notes"]
TRUE_FLAGS = {"yes", "y", "true", "1", "x", "literal", "t"}
FALSE_FLAGS = {"", "no", "n", "false", "0", "f", "figurative", "-"}
IDIOM_FIELDS = ("narrative", "meaning", "idiom", "option1", "option2", "correctanswer")
SIMILE_FIELDS = ("narrative", "option1", "option2", "correctanswer", "simile", "property")


# ---------------------------------------------------------------------------------------- export


def load_candidates(path: str | Path) -> list[dict]:
    """Mined candidates: a mined folder (its narratives.jsonl) or a narratives JSONL file."""
    path = Path(path)
    if path.is_dir():
        path = path / "narratives.jsonl"
    if not path.exists():
        raise DataNotFoundError("no mined narratives here", path, hint="run `figlang build narratives mine` first")
    out = []
    for number, rec, problem in parse_jsonl(path.read_text(encoding="utf-8")):
        if rec is None:
            raise DataError(problem or "unreadable line", path, number)
        if "narrative" not in rec or ("idiom" not in rec and "simile" not in rec):
            raise DataError("not a mined narrative (needs 'narrative' and 'idiom' or 'simile')", path, number)
        out.append(rec)
    return out


def task_of(rec: dict) -> dict:
    kind = rec.get("type") or ("idiom" if "idiom" in rec else "simile")
    src = rec.get("source") or {}
    where = src.get("doc", "")
    if src.get("line") is not None:
        where += f" (line {src['line']})"
    definition = rec.get("meaning") if kind == "idiom" else rec.get("property")
    return {
        "task_id": rec.get("id") or hashlib.sha1(rec["narrative"].encode()).hexdigest()[:12],
        "type": kind,
        "narrative": rec["narrative"],
        "expression": rec.get("idiom") if kind == "idiom" else rec.get("simile"),
        "definition": definition if isinstance(definition, str) else "",
        "sentence": rec.get("sentence", ""),
        "matched": rec.get("matched", ""),
        "source": where,
        "plausible_continuation": "",
        "implausible_continuation": "",
        "literal_use": "",
        "notes": "",
    }


def export_tasks(
    candidates: list[dict], dest: str | Path, fmt: str | None = None, kinds: tuple[str, ...] | None = None, limit: int | None = None
) -> int:
    """Write annotation tasks as CSV or JSONL (by ``fmt`` or the file suffix). Returns the number written."""
    dest = Path(dest)
    fmt = fmt or ("jsonl" if dest.suffix.lower() in {".jsonl", ".json"} else "csv")
    tasks = [task_of(r) for r in candidates if kinds is None or (r.get("type") or "") in kinds]
    if limit is not None:
        tasks = tasks[:limit]
    with atomic_write(dest) as f:
        if fmt == "csv":
            w = csv.DictWriter(f, fieldnames=TASK_FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(tasks)
        else:
            for t in tasks:
                f.write(json.dumps(t, ensure_ascii=False) + "\n")
    return len(tasks)


# ---------------------------------------------------------------------------------------- import


@dataclass
class AnswersImportReport:
    accepted: list[dict] = field(default_factory=list)  # benchmark records with "_kind", "_task_id", "_line"
    rejected: list[dict] = field(default_factory=list)  # {"line", "task_id", "reasons"}
    literal: list[dict] = field(default_factory=list)  # {"line", "task_id"}
    rows: int = 0
    notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    def reasons(self) -> Counter:
        c: Counter = Counter()
        for r in self.rejected:
            for reason in r["reasons"]:
                c[reason.split(":")[0]] += 1
        return c

    def to_dict(self) -> dict:
        return {
            "rows": self.rows,
            "accepted": len(self.accepted),
            "rejected": len(self.rejected),
            "dropped_literal": len(self.literal),
            "rejections_by_reason": dict(self.reasons()),
            "rejected_rows": self.rejected,
            "literal_rows": self.literal,
            "notes": self.notes,
            "files": self.files,
        }


def read_rows(path: str | Path) -> tuple[list[tuple[int, dict]], list[str]]:
    """(line, row) pairs from a CSV (with header) or JSONL answers file, plus notes (encoding)."""
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError("answers file not found", path)
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError("file is empty", path)
    notes = []
    try:
        text, enc = decode_bytes(raw, "auto")
    except DecodeProblem as exc:
        raise DataError(exc.detail, path, exc.line) from None
    if enc not in {"utf-8", "utf-8-sig"}:
        notes.append(f"{path}: read as {enc}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    rows: list[tuple[int, dict]] = []
    if path.suffix.lower() in {".jsonl", ".json"}:
        for number, obj, problem in parse_jsonl(text):
            rows.append((number, obj if obj is not None else {"__error__": problem}))
        return rows, notes
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or "task_id" not in reader.fieldnames:
        raise DataError(f"the CSV header lacks 'task_id' (found: {', '.join(reader.fieldnames or [])})", path, 1)
    start = 2
    for row in reader:
        rows.append((start, {k: (v if v is not None else "") for k, v in row.items() if k is not None}))
        start = reader.line_num + 1
    return rows, notes


def _norm(text: str) -> str:
    """The expression key of the text without its ``<b>`` markup: copies are found whatever their punctuation."""
    return normalise_expression(strip_markup(text))


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])[\"'”’]?\s+", strip_markup(text)) if s.strip()]


def _repeats(continuation: str, narrative: str) -> bool:
    from rapidfuzz import fuzz

    c = _norm(continuation)
    if len(c.split()) >= 3 and c in _norm(narrative):
        return True
    return any(fuzz.ratio(c, _norm(s)) >= 90 for s in _sentences(narrative))


def _option_order(task_id: str, seed: int) -> int:
    """0: plausible is option1; 1: plausible is option2 (stable per task, balanced overall)."""
    return hashlib.sha256(f"{seed}:{task_id}".encode()).digest()[0] & 1


def validate_row(row: dict, tasks: dict[str, dict] | None = None) -> tuple[list[str], bool]:
    """(reasons to reject, literal flag). An empty reason list means the row is usable."""
    from rapidfuzz import fuzz

    if "__error__" in row:
        return [row["__error__"]], False
    reasons = []
    get = lambda k: (row.get(k) or "").strip() if isinstance(row.get(k, ""), str) else str(row.get(k))  # noqa: E731
    for key in ("task_id", "type", "narrative", "expression"):
        if not get(key):
            reasons.append(f"missing field: {key}")
    kind = get("type")
    if kind and kind not in {"idiom", "simile"}:
        reasons.append(f"unknown type: {kind!r} (idiom or simile)")
    flag = get("literal_use").lower()
    literal = False
    if flag in TRUE_FLAGS:
        literal = True
    elif flag not in FALSE_FLAGS:
        reasons.append(f"unreadable literal_use: {flag!r} (yes/no)")
    if literal:
        return reasons, True
    if kind == "idiom" and not get("definition"):
        reasons.append("missing field: definition (the idiom's meaning)")
    plaus, implaus = get("plausible_continuation"), get("implausible_continuation")
    if not plaus:
        reasons.append("missing continuation: plausible_continuation")
    if not implaus:
        reasons.append("missing continuation: implausible_continuation")
    if plaus and implaus:
        if _norm(plaus) == _norm(implaus):
            reasons.append("duplicated continuation: plausible and implausible are the same")
        elif fuzz.ratio(_norm(plaus), _norm(implaus)) >= 95:
            reasons.append("duplicated continuation: plausible and implausible differ only in a few characters")
    narrative = get("narrative")
    for name, text in (("plausible_continuation", plaus), ("implausible_continuation", implaus)):
        if text and narrative and _repeats(text, narrative):
            reasons.append(f"continuation repeats the narrative: {name}")
    if tasks is not None and get("task_id"):
        task = tasks.get(get("task_id"))
        if task is None:
            reasons.append("unknown task: task_id not in the exported tasks")
        else:
            if " ".join(task["narrative"].split()) != " ".join(narrative.split()):
                reasons.append("narrative edited: it differs from the exported task")
            if (task.get("expression") or "").strip() != get("expression"):
                reasons.append("expression edited: it differs from the exported task")
    return reasons, False


def import_answers(answers: str | Path, out_dir: str | Path, tasks_file: str | Path | None = None, seed: int = 0) -> AnswersImportReport:
    """Validate writers' answers and write the accepted ones in the benchmark format."""
    rows, notes = read_rows(answers)
    tasks = None
    if tasks_file is not None:
        task_rows, _ = read_rows(tasks_file)
        tasks = {r.get("task_id", ""): r for _, r in task_rows if r.get("task_id")}
    report = AnswersImportReport(rows=len(rows), notes=notes)
    seen: dict[str, int] = {}
    for line, row in rows:
        reasons, literal = validate_row(row, tasks)
        task_id = (row.get("task_id") or "").strip() if isinstance(row.get("task_id"), str) else str(row.get("task_id", ""))
        if task_id and task_id in seen and not reasons:
            reasons.append(f"duplicate task: task_id already answered at line {seen[task_id]}")
        if reasons:
            report.rejected.append({"line": line, "task_id": task_id, "reasons": reasons})
            continue
        if literal:
            report.literal.append({"line": line, "task_id": task_id})
            seen[task_id] = line
            continue
        seen[task_id] = line
        report.accepted.append(_benchmark_record(row, task_id, seed, line))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for kind, fields in (("idiom", IDIOM_FIELDS), ("simile", SIMILE_FIELDS)):
        recs = [r for r in report.accepted if r["_kind"] == kind]
        if not recs:
            continue
        path = out / f"{kind}.jsonl"
        prov = out / f"{kind}.provenance.jsonl"
        with atomic_write(path) as f, atomic_write(prov) as g:
            for number, r in enumerate(recs, start=1):
                f.write(json.dumps({k: r[k] for k in fields}, ensure_ascii=False) + "\n")
                g.write(json.dumps({"line": number, "task_id": r["_task_id"], "answers_line": r["_line"]}, ensure_ascii=False) + "\n")
        report.files[kind] = str(path)
    with atomic_write(out / "rejected.jsonl") as f:
        for r in report.rejected:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    write_json(out / "import_report.json", report.to_dict())
    return report


def _benchmark_record(row: dict, task_id: str, seed: int, line: int) -> dict[str, Any]:
    kind = row["type"].strip()
    plaus = row["plausible_continuation"].strip()
    implaus = row["implausible_continuation"].strip()
    order = _option_order(task_id, seed)
    options = (plaus, implaus) if order == 0 else (implaus, plaus)
    rec: dict[str, Any] = {
        "narrative": row["narrative"].strip(),
        "option1": options[0],
        "option2": options[1],
        "correctanswer": "option1" if order == 0 else "option2",
        "_kind": kind,
        "_task_id": task_id,
        "_line": line,
    }
    definition = (row.get("definition") or "").strip()
    if kind == "idiom":
        rec.update({"idiom": row["expression"].strip(), "meaning": definition})
    else:
        rec.update({"simile": row["expression"].strip(), "property": definition or None})
    return rec
