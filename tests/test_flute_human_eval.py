"""FLUTE's human evaluation as a round trip: export two systems' explanations, import judgements written by hand,
and check the H score, Yes/No %, shortcoming rates, Krippendorff's alpha and the Wilcoxon test against figures
worked out by hand below.

The two systems are real figlang runs on FLUTE val (prediction files scored by the harness): ``gold-copy`` gives
the gold label and the gold explanation; ``template`` gives a fixed template explanation and the wrong label on
every tenth pair (those pairs may never be sampled: an explanation of a wrong label cannot justify it).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from figlang.core.errors import DataError
from figlang.data.registry import get_task
from figlang.evaluation import score_predictions_file
from figlang.evaluation.runs import load_run
from figlang.metrics.flute_human_eval import (
    FluteJudgement,
    export_flute_for_judges,
    import_flute_judgements,
    load_flute_key,
    sample_flute_items,
    summarize_flute_human,
)

FLIP = {"entailment": "contradiction", "contradiction": "entailment"}

# The seeded sample of 2 pairs per figure type (seed 13), in the recorded order, and the template system's
# judgements written by hand: three judges each, (rating, shortcomings). The rating sums per item (No=0 .. Yes=3)
# are 1, 2, ..., 8, so the template's per-item e-ViL scores are 1/9 .. 8/9 (mean 1/2: H = 50.0).
TEMPLATE = {
    "val-124": [
        ("No", ["Untrue to Input", "Violates Common Sense"]),
        ("No", ["untrue_to_input"]),
        ("Weak No", ["Insufficient Justification"]),
    ],
    "val-348": [("No", ["Untrue to Input"]), ("weak no", ["Insufficient Justification"]), ("Weak No", ["Insufficient Justification"])],
    "val-201": [("Weak No", ["Insufficient Justification"])] * 3,
    "val-347": [("Weak No", ["Insufficient Justification"]), ("Weak No", ["Insufficient Justification"]), ("Weak Yes", [])],
    "val-407": [("Weak No", ["Insufficient Justification"]), ("Weak Yes", []), ("WEAK_YES", [])],
    "val-299": [("Weak Yes", ["Too Trivial"])] * 3,
    "val-459": [("Weak Yes", []), ("Weak Yes", []), ("Yes", [])],
    "val-154": [("Weak Yes", []), ("Yes", []), ("Yes", [])],
}
FIGURES = {
    "val-124": "simile",
    "val-348": "idiom",
    "val-201": "metaphor",
    "val-347": "sarcasm",
    "val-407": "metaphor",
    "val-299": "simile",
    "val-459": "sarcasm",
    "val-154": "idiom",
}
JUDGES = ("ann", "bo", "cy")


@pytest.fixture(scope="module")
def runs(data_dir: Path, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("flute-human")
    val = get_task("flute").load("val", data_dir)
    systems = {
        "gold-copy": [{"id": r.id, "prediction": r.label, "explanation": r.explanation} for r in val],
        "template": [
            {
                "id": r.id,
                "prediction": FLIP[r.label] if i % 10 == 0 else r.label,
                "explanation": f"The hypothesis says the premise again with a {r.figure_type}.",
            }
            for i, r in enumerate(val)
        ],
    }
    for name, rows in systems.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        score_predictions_file(path, "flute", "val", data_dir, out_dir=root / name)
    return root


def _answers(key_path: Path) -> list[dict]:
    """What a judging form writes: one row per item and judge, answers by display position (from the key)."""
    rows = []
    for item_id, entry in load_flute_key(key_path).items():
        for n, judge in enumerate(JUDGES):
            row = {"item_id": item_id, "judge": judge}
            for k, system in enumerate(entry.systems, start=1):
                rating, shortcomings = ("Yes", []) if system == "gold-copy" else TEMPLATE[item_id][n]
                row[f"rating_{k}"], row[f"shortcomings_{k}"] = rating, shortcomings
            rows.append(row)
    return rows


def _reference_alpha(units: dict, metric: str) -> float:
    """Krippendorff's alpha from its coincidence matrix, written out here independently of the library."""
    values = sorted({v for u in units.values() for v in u})
    o = Counter()
    for ratings in units.values():
        m = len(ratings)
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            o[(ratings[i], ratings[j])] += 1 / (m - 1)
    n_c = {c: sum(o[(c, k)] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c, k):
        if metric == "nominal":
            return 0.0 if c == k else 1.0
        lo, hi = min(c, k), max(c, k)
        return (sum(n_c[g] for g in values if lo <= g <= hi) - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(o[(c, k)] * delta(c, k) for c in values for k in values)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    return 1 - observed / expected


def test_round_trip_with_hand_written_judgements(runs: Path, tmp_path: Path) -> None:
    sample = sample_flute_items({n: load_run(runs / n).rows for n in ("gold-copy", "template")}, per_type=2, seed=13)
    assert [(i.item_id, i.figure_type) for i in sample.items] == list(FIGURES.items())  # the seeded sample is stable
    paths = export_flute_for_judges(sample, tmp_path / "he")
    judges_view = paths.items_jsonl.read_text() + paths.items_csv.read_text()
    assert "gold-copy" not in judges_view and "template" not in judges_view  # judges never see system names
    key = load_flute_key(paths.key_jsonl)
    assert Counter(e.systems[0] for e in key.values()) == {"gold-copy": 6, "template": 2}  # order randomised per item, recorded
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in _answers(paths.key_jsonl)))
    judgements = import_flute_judgements(answers, paths.key_jsonl)
    assert len(judgements) == 8 * 3 * 2
    s = summarize_flute_human(judgements)
    gold, tmpl = s.scores["gold-copy"], s.scores["template"]
    assert gold.h_score == pytest.approx(100.0) and gold.yes_pct == 100.0 and gold.no_pct == 0.0
    # template: mean of 1/9 .. 8/9 = 1/2; ratings 3 No, 9 Weak No, 9 Weak Yes, 3 Yes of 24
    assert tmpl.h_score == pytest.approx(50.0)
    assert tmpl.rating_pct == pytest.approx({"Yes": 12.5, "Weak Yes": 37.5, "Weak No": 37.5, "No": 12.5})
    assert tmpl.shortcoming_pct == pytest.approx(
        {
            "Insufficient Justification": 37.5,
            "Too Trivial": 12.5,
            "Too Verbose": 0.0,
            "Untrue to Input": 12.5,
            "Violates Common Sense": 100 / 24,
        }
    )
    # by figure type: simile (1+6)/18, idiom (2+8)/18, metaphor (3+5)/18, sarcasm (4+7)/18
    assert {f: v["h_score"] for f, v in tmpl.by_figure_type.items()} == pytest.approx(
        {"simile": 700 / 18, "idiom": 1000 / 18, "metaphor": 800 / 18, "sarcasm": 1100 / 18}
    )
    assert all(v["n_items"] == 2 for v in tmpl.by_figure_type.values())
    # Wilcoxon: 8 distinct positive differences 8/9 .. 1/9, so W- = 0 and the exact two-sided p = 2 / 2^8
    (comparison,) = s.comparisons
    assert comparison["wilcoxon"]["statistic"] == 0.0 and comparison["wilcoxon"]["p_value"] == pytest.approx(2 / 256)
    assert comparison["h_difference"] == pytest.approx(50.0) and comparison["n_items"] == 8
    rank = {"No": 0, "Weak No": 1, "Weak Yes": 2, "Yes": 3}
    norm = {"weak no": "Weak No", "WEAK_YES": "Weak Yes"}
    units = {(i, "gold-copy"): [3, 3, 3] for i in TEMPLATE}
    units.update({(i, "template"): [rank[norm.get(r, r)] for r, _ in TEMPLATE[i]] for i in TEMPLATE})
    assert s.alpha_nominal == pytest.approx(_reference_alpha(units, "nominal"))
    assert s.alpha_ordinal == pytest.approx(_reference_alpha(units, "ordinal"))
    assert s.alpha_ordinal > s.alpha_nominal  # the template's judges disagree by one step more often than by three

    # the same answers as CSV (shortcomings ';'-separated) give the same summary
    rows = _answers(paths.key_jsonl)
    csv_path = tmp_path / "answers.csv"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["item_id", "judge", "rating_1", "shortcomings_1", "rating_2", "shortcomings_2"])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ";".join(v) if isinstance(v, list) else v for k, v in row.items()})
    assert summarize_flute_human(import_flute_judgements(csv_path, paths.key_jsonl)).to_dict() == s.to_dict()


