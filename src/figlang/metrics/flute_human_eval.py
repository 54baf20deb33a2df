"""FLUTE's human evaluation of explanations (the paper's H score, identical to e-ViL's), as a round trip.

Judges see a premise, a hypothesis, the label a system predicted and that system's one-sentence
explanation, for two (or more) systems side by side in a per-item random order, and answer for each
explanation: does it justify the label? **Yes / Weak Yes / Weak No / No**; for any answer but Yes
they may tick the shortcomings *Insufficient Justification, Too Trivial, Too Verbose, Untrue to
Input, Violates Common Sense*.

* ``sample_flute_items`` draws the pairs (50 per figure type, seeded; by default only pairs every
  system labelled correctly, since an explanation of a wrong label cannot justify it and e-ViL scores
  explanations of correct answers);
* ``export_flute_for_judges`` writes the judges' files (no system names) and the hidden key;
* ``import_flute_judgements`` reads answers (JSON lines, a JSON array or CSV) back to systems;
* ``summarize_flute_human`` reports per system the H score (Yes = 1, Weak Yes = 2/3, Weak No = 1/3,
  No = 0, averaged over judges per item, then over items, × 100), Yes %, No %, the shortcoming rates,
  by figure type; Krippendorff's alpha over (item, system) units; and the Wilcoxon signed-rank test
  between every two systems on the per-item scores.

The file formats are specified in docs/research/flute_explanations.md ("Human evaluation"); the web app's
judging form writes the same judgement file.
"""

from __future__ import annotations

import csv
import random
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np

from figlang.core.errors import DataError
from figlang.core.io import atomic_write, iter_json_objects, write_json, write_jsonl
from figlang.metrics.human_eval import (
    ExportPaths,
    _check_coverage,
    _iter_answer_rows,
    checked_answer_rows,
    load_key,
    nominal_alpha,
    shuffled_systems,
)
from figlang.metrics.significance import wilcoxon_signed_rank

FORMAT = "figlang-flute-human-eval"
FORMAT_VERSION = 1
FIGURE_TYPES = ("sarcasm", "simile", "metaphor", "idiom")
PER_TYPE = 50
DEFAULT_SEED = 13

#: e-ViL's numeric value of each answer (Kayser et al., 2021), which FLUTE's H score uses.
RATINGS: dict[str, float] = {"yes": 1.0, "weak yes": 2 / 3, "weak no": 1 / 3, "no": 0.0}
RATING_NAMES = {"yes": "Yes", "weak yes": "Weak Yes", "weak no": "Weak No", "no": "No"}
SHORTCOMINGS: dict[str, str] = {
    "insufficient_justification": "Insufficient Justification",
    "too_trivial": "Too Trivial",
    "too_verbose": "Too Verbose",
    "untrue_to_input": "Untrue to Input",
    "violates_common_sense": "Violates Common Sense",
}


def _canon(text: str) -> str:
    return " ".join(str(text).replace("_", " ").replace("-", " ").lower().split())


_RATING_LOOKUP = {_canon(k): k for k in RATINGS}
_SHORTCOMING_LOOKUP = {_canon(k): k for k in SHORTCOMINGS} | {_canon(v): k for k, v in SHORTCOMINGS.items()}


# --------------------------------------------------------------------------------------------
# Sampling and export
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluteEvalItem:
    """One FLUTE pair to judge, with each system's predicted label and explanation."""

    item_id: str  # the gold record's id (unique within a split)
    figure_type: str
    premise: str
    hypothesis: str
    gold_label: str | None
    labels: Mapping[str, str | None]  # system -> predicted label
    explanations: Mapping[str, str]  # system -> explanation


@dataclass(frozen=True)
class FluteSample:
    items: tuple[FluteEvalItem, ...]
    eligible: dict[str, int]  # figure type -> pairs that could be drawn
    config: dict[str, Any]


