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

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from figlang.data.flute import INSTRUCTION, PHENOMENON_FILES, normalise_label
from figlang.core.context import RunContext
from figlang.core.io import atomic_write, file_sha256, write_json, write_jsonl
from figlang.core.provenance import code_provenance, data_checksums, portable_path
from figlang.core.text import collapse_spaces
from figlang.builders.flute_creator import CANDIDATES_FILE, ITEMS_FILE, load_candidates, load_records, pairs_of
from figlang.builders.flute_inputs import FIGURE_TYPES, InputSet, load_idioms, select
from figlang.builders.review_queue import (
    RATE_KEYS,
    VERDICTS,
    BuilderReview,
    VerdictsImportReport,
    changed_verdict_note,
    edits_of,
    read_table,
    reviewed_fields,
    save_verdicts,
    tally,
    verdict_of,
    verdicts_by_revision,
    write_queue,
)

__all__ = [
    "REVIEW",
    "VerdictsImportReport",
    "current_verdicts",
    "export_queue",
    "finalize",
    "import_verdicts",
    "queue_items",
    "read_table",
    "drawn_inputs",
    "record_verdict",
    "review_rates",
    "store_verdicts",
    "verdict_file_results",
]

QUEUE_COLUMNS = (
    "id",
    "revision",
    "figure_type",
    "expression",
    "premise",
    "hypothesis",
    "label",
    "explanation",
    "verdict",
    "edited_premise",
    "edited_hypothesis",
    "edited_label",
    "edited_explanation",
    "note",
)
EDITABLE = ("premise", "hypothesis", "label", "explanation")


# --- verdicts ---------------------------------------------------------------------------------------


current_verdicts = verdicts_by_revision  # every stored verdict, by (pair id, revision); the latest import wins


def _current_pairs(run: str | Path) -> dict[str, dict[str, Any]]:
    """All pairs of the run in their current revision (candidates and others), by id."""
    pairs: dict[str, dict[str, Any]] = {}
    for rec in load_records(run).values():
        for p in pairs_of(rec):
            pairs[p["id"]] = p
    return pairs


def export_queue(
    run: str | Path,
    out: str | Path,
    fmt: str | None = None,
    include_reviewed: bool = False,
    figure_types: tuple[str, ...] | None = None,
    limit: int | None = None,
) -> int:
    """Write the candidates still waiting for a verdict (all with ``include_reviewed``) as a review queue."""
    verdicts = current_verdicts(run)
    todo = (
        c
        for c in load_candidates(run)
        if (not figure_types or c["figure_type"] in figure_types) and (include_reviewed or (c["id"], int(c["revision"])) not in verdicts)
    )
    return write_queue(out, todo, QUEUE_COLUMNS, fmt, limit)


def store_verdicts(run: str | Path, rows: list[tuple[str, int, dict[str, Any]]], report: VerdictsImportReport) -> VerdictsImportReport:
    """Validate (origin, line, row) verdict rows against the run's current pairs and store the good ones."""
    pairs = _current_pairs(run)
    stored = current_verdicts(run)
    seen: dict[str, int] = {}
    new: dict[tuple[str, int], dict[str, Any]] = {}
    for where, line, row in rows:
        checked = verdict_of(where, line, row, pairs, seen, report, "this run")
        if checked is None:
            continue
        pid, pair, verdict = checked
        revision = pair["revision"]
        if collapse_spaces(row.get("revision")) not in ("", str(revision)):
            report.errors.append(
                f"{where}: {pid} was reviewed at revision {row.get('revision')}, but it was resampled since "
                f"(now revision {revision}): export the queue again"
            )
            continue
        if pair["status"] != "candidate":
            report.errors.append(f"{where}: {pid} is not a candidate now ({pair['status']}: {pair['reason']})")
            continue
        edits = edits_of(where, row, pair, verdict, EDITABLE, _creator_label, "Entailment or Contradiction", report)
        if edits is None:
            continue
        key = (pid, revision)
        if key in stored and stored[key]["verdict"] != verdict:
            report.notes.append(changed_verdict_note(where, pid, stored[key], verdict))
        new[key] = {
            "id": pid,
            "revision": revision,
            "figure_type": pair["figure_type"],
            "verdict": verdict,
            "edits": edits,
            "note": collapse_spaces(row.get("note")),
            "from": where,
        }
        report.verdicts[verdict] += 1
    return save_verdicts(run, stored, new, report)


