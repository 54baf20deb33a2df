"""Prediction files in, aligned predictions out, with a report of everything wrong with them.

Formats read (detected from the first line):

* ``figlang``: our own predictions JSONL (``id`` + ``prediction`` [+ ``explanation``]).
* ``narrative-discriminative``: the narrative paper's committed outputs (the gold record's
  fields plus ``prediction``: the 0-based option index), matched by narrative and options.
* ``narrative-generative``: ``{"input" (or "narrative"): narrative, "predictions": [...]}``, matched by narrative.
* ``flute-submission``: ``id, predicted_label, model_explanation`` (optionally ``codalab_id``,
  ``premise``, ``hypothesis``), matched by (premise, hypothesis) (whitespace-normalised), by our
  id when the row names one of ours whose pair it also carries (or carries no pair), else by
  codalab id; never by FLUTE's own ``id`` alone, which the released files share between the entailing
  and the contradicting pair of one premise family. A row whose pair is in no gold item is still
  matched when its ``id`` (the gold id) and hypothesis pick gold pairs of which exactly one has a
  premise within a small edit (at most :data:`NEAR_PREMISE_EDITS` characters) of the row's: the
  released files predate corrections of the gold ("nothing but a silver" where the gold now says
  "sliver", simile 10). Each such match is reported as a note (``near_matches``), never silently. A (premise, hypothesis) pair can occur more
  than once in the gold (FLUTE val: val-139 and val-365), so rows matched by content take that
  pair's ids in row order, skipping ids that another row names explicitly. The FLUTE repository
  releases its model predictions as one JSON **array** per figure type
  (``modelpredictions/{sarcasm,simile,metaphor,idiom}.json``); arrays are read like JSON lines, and
  several files (or a folder of them) score together as one submission.

* ``lm-eval`` / ``lm-eval-acc_norm``: lm-evaluation-harness's ``--log_samples`` rows, the answer
  its ``acc`` / ``acc_norm`` picks, matched by content (:mod:`figlang.evaluation.lm_eval_samples`).

Items are always matched by identity, never by position, so an empty or dropped row
cannot shift every later prediction (the FLUTE shared-task script had that bug).
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from figlang.core.errors import DataError, FiglangError
from figlang.data.flute import normalise_label
from figlang.core.io import atomic_write, iter_json_objects
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair, Record, strip_markup
from figlang.evaluation import lm_eval_samples
from figlang.methods.base import Prediction

NEAR_PREMISE_EDITS = 3  # the most character edits between a released row's premise and the gold's it is matched to

FORMATS = ("figlang", "narrative-discriminative", "narrative-generative", "flute-submission", *lm_eval_samples.FORMATS)


@dataclass
class PredictionProblems:
    """What is wrong with a set of predictions relative to the gold items."""

    missing: list[str] = field(default_factory=list)  # gold ids without a prediction
    duplicates: list[str] = field(default_factory=list)  # ids predicted more than once
    unknown: list[str] = field(default_factory=list)  # predictions matching no gold item (location strings)
    invalid: list[str] = field(default_factory=list)  # ids whose prediction is outside the label set / unparseable
    empty_explanations: list[str] = field(default_factory=list)  # ids with an empty or absent explanation
    empty_generations: list[str] = field(default_factory=list)  # generation ids whose samples are all empty (scored 0)
    # notes, not problems: rows matched to a gold pair whose premise differs by a small edit (location, id, what changed)
    near_matches: list[str] = field(default_factory=list)

    @property
    def blocking(self) -> bool:
        """Problems that make a plain score misleading (empty explanations/generations just score 0)."""
        return bool(self.missing or self.duplicates or self.unknown or self.invalid)

    def to_dict(self) -> dict[str, Any]:
        return {k: {"count": len(v), "examples": v[:10]} for k, v in self.__dict__.items()}

    def summary(self) -> str:
        parts = []
        names = {
            "missing": "gold items have no prediction",
            "duplicates": "ids are predicted more than once",
            "unknown": "predictions match no gold item",
            "invalid": "predictions are outside the label set or unparseable",
            "empty_explanations": "explanations are empty",
            "empty_generations": "items have only empty generations (scored 0)",
        }
        for key, text in names.items():
            values = getattr(self, key)
            if values:
                parts.append(f"{len(values)} {text} (e.g. {', '.join(map(str, values[:3]))})")
        return "; ".join(parts) or "no problems"

    def notes(self) -> list[str]:
        """What a reader should know although nothing is wrong: each near match, one line each."""
        return [f"matched by a small premise edit: {m}" for m in self.near_matches]


def detect_format(path: Path) -> str:
    for _line, obj in iter_json_objects(path):
        if lm_eval_samples.is_sample(obj):
            return "lm-eval"
        if "predicted_label" in obj:
            return "flute-submission"
        if "predictions" in obj and ("input" in obj or ("narrative" in obj and "option1" not in obj)):
            return "narrative-generative"
        if "prediction" in obj and "option1" in obj and "narrative" in obj:
            return "narrative-discriminative"
        if "id" in obj and "prediction" in obj:
            return "figlang"
        raise DataError(
            f"cannot tell the prediction format from fields {sorted(obj)}; expected one of {', '.join(FORMATS)}",
            path,
            _line,
        )
    raise DataError("no predictions in file", path)


def _norm(text: str) -> str:
    return " ".join(strip_markup(text).split()).lower()


def _cloze_key(narrative: str, options: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return (_norm(narrative), *(_norm(o) for o in options))


PredictionPaths = str | Path | Sequence[str | Path]


def prediction_files(paths: PredictionPaths) -> list[Path]:
    """The files a submission names: one file, several, or a folder (its *.json and *.jsonl files, sorted)."""
    given = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not given:
        raise FiglangError("no prediction file given")
    out: list[Path] = []
    for p in given:
        if p.is_dir():
            inside = sorted(q for q in p.iterdir() if q.is_file() and q.suffix.lower() in (".json", ".jsonl"))
            if not inside:
                raise DataError("the folder holds no .json or .jsonl prediction file", p)
            out.extend(inside)
        elif p.is_file():
            out.append(p)
        else:
            raise DataError("prediction file not found", p)
    repeated = [str(p) for p, n in Counter(q.resolve() for q in out).items() if n > 1]
    if repeated:
        raise FiglangError(f"prediction file given twice: {repeated[0]} (its rows would count as duplicates)")
    return out


def read_predictions(
    path: PredictionPaths, records: list[Record], labels: tuple[str, ...] = (), fmt: str | None = None
) -> tuple[dict[str, Prediction], PredictionProblems, str]:
    """Align prediction files with gold records; returns (predictions by id, problems, format).

    Several files (or a folder) are one submission: the FLUTE repository's four per-figure-type
    files score as the whole test set. All files must be of one format."""
    files = prediction_files(path)
    formats = {p: fmt or detect_format(p) for p in files}
    if len(set(formats.values())) > 1:
        listed = ", ".join(f"{p.name}: {f}" for p, f in formats.items())
        raise FiglangError(f"the prediction files are of different formats ({listed}); score them separately")
    fmt = formats[files[0]]
    if fmt not in FORMATS:
        raise FiglangError(f"unknown prediction format {fmt!r}; known: {', '.join(FORMATS)}")
    problems = PredictionProblems()
    by_id: dict[str, Prediction] = {}
    seen: Counter[str] = Counter()
    lines = [(p, line, obj) for p in files for line, obj in iter_json_objects(p)]
    near: dict[int, str] = {}  # id(row) → what differs, for rows matched by a small premise edit
    matcher = _matcher(fmt, records, [obj for _p, _line, obj in lines], near)
    by_record = {r.id: r for r in records}
    for p, line, obj in lines:
        try:
            rid = matcher(obj)
        except DataError as err:
            raise DataError(err.message, p, line, err.hint) from None
        if rid is None:
            problems.unknown.append(f"{p.name}:{line}")
            continue
        if id(obj) in near:
            problems.near_matches.append(f"{p.name}:{line} → {rid} ({near[id(obj)]})")
        seen[rid] += 1
        if seen[rid] > 1:
            if seen[rid] == 2:
                problems.duplicates.append(rid)
            continue
        by_id[rid] = _to_prediction(fmt, rid, obj, labels, by_record.get(rid))
    for r in records:
        if r.id not in by_id:
            problems.missing.append(r.id)
    for rid, pred in by_id.items():
        if not pred.valid:
            problems.invalid.append(rid)
        if isinstance(pred.prediction, str) and pred.explanation is not None and not pred.explanation.strip():
            problems.empty_explanations.append(rid)
        if isinstance(pred.prediction, list) and not any(str(x).strip() for x in pred.prediction):
            problems.empty_generations.append(rid)
    return by_id, problems, fmt


def edits_within(a: str, b: str, limit: int) -> int | None:
    """The Levenshtein distance between ``a`` and ``b`` when it is at most ``limit``, else None (banded, so cheap)."""
    if abs(len(a) - len(b)) > limit:
        return None
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [limit + 1] * len(b)
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != b[j - 1]))
        if min(current) > limit:
            return None
        previous = current
    return previous[-1] if previous[-1] <= limit else None


def _changed_words(row: str, gold: str) -> str:
    """The words that differ, as ``'silver' → 'sliver'`` (several changes joined by commas)."""
    a, b = row.split(), gold.split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            out.append(f"{' '.join(a[i1:i2])!r} → {' '.join(b[j1:j2])!r}")
    return ", ".join(out)


def _matcher(fmt: str, records: list[Record], rows: list[dict], near: dict[int, str] | None = None):
    """The row → gold id function for a format; ``rows`` (the whole file) lets FLUTE content matching
    leave alone the ids that other rows claim by name; ``near`` receives, by ``id(row)``, what differs
    for each row matched by a small premise edit."""
    ids = {r.id for r in records}
    if fmt in lm_eval_samples.FORMATS:
        return lm_eval_samples.matcher(records, rows)
    if fmt == "figlang":
        return lambda obj: str(obj["id"]) if str(obj.get("id")) in ids else None
    if fmt == "narrative-discriminative":
        index = {_cloze_key(r.narrative, r.options): r.id for r in records if isinstance(r, ClozeRecord)}
        return lambda obj: index.get(_cloze_key(obj["narrative"], [obj["option1"], obj["option2"]]))
    if fmt == "narrative-generative":
        by_source = {_norm(r.source): r.id for r in records if isinstance(r, GenerationRecord)}
        return lambda obj: by_source.get(_norm(obj["input"] if "input" in obj else obj["narrative"]))
    return _flute_matcher(records, rows, near)


def _flute_indexes(records: list[Record]) -> tuple[dict, dict, dict, dict]:
    """FLUTE gold pairs by (premise, hypothesis), each pair's key by id, ids by CodaLab id, and pair ids by
    (gold id, hypothesis) for near matches; texts compared normalised."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    pair_of: dict[str, tuple[str, str]] = {}
    for r in records:
        if isinstance(r, NLIPair):
            pair_of[r.id] = (_norm(r.premise), _norm(r.hypothesis))
            by_pair.setdefault(pair_of[r.id], []).append(r.id)
    by_codalab = {str(r.meta.get("codalab_id")): r.id for r in records if r.meta.get("codalab_id") is not None}
    by_gold_id: dict[tuple[str, str], list[str]] = {}
    for r in records:
        if isinstance(r, NLIPair) and r.meta.get("gold_id") is not None:
            by_gold_id.setdefault((str(r.meta["gold_id"]), pair_of[r.id][1]), []).append(r.id)
    return by_pair, pair_of, by_codalab, by_gold_id