def _rows_by_id(rows_by_system: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Each system's rows by item id; two rows for one item are an error."""
    indexed: dict[str, dict[str, Mapping[str, Any]]] = {}
    for system, rows in rows_by_system.items():
        by_id: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            rid = str(row.get("id", ""))
            if rid in by_id:
                raise DataError(f"system {system!r} has two rows for item {rid!r}")
            by_id[rid] = row
        indexed[system] = by_id
    return indexed


def _shared_items(indexed: dict[str, dict[str, Mapping[str, Any]]], systems: list[str]) -> list[str]:
    """The ids every system has (in the first system's order), refused when a system's pair text differs."""
    first = indexed[systems[0]]
    shared = [i for i in first if all(i in indexed[s] for s in systems[1:])]
    if not shared:
        raise DataError("the systems share no items: export runs of the same task and split")
    for rid in shared:
        base = first[rid]
        for s in systems[1:]:
            other = indexed[s][rid]
            if (" ".join(str(other.get("premise", "")).split()), " ".join(str(other.get("hypothesis", "")).split())) != (
                " ".join(str(base.get("premise", "")).split()),
                " ".join(str(base.get("hypothesis", "")).split()),
            ):
                raise DataError(f"item {rid!r} has another premise or hypothesis in {s!r} than in {systems[0]!r}: runs of different data")
    return shared


def _explained(row: Mapping[str, Any], require_correct: bool) -> bool:
    """Whether a system's row has an explanation (and, with ``require_correct``, its gold label)."""
    if not str(row.get("explanation") or "").strip():
        return False
    correct = row["correct"] if "correct" in row else (row.get("gold") is not None and row.get("prediction") == row.get("gold"))
    return not (require_correct and correct is not True)


def sample_flute_items(
    rows_by_system: Mapping[str, Sequence[Mapping[str, Any]]],
    per_type: int = PER_TYPE,
    seed: int = DEFAULT_SEED,
    require_correct: bool = True,
    figure_types: Sequence[str] = FIGURE_TYPES,
) -> FluteSample:
    """Draw ``per_type`` pairs of each figure type that every system explained, seeded, in a shuffled order.

    ``rows_by_system``: system name -> rows of a figlang run's ``predictions.jsonl`` (``id``, ``premise``,
    ``hypothesis``, ``gold``, ``figure_type``, ``prediction``, ``explanation``, ``correct``). A pair is
    eligible when every system has a non-empty explanation for it and, with ``require_correct``, predicted
    its gold label. Eligible ids are sorted before ``random.Random`` draws from them, so the sample depends
    only on the seed and the data.
    """
    if len(rows_by_system) < 2:
        raise DataError(f"a side-by-side evaluation needs at least 2 systems, got {len(rows_by_system)}")
    if per_type < 1:
        raise DataError(f"per_type must be at least 1, got {per_type}")
    systems = list(rows_by_system)
    indexed = _rows_by_id(rows_by_system)
    first = indexed[systems[0]]
    shared = _shared_items(indexed, systems)

    def usable(rid: str) -> bool:
        return all(_explained(indexed[s][rid], require_correct) for s in systems)

    items: list[FluteEvalItem] = []
    pools = {f: sorted(rid for rid in shared if first[rid].get("figure_type") == f and usable(rid)) for f in figure_types}
    eligible = {f: len(pool) for f, pool in pools.items()}
    short = [f"{n} {f}" for f, n in eligible.items() if n < per_type]
    if short:
        rule = "that every system labelled correctly and explained" if require_correct else "that every system explained"
        raise DataError(
            f"only {', '.join(short)} pairs {rule}; {per_type} of each figure type are needed",
            hint="lower --per-type" + (", or pass --any-label to sample pairs whatever their predicted labels" if require_correct else ""),
        )
    for figure, pool in pools.items():
        for rid in random.Random(f"{seed}\x1f{figure}").sample(pool, per_type):
            row = first[rid]
            items.append(
                FluteEvalItem(
                    item_id=rid,
                    figure_type=figure,
                    premise=str(row.get("premise", "")),
                    hypothesis=str(row.get("hypothesis", "")),
                    gold_label=row.get("gold"),
                    labels={s: indexed[s][rid].get("prediction") for s in systems},
                    explanations={s: str(indexed[s][rid].get("explanation")).strip() for s in systems},
                )
            )
    random.Random(f"{seed}\x1forder").shuffle(items)  # judges see figure types mixed, in a recorded order
    config = {
        "per_type": per_type,
        "seed": seed,
        "require_correct": require_correct,
        "figure_types": list(figure_types),
        "systems": systems,
    }
    return FluteSample(tuple(items), eligible, config)


def _label_name(label: str | None) -> str:
    return {"entailment": "Entailment", "contradiction": "Contradiction"}.get(str(label), str(label or ""))


def export_flute_for_judges(
    sample: FluteSample, out_dir: str | Path, stem: str = "flute_human_eval", provenance: Mapping[str, Any] | None = None
) -> ExportPaths:
    """Write ``<stem>_items.jsonl``/``.csv`` (for judges: no system names), ``<stem>_key.jsonl`` (the hidden
    display order per item) and ``<stem>_manifest.json`` (how the sample was drawn). Every file is written atomically."""
    items = sample.items
    if not items:
        raise DataError("nothing to export: no items")
    seed = int(sample.config["seed"])
    out = Path(out_dir)
    paths = ExportPaths(out / f"{stem}_items.csv", out / f"{stem}_items.jsonl", out / f"{stem}_key.jsonl")
    width = max(len(i.explanations) for i in items)
    judge_rows: list[dict[str, Any]] = []
    key_rows: list[dict[str, Any]] = []
    for position, item in enumerate(items, start=1):
        order = shuffled_systems(item.item_id, item.explanations, seed)
        judge_rows.append(
            {
                "item_id": item.item_id,
                "position": position,
                "figure_type": item.figure_type,
                "premise": item.premise,
                "hypothesis": item.hypothesis,
                "explanations": [{"label": _label_name(item.labels[s]), "text": item.explanations[s]} for s in order],
            }
        )
        key_rows.append(
            {
                "item_id": item.item_id,
                "position": position,
                "figure_type": item.figure_type,
                "systems": order,
                "labels": [item.labels[s] for s in order],
                "gold_label": item.gold_label,
                "seed": seed,
            }
        )
    write_jsonl(paths.items_jsonl, judge_rows)
    write_jsonl(paths.key_jsonl, key_rows)
    header = ["item_id", "position", "figure_type", "premise", "hypothesis"]
    for k in range(1, width + 1):
        header += [f"label_{k}", f"explanation_{k}"]
    with atomic_write(paths.items_csv) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for row in judge_rows:
            cells = [row["item_id"], row["position"], row["figure_type"], row["premise"], row["hypothesis"]]
            for e in row["explanations"] + [{"label": "", "text": ""}] * (width - len(row["explanations"])):
                cells += [e["label"], e["text"]]
            writer.writerow(cells)
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        **sample.config,
        "n_items": len(items),
        "per_figure_type": dict(Counter(i.figure_type for i in items)),
        "eligible": sample.eligible,
        "ratings": {RATING_NAMES[k]: v for k, v in RATINGS.items()},
        "shortcomings": list(SHORTCOMINGS.values()),
        "files": {"items_jsonl": paths.items_jsonl.name, "items_csv": paths.items_csv.name, "key": paths.key_jsonl.name},
        **({"provenance": dict(provenance)} if provenance else {}),
    }
    write_json(out / f"{stem}_manifest.json", manifest)
    return paths


