"""Score the explanations in a FLUTE run's predictions.jsonl: every explaining set-up with the same measures.

``score_explanations(run)`` reads the rows `figlang eval -t flute` wrote (any method that explains:
``explain`` in pipeline or joint mode, ``nli-generate``, a trained ``iro`` model) and reports

* label accuracy (= the paper's Acc@0), overall and by figure type, invalid answers counted wrong;
* ROUGE-L F1, sentence and corpus BLEU, and BERTScore F1 with the encoder given (default: the
  offline ``minilm`` at layer 6, pinned and recorded; **not comparable** to the paper's
  deberta-large-mnli), per pair and aggregated (``figlang.metrics.explanations``);
* the paper's Acc@50/60 (BERTScore deberta-large-mnli + BLEURT-20, ``figlang.metrics.flute``)
  when both load here, else ``computed: false`` with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.io import decode_utf8, parse_jsonl, read_bytes
from figlang.metrics.bertscore import BertScore
from figlang.metrics.bleurt import Bleurt
from figlang.metrics.explanations import ExplanationRow, explanation_quality
from figlang.metrics.flute import evaluate_flute
from figlang.backends import catalog
from figlang.backends.loading import hub_cached_snapshot, hub_reachable, resolve
from figlang.evaluation.runs import predictions_file
from figlang.evaluation.texts import NLI_TEXTS, policy, rejoin_folder

PAPER_BERTSCORE = "microsoft/deberta-large-mnli"
PAPER_BLEURT = "lucadiliello/BLEURT-20"
DEFAULT_BERTSCORE = "minilm"
DEFAULT_BERTSCORE_LAYER = 6  # all-MiniLM-L6-v2's last layer, as in docs/research/trained_models.md


def read_prediction_rows(path: str | Path, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The rows of a predictions.jsonl (a folder means its predictions.jsonl); clear errors for bad files. Rows
    published without their dataset texts get them back from the data folder where it has them
    (:func:`figlang.evaluation.texts.rejoin_folder`)."""
    p = Path(path)
    if p.is_dir():
        p = predictions_file(p) or p / "predictions.jsonl"
    if not p.is_file():
        raise FiglangError(f"no predictions file at {p}: pass a `figlang eval -o DIR` folder or its predictions.jsonl(.gz)")
    data = read_bytes(p)
    text = decode_utf8(data, p)
    rows = []
    for n, row, problem in parse_jsonl(text):
        if row is None:
            raise FiglangError(f"{p}:{n}: {problem}")
        if not isinstance(row, dict) or "id" not in row:
            raise FiglangError(f"{p}:{n}: a prediction row must be a JSON object with an 'id'")
        rows.append(row)
    return rejoin_folder(p.parent, rows, data_dir)[0]


def _resolve_bertscore_model(name: str) -> str:
    """A catalog name (``minilm``, ``mpnet``) → its local directory; anything else as given."""
    entry = catalog.find(name)
    if entry is None:
        return name

    return resolve(name).path


def paper_metrics_available() -> tuple[bool, str | None]:
    """Whether deberta-large-mnli and BLEURT-20 can be loaded here without waiting on an unreachable hub."""
    missing = [m for m in (PAPER_BERTSCORE, PAPER_BLEURT) if hub_cached_snapshot(m) is None]
    if not missing:
        return True, None
    if hub_reachable():
        return True, None
    return False, (
        f"not computed: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the local Hugging Face cache "
        "and the hub is unreachable (the paper's Acc@50/60 needs BERTScore deberta-large-mnli and BLEURT-20)"
    )