def _flute_matcher(records: list[Record], rows: list[dict], near: dict[int, str] | None):
    """A FLUTE submission's row → gold id function: a named id, else the premise and hypothesis, else a small
    premise edit (one gold pair only), else the CodaLab id."""
    ids = {r.id for r in records}
    by_pair, pair_of, by_codalab, by_gold_id = _flute_indexes(records)

    def row_pair(obj: dict) -> tuple[str, str] | None:
        if "premise" not in obj or "hypothesis" not in obj:
            return None
        if not isinstance(obj["premise"], str) or not isinstance(obj["hypothesis"], str):
            raise DataError("premise and hypothesis must be strings")
        return _norm(obj["premise"]), _norm(obj["hypothesis"])

    def named_id(obj: dict) -> str | None:
        """Our id, when the row names one and does not contradict it with another pair."""
        rid = str(obj.get("id"))
        if rid not in ids:
            return None
        try:
            pair = row_pair(obj)
        except DataError:
            return None  # match() says what is wrong with the row, at its line
        return rid if pair is None or pair_of.get(rid) == pair else None

    named = {rid for obj in rows if (rid := named_id(obj)) is not None}
    handed_out: set[str] = set()
    row_pairs = set()
    for obj in rows:
        try:
            row_pairs.add(row_pair(obj))
        except DataError:
            pass  # match() says what is wrong with the row, at its line

    def near_match(obj: dict, pair: tuple[str, str]) -> str | None:
        """The one gold pair with this row's gold id and hypothesis whose premise is a small edit from the row's,
        that no row names or carries exactly; None when there is no such pair or more than one."""
        close = []
        for rid in by_gold_id.get((str(obj.get("id")), pair[1]), []):
            if rid in named or pair_of[rid] in row_pairs:
                continue
            distance = edits_within(pair[0], pair_of[rid][0], NEAR_PREMISE_EDITS)
            if distance is not None:
                close.append((rid, distance))
        if len(close) != 1:
            return None
        rid, distance = close[0]
        if near is not None:
            near[id(obj)] = f"{_changed_words(pair[0], pair_of[rid][0])}, {distance} character edit{'s' * (distance != 1)}"
        return rid

    def match(obj: dict) -> str | None:
        rid = named_id(obj)
        if rid is not None:
            return rid
        pair = row_pair(obj)
        if pair is not None:
            candidates = by_pair.get(pair)
            if not candidates:
                return near_match(obj, pair)
            free = [i for i in candidates if i not in handed_out and i not in named]
            rid = free[0] if free else candidates[0]  # none left: a surplus row, reported as a duplicate
            handed_out.add(rid)
            return rid
        if obj.get("codalab_id") is not None:
            return by_codalab.get(str(obj["codalab_id"]))
        raise DataError(
            "a FLUTE submission row needs premise+hypothesis, a figlang id or a codalab_id to be matched safely; "
            "bare FLUTE ids repeat across figure types and within a premise family",
            hint="keep the premise and hypothesis fields the FLUTE repository's prediction files have",
        )

    return match