@dataclass(frozen=True)
class FluteKeyItem:
    item_id: str
    figure_type: str
    systems: tuple[str, ...]


def load_flute_key(path: str | Path) -> dict[str, FluteKeyItem]:
    """item id -> figure type and systems in display order (explanation_1 first), validated like the narrative key."""
    orders = load_key(path)
    figures: dict[str, str] = {}
    for line, obj in iter_json_objects(path):
        figure = obj.get("figure_type")
        if not isinstance(figure, str) or not figure:
            raise DataError("key line has no string 'figure_type' (was it written by `figlang human flute-export`?)", path, line)
        figures[str(obj["item_id"])] = figure
    return {i: FluteKeyItem(i, figures[i], systems) for i, systems in orders.items()}


# --------------------------------------------------------------------------------------------
# Import judgements
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluteJudgement:
    item_id: str
    judge: str
    system: str
    figure_type: str
    rating: str  # yes | weak yes | weak no | no
    shortcomings: tuple[str, ...]  # keys of SHORTCOMINGS

    @property
    def score(self) -> float:
        return RATINGS[self.rating]


def _answer_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if Path(path).suffix.lower() == ".csv":
        yield from _iter_answer_rows(path)
    else:
        yield from iter_json_objects(path)


def _shortcomings(raw: Any, path: str | Path, line: int, where: str) -> tuple[str, ...]:
    if raw is None or raw == "":
        return ()
    if isinstance(raw, str):
        parts = [p for p in raw.split(";") if p.strip()]
    elif isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        parts = raw
    else:
        raise DataError(f"{where}: shortcomings should be a list of names or a ';'-separated string, got {raw!r}", path, line)
    out: list[str] = []
    for part in parts:
        key = _SHORTCOMING_LOOKUP.get(_canon(part))
        if key is None:
            raise DataError(f"{where}: unknown shortcoming {part!r}; use: {', '.join(SHORTCOMINGS.values())}", path, line)
        if key in out:
            raise DataError(f"{where}: shortcoming {SHORTCOMINGS[key]!r} given twice", path, line)
        out.append(key)
    return tuple(out)


