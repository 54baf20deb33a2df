"""The narrative paper's Table 5 (human evaluation of generated continuations), recomputed from its crowd files: the
table, its Markdown, and the result file with every figure docs/research/human_eval_table5.md quotes."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from figlang.core.errors import DataError
from figlang.core.context import RunContext, run_context
from figlang.core.provenance import _relative, code_provenance, data_checksums, portable_path, write_result_files

from figlang.metrics.human_eval import (
    _TEMPLATE_MODELS,
    ALL,
    NEITHER,
    ComparativeFile,
    DataRepairWarning,
    ExampleWidgetValue,
    PlausibilityFile,
    comparative_summary_from_file,
    load_amt_comparative,
    load_mturk_plausibility,
    majority_label,
    nominal_alpha,
    summarize_absolute,
)

# --------------------------------------------------------------------------------------------
# Table 5
# --------------------------------------------------------------------------------------------

ROW_NAMES = {"baseline": "GPT2-XL", "context": "+context", "literal": "+literal", "human": "Human", ALL: "All", NEITHER: "Neither"}

PUBLISHED_TABLE5: dict[str, dict[str, dict[str, float]]] = {
    "absolute": {
        "idiom": {"baseline": 56, "context": 68, "literal": 48, "human": 80},
        "simile": {"baseline": 60, "context": 68, "literal": 76, "human": 88},
    },
    "comparative": {
        "idiom": {"baseline": 15, "context": 45, "literal": 13, ALL: 8, NEITHER: 17},
        "simile": {"baseline": 18.6, "context": 16, "literal": 46.7, ALL: 12, NEITHER: 6.7},
    },
    "alpha": {"idiom": {"alpha": 0.68}, "simile": {"alpha": 0.63}},
}
"""Table 5 of the paper as printed (percentages; alpha as a fraction)."""


@dataclass(frozen=True)
class Table5Column:
    """One figure type's recomputed Table 5 figures (shares in percent)."""

    absolute: dict[str, float]  # baseline, context, literal, human (mean over the human continuations)
    absolute_human_columns: dict[str, float]  # human1.. each on its own
    comparative: dict[str, float]  # baseline, context, literal, all, neither; over items with a majority
    comparative_counts: dict[str, int]
    n_absolute_items: int
    n_absolute_assignments: int
    n_comparative_items: int
    n_comparative_no_majority: int
    alpha_absolute: float  # all shown sentences (models and humans)
    alpha_absolute_models: float  # the three model sentences only
    alpha_comparative: float
    warnings: tuple[DataError, ...]


@dataclass(frozen=True)
class Table5:
    idiom: Table5Column
    simile: Table5Column
    example_widget_value: ExampleWidgetValue

    def column(self, figure: str) -> Table5Column:
        return {"idiom": self.idiom, "simile": self.simile}[figure]

    def to_markdown(self) -> str:
        return render_table5_markdown(self)


def _table5_column(root: Path, figure: str, example_widget_value: ExampleWidgetValue) -> Table5Column:
    gen = root / "output" / figure / "generative"
    plaus = load_mturk_plausibility(gen / f"{figure}plausible.json", example_widget_value)
    summary = summarize_absolute(plaus.judgements, plaus.systems)
    models = summarize_absolute([j for j in plaus.judgements if j.system in _TEMPLATE_MODELS], _TEMPLATE_MODELS)
    humans = [s for s in plaus.systems if s.startswith("human")]
    absolute = {s: 100 * summary.share_plausible[s] for s in _TEMPLATE_MODELS}
    absolute["human"] = 100 * float(np.mean([summary.share_plausible[s] for s in humans]))
    comp_file = load_amt_comparative(gen / f"amt{figure}.json")
    comp = comparative_summary_from_file(comp_file)
    return Table5Column(
        absolute=absolute,
        absolute_human_columns={s: 100 * summary.share_plausible[s] for s in humans},
        comparative={k: 100 * v for k, v in comp.shares("majority").items()},
        comparative_counts=dict(comp.counts),
        n_absolute_items=summary.n_items,
        n_absolute_assignments=plaus.n_assignments,
        n_comparative_items=comp.n_items,
        n_comparative_no_majority=comp.n_no_majority,
        alpha_absolute=summary.alpha,
        alpha_absolute_models=models.alpha,
        alpha_comparative=comp.alpha,
        warnings=plaus.warnings + comp_file.repairs,
    )


