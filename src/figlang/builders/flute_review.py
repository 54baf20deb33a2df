"""FLUTE creator, the human part: the verification queue, verdicts, rates, and the final files.

* :func:`export_queue` writes the candidates for expert review (CSV or JSONL): ``id``, ``revision``,
  ``figure_type``, ``expression``, ``premise``, ``hypothesis``, ``label``, ``explanation`` and empty
  ``verdict`` / ``edited_premise`` / ``edited_hypothesis`` / ``edited_label`` / ``edited_explanation``
  / ``note`` columns.
* :func:`import_verdicts` reads them back: ``accept``, ``edit`` (with at least one ``edited_*`` field
  that changes something) or ``reject``; a blank verdict means "not reviewed yet". Every bad row is
  reported with file:line and not imported. Verdicts are kept in ``RUN/review/verdicts.jsonl``, per
  pair and revision (a pair the reviewer rejected can be resampled: ``generate --resample-rejected``
  makes a new revision, which is reviewed again).
* :func:`review_rates` gives the per-type accept / edit / reject counts (the paper reports them).
* :func:`finalize` writes the accepted and edited pairs: FLUTE's per-phenomenon files
  (``idiomNLI/idiom_<split>.jsonl`` …, FLUTE's plain fields ``id, premise, hypothesis, label,
  explanation`` + ``idiom``), the same pairs in FLUTE's instruction/target format
  (``FLUTEfinal<split>.json``), a combined ``pairs.jsonl`` with a unique id and the figure type, and
  ``task.yaml``, a figlang task spec over ``pairs.jsonl`` (``figlang data stats --task task.yaml``).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..data.errors import DataError, DataNotFoundError
from ..data.flute import INSTRUCTION, PHENOMENON_FILES, normalise_label
from ..data.io import atomic_write, parse_jsonl, parse_table, read_jsonl, read_text, write_json, write_jsonl
from ..data.text import collapse_spaces
from .flute_creator import REVIEW_DIR, load_candidates, load_records, pairs_of
from .flute_inputs import FIGURE_TYPES

QUEUE_COLUMNS = (
    "id", "revision", "figure_type", "expression", "premise", "hypothesis", "label", "explanation",
    "verdict", "edited_premise", "edited_hypothesis", "edited_label", "edited_explanation", "note",
)  # fmt: skip
VERDICTS = {"accept": "accept", "accepted": "accept", "a": "accept", "yes": "accept", "ok": "accept",
            "edit": "edit", "edited": "edit", "e": "edit",
            "reject": "reject", "rejected": "reject", "r": "reject", "no": "reject"}  # fmt: skip
EDITABLE = ("premise", "hypothesis", "label", "explanation")
VERDICTS_FILE = "verdicts.jsonl"


# --- tables -----------------------------------------------------------------------------------------


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
        if len(row) > len(header) and any(c.strip() for c in row[len(header):]):
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


# --- verdicts ---------------------------------------------------------------------------------------


def _verdicts_path(run: str | Path) -> Path:
    return Path(run) / REVIEW_DIR / VERDICTS_FILE


def current_verdicts(run: str | Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Every stored verdict, by (pair id, revision); the latest import wins."""
    path = _verdicts_path(run)
    return {(v["id"], int(v["revision"])): v for v in read_jsonl(path)}


def _current_pairs(run: str | Path) -> dict[str, dict[str, Any]]:
    """All pairs of the run in their current revision (candidates and others), by id."""
    pairs: dict[str, dict[str, Any]] = {}
    for rec in load_records(run).values():
        for p in pairs_of(rec):
            pairs[p["id"]] = p
    return pairs


def export_queue(run: str | Path, out: str | Path, fmt: str | None = None, include_reviewed: bool = False,
                 figure_types: tuple[str, ...] | None = None, limit: int | None = None) -> int:  # fmt: skip
    """Write the candidates still waiting for a verdict (all with ``include_reviewed``) as a review queue."""
    verdicts = current_verdicts(run)
    rows = []
    for c in load_candidates(run):
        if figure_types and c["figure_type"] not in figure_types:
            continue
        if not include_reviewed and (c["id"], int(c["revision"])) in verdicts:
            continue
        rows.append({**{k: c.get(k) for k in QUEUE_COLUMNS if k in c}, "verdict": "", "edited_premise": "", "edited_hypothesis": "",
                     "edited_label": "", "edited_explanation": "", "note": ""})  # fmt: skip
        if limit is not None and len(rows) >= limit:
            break
    write_table(Path(out), rows, QUEUE_COLUMNS, fmt)
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
        return {"rows": self.rows, "stored": self.stored, "blank": self.blank, "verdicts": dict(self.verdicts),
                "errors": self.errors, "notes": self.notes}  # fmt: skip


def import_verdicts(run: str | Path, path: str | Path) -> VerdictsImportReport:
    """Validate and store a reviewed queue; bad rows are reported (file:line) and left out."""
    report = VerdictsImportReport()
    rows, problems = read_table(path)
    report.errors.extend(problems)
    return store_verdicts(run, [(f"{path}:{line}", line, row) for line, row in rows], report)


