"""Dataset texts that no verified licence lets figlang redistribute: dropped from published prediction rows, re-joined
by id from the data folder when a run is read (#35; docs/data_licences.md).

A run's predictions.jsonl carries each item's texts (premise, hypothesis, gold explanation) beside its answer. FLUTE
and PIE-English state no licence, and IMPLI's ``*_pie_*`` files take their premises from PIE-English, so the copies
committed under docs/results keep only what figlang made or what is not text: ``id``, ``gold``, ``prediction``,
``scores``, ``explanation`` (the model's own), ``valid``, ``correct``, per-item metric values, figure and pair type and
the (short) expression. :func:`strip_rows` drops the texts and returns what it did, which the publisher records in
results.json under :data:`STRIP_KEY`; :func:`rejoin_texts` puts them back from the task's loader when the data folder
holds the files the run read (their sha256 are results.json's ``data``), and otherwise leaves the rows as they are with
a note saying why: rows without texts are a normal state of a published run, not an error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.io import file_sha256
from figlang.core.paths import resolve_data_dir
from figlang.core.text import common_affix
from figlang.data.records import Record
from figlang.data.registry import get_task
from figlang.evaluation.predictions import record_fields

STRIP_KEY = "texts_stripped"  # results.json's record of the texts a published copy left out
NLI_TEXTS = ("premise", "hypothesis", "gold_explanation")
GENERATOR_TEXTS = ("premise", "generated", "gold")  # an IMPLI generator row: its sentence, the rewrite, the gold rewrites


@dataclass(frozen=True)
class Policy:
    """Which rows of a task lose which fields, and why."""

    dataset: str
    fields: tuple[str, ...]
    reason: str
    applies: Callable[[dict[str, Any]], bool]


FLUTE_REASON = (
    "FLUTE (Chakrabarty et al., EMNLP 2022) states no licence (no LICENSE file, none in its README), so its texts "
    "are not redistributed; they re-join by id from the data folder (docs/data_licences.md)"
)
PIE_REASON = (
    "PIE-English (Adewumi et al., LREC 2022) states no licence, so its sentences are not redistributed; "
    "they re-join by id from the data folder (docs/data_licences.md)"
)
IMPLI_PIE_REASON = (
    "IMPLI's pairs are Apache 2.0, but the premises of its *_pie_* files (and the hypotheses made from them) come from "
    "PIE-English, which states no licence; those rows' texts re-join by id from the data folder (docs/data_licences.md)"
)

USE_REASON = (
    "PIE-English (most of these uses' sentences, the rest IMPLI premises read from PIE, MAGPIE and SemEval) states no "
    "licence, so its sentences are not redistributed; they re-join by id from the task that `python "
    "benchmarks/train_use_model.py --export --mask-idiom --data-dir ../shared/data --out runs/use-task-masked` writes "
    "(docs/data_licences.md)"
)


def _from_pie(row: dict[str, Any]) -> bool:
    """An IMPLI row whose premise comes from PIE-English: its id (``idioms/fig_context_pie_e-12``) or its origins
    (``impli/idioms/lit_context_pie_ne.tsv:40``) name one of the ``*_pie_*`` files (``adversarial_definition_ne_pie``
    among them)."""
    names = [str(row.get("id", "")), *(str(o) for o in row.get("origins") or ())]
    stems = [re.sub(r"-\d+$", "", Path(n.split(":")[0]).name).removesuffix(".tsv") for n in names]
    return any("pie" in stem.split("_") for stem in stems)


def policy(task: str | None) -> Policy | None:
    """The stripping policy of a task (None: its texts may be redistributed). ``pie-english`` names figlang
    interpret's PIE-English evaluation rows and ``impli-generator`` the IMPLI generator's rows, which no task names."""
    name = (task or "").lower()
    if name == "flute" or name.startswith("flute-"):
        return Policy("FLUTE", (*NLI_TEXTS, "text", "input"), FLUTE_REASON, lambda row: True)
    if name == "impli" or (name.startswith("impli-") and name != "impli-generator"):
        return Policy("IMPLI (PIE-English premises)", NLI_TEXTS, IMPLI_PIE_REASON, _from_pie)
    if name == "impli-generator":
        return Policy("IMPLI (PIE-English premises)", GENERATOR_TEXTS, IMPLI_PIE_REASON, _from_pie)
    if name == "pie-english":
        return Policy("PIE-English", ("text",), PIE_REASON, lambda row: True)
    if name == "idiom-use":  # the use model's task (benchmarks/train_use_model.py --export)
        return Policy("PIE-English", ("premise", "hypothesis"), USE_REASON, lambda row: True)
    return None


def _edit(base: str, text: str) -> list[Any]:
    """``text`` as [characters kept from ``base``'s start, characters kept from its end, what stands between]."""
    start, end = common_affix(base, text)
    return [start, end, text[start : len(text) - end]]


def apply_edit(base: str, edit: list[Any]) -> str:
    """The text an :func:`_edit` of ``base`` stands for."""
    start, end, middle = edit
    return base[:start] + middle + base[len(base) - end :]


def strip_texts(row: dict[str, Any], task: str | None) -> dict[str, Any]:
    """``row`` without the texts of a dataset whose licence does not let them be redistributed (a new dict), or
    ``row`` itself where the task's texts may be redistributed or the row is not one of those the policy names.

    Kept: every other field (id, gold, prediction, scores, explanation, valid, correct, per-item metrics). An IMPLI
    generator row keeps its rewrites as edits of its sentence (``generated_edit``, ``gold_edits``), which give the
    rewrites back once the sentence is re-joined, without quoting it."""
    rule = policy(task)
    if rule is None or not rule.applies(row) or not any(f in row for f in rule.fields):
        return row
    out = {k: v for k, v in row.items() if k not in rule.fields}
    premise = row.get("premise")
    if rule.fields == GENERATOR_TEXTS and isinstance(premise, str):
        if isinstance(row.get("generated"), str):
            out["generated_edit"] = _edit(premise, row["generated"])
        if isinstance(row.get("gold"), list):
            out["gold_edits"] = [_edit(premise, g) for g in row["gold"]]
    return out


def strip_rows(rows: Iterable[dict[str, Any]], task: str | None, split: str | None = None) -> tuple[list[dict[str, Any]], dict | None]:
    """(the rows stripped by :func:`strip_texts`, the record results.json keeps under :data:`STRIP_KEY`, or None when
    no row lost a field)."""
    rows = list(rows)
    out = [strip_texts(r, task) for r in rows]
    dropped = sorted({k for before, after in zip(rows, out) if after is not before for k in before if k not in after})
    rule = policy(task)
    if rule is None or not dropped:
        return out, None
    record = {
        "dataset": rule.dataset,
        "fields": dropped,
        "rows": sum(after is not before for before, after in zip(rows, out)),
        "of": len(rows),
        "reason": rule.reason,
        "task": {"name": task, "split": split},
        "rejoin": "by id from the task's loader (figlang.evaluation.texts.rejoin_texts), when the data folder holds "
        "the files whose sha256 results.json's data records",
    }
    return out, record


_SHA: dict[tuple[str, int, int], str] = {}


def _sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA:
        _SHA[key] = file_sha256(path)
    return _SHA[key]


def data_problem(data: dict[str, Any] | None, data_dir: Path) -> str | None:
    """Why the data folder cannot give a run's texts back: a file the run read missing from it, or different (its
    sha256 is not the one results.json records); None when all match or nothing was recorded to check."""
    for f in (data or {}).get("files") or []:
        rel, sha = f.get("path"), f.get("sha256")
        if not rel or not sha or os.path.isabs(rel) or str(rel).startswith("~"):
            continue
        path = data_dir / rel
        if not path.is_file():
            return f"{rel} is not in the data folder {data_dir}"
        if _sha256(path) != sha:
            return f"{rel} in {data_dir} is not the file the run read (sha256 {_sha256(path)[:12]}…, the run's {sha[:12]}…)"
    return None


@lru_cache(maxsize=8)
def _records(task: str, split: str, data_dir: str) -> dict[str, Record]:
    t = get_task(task)
    split = split if split in t.splits else t.default_split  # a fold of IMPLI ("test-fold-0"): its ids are in "all"
    return {r.id: r for r in t.load(split, data_dir=data_dir)}


def _rejoined(row: dict[str, Any], record: Record | None, fields: set[str]) -> dict[str, Any]:
    """``row`` with the stripped ``fields`` back from its gold record, in the order the harness writes them."""
    if record is None or not any(f not in row for f in fields):
        return row
    out: dict[str, Any] = {"id": row["id"]}
    for k, v in record_fields(record).items():
        if k in row:
            out[k] = row[k]
        elif k in fields:
            out[k] = v
    return {**out, **row}


def rejoin_texts(
    rows: list[dict[str, Any]], results: dict[str, Any], data_dir: str | Path | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """(``rows`` with their stripped texts back, a note): the note is None when nothing was stripped or every text
    came back, else says what is missing and why (no data folder, a data file that differs, rows of unknown ids)."""
    record = results.get(STRIP_KEY)
    if not record:
        return rows, None
    task = (record.get("task") or {}).get("name") or (results.get("task") or {}).get("name")
    split = (record.get("task") or {}).get("split") or (results.get("task") or {}).get("split")
    fields = set(record.get("fields") or ())
    plain = "rows carry ids, answers and scores only"
    if not task or get_task_or_none(task) is None or not fields & set(record_fields_names()):
        return rows, f"texts ({', '.join(sorted(fields))}) were left out when published and cannot be re-joined here; {plain}"
    folder = resolve_data_dir(data_dir)
    problem = data_problem(results.get("data") or record.get("data"), folder)
    if problem is not None:
        return rows, f"texts ({', '.join(sorted(fields))}) not re-joined: {problem}; {plain}"
    try:
        by_id = _records(task, str(split), str(folder))
    except (FiglangError, OSError) as err:
        return rows, f"texts ({', '.join(sorted(fields))}) not re-joined: the {task} data does not load from {folder} ({err}); {plain}"
    out = [_rejoined(r, by_id.get(str(r.get("id"))), fields) for r in rows]
    unknown = sum(str(r.get("id")) not in by_id for r in rows)
    return out, (f"{unknown} rows' ids are not in the {task} data of {folder}: their texts stay out" if unknown else None)


def stripped_record(folder: str | Path) -> dict[str, Any] | None:
    """The result file of a folder that records texts left out (results.json, else a summary beside the predictions
    that the strip script marked, as explanations.json), parsed; None when none does."""
    for name in ("results.json", "explanations.json"):
        path = Path(folder) / name
        if path.is_file():
            try:
                obj = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get(STRIP_KEY):
                return obj
    return None


def rejoin_folder(
    folder: str | Path, rows: list[dict[str, Any]], data_dir: str | Path | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """:func:`rejoin_texts` for the predictions of ``folder``, whichever of its files records the texts left out."""
    results = stripped_record(folder)
    return rejoin_texts(rows, results, data_dir) if results is not None else (rows, None)


def record_fields_names() -> tuple[str, ...]:
    """Every text field a gold record gives a prediction row (what :func:`rejoin_texts` can put back)."""
    return ("premise", "hypothesis", "gold_explanation", "narrative", "options", "source", "references", "meaning")


def get_task_or_none(name: str) -> Any:
    try:
        return get_task(name)
    except FiglangError:
        return None


__all__ = [
    "STRIP_KEY",
    "Policy",
    "apply_edit",
    "data_problem",
    "policy",
    "rejoin_folder",
    "rejoin_texts",
    "strip_rows",
    "strip_texts",
    "stripped_record",
]