def table5(
    data_dir: str | Path | None = None, example_widget_value: ExampleWidgetValue = "not_plausible", *, ctx: RunContext | None = None
) -> Table5:
    """Recompute Table 5 from the published crowd files under ``<data_dir>/fig_narrative/output`` (the run context's
    data folder, or ``data_dir``).

    Absolute: strict majority of the 3 workers per (HIT, sentence); share of the 25 HITs. "Human" is the
    mean over the human continuations shown (3 for idioms, 5 for similes; per-column values are kept).
    Comparative: majority of the 3 responses; shares over the items that have one ("inconsistent" excluded).
    """
    root = run_context(ctx, data_dir=data_dir).data_dir / "fig_narrative"
    return Table5(
        idiom=_table5_column(root, "idiom", example_widget_value),
        simile=_table5_column(root, "simile", example_widget_value),
        example_widget_value=example_widget_value,
    )


def _fmt(x: float, digits: int = 1) -> str:
    return "n/a" if x != x else f"{x:.{digits}f}"  # noqa: PLR0124 (NaN check)


def render_table5_markdown(table: Table5) -> str:
    """Recomputed figures beside the published ones, as a Markdown table."""
    pub = PUBLISHED_TABLE5
    lines = [
        "| | Idiom (recomputed) | Idiom (paper) | Simile (recomputed) | Simile (paper) |",
        "|---|---:|---:|---:|---:|",
        "| **Absolute: % plausible** | | | | |",
    ]
    for key in ("baseline", "context", "literal", "human"):
        lines.append(
            f"| {ROW_NAMES[key]} | {_fmt(table.idiom.absolute[key])} | {pub['absolute']['idiom'][key]:g} "
            f"| {_fmt(table.simile.absolute[key])} | {pub['absolute']['simile'][key]:g} |"
        )
    lines.append("| **Comparative: % preferred** | | | | |")
    for key in ("baseline", "context", "literal", ALL, NEITHER):
        lines.append(
            f"| {ROW_NAMES[key]} | {_fmt(table.idiom.comparative[key])} | {pub['comparative']['idiom'][key]:g} "
            f"| {_fmt(table.simile.comparative[key])} | {pub['comparative']['simile'][key]:g} |"
        )
    lines.append("| **Krippendorff's alpha (nominal)** | | | | |")
    lines.append(f"| as published | | {pub['alpha']['idiom']['alpha']:g} | | {pub['alpha']['simile']['alpha']:g} |")
    lines.append(f"| absolute (all sentences) | {_fmt(table.idiom.alpha_absolute, 2)} | | {_fmt(table.simile.alpha_absolute, 2)} | |")
    lines.append(
        f"| absolute (model sentences) | {_fmt(table.idiom.alpha_absolute_models, 2)} | | {_fmt(table.simile.alpha_absolute_models, 2)} | |"
    )
    lines.append(f"| comparative | {_fmt(table.idiom.alpha_comparative, 2)} | | {_fmt(table.simile.alpha_comparative, 2)} | |")
    lines.append("| **Counts** | | | | |")
    lines.append(
        f"| absolute HITs / assignments | {table.idiom.n_absolute_items} / {table.idiom.n_absolute_assignments} | "
        f"| {table.simile.n_absolute_items} / {table.simile.n_absolute_assignments} | |"
    )
    # the "(paper)" cells stay empty: the published Table 5 prints no counts (a 25 / 75 once quoted for it had no source)
    lines.append(
        f"| comparative items (no majority) | {table.idiom.n_comparative_items} ({table.idiom.n_comparative_no_majority}) | "
        f"| {table.simile.n_comparative_items} ({table.simile.n_comparative_no_majority}) | |"
    )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Table 5 as a result file: every figure docs/research/human_eval_table5.md quotes, with the per-unit votes
