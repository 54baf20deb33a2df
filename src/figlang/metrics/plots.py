"""Figures for the analyses: each function takes plain data and writes one PNG (matplotlib, Agg backend).

Each plot is its own Figure on an Agg canvas, never pyplot's global state: safe in tests, on servers
without a display and in threads, and importing this module does not switch the caller's backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["place_labels", "plot_accuracy_bars", "plot_ice_scatter", "plot_overlap_histograms"]

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
    for dists, colour, name in ((correct_dists, _CORRECT, "correct"), (incorrect_dists, _INCORRECT, "incorrect")):
        data = np.asarray(dists, float)
        if len(data):
            # bins: an array of edges, which hist takes though its annotation names only sequences
            ax.hist(data, bins=edges, alpha=0.55, color=colour, edgecolor="white", label=f"{name} (n={len(data)})")  # type: ignore[arg-type]
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
    grows with the number of idioms at a point. Up to ``max_labels`` points are labelled (with the
    idiom, or with "k idioms"), those farthest from the centre of the cloud first, each only where
    its label overlaps no other label (:func:`place_labels`).
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
    ax.scatter(
        px,
        py,
        s=sizes,
        alpha=0.6,
        color=_CORRECT,
        edgecolor="white",
        linewidth=0.6,
        label=f"idioms (n={len(x)}); area = idioms at that point",
    )
    if len(set(x.tolist())) > 1:
        slope, intercept = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 50)
        ax.plot(xs, slope * xs + intercept, color=_INCORRECT, linewidth=1.5, label="least-squares line")
    ax.set_title(title if rho is None else f"{title}\n(Spearman rho = {rho:.2f})")
    ax.set_xlabel("ICE score (share of occurrences not in base form)")
    ax.set_ylabel("accuracy on the idiom's items")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.12)
    # below the axes: "best" would be chosen again at save time, after the labels are placed
    legend = ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8)
    # a normal-size marker in the legend, whatever the data (the first handle is the scatter's PathCollection)
    legend.legend_handles[0].set_sizes([30])  # type: ignore[union-attr]
    order = np.argsort(-np.hypot(px - x.mean(), py - y.mean()))
    names = list(points.values())
    candidates = [(px[k], py[k], names[k][0] if counts[k] == 1 else f"{counts[k]} idioms", float(np.sqrt(sizes[k]) / 2)) for k in order]
    markers = [(float(a), float(b), float(np.sqrt(c) / 2)) for a, b, c in zip(px, py, sizes)]
    place_labels(ax, candidates, max_labels=max_labels, markers=markers)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def place_labels(
    ax: Any,
    candidates: Sequence[tuple[float, float, str, float]],
    max_labels: int = 12,
    markers: Sequence[tuple[float, float, float]] = (),
) -> list[Any]:
    """Label points, most important first, each where its box covers no other label and no marker.

    ``candidates`` are (x, y, text, marker radius in points) in priority order; ``markers`` are the
    plot's markers as (x, y, radius in points), which labels must not cover either. Each label tries
    eight spots around its point (right, left, above, below, then the diagonals) and is dropped when
    none is free and inside the axes: a plot with fewer readable labels beats one whose labels print
    over each other. Returns the placed annotations.
    """
    from matplotlib.transforms import Bbox

    fig = ax.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    to_pixels = fig.dpi / 72.0
    taken: list[Any] = []
    for mx, my, radius in markers:
        cx, cy = ax.transData.transform((mx, my))
        r = radius * to_pixels
        taken.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))
    placed: list[Any] = []
    for x, y, text, radius in candidates:
        if len(placed) >= max_labels:
            break
        gap = radius + 3  # the marker's radius in points, plus a little air
        spots = [
            (gap, -3, "left", "baseline"),
            (-gap, -3, "right", "baseline"),
            (0, gap, "center", "bottom"),
            (0, -gap, "center", "top"),
            (gap, gap, "left", "bottom"),
            (-gap, gap, "right", "bottom"),
            (gap, -gap, "left", "top"),
            (-gap, -gap, "right", "top"),
        ]
        for dx, dy, ha, va in spots:
            note = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=8, alpha=0.9)
            box = note.get_window_extent(renderer).padded(1)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box)
                placed.append(note)
                break
            note.remove()
    return placed


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
        ax.text(
            float(xi),
            0.02 if inside else hi_i + 0.01,
            f"{ai:.2f}",
            ha="center",
            va="bottom",
            fontsize=9,
            color="white" if inside else "black",
            fontweight="bold",
        )
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
