"""FLUTE scoring: label accuracy and explanation-aware accuracy at thresholds 0/50/60.

Per item, the explanation score combines BERTScore F1 and BLEURT of the predicted against
the gold explanation. An item counts at threshold ``t`` when its label is correct and its
explanation score passes ``t``. Reported overall and per figure type (sarcasm, simile,
metaphor, idiom), over *all* gold items.

Two semantics:

* ``"shared_task"`` (default; the FigLang 2022 shared-task script): score =
  ``int(50 × (BERTScore F1 + BLEURT))`` (truncated toward zero), counted when ``score ≥ t``.
* ``"paper"`` (FLUTE, EMNLP 2022): score = the mean of the two on a 0-100 scale,
  ``100 × (F1 + BLEURT) / 2``, unrounded, counted when ``score > t``.

Threshold 0 is label accuracy under both: the paper's Acc@0 equals NLI accuracy, and taken
literally "score > 0" would drop correct items whose explanation is empty or whose BLEURT is
negative. (The shared-task script tested ``score >= 0``, which differs from label accuracy only
for items with 50 × (F1 + BLEURT) ≤ -1; figlang follows the documented definition.)

Empty or missing explanations score 0 (so they count at threshold 0 only). Scoring is by id,
never by position: the shared-task script collected scores for non-empty predictions only and
then indexed them by row, so every row after an empty prediction got another row's score;
that bug is not reproduced.

Problems (missing ids, duplicate ids, unknown ids, labels outside the label set, missing
similarity values) make :func:`flute_scores` raise :class:`FluteScoringError` listing them all,
unless ``allow_partial=True``: then a missing, duplicated or badly labelled item is scored as
wrong (it stays in the denominator, so skipping hard items cannot raise a score) and unknown
ids are ignored. Empty explanations are reported but are not an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast

from figlang.core.errors import FiglangError
from figlang.data.flute import normalise_label
from figlang.data.records import CONTRADICTION, ENTAILMENT
from figlang.metrics.bertscore import BertScore
from figlang.metrics.bleurt import Bleurt

__all__ = [
    "FLUTE_LABELS",
    "FLUTE_THRESHOLDS",
    "ExplanationSimilarity",
    "FluteGroupScore",
    "FluteItemScore",
    "FluteProblems",
    "FluteReport",
    "FluteScoringError",
    "FluteSemantics",
    "evaluate_flute",
    "explanation_score",
    "explanation_similarity",
    "flute_scores",
    "flute_scores_from_records",
    "normalize_flute_label",
]

FluteSemantics = Literal["shared_task", "paper"]
FLUTE_THRESHOLDS: tuple[int, ...] = (0, 50, 60)
FLUTE_LABELS: tuple[str, ...] = (ENTAILMENT, CONTRADICTION)


def normalize_flute_label(label: object) -> str | None:
    """``"Entailment"``/``"entails"``/``"entailment."`` (any case) → ``"entailment"``, same for contradiction; else None.

    Delegates to the data layer's normaliser so the scorer accepts exactly the labels the
    loader and the prediction-file reader accept.
    """
    return normalise_label(label)


@dataclass(frozen=True)
class ExplanationSimilarity:
    """Precomputed similarity of one predicted explanation to the gold one."""

    bertscore_f1: float
    bleurt: float


def explanation_score(similarity: ExplanationSimilarity, semantics: FluteSemantics = "shared_task") -> float:
    """The 0-100 explanation score of one item under the chosen semantics (see the module docstring)."""
    raw = 50.0 * (float(similarity.bertscore_f1) + float(similarity.bleurt))
    if semantics == "shared_task":
        return float(int(raw))
    if semantics == "paper":
        return raw
    raise ValueError(f"semantics must be 'shared_task' or 'paper', got {semantics!r}")


def _passes(correct: bool, score: float | None, threshold: float, semantics: FluteSemantics) -> bool:
    if not correct:
        return False
    if threshold == 0:
        return True
    value = 0.0 if score is None else score
    return value >= threshold if semantics == "shared_task" else value > threshold


@dataclass(frozen=True)
class FluteProblems:
    """Everything that kept items from being scored normally, by id."""

    missing_ids: tuple[str, ...] = ()  # gold ids with no prediction
    duplicate_ids: tuple[str, ...] = ()  # ids predicted more than once
    unknown_ids: tuple[str, ...] = ()  # predicted ids that are not in the gold set
    bad_labels: tuple[tuple[str, str], ...] = ()  # (id, label as given) outside the label set
    missing_similarity: tuple[str, ...] = ()  # label-correct, non-empty explanation, but no similarity given
    empty_explanations: tuple[str, ...] = ()  # scored 0; reported, not an error

    @property
    def blocking(self) -> bool:
        return bool(self.missing_ids or self.duplicate_ids or self.unknown_ids or self.bad_labels or self.missing_similarity)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: list(v) for k, v in asdict(self).items()}
        d["bad_labels"] = [{"id": i, "label": lab} for i, lab in self.bad_labels]
        return d

    def summary(self) -> str:
        def ids(values: Sequence[str]) -> str:
            shown = ", ".join(values[:10])
            return shown + (f", … ({len(values)} in all)" if len(values) > 10 else "")

        parts = []
        if self.missing_ids:
            parts.append(f"{len(self.missing_ids)} gold id(s) without a prediction: {ids(self.missing_ids)}")
        if self.duplicate_ids:
            parts.append(f"{len(self.duplicate_ids)} id(s) predicted more than once: {ids(self.duplicate_ids)}")
        if self.unknown_ids:
            parts.append(f"{len(self.unknown_ids)} predicted id(s) not in the gold set: {ids(self.unknown_ids)}")
        if self.bad_labels:
            shown = ", ".join(f"{i}={lab!r}" for i, lab in self.bad_labels[:10])
            parts.append(f"{len(self.bad_labels)} label(s) outside {list(FLUTE_LABELS)}: {shown}")
        if self.missing_similarity:
            parts.append(f"{len(self.missing_similarity)} item(s) without BERTScore/BLEURT values: {ids(self.missing_similarity)}")
        if self.empty_explanations:
            parts.append(f"{len(self.empty_explanations)} empty explanation(s), scored 0: {ids(self.empty_explanations)}")
        return "; ".join(parts) if parts else "no problems"


class FluteScoringError(FiglangError, ValueError):
    """Predictions cannot be scored as given; ``problems`` lists why (pass ``allow_partial=True`` to score anyway)."""

    def __init__(self, message: str, problems: FluteProblems | None = None):
        self.problems = problems
        super().__init__(message)


@dataclass(frozen=True)
class FluteItemScore:
    id: str
    figure_type: str
    gold_label: str
    predicted_label: str | None  # normalised; None when missing, duplicated or outside the label set
    label_correct: bool
    explanation_score: float | None  # None when no similarity was available (and the explanation was non-empty)
    status: str  # "ok" | "empty_explanation" | "missing" | "duplicate" | "bad_label" | "missing_similarity"


@dataclass(frozen=True)
class FluteGroupScore:
    n: int
    accuracy: dict[int, float]  # threshold -> fraction of the group's gold items counted
    n_counted: dict[int, int]
    mean_explanation_score: float | None  # over items with a score (empty explanations count as 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            **{f"acc@{t}": a for t, a in self.accuracy.items()},
            **{f"n@{t}": c for t, c in self.n_counted.items()},
            "mean_explanation_score": self.mean_explanation_score,
        }


@dataclass(frozen=True)
class FluteReport:
    overall: FluteGroupScore
    by_figure_type: dict[str, FluteGroupScore]
    items: tuple[FluteItemScore, ...]
    problems: FluteProblems
    semantics: str
    thresholds: tuple[int, ...]
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "by_figure_type": {k: v.to_dict() for k, v in self.by_figure_type.items()},
            "problems": self.problems.to_dict(),
            "semantics": self.semantics,
            "thresholds": list(self.thresholds),
            "config": self.config,
            "items": [asdict(i) for i in self.items],
        }

    def __str__(self) -> str:
        head = f"{'group':<12} {'n':>6} " + " ".join(f"{'acc@' + str(t):>8}" for t in self.thresholds)
        rows = [head]
        for name, g in [("overall", self.overall), *self.by_figure_type.items()]:
            rows.append(f"{name:<12} {g.n:>6} " + " ".join(f"{100 * g.accuracy[t]:>8.2f}" for t in self.thresholds))
        rows.append(f"semantics={self.semantics}; {self.problems.summary()}")
        return "\n".join(rows)


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@dataclass(frozen=True)
class _Gold:
    id: str
    label: str
    explanation: str
    figure_type: str


def _gold_items(gold: Sequence[Any]) -> list[_Gold]:
    items: list[_Gold] = []
    seen: set[str] = set()
    dupes: list[str] = []
    bad: list[str] = []
    for g in gold:
        gid = _text(_field(g, "id"))
        if _field(g, "label_is_placeholder"):
            raise FluteScoringError(f"gold item {gid} has a placeholder label; hidden test labels cannot be scored")
        label = normalize_flute_label(_field(g, "label"))
        if label is None:
            bad.append(f"{gid}={_field(g, 'label')!r}")
        if gid in seen:
            dupes.append(gid)
        seen.add(gid)
        figure = _field(g, "figure_type", "type")
        items.append(_Gold(gid, label or "", _text(_field(g, "explanation")), str(figure) if figure else "unknown"))
    if dupes or bad:
        raise FluteScoringError(
            "the gold set itself is malformed: "
            + "; ".join(([f"duplicate ids {dupes[:10]}"] if dupes else []) + ([f"labels outside the label set {bad[:10]}"] if bad else []))
        )
    return items


def _predictions_by_id(predictions: Sequence[Any]) -> dict[str, list[Any]]:
    by_id: dict[str, list[Any]] = {}
    for p in predictions:
        by_id.setdefault(_text(_field(p, "id")), []).append(p)
    return by_id


def _pred_label(p: Any) -> Any:
    return _field(p, "label", "predicted_label")


def _pred_explanation(p: Any) -> str:
    return _text(_field(p, "explanation", "model_explanation"))


def _as_similarity(value: ExplanationSimilarity | Sequence[float] | Mapping[str, float]) -> ExplanationSimilarity:
    if isinstance(value, ExplanationSimilarity):
        return value
    if isinstance(value, Mapping):
        return ExplanationSimilarity(float(value["bertscore_f1"]), float(value["bleurt"]))
    f1, bleurt = value
    return ExplanationSimilarity(float(f1), float(bleurt))


def _group_score(items: Sequence[FluteItemScore], thresholds: Sequence[int], semantics: FluteSemantics) -> FluteGroupScore:
    n = len(items)
    counted = {t: sum(_passes(i.label_correct, i.explanation_score, t, semantics) for i in items) for t in thresholds}
    scores = [i.explanation_score for i in items if i.explanation_score is not None]
    return FluteGroupScore(
        n=n,
        accuracy={t: (counted[t] / n if n else 0.0) for t in thresholds},
        n_counted=counted,
        mean_explanation_score=(sum(scores) / len(scores)) if scores else None,
    )


@dataclass
class _Found:
    """The problems met while scoring predictions item by item (ids, in gold order)."""

    missing: list[str] = field(default_factory=list)
    bad_labels: list[tuple[str, str]] = field(default_factory=list)
    missing_similarity: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)

    def score(self, g: Any, preds: list[Any], similarity: Mapping[str, Any], semantics: FluteSemantics) -> FluteItemScore:
        """One gold item's score from its predictions (none, one, or duplicates)."""
        if not preds:
            self.missing.append(g.id)
            return FluteItemScore(g.id, g.figure_type, g.label, None, False, None, "missing")
        if len(preds) > 1:
            return FluteItemScore(g.id, g.figure_type, g.label, None, False, None, "duplicate")
        p = preds[0]
        label = normalize_flute_label(_pred_label(p))
        correct = label is not None and label == g.label
        status = "ok"
        if label is None:
            self.bad_labels.append((g.id, _text(_pred_label(p))))
            status = "bad_label"
        score: float | None
        if not _pred_explanation(p).strip():
            self.empty.append(g.id)
            score = 0.0
            status = "empty_explanation" if status == "ok" else status
        elif g.id in similarity:
            score = explanation_score(_as_similarity(similarity[g.id]), semantics)
        else:
            score = None
            if correct:
                self.missing_similarity.append(g.id)
                status = "missing_similarity"
        return FluteItemScore(g.id, g.figure_type, g.label, label, correct, score, status)