def _to_prediction(fmt: str, rid: str, obj: dict, labels: tuple[str, ...], record: Record | None = None) -> Prediction:
    if fmt in lm_eval_samples.FORMATS:
        return lm_eval_samples.to_prediction(rid, obj, record, lm_eval_samples.FORMATS[fmt], labels)
    if fmt == "narrative-discriminative":
        value = obj["prediction"]
        ok = isinstance(value, int) and value in (0, 1)
        return Prediction(rid, value if ok else None, valid=ok, error=None if ok else f"bad option index {value!r}")
    if fmt == "narrative-generative":
        preds = obj["predictions"]
        preds = [preds] if isinstance(preds, str) else list(preds or [])
        return Prediction(rid, [str(p) for p in preds])  # empty samples are real outputs: scored 0 and reported
    if fmt == "flute-submission":
        raw = str(obj.get("predicted_label") or "")
        label = normalise_label(raw)
        ok = label is not None and (not labels or label in labels)
        return Prediction(
            rid,
            label if ok else None,
            explanation=str(obj.get("model_explanation") or ""),
            raw=raw,
            valid=ok,
            error=None if ok else f"label {raw!r} is not one of {', '.join(labels) or 'the label set'}",
        )
    p = Prediction.from_dict({**obj, "id": rid})
    error = _figlang_error(p.prediction, record, labels)
    if error is not None and p.valid:
        p.valid, p.error = False, error
    return p


