"""IMPLI analyses: ICE, ICE-accuracy correlation, Levenshtein overlap, replaced spans, plots."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from matplotlib.image import imread

from figlang.core.io import iter_tsv
from figlang.data.records import ENTAILMENT, NLIPair
from figlang.metrics.impli_analysis import (
    ice_accuracy_correlation,
    ice_by_idiom,
    ice_score,
    is_base_form,
    levenshtein_overlap,
    overlap_scores,
    overlap_summary,
    replaced_span,
)
from figlang.metrics.plots import place_labels, plot_accuracy_bars, plot_ice_scatter, plot_overlap_histograms


@pytest.fixture(scope="module")
def pie_rows(data_dir: Path) -> list[tuple[int, list[str]]]:
    return list(iter_tsv(data_dir / "impli" / "idioms" / "fig_context_pie_e.tsv"))


def _pair(n: int, premise: str, hypothesis: str, expression: str | None) -> NLIPair:
    return NLIPair(id=str(n), premise=premise, hypothesis=hypothesis, label=ENTAILMENT, expression=expression)


# --------------------------------------------------------------------------------------------
# ICE
# --------------------------------------------------------------------------------------------


def test_ice_hand_computed() -> None:
    sentences = [
        "He spilled the beans.",  # inflected: not base form
        "Don't SPILL THE BEANS!",  # base form (case is ignored)
        "spill  the\nbeans now",  # base form (whitespace is normalised)
        "they spill the bean",  # different form, although a prefix of the base form
    ]
    assert [is_base_form("spill the beans", s) for s in sentences] == [False, True, True, False]
    assert ice_score("spill the beans", sentences) == pytest.approx(0.5)
    assert ice_score("Spill the Beans", sentences[1:3]) == 0.0
    with pytest.raises(ValueError):
        ice_score("spill the beans", [])


def test_ice_by_idiom_counts_each_premise_once() -> None:
    records = [
        _pair(1, "He spilled the beans.", "He told the secret.", "spill the beans"),
        _pair(2, "He spilled the beans.", "He revealed it.", "spill the beans"),  # same occurrence again
        _pair(3, "Don't spill the beans.", "Don't tell.", "spill the beans"),
        _pair(4, "It rained cats and dogs.", "It rained hard.", "rain cats and dogs"),
        _pair(5, "No idiom here.", "None.", None),  # skipped
    ]
    assert ice_by_idiom(records) == pytest.approx({"spill the beans": 0.5, "rain cats and dogs": 1.0})
    assert ice_by_idiom(records, unique_sentences=False)["spill the beans"] == pytest.approx(2 / 3)


def test_ice_on_real_impli_slice(pie_rows) -> None:
    # lines 35-40: "across the board" twice as written, once as "Across-the-board" (hyphens: not the base form)
    rows = [(n, cols) for n, cols in pie_rows if 35 <= n <= 40]
    spans = [replaced_span(cols[0], cols[1])[0] for _, cols in rows]
    assert spans == ["across the board"] * 4 + ["Across-the-board"] * 2
    records = [_pair(n, cols[0], cols[1], "across the board") for n, cols in rows]
    assert ice_by_idiom(records) == pytest.approx({"across the board": 1 / 3})
    # lines 1-3, 41-58 and 346-354: 30 pairs, 10 distinct premises, all with the base form (capitals are ignored)
    along = [_pair(n, c[0], c[1], "all along") for n, c in pie_rows if replaced_span(c[0], c[1])[0].lower() == "all along"]
    assert len(along) == 30 and len({r.premise for r in along}) == 10
    assert ice_by_idiom(along) == {"all along": 0.0}


def test_real_tsv_keeps_quotes(pie_rows) -> None:
    assert len(pie_rows) == 634 and all(len(cols) == 3 for _, cols in pie_rows)
    line, cols = next((n, c) for n, c in pie_rows if n == 32)
    assert cols[0].startswith('"I bear you no ill will') and cols[0].endswith('wife . """')  # quotes left alone
    assert replaced_span(cols[0], cols[1]) == ("tables entirely turned", "turn a position of disadvantage into one of advantage")


# --------------------------------------------------------------------------------------------
# ICE vs accuracy
# --------------------------------------------------------------------------------------------


