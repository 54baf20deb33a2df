"""IMPLI generator, the human part: the verification queue over a generator output folder, verdicts, rates, final files.

IMPLI's authors checked their automatically made pairs by hand and dropped or fixed the bad ones. This module is that
step for ``figlang build impli`` output folders (``OUT/jsonl/*.jsonl``, one record per generated pair, written by
:func:`~figlang.builders.impli.outputs.write_outputs`):

* :func:`export_queue` writes the pairs still waiting for a verdict (CSV, TSV or JSONL) for offline reviewers.
* :func:`import_verdicts` / :func:`record_verdict` check and store verdicts: ``accept``, ``edit`` (changed premise,
  hypothesis and/or label) or ``reject`` with a reason from :data:`REJECT_REASONS` (+ a free note). They are kept in
  ``OUT/review/verdicts.jsonl`` by pair id, rewritten atomically after every import or single verdict, so a review
  stopped halfway keeps everything stored before. A verdict remembers the text it judged: if the pair is generated
  again with other text, the old verdict no longer applies (the pair is unreviewed again).
* :func:`review_rates` gives accept / edit / reject counts per pair type.
* :func:`finalize` writes the accepted and edited pairs in IMPLI's TSV layout (rejected ones left out), with a
  manifest (``manifest.json``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from figlang.core.errors import DataError
from figlang.core.io import atomic_write, read_jsonl, write_json, write_jsonl
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT
from figlang.core.text import collapse_spaces
from figlang.builders.review_queue import (
    BuilderReview,
    VerdictsImportReport,
    changed_verdict_note,
    edits_of,
    reviewed_fields,
    save_verdicts,
    tally,
    verdict_of,
    verdicts_path,
    write_queue,
)
from figlang.builders.impli.outputs import GENERATOR_VERSION, PAIR_TYPES
from figlang.builders.impli.sentences import one_line

FINAL_DIR = "final"
#: Why a pair is rejected (IMPLI's manual check looked for these).
REJECT_REASONS: dict[str, str] = {
    "ungrammatical": "the hypothesis is not a grammatical sentence",
    "definition_does_not_fit": "the definition does not fit the idiom's sense in this context",
    "label_wrong": "the label is wrong and cannot be fixed by relabelling",
    "not_figurative": "the expression is not used figuratively (or is not the idiom / metaphor)",
    "other": "another reason (say which in the note)",
}
QUEUE_COLUMNS = (
    "id",
    "pair_type",
    "source",
    "expression",
    "definition",
    "premise",
    "hypothesis",
    "label",
    "verdict",
    "reason",
    "edited_premise",
    "edited_hypothesis",
    "edited_label",
    "note",
)
EDITABLE = ("premise", "hypothesis", "label")
LABELS = (ENTAILMENT, NON_ENTAILMENT)
_LABEL_SPELLINGS = {
    "entailment": ENTAILMENT,
    "e": ENTAILMENT,
    "entails": ENTAILMENT,
    "non-entailment": NON_ENTAILMENT,
    "non_entailment": NON_ENTAILMENT,
    "nonentailment": NON_ENTAILMENT,
    "not entailment": NON_ENTAILMENT,
    "ne": NON_ENTAILMENT,
}


def is_output_folder(folder: str | Path) -> bool:
    """Whether ``folder`` holds IMPLI generator output (``jsonl/*.jsonl`` pair records)."""
    jsonl = Path(folder) / "jsonl"
    return jsonl.is_dir() and any(jsonl.glob("*.jsonl"))


def _fingerprint(premise: str, hypothesis: str) -> str:
    return hashlib.sha1(f"{premise}\t{hypothesis}".encode()).hexdigest()[:12]


def load_pairs(out: str | Path) -> dict[str, dict[str, Any]]:
    """Every generated pair of the folder by id (its record + ``file``: the JSONL stem it came from), in file order."""
    folder = Path(out)
    if not is_output_folder(folder):
        raise DataError(
            f"{folder} is not an IMPLI generator output folder (no jsonl/*.jsonl): run `figlang build impli substitute --out {folder}` first"
        )
    pairs: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "jsonl").glob("*.jsonl")):
        for rec in read_jsonl(path):
            if rec.get("id") in pairs:
                raise DataError(f"pair id {rec['id']!r} appears twice (also in {pairs[rec['id']]['file']}.jsonl)", path)
            pairs[rec["id"]] = {**rec, "file": path.stem}
    return pairs


def current_verdicts(out: str | Path, pairs: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Stored verdicts by pair id that still apply (the pair's text is the one judged); the latest wins."""
    pairs = load_pairs(out) if pairs is None else pairs
    found = {}
    for v in read_jsonl(verdicts_path(out)):
        p = pairs.get(v["id"])
        if p is not None and v.get("pair") == _fingerprint(p["premise"], p["hypothesis"]):
            found[v["id"]] = v
    return found


def queue_items(out: str | Path) -> list[dict[str, Any]]:
    """The pairs with their verdict under ``review`` (None while unreviewed), in export order."""
    pairs = load_pairs(out)
    verdicts = current_verdicts(out, pairs)
    return [{**p, "review": verdicts.get(pid)} for pid, p in pairs.items()]


def export_queue(
    out: str | Path,
    dest: str | Path,
    fmt: str | None = None,
    include_reviewed: bool = False,
    pair_types: tuple[str, ...] | None = None,
    limit: int | None = None,
) -> int:
    """Write the pairs still waiting for a verdict (all with ``include_reviewed``) as a review queue; returns the rows."""
    todo = (i for i in queue_items(out) if (not pair_types or i["pair_type"] in pair_types) and (include_reviewed or i["review"] is None))
    return write_queue(dest, todo, QUEUE_COLUMNS, fmt, limit)


def _label(value: str) -> str | None:
    return _LABEL_SPELLINGS.get(value.lower().replace("  ", " "))


def store_verdicts(out: str | Path, rows: list[tuple[str, int, dict[str, Any]]], report: VerdictsImportReport) -> VerdictsImportReport:
    """Check (origin, line, row) verdict rows against the folder's pairs and store the good ones atomically."""
    pairs = load_pairs(out)
    stored = {v["id"]: v for v in read_jsonl(verdicts_path(out))}
    seen: dict[str, int] = {}
    new: dict[str, dict[str, Any]] = {}
    for where, line, row in rows:
        checked = verdict_of(where, line, row, pairs, seen, report, str(out))
        if checked is None:
            continue
        pid, pair, verdict = checked
        reason = collapse_spaces(row.get("reason")).lower().replace(" ", "_")
        note = collapse_spaces(row.get("note"))
        if verdict == "reject":
            if not reason:
                report.errors.append(f"{where}: a rejection needs a reason ({', '.join(REJECT_REASONS)})")
                continue
            if reason not in REJECT_REASONS:
                report.errors.append(f"{where}: reason {row.get('reason')!r} is not one of {', '.join(REJECT_REASONS)}")
                continue
            if reason == "other" and not note:
                report.errors.append(f"{where}: reason 'other' needs a note saying why")
                continue
        elif reason:
            report.errors.append(f"{where}: a reason ({reason!r}) is only for verdict 'reject'")
            continue
        edits = edits_of(where, row, pair, verdict, EDITABLE, _label, f"{ENTAILMENT} or {NON_ENTAILMENT}", report)
        if edits is None:
            continue
        fingerprint = _fingerprint(pair["premise"], pair["hypothesis"])
        old = stored.get(pid)
        if old is not None and old.get("pair") == fingerprint and old["verdict"] != verdict:
            report.notes.append(changed_verdict_note(where, pid, old, verdict))
        new[pid] = {
            "id": pid,
            "pair": fingerprint,
            "pair_type": pair["pair_type"],
            "verdict": verdict,
            "reason": reason or None,
            "edits": edits,
            "note": note,
            "from": where,
        }
        report.verdicts[verdict] += 1
    return save_verdicts(out, stored, new, report)


def review_rates(out: str | Path) -> dict[str, dict[str, int]]:
    """Per pair type (and ``all`` when there are several): pairs, reviewed, accept, edit, reject, unreviewed."""
    return tally(((i["pair_type"], i["review"] and i["review"]["verdict"]) for i in queue_items(out)), PAIR_TYPES)


def reject_reasons(out: str | Path) -> dict[str, int]:
    """How many pairs were rejected for each reason."""
    return dict(Counter(i["review"]["reason"] for i in queue_items(out) if i["review"] and i["review"]["verdict"] == "reject"))


def finalize(out: str | Path, dest: str | Path | None = None, include_unreviewed: bool = False) -> dict[str, Any]:
    """Write the verified pairs (accepted + edited; unreviewed too with ``include_unreviewed``) in IMPLI's layout.

    A pair keeps its file (``impli/idioms/fig_context_<source>_e.tsv`` …) unless a reviewer changed its label: IMPLI
    files hold one label each, so relabelled pairs go to ``impli/relabelled/<file>_<e|ne>.tsv``. ``jsonl/`` keeps
    the provenance records with their review; ``manifest.json`` lists the files, counts and what was left out.
    """
    folder = Path(out)
    out_dir = Path(dest) if dest else folder / FINAL_DIR
    items = queue_items(folder)
    tsv_rows: dict[str, list[str]] = {}
    records: dict[str, list[dict[str, Any]]] = {}
    left_out: Counter = Counter()
    for item in items:
        v = item["review"]
        kept = reviewed_fields(item, v, EDITABLE, include_unreviewed, left_out, by_reason=True)
        if kept is None:
            continue
        review, final = kept
        rel = _tsv_name(item["file"], item["pair_type"], item["label"], final["label"])
        tsv_rows.setdefault(rel, []).append(f"{one_line(final['premise'])}\t{one_line(final['hypothesis'])}\n")
        rec = {k: val for k, val in item.items() if k not in ("review", "file")}
        records.setdefault(Path(rel).stem, []).append(
            {**rec, **final, "review": review, "edited": sorted(v["edits"]) if v else [], "note": v["note"] if v else ""}
        )
    files: dict[str, int] = {}
    for rel, lines in sorted(tsv_rows.items()):
        with atomic_write(out_dir / "impli" / rel) as fh:
            fh.writelines(lines)
        files[f"impli/{rel}"] = len(lines)
    for stem, recs in sorted(records.items()):
        write_jsonl(out_dir / "jsonl" / f"{stem}.jsonl", recs)
    manifest = {
        "generator": GENERATOR_VERSION,
        "reviewed_from": folder.name,
        "include_unreviewed": include_unreviewed,
        "files": files,
        "pairs": sum(files.values()),
        "left_out": dict(sorted(left_out.items())),
        "rates": review_rates(folder),
        "reject_reasons": reject_reasons(folder),
    }
    write_json(out_dir / "manifest.json", manifest)
    return {"out_dir": str(out_dir), **manifest}


def _tsv_name(stem: str, pair_type: str, label: str, final_label: str) -> str:
    folder = "metaphors" if PAIR_TYPES.get(pair_type, ("", "idiom"))[1] == "metaphor" else "idioms"
    if final_label == label:
        return f"{folder}/{stem}.tsv"
    return f"relabelled/{stem}_{'e' if final_label == ENTAILMENT else 'ne'}.tsv"


#: The IMPLI generator's verification queue (the web review page and `figlang build impli review-import`).
REVIEW = BuilderReview(
    kind="impli",
    title="IMPLI generator output",
    labels=LABELS,
    editable=EDITABLE,
    reject_reasons=REJECT_REASONS,
    import_cmd="figlang build impli review-import",
    finalize_cmd="figlang build impli finalize",
    holds_queue=is_output_folder,
    queue_items=queue_items,
    review_rates=review_rates,
    store_verdicts=store_verdicts,
)
import_verdicts = REVIEW.import_verdicts
record_verdict = REVIEW.record_verdict
