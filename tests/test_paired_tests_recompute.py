"""The paired tests that README.md and docs/ quote, recomputed from what docs/results commits.

Where both runs' per-item predictions are committed (gzip'd), ``figlang compare``'s API recomputes the test
from them; where a summary records only McNemar's discordant counts (figlang simulatability), the test is
recomputed from those. Each quoted p-value or difference is read from the document, so a figure edited
there, or a change in the statistics code, fails here. The paired tests that cannot be recomputed (their
predictions were deleted; GPU or long CPU runs) are marked ⁿ beside the figure in the docs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from figlang.evaluation.compare import compare_runs
from figlang.evaluation.registry import format_like, matches
from figlang.metrics.significance import mcnemar

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"


def _test(result: dict, prefix: str) -> dict:
    return next(t for t in result["tests"] if t["test"].startswith(prefix))


def test_readme_paper_outputs_baseline_vs_literal():
    """docs/research/paper_outputs.md: `figlang compare` on the paper's baseline vs literal idiom dev predictions."""
    readme = (REPO / "docs/research/paper_outputs.md").read_text(encoding="utf-8")
    m = re.search(r"paired t-test p = ([\d.]+), McNemar exact p = ([\d.]+) on\s+(\d+) items: the \+([\d.]+) points", readme)
    assert m, "docs/research/paper_outputs.md no longer quotes the baseline-vs-literal paired tests"
    t_p, mcnemar_p, n, gain = m.groups()
    out = compare_runs(
        RESULTS / "paper-outputs/idiom-idiom_dev_predictions",
        RESULTS / "paper-outputs/idiom-idiom_literal_dev_predictions",
        n_resamples=1000,
    )
    assert out["n_paired"] == int(n) and out["warnings"] == []
    assert matches(_test(out, "paired t-test")["p_value"], t_p), format_like(_test(out, "paired t-test")["p_value"], t_p)
    exact = _test(out, "McNemar")
    assert exact["exact"] and matches(exact["p_value"], mcnemar_p), format_like(exact["p_value"], mcnemar_p)
    assert matches(100 * (out["b"]["accuracy"] - out["a"]["accuracy"]), gain)
    # one unit off in the last printed digit fails
    assert not matches(exact["p_value"], f"{float(mcnemar_p) + 0.001:.3f}")


SIMULATABILITY = [("simulatability-val120.json", "| 98.33 |", "| 55.00 |"), ("simulatability-val-full.json", "| 95.19 |", "| 59.12 |")]


@pytest.mark.parametrize("file,gold_row,predicted_row", SIMULATABILITY)
def test_simulatability_mcnemar_from_its_discordant_counts(file, gold_row, predicted_row):
    """docs/research/trained_models.md's simulatability tables: McNemar p recomputed from the b/c counts the summary records."""
    doc = (REPO / "docs" / "research" / "trained_models.md").read_text(encoding="utf-8")
    summary = json.loads((RESULTS / "cpu" / file).read_text(encoding="utf-8"))
    for key, cell in (("gold", gold_row), ("predicted", predicted_row)):
        row = next(line for line in doc.splitlines() if cell in line and "points" in line)
        printed = re.findall(r"\d\.\de-\d+", row)[-1]
        test = summary[key]["test"]
        b, c, n = test["b"], test["c"], summary[key]["n"]
        with_r = [True] * b + [False] * c + [True] * (n - b - c)  # the concordant items do not enter McNemar
        without = [False] * b + [True] * c + [True] * (n - b - c)
        again = mcnemar(with_r, without)
        assert (again.b, again.c) == (b, c) and abs(again.p_value - test["p_value"]) <= 1e-12 * max(1.0, test["p_value"])
        assert matches(again.p_value, printed), f"{file} {key}: recomputed {format_like(again.p_value, printed)}, printed {printed}"
        mantissa, exponent = printed.split("e")
        assert not matches(again.p_value, f"{float(mantissa) + 0.1:.1f}e{exponent}")