def test_ice_accuracy_correlation_hand_made() -> None:
    ice = {"a": 0.0, "b": 0.5, "c": 1.0, "d": 0.2}
    idioms = ["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 2 + ["e"] * 6
    correct = [True] * 5 + [True, True, True, False, False] + [True, False, False, False, False] + [True, True] + [True] * 6
    res = ice_accuracy_correlation(ice, idioms, correct, min_items=5)
    # a (ICE 0, acc 1.0), b (0.5, 0.6), c (1.0, 0.2): perfectly decreasing
    assert res.rho == pytest.approx(-1.0)
    assert res.n == 3 and res.n_excluded_few_items == 1 and res.n_excluded_no_ice == 1  # d: 2 items; e: no ICE
    assert res.accuracy == pytest.approx({"a": 1.0, "b": 0.6, "c": 0.2})
    with_d = ice_accuracy_correlation(ice, idioms, correct, min_items=2)
    # ranks x: 1,3,4,2 and y: 3.5,2,1,3.5 -> Pearson on ranks = -4.5 / sqrt(5 * 4.5)
    assert with_d.n == 4 and with_d.rho == pytest.approx(-4.5 / math.sqrt(22.5))
    assert 0 < with_d.p_value < 1


def test_ice_accuracy_correlation_undefined_cases() -> None:
    res = ice_accuracy_correlation({"a": 0.0, "b": 1.0}, ["a", "b"], [True, False], min_items=1)
    assert math.isnan(res.rho) and math.isnan(res.p_value) and res.n == 2  # too few idioms
    with pytest.raises(ValueError):
        ice_accuracy_correlation({}, ["a"], [True, False])


# --------------------------------------------------------------------------------------------
# Lexical overlap
# --------------------------------------------------------------------------------------------


def test_levenshtein_hand_computed() -> None:
    s = levenshtein_overlap("kitten", "sitting")
    assert (s.distance, s.normalized) == (3, pytest.approx(3 / 7))
    w = levenshtein_overlap("the cat sat", "the dog sat", unit="word")
    assert (w.distance, w.normalized) == (1, pytest.approx(1 / 3))
    assert levenshtein_overlap("same", "same").distance == 0
    with pytest.raises(ValueError):
        levenshtein_overlap("a", "b", unit="byte")  # type: ignore[arg-type]


def test_levenshtein_on_real_pairs(pie_rows) -> None:
    (_, a), (_, b) = [(n, c) for n, c in pie_rows if n in (4, 5)]
    # "Commandos were digging in | all over the place | ." vs "... | in many different locations | .": 4 substitutions
    scores = overlap_scores([(a[0], a[1]), (b[0], b[1])], unit="word")
    assert [s.distance for s in scores] == [4, 4]  # line 5: 4 tokens -> 3 unrelated ones: 3 substitutions + 1 deletion
    assert scores[0].normalized == pytest.approx(4 / 9)
    assert levenshtein_overlap(a[0], a[1]).distance > 0


def test_overlap_summary_hand_computed() -> None:
    s = overlap_summary([1, 2, 3, 10, 11, 12], [True, True, True, False, False, False], bins=3)
    assert (s.mean_correct, s.mean_incorrect) == (2.0, 11.0)
    assert (s.n_correct, s.n_incorrect) == (3, 3)
    assert s.u_statistic == 0.0
    assert s.p_value == pytest.approx(0.1)  # exact: 2 * 1 / C(6, 3)
    assert s.bin_edges == pytest.approx((1, 1 + 11 / 3, 1 + 22 / 3, 12))
    assert (s.hist_correct, s.hist_incorrect) == ((3, 0, 0), (0, 0, 3))
    one_sided = overlap_summary([1, 2], [True, True])
    assert math.isnan(one_sided.p_value) and math.isnan(one_sided.mean_incorrect)


# --------------------------------------------------------------------------------------------
# replaced_span
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("premise", "hypothesis", "expected"),
    [
        ("He beat about the bush today.", "He avoided the topic today.", ("beat about the bush", "avoided the topic")),
        ("Same sentence.", "Same sentence.", ("", "")),
        ("I ran.", "I ran fast.", ("", "fast")),
        ("All along, she knew.", "for the entire time, she knew.", ("All along", "for the entire time")),
        ("It's raining cats and dogs!", "It's pouring!", ("raining cats and dogs", "pouring")),
    ],
)
def test_replaced_span_hand_made(premise: str, hypothesis: str, expected: tuple[str, str]) -> None:
    assert replaced_span(premise, hypothesis) == expected


def test_replaced_span_real_lines(pie_rows) -> None:
    got = {n: replaced_span(c[0], c[1]) for n, c in pie_rows if n in (1, 4, 11, 12)}
    assert got[1] == ("All along", "for the entire time")
    assert got[4] == ("all over the place", "in many different locations")
    # shared words at the idiom's edge stay in the suffix: the span is shorter than "from scratch"
    assert got[11] == ("SCRATCH", "the beginning")
    assert got[12] == ("FROM SCRATCH", "completely from the beginning")


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------