def import_flute_judgements(
    path: str | Path, key: str | Path | Mapping[str, FluteKeyItem], judges_per_item: int | None = 3
) -> list[FluteJudgement]:
    """Read judges' answers (fields ``item_id``, ``judge``, ``rating_k``, ``shortcomings_k`` for k = 1..number of
    explanations) and map positions back to systems with the key.

    Everything a form could get wrong is a DataError naming the file and line: unknown items, a missing or
    unknown rating, unknown or repeated shortcomings, shortcomings ticked for a Yes, answers for an explanation
    the item does not have, a judge answering an item twice, items missing or with another number of judges.
    """
    mapping = load_flute_key(key) if isinstance(key, (str, Path)) else dict(key)
    out: list[FluteJudgement] = []
    counts: Counter[str] = Counter()
    first_line: dict[str, int] = {}
    for line, row, item_id, judge in checked_answer_rows(path, mapping, _answer_rows(path)):
        entry = mapping[item_id]
        n = len(entry.systems)
        for k, system in enumerate(entry.systems, start=1):
            where = f"item {item_id!r}, judge {judge!r}, explanation {k}"
            raw = row.get(f"rating_{k}")
            if raw is None or not str(raw).strip():
                raise DataError(f"{where}: missing 'rating_{k}'", path, line)
            rating = _RATING_LOOKUP.get(_canon(raw)) if isinstance(raw, str) else None
            if rating is None:
                raise DataError(f"{where}: rating {raw!r} is not one of: {', '.join(RATING_NAMES.values())}", path, line)
            shortcomings = _shortcomings(row.get(f"shortcomings_{k}"), path, line, where)
            if rating == "yes" and shortcomings:
                raise DataError(f"{where}: shortcomings are for answers other than Yes, got Yes with {', '.join(shortcomings)}", path, line)
            out.append(FluteJudgement(item_id, judge, system, entry.figure_type, rating, shortcomings))
        extra = sorted(
            c
            for c in row
            if c.startswith(("rating_", "shortcomings_"))
            and c.rsplit("_", 1)[1].isdigit()
            and not 1 <= int(c.rsplit("_", 1)[1]) <= n
            and row[c] not in (None, "", [])
        )
        if extra:
            raise DataError(f"item {item_id!r} shows {n} explanations but the row answers {', '.join(extra)}", path, line)
        counts[item_id] += 1
        first_line.setdefault(item_id, line)
    _check_coverage(counts, mapping, path, judges_per_item, first_line)
    return out


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FluteSystemScores:
    """One system's figures; percentages on 0-100."""

    n_items: int
    n_judgements: int
    h_score: float
    rating_pct: dict[str, float]  # Yes, Weak Yes, Weak No, No
    shortcoming_pct: dict[str, float]  # share of all this system's judgements that ticked it
    by_figure_type: dict[str, dict[str, float]]  # figure -> n_items, h_score, yes_pct, no_pct

    @property
    def yes_pct(self) -> float:
        return self.rating_pct["Yes"]

    @property
    def no_pct(self) -> float:
        return self.rating_pct["No"]