def _creator_label(value: str) -> str | None:
    label = normalise_label(value)  # FLUTE's label normaliser: the loader accepts what review accepts
    return label.capitalize() if label else None  # the creator's pairs spell labels "Entailment" / "Contradiction"


def queue_items(run: str | Path) -> list[dict[str, Any]]:
    """The candidates in their current revision, each with its stored verdict under ``review`` (None while unreviewed):
    what a reviewer works through, in the order `export_queue` writes them."""
    verdicts = current_verdicts(run)
    return [{**c, "review": verdicts.get((c["id"], int(c["revision"])))} for c in load_candidates(run)]


def review_rates(run: str | Path) -> dict[str, dict[str, int]]:
    """Per figure type (and ``all``): candidates, reviewed, accept, edit, reject, unreviewed (current revisions)."""
    verdicts = current_verdicts(run)
    found = [(c["figure_type"], (verdicts.get((c["id"], int(c["revision"]))) or {}).get("verdict")) for c in load_candidates(run)]
    return {t: r for t, r in tally(found, FIGURE_TYPES).items() if t in FIGURE_TYPES or t == "all"}


# --- a reviewed queue file on its own (no run folder): the figures a document quotes from it ---------------------------


def _source_files(items: Any) -> list[Path]:
    """The files input items were read from (their ``source`` is ``file:line``), sorted."""
    return sorted({Path(str(it.source).rsplit(":", 1)[0]) for it in items if ":" in str(it.source or "")})


def _pair_parts(pid: str) -> tuple[str, str, str] | None:
    """(figure type, input uid, side) of a creator pair id ("idiom-0008-C" -> ("idiom", "idiom-0008", "C")), else None."""
    uid, _, side = pid.rpartition("-")
    figure = uid.split("-", 1)[0]
    return (figure, uid, side) if uid and side in ("E", "C") and figure in FIGURE_TYPES else None