def _report_config(semantics: str, thresholds: tuple[int, ...], allow_partial: bool) -> dict[str, Any]:
    """How the report was scored (the rules behind its numbers)."""
    return {
        "task": "flute",
        "semantics": semantics,
        "thresholds": list(thresholds),
        "score_formula": "int(50 * (bertscore_f1 + bleurt))" if semantics == "shared_task" else "50 * (bertscore_f1 + bleurt)",
        "count_rule": (
            "label correct and (threshold == 0 or score >= threshold)"
            if semantics == "shared_task"
            else "label correct and (threshold == 0 or score > threshold)"
        ),
        "empty_explanation_score": 0,
        "allow_partial": allow_partial,
        "unscorable_items": "counted as wrong, kept in the denominator",
        "alignment": "by id",
    }


def flute_scores(
    gold: Sequence[Any],
    predictions: Sequence[Any],
    similarity: Mapping[str, ExplanationSimilarity | Sequence[float] | Mapping[str, float]],
    *,
    thresholds: Sequence[int] = FLUTE_THRESHOLDS,
    semantics: FluteSemantics = "shared_task",
    allow_partial: bool = False,
    similarity_config: Mapping[str, Any] | None = None,
) -> FluteReport:
    """Acc@thresholds overall and per figure type, from precomputed per-item explanation similarities.

    ``gold``: items with ``id``, ``label``, ``explanation``, ``figure_type`` (``NLIPair`` or
    mappings; ``type`` is accepted for the figure type). ``predictions``: items with ``id``,
    ``label`` (or ``predicted_label``) and ``explanation`` (or ``model_explanation``).
    ``similarity``: id → BERTScore F1 and BLEURT of that item's predicted explanation, needed
    for every label-correct item with a non-empty explanation. ``similarity_config`` (the
    metric configs that produced them) is copied into the report's config.
    """
    if semantics not in ("shared_task", "paper"):
        raise ValueError(f"semantics must be 'shared_task' or 'paper', got {semantics!r}")
    thresholds = tuple(int(t) for t in thresholds)
    if any(t < 0 or t > 100 for t in thresholds):
        raise ValueError(f"thresholds must be in [0, 100], got {thresholds}")
    gold_items = _gold_items(gold)
    if not gold_items:
        raise FluteScoringError("no gold items to score")
    gold_ids = {g.id for g in gold_items}
    by_id = _predictions_by_id(predictions)

    found = _Found()
    items = [found.score(g, by_id.get(g.id, []), similarity, semantics) for g in gold_items]
    missing, bad_labels, missing_sim, empty = found.missing, found.bad_labels, found.missing_similarity, found.empty
    duplicates = sorted(i for i, ps in by_id.items() if len(ps) > 1)
    unknown = sorted(i for i in by_id if i not in gold_ids)

    problems = FluteProblems(
        missing_ids=tuple(missing),
        duplicate_ids=tuple(duplicates),
        unknown_ids=tuple(unknown),
        bad_labels=tuple(bad_labels),
        missing_similarity=tuple(missing_sim),
        empty_explanations=tuple(empty),
    )
    if problems.blocking and not allow_partial:
        raise FluteScoringError(
            f"cannot score FLUTE predictions: {problems.summary()} (pass allow_partial=True to score them as wrong)",
            problems,
        )

    groups: dict[str, list[FluteItemScore]] = {}
    for item in items:
        groups.setdefault(item.figure_type, []).append(item)
    config = _report_config(semantics, thresholds, allow_partial)
    if similarity_config is not None:
        config.update(similarity_config)
    return FluteReport(
        overall=_group_score(items, thresholds, semantics),
        by_figure_type={name: _group_score(groups[name], thresholds, semantics) for name in sorted(groups)},
        items=tuple(items),
        problems=problems,
        semantics=semantics,
        thresholds=thresholds,
        config=config,
    )


