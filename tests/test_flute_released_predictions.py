"""Scoring other people's FLUTE outputs: the FLUTE repository's released prediction files, as published.

They are one JSON array per figure type (``modelpredictions/{sarcasm,simile,metaphor,idiom}.json``), rows
``{"id", "premise", "hypothesis", "predicted_label", "model_explanation"}`` where one ``id`` is shared by the
pairs of a premise family. The fixtures (tests/fixtures/flute_released_predictions, written for these tests)
have that shape: pretty-printed arrays, ids shared, rows in another order than the gold, stray whitespace in
some premises, both pairs of idiom 14 answered "Entailment" as in the released idiom file, and simile 10's two
premises saying "silver" where the corrected gold says "sliver", as the released simile file does. Against the
made-up gold of tests/fixtures/flute_test_gold the right answers are: sarcasm 4/5, simile 6/6, metaphor 3/4,
idiom 3/4 (16 of 19).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from figlang.core.errors import DataError, FiglangError
from figlang.evaluation import score_predictions_file
from figlang.evaluation.predictions import read_predictions

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "flute_released_predictions"
FILES = [FIXTURE / f"{figure}.json" for figure in ("sarcasm", "simile", "metaphor", "idiom")]
EXPECTED = {"sarcasm": (4, 5), "simile": (6, 6), "metaphor": (3, 4), "idiom": (3, 4)}


def _by_figure(metrics: dict) -> dict[str, tuple[int, int]]:
    return {k: (v["n_correct"], v["n"]) for k, v in metrics["by_figure_type"].items()}


def test_the_four_released_files_score_as_the_whole_test_set(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    result = score_predictions_file(FILES, "flute", "test", flute_gold_data_dir, out_dir=tmp_path / "run")
    m = result.metrics
    assert m["coverage"] == {"gold_items": 19, "predicted": 19}
    assert (m["accuracy"]["n_correct"], m["accuracy"]["n"]) == (16, 19)
    assert _by_figure(m) == EXPECTED
    assert result.problems.summary() == "1 explanations are empty (e.g. sarcasm-3-1)"
    # simile 10's rows say "silver" where the gold says "sliver": matched, each to its own pair, and noted
    assert result.problems.near_matches == [
        "simile.json:30 → simile-10-1 ('silver.' → 'sliver.', 2 character edits)",
        "simile.json:37 → simile-10-0 ('silver.' → 'sliver.', 2 character edits)",
    ]
    preds = result.predictions
    # the siblings of idiom 14 keep their own answers: the contradicting pair's "Entailment" is wrong
    assert preds["idiom-14-0"].explanation.endswith("and she revealed it.")
    assert preds["idiom-14-1"].explanation.endswith("the secret was about the party.")
    rows = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()}
    assert rows["idiom-14-0"]["correct"] is True and rows["idiom-14-1"]["correct"] is False
    assert rows["simile-10-0"]["prediction"] == "entailment" and rows["simile-10-1"]["prediction"] == "contradiction"
    assert rows["simile-10-0"]["explanation"].startswith("A closing eye narrows")
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["problems"]["near_matches"]["count"] == 2
    fingerprint = results["method"]["fingerprint"]
    assert fingerprint["format"] == "flute-submission" and [f["file"] for f in fingerprint["files"]] == [str(p) for p in FILES]
    assert all(len(f["sha256"]) == 64 for f in fingerprint["files"])


def test_a_folder_is_the_same_submission(flute_gold_data_dir: Path) -> None:
    as_files = score_predictions_file(FILES, "flute", "test", flute_gold_data_dir)
    as_folder = score_predictions_file(FIXTURE, "flute", "test", flute_gold_data_dir)
    assert as_folder.metrics["accuracy"] == as_files.metrics["accuracy"]
    assert {k: p.prediction for k, p in as_folder.predictions.items()} == {k: p.prediction for k, p in as_files.predictions.items()}


def test_one_released_file_scores_its_figure_type(flute_gold_data_dir: Path) -> None:
    m = score_predictions_file(FIXTURE / "idiom.json", "flute-idiom", "test", flute_gold_data_dir).metrics
    assert (m["accuracy"]["n_correct"], m["accuracy"]["n"]) == (3, 4)
    with pytest.raises(FiglangError, match="15 gold items have no prediction"):
        score_predictions_file(FIXTURE / "idiom.json", "flute", "test", flute_gold_data_dir)
    partial = score_predictions_file(FIXTURE / "idiom.json", "flute", "test", flute_gold_data_dir, allow_partial=True)
    assert partial.metrics["coverage"] == {"gold_items": 19, "predicted": 4}


def test_matching_is_by_premise_and_hypothesis_never_by_the_shared_id(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    """Swap the ids of the two idiom families and reverse the rows: the answers must follow the sentences."""
    from figlang.data.registry import get_task

    rows = json.loads((FIXTURE / "idiom.json").read_text())
    for row in rows:
        row["id"] = {14: 21, 21: 14}[row["id"]]
    path = tmp_path / "idiom.json"
    path.write_text(json.dumps(rows[::-1], indent=2))
    records = get_task("flute-idiom").load("test", flute_gold_data_dir)
    preds, problems, fmt = read_predictions(path, records, ("entailment", "contradiction"))
    assert fmt == "flute-submission" and not problems.blocking
    assert {k: p.prediction for k, p in preds.items()} == {
        "idiom-14-0": "entailment",
        "idiom-14-1": "entailment",
        "idiom-21-0": "entailment",
        "idiom-21-1": "contradiction",
    }
    # a row whose sentences are in no gold pair matches nothing, whatever its id says
    rows.append({**rows[0], "premise": "A sentence that is in no gold pair."})
    path.write_text(json.dumps(rows, indent=4))
    _preds, problems, _fmt = read_predictions(path, records, ("entailment", "contradiction"))
    assert problems.unknown == ["idiom.json:30"]  # the line the fifth element opens on (1 + 4 × 7 + 1)


def test_a_row_without_sentences_is_refused_with_its_line(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    from figlang.data.registry import get_task

    rows = json.loads((FIXTURE / "simile.json").read_text())
    del rows[2]["premise"]
    path = tmp_path / "simile.json"
    path.write_text(json.dumps(rows, indent=4))
    records = get_task("flute-simile").load("test", flute_gold_data_dir)
    with pytest.raises(DataError, match=r"simile\.json:16: a FLUTE submission row needs premise\+hypothesis"):
        read_predictions(path, records, ("entailment", "contradiction"))


def test_malformed_arrays_and_mixed_formats_are_clear_errors(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "metaphor.json"
    bad.write_text((FIXTURE / "metaphor.json").read_text().replace('"Entailment",', '"Entailment"', 1))
    with pytest.raises(DataError, match=r"metaphor\.json:7: malformed JSON array \(Expecting ',' delimiter"):
        score_predictions_file(bad, "flute-metaphor", "test", flute_gold_data_dir)
    not_objects = tmp_path / "numbers.json"
    not_objects.write_text("[1, 2]")
    with pytest.raises(DataError, match="element 1 of the JSON array should be an object"):
        score_predictions_file(not_objects, "flute-metaphor", "test", flute_gold_data_dir)
    figlang_rows = tmp_path / "ours.jsonl"
    figlang_rows.write_text(json.dumps({"id": "metaphor-2-0", "prediction": "entailment"}) + "\n")
    with pytest.raises(FiglangError, match="different formats"):
        score_predictions_file([FIXTURE / "sarcasm.json", figlang_rows], "flute", "test", flute_gold_data_dir)
    with pytest.raises(FiglangError, match="given twice"):
        score_predictions_file([FIXTURE / "sarcasm.json", FIXTURE / "sarcasm.json"], "flute", "test", flute_gold_data_dir)


def test_explanation_metrics_come_from_model_explanation(flute_gold_data_dir: Path, minilm_path: Path, tmp_path: Path) -> None:
    """Acc@0/50/60 with offline stand-in metric models (MiniLM for BERTScore and for BLEURT's encoder with a seeded
    head): not the paper's numbers, but every item's explanation score must be its own row's model_explanation
    against its own gold explanation."""
    from figlang.data.registry import get_task
    from figlang.evaluation.scoring import MetricOptions
    from figlang.metrics import BertScore, Bleurt

    options = MetricOptions(bertscore_model=str(minilm_path), bertscore_layers=6, bleurt_checkpoint=str(minilm_path), bleurt_head_seed=0)
    result = score_predictions_file(FILES, "flute", "test", flute_gold_data_dir, metric_options=options, out_dir=tmp_path / "run")
    exp = result.metrics["explanations"]
    assert exp["computed"] and exp["comparable_to_published"] is False and exp["n"] == 19
    assert exp["acc@0"] == pytest.approx(16 / 19)  # shared-task Acc@0: the right label counts whatever the score
    assert exp["acc@50"] <= exp["acc@0"] and exp["acc@60"] <= exp["acc@50"]
    assert {k: v["n"] for k, v in exp["by_figure_type"].items()} == {f: n for f, (_c, n) in EXPECTED.items()}
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    scores = {row["id"]: row["explanation_score"] for row in rows if "explanation_score" in row}
    assert len(scores) == 19
    assert scores["sarcasm-3-1"] == 0.0  # empty model_explanation scores 0
    gold = {r.id: r for r in get_task("flute").load("test", flute_gold_data_dir)}
    bertscore, bleurt = BertScore(minilm_path, num_layers=6, device="cpu"), Bleurt(minilm_path, untrained_head_seed=0, device="cpu")
    for rid in ("idiom-14-0", "metaphor-2-0", "simile-9-1"):
        candidate, reference = result.predictions[rid].explanation, gold[rid].explanation
        f1 = bertscore.score_pairs([candidate], [reference])[0]
        b = bleurt.score_pairs([candidate], [reference])[0]
        assert scores[rid] == float(int(50 * (f1 + b))), rid
    assert result.predictions["metaphor-2-0"].explanation == gold["metaphor-2-0"].explanation


def test_cli_scores_the_released_files(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    base = [sys.executable, "-m", "figlang.cli.main", "eval", "-t", "flute", "-s", "test", "--data-dir", str(flute_gold_data_dir)]
    repeated = subprocess.run(
        base + [x for p in FILES for x in ("-p", str(p))] + ["-o", str(tmp_path / "a")], capture_output=True, text=True, env=env
    )
    assert repeated.returncode == 0, repeated.stderr
    assert "84.21 [" in repeated.stdout and "explanations are empty" in repeated.stdout
    assert "note: matched by a small premise edit: simile.json:37 → simile-10-0 ('silver.' → 'sliver.'" in repeated.stdout
    folder = subprocess.run(base + ["-p", str(FIXTURE), "-o", str(tmp_path / "b")], capture_output=True, text=True, env=env)
    assert folder.returncode == 0, folder.stderr
    a, b = (json.loads((tmp_path / x / "results.json").read_text())["metrics"]["accuracy"] for x in "ab")
    assert a == b and a["n_correct"] == 16


def test_the_released_rows_as_json_lines_score_the_same(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    """Converted to JSON lines the shared ids used to be refused ("ids are predicted more than once")."""
    folder = tmp_path / "jsonl"
    folder.mkdir()
    for path in FILES:
        rows = json.loads(path.read_text())
        (folder / f"{path.stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = score_predictions_file(folder, "flute", "test", flute_gold_data_dir)
    assert _by_figure(result.metrics) == EXPECTED and not result.problems.duplicates


def test_a_figlang_id_that_contradicts_its_sentences_yields_to_them(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    from figlang.data.registry import get_task

    records = get_task("flute-idiom").load("test", flute_gold_data_dir)
    by_id = {r.id: r for r in records}
    rows = [
        {"id": r.id, "premise": r.premise, "hypothesis": r.hypothesis, "predicted_label": r.label, "model_explanation": "x"}
        for r in records
    ]
    rows[0]["id"], rows[1]["id"] = rows[1]["id"], rows[0]["id"]  # each row names its sibling but carries its own sentences
    path = tmp_path / "swapped.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds, problems, _fmt = read_predictions(path, records, ("entailment", "contradiction"))
    assert not problems.blocking
    assert all(preds[i].prediction == by_id[i].label for i in by_id)


def _simile_rows_and_records(flute_gold_data_dir: Path):
    from figlang.data.registry import get_task

    return json.loads((FIXTURE / "simile.json").read_text()), get_task("flute-simile").load("test", flute_gold_data_dir)


def test_a_near_match_needs_the_gold_id_the_hypothesis_and_a_small_edit(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    """The silver/sliver rows match only while all three hold; otherwise they match nothing and are reported."""
    rows, records = _simile_rows_and_records(flute_gold_data_dir)
    path = tmp_path / "simile.json"
    labels = ("entailment", "contradiction")

    def unknown_after(change) -> list[str]:
        changed = json.loads(json.dumps(rows))
        change(changed[5])  # the "smaller … nothing but a silver" row, at line 37
        path.write_text(json.dumps(changed, indent=4))
        preds, problems, _fmt = read_predictions(path, records, labels)
        return problems.unknown if "simile-10-0" not in preds else []

    assert unknown_after(lambda row: None) == []
    assert unknown_after(lambda row: row.update(id=9)) == ["simile.json:37"]  # another family's gold id
    assert unknown_after(lambda row: row.update(hypothesis=row["hypothesis"].replace("closing", "opening"))) == ["simile.json:37"]
    # 3 character edits still match ("silver" → "sliver" is 2, "wax" for "was" 1 more); 4 do not
    assert unknown_after(lambda row: row.update(premise=row["premise"].replace("It was", "It wax"))) == []
    assert unknown_after(lambda row: row.update(premise=row["premise"].replace("It was", "Xt wax"))) == ["simile.json:37"]


def test_a_near_match_is_refused_when_it_would_be_a_guess(flute_gold_data_dir: Path, tmp_path: Path) -> None:
    """Two gold pairs of one gold id and hypothesis within the edit of one row: no match. A gold pair that
    another row carries exactly is not up for a near match."""
    rows, records = _simile_rows_and_records(flute_gold_data_dir)
    from figlang.data.records import NLIPair

    hypothesis = "Her voice was like a warm blanket."
    twins = [
        NLIPair(id=f"simile-77-{n}", premise=premise, hypothesis=hypothesis, label="entailment", figure_type="simile", meta={"gold_id": 77})
        for n, premise in enumerate(("Her voice was soft.", "Her voice was soft!!"))
    ]
    path = tmp_path / "simile.json"
    path.write_text(json.dumps([{"id": 77, "premise": "Her voice was soft?", "hypothesis": hypothesis, "predicted_label": "Entailment"}]))
    preds, problems, _fmt = read_predictions(path, [*records, *twins], ("entailment", "contradiction"))
    assert preds == {} and problems.unknown == ["simile.json:1"] and problems.near_matches == []
    # one row carries simile-10-0's premise exactly; a second "silver" row for it is no near match of simile-10-0
    exact = {**rows[5], "premise": rows[5]["premise"].replace("silver", "sliver")}
    path.write_text(json.dumps([exact, rows[5]], indent=4))
    preds, problems, _fmt = read_predictions(path, records, ("entailment", "contradiction"))
    assert list(preds) == ["simile-10-0"] and problems.unknown == ["simile.json:9"] and problems.near_matches == []


def test_edits_within_is_the_levenshtein_distance_up_to_its_limit() -> None:
    from figlang.evaluation.predictions import edits_within

    assert edits_within("silver", "sliver", 3) == 2
    assert edits_within("kitten", "sitting", 3) == 3
    assert edits_within("kitten", "sitting", 2) is None
    assert edits_within("", "abc", 3) == 3 and edits_within("", "abcd", 3) is None
    assert edits_within("same", "same", 0) == 0
    assert edits_within("abcdef", "badcfe", 3) is None  # 6 edits; the band must not under-count