# --------------------------------------------------------------------------------------------

TABLE5_SOURCE = (
    'Chakrabarty, Choi and Shwartz, "It\'s not Rocket Science: Interpreting Figurative Language in Narratives", '
    "TACL 2022, Table 5 (human evaluation of generated continuations)"
)
TABLE5_FILES = ("{figure}plausible.json", "amt{figure}.json")


def _pairwise_agreement(units: Iterable[Sequence[Hashable]]) -> float:
    """Raw agreement: the share of equal pairs among all pairs of judgements within a unit, pooled over units."""
    agree = pairs = 0
    for values in units:
        for a in range(len(values)):
            for b in range(a + 1, len(values)):
                agree += values[a] == values[b]
                pairs += 1
    return agree / pairs if pairs else float("nan")


def _warning_record(w: DataError, data_root: Path) -> dict[str, Any]:
    """A data warning as a result file keeps it: the file relative to the data folder (no machine paths), line, message."""

    return {"file": _relative(Path(w.path), (data_root,)) if w.path else None, "line": w.line, "message": w.message}


def _pct(part: float, whole: float) -> float:
    return 100 * part / whole if whole else float("nan")


def _comparative_readings(comp_file: ComparativeFile) -> dict[str, Any]:
    """The comparative evaluation's shares (all items, the first 100), agreement and alpha."""
    comp = comparative_summary_from_file(comp_file)
    first = comparative_summary_from_file(ComparativeFile(comp_file.path, comp_file.items[:100], comp_file.repairs))
    with_majority = {it.line: dict(enumerate(it.responses)) for it in comp_file.items if majority_label(it.responses) is not None}
    return {
        "comparative_shares_over_all_items": {k: 100 * v for k, v in comp.shares("all").items()},
        "comparative_first_100_items": {
            "items": first.n_items,
            "shares_over_all_items": {k: 100 * v for k, v in first.shares("all").items()},
        },
        "alpha_comparative_items_with_majority": nominal_alpha(with_majority),
        "pairwise_agreement_comparative": _pairwise_agreement([it.responses for it in comp_file.items]),
    }