@dataclass(frozen=True)
class FluteHumanSummary:
    systems: tuple[str, ...]
    scores: dict[str, FluteSystemScores]
    n_items: int
    judges: tuple[str, ...]
    alpha_ordinal: float  # Krippendorff's alpha over (item, system) units, ordinal ratings
    alpha_nominal: float
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # Wilcoxon signed-rank for every two systems

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for name, s in self.scores.items():
            d["scores"][name]["yes_pct"], d["scores"][name]["no_pct"] = s.yes_pct, s.no_pct
        for name in ("alpha_ordinal", "alpha_nominal"):
            if d[name] != d[name]:  # NaN (fewer than two judges on every unit) is null in JSON
                d[name] = None
        d["h_score_definition"] = "e-ViL: Yes=1, Weak Yes=2/3, Weak No=1/3, No=0; mean over judges per item, then over items, x100"
        d["alpha_units"] = "(item, system) pairs; judges' ratings coded Yes=3 > Weak Yes=2 > Weak No=1 > No=0"
        return d


def ordinal_alpha(units: Mapping[Any, Mapping[Any, str]]) -> float:
    """Krippendorff's alpha (ordinal) for unit -> {judge: rating}; NaN when one rating is all there is."""
    judges = sorted({j for votes in units.values() for j in votes}, key=str)
    used = {r for votes in units.values() for r in votes.values()}
    if len(used) < 2:
        return float("nan")
    rank = {"no": 0.0, "weak no": 1.0, "weak yes": 2.0, "yes": 3.0}
    row = {j: i for i, j in enumerate(judges)}
    data = np.full((len(judges), len(units)), np.nan)
    for col, votes in enumerate(units.values()):
        for judge, rating in votes.items():
            data[row[judge], col] = rank[rating]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0.0, 1.0, 2.0, 3.0]))


