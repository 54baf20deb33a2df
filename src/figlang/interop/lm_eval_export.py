"""`figlang export lm-eval`: one split of a figlang task as an lm-evaluation-harness 0.4.x task.

The folder holds ``<name>.yaml`` and ``<name>.jsonl`` (one doc per record), which lm-eval reads
unchanged through its ``json`` dataset builder::

    lm_eval --include_path DIR --tasks figlang_idiom_cloze_dev --model hf --model_args pretrained=...

Cloze tasks become ``multiple_choice`` tasks whose context is the narrative without its ``<b>``
markup (:func:`figlang.methods.prompted.cloze.narrative_text`, what every figlang cloze method reads),
whose choices are the options and whose target delimiter is a space: ``lm-score -O input=lm-eval``
then asks the model exactly what lm-eval asks it (see ``docs/how-to/lm_eval.md``). NLI tasks (FLUTE,
IMPLI, user NLI specs) become ``multiple_choice`` over the label words of figlang's ``nli-score``
prompt without a chat template ("Entails" / "Contradicts"; IMPLI "Entails" / "Does not entail"):
``nli-score -O input=lm-eval`` asks the model exactly what lm-eval asks it.
Every doc keeps figlang's ``id``, and the rows stay matchable by content
(:mod:`figlang.evaluation.lm_eval_samples`).

lm-eval resolves ``data_files`` against its working directory, so the YAML names the data file by
its absolute path: export again after moving the folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write, file_sha256, write_jsonl
from figlang.data.records import ClozeRecord, NLIPair, Record
from figlang.data.registry import Task, get_task
from figlang.methods.prompted import prompts as P
from figlang.methods.prompted.cloze import narrative_text
from figlang.methods.prompted.lm_eval_input import LM_EVAL_DELIMITER
from figlang.methods.prompted.nli import lm_eval_query

EXPORT_VERSION = 1
SPLIT_NAME = "test"  # the one split lm-eval evaluates (its test_split)


@dataclass
class LmEvalExport:
    """What an export wrote: lm-eval's task name, the YAML and data file, and how many docs."""

    name: str
    yaml_path: Path
    data_path: Path
    docs: int
    placeholder_labels: int


def lm_eval_task_name(task: str, split: str) -> str:
    """``figlang_<task>_<split>`` with every run of characters lm-eval task names avoid as ``_``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", f"figlang_{task}_{split}").strip("_").lower()


def cloze_doc(record: ClozeRecord) -> dict[str, Any]:
    """An lm-eval doc for a cloze record: ``context`` is doc_to_text, ``options`` doc_to_choice, ``label`` doc_to_target."""
    return {
        "id": record.id,
        "context": narrative_text(record),
        "options": list(record.options),
        "label": record.label,
        "expression": record.expression or "",
        "label_is_placeholder": record.label_is_placeholder,
    }


def nli_words(labels: Sequence[str]) -> list[str]:
    """The answer words of the labels, as figlang's ``nli-score`` scores them without a chat template."""
    words = P.NLI_LABEL_WORDS[P.nli_family(tuple(labels))]
    missing = [lab for lab in labels if lab not in words]
    if missing:
        raise FiglangError(f"no answer word for the NLI label(s) {', '.join(missing)}; labels must be among {', '.join(words)}")
    return [words[lab] for lab in labels]


def nli_doc(record: NLIPair, labels: Sequence[str]) -> dict[str, Any]:
    """An lm-eval doc for an NLI pair: ``query`` (nli-score's plain prompt) is doc_to_text, ``choices`` the label
    words, ``labels`` figlang's label for each choice, ``label`` the gold's index."""
    if record.label is None or record.label not in labels:
        raise FiglangError(f"{record.id}: gold label {record.label!r} is not one of the task's labels {', '.join(labels)}")
    return {
        "id": record.id,
        "premise": record.premise,
        "hypothesis": record.hypothesis,
        "query": lm_eval_query(record.premise, record.hypothesis, labels),
        "choices": nli_words(labels),
        "labels": list(labels),
        "label": list(labels).index(record.label),
        "figure_type": record.figure_type or "",
        "pair_type": record.pair_type or "",
        "label_is_placeholder": record.label_is_placeholder,
    }