def _is_png(path: Path) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(path).shape[:2]
    assert width > 400 and height > 300


def test_plots_render(tmp_path: Path) -> None:
    _is_png(plot_overlap_histograms([3, 4, 5, 5, 6], [9, 12, 15], tmp_path / "a" / "hist.png"))
    _is_png(plot_ice_scatter([0.0, 0.0, 0.5, 1.0], [1.0, 1.0, 0.6, 0.2], ["a", "b", "c", "d"], tmp_path / "ice.png", rho=-0.9))
    _is_png(
        plot_accuracy_bars(
            ["idiom", "simile", "metaphor"], [0.8, 0.7, 0.05], [0.7, 0.6, 0.0], [0.9, 0.8, 0.1], tmp_path / "acc.png", "Accuracy"
        )
    )


def test_labels_of_crowded_points_do_not_overlap() -> None:
    """Thirty long labels on points a hair apart: the placed ones never cover each other or a marker."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = [0.1 + 0.01 * i for i in range(30)]
    ax.scatter(xs, [0.0] * 30)
    ax.scatter([0.5], [0.5], s=400)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.1, 1)
    placed = place_labels(
        ax, [(x, 0.0, f"a rather long idiom {i}", 3.0) for i, x in enumerate(xs)], max_labels=12, markers=[(0.5, 0.5, 10.0)]
    )
    renderer = fig.canvas.get_renderer()
    boxes = [a.get_window_extent(renderer) for a in placed]
    assert 2 <= len(boxes) <= 12
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    centre = ax.transData.transform((0.5, 0.5))
    assert not any(b.contains(*centre) for b in boxes)
    assert all(a.get_text().startswith("a rather long idiom") for a in placed)


def test_plot_inputs_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        plot_ice_scatter([0.1], [0.5, 0.6], ["a"], tmp_path / "x.png")
    with pytest.raises(ValueError):
        plot_accuracy_bars(["a"], [0.5], [0.6], [0.7], tmp_path / "x.png", "t")  # CI does not contain acc
    with pytest.raises(ValueError):
        plot_overlap_histograms([], [], tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


# ---------------------------------------------------------------- edges and messages (issue #35: mutation survivors)


def test_ice_correlation_edges_are_counted_exactly():
    from figlang.metrics.impli_analysis import accuracy_by_idiom

    # a: 5 items (exactly min_items), b: 5, c: 5, d: 4 (too few), e: 5 without an ICE value
    idioms = ["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 4 + ["e"] * 5
    correct = [True] * 5 + [True, True, True, False, False] + [True, False, False, False, False] + [True] * 4 + [False] * 5
    ice = {"a": 0.1, "b": 0.5, "c": 0.9, "d": 0.3}
    r = ice_accuracy_correlation(ice, idioms, correct)
    assert (r.n, r.n_excluded_few_items, r.n_excluded_no_ice, r.min_items) == (3, 1, 1, 5)
    assert r.rho == pytest.approx(-1.0) and r.p_value == pytest.approx(0.0, abs=1e-9)
    assert r.ice == {"a": 0.1, "b": 0.5, "c": 0.9} and r.accuracy == {"a": 1.0, "b": 0.6, "c": 0.2}
    assert ice_accuracy_correlation(ice, idioms, correct, min_items=6).n == 0
    # one constant variable makes Spearman undefined; two distinct values of each make it defined
    flat = ice_accuracy_correlation({"a": 0.5, "b": 0.5, "c": 0.5}, idioms, correct)
    assert math.isnan(flat.rho) and math.isnan(flat.p_value)
    two = ice_accuracy_correlation({"a": 0.1, "b": 0.1, "c": 0.9}, idioms, correct)
    assert not math.isnan(two.rho)
    same_accuracy = ice_accuracy_correlation(ice, ["a"] * 5 + ["b"] * 5 + ["c"] * 5, [True] * 15)
    assert math.isnan(same_accuracy.rho)
    with pytest.raises(ValueError, match="^min_items must be at least 1$"):
        ice_accuracy_correlation(ice, idioms, correct, min_items=0)
    with pytest.raises(ValueError, match="^2 idioms but 3 correctness values$"):
        accuracy_by_idiom(["a", "b"], [True, False, True])


def test_overlap_units_and_defaults():
    assert overlap_scores([("kitten", "sitting")]) == [levenshtein_overlap("kitten", "sitting", "char")]
    assert overlap_scores([("a b c", "a x c")], "word")[0].distance == 1
    with pytest.raises(ValueError, match="^unit must be 'char' or 'word', not 'token'$"):
        levenshtein_overlap("a", "b", "token")  # type: ignore[arg-type]