def score_explanations(
    run: str | Path,
    *,
    bertscore_model: str | None = DEFAULT_BERTSCORE,
    bertscore_layers: int | None = DEFAULT_BERTSCORE_LAYER,
    paper: bool = True,
    ids: set[str] | None = None,
    data_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Explanation measures for one run (see the module docstring); ``ids`` restricts to those rows; ``data_dir``:
    where the gold explanations of a run published without them re-join from (default: the default data folder)."""
    rows = [r for r in read_prediction_rows(run, data_dir) if ids is None or r["id"] in ids]
    rows = [r for r in rows if not r.get("missing")]
    if not rows:
        raise FiglangError(f"{run}: no predictions to score")
    if any(r.get("gold_explanation") in (None, "") for r in rows):
        raise FiglangError(
            f"{run}: rows without a gold explanation (explanations are scored on FLUTE train/val/test gold only; a run "
            "published without its texts needs the data folder to re-join them: docs/data_licences.md)"
        )
    items = [
        ExplanationRow(
            r["id"],
            r.get("figure_type"),
            r["gold_explanation"],
            r.get("explanation") if r.get("valid", True) else None,
            bool(r.get("correct")) if "correct" in r else None,
        )
        for r in rows
    ]
    bert = None
    if bertscore_model:
        bert = BertScore(_resolve_bertscore_model(bertscore_model), bertscore_layers)
    quality = explanation_quality(items, bert)
    if bert is not None:
        quality["config"]["bertscore"]["model_reference"] = bertscore_model
    out: dict[str, Any] = {
        "n": len(rows),
        "invalid": sum(1 for r in rows if not r.get("valid", True)),
        "label": {"accuracy_is": "the paper's Acc@0 (invalid answers count wrong)"},
        **quality,
    }
    if not paper:
        out["paper_acc"] = {"computed": False, "reason": "not requested"}
        return out
    ok, reason = paper_metrics_available()
    if not ok:
        out["paper_acc"] = {"computed": False, "reason": reason}
        return out
    try:
        gold = [
            {"id": r["id"], "label": r.get("gold"), "explanation": r["gold_explanation"], "figure_type": r.get("figure_type")} for r in rows
        ]
        preds = [
            {"id": r["id"], "label": r.get("prediction") if r.get("valid", True) else None, "explanation": r.get("explanation")}
            for r in rows
        ]
        report = evaluate_flute(gold, preds, bertscore=BertScore(PAPER_BERTSCORE), bleurt=Bleurt(PAPER_BLEURT), allow_partial=True)
        out["paper_acc"] = {"computed": True, **report.to_dict()}
    except Exception as err:  # a weight file that does not load: say so, never a fake number
        out["paper_acc"] = {
            "computed": False,
            "reason": f"not computed: the paper's metric models did not load ({type(err).__name__}: {err})",
        }
    return out


def side_by_side(run: str | Path, per_type: int = 10, seed: int = 0, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """``per_type`` pairs of each figure type drawn with ``seed`` (sorted by id first): premise, hypothesis, gold and
    predicted label and explanation, for reading the explanations beside FLUTE's."""
    import random

    rows = [r for r in read_prediction_rows(run, data_dir) if not r.get("missing")]
    out = []
    for figure in sorted({r.get("figure_type") or "unknown" for r in rows}):
        group = sorted((r for r in rows if (r.get("figure_type") or "unknown") == figure), key=lambda r: r["id"])
        for r in random.Random(seed).sample(group, min(per_type, len(group))):
            out.append(
                {
                    "id": r["id"],
                    "figure_type": figure,
                    "premise": r.get("premise"),
                    "hypothesis": r.get("hypothesis"),
                    "gold": r.get("gold"),
                    "gold_explanation": r.get("gold_explanation"),
                    "prediction": r.get("prediction") if r.get("valid", True) else "invalid",
                    "explanation": r.get("explanation") if r.get("valid", True) else r.get("raw"),
                }
            )
    return out


def run_task(run: str | Path) -> tuple[str | None, str | None]:
    """(task, split) of a run folder or predictions file, from the results.json beside it; (None, None) without one."""
    folder = Path(run) if Path(run).is_dir() else Path(run).parent
    try:
        task = json.loads((folder / "results.json").read_text(encoding="utf-8")).get("task") or {}
    except (OSError, ValueError):
        return None, None
    return task.get("name"), task.get("split")


def texts_note(task: str | None, split: str | None) -> str | None:
    """Why a side-by-side table of ``task`` gives ids instead of the items' texts, and how to see them with the data
    folder; None when the task's texts may be redistributed (#35: FLUTE states no licence)."""
    rule = policy(task)
    if rule is None or not set(NLI_TEXTS) & set(rule.fields):
        return None
    show = f"figlang data show {task}{f' -s {split}' if split else ''} --id ID --data-dir DATA"
    return (
        f"The items' premises, hypotheses and gold explanations are not reproduced here: {rule.reason}. Each row names "
        f"its item's id; with the data folder, `{show}` prints the item (premise, hypothesis, label, explanation)."
    )


def side_by_side_markdown(examples: list[dict[str, Any]], task: str | None = None, split: str | None = None) -> str:
    """The examples as one Markdown table per figure type: the items' texts beside figlang's answer, or, where the
    task's licence keeps its texts out of a published copy (:func:`texts_note`), the items' ids in their place."""

    def cell(text: Any) -> str:
        return str(text or "").replace("|", "\\|").replace("\n", " ")

    note = texts_note(task, split)
    lines = [note, ""] if note else []
    for figure in dict.fromkeys(e["figure_type"] for e in examples):
        head = (
            "| id | gold | figlang | figlang's explanation |"
            if note
            else ("| premise | hypothesis | gold | FLUTE's explanation | figlang | figlang's explanation |")
        )
        lines += [f"#### {figure}", "", head, "|---" * head.count(" | ") + "|---|"]
        for e in (x for x in examples if x["figure_type"] == figure):
            texts = f"{cell(e['id'])}" if note else f"{cell(e['premise'])} | {cell(e['hypothesis'])}"
            gold = "" if note else f" | {cell(e['gold_explanation'])}"
            lines.append(f"| {texts} | {cell(e['gold'])}{gold} | {cell(e['prediction'])} | {cell(e['explanation'])} |")
        lines.append("")
    return "\n".join(lines)


__all__ = [
    "paper_metrics_available",
    "read_prediction_rows",
    "score_explanations",
    "side_by_side",
    "run_task",
    "side_by_side_markdown",
    "texts_note",
]
