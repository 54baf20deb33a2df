"""`figlang compare` on generation runs: per-item ROUGE-L / BLEU recomputed as the evaluation did, paired tests, bootstrap CI.

The run folders are written here in the shape the harness writes (predictions.jsonl rows with id, references, prediction
samples and valid; results.json with task, method and metrics.generation from figlang's own scoring function), with
made-up sentences.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from figlang.core.errors import FiglangError
from figlang.evaluation.compare import WILCOXON_ALL_ZERO, compare_runs
from figlang.metrics.generation import NltkSentenceBleu, RougeL, SacreSentenceBleu
from figlang.metrics.generation_scores import generation_scores_from_records

SUBJECTS = ["the old farmer", "my sister", "a tired pilot", "the young chef", "our neighbour", "the quiet student"]
VERBS = ["painted", "repaired", "carried", "sold", "found", "borrowed"]
OBJECTS = ["a red bicycle", "the kitchen door", "three wooden chairs", "an old map", "the garden fence", "a broken lamp"]
PLACES = ["before sunrise", "in the rain", "after the market closed", "near the river", "on a windy hill"]
UNRELATED = ["purple", "violin", "glacier", "mosaic", "quantum", "saddle", "orbit", "lantern", "velvet", "harbor"]


def _reference(i: int) -> str:
    return f"{SUBJECTS[i % 6].capitalize()} {VERBS[(i // 2) % 6]} {OBJECTS[(i * 5) % 6]} {PLACES[i % 5]}."


def _paraphrase(i: int) -> str:
    return f"{SUBJECTS[(i + 1) % 6].capitalize()} {VERBS[(i // 2) % 6]} {OBJECTS[(i * 5 + 1) % 6]} {PLACES[i % 5]}."


def _unrelated(i: int) -> str:
    return " ".join(UNRELATED[(i + k) % len(UNRELATED)] for k in range(4)) + "."


def _write_run(
    folder: Path, rows: list[dict], *, task: str = "idiom-generation", split: str = "dev", model: str = "gen-a", shape: str = "generation"
) -> Path:
    """A run folder as the harness writes it: the corpus metrics come from figlang's own scoring function."""
    folder.mkdir(parents=True)
    records = [SimpleNamespace(id=r["id"], references=tuple(r.get("references") or ())) for r in rows]
    preds = {r["id"]: SimpleNamespace(prediction=r["prediction"], valid=r.get("valid", True)) for r in rows if not r.get("missing")}
    generation = generation_scores_from_records(records, preds, SimpleNamespace(generation_protocol="max"))
    results = {
        "format": 1,
        "task": {"name": task, "split": split, "shape": shape, "items": len(rows), "spec_path": None, "labels": []},
        "data": {"data_dir": "/made/up", "files": [{"path": f"made-up/{split}.jsonl", "sha256": "0" * 64}]},
        "method": {"name": "trained", "model": model, "options": {}},
        "metrics": {"n_scored": len(rows), "n_invalid": sum(1 for r in rows if r.get("valid") is False), "generation": generation},
        "scored": True,
    }
    (folder / "results.json").write_text(json.dumps(results, indent=2))
    full = []
    for r in rows:
        row = {
            "id": r["id"],
            "source": f"A made-up context for {r['id']}.",
            "references": r.get("references") or [],
            "expression": "made up",
            "meaning": "invented",
            "prediction": r["prediction"],
        }
        if r.get("missing"):
            row["missing"] = True
        else:
            row.update(valid=r.get("valid", True), meta={"seed": 1, "complete": [True]})
        full.append(row)
    (folder / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in full))
    return folder


def _rows(predict, n: int = 30) -> list[dict]:
    return [{"id": f"gen-{i}", "references": [_reference(i)], "prediction": [predict(i)]} for i in range(n)]


