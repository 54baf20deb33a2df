"""`figlang report`: many runs → one table (Markdown + HTML) and the plots people would rather look at."""

from __future__ import annotations

import html
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from figlang.core.io import atomic_write
from figlang.metrics.impli_analysis import ice_accuracy_correlation, ice_score, levenshtein_overlap
from figlang.evaluation.runs import Run, load_run

_SLOTS = {"a", "an", "the", "his", "her", "their", "my", "your", "our", "its", "one's", "one", "someone's", "someone"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80]


def method_label(method: dict[str, Any]) -> str:
    """The method's name and the options it was given that change answers (not threads, batch size, device)."""
    speed = {"threads", "batch_size", "max_batch_tokens", "device", "progress"}
    options = " ".join(f"{k}={v}" for k, v in (method.get("options") or {}).items() if k not in speed)
    return f"{method['name']} {options}".strip()


def _accuracy_text(acc: dict[str, Any]) -> str:
    """Accuracy [95% CI]; a CI that resampled clusters (--ci-cluster) says over how many, so that runs whose
    intervals were made differently are not read as comparable."""
    clusters = f" over {acc['n_clusters']} clusters" if acc.get("n_clusters") is not None else ""
    return f"{100 * acc['accuracy']:.2f} [{100 * acc['ci_low']:.1f}, {100 * acc['ci_high']:.1f}{clusters}]"


def run_row(run: Run) -> dict[str, Any]:
    r = run.results
    m = r["metrics"]
    row: dict[str, Any] = {
        "run": run.path.name,
        "task": r["task"]["name"],
        "split": r["task"]["split"],
        "method": method_label(r["method"]),
        "model": r["method"].get("model") or "",
        "items": m.get("n_scored", 0),
    }
    acc = m.get("accuracy")
    if acc:
        row["accuracy"] = _accuracy_text(acc)
    for key in ("rougeL", "bleu", "bertscore_f1"):
        v = (m.get("generation") or {}).get(key)
        if isinstance(v, (int, float)):
            row[key] = f"{v:.4f}"
    return row