def _example_widget_readings(gen: Path, figure: str) -> dict[str, Any]:
    """The example widget's stray value: the absolute figures and alpha under each reading of it."""
    out: dict[str, Any] = {}
    for reading in ("not_plausible", "plausible", "missing"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other = load_mturk_plausibility(gen / f"{figure}plausible.json", reading)
        s = summarize_absolute(other.judgements, other.systems)
        out[reading] = {"absolute": {m: 100 * s.share_plausible[m] for m in _TEMPLATE_MODELS}, "alpha_absolute": s.alpha}
    alphas = [r["alpha_absolute"] for r in out.values()]
    out["alpha_absolute_range"] = max(alphas) - min(alphas)
    return out


def _table5_readings(
    gen: Path, figure: str, plaus: PlausibilityFile, comp_file: ComparativeFile
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The other readings the doc reports for one figure type, and the per-unit records behind them."""
    votes: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for j in plaus.judgements:
        votes[(j.item_id, j.system)][j.judge] = j.plausible
    hits = sorted({h for h, _ in votes})
    humans = [s for s in plaus.systems if s.startswith("human")]

    def verdict(hit: str, system: str) -> bool:
        return majority_label(list(votes[(hit, system)].values())) is True

    pooled = [[v for s in humans for v in votes[(h, s)].values()] for h in hits]
    column_verdicts = [[verdict(h, s) for s in humans] for h in hits]
    by_column = {s: [list(votes[(h, s)].values()) for h in hits] for s in plaus.systems}
    readings: dict[str, Any] = {
        "human_votes_per_hit": len(pooled[0]),
        "human_majority_of_all_votes": _pct(sum(1 for p in pooled if 2 * sum(p) > len(p)), len(hits)),
        "human_majority_of_column_verdicts": _pct(sum(1 for c in column_verdicts if 2 * sum(c) > len(c)), len(hits)),
        "absolute_majority_by_column": {s: _pct(sum(1 for h in hits if verdict(h, s)), len(hits)) for s in plaus.systems},
        "absolute_share_of_all_votes": {s: _pct(sum(map(sum, v)), sum(map(len, v))) for s, v in by_column.items()},
        "absolute_at_least_one_plausible": {s: _pct(sum(1 for x in v if any(x)), len(hits)) for s, v in by_column.items()},
        "alpha_absolute_by_column": {s: nominal_alpha({u: v for u, v in votes.items() if u[1] == s}) for s in plaus.systems},
        "pairwise_agreement_absolute": _pairwise_agreement([list(v.values()) for v in votes.values()]),
        "pairwise_agreement_absolute_models": _pairwise_agreement(
            [list(v.values()) for (_, s), v in votes.items() if s in _TEMPLATE_MODELS]
        ),
    }
    readings.update(_comparative_readings(comp_file))
    readings["example_widget"] = _example_widget_readings(gen, figure)
    readings["stray_answers"] = [{**_warning_record(w, gen.parents[3]), "value": 2} for w in plaus.warnings if "= 2 (" in w.message]

    records: list[dict[str, Any]] = []
    judge = {w: f"judge{k}" for k, w in enumerate(sorted({j.judge for j in plaus.judgements}), start=1)}  # no MTurk worker ids
    for (hit, system), v in sorted(votes.items()):
        records.append(
            {
                "figure": figure,
                "evaluation": "absolute",
                "hit": hit,
                "system": system,
                "votes": {judge[w]: int(x) for w, x in sorted(v.items())},
                "plausible": verdict(hit, system),
            }
        )
    for it in comp_file.items:
        m = majority_label(it.responses)
        records.append(
            {
                "figure": figure,
                "evaluation": "comparative",
                "line": it.line,
                "responses": list(it.responses),
                "file_majority": it.majority,
                "majority_of_responses": m,
                "counted_as": None if m is None else (str(m) if m in (ALL, NEITHER) else it.majority),
            }
        )
    return readings, records


def _table5_comparison(recomputed: dict[str, Any]) -> dict[str, Any]:
    """How the recomputed figures differ from the published ones: the human gap, and which reading of the idiom
    comparative figures (truncated shares or counts) the paper printed."""
    pub = PUBLISHED_TABLE5
    idiom_truncated = {k: int(v) for k, v in recomputed["idiom"]["comparative"].items()}
    comparison = {
        "human_gap": {f: pub["absolute"][f]["human"] - recomputed[f]["absolute"]["human"] for f in ("idiom", "simile")},
        "idiom_comparative_equal_to_truncated_share": sum(idiom_truncated[k] == pub["comparative"]["idiom"][k] for k in idiom_truncated),
        "idiom_comparative_equal_to_count": sum(
            recomputed["idiom"]["comparative_counts"][k] == pub["comparative"]["idiom"][k] for k in idiom_truncated
        ),
        "idiom_comparative_figures": len(idiom_truncated),
    }
    comparison["human_max_gap"] = max(comparison["human_gap"].values())
    return comparison


def table5_results(
    data_dir: str | Path | None = None,
    example_widget_value: ExampleWidgetValue = "not_plausible",
    command: str | None = None,
    *,
    ctx: RunContext | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Everything docs/research/human_eval_table5.md quotes about Table 5, as one result record, and its per-unit records.

    ``recomputed``: :func:`table5`'s figures; ``readings``: the other readings the doc compares (pooled human votes,
    single columns, other denominators, alphas over other units, raw pairwise agreement, the stray 2 read three
    ways); ``published``: the paper's Table 5 as printed (:data:`PUBLISHED_TABLE5`, with its source);
    ``comparison``: how the two differ; ``data``: the crowd files' checksums; ``code``: figlang's version and commit.
    The records are one per (HIT, shown sentence) with the workers' votes and one per comparative item.

    The files are read from ``ctx``'s data folder, else from ``data_dir``'s; ``data_dir`` is what the result records
    as the folder given (as the user wrote it; None: not given), also beside ``ctx``.
    """

    context = ctx if ctx is not None else run_context(data_dir=data_dir)
    root = context.data_dir / "fig_narrative"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataRepairWarning)  # reported in the record's warnings
        t = table5(example_widget_value=example_widget_value, ctx=context)
    recomputed: dict[str, Any] = {}
    readings: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    files: list[Path] = []
    for figure in ("idiom", "simile"):
        col = t.column(figure)
        gen = root / "output" / figure / "generative"
        files += [gen / f.format(figure=figure) for f in TABLE5_FILES]
        recomputed[figure] = {
            "absolute": col.absolute,
            "absolute_human_columns": col.absolute_human_columns,
            "comparative": col.comparative,
            "comparative_counts": col.comparative_counts,
            "n_absolute_items": col.n_absolute_items,
            "n_absolute_assignments": col.n_absolute_assignments,
            "n_comparative_items": col.n_comparative_items,
            "n_comparative_no_majority": col.n_comparative_no_majority,
            "n_comparative_with_majority": col.n_comparative_items - col.n_comparative_no_majority,
            "alpha": {"absolute": col.alpha_absolute, "absolute_models": col.alpha_absolute_models, "comparative": col.alpha_comparative},
            "warnings": [_warning_record(w, root.parent) for w in col.warnings],
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataRepairWarning)
            plaus = load_mturk_plausibility(gen / f"{figure}plausible.json", example_widget_value)
            comp_file = load_amt_comparative(gen / f"amt{figure}.json")
        readings[figure], recs = _table5_readings(gen, figure, plaus, comp_file)
        records += recs
    pub = PUBLISHED_TABLE5
    comparison = _table5_comparison(recomputed)
    result = {
        "format": "figlang.human.table5/1",
        "what": "Table 5 of the narrative paper recomputed from its published crowd files (docs/research/human_eval_table5.md)",
        "command": command,
        "example_widget_value": example_widget_value,
        "recomputed": recomputed,
        "readings": readings,
        "published": {
            "source": TABLE5_SOURCE,
            "note": "as printed in the paper: percentages, alpha as a fraction",
            **{k: v for k, v in pub.items()},
        },
        "comparison": comparison,
        "items_file": (
            "predictions.jsonl.gz: one record per (HIT, shown sentence) with the workers' votes (workers as judge1.., "
            "in the order of their MTurk ids), one per comparative item"
        ),
        "data": {"data_dir": portable_path(data_dir) if data_dir is not None else None, "files": data_checksums(files, root.parent)},
        "code": code_provenance(),
    }
    return result, records


def write_table5_results(
    out_dir: str | Path,
    data_dir: str | Path | None = None,
    example_widget_value: ExampleWidgetValue = "not_plausible",
    command: str | None = None,
    *,
    ctx: RunContext | None = None,
) -> tuple[Path, Path]:
    """Write ``out_dir/table5.json`` (:func:`table5_results`, read from ``ctx`` or ``data_dir``) and
    ``out_dir/predictions.jsonl.gz`` (its per-unit records)."""

    result, records = table5_results(data_dir, example_widget_value, command, ctx=ctx)
    return write_result_files(out_dir, "table5.json", result, records)


__all__ = ["PUBLISHED_TABLE5", "Table5", "Table5Column", "render_table5_markdown", "table5", "table5_results", "write_table5_results"]
