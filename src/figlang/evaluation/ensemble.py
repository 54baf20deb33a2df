"""A calibrated ensemble of scored runs (issue #22): methods and models answer the same items; each member's scores
become log-probabilities with a temperature fitted on the selection split, the members are mixed with convex
weights chosen on the selection split, and the mix answers the reported split once.

Only finished runs are read (their ``predictions.jsonl``), so any method of any backend can take part, and the
choice never sees the reported split: the selection runs choose, the report runs are only combined.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from figlang.methods.prompted.ensemble import _log_softmax, mix_vectors, score_vector
from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write
from figlang.methods.prompted import argmax_first
from figlang.evaluation.harness import score_predictions_file
from figlang.evaluation.results import ResultsDocument
from figlang.evaluation.provenance import portable_path
from figlang.evaluation.runs import Run, load_run

# the temperatures tried for each member: 0.01 .. 100, 20 a decade (a member's scores may be logits, log-probs or PMI)
TEMPERATURES: tuple[float, ...] = tuple(10 ** (k / 20) for k in range(-40, 41))
DEFAULT_STEP = 0.1  # the weight grid: every convex mix in steps of 0.1 (66 mixes for three members)


@dataclass
class Member:
    """One run's per-item score vectors and gold indices, in a fixed label order."""

    name: str
    run: Run
    vectors: dict[str, list[float] | None]  # None: the run's answer for the item is invalid (no information)
    gold: dict[str, int]


def _labels(run: Run) -> list[str] | None:
    """The label order of an NLI run's score dicts (None for cloze runs, whose scores are option lists)."""
    for row in run.rows:
        scores = row.get("scores")
        if isinstance(scores, dict):
            return sorted(scores)
    return None


def _member(path: str | Path, name: str | None = None) -> Member:
    run = load_run(path)
    labels = _labels(run)
    vectors: dict[str, list[float] | None] = {}
    gold: dict[str, int] = {}
    for row in run.rows:
        rid, scores, answer = row.get("id"), row.get("scores"), row.get("gold")
        if rid is None or answer is None:
            raise FiglangError(f"{run.path}: a prediction without id or gold answer; ensembles combine scored runs of figlang's harness")
        if labels is not None:
            if answer not in labels:
                raise FiglangError(f"{run.path}: item {rid}: gold {answer!r} is not one of the scored labels {labels}")
            gold[rid] = labels.index(answer)
        else:
            gold[rid] = int(answer)
        vectors[rid] = score_vector(scores, row.get("valid") is not False, labels, f"{run.path}: item {rid}")
    return Member(name or run.path.name, run, vectors, gold)


def fit_temperature(member: Member, ids: Sequence[str]) -> dict[str, Any]:
    """The temperature (from :data:`TEMPERATURES`) that minimises the member's mean negative log-likelihood of the
    gold answers on ``ids``; ties go to the one nearest 1."""
    rows = [(v, member.gold[i]) for i in ids if (v := member.vectors[i]) is not None]
    if not rows:
        raise FiglangError(f"{member.name}: no valid scored item to fit a temperature on")

    def nll(t: float) -> float:
        return -sum(_log_softmax(v, t)[g] for v, g in rows) / len(rows)

    best = min(TEMPERATURES, key=lambda t: (round(nll(t), 12), abs(math.log(t))))
    return {"temperature": best, "nll": nll(best), "nll_at_1": nll(1.0), "items": len(rows)}


def _simplex(members: int, step: float) -> list[tuple[float, ...]]:
    units = round(1 / step)
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise FiglangError(f"the weight step must divide 1 (0.1, 0.05, 0.25 ...), got {step}")
    return [tuple(c / units for c in combo) for combo in itertools.product(range(units + 1), repeat=members) if sum(combo) == units]


def _mix(members: Sequence[Member], temps: Sequence[float], weights: Sequence[float], rid: str, k: int) -> list[float]:
    return mix_vectors([m.vectors[rid] for m in members], temps, weights, k)


def _score(
    members: Sequence[Member], temps: Sequence[float], weights: Sequence[float], ids: Sequence[str], k: dict[str, int]
) -> tuple[float, float]:
    right, nll = 0, 0.0
    for rid in ids:
        mixed = _mix(members, temps, weights, rid, k[rid])
        gold = members[0].gold[rid]
        right += argmax_first(mixed)[0] == gold
        top = max(mixed)
        nll -= mixed[gold] - (top + math.log(sum(math.exp(v - top) for v in mixed)))
    return right / len(ids), nll / len(ids)