def explanation_similarity(
    gold: Sequence[Any],
    predictions: Sequence[Any],
    *,
    bertscore: BertScore,
    bleurt: Bleurt,
) -> dict[str, ExplanationSimilarity]:
    """BERTScore F1 and BLEURT of each predicted explanation against its gold one, aligned by id.

    Only pairs that can be scored are: ids in the gold set, predicted once, with non-empty
    predicted and gold explanations. Anything else is left for :func:`flute_scores` to report.
    """
    gold_by_id = {_text(_field(g, "id")): _text(_field(g, "explanation")) for g in gold}
    ids: list[str] = []
    cands: list[str] = []
    refs: list[str] = []
    for pid, preds in _predictions_by_id(predictions).items():
        if len(preds) != 1 or pid not in gold_by_id:
            continue
        cand = _pred_explanation(preds[0])
        ref = gold_by_id[pid]
        if cand.strip() and ref.strip():
            ids.append(pid)
            cands.append(cand)
            refs.append(ref)
    if not ids:
        return {}
    f1 = bertscore.score(cands, refs).f1
    bl = bleurt.score_pairs(cands, refs)
    out: dict[str, ExplanationSimilarity] = {}
    for i, a, b in zip(ids, f1, bl):
        if math.isnan(a) or math.isnan(b):
            continue
        out[i] = ExplanationSimilarity(float(a), float(b))
    return out