def verdict_file_results(
    path: str | Path,
    inputs: Any = None,
    command: str | None = None,
    data_dir: str | Path | None = None,
    input_files: list[Path] | None = None,
    *,
    ctx: RunContext | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(result, records) of a reviewed queue file read on its own, without its run folder: per figure type the
    candidates (rows), accept / edit / reject counts and shares of the reviewed ones, the edited fields (by side, E/C),
    and how the candidates spread over the inputs. ``inputs`` (an :class:`~figlang.builders.flute_inputs.InputSet`,
    the run's inputs drawn again as ``generate`` drew them) adds the input count, the pairs possible and the inputs
    without a candidate, and names each record's expression; an id that is not one of those inputs is a problem
    (``input_files``: the files they were drawn from, checksummed relative to the run context's data folder, else
    ``data_dir``; default the files of the drawn inputs themselves).
    A queue exported with ``--all`` holds every candidate of the run, so its rows are the run's candidates.

    Rows are checked as far as the file alone allows (an id of the form ``<figure>-NNNN-E|C``, not repeated, a verdict
    word, an ``edit`` with an edited field); the checks against the run's pairs are ``import``'s. The records: one per
    row (id, revision, figure type, input, side, expression, verdict, edited fields, note)."""

    rows, problems = read_table(path)
    known = {it.uid: it for it in inputs.items} if inputs is not None else None
    records = _verdict_file_records(rows, Path(path).name, known, problems)
    rates = tally(((r["figure_type"], r["verdict"]) for r in records), FIGURE_TYPES)
    shares = {
        t: {k: (100 * r[k] / r["reviewed"] if r["reviewed"] else None) for k in ("accept", "edit", "reject")} for t, r in rates.items()
    }
    edits = {t: _edited_fields([r for r in records if t == "all" or r["figure_type"] == t]) for t in rates}
    spread = {t: _candidate_spread(t, [r for r in records if t == "all" or r["figure_type"] == t], inputs) for t in rates}
    verdicts_file = Path(path)
    result: dict[str, Any] = {
        "format": "figlang.flute.verdict_file/1",
        "what": "accept / edit / reject counts of a reviewed FLUTE creator queue, read on its own (docs/research/flute_creator.md)",
        "command": command,
        "verdicts_file": {
            "path": portable_path(verdicts_file),
            "sha256": file_sha256(verdicts_file),
            "bytes": verdicts_file.stat().st_size,
            "rows": len(rows),
        },
        "rates": {t: {k: r[k] for k in RATE_KEYS} for t, r in rates.items()},
        "shares_of_reviewed": shares,
        "edited_fields": edits,
        "candidates": spread,
        "problems": problems,
        "items_file": "predictions.jsonl.gz: one record per row (id, revision, figure type, input, side, expression, verdict, edited fields, note)",
        "code": code_provenance(),
    }
    if inputs is not None:
        result["inputs"] = _inputs_identity(inputs, input_files, ctx.data_dir if ctx is not None else data_dir)
    return result, records


def _row_problem(
    row: dict[str, Any], pid: str, parts: Any, verdict: str | None, edited: list[str], seen: dict[str, int], known: dict | None
) -> str | None:
    """Why a reviewed queue row read on its own is not counted, or None."""
    if parts is None:
        return "not a creator pair id (<figure>-NNNN-E or -C)"
    if pid in seen:
        return f"duplicate id (first at line {seen[pid]})"
    if known is not None and parts[1] not in known:
        return f"not one of the {len(known)} inputs"
    if collapse_spaces(row.get("verdict")) and verdict is None:
        return f"verdict {row.get('verdict')!r} is not accept, edit or reject"
    if verdict == "edit" and not edited:
        return "an edit without an edited field"
    return None


def _verdict_file_records(
    rows: list[tuple[int, dict[str, Any]]], name: str, known: dict[str, Any] | None, problems: list[str]
) -> list[dict[str, Any]]:
    """One record per good row (id, revision, figure type, input, side, verdict, edited fields, note; the expression
    where the inputs are known); a bad row goes to ``problems`` as file:line."""
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        pid = collapse_spaces(row.get("id"))
        parts = _pair_parts(pid)
        verdict = VERDICTS.get(collapse_spaces(row.get("verdict")).lower()) if collapse_spaces(row.get("verdict")) else None
        edited = [f for f in EDITABLE if collapse_spaces(row.get(f"edited_{f}"))]
        why = _row_problem(row, pid, parts, verdict, edited, seen, known)
        if why:
            problems.append(f"{name}:{line}: {pid or '(no id)'}: {why}")
            continue
        seen[pid] = line
        figure, uid, side = parts  # type: ignore[misc]
        rec = {
            "id": pid,
            "revision": int(collapse_spaces(row.get("revision")) or 0),
            "figure_type": figure,
            "input": uid,
            "side": side,
            "verdict": verdict,
            "edited": edited,
            "note": collapse_spaces(row.get("note")),
        }
        if known is not None:
            fields = known[uid].fields
            rec["expression"] = next((fields[k] for k in ("idiom", "simile", "metaphor") if fields.get(k)), None)
        records.append(rec)
    return records


def _edited_fields(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How often each editable field was edited, in all and by side (E, C)."""
    return {
        f: {
            "all": sum(f in r["edited"] for r in records),
            **{s: sum(f in r["edited"] and r["side"] == s for r in records) for s in ("E", "C")},
        }
        for f in EDITABLE
    }


def _candidate_spread(figure_type: str, records: list[dict[str, Any]], inputs: Any) -> dict[str, int]:
    """How the candidates of one figure type ("all": every type) spread over the inputs."""
    sides = Counter(r["input"] for r in records)
    d = {
        "candidates": len(records),
        "entailment": sum(r["side"] == "E" for r in records),
        "contradiction": sum(r["side"] == "C" for r in records),
        "inputs_with_a_candidate": len(sides),
        "inputs_with_both": sum(n == 2 for n in sides.values()),
        "inputs_with_one": sum(n == 1 for n in sides.values()),
    }
    if inputs is not None:
        n_inputs = sum(1 for it in inputs.items if figure_type == "all" or it.figure_type == figure_type)
        d.update({"inputs": n_inputs, "pairs_possible": 2 * n_inputs, "inputs_without_a_candidate": n_inputs - len(sides)})
    return d


def _inputs_identity(inputs: Any, input_files: list[Path] | None, data_dir: str | Path | None) -> dict[str, Any]:
    """The drawn inputs' source, count, digest of their uids and fields, and the checksums of their files."""
    files = sorted(input_files) if input_files is not None else _source_files(inputs.items)
    digest = hashlib.sha256(
        "\n".join(json.dumps([it.uid, it.fields], sort_keys=True, ensure_ascii=False) for it in inputs.items).encode()
    ).hexdigest()
    return {
        "source": inputs.source,
        "items": len(inputs.items),
        "uids_fields_sha256": digest,
        "data": data_checksums([f for f in files if f.is_file()], data_dir),
    }


def drawn_inputs(
    idioms: str, data_dir: str | Path | None = None, limit: int | None = None, sample_seed: int = 0, *, ctx: RunContext | None = None
) -> tuple[InputSet, list[Path] | None]:
    """A creator run's idiom inputs drawn again as ``generate`` drew them (``idioms``: 'benchmark', 'pie' or a file, read
    from the run context's data folder or ``data_dir``), and the files they were read from (for the result file's
    checksums; None when the inputs name none)."""
    every = load_idioms(idioms, data_dir, ctx=ctx)
    files = _source_files(every.items) or None
    if files is None and Path(idioms).is_file():
        files = [Path(idioms)]
    return select(every, limit, sample_seed), files


# --- final files ------------------------------------------------------------------------------------

FLUTE_FIELDS = {
    "idiom": ("id", "hypothesis", "premise", "idiom", "label", "explanation"),
    "metaphor": ("id", "hypothesis", "label", "premise", "explanation"),
    "simile": ("id", "premise", "hypothesis", "label", "explanation"),
    "sarcasm": ("id", "premise", "hypothesis", "label", "explanation"),
}  # field order of FLUTE's own per-phenomenon files


def finalize(
    run: str | Path, out: str | Path | None = None, split: str = "train", name: str = "flute-created", include_unreviewed: bool = False
) -> dict[str, Any]:
    """Write the verified pairs (accepted + edited; unreviewed too with ``include_unreviewed``)."""
    run = Path(run)
    out_dir = Path(out) if out else run / "final"
    config = json.loads((run / "config.json").read_text(encoding="utf-8")) if (run / "config.json").exists() else {}
    by_type, combined, left_out = _verified_pairs(run, include_unreviewed)
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
    translation = [
        {
            "translation": {
                "en1": INSTRUCTION.format(premise=p["premise"], hypothesis=p["hypothesis"]),
                "en2": f"{'Entails' if p['label'] == 'Entailment' else 'Contradicts'}. {p['explanation']}",
            }
        }
        for p in combined
    ]
    write_jsonl(out_dir / f"FLUTEfinal{split}.json", translation)
    model = (config.get("fingerprint") or {}).get("config", {}).get("model", "?")
    spec_path = _write_task_spec(out_dir, name, split, model, include_unreviewed)
    result = {
        "out_dir": str(out_dir),
        "written": written,
        "files": files,
        "combined": str(out_dir / "pairs.jsonl"),
        "translation": str(out_dir / f"FLUTEfinal{split}.json"),
        "spec": str(spec_path),
        "left_out": dict(left_out),
        "rates": review_rates(run),
        "generator": config.get("fingerprint", {}).get("config"),
    }
    write_json(out_dir / "report.json", result)
    return result


def _verified_pairs(run: Path, include_unreviewed: bool) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]], Counter]:
    """The pairs that go into the final files, with the reviewer's edits: (FLUTE's records by figure type, the combined
    records, how many were left out and why)."""
    verdicts = current_verdicts(run)
    by_type: dict[str, list[dict[str, Any]]] = {}
    combined: list[dict[str, Any]] = []
    left_out: Counter = Counter()
    for c in load_candidates(run):
        v = verdicts.get((c["id"], int(c["revision"])))
        kept = reviewed_fields(c, v, EDITABLE, include_unreviewed, left_out)
        if kept is None:
            continue
        review, pair = kept
        t = c["figure_type"]
        flute = {"id": c["index"], **pair}
        if t == "idiom":
            flute["idiom"] = c["expression"]
        by_type.setdefault(t, []).append({k: flute[k] for k in FLUTE_FIELDS[t]})
        combined.append(
            {
                "id": c["id"],
                "flute_id": c["index"],
                "figure_type": t,
                **pair,
                "expression": c.get("expression"),
                "review": review,
                "edited": sorted(v["edits"]) if v else [],
                "source": c.get("source"),
            }
        )
    for status in ("failed", "awaiting_edit", "pending"):
        n = sum(1 for p in _current_pairs(run).values() if p["status"] == status)
        if n:
            left_out[f"never a candidate: {status}"] = n
    return by_type, combined, left_out