def record_verdict(run: str | Path, row: dict[str, Any], where: str) -> VerdictsImportReport:
    """Store one verdict given as a queue row (``id``, ``revision``, ``verdict``, ``edited_*``, ``note``), checked
    exactly as an imported queue row is; ``where`` is recorded as its origin (e.g. "figlang serve"). The verdicts
    file is rewritten atomically, so a review stopped between two verdicts keeps every one stored before."""
    return store_verdicts(run, [(where, 1, row)], VerdictsImportReport())


def store_verdicts(run: str | Path, rows: list[tuple[str, int, dict[str, Any]]], report: VerdictsImportReport) -> VerdictsImportReport:
    """Validate (origin, line, row) verdict rows against the run's current pairs and store the good ones."""
    pairs = _current_pairs(run)
    stored = current_verdicts(run)
    seen: dict[str, int] = {}
    new: dict[tuple[str, int], dict[str, Any]] = {}
    for where, line, row in rows:
        report.rows += 1
        pid = collapse_spaces(row.get("id"))
        if not pid:
            report.errors.append(f"{where}: no id")
            continue
        if pid in seen:
            report.errors.append(f"{where}: duplicate id {pid!r} (first at line {seen[pid]})")
            continue
        seen[pid] = line
        pair = pairs.get(pid)
        if pair is None:
            report.errors.append(f"{where}: unknown id {pid!r} (not a pair of this run)")
            continue
        raw_verdict = collapse_spaces(row.get("verdict")).lower()
        if not raw_verdict:
            report.blank += 1
            continue
        verdict = VERDICTS.get(raw_verdict)
        if verdict is None:
            report.errors.append(f"{where}: verdict {row.get('verdict')!r} is not accept, edit or reject")
            continue
        revision = pair["revision"]
        if collapse_spaces(row.get("revision")) not in ("", str(revision)):
            report.errors.append(f"{where}: {pid} was reviewed at revision {row.get('revision')}, but it was resampled since "
                                 f"(now revision {revision}): export the queue again")  # fmt: skip
            continue
        if pair["status"] != "candidate":
            report.errors.append(f"{where}: {pid} is not a candidate now ({pair['status']}: {pair['reason']})")
            continue
        edits: dict[str, str] = {}
        bad = None
        for f in EDITABLE:
            value = collapse_spaces(row.get(f"edited_{f}"))
            if not value:
                continue
            if f == "label":
                label = normalise_label(value)  # FLUTE's label normaliser: the loader accepts what review accepts
                if label is None:
                    bad = f"edited_label {value!r} is not Entailment or Contradiction"
                    break
                value = label.capitalize()  # the creator's pairs spell labels "Entailment" / "Contradiction"
            if value != collapse_spaces(pair[f]):
                edits[f] = value
        if bad:
            report.errors.append(f"{where}: {bad}")
            continue
        if verdict == "edit" and not edits:
            report.errors.append(f"{where}: verdict 'edit' but no edited_premise/hypothesis/label/explanation changes the pair")
            continue
        if verdict != "edit" and edits:
            report.errors.append(f"{where}: verdict {verdict!r} with edited fields ({', '.join(edits)}): use verdict 'edit' to keep them")
            continue
        final = {f: edits.get(f, pair[f]) for f in EDITABLE}
        if verdict == "edit" and collapse_spaces(final["premise"]).lower() == collapse_spaces(final["hypothesis"]).lower():
            report.errors.append(f"{where}: the edited premise and hypothesis are the same sentence")
            continue
        key = (pid, revision)
        if key in stored and stored[key]["verdict"] != verdict:
            report.notes.append(f"{where}: {pid} had verdict {stored[key]['verdict']!r} ({stored[key]['from']}); now {verdict!r}")
        new[key] = {"id": pid, "revision": revision, "figure_type": pair["figure_type"], "verdict": verdict, "edits": edits,
                    "note": collapse_spaces(row.get("note")), "from": where}  # fmt: skip
        report.verdicts[verdict] += 1
    stored.update(new)
    report.stored = len(new)
    write_jsonl(_verdicts_path(run), list(stored.values()))
    return report


def queue_items(run: str | Path) -> list[dict[str, Any]]:
    """The candidates in their current revision, each with its stored verdict under ``review`` (None while unreviewed):
    what a reviewer works through, in the order `export_queue` writes them."""
    verdicts = current_verdicts(run)
    return [{**c, "review": verdicts.get((c["id"], int(c["revision"])))} for c in load_candidates(run)]


def review_rates(run: str | Path) -> dict[str, dict[str, int]]:
    """Per figure type (and ``all``): candidates, reviewed, accept, edit, reject, unreviewed (current revisions)."""
    verdicts = current_verdicts(run)
    rates: dict[str, dict[str, int]] = {}
    for c in load_candidates(run):
        r = rates.setdefault(c["figure_type"], Counter({"candidates": 0, "reviewed": 0, "accept": 0, "edit": 0, "reject": 0, "unreviewed": 0}))
        r["candidates"] += 1
        v = verdicts.get((c["id"], int(c["revision"])))
        if v is None:
            r["unreviewed"] += 1
        else:
            r["reviewed"] += 1
            r[v["verdict"]] += 1
    ordered = {t: dict(rates[t]) for t in FIGURE_TYPES if t in rates}
    if len(ordered) > 1:
        total: Counter = Counter()
        for r in ordered.values():
            total.update(r)
        ordered["all"] = dict(total)
    return ordered