def evaluate_flute(
    gold: Sequence[Any],
    predictions: Sequence[Any],
    *,
    bertscore: BertScore,
    bleurt: Bleurt,
    thresholds: Sequence[int] = FLUTE_THRESHOLDS,
    semantics: FluteSemantics = "shared_task",
    allow_partial: bool = False,
) -> FluteReport:
    """Compute the explanation similarities with the given metric objects, then :func:`flute_scores`.

    The report's config records both metric configs and whether the result is comparable to
    published FLUTE numbers (only with BERTScore deberta-large-mnli L18 and BLEURT-20).
    """
    sims = explanation_similarity(gold, predictions, bertscore=bertscore, bleurt=bleurt)
    return flute_scores(
        gold,
        predictions,
        sims,
        thresholds=thresholds,
        semantics=semantics,
        allow_partial=allow_partial,
        similarity_config={
            "bertscore": bertscore.config(),
            "bleurt": bleurt.config(),
            "comparable_to_published": bool(bertscore.comparable_to_published and bleurt.comparable_to_published),
        },
    )


def flute_scores_from_records(records: Sequence[Any], predictions: Mapping[str, Any], options: Any) -> dict[str, Any]:
    """The evaluation harness's entry point: FLUTE Acc@0/50/60 for the records it scores.

    ``predictions`` maps id → an object with ``prediction`` (the label), ``explanation`` and
    ``valid``; an invalid prediction keeps no label, so it is reported and counted wrong. The
    harness has already applied its own missing-item policy, so scoring runs with
    ``allow_partial=True`` and the problem report goes into the result. ``options`` supplies
    ``bertscore_model``, ``bertscore_layers``, ``bleurt_checkpoint`` and ``explanation_semantics``
    (``"shared-task"``/``"shared_task"`` or ``"paper"``).
    """
    semantics = str(getattr(options, "explanation_semantics", "shared_task")).replace("-", "_")
    if semantics not in ("shared_task", "paper"):
        raise ValueError(f"explanation_semantics must be 'shared-task' or 'paper', got {semantics!r}")
    preds = []
    for pid, p in predictions.items():
        valid = getattr(p, "valid", True)
        preds.append(
            {
                "id": pid,
                "label": getattr(p, "prediction", None) if valid else None,
                "explanation": getattr(p, "explanation", None),
            }
        )
    bertscore = BertScore(options.bertscore_model, getattr(options, "bertscore_layers", None))
    bleurt = Bleurt(options.bleurt_checkpoint, untrained_head_seed=getattr(options, "bleurt_head_seed", None))
    report = evaluate_flute(
        records,
        preds,
        bertscore=bertscore,
        bleurt=bleurt,
        semantics=cast(FluteSemantics, semantics),  # checked above
        allow_partial=True,
    )
    out: dict[str, Any] = {"computed": True, "semantics": report.semantics, "n": report.overall.n}
    out.update({k: v for k, v in report.overall.to_dict().items() if k != "n"})
    out["by_figure_type"] = {k: v.to_dict() for k, v in report.by_figure_type.items()}
    out["problems"] = report.problems.to_dict()
    out["explanation_scores"] = {i.id: i.explanation_score for i in report.items}
    out["comparable_to_published"] = report.config.get("comparable_to_published", False)
    out["config"] = report.config
    return out
