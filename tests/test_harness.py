"""The evaluation harness on real data: the paper's committed outputs, baselines, cache/resume, bad prediction files."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from figlang.core.errors import FiglangError, PlaceholderLabelError
from figlang.evaluation import evaluate, score_predictions_file

OUT = "fig_narrative/output"
PAPER_DEV = [
    ("idiom-cloze", f"{OUT}/idiom/discriminative/idiom_dev_predictions.jsonl", 90.99),
    ("idiom-cloze", f"{OUT}/idiom/discriminative/idiom_context_dev_predictions.jsonl", 92.39),
    ("idiom-cloze", f"{OUT}/idiom/discriminative/idiom_literal_dev_predictions.jsonl", 93.24),
    ("simile-cloze", f"{OUT}/simile/discriminative/dev_predictions.jsonl", 87.77),
    ("simile-cloze", f"{OUT}/simile/discriminative/simile_context_dev_predictions.jsonl", 89.36),
    ("simile-cloze", f"{OUT}/simile/discriminative/simile_literal_dev_predictions.jsonl", 89.10),
]


@pytest.mark.parametrize(("task", "path", "expected"), PAPER_DEV)
def test_paper_dev_predictions_reproduce_published_accuracy(data_dir: Path, task: str, path: str, expected: float) -> None:
    result = score_predictions_file(data_dir / path, task, "dev", data_dir)
    acc = result.metrics["accuracy"]
    assert round(100 * acc["accuracy"], 2) == expected
    assert acc["n"] == (355 if task.startswith("idiom") else 376)
    assert acc["ci_low"] < acc["accuracy"] < acc["ci_high"]
    assert result.results["method"]["fingerprint"]["format"] == "narrative-discriminative"


def test_paper_test_predictions_are_refused(data_dir: Path) -> None:
    with pytest.raises(PlaceholderLabelError):
        score_predictions_file(data_dir / f"{OUT}/idiom/discriminative/idiom_test_predictions.jsonl", "idiom-cloze", "test", data_dir)


def test_baselines_are_at_chance_not_perfect(data_dir: Path, tmp_path: Path) -> None:
    first = evaluate("idiom-cloze", "always-first", split="dev", data_dir=data_dir, cache_dir=tmp_path, progress=False)
    acc = first.metrics["accuracy"]["accuracy"]
    assert 0.4 < acc < 0.6  # option1 is gold for 187 of 355
    assert first.metrics["prediction_balance"] == {"0": 355}
    majority = evaluate("flute", "majority", split="val", data_dir=data_dir, cache_dir=tmp_path, progress=False)
    assert majority.results["method"]["fingerprint"]["answer"] == "contradiction"
    assert majority.metrics["by_gold_label"]["entailment"]["accuracy"] == 0.0
    assert abs(majority.metrics["accuracy"]["accuracy"] - 296 / 499) < 1e-9
    with pytest.raises(FiglangError, match="has none"):  # IMPLI has no train split to take a majority from
        evaluate("impli-idioms-manual", "majority", data_dir=data_dir, cache_dir=tmp_path, progress=False)


def test_results_file_records_provenance(data_dir: Path, tmp_path: Path) -> None:
    evaluate("simile-cloze", "longer-option", split="dev", data_dir=data_dir, out_dir=tmp_path / "run", cache_dir=tmp_path, progress=False)
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["task"] == {"name": "simile-cloze", "split": "dev", "shape": "cloze", "items": 376, "spec_path": None, "labels": []}
    files = {f["path"]: f for f in results["data"]["files"]}
    assert "fig_narrative/data/simile/dev.jsonl" in files and len(files["fig_narrative/data/simile/dev.jsonl"]["sha256"]) == 64
    assert results["method"]["fingerprint"] == {"method": "longer-option", "length": "characters", "ties": "first"}
    assert results["metric_config"]["accuracy"]["n_resamples"] == 1000
    assert results["versions"]["figlang"] and results["versions"]["scipy"]
    assert "seconds" in results["timing"]
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 376 and {"id", "narrative", "options", "gold", "prediction", "correct"} <= set(rows[0])
    assert "| accuracy % [95% CI] |" in (tmp_path / "run" / "results.md").read_text()
    assert results["method"]["options"] == {}
    # the options as given are recorded, and a report names them (not the speed-only ones)
    from figlang.evaluation.report import method_label

    evaluate(
        "flute",
        "always-first",
        split="val",
        data_dir=data_dir,
        out_dir=tmp_path / "opt",
        cache_dir=tmp_path,
        progress=False,
        method_options={"labels": ("contradiction", "entailment")},
    )
    given = json.loads((tmp_path / "opt" / "results.json").read_text())["method"]
    assert given["options"] == {"labels": "('contradiction', 'entailment')"}
    assert method_label({"name": "nli-score", "options": {"question": "meaning", "threads": 2}}) == "nli-score question=meaning"


def test_placeholder_test_labels_refused_but_predict_only_works(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(PlaceholderLabelError):
        evaluate("simile-cloze", "always-first", split="test", data_dir=data_dir, cache_dir=tmp_path, progress=False)
    run = evaluate(
        "simile-cloze",
        "always-first",
        split="test",
        data_dir=data_dir,
        cache_dir=tmp_path,
        progress=False,
        predict_only=True,
        out_dir=tmp_path / "sub",
    )
    assert "accuracy" not in run.metrics and len(run.predictions) == 1520
    assert not json.loads((tmp_path / "sub" / "results.json").read_text())["scored"]


SLOW_RUN = r"""
import sys, time
from figlang.evaluation import evaluate
from figlang.methods.base import Method, Prediction