def _mixed_rows() -> list[dict]:
    """Paraphrases, with the awkward cases: two samples, two references, an empty sample, an invalid prediction."""
    rows = _rows(_paraphrase, 24)
    rows[1]["prediction"] = [_unrelated(1), _reference(1)]  # max over samples picks the second
    rows[2]["references"] = [_unrelated(7), _reference(2)]  # max over references
    rows[2]["prediction"] = [_reference(2)]
    rows[3]["prediction"] = ["   "]  # empty: scores 0
    rows[4]["valid"] = False  # invalid: scored as no prediction
    rows[5]["prediction"] = [_paraphrase(5), ""]
    return rows


def test_per_item_means_are_the_metrics_own_corpus_scores(tmp_path: Path) -> None:
    rows_a = _mixed_rows()
    rows_b = _rows(lambda i: _unrelated(i) if i % 3 else _paraphrase(i), 24)
    rows_b[2]["references"] = rows_a[2]["references"]
    a, b = _write_run(tmp_path / "a", rows_a), _write_run(tmp_path / "b", rows_b, model="gen-b")
    c = compare_runs(a, b)
    assert c["kind"] == "generation" and c["n_paired"] == 24 and c["only_in_a"] == c["only_in_b"] == 0
    assert c["warnings"] == [], c["warnings"]  # the recomputed corpus figures are the results.json ones

    def samples(r: dict) -> list[str]:
        return r["prediction"] if r.get("valid", True) else []

    for key, metric in (("rougeL", RougeL()), ("sacrebleu_sentence", SacreSentenceBleu()), ("bleu", NltkSentenceBleu())):
        direct_a = metric.compute([samples(r) for r in rows_a], [r["references"] for r in rows_a]).score
        direct_b = metric.compute([samples(r) for r in rows_b], [r["references"] for r in rows_b]).score
        m = c["metrics"][key]
        assert m["mean_a"] == pytest.approx(direct_a, abs=1e-12) and m["mean_b"] == pytest.approx(direct_b, abs=1e-12)
        assert m["mean_a"] == pytest.approx(json.loads((a / "results.json").read_text())["metrics"]["generation"][key], abs=1e-12)
        assert c["a"][key] == m["mean_a"] and m["bootstrap"]["mean_difference"] == pytest.approx(direct_a - direct_b)
        assert m["bootstrap"]["ci_low"] < m["bootstrap"]["mean_difference"] < m["bootstrap"]["ci_high"]
    # the awkward items scored as the evaluation does: max over samples and references, empty and invalid as 0
    rouge = RougeL()
    per_item = rouge.compute([samples(r) for r in rows_a], [r["references"] for r in rows_a]).per_item
    assert per_item[1] == per_item[2] == 1.0 and per_item[3] == per_item[4] == 0.0
    assert c["metrics"]["rougeL"]["config"] == json.loads((a / "results.json").read_text())["metrics"]["generation"]["configs"]["rougeL"]
    assert {t["metric"] for t in c["tests"]} == {"rougeL", "sacrebleu_sentence", "bleu"}
    assert all({"test", "statistic", "p_value", "n", "details"} <= t.keys() and t["n"] == 24 for t in c["tests"])
    assert "bertscore_f1" not in c["metrics"]


def test_identical_runs_differ_by_zero_and_wilcoxon_is_undefined(tmp_path: Path) -> None:
    rows = _mixed_rows()
    c = compare_runs(_write_run(tmp_path / "a", rows), _write_run(tmp_path / "b", rows, model="again"))
    for key in ("rougeL", "sacrebleu_sentence", "bleu"):
        bs = c["metrics"][key]["bootstrap"]
        assert bs["mean_difference"] == bs["ci_low"] == bs["ci_high"] == 0.0
        t, w = [x for x in c["tests"] if x["metric"] == key]
        assert "t-test" in t["test"] and t["p_value"] == 1.0
        assert "Wilcoxon" in w["test"] and w["p_value"] is None and w["statistic"] is None and w["undefined"] == WILCOXON_ALL_ZERO
    json.dumps(c, allow_nan=False)  # no NaN reaches the JSON