def test_alpha_worked_by_hand() -> None:
    """Two units: (Yes, Yes, No) and (No, No, No). Coincidences o(Y,Y)=1, o(Y,N)=o(N,Y)=1, o(N,N)=3; n_Y=2, n_N=4,
    n=6. D_o = 2/6, D_e = 2·2·4/(6·5) = 8/15, alpha = 1 - (1/3)/(8/15) = 3/8 (ordinal too: only two values occur)."""
    j = [
        FluteJudgement("u1", "a", "s", "idiom", "yes", ()),
        FluteJudgement("u1", "b", "s", "idiom", "yes", ()),
        FluteJudgement("u1", "c", "s", "idiom", "no", ()),
        *(FluteJudgement("u2", x, "s", "idiom", "no", ()) for x in "abc"),
    ]
    j += [FluteJudgement(u, x, "t", "idiom", "weak yes", ()) for u in ("u1", "u2") for x in "abc"]
    s = summarize_flute_human(j, systems=["s", "t"])
    # units of system t are all Weak Yes: add their coincidences (o(WY,WY) = 6) to the hand computation:
    # n_Y=2, n_N=4, n_WY=6, n=12; D_o = 2/12; nominal D_e = 2·(2·4 + 2·6 + 4·6)/(12·11) = 88/132 = 2/3; alpha = 1 - 1/4
    assert s.alpha_nominal == pytest.approx(3 / 4)
    s_only = summarize_flute_human([x for x in j if x.system == "s"])
    assert s_only.alpha_nominal == pytest.approx(3 / 8) and s_only.alpha_ordinal == pytest.approx(3 / 8)
    assert s.scores["s"].h_score == pytest.approx(100 * (2 / 3 + 0) / 2) and s.scores["t"].h_score == pytest.approx(200 / 3)