def _write_task_spec(out_dir: Path, name: str, split: str, model: str, include_unreviewed: bool) -> Path:
    """task.yaml: a figlang task spec over pairs.jsonl."""
    spec = {
        "name": name,
        "description": f"FLUTE-style figurative NLI pairs made with `figlang build flute` (generator: {model}; "
        f"{'verified by people' if not include_unreviewed else 'includes UNREVIEWED candidates'})",
        "shape": "nli",
        "format": "jsonl",
        "splits": {split: "pairs.jsonl"},
        "columns": {
            "id": "id",
            "premise": "premise",
            "hypothesis": "hypothesis",
            "label": "label",
            "explanation": "explanation",
            "figure_type": "figure_type",
            "expression": "expression",
        },
        "labels": {"Entailment": "entailment", "Contradiction": "contradiction"},
        "meta": ["review", "flute_id"],
        "group_by": ["figure_type"],
    }
    spec_path = out_dir / "task.yaml"
    with atomic_write(spec_path) as fh:
        fh.write("# figlang task spec for the pairs made by `figlang build flute finalize` (check: figlang data stats --task task.yaml)\n")
        yaml.safe_dump(spec, fh, sort_keys=False, allow_unicode=True)
    return spec_path


def is_creator_run(folder: Path) -> bool:
    """Whether ``folder`` is a FLUTE creator run (items and candidates written)."""
    return (folder / ITEMS_FILE).is_file() and (folder / CANDIDATES_FILE).is_file()


#: The FLUTE creator's verification queue (the web review page and `figlang build flute import`).
REVIEW = BuilderReview(
    kind="flute",
    title="FLUTE creator run",
    labels=("Entailment", "Contradiction"),
    editable=EDITABLE,
    reject_reasons={},
    import_cmd="figlang build flute import",
    finalize_cmd="figlang build flute finalize",
    holds_queue=is_creator_run,
    queue_items=queue_items,
    review_rates=review_rates,
    store_verdicts=store_verdicts,
)
import_verdicts = REVIEW.import_verdicts
record_verdict = REVIEW.record_verdict