def test_references_beat_unrelated_words_significantly(tmp_path: Path) -> None:
    good = _write_run(tmp_path / "good", _rows(_reference))
    bad = _write_run(tmp_path / "bad", _rows(_unrelated), model="bad")
    c = compare_runs(good, bad)
    m = c["metrics"]["rougeL"]
    assert m["mean_a"] == 1.0 and m["mean_b"] == 0.0
    # every difference is 1: the t statistic is undefined (no variance), the Wilcoxon test and the bootstrap are not
    t, w = [x for x in c["tests"] if x["metric"] == "rougeL"]
    assert t["p_value"] is None and "undefined" in t
    assert w["p_value"] < 1e-6 and m["bootstrap"]["ci_low"] == m["bootstrap"]["ci_high"] == 1.0
    # paraphrases (partial overlap, varying) against unrelated words: both tests find the difference
    para = _write_run(tmp_path / "para", _rows(_paraphrase), model="para")
    c = compare_runs(para, bad)
    t, w = [x for x in c["tests"] if x["metric"] == "rougeL"]
    assert t["statistic"] > 0 and t["p_value"] < 0.05 and w["p_value"] < 0.05
    assert c["metrics"]["rougeL"]["bootstrap"]["ci_low"] > 0
    # and in the other order the difference is negative, with the same p-values
    back = compare_runs(bad, para)
    t2, w2 = [x for x in back["tests"] if x["metric"] == "rougeL"]
    assert t2["p_value"] == pytest.approx(t["p_value"]) and w2["p_value"] == pytest.approx(w["p_value"])
    assert back["metrics"]["rougeL"]["bootstrap"]["ci_high"] < 0