def grid(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    """Model × method rows against task/split columns, one accuracy [95% CI] per cell (the table a paper
    prints); a pair run twice shows its last run. Returns the header and the rows."""
    cols: list[tuple[str, str]] = []
    cells: dict[tuple[str, str], dict[tuple[str, str], str]] = defaultdict(dict)
    for run in runs:
        acc = run.results["metrics"].get("accuracy")
        if not acc:
            continue
        col = run.task_split
        if col not in cols:
            cols.append(col)
        n = run.results["metrics"].get("n_scored", 0)
        cells[(run.results["method"].get("model") or "", method_label(run.results["method"]))][col] = f"{_accuracy_text(acc)} (n={n})"
    cols.sort()
    header = ["model", "method"] + [f"{t} {s}" for t, s in cols]
    return header, [[model, method] + [cells[(model, method)].get(c, "") for c in cols] for model, method in sorted(cells)]


def idiom_groups(rows: list[dict[str, Any]]) -> dict[int, tuple[str, str]]:
    """Row index → (group key, base form) for rows with an expression.

    IMPLI's files do not name the idiom's base form, so variants of one idiom are grouped by the
    Porter stems of their words minus determiner/possessive slots, and the most frequent variant
    is taken as the base form. An approximation, stated in the report.
    """
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    keys: dict[int, str] = {}
    variants: dict[str, Counter[str]] = defaultdict(Counter)
    for i, row in enumerate(rows):
        expr = row.get("expression")
        if not expr:
            continue
        words = [w for w in re.findall(r"\w+(?:'\w+)?", expr.lower()) if w not in _SLOTS]
        if not words:
            continue
        key = " ".join(stem(w) for w in words)
        keys[i] = key
        variants[key][" ".join(expr.lower().split())] += 1
    base = {k: v.most_common(1)[0][0] for k, v in variants.items()}
    return {i: (k, base[k]) for i, k in keys.items()}


def _plots_for_run(run: Run, out: Path, notes: list[str] | None = None) -> list[Path]:
    """The run's plots; IMPLI runs also add their analyses' numbers to ``notes`` (for the report's text)."""
    from figlang.metrics import plots

    made: list[Path] = []
    m = run.results["metrics"]
    name = _slug(run.path.name)
    for key, groups in m.items():
        if key.startswith("by_") and isinstance(groups, dict) and len(groups) > 1 and key != "by_gold_label":
            g = sorted(groups)
            made.append(
                plots.plot_accuracy_bars(
                    g,
                    [groups[k]["accuracy"] for k in g],
                    [groups[k]["ci_low"] for k in g],
                    [groups[k]["ci_high"] for k in g],
                    out / f"{name}_{key}.png",
                    title=f"{run.results['task']['name']} {key.replace('_', ' ')}: {run.label}",
                )
            )
    rows = [r for r in run.rows if "premise" in r and "correct" in r]
    if rows and run.results["task"]["name"].startswith("impli"):
        dists = [levenshtein_overlap(r["premise"], r["hypothesis"]).distance for r in rows]
        right = [d for d, r in zip(dists, rows) if r["correct"]]
        wrong = [d for d, r in zip(dists, rows) if not r["correct"]]
        if notes is not None:
            median = lambda xs: statistics.median_high(xs) if xs else float("nan")  # noqa: E731
            notes.append(
                f"{run.path.name}: premise–hypothesis Levenshtein distance (characters), median {median(right)} "
                f"for the {len(right)} pairs answered right, {median(wrong)} for the {len(wrong)} answered wrong."
            )
        made.append(plots.plot_overlap_histograms(right, wrong, out / f"{name}_overlap.png"))
        # ICE is a per-idiom measure: metaphor pairs (``impli``, ``impli-metaphors``) would be grouped
        # by their metaphor's stems and mixed into the idiom correlation.
        idiom_rows = [r for r in rows if r.get("figure_type") == "idiom"]
        if not idiom_rows and notes is not None:
            notes.append(f"{run.path.name}: no idiom pairs, so no ICE (syntactic flexibility) analysis.")
        groups = idiom_groups(idiom_rows)
        if groups:
            premises: dict[str, list[str]] = defaultdict(list)
            for i, (key, _b) in groups.items():
                if idiom_rows[i]["premise"] not in premises[key]:
                    premises[key].append(idiom_rows[i]["premise"])
            base = {key: b for key, b in groups.values()}
            ice = {key: ice_score(base[key], premises[key]) for key in premises}
            idx = sorted(groups)
            corr = ice_accuracy_correlation(ice, [groups[i][0] for i in idx], [bool(idiom_rows[i]["correct"]) for i in idx])
            if notes is not None:
                notes.append(
                    f"{run.path.name}: ICE (syntactic flexibility) vs accuracy per idiom, Spearman rho = {corr.rho:.3f} "
                    f"(p = {corr.p_value:.3g}) over {corr.n} idioms with at least {corr.min_items} pairs "
                    f"({corr.n_excluded_few_items} with fewer, {corr.n_excluded_no_ice} without an ICE score left out; "
                    f"idiom pairs only: {len(idiom_rows)} of {len(rows)})."
                )
            if corr.n >= 3:
                keys = sorted(corr.ice)
                made.append(
                    plots.plot_ice_scatter(
                        [corr.ice[k] for k in keys],
                        [corr.accuracy[k] for k in keys],
                        [base[k] for k in keys],
                        out / f"{name}_ice.png",
                        rho=corr.rho,
                    )
                )
    return made


def build_report(run_paths: Sequence[str | Path], out: str | Path) -> list[Path]:
    """Write report.md, report.html and PNG plots for the given run folders; returns the written paths."""
    from figlang.metrics import plots

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = [load_run(p, need_predictions=False) for p in run_paths]
    rows = [run_row(r) for r in runs]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    images: list[Path] = []
    acc_runs = [r for r in runs if r.results["metrics"].get("accuracy")]
    if acc_runs:
        labels = [r.path.name for r in acc_runs]  # the table below says what each run is
        accs = [r.results["metrics"]["accuracy"] for r in acc_runs]
        images.append(
            plots.plot_accuracy_bars(
                labels,
                [a["accuracy"] for a in accs],
                [a["ci_low"] for a in accs],
                [a["ci_high"] for a in accs],
                out / "accuracy.png",
                title="Accuracy with 95% bootstrap CI",
            )
        )
    notes: list[str] = []
    for r in runs:
        images += _plots_for_run(r, out, notes)
    md = ["# figlang report", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    md += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in rows]
    header, grid_rows = grid(runs)
    if len(header) > 3:  # more than one task/split: the pivot is what people compare
        md += ["", "## Grid", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        md += ["| " + " | ".join(row) + " |" for row in grid_rows]
    md += [
        "",
        "Accuracy in % with 95% percentile-bootstrap CI. ICE plots group IMPLI idiom variants by word stems "
        "(files do not name base forms): an approximation.",
        "",
    ]
    bare = [r.path.name for r in runs if not r.rows]
    if bare:
        md += [f"Without predictions.jsonl (no per-item plots or analyses): {', '.join(bare)}.", ""]
    md += [f"* {n}" for n in notes] + ([""] if notes else [])
    md += [f"![{p.stem}]({p.name})" for p in images]
    with atomic_write(out / "report.md") as f:
        f.write("\n".join(md) + "\n")
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(row.get(c, '')))}</td>" for c in columns) + "</tr>" for row in rows)
    imgs = "".join(
        f'<figure><img src="{html.escape(p.name)}" alt="{html.escape(p.stem)}"><figcaption>{html.escape(p.stem)}</figcaption></figure>'
        for p in images
    )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>figlang report</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}"
        f"img{{max-width:900px}}</style></head><body><h1>figlang report</h1><table><tr>{head}</tr>{body}</table>{imgs}</body></html>"
    )
    with atomic_write(out / "report.html") as f:
        f.write(page)
    return [out / "report.md", out / "report.html", *images]