@pytest.mark.parametrize("kind", ["idiom", "simile"])
def test_probe_vs_few_shot_recomputes_from_committed_predictions(kind):
    """docs/research/trained_models.md's probe-vs-fewshot table: McNemar p, the discordant counts and the paired-bootstrap
    difference (by item and by expression), recomputed by `figlang compare` from the two committed prediction files."""
    doc = (REPO / "docs" / "research" / "trained_models.md").read_text(encoding="utf-8")
    table = doc.split("<!-- results-table: probe-vs-fewshot -->", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith(f"| **{kind}** |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    probe, few_shot = RESULTS / f"cpu/{kind}-probe-qwen-sel/eval/dev-disjoint", RESULTS / f"zs/{kind}-devdisjoint-fewshot-qwen-bf16"
    for cluster, cell in ((None, cells[3]), ("expression", cells[4])):
        out = compare_runs(probe, few_shot, ci_cluster=cluster)
        assert out["warnings"] == [] and out["n_paired"] == {"idiom": 278, "simile": 264}[kind]
        boot = out["bootstrap"]
        low, high = re.findall(r"\[([+-]?[\d.]+), ([+-]?[\d.]+)\]", cell)[0]
        assert matches(100 * boot["ci_low"], low) and matches(100 * boot["ci_high"], high), (cluster, boot, cell)
        if cluster is None:
            diff = cell.split(" [")[0]
            assert matches(100 * boot["mean_difference"], diff), (boot, diff)
            assert not matches(100 * boot["mean_difference"], f"{float(diff) + 0.01:+.2f}")
    assert cells[5] == f"{out['only_a_right']} / {out['only_b_right']}"
    exact = _test(out, "McNemar")
    assert matches(exact["p_value"], cells[6]), format_like(exact["p_value"], cells[6])


@pytest.mark.parametrize("kind", ["idiom", "simile"])
def test_ensemble_vs_members_recomputes_from_committed_predictions(kind):
    """docs/research/trained_models.md's ensemble table: ensemble − probe and ensemble − few-shot (paired bootstrap CI and
    McNemar p), recomputed by `figlang compare` from the three committed prediction files of dev-disjoint."""
    doc = (REPO / "docs" / "research" / "trained_models.md").read_text(encoding="utf-8")
    table = doc.split("<!-- results-table: ensemble-probe-fewshot -->", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith(f"| **{kind}** |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    ensemble = RESULTS / f"ensemble/{kind}-probe-fewshot-qwen"
    members = (RESULTS / f"cpu/{kind}-probe-qwen-sel/eval/dev-disjoint", RESULTS / f"zs/{kind}-devdisjoint-fewshot-qwen-bf16")
    for member, cell in zip(members, cells[5:7]):
        out = compare_runs(ensemble, member)
        assert out["warnings"] == [] and out["n_paired"] == {"idiom": 278, "simile": 264}[kind]
        m = re.fullmatch(r"([+-][\d.]+) \[([+-]?[\d.]+), ([+-]?[\d.]+)\], p = ([\d.]+)", cell)
        assert m, cell
        diff, low, high, p = m.groups()
        boot = out["bootstrap"]
        assert (
            matches(100 * boot["mean_difference"], diff) and matches(100 * boot["ci_low"], low) and matches(100 * boot["ci_high"], high)
        ), (boot, cell)
        assert matches(_test(out, "McNemar")["p_value"], p), (format_like(_test(out, "McNemar")["p_value"], p), cell)
        assert not matches(100 * boot["mean_difference"], f"{float(diff) + 0.01:+.2f}")


# docs/research/meaning_aware.md: each bullet's runs (the chosen one first) and what the doc prints for it
MEANING = [
    ("idiom", "meaning-token", "lm-score-token", None, "**+0.00 points**, 95% CI [−2.52, +2.52] by item"),
    ("idiom", "meaning-token", "lm-score-token", "expression", "[−1.75, +1.79] by expression"),
    ("idiom", "meaning-token", "lm-score-pmi", None, "+2.52 points, 95% CI [−5.04, +9.71]; 61 vs 54"),
    ("simile", "meaning-token", "lm-score-token", None, "**+1.14 points**, 95% CI [−1.14, +3.41] by item"),
    ("simile", "meaning-token", "lm-score-token", "expression", "[−1.13, +3.36] by expression"),
    ("simile", "meaning-token", "lm-score-pmi", None, "+2.27 points, 95% CI [−6.06, +10.98]"),
    ("idiom", "meaning-pmi", "lm-score-pmi", None, "+4.68 points\nover plain `lm-score norm=pmi` (95% CI [+1.80, +7.91]; 17 vs 4"),
    ("simile", "meaning-pmi", "lm-score-pmi", None, "+1.89 points (95% CI [−0.76, +4.92]; 10 vs 5"),
]


@pytest.mark.parametrize("kind,chosen,plain,cluster,quoted", MEANING)
def test_meaning_aware_comparisons_recompute_from_committed_predictions(kind, chosen, plain, cluster, quoted):
    """docs/research/meaning_aware.md's paired comparisons on dev-disjoint (10,000 paired bootstrap resamples, seed 0),
    recomputed from the committed per-item predictions of both runs."""
    doc = (REPO / "docs" / "research" / "meaning_aware.md").read_text(encoding="utf-8")
    assert quoted in doc, quoted
    out = compare_runs(
        RESULTS / f"meaning/dev-disjoint/{kind}-dd-lm-score-{chosen}",
        RESULTS / f"meaning/dev-disjoint/{kind}-dd-{plain}",
        n_resamples=10_000,
        seed=0,
        ci_cluster=cluster,
    )
    assert out["warnings"] == []
    numbers = [x.replace("−", "-") for x in re.findall(r"[+−-]?\d+\.\d+|\d+(?= vs)|(?<=vs )\d+", quoted)]
    boot = out["bootstrap"]
    if cluster is None:
        assert matches(100 * boot["mean_difference"], numbers[0]), (boot, quoted)
        numbers = numbers[1:]
    assert matches(100 * boot["ci_low"], numbers[0]) and matches(100 * boot["ci_high"], numbers[1]), (boot, quoted)
    if len(numbers) > 2:  # "17 vs 4": items right only with the meaning line, only without
        assert (out["only_a_right"], out["only_b_right"]) == (int(numbers[2]), int(numbers[3]))


def test_meaning_aware_mcnemar_p_values_recompute():
    doc = (REPO / "docs" / "research" / "meaning_aware.md").read_text(encoding="utf-8")
    for kind, chosen, plain, printed in (
        ("idiom", "meaning-token", "lm-score-token", "1"),
        ("simile", "meaning-token", "lm-score-token", "0.55"),
        ("idiom", "meaning-pmi", "lm-score-pmi", "0.007"),
        ("simile", "meaning-pmi", "lm-score-pmi", "0.30"),
    ):
        assert f"p = {printed}" in doc
        out = compare_runs(
            RESULTS / f"meaning/dev-disjoint/{kind}-dd-lm-score-{chosen}", RESULTS / f"meaning/dev-disjoint/{kind}-dd-{plain}"
        )
        p = _test(out, "McNemar")["p_value"]
        assert matches(p, printed), (kind, chosen, format_like(p, printed))


def test_flute_explanations_simulatability_from_its_discordant_counts():
    """docs/research/flute_explanations.md: the generated explanations' simulatability and its McNemar p, recomputed from the
    b/c counts that docs/results/cpu/simulatability-val-explain-k6.json records."""
    doc = (REPO / "docs" / "research" / "flute_explanations.md").read_text(encoding="utf-8")
    summary = json.loads((RESULTS / "cpu" / "simulatability-val-explain-k6.json").read_text(encoding="utf-8"))
    table = doc.split("<!-- results-table: simulatability-explain-k6 -->", 1)[1]
    for key, start in (("gold", "| gold (FLUTE's explanations) |"), ("predicted", "| figlang's explanations")):
        row = next(line for line in table.splitlines() if line.startswith(start))
        cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
        test = summary[key]["test"]
        b, c, n = test["b"], test["c"], summary[key]["n"]
        again = mcnemar([True] * b + [False] * c + [True] * (n - b - c), [False] * b + [True] * c + [True] * (n - b - c))
        assert matches(again.p_value, cells[4]), (key, format_like(again.p_value, cells[4]))
        assert matches(100 * (summary[key]["accuracy_with_rationale"] - summary[key]["accuracy_without_rationale"]), cells[3])


@pytest.mark.parametrize("knowledge", ["literal", "context"])
@pytest.mark.parametrize("split,column", [("dev-disjoint", 1), ("dev", 2)])
def test_minilm_knowledge_vs_mc_recomputes_from_committed_predictions(knowledge, split, column):
    """docs/research/trained_models.md's CPU mc-literal / mc-context tables: the re-made pair's difference, paired bootstrap CI and
    McNemar p, recomputed by `figlang compare` from both runs' committed predictions."""
    doc = (REPO / "docs" / "research" / "trained_models.md").read_text(encoding="utf-8")
    table = doc.split(f"<!-- results-table: mc-{knowledge}-cpu -->", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith("| difference [paired bootstrap CI], McNemar p (re-made runs) |"))
    cell = [c.strip() for c in row.strip("|").split("|")][column]
    m = re.fullmatch(r"([+−-][\d.]+) \[([+−-]?[\d.]+), ([+−-]?[\d.]+)\], p = ([\d.]+)", cell)
    assert m, cell
    diff, low, high, p = (x.replace("−", "-") for x in m.groups())
    out = compare_runs(RESULTS / f"cpu/idiom-mc-{knowledge}-minilm-sel/eval/{split}", RESULTS / f"cpu/idiom-mc-minilm-sel/eval/{split}")
    assert out["warnings"] == [] and out["n_paired"] == {"dev-disjoint": 278, "dev": 355}[split]
    boot = out["bootstrap"]
    assert matches(100 * boot["mean_difference"], diff) and matches(100 * boot["ci_low"], low) and matches(100 * boot["ci_high"], high), (
        boot,
        cell,
    )
    assert matches(_test(out, "McNemar")["p_value"], p), (format_like(_test(out, "McNemar")["p_value"], p), cell)
    assert not matches(_test(out, "McNemar")["p_value"], f"{float(p) + 10 ** -len(p.split('.')[1]):.{len(p.split('.')[1])}f}")