def _check_shape(task: Task) -> None:
    if task.shape not in ("cloze", "nli"):
        raise FiglangError(
            f"task {task.name!r} is a {task.shape} task; `figlang export lm-eval` writes cloze and NLI tasks (multiple_choice) only"
        )


def _docs(task: Task, records: Sequence[Record]) -> list[dict[str, Any]]:
    _check_shape(task)
    unlabeled = [r.id for r in records if getattr(r, "label", None) is None]
    if unlabeled:
        raise FiglangError(
            f"{len(unlabeled)} record(s) of {task.name!r} have no gold label (e.g. {unlabeled[0]}): lm-eval's "
            "multiple_choice tasks need a target; export a labelled split"
        )
    if task.shape == "cloze":
        return [cloze_doc(r) for r in records]  # type: ignore[arg-type]
    labels = tuple(task.labels) or tuple(sorted({str(r.label) for r in records}))  # type: ignore[union-attr]
    return [nli_doc(r, labels) for r in records]  # type: ignore[arg-type]


def task_yaml(name: str, shape: str, data_path: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The lm-eval task configuration (a plain dict, dumped as YAML)."""
    text, choice = ("context", "options") if shape == "cloze" else ("query", "choices")
    metrics = [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("acc", "acc_norm")]
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {SPLIT_NAME: str(data_path)}},
        "test_split": SPLIT_NAME,
        "output_type": "multiple_choice",
        "doc_to_text": text,  # a field name: lm-eval reads the doc's field as it is, no template
        "doc_to_choice": choice,
        "doc_to_target": "label",
        "target_delimiter": LM_EVAL_DELIMITER,
        "metric_list": metrics,
        "metadata": {"version": float(EXPORT_VERSION), "figlang": meta},
    }


def export_lm_eval(
    task: str | Task,
    out_dir: str | Path,
    split: str | None = None,
    data_dir: str | Path | None = None,
    limit: int | None = None,
    *,
    ctx: RunContext | None = None,
) -> LmEvalExport:
    """Write ``<name>.yaml`` and ``<name>.jsonl`` under ``out_dir`` for one split of ``task`` (read from the run
    context's data folder, or from ``data_dir``)."""
    t = get_task(task) if isinstance(task, str) else task
    split = t.check_split(split)
    _check_shape(t)
    records = t.load(split, run_context(ctx, data_dir=data_dir))
    if limit is not None:
        records = records[:limit]
    if not records:
        raise FiglangError(f"{t.name}/{split} has no records to export")
    docs = _docs(t, records)
    name = lm_eval_task_name(t.name, split)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data_path = out / f"{name}.jsonl"
    write_jsonl(data_path, docs)
    meta = {
        "task": t.name,
        "split": split,
        "shape": t.shape,
        "items": len(docs),
        "limit": limit,
        "data_sha256": file_sha256(data_path),
        "export_version": EXPORT_VERSION,
        "figlang_method": "lm-score -O input=lm-eval" if t.shape == "cloze" else "nli-score -O input=lm-eval",
    }
    yaml_path = out / f"{name}.yaml"
    with atomic_write(yaml_path) as f:
        f.write(
            f"# Written by `figlang export lm-eval` from {t.name}/{split}; run with\n"
            f"#   lm_eval --include_path {out} --tasks {name} --model hf --model_args pretrained=MODEL\n"
        )
        yaml.safe_dump(task_yaml(name, t.shape, data_path, meta), f, sort_keys=False, allow_unicode=True)
    placeholders = sum(1 for d in docs if d["label_is_placeholder"])
    return LmEvalExport(name, yaml_path, data_path, len(docs), placeholders)