class SlowLonger(Method):
    name = "slow-longer"
    shapes = ("cloze",)
    def predict(self, records):
        time.sleep(0.015 * len(records))
        return [Prediction(r.id, max(range(len(r.options)), key=lambda i: len(r.options[i])), scores=[float(len(o)) for o in r.options]) for r in records]
    def config(self):
        return {"version": 1}

evaluate("idiom-cloze", SlowLonger(), split="dev", data_dir=sys.argv[1], cache_dir=sys.argv[2], out_dir=sys.argv[3],
         progress=False, chunk_size=8)
"""


def _volatile_free(path: Path) -> dict:
    results = json.loads((path / "results.json").read_text())
    for key in ("timing", "run"):
        results.pop(key)
    return results


def test_killed_run_resumes_from_cache_with_identical_results(data_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_RUN)
    cache, out = tmp_path / "cache", tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(script), str(data_dir), str(cache), str(out)])
    db = cache / "requests.sqlite"
    deadline = time.time() + 60
    import sqlite3

    count = 0
    while time.time() < deadline:  # wait until some chunks are cached, then kill hard
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    count = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            except sqlite3.OperationalError:
                count = 0
            if count >= 40:
                break
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 40 <= count < 355, "the run should have been killed halfway"
    assert not (out / "results.json").exists()
    subprocess.run([sys.executable, str(script), str(data_dir), str(cache), str(out)], check=True)
    resumed = json.loads((out / "results.json").read_text())
    assert resumed["run"]["cache"]["cached"] >= 40 and resumed["run"]["cache"]["computed"] < 355 - 39
    # an uninterrupted run in a fresh cache gives the identical results and predictions
    subprocess.run([sys.executable, str(script), str(data_dir), str(tmp_path / "cache2"), str(tmp_path / "clean")], check=True)
    assert _volatile_free(out) == _volatile_free(tmp_path / "clean")
    assert (out / "predictions.jsonl").read_bytes() == (tmp_path / "clean" / "predictions.jsonl").read_bytes()
    # and a rerun costs nothing
    subprocess.run([sys.executable, str(script), str(data_dir), str(cache), str(tmp_path / "again")], check=True)
    assert json.loads((tmp_path / "again" / "results.json").read_text())["run"]["cache"]["computed"] == 0


def _figlang_rows(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_bad_prediction_files_are_reported(data_dir: Path, tmp_path: Path) -> None:
    from figlang.data.registry import get_task

    val = get_task("flute").load("val", data_dir)
    rows = [{"id": r.id, "prediction": r.label} for r in val]
    rows[3]["prediction"] = "neutral"  # outside the label set
    rows.append(dict(rows[5]))  # duplicate
    rows.append({"id": "val-99999", "prediction": "entailment"})  # unknown id
    del rows[10]  # missing
    path = _figlang_rows(tmp_path, rows)
    with pytest.raises(FiglangError) as info:
        score_predictions_file(path, "flute", "val", data_dir)
    text = str(info.value)
    for part in (
        "1 gold items have no prediction (e.g. val-10)",
        "1 ids are predicted more than once (e.g. val-5)",
        "1 predictions match no gold item",
        "1 predictions are outside the label set",
        "--allow-partial",
    ):
        assert part in text
    partial = score_predictions_file(path, "flute", "val", data_dir, allow_partial=True)
    m = partial.metrics
    assert m["coverage"] == {"gold_items": 499, "predicted": 498}
    assert m["n_invalid"] == 1 and m["accuracy"]["n"] == 498 and m["accuracy"]["n_correct"] == 497


def test_prediction_file_for_other_items(data_dir: Path, tmp_path: Path) -> None:
    path = _figlang_rows(tmp_path, [{"id": f"x-{i}", "prediction": 0} for i in range(10)])
    with pytest.raises(FiglangError, match="355 gold items have no prediction"):
        score_predictions_file(path, "idiom-cloze", "dev", data_dir)


def _flute_rows(records, ids) -> list[dict]:
    return [
        {"id": i, "premise": r.premise, "hypothesis": r.hypothesis, "predicted_label": r.label, "model_explanation": r.explanation}
        for i, r in zip(ids, records)
    ]


def test_flute_submission_of_the_gold_itself_is_complete(data_dir: Path, tmp_path: Path) -> None:
    """FLUTE val holds one (premise, hypothesis) pair twice (val-139, val-365): neither may swallow the other."""
    from figlang.data.registry import get_task
    from figlang.evaluation.predictions import read_predictions

    task = get_task("flute")
    val = task.load("val", data_dir)
    twins = [r.id for r in val if (r.premise, r.hypothesis) == (val[139].premise, val[139].hypothesis)]
    assert twins == ["val-139", "val-365"]
    path = tmp_path / "submission.jsonl"
    variants = {
        "figlang ids": _flute_rows(val, [r.id for r in val]),
        "bare ids, matched by content": _flute_rows(val, range(len(val))),
        "bare ids, reversed rows": _flute_rows(val[::-1], range(len(val))),
    }
    # a content-only twin row before the row naming val-139: the content row must take val-365
    variants["named twin after a content twin"] = _flute_rows(val[::-1], [r.id if r.id == "val-139" else None for r in val[::-1]])
    for name, rows in variants.items():
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        preds, problems, fmt = read_predictions(path, val, task.labels)
        assert fmt == "flute-submission"
        assert not problems.blocking, (name, problems.summary())
        assert set(preds) == {r.id for r in val}
        assert all(preds[r.id].prediction == r.label for r in val), name
    path.write_text("".join(json.dumps(r) + "\n" for r in variants["figlang ids"]))
    result = score_predictions_file(path, "flute", "val", data_dir)
    assert result.metrics["accuracy"]["n_correct"] == 499
    # a third row with the twins' pair has no id left to take: reported, not dropped silently
    extra = _flute_rows([val[139]], [None])
    path.write_text("".join(json.dumps(r) + "\n" for r in variants["bare ids, matched by content"] + extra))
    _preds, problems, _fmt = read_predictions(path, val, task.labels)
    assert problems.duplicates == ["val-139"] and not problems.missing


def test_null_and_out_of_range_figlang_predictions_are_invalid(data_dir: Path, tmp_path: Path) -> None:
    from figlang.data.registry import get_task
    from figlang.evaluation.predictions import read_predictions

    dev = get_task("idiom-cloze").load("dev", data_dir)
    rows = [{"id": r.id, "prediction": r.label} for r in dev]
    rows[0]["prediction"] = 7  # two options: 0 or 1
    rows[1]["prediction"] = None
    rows[2]["prediction"] = -1
    rows[3]["prediction"] = True
    path = _figlang_rows(tmp_path, rows)
    preds, problems, _fmt = read_predictions(path, dev)
    assert problems.invalid == [r.id for r in dev[:4]]
    assert "bad option index 7" in str(preds[dev[0].id].error) and "null" in str(preds[dev[1].id].error)
    with pytest.raises(FiglangError, match="4 predictions are outside the label set"):
        score_predictions_file(path, "idiom-cloze", "dev", data_dir)
    m = score_predictions_file(path, "idiom-cloze", "dev", data_dir, allow_partial=True).metrics
    assert m["n_invalid"] == 4 and m["accuracy"]["n_correct"] == len(dev) - 4
    val = get_task("flute").load("val", data_dir)
    rows = [{"id": r.id, "prediction": r.label} for r in val]
    rows[0]["prediction"], rows[1]["prediction"] = None, 1
    _preds, problems, _fmt = read_predictions(_figlang_rows(tmp_path, rows), val, ("entailment", "contradiction"))
    assert problems.invalid == ["val-0", "val-1"]


def test_compare_and_report_on_real_runs(data_dir: Path, tmp_path: Path) -> None:
    from figlang.evaluation.compare import compare_runs
    from figlang.evaluation.report import build_report

    score_predictions_file(data_dir / PAPER_DEV[0][1], "idiom-cloze", "dev", data_dir, out_dir=tmp_path / "base")
    score_predictions_file(data_dir / PAPER_DEV[2][1], "idiom-cloze", "dev", data_dir, out_dir=tmp_path / "literal")
    c = compare_runs(tmp_path / "base", tmp_path / "literal")
    assert c["n_paired"] == 355
    assert c["only_a_right"] - c["only_b_right"] == 323 - 331
    names = [t["test"] for t in c["tests"]]
    assert any("t-test" in n for n in names) and any("McNemar" in n for n in names)
    assert all(0 < t["p_value"] < 1 for t in c["tests"])
    bs = c["bootstrap"]  # the accuracy difference with its paired bootstrap CI (items)
    assert bs["mean_difference"] == (323 - 331) / 355 and bs["ci_low"] < bs["mean_difference"] < bs["ci_high"] and "n_clusters" not in bs
    by_idiom = compare_runs(tmp_path / "base", tmp_path / "literal", ci_cluster="expression")["bootstrap"]
    assert by_idiom["mean_difference"] == bs["mean_difference"] and by_idiom["n_clusters"] == 230  # dev's 230 idioms
    with pytest.raises(FiglangError, match="unknown CI cluster 'idiom'"):
        compare_runs(tmp_path / "base", tmp_path / "literal", ci_cluster="idiom")
    evaluate("impli-idioms-manual", "random", data_dir=data_dir, out_dir=tmp_path / "impli", cache_dir=tmp_path, progress=False)
    (tmp_path / "archived").mkdir()  # a results archive keeps results.json alone: it still goes in the tables
    shutil.copy(tmp_path / "literal" / "results.json", tmp_path / "archived" / "results.json")
    paths = build_report([tmp_path / "base", tmp_path / "literal", tmp_path / "impli", tmp_path / "archived"], tmp_path / "report")
    names = {p.name for p in paths}
    assert {"report.md", "report.html", "accuracy.png", "impli_overlap.png", "impli_by_pair_type.png"} <= names
    assert all(p.stat().st_size > 5000 for p in paths if p.suffix == ".png")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "| base | idiom-cloze | dev | predictions-file |" in md
    grid = md.split("## Grid")[1].split("\n\n")[1].splitlines()
    assert grid[0] == "| model | method | idiom-cloze dev | impli-idioms-manual all |"
    random_row = next(line for line in grid if "| random |" in line)
    assert random_row.split(" | ")[2] == "" and "(n=1157)" in random_row  # no idiom-cloze run, one IMPLI run
    assert "Without predictions.jsonl (no per-item plots or analyses): archived." in md
    # the IMPLI analyses' numbers are written out, not only drawn
    overlap = next(line for line in md.splitlines() if line.startswith("* impli: premise–hypothesis Levenshtein"))
    right, wrong = (int(x) for x in re.findall(r"for the (\d+) (?:pairs )?answered", overlap))
    assert right + wrong == 1157
    assert "Spearman rho" in md or "impli_ice.png" not in names


def _impli_run(folder: Path, task: str, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    results = {"task": {"name": task, "split": "all"}, "method": {"name": "random", "options": {}}, "metrics": {"n_scored": len(rows)}}
    (folder / "results.json").write_text(json.dumps(results))
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _impli_rows(figure: str, expressions: list[str]) -> list[dict]:
    """Five pairs per expression: premises alternate canonical and varied forms, correctness varies by expression."""
    rows = []
    for e, expr in enumerate(expressions):
        words = expr.split()
        for k in range(5):
            form = expr if k % (e + 2) == 0 else " ".join([words[0], "really", *words[1:]])
            rows.append(
                {
                    "id": f"{figure}-{e}-{k}",
                    "premise": f"Yesterday she said {form} at lunch {k}.",
                    "hypothesis": f"Something else {k}.",
                    "gold": "entailment",
                    "figure_type": figure,
                    "expression": expr,
                    "correct": k < e + 1,
                }
            )
    return rows


def test_report_ice_analysis_uses_idiom_pairs_only(tmp_path: Path) -> None:
    """`impli` mixes idiom and metaphor pairs; ICE is per idiom, so metaphor rows must not enter it."""
    from figlang.evaluation.report import build_report

    idioms = _impli_rows("idiom", ["spill the beans", "kick the bucket", "break the ice"])
    metaphors = _impli_rows("metaphor", ["drown in paperwork", "boil with rage"])
    mixed = _impli_run(tmp_path / "mixed", "impli", idioms + metaphors)
    only_metaphors = _impli_run(tmp_path / "metaphors", "impli-metaphors", metaphors)
    paths = build_report([mixed, only_metaphors], tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    ice = next(line for line in md.splitlines() if line.startswith("* mixed: ICE"))
    assert "over 3 idioms" in ice and "idiom pairs only: 15 of 25" in ice
    assert "* metaphors: no idiom pairs, so no ICE (syntactic flexibility) analysis." in md
    assert not any(line.startswith("* metaphors: ICE") for line in md.splitlines())
    names = {p.name for p in paths}
    assert "mixed_ice.png" in names and "metaphors_ice.png" not in names
    assert "metaphors_overlap.png" in names  # the Levenshtein analysis still covers metaphor runs


def test_cli_eval_and_compare(data_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "FIGLANG_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    for name, idx in (("a", 3), ("b", 5)):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "figlang.cli.main",
                "eval",
                "-t",
                "simile-cloze",
                "-p",
                str(data_dir / PAPER_DEV[idx][1]),
                "-o",
                str(tmp_path / name),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        assert "accuracy % [95% CI]" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", "compare", str(tmp_path / "a"), str(tmp_path / "b")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "paired t-test" in run.stdout and "McNemar" in run.stdout


def test_flute_submission_scored_by_content_with_offline_metric_models(data_dir: Path, tmp_path: Path, minilm_path: Path) -> None:
    """A FLUTE-format submission against test gold: matched by premise/hypothesis, explanation scores from real
    (offline, non-paper) BERTScore and BLEURT code paths, marked not comparable to published numbers."""

    from figlang.evaluation.scoring import MetricOptions

    shutil.copytree(data_dir / "flute", tmp_path / "flute")
    gold = tmp_path / "flute" / "testgolddata"
    gold.mkdir()
    items = {
        "sarcasm": [("I hate Mondays.", "I just love Mondays, said no one ever.", "Entailment", "Both express dislike of Mondays.")],
        "simile": [("He was very fast.", "He ran like a snail.", "Contradiction", "A snail is slow, so running like one is not fast.")],
        "metaphor": [("She was angry.", "She was boiling.", "Entailment", "Boiling conveys intense anger.")],
        "idiom": [("He revealed the secret.", "He spilled the beans.", "Entailment", "To spill the beans means to reveal a secret.")],
    }
    for figure, rows in items.items():
        (gold / f"{figure}_test.jsonl").write_text(
            "".join(json.dumps({"id": 0, "premise": p, "hypothesis": h, "label": lab, "explanation": e}) + "\n" for p, h, lab, e in rows)
        )
    submission = [  # rows in another order than the gold, one empty explanation, one wrong label, one missing
        {
            "id": 0,
            "premise": "He revealed the secret.",
            "hypothesis": "He spilled the beans.",
            "predicted_label": "Entailment",
            "model_explanation": "To spill the beans means to reveal a secret.",
        },
        {
            "id": 0,
            "premise": "I hate Mondays.",
            "hypothesis": "I just love Mondays, said no one ever.",
            "predicted_label": "Entailment",
            "model_explanation": "",
        },
        {
            "id": 0,
            "premise": "He was very fast.",
            "hypothesis": "He ran like a snail.",
            "predicted_label": "Entailment",
            "model_explanation": "Snails are fast.",
        },
    ]
    path = tmp_path / "submission.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in submission))
    options = MetricOptions(bertscore_model=str(minilm_path), bertscore_layers=6, bleurt_checkpoint=str(minilm_path), bleurt_head_seed=0)
    with pytest.raises(FiglangError, match="1 gold items have no prediction"):
        score_predictions_file(path, "flute", "test", tmp_path, metric_options=options)
    result = score_predictions_file(path, "flute", "test", tmp_path, allow_partial=True, metric_options=options, out_dir=tmp_path / "run")
    m = result.metrics
    assert m["accuracy"]["n"] == 3 and m["accuracy"]["n_correct"] == 2  # idiom and sarcasm right, simile wrong
    assert result.problems.empty_explanations == ["sarcasm-0-0"] and result.problems.missing == ["metaphor-0-0"]
    exp = m["explanations"]
    assert exp["computed"] and exp["comparable_to_published"] is False
    rows = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()}
    assert rows["sarcasm-0-0"]["explanation_score"] == 0  # empty explanation scores 0, never a neighbour's score
    assert rows["idiom-0-0"]["explanation_score"] > 0


def test_progress_goes_to_a_log_file_as_one_line_per_chunk(data_dir: Path, tmp_path: Path, capsys) -> None:
    """A run whose stderr is a file (nohup, a queue) gets plain progress lines; a live bar would print nothing until the end."""
    from figlang.methods.base import Method, Prediction

    class Longer(Method):
        name = "longer"
        shapes = ("cloze",)

        def predict(self, records):
            return [Prediction(r.id, max(range(len(r.options)), key=lambda i: len(r.options[i]))) for r in records]

        def config(self):
            return {"version": 1}

    evaluate(
        "idiom-cloze",
        Longer(),
        split="dev",
        data_dir=data_dir,
        cache_dir=tmp_path / "cache",
        out_dir=tmp_path / "run",
        progress=True,
        chunk_size=100,
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if "items/s" in line]
    assert len(lines) == 4 and "355/355 items" in lines[-1] and "100/355 items" in lines[0] and "ETA 0:00:00" in lines[-1]


class _Constant:
    """Cloze answers fixed in advance (always option ``k``, or the gold / the other option) for compare tests."""

    @staticmethod
    def make(answer: str):
        from figlang.methods.base import Method, Prediction

        class Constant(Method):
            name = f"constant-{answer}"
            shapes = ("cloze",)

            def predict(self, records):
                pick = {"0": lambda r: 0, "1": lambda r: 1, "gold": lambda r: r.label, "not-gold": lambda r: 1 - r.label}[answer]
                return [Prediction(r.id, pick(r)) for r in records]

            def config(self):
                return {"answer": answer}

        return Constant()


def test_predict_only_runs_have_no_correctness_and_compare_refuses_them(data_dir: Path, tmp_path: Path) -> None:
    """Every narrative test label is a placeholder (option1): a predict-only run must not claim right or wrong against it."""
    from figlang.evaluation.compare import compare_runs

    for k in ("0", "1"):
        run = evaluate(
            "simile-cloze",
            _Constant.make(k),
            split="test",
            data_dir=data_dir,
            limit=30,
            out_dir=tmp_path / k,
            use_cache=False,
            progress=False,
            predict_only=True,
        )
        assert run.results["scored"] is False
        rows = [json.loads(x) for x in (tmp_path / k / "predictions.jsonl").read_text().splitlines()]
        assert len(rows) == 30 and all(r["prediction"] == int(k) for r in rows)
        assert all(r.get("correct") is None for r in rows)
    with pytest.raises(FiglangError, match=r"predict-only run \(results.json says scored: false\).*without --predict-only"):
        compare_runs(tmp_path / "0", tmp_path / "1")


def test_seed_reaches_the_method_its_fingerprint_and_the_cache(data_dir: Path, tmp_path: Path) -> None:
    from figlang.evaluation.scoring import MetricOptions

    def run(**kw):
        return evaluate("flute", "random", split="val", data_dir=data_dir, limit=60, cache_dir=tmp_path, progress=False, **kw)

    five = run(seed=5)
    assert five.results["method"]["fingerprint"]["seed"] == 5
    assert five.results["seed"] == 5 and five.results["seeds"] == {"method": 5, "bootstrap": 5}
    assert five.results["metric_config"]["seed"] == 5
    zero = run(seed=0)
    assert zero.results["method"]["fingerprint"]["seed"] == 0
    assert zero.results["run"]["cache"] == {"cached": 0, "computed": 60, "dir": str(tmp_path)}  # seed 5's answers are not reused
    assert [p.prediction for p in five.predictions.values()] != [p.prediction for p in zero.predictions.values()]
    assert run(seed=5).results["run"]["cache"]["computed"] == 0  # the same seed is a cache hit
    explicit = run(seed=5, method_options={"seed": 9})  # -O seed=N wins over --seed for the method
    assert explicit.results["method"]["fingerprint"]["seed"] == 9 and explicit.results["seeds"] == {"method": 9, "bootstrap": 5}
    # metric options given apart from the seed: both seeds are recorded, and the CIs follow the metric options
    own = run(seed=5, metric_options=MetricOptions(seed=3))
    assert own.results["seeds"] == {"method": 5, "bootstrap": 3} and own.results["metric_config"]["seed"] == 3
    # a method without a seed parameter is not handed one
    first = evaluate("flute", "always-first", split="val", data_dir=data_dir, limit=5, cache_dir=tmp_path, progress=False, seed=5)
    assert "seed" not in first.results["method"]["fingerprint"] and first.results["seeds"]["method"] is None


def test_impli_run_with_explanations_scores_labels_without_flute_metrics(data_dir: Path, tmp_path: Path, minilm_path: Path) -> None:
    """IMPLI's gold includes non-entailment and has no gold explanations: FLUTE's explanation score does not apply."""
    from figlang.evaluation.scoring import MetricOptions
    from figlang.methods.base import Method, Prediction

    class Explains(Method):
        name = "explains"
        shapes = ("nli",)

        def predict(self, records):
            return [Prediction(r.id, "entailment", explanation="The idiom means what the hypothesis says.") for r in records]

        def config(self):
            return {"version": 1}

    options = MetricOptions(bertscore_model=str(minilm_path), bertscore_layers=6, bleurt_checkpoint=str(minilm_path), bleurt_head_seed=0)
    run = evaluate(
        "impli-idioms-manual",
        Explains(),
        data_dir=data_dir,
        out_dir=tmp_path / "run",
        use_cache=False,
        progress=False,
        metric_options=options,
    )
    m = run.metrics
    assert m["accuracy"]["n"] == 1157 and m["by_gold_label"]["non-entailment"]["accuracy"] == 0.0
    exp = m["explanations"]
    assert exp["computed"] is False and "non-entailment" in exp["reason"] and exp["n_with_explanation"] == 1157
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(r["explanation"] == "The idiom means what the hypothesis says." for r in rows)
    assert "explanation_score" not in rows[0]


def _compare_output(c: dict, monkeypatch, capsys) -> str:
    from figlang.evaluation.compare import print_comparison

    monkeypatch.setenv("COLUMNS", "250")
    print_comparison(c)
    return capsys.readouterr().out


def test_compare_shows_unpaired_items_and_warns_on_other_data(data_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from figlang.evaluation.compare import compare_runs

    evaluate(
        "idiom-cloze", "always-first", split="dev", data_dir=data_dir, limit=100, out_dir=tmp_path / "a", cache_dir=tmp_path, progress=False
    )
    evaluate(
        "idiom-cloze", "longer-option", split="dev", data_dir=data_dir, limit=80, out_dir=tmp_path / "b", cache_dir=tmp_path, progress=False
    )
    c = compare_runs(tmp_path / "a", tmp_path / "b")
    assert (c["n_paired"], c["only_in_a"], c["only_in_b"]) == (80, 20, 0) and c["warnings"] == []
    out = _compare_output(c, monkeypatch, capsys)
    assert "unpaired (scored in one run only, left out of the tests): 20 only in A, 0 only in B" in out
    assert "warning" not in out
    # the same task and split names over another copy of the data: warned about
    path = tmp_path / "b" / "results.json"
    results = json.loads(path.read_text())
    results["data"]["files"][0]["sha256"] = "0" * 64
    path.write_text(json.dumps(results))
    c = compare_runs(tmp_path / "a", tmp_path / "b")
    assert len(c["warnings"]) == 1 and "different data files" in c["warnings"][0]
    assert results["data"]["files"][0]["path"] in c["warnings"][0]
    out = _compare_output(c, monkeypatch, capsys)
    assert "warning: the runs read different data files" in out


def test_compare_prints_an_undefined_t_test_readably(data_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """One run right on every item, the other wrong on every item: every paired difference is 1, so t is undefined (NaN)."""
    import math

    from figlang.evaluation import compare
    from figlang.metrics.significance import TestResult

    for answer in ("gold", "not-gold"):
        evaluate(
            "idiom-cloze",
            _Constant.make(answer),
            split="dev",
            data_dir=data_dir,
            limit=30,
            out_dir=tmp_path / answer,
            use_cache=False,
            progress=False,
        )
    # significance.paired_t_test reports this case as NaN; pinned here so the test does not depend on scipy's inf
    monkeypatch.setattr(
        compare,
        "paired_t_test",
        lambda a, b: TestResult(
            "paired t-test (scipy.stats.ttest_rel)", math.nan, math.nan, len(a), {"note": "every paired difference is 1"}
        ),
    )
    c = compare.compare_runs(tmp_path / "gold", tmp_path / "not-gold")
    assert (c["a"]["accuracy"], c["b"]["accuracy"]) == (1.0, 0.0)
    t_test = c["tests"][0]
    assert t_test["statistic"] is None and t_test["p_value"] is None and t_test["undefined"] == compare.T_TEST_UNDEFINED
    json.dumps(c, allow_nan=False)  # --json prints valid JSON
    out = _compare_output(c, monkeypatch, capsys)
    line = next(x for x in out.splitlines() if "paired t-test" in x)
    assert "undefined: every paired difference is the same" in line and "nan" not in line.lower() and "yes" not in line
    assert any("McNemar" in x and "yes" in x for x in out.splitlines())  # the McNemar test is still defined (and significant)


def test_cluster_cis_are_recorded_and_bad_units_refused(data_dir: Path, tmp_path: Path) -> None:
    """--ci-cluster: IMPLI pairs of one idiom resampled together; the unit and the cluster count are in the results."""
    from figlang.data.records import expression_of
    from figlang.data.registry import get_task
    from figlang.evaluation.scoring import MetricOptions

    run = evaluate(
        "impli-idioms-manual",
        "random",
        data_dir=data_dir,
        out_dir=tmp_path / "run",
        use_cache=False,
        progress=False,
        metric_options=MetricOptions(ci_cluster="expression"),
    )
    records = get_task("impli-idioms-manual").load("all", data_dir)
    assert run.results["metric_config"]["ci_cluster"] == "expression"
    n_expr = len({expression_of(r) for r in records if expression_of(r)}) + sum(not expression_of(r) for r in records)
    assert run.results["metrics"]["accuracy"]["n_clusters"] == n_expr < len(records)
    assert "expression clusters]" in (tmp_path / "run" / "results.md").read_text()
    plain = evaluate("impli-idioms-manual", "random", data_dir=data_dir, use_cache=False, progress=False)
    assert plain.results["metrics"]["accuracy"]["accuracy"] == run.results["metrics"]["accuracy"]["accuracy"]
    assert "n_clusters" not in plain.results["metrics"]["accuracy"]
    with pytest.raises(FiglangError, match="unknown CI cluster 'premise': use context, expression"):
        MetricOptions(ci_cluster="premise")
    from figlang.evaluation.report import build_report

    build_report([tmp_path / "run"], tmp_path / "report")  # the combined table says how its interval was made
    assert f"over {n_expr} clusters]" in (tmp_path / "report" / "report.md").read_text()