def test_require_correct_and_sample_size(runs: Path) -> None:
    rows = {n: load_run(runs / n).rows for n in ("gold-copy", "template")}
    sample = sample_flute_items(rows, per_type=50, seed=13)
    assert len(sample.items) == 200 and Counter(i.figure_type for i in sample.items) == {f: 50 for f in FIGURES.values()}
    wrong = {r["id"] for r in rows["template"] if not r["correct"]}
    assert wrong and not wrong & {i.item_id for i in sample.items}
    assert sample.eligible == {"sarcasm": 250, "simile": 67, "metaphor": 65, "idiom": 67}
    again = sample_flute_items(rows, per_type=50, seed=13)
    assert [i.item_id for i in again.items] == [i.item_id for i in sample.items]
    assert [i.item_id for i in sample_flute_items(rows, per_type=50, seed=14).items] != [i.item_id for i in sample.items]
    anything = sample_flute_items(rows, per_type=70, seed=13, require_correct=False)
    assert wrong & {i.item_id for i in anything.items}
    with pytest.raises(
        DataError, match="only 67 simile, 65 metaphor, 67 idiom pairs that every system labelled correctly and explained; 70 of each"
    ):
        sample_flute_items(rows, per_type=70, seed=13)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows[0].update(rating_1="Maybe"), r"rating 'Maybe' is not one of: Yes, Weak Yes, Weak No, No"),
        (lambda rows: rows[0].update(rating_1="Yes", shortcomings_1=["Too Verbose"]), "shortcomings are for answers other than Yes"),
        (lambda rows: rows[0].update(rating_1="No", shortcomings_1=["Too Long"]), "unknown shortcoming 'Too Long'"),
        (lambda rows: rows[0].update(rating_1="No", shortcomings_1=["Too Verbose", "too verbose"]), "given twice"),
        (lambda rows: rows[0].pop("rating_2"), "missing 'rating_2'"),
        (lambda rows: rows[0].update(rating_3="Yes"), "shows 2 explanations but the row answers rating_3"),
        (lambda rows: rows[1].update(judge=rows[0]["judge"]), "answered item 'val-124' twice"),
        (lambda rows: rows[0].update(item_id="val-9999"), "unknown item id 'val-9999'"),
        (lambda rows: rows.pop(), "has answers from 2 judge"),
        (lambda rows: [rows.pop() for _ in range(3)], r"missing answers: 1 item\(s\) of the key have none \('val-154'\)"),
    ],
)
def test_bad_judgement_files_are_clear_errors(runs: Path, tmp_path: Path, change, message) -> None:
    sample = sample_flute_items({n: load_run(runs / n).rows for n in ("gold-copy", "template")}, per_type=2, seed=13)
    paths = export_flute_for_judges(sample, tmp_path / "he")
    rows = _answers(paths.key_jsonl)
    change(rows)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=message) as err:
        import_flute_judgements(answers, paths.key_jsonl)
    assert "answers.jsonl" in str(err.value)