def _figlang_error(value: Any, record: Record | None, labels: tuple[str, ...]) -> str | None:
    """Why a figlang-format prediction cannot be an answer to ``record`` (None: it can).

    A null or out-of-range answer is scored wrong either way; flagging it makes ``n_invalid``
    and the problems list say so instead of passing it off as an ordinary mistake.
    """
    if value is None:
        return "no prediction (null)"
    if isinstance(record, ClozeRecord):
        n = len(record.options)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            return f"bad option index {value!r} (expected 0 to {n - 1})"
    elif isinstance(record, NLIPair):
        if not isinstance(value, str):
            return f"label {value!r} is not a string"
        if labels and value not in labels:
            return f"label {value!r} is not one of {', '.join(labels)}"
    elif isinstance(record, GenerationRecord):
        if not isinstance(value, (str, list)):
            return f"generation {value!r} is neither a string nor a list of strings"
    elif labels and isinstance(value, str) and value not in labels:
        return f"label {value!r} is not one of {', '.join(labels)}"
    return None


def record_fields(r: Record) -> dict[str, Any]:
    """The gold record's fields a prediction row carries after its id, in row order (texts, gold, groups); also what
    :mod:`figlang.evaluation.texts` re-joins into rows published without their texts."""
    if isinstance(r, ClozeRecord):
        return {"narrative": r.narrative, "options": list(r.options), "gold": r.label, "expression": r.expression}
    if isinstance(r, NLIPair):
        return {
            "premise": r.premise,
            "hypothesis": r.hypothesis,
            "gold": r.label,
            "gold_explanation": r.explanation,
            "figure_type": r.figure_type,
            "pair_type": r.pair_type,
            "expression": r.expression,
        }
    return {"source": r.source, "references": list(r.references), "expression": r.expression, "meaning": r.meaning}


def prediction_rows(
    records: list[Record],
    predictions: dict[str, Prediction],
    correct: dict[str, bool | None],
    per_item: dict[str, dict[str, Any]] | None = None,
) -> list[dict]:
    """One JSON-able row per item: inputs, gold, prediction, scores, correctness, per-item metric values."""
    rows = []
    for r in records:
        p = predictions.get(r.id)
        row: dict[str, Any] = {"id": r.id, **record_fields(r)}
        if p is None:
            row.update(prediction=None, missing=True)
        else:
            row.update({k: v for k, v in p.to_dict().items() if k != "id" and v not in (None, {}, [])})
            row["prediction"] = p.prediction
            row["valid"] = p.valid
        if correct.get(r.id) is not None:
            row["correct"] = correct[r.id]
        for name, values in (per_item or {}).items():
            if r.id in values:
                row[name] = values[r.id]
        rows.append(row)
    return rows


def write_predictions(path: Path, rows: list[dict]) -> None:
    with atomic_write(path) as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