# --- final files ------------------------------------------------------------------------------------

FLUTE_FIELDS = {
    "idiom": ("id", "hypothesis", "premise", "idiom", "label", "explanation"),
    "metaphor": ("id", "hypothesis", "label", "premise", "explanation"),
    "simile": ("id", "premise", "hypothesis", "label", "explanation"),
    "sarcasm": ("id", "premise", "hypothesis", "label", "explanation"),
}  # field order of FLUTE's own per-phenomenon files


def finalize(run: str | Path, out: str | Path | None = None, split: str = "train", name: str = "flute-created",
             include_unreviewed: bool = False) -> dict[str, Any]:  # fmt: skip
    """Write the verified pairs (accepted + edited; unreviewed too with ``include_unreviewed``)."""
    run = Path(run)
    out_dir = Path(out) if out else run / "final"
    verdicts = current_verdicts(run)
    config = json.loads((run / "config.json").read_text(encoding="utf-8")) if (run / "config.json").exists() else {}
    by_type: dict[str, list[dict[str, Any]]] = {}
    combined: list[dict[str, Any]] = []
    left_out: Counter = Counter()
    for c in load_candidates(run):
        v = verdicts.get((c["id"], int(c["revision"])))
        review = v["verdict"] if v else "unreviewed"
        if review == "reject":
            left_out["rejected"] += 1
            continue
        if review == "unreviewed" and not include_unreviewed:
            left_out["unreviewed"] += 1
            continue
        pair = {f: (v["edits"].get(f, c[f]) if v else c[f]) for f in EDITABLE}
        t = c["figure_type"]
        flute = {"id": c["index"], **pair}
        if t == "idiom":
            flute["idiom"] = c["expression"]
        by_type.setdefault(t, []).append({k: flute[k] for k in FLUTE_FIELDS[t]})
        combined.append({"id": c["id"], "flute_id": c["index"], "figure_type": t, **pair, "expression": c.get("expression"),
                         "review": review, "edited": sorted(v["edits"]) if v else [], "source": c.get("source")})  # fmt: skip
    for status in ("failed", "awaiting_edit", "pending"):
        n = sum(1 for p in _current_pairs(run).values() if p["status"] == status)
        if n:
            left_out[f"never a candidate: {status}"] = n
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    written: dict[str, int] = {}
    for t in FIGURE_TYPES:
        if t not in by_type:
            continue
        rel = PHENOMENON_FILES[t].replace("_train.jsonl", f"_{split}.jsonl")
        write_jsonl(out_dir / rel, by_type[t])
        files[t] = str(out_dir / rel)
        written[t] = len(by_type[t])
    write_jsonl(out_dir / "pairs.jsonl", combined)
    translation = [{"translation": {"en1": INSTRUCTION.format(premise=p["premise"], hypothesis=p["hypothesis"]),
                                    "en2": f"{'Entails' if p['label'] == 'Entailment' else 'Contradicts'}. {p['explanation']}"}}
                   for p in combined]  # fmt: skip
    write_jsonl(out_dir / f"FLUTEfinal{split}.json", translation)
    model = (config.get("fingerprint") or {}).get("config", {}).get("model", "?")
    spec = {
        "name": name,
        "description": f"FLUTE-style figurative NLI pairs made with `figlang build flute` (generator: {model}; "
        f"{'verified by people' if not include_unreviewed else 'includes UNREVIEWED candidates'})",
        "shape": "nli",
        "format": "jsonl",
        "splits": {split: "pairs.jsonl"},
        "columns": {"id": "id", "premise": "premise", "hypothesis": "hypothesis", "label": "label", "explanation": "explanation",
                    "figure_type": "figure_type", "expression": "expression"},
        "labels": {"Entailment": "entailment", "Contradiction": "contradiction"},
        "meta": ["review", "flute_id"],
        "group_by": ["figure_type"],
    }  # fmt: skip
    spec_path = out_dir / "task.yaml"
    with atomic_write(spec_path) as fh:
        fh.write("# figlang task spec for the pairs made by `figlang build flute finalize` (check: figlang data stats --task task.yaml)\n")
        yaml.safe_dump(spec, fh, sort_keys=False, allow_unicode=True)
    rates = review_rates(run)
    result = {"out_dir": str(out_dir), "written": written, "files": files, "combined": str(out_dir / "pairs.jsonl"),
              "translation": str(out_dir / f"FLUTEfinal{split}.json"), "spec": str(spec_path), "left_out": dict(left_out),
              "rates": rates, "generator": config.get("fingerprint", {}).get("config")}  # fmt: skip
    write_json(out_dir / "report.json", result)
    return result