def _aligned(members: Sequence[Member], role: str) -> tuple[list[str], dict[str, int]]:
    """The items every member scored, in the first member's order, with their option counts; a clear error when the
    members disagree on the items, their gold answers or their option counts."""
    first = members[0]
    ids = [r["id"] for r in first.run.rows]
    for m in members[1:]:
        if set(m.gold) != set(first.gold):
            only_a, only_b = len(set(first.gold) - set(m.gold)), len(set(m.gold) - set(first.gold))
            raise FiglangError(
                f"{role} runs {first.name} and {m.name} score different items ({only_a} only in the first, "
                f"{only_b} only in the second); run every member on the same split, without --limit"
            )
        bad = [i for i in ids if m.gold[i] != first.gold[i]]
        if bad:
            raise FiglangError(f"{role} runs {first.name} and {m.name} disagree on the gold answer of {len(bad)} items (e.g. {bad[0]})")
    k: dict[str, int] = {}
    for rid in ids:
        sizes = {len(v) for m in members if (v := m.vectors[rid]) is not None}
        if len(sizes) > 1:
            raise FiglangError(f"{role}: item {rid} has {sorted(sizes)} scored options in different members")
        k[rid] = sizes.pop() if sizes else max(first.gold[rid] + 1, 2)
    return ids, k


def _split_of(members: Sequence[Member], role: str) -> tuple[str, str]:
    tasks = {str((m.run.results.get("task") or {}).get("name")) for m in members}
    splits = {str((m.run.results.get("task") or {}).get("split")) for m in members}
    if len(tasks) != 1 or len(splits) != 1:
        raise FiglangError(f"the {role} runs must share one task and split; they have tasks {sorted(tasks)} and splits {sorted(splits)}")
    return tasks.pop(), splits.pop()


def member_spec(run: Run) -> dict[str, Any]:
    """How to run a member again (``-m ensemble``): its method, model, ``-O`` options and method seed, as its
    selection run recorded them, and the label order of its score vectors (None: cloze options)."""
    method = run.results.get("method") or {}
    return {
        "method": method.get("name"),
        "model": method.get("model"),
        "options": dict(method.get("options") or {}),
        "seed": (run.results.get("seeds") or {}).get("method"),
        "labels": _labels(run),
    }


def choose_ensemble(selection: Sequence[str | Path], step: float = DEFAULT_STEP, names: Sequence[str] | None = None) -> dict[str, Any]:
    """Fit each member's temperature and choose the convex weights on the selection runs (one per member, same
    items): highest accuracy, then lowest log-loss, then the most even weights. Members at weight 1 alone are
    among the mixes tried, so the ensemble is never below its best member on the selection split."""
    if len(selection) < 2:
        raise FiglangError("an ensemble needs at least two member runs")
    members = [_member(p, names[i] if names else None) for i, p in enumerate(selection)]
    task, split = _split_of(members, "selection")
    ids, k = _aligned(members, "selection")
    fits = [fit_temperature(m, ids) for m in members]
    temps = [f["temperature"] for f in fits]
    table: list[dict[str, Any]] = []
    for weights in _simplex(len(members), step):
        acc, nll = _score(members, temps, weights, ids, k)
        evenness = -sum(w * math.log(w) for w in weights if w > 0)
        table.append({"weights": list(weights), "accuracy": acc, "nll": nll, "_key": (round(acc, 12), -round(nll, 12), evenness)})
    table.sort(key=lambda r: r["_key"], reverse=True)
    best = table[0]
    alone = [_score(members, temps, [1.0 if j == i else 0.0 for j in range(len(members))], ids, k)[0] for i in range(len(members))]
    return {
        "task": task,
        "chosen_on": split,
        "items": len(ids),
        "step": step,
        "members": [
            {
                "name": m.name,
                "selection_run": portable_path(m.run.path),
                **member_spec(m.run),
                **fit,
                "selection_accuracy": a,
            }
            for m, fit, a in zip(members, fits, alone)
        ],
        "weights": best["weights"],
        "selection_accuracy": best["accuracy"],
        "selection_nll": best["nll"],
        "rule": "answer argmax_j sum_m w_m log softmax(scores_m / T_m)_j; an invalid member answer counts as uniform",
        "top_mixes": [{k2: v for k2, v in r.items() if k2 != "_key"} for r in table[:10]],
    }