def _figlang(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"}
    )


def test_cli_round_trip(runs: Path, tmp_path: Path) -> None:
    run = _figlang("human", "flute-export", str(runs / "gold-copy"), str(runs / "template"), "-o", str(tmp_path / "he"), "--per-type", "2")
    assert run.returncode == 0, run.stderr
    he = tmp_path / "he"
    manifest = json.loads((he / "flute_human_eval_manifest.json").read_text())
    assert (
        manifest["seed"] == 13
        and manifest["per_figure_type"] == {f: 2 for f in FIGURES.values()}
        and manifest["systems"] == ["gold-copy", "template"]
    )
    assert set(manifest["provenance"]["runs"]) == {"gold-copy", "template"}
    with open(he / "flute_human_eval_items.csv", newline="") as f:
        items = list(csv.DictReader(f))
    assert [r["item_id"] for r in items] == list(FIGURES) and set(items[0]) >= {"premise", "hypothesis", "label_1", "explanation_2"}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in _answers(he / "flute_human_eval_key.jsonl")))
    run = _figlang(
        "human", "flute-import", str(answers), "--key", str(he / "flute_human_eval_key.jsonl"), "-o", str(tmp_path / "summary.json")
    )
    assert run.returncode == 0, run.stderr
    assert max(len(line) for line in run.stdout.splitlines()) <= 100
    assert "Wilcoxon signed-rank p = 0.007812" in run.stdout and "+50.0" in run.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["scores"]["template"]["h_score"] == pytest.approx(50.0) and summary["scores"]["gold-copy"]["yes_pct"] == 100.0
    assert len(summary["provenance"]["answers_sha256"]) == 64
    # bad input: a clear error, no traceback
    answers.write_text(answers.read_text().replace('"Weak Yes"', '"Sort of"', 1))
    run = _figlang("human", "flute-import", str(answers), "--key", str(he / "flute_human_eval_key.jsonl"))
    assert run.returncode != 0 and "Traceback" not in run.stderr and "'Sort of' is not one of" in run.stderr + run.stdout


def test_pairwise_comparisons_for_more_systems() -> None:
    j = [FluteJudgement(f"i{k}", "a", s, "idiom", r, ()) for k in range(3) for s, r in (("x", "yes"), ("y", "no"), ("z", "weak no"))]
    s = summarize_flute_human(j)
    assert [(c["a"], c["b"]) for c in s.comparisons] == list(combinations(("x", "y", "z"), 2))
    assert s.alpha_nominal != s.alpha_nominal  # one judge: agreement is undefined (NaN), not an error
