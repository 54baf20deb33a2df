"""The figurative narrative benchmark (Chakrabarty, Choi, Shwartz, TACL 2022).

Files (as in github.com/tuhinjubcse/FigurativeNarrativeBenchmark):
``data/{idiom,simile}/{split}.jsonl`` and the same records with 12 inferences each in
``data/{idiom,simile}_inferences_{context,literal}/{split}.jsonl``.

Quirks handled here: test labels are the placeholder ``option1`` (flagged, never scored);
simile ``property`` is the boolean ``false`` in 27 records (read as unknown); the
inference files are line-aligned copies whose narrative we check before attaching.
"""

from __future__ import annotations

from pathlib import Path

from figlang.core.errors import DataError, LoadOptions
from figlang.core.io import iter_jsonl, require
from figlang.data.records import ClozeRecord, GenerationRecord

DATASET = "fig_narrative"
KINDS = ("idiom", "simile")
SPLITS = ("train", "dev", "test")
INFERENCE_KINDS = ("context", "literal")
PLACEHOLDER_SPLITS = frozenset({"test"})  # the authors hid the test labels
_ANSWERS = {"option1": 0, "option2": 1}


def narrative_file(data_dir: Path, kind: str, split: str) -> Path:
    return data_dir / DATASET / "data" / kind / f"{split}.jsonl"


def inference_file(data_dir: Path, kind: str, split: str, inference_kind: str) -> Path:
    return data_dir / DATASET / "data" / f"{kind}_inferences_{inference_kind}" / f"{split}.jsonl"


def narrative_files(kind: str, split: str, data_dir: Path, inferences: bool = True) -> list[Path]:
    files = [narrative_file(data_dir, kind, split)]
    if inferences:
        files += [inference_file(data_dir, kind, split, ik) for ik in INFERENCE_KINDS]
    return [f for f in files if f.exists()] or files[:1]


def _parse(kind: str, split: str, obj: dict, path: Path, line: int, index: int) -> ClozeRecord:
    narrative = require(obj, "narrative", path, line)
    options = (require(obj, "option1", path, line), require(obj, "option2", path, line))
    answer = require(obj, "correctanswer", path, line)
    if answer not in _ANSWERS:
        raise DataError(f"unknown label {answer!r} in 'correctanswer' (expected option1 or option2)", path, line)
    for name, text in (("narrative", narrative), ("option1", options[0]), ("option2", options[1])):
        if not text.strip():
            raise DataError(f"field {name!r} is empty", path, line)
    meta: dict = {"file": str(path), "line": line}
    if kind == "idiom":
        expression = require(obj, "idiom", path, line)
        meaning = require(obj, "meaning", path, line)
    else:
        expression = require(obj, "simile", path, line)
        prop = obj.get("property")
        if prop is False or prop is None:  # 27 published records carry the boolean false
            meaning = None
            meta["property_missing"] = True
        elif isinstance(prop, str):
            meaning = prop
        else:
            raise DataError(f"field 'property' should be a string, got {type(prop).__name__}", path, line)
    return ClozeRecord(
        id=f"{kind}-{split}-{index}",
        narrative=narrative,
        options=options,
        label=_ANSWERS[answer],
        expression=expression,
        expression_type=kind,
        meaning=meaning,
        label_is_placeholder=split in PLACEHOLDER_SPLITS,
        meta=meta,
    )


def load_cloze(kind: str, split: str, data_dir: Path, options: LoadOptions, inferences: bool = True) -> list[ClozeRecord]:
    """Load one split of the idiom or simile cloze task, with its inferences where the files exist."""
    path = narrative_file(data_dir, kind, split)
    records: list[ClozeRecord] = []
    lines: list[int] = []  # source line per record: the inference files have one line per narrative line
    for line, obj in iter_jsonl(path, options):
        try:
            records.append(_parse(kind, split, obj, path, line, line - 1))  # by line: a skipped line shifts no later id
            lines.append(line)
        except DataError as err:
            options.fail(err)
    if inferences:
        records = _attach_inferences(records, lines, kind, split, data_dir, options)
    return records


def _attach_inferences(
    records: list[ClozeRecord], lines: list[int], kind: str, split: str, data_dir: Path, options: LoadOptions
) -> list[ClozeRecord]:
    """Each record gets the inferences on the same line number of each inference file.

    Aligned by line, not by position: a malformed line skipped in lenient mode (in either file)
    then costs one record its inferences instead of shifting every later record's. A record whose
    inferences are missing or broken is kept without them, with a warning."""
    by_kind: dict[str, dict[int, dict]] = {}
    for ik in INFERENCE_KINDS:
        path = inference_file(data_dir, kind, split, ik)
        if not path.exists():
            if options.report is not None:
                options.report.warn(DataError(f"no {ik} inferences for {kind} {split}: file missing", path), skipped=False)
            continue
        by_kind[ik] = dict(iter_jsonl(path, options))
    out = []
    for record, line in zip(records, lines):
        inferences: dict[str, tuple[str, ...]] = {}
        for ik, rows in by_kind.items():
            path = inference_file(data_dir, kind, split, ik)
            obj = rows.get(line)
            if obj is None:
                options.degrade(DataError(f"no {ik} inferences for {kind}/{split}.jsonl line {line} ({record.id})", path, line))
                continue
            if obj.get("narrative") != record.narrative:
                options.degrade(
                    DataError(f"{ik} inferences are not aligned with {kind}/{split}.jsonl line {line} ({record.id})", path, line)
                )
                continue
            inf = obj.get("inferences")
            if not isinstance(inf, list) or not all(isinstance(s, str) for s in inf):
                options.degrade(DataError("field 'inferences' should be a list of strings", path, line))
                continue
            inferences[ik] = tuple(inf)
        out.append(_replace_inferences(record, inferences))
    return out


def _replace_inferences(record: ClozeRecord, inferences: dict[str, tuple[str, ...]]) -> ClozeRecord:
    from dataclasses import replace

    return replace(record, inferences=inferences)


def load_generation(kind: str, split: str, data_dir: Path, options: LoadOptions) -> list[GenerationRecord]:
    """The generative task: one item per distinct narrative, its plausible continuations as references.

    The paper's committed generations have one line per distinct narrative (299 for idiom dev),
    so several cloze records with the same narrative become one item with several references.
    """
    cloze = load_cloze(kind, split, data_dir, options)
    grouped: dict[str, list[ClozeRecord]] = {}
    for rec in cloze:
        grouped.setdefault(rec.narrative, []).append(rec)
    out = []
    for n, (narrative, recs) in enumerate(grouped.items()):
        first = recs[0]
        refs: list[str] = []
        if not first.label_is_placeholder:
            for r in recs:
                ref = r.reference
                if ref is not None and ref not in refs:
                    refs.append(ref)
        out.append(
            GenerationRecord(
                id=f"{kind}-gen-{split}-{n}",
                source=narrative,
                references=tuple(refs),
                expression=first.expression,
                expression_type=kind,
                meaning=first.meaning,
                inferences=first.inferences,
                meta={"cloze_ids": [r.id for r in recs], "references_hidden": first.label_is_placeholder},
            )
        )
    return out