def apply_ensemble(chosen: dict[str, Any], report: Sequence[str | Path], out: str | Path) -> dict[str, Any]:
    """Combine the report runs (the members in the order they were chosen in) with the chosen temperatures and
    weights; writes ``out/predictions.jsonl`` (the first member's rows, with the mixed scores and answer), to be
    scored by the harness, and ``out/ensemble.json``, the record it returns (``chosen`` plus the report split)."""
    if len(report) != len(chosen["members"]):
        raise FiglangError(f"{len(chosen['members'])} members were chosen but {len(report)} report runs given; give them in the same order")
    members = [_member(p, c["name"]) for p, c in zip(report, chosen["members"])]
    task, split = _split_of(members, "report")
    if task != chosen["task"]:
        raise FiglangError(f"the report runs are {task}, the ensemble was chosen on {chosen['task']}")
    if split == chosen["chosen_on"]:
        raise FiglangError(f"the report runs are on {split!r}, the split the ensemble was chosen on; report another split")
    ids, k = _aligned(members, "report")
    temps, weights = [m["temperature"] for m in chosen["members"]], chosen["weights"]
    by_id = {r["id"]: r for r in members[0].run.rows}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    labels = _labels(members[0].run)
    with atomic_write(out / "predictions.jsonl") as fh:
        for rid in ids:
            mixed = _mix(members, temps, weights, rid, k[rid])
            answer = argmax_first(mixed)[0]
            row = {
                key: value for key, value in by_id[rid].items() if key not in ("scores", "prediction", "correct", "valid", "raw", "meta")
            }
            row["prediction"] = labels[answer] if labels else answer
            row["scores"] = dict(zip(labels, mixed)) if labels else mixed
            row["valid"] = True
            row["meta"] = {"ensemble": {m.name: (None if m.vectors[rid] is None else m.vectors[rid]) for m in members}}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    record = {**chosen, "report_split": split, "report_runs": [portable_path(m.run.path) for m in members]}
    with atomic_write(out / "ensemble.json") as fh:
        fh.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return record


def write_choice(chosen: dict[str, Any], out: str | Path) -> Path:
    """``out/ensemble.json``: the members (how to run each), temperatures and weights chosen on the selection runs,
    which ``figlang eval -m ensemble --model out/ensemble.json`` runs on any split in one pass."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "ensemble.json") as fh:
        fh.write(json.dumps(chosen, indent=2, ensure_ascii=False) + "\n")
    return out / "ensemble.json"


def ensemble_runs(
    selection: Sequence[str | Path],
    report: Sequence[str | Path],
    out: str | Path,
    data_dir: str | Path | None = None,
    step: float = DEFAULT_STEP,
    names: Sequence[str] | None = None,
    seed: int | None = None,
    *,
    ctx: RunContext | None = None,
) -> dict[str, Any]:
    """Choose the ensemble on the selection runs, combine the report runs, and score the combination with the
    harness (accuracy with its bootstrap CI, breakdowns) into ``out/results.json``, which also records the
    ensemble (members, temperatures, weights, the split they were chosen on). Returns that results dict.

    The gold labels come from the run context's data folder (or ``data_dir``); the bootstrap's seed is ``seed``, else
    the context's (0 without one)."""
    ctx = run_context(ctx, data_dir=data_dir, seed=seed)
    chosen = choose_ensemble(selection, step=step, names=names)
    record = apply_ensemble(chosen, report, out)
    score_predictions_file(Path(out) / "predictions.jsonl", chosen["task"], record["report_split"], out_dir=out, ctx=ctx)
    results_file = Path(out) / "results.json"
    results = ResultsDocument.read(results_file)
    results.extra["ensemble"] = record
    results.provenance["selection_split"] = {"weights": chosen["chosen_on"], "temperatures": chosen["chosen_on"]}
    results.write(results_file)
    return results.to_dict()


__all__ = [
    "DEFAULT_STEP",
    "TEMPERATURES",
    "apply_ensemble",
    "choose_ensemble",
    "ensemble_runs",
    "fit_temperature",
    "member_spec",
    "mix_vectors",
    "score_vector",
    "write_choice",
]
