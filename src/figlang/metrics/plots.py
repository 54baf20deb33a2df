"""Figures for the analyses: each function takes plain data and writes one PNG (matplotlib, Agg backend).

Each plot is its own Figure on an Agg canvas, never pyplot's global state: safe in tests, on servers
without a display and in threads, and importing this module does not switch the caller's backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["plot_accuracy_bars", "plot_ice_scatter", "plot_overlap_histograms"]

_CORRECT = "#2a7ab9"
_INCORRECT = "#d9622b"


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)  # render with Agg whatever backend the caller uses
    fig.savefig(path, dpi=150, bbox_inches="tight")
    return path


def plot_overlap_histograms(
    correct_dists: Sequence[float],
    incorrect_dists: Sequence[float],
    path: str | Path,
    title: str = "Premise-hypothesis Levenshtein distance by prediction outcome",
    xlabel: str = "Levenshtein distance (characters)",
    bins: int = 20,
) -> Path:
    """Overlaid histograms (same bins) of distances for correct and incorrect predictions, means marked."""
    if not len(correct_dists) and not len(incorrect_dists):
        raise ValueError("no distances to plot")
    both = np.concatenate([np.asarray(correct_dists, float), np.asarray(incorrect_dists, float)])
    edges = np.histogram_bin_edges(both, bins=bins)
    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    for data, colour, name in ((correct_dists, _CORRECT, "correct"), (incorrect_dists, _INCORRECT, "incorrect")):
        data = np.asarray(data, float)
        if len(data):
            ax.hist(data, bins=edges, alpha=0.55, color=colour, edgecolor="white", label=f"{name} (n={len(data)})")
            ax.axvline(data.mean(), color=colour, linestyle="--", linewidth=1.5, label=f"{name} mean = {data.mean():.1f}")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("number of items")
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def plot_ice_scatter(
    ice: Sequence[float],
    acc: Sequence[float],
    labels: Sequence[str],
    path: str | Path,
    title: str = "Idiom flexibility (ICE) vs. accuracy",
    rho: float | None = None,
    max_labels: int = 12,
) -> Path:
    """One point per idiom; idioms sharing a point are drawn as one larger marker so none hides another.

    Per-idiom ICE and accuracy are often ratios of small counts, so many idioms coincide; marker area
    grows with the number of idioms at a point, and only the ``max_labels`` points farthest from the
    centre of the cloud are labelled (with the idiom, or with "k idioms") to keep the plot legible.
    """
    if not (len(ice) == len(acc) == len(labels)):
        raise ValueError(f"ice, acc and labels differ in length ({len(ice)}, {len(acc)}, {len(labels)})")
    if not len(ice):
        raise ValueError("no idioms to plot")
    x, y = np.asarray(ice, float), np.asarray(acc, float)
    points: dict[tuple[float, float], list[str]] = {}
    for xi, yi, label in zip(x, y, labels):
        points.setdefault((round(float(xi), 6), round(float(yi), 6)), []).append(str(label))
    px = np.array([k[0] for k in points])
    py = np.array([k[1] for k in points])
    counts = np.array([len(v) for v in points.values()])
    fig = Figure(figsize=(7.5, 5.2))
    ax = fig.add_subplot()
    sizes = 25 + 22 * (counts - 1)
    ax.scatter(px, py, s=sizes, alpha=0.6, color=_CORRECT, edgecolor="white", linewidth=0.6,
               label=f"idioms (n={len(x)}); area = idioms at that point")
    if len(set(x.tolist())) > 1:
        slope, intercept = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 50)
        ax.plot(xs, slope * xs + intercept, color=_INCORRECT, linewidth=1.5, label="least-squares line")
    order = np.argsort(-np.hypot(px - x.mean(), py - y.mean()))[:max_labels]
    names = list(points.values())
    for k in order:
        text = names[k][0] if counts[k] == 1 else f"{counts[k]} idioms"
        right = px[k] > 0.75
        gap = np.sqrt(sizes[k]) / 2 + 3  # marker radius in points, plus a little air
        ax.annotate(text, (px[k], py[k]), xytext=(-gap if right else gap, 2), textcoords="offset points",
                    ha="right" if right else "left", fontsize=8, alpha=0.9)
    ax.set_title(title if rho is None else f"{title}\n(Spearman rho = {rho:.2f})")
    ax.set_xlabel("ICE score (share of occurrences not in base form)")
    ax.set_ylabel("accuracy on the idiom's items")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.12)
    legend = ax.legend(frameon=True, framealpha=0.9, loc="best", fontsize=8)
    legend.legend_handles[0].set_sizes([30])  # a normal-size marker in the legend, whatever the data
    ax.grid(alpha=0.3)
    return _save(fig, path)


def plot_accuracy_bars(
    groups: Sequence[str],
    accs: Sequence[float],
    ci_low: Sequence[float],
    ci_high: Sequence[float],
    path: str | Path,
    title: str,
    ylabel: str = "accuracy",
) -> Path:
    """Accuracy per group (task, figure type...) with 95% confidence intervals as error bars."""
    n = len(groups)
    if not (n == len(accs) == len(ci_low) == len(ci_high)):
        raise ValueError("groups, accs, ci_low and ci_high must have the same length")
    if not n:
        raise ValueError("no groups to plot")
    a, lo, hi = (np.asarray(v, float) for v in (accs, ci_low, ci_high))
    if np.any(lo > a + 1e-12) or np.any(hi < a - 1e-12):
        raise ValueError("each confidence interval must contain its accuracy (ci_low <= acc <= ci_high)")
    fig = Figure(figsize=(max(5.0, 1.1 * n + 2), 4.5))
    ax = fig.add_subplot()
    xs = np.arange(n)
    ax.bar(xs, a, color=_CORRECT, alpha=0.85, width=0.6, label="accuracy")
    ax.errorbar(xs, a, yerr=[a - lo, hi - a], fmt="none", ecolor="black", capsize=5, linewidth=1.2, label="95% CI")
    for xi, ai, hi_i in zip(xs, a, hi):  # value at the bar's foot (inside) or above the error bar
        inside = ai > 0.12
        ax.text(xi, 0.02 if inside else hi_i + 0.01, f"{ai:.2f}", ha="center", va="bottom",
                fontsize=9, color="white" if inside else "black", fontweight="bold")
    ax.set_xticks(xs)
    # Tilt the labels when they would collide: many bars, or names longer than a bar's width.
    tilt = n > 4 or max(len(str(g)) for g in groups) > 14
    ax.set_xticklabels(groups, rotation=25 if tilt else 0, ha="right" if tilt else "center")
    ax.set_ylim(0, 1.15)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False, loc="upper right", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)