def test_bootstrap_is_seeded(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", _rows(_paraphrase))
    b = _write_run(tmp_path / "b", _rows(lambda i: _paraphrase(i) if i % 2 else _unrelated(i)), model="b")
    one, two = compare_runs(a, b, seed=3, n_resamples=2000), compare_runs(a, b, seed=3, n_resamples=2000)
    other = compare_runs(a, b, seed=4, n_resamples=2000)
    bs = one["metrics"]["rougeL"]["bootstrap"]
    assert bs == two["metrics"]["rougeL"]["bootstrap"] and bs["n_resamples"] == 2000 and bs["seed"] == 3
    assert (bs["ci_low"], bs["ci_high"]) != (
        other["metrics"]["rougeL"]["bootstrap"]["ci_low"],
        other["metrics"]["rougeL"]["bootstrap"]["ci_high"],
    )


def test_only_shared_items_are_paired_and_hidden_references_are_left_out(tmp_path: Path) -> None:
    rows_a = _rows(_paraphrase)
    rows_b = _rows(_unrelated)[:25]
    rows_b[0]["references"] = []  # a hidden reference: not scored
    c = compare_runs(_write_run(tmp_path / "a", rows_a), _write_run(tmp_path / "b", rows_b, model="b"))
    assert c["n_paired"] == 24 and c["only_in_a"] == 6 and c["only_in_b"] == 0
    paired = rows_a[1:25]
    expected = RougeL().compute([r["prediction"] for r in paired], [r["references"] for r in paired]).score
    assert c["metrics"]["rougeL"]["mean_a"] == pytest.approx(expected, abs=1e-12)
    assert c["metrics"]["rougeL"]["run_mean_a"] == pytest.approx(
        json.loads((tmp_path / "a" / "results.json").read_text())["metrics"]["generation"]["rougeL"]
    )


def test_refuses_other_items_and_mixed_kinds(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", _rows(_paraphrase))
    with pytest.raises(FiglangError, match="different items"):
        compare_runs(a, _write_run(tmp_path / "test", _rows(_paraphrase), split="test"))
    with pytest.raises(FiglangError, match="different items"):
        compare_runs(a, _write_run(tmp_path / "simile", _rows(_paraphrase), task="simile-generation"))
    cloze = tmp_path / "cloze"
    cloze.mkdir()
    (cloze / "results.json").write_text(
        json.dumps(
            {
                "task": {"name": "idiom-generation", "split": "dev", "shape": "cloze"},
                "method": {"name": "random"},
                "metrics": {},
                "scored": True,
            }
        )
    )
    (cloze / "predictions.jsonl").write_text(json.dumps({"id": "gen-0", "gold": 1, "prediction": 1, "correct": True}) + "\n")
    for x, y in ((a, cloze), (cloze, a)):
        with pytest.raises(FiglangError, match="cannot compare a generation run with a discriminative one"):
            compare_runs(x, y)


def test_different_metric_configurations_are_not_compared(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", _rows(_paraphrase))
    b = _write_run(tmp_path / "b", _rows(_unrelated), model="b")
    results = json.loads((b / "results.json").read_text())
    results["metrics"]["generation"]["configs"]["rougeL"]["use_stemmer"] = True
    (b / "results.json").write_text(json.dumps(results))
    c = compare_runs(a, b)
    assert "rougeL" not in c["metrics"] and "different configurations" in c["skipped_metrics"]["rougeL"]
    assert "sacrebleu_sentence" in c["metrics"]


def test_warns_when_the_recomputed_figure_is_not_the_reported_one(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", _rows(_paraphrase))
    b = _write_run(tmp_path / "b", _rows(_unrelated), model="b")
    results = json.loads((a / "results.json").read_text())
    results["metrics"]["generation"]["rougeL"] += 0.01
    (a / "results.json").write_text(json.dumps(results))
    c = compare_runs(a, b)
    assert len(c["warnings"]) == 1 and c["warnings"][0].startswith("rougeL recomputed for")


def test_cli_json_and_table(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", _rows(_paraphrase))
    b = _write_run(tmp_path / "b", _rows(_unrelated), model="b")
    cmd = [sys.executable, "-m", "figlang.cli.main", "compare", str(a), str(b)]
    out = subprocess.run([*cmd, "--json", "--resamples", "1000"], capture_output=True, text=True, check=True).stdout
    c = json.loads(out)
    assert c["metrics"]["rougeL"]["bootstrap"]["n_resamples"] == 1000 and c["tests"][0]["metric"] == "rougeL"
    table = subprocess.run(cmd, capture_output=True, text=True, check=True, env={"COLUMNS": "200", "PATH": ""}).stdout
    assert "rougeL" in table and "sacrebleu_sentence" in table and f"{c['metrics']['rougeL']['mean_a']:.4f}" in table


def test_paired_bootstrap_by_cluster_reduces_to_items_and_widens_for_correlated_items() -> None:
    import numpy as np

    from figlang.evaluation.compare import paired_bootstrap

    rng = np.random.default_rng(1)
    a = np.repeat(rng.random(60) < 0.7, 8).astype(float)  # 60 clusters of 8 items that move together
    b = np.repeat(rng.random(60) < 0.5, 8).astype(float)
    keys = [str(k) for k in np.repeat(np.arange(60), 8)]
    items = paired_bootstrap(a, b, n_resamples=2000, seed=0)
    singles = paired_bootstrap(a, b, n_resamples=2000, seed=0, clusters=[str(i) for i in range(a.size)])
    grouped = paired_bootstrap(a, b, n_resamples=2000, seed=0, clusters=keys)
    assert (singles["ci_low"], singles["ci_high"]) == pytest.approx((items["ci_low"], items["ci_high"]))
    assert grouped["n_clusters"] == 60 and grouped["mean_difference"] == items["mean_difference"]
    assert (grouped["ci_high"] - grouped["ci_low"]) > 2 * (items["ci_high"] - items["ci_low"])