def summarize_flute_human(judgements: Sequence[FluteJudgement], systems: Sequence[str] | None = None) -> FluteHumanSummary:
    """H score, Yes %, No %, shortcoming rates (overall and by figure type) per system; agreement; paired tests."""
    if not judgements:
        raise DataError("no judgements to summarize")
    all_systems = tuple(systems) if systems is not None else tuple(dict.fromkeys(j.system for j in judgements))
    by_unit: dict[tuple[str, str], dict[str, FluteJudgement]] = defaultdict(dict)
    for j in judgements:
        by_unit[(j.item_id, j.system)][j.judge] = j
    items = sorted({j.item_id for j in judgements})
    figure_of = {j.item_id: j.figure_type for j in judgements}
    item_score: dict[str, dict[str, float]] = {}
    scores: dict[str, FluteSystemScores] = {}
    for system in all_systems:
        mine = [j for j in judgements if j.system == system]
        if not mine:
            raise DataError(f"system {system!r} has no judgements")
        per_item = {i: float(np.mean([v.score for v in by_unit[(i, system)].values()])) for i in items if (i, system) in by_unit}
        item_score[system] = per_item
        ratings = Counter(j.rating for j in mine)
        flagged = Counter(s for j in mine for s in j.shortcomings)
        by_figure: dict[str, dict[str, float]] = {}
        for figure in sorted({figure_of[i] for i in per_item}):
            fig_items = [i for i in per_item if figure_of[i] == figure]
            fig_j = [j for j in mine if j.figure_type == figure]
            by_figure[figure] = {
                "n_items": len(fig_items),
                "h_score": 100 * float(np.mean([per_item[i] for i in fig_items])),
                "yes_pct": 100 * sum(j.rating == "yes" for j in fig_j) / len(fig_j),
                "no_pct": 100 * sum(j.rating == "no" for j in fig_j) / len(fig_j),
            }
        scores[system] = FluteSystemScores(
            n_items=len(per_item),
            n_judgements=len(mine),
            h_score=100 * float(np.mean(list(per_item.values()))),
            rating_pct={RATING_NAMES[r]: 100 * ratings[r] / len(mine) for r in RATINGS},
            shortcoming_pct={name: 100 * flagged[key] / len(mine) for key, name in SHORTCOMINGS.items()},
            by_figure_type=by_figure,
        )
    units = {u: {judge: j.rating for judge, j in votes.items()} for u, votes in by_unit.items() if u[1] in all_systems}
    comparisons = []
    for a, b in combinations(all_systems, 2):
        paired = [i for i in items if i in item_score[a] and i in item_score[b]]
        test = wilcoxon_signed_rank([item_score[a][i] for i in paired], [item_score[b][i] for i in paired])
        comparisons.append(
            {"a": a, "b": b, "n_items": len(paired), "h_difference": scores[a].h_score - scores[b].h_score, "wilcoxon": test.to_dict()}
        )
    agreeable = any(len(votes) >= 2 for votes in units.values())  # alpha needs a unit rated twice; else it is undefined
    return FluteHumanSummary(
        systems=all_systems,
        scores=scores,
        n_items=len(items),
        judges=tuple(sorted({j.judge for j in judgements})),
        alpha_ordinal=ordinal_alpha(units) if agreeable else float("nan"),
        alpha_nominal=nominal_alpha(units) if agreeable else float("nan"),
        comparisons=comparisons,
    )


def write_flute_human_results(path: str | Path, summary: FluteHumanSummary, provenance: Mapping[str, Any] | None = None) -> None:
    """The summary as JSON, atomically, with where the judgements came from."""
    write_json(
        path, {"format": FORMAT, "version": FORMAT_VERSION, **summary.to_dict(), **({"provenance": dict(provenance)} if provenance else {})}
    )


def judgement_rows(judgements: Sequence[FluteJudgement], key: Mapping[str, FluteKeyItem]) -> list[dict[str, Any]]:
    """Judgements back in the answer-file shape (one row per item and judge): what a form writes; for tests and tools."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for j in judgements:
        k = key[j.item_id].systems.index(j.system) + 1
        row = rows.setdefault((j.item_id, j.judge), {"item_id": j.item_id, "judge": j.judge})
        row[f"rating_{k}"] = RATING_NAMES[j.rating]
        row[f"shortcomings_{k}"] = [SHORTCOMINGS[s] for s in j.shortcomings]
    return list(rows.values())


__all__ = [
    "FIGURE_TYPES",
    "RATINGS",
    "SHORTCOMINGS",
    "FluteEvalItem",
    "FluteHumanSummary",
    "FluteJudgement",
    "FluteKeyItem",
    "FluteSample",
    "FluteSystemScores",
    "export_flute_for_judges",
    "import_flute_judgements",
    "judgement_rows",
    "load_flute_key",
    "ordinal_alpha",
    "sample_flute_items",
    "summarize_flute_human",
    "write_flute_human_results",
]
