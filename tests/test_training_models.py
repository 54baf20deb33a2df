"""Train every method for a few steps on small real slices with MiniLM: the loss falls, save → load →
eval gives identical predictions, figlang.json is complete, `figlang eval --model DIR` works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.methods.trained import load_trained, read_figlang_json
from figlang.methods.trained.multiple_choice import ChoiceScorerModel, relation_analysis
from figlang.methods.trained.nli_classifier import NLIClassifierModel, map_label, simulatability_from_models
from figlang.training import train, train_folds
from figlang.training.trainer import _task_data, build_model, make_config, resolve_base, seeded_subset, set_seeds

# select=last keeps the latest model; patience=0 runs every epoch (select=last alone still stops early on a flat dev)
TINY = dict(
    limit=8,
    dev_limit=4,
    report_limit=6,
    epochs=3,
    batch_size=2,
    lr=2e-4,
    warmup_ratio=0.0,
    max_length=48,
    select="last",
    patience=0,
    threads=1,
    progress=False,
    log_every=1,
)


def _mean_loss(model, records) -> float:
    feats = model.features(records)
    model.module.eval()
    with torch.no_grad():
        return float(model.loss(model.collate(feats)))


def _initial_loss(task, method, model_path, records, labels=(), **options) -> float:
    cfg = make_config(task, method, str(model_path), "/tmp/unused", **{**TINY, **options})
    set_seeds(cfg.seed)
    return _mean_loss(build_model(cfg, resolve_base(str(model_path)), labels), records)


def _check_saved_model(out: Path, method: str, shape: str, lr: float = TINY["lr"]) -> dict:
    meta = read_figlang_json(out)
    for key in (
        "figlang_trained",
        "status",
        "shape",
        "method",
        "model_class",
        "input_format",
        "base_model",
        "task",
        "training",
        "data",
        "best",
        "dev_metrics",
        "versions",
        "created",
    ):
        assert key in meta, key
    assert meta["status"] == "complete" and meta["shape"] == shape and meta["method"] == method
    assert meta["base_model"]["path"] and meta["base_model"]["revision"]
    assert meta["training"]["lr"] == lr and meta["training"]["seed"] == 0
    assert meta["data"]["train_records_sha256"] and meta["data"]["files"]
    assert all(f["sha256"] for files in meta["data"]["files"].values() for f in files)
    assert meta["dev_metrics"] and all("accuracy" in m for m in meta["dev_metrics"].values())
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    assert (out / "train_log.jsonl").is_file() and (out / "loss_curve.png").stat().st_size > 1000
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert {"start", "train", "eval", "stop"} <= {r["event"] for r in rows}
    return meta


@pytest.mark.parametrize("method", ["mc", "mc-continuation", "mc-context", "mc-literal"])
def test_cloze_methods_train_save_load_eval(method, tmp_path, data_dir, minilm_path):
    task = "idiom-cloze"
    knowledge = method in ("mc-context", "mc-literal")
    # knowledge models score 2 options × N inferences an item: 4 inferences keep this test quick (the format test covers 12)
    extra = {"limit": 4, "batch_size": 1, "epochs": 2, "lr": 1e-4, "max_inferences": 4, "report_limit": 3} if knowledge else {}
    opts = {**TINY, **extra}
    train_records = seeded_subset(get_task(task).load("train-fit", data_dir), opts["limit"], 0)
    before = _initial_loss(task, method, minilm_path, train_records, **extra)
    out = tmp_path / method
    result = train(task, method, str(minilm_path), out, data_dir=str(data_dir), **opts)
    assert result.stopped == "complete" and not result.resumed
    assert set(result.metrics) == {"dev-disjoint", "dev"}  # expression-disjoint dev and the official dev
    meta = _check_saved_model(out, method, "cloze", lr=extra.get("lr", TINY["lr"]))
    assert meta["task"]["train_split"] == "train-fit" and meta["task"]["dev_split"] == "selection"
    assert meta["provenance"]["selection_split"]["epoch"] == "selection" and not meta["provenance"]["selection_reported"]
    reported = json.loads((out / "eval" / "dev-disjoint" / "results.json").read_text())["provenance"]
    assert reported["selection_split"]["epoch"] == "selection" and not reported["chosen_on_evaluated_split"]
    saved = json.loads((out / "train_result.json").read_text())["provenance"]
    assert {"train-fit", "selection", "dev-disjoint", "dev"} <= set(saved["splits"])
    # the kept model's answers on the split that chose it: the record's selection accuracy recomputes from them
    choice = [json.loads(x) for x in (out / "choice" / "selection" / "predictions.jsonl").read_text().splitlines()]
    assert len(choice) == meta["data"]["dev_items"] > 0
    assert sum(r["correct"] for r in choice) / len(choice) == pytest.approx(meta["best"]["dev_accuracy"], abs=1e-12)
    if method in ("mc-context", "mc-literal"):
        assert meta["input_format"]["knowledge"] == method.split("-")[1]
        assert meta["input_format"]["aggregate"] == "sum over inferences"
    loaded = ChoiceScorerModel.load(out)
    after = _mean_loss(loaded, train_records)
    assert after < before, f"{method}: training loss did not fall ({before:.4f} → {after:.4f})"

    # save → load → eval: the harness's answers from the directory equal the trainer's final report
    run = evaluate(
        task, "trained", model=str(out), split="dev", data_dir=data_dir, limit=opts["report_limit"], use_cache=False, progress=False
    )
    report = [json.loads(x) for x in (out / "eval" / "dev" / "predictions.jsonl").read_text().splitlines()]
    assert [run.predictions[r["id"]].prediction for r in report] == [r["prediction"] for r in report]
    for r in report:
        assert run.predictions[r["id"]].scores == pytest.approx(r["scores"], abs=1e-5)
    again = loaded.predict(run.records, batch_size=1)  # batching cannot change the answers
    assert [p.prediction for p in again] == [run.predictions[r.id].prediction for r in run.records]
    assert run.metrics["accuracy"]["accuracy"] == result.metrics["dev"]["accuracy"]["accuracy"]


def test_relation_analysis_on_baseline_errors(tmp_path, data_dir, minilm_path):
    out = tmp_path / "ctx"
    train(
        "simile-cloze",
        "mc-context",
        str(minilm_path),
        out,
        data_dir=str(data_dir),
        **{**TINY, "limit": 2, "dev_limit": 2, "report_limit": 2, "epochs": 1, "batch_size": 1},
    )
    records = get_task("simile-cloze").load("dev", data_dir)[:3]
    baseline = {records[0].id: False, records[1].id: True, records[2].id: False}
    result = relation_analysis(out, records, baseline, by="relation", batch_size=2)
    assert result["items"] == 2 and result["restricted_to_baseline_errors"]
    assert set(result["per_group"]) == {"xNeed", "xIntent", "xWant", "xReact", "xEffect", "xAttr"}
    assert all(m["n"] == 2 for m in result["per_group"].values())
    slots = relation_analysis(out, records, None, by="inference", batch_size=2)
    assert len(slots["per_group"]) == 12 and slots["items"] == 3
    # the command line gives the same table, with the model placed by --device (cpu here; cuda on a GPU)
    from figlang.cli.main import app

    res = CliRunner().invoke(
        app,
        [
            "relations",
            "--model",
            str(out),
            "-t",
            "simile-cloze",
            "-s",
            "dev",
            "-n",
            "3",
            "--by",
            "inference",
            "--device",
            "cpu",
            "--threads",
            "1",
            "-o",
            str(tmp_path / "rel.json"),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    cli = json.loads((tmp_path / "rel.json").read_text())
    assert cli["per_group"] == slots["per_group"] and cli["all_inferences"] == slots["all_inferences"]


@pytest.fixture(scope="module")
def flute_nli(tmp_path_factory, data_dir, minilm_path):
    out = tmp_path_factory.mktemp("flute") / "nli"
    opts = {**TINY, "limit": 16, "dev_limit": 6, "batch_size": 4, "report_limit": 8}
    result = train("flute", "nli", str(minilm_path), out, data_dir=str(data_dir), **opts)
    return out, result, opts


def test_nli_classifier_trains_and_answers_flute_and_impli(flute_nli, data_dir, minilm_path):
    out, result, opts = flute_nli
    meta = _check_saved_model(out, "nli", "nli")
    assert meta["labels"] == ["entailment", "contradiction"]
    assert meta["task"]["dev_split"] == "selection"  # model selection on the split carved from train, never val
    assert set(result.metrics) == {"val"}  # the carved dev chose the model: it is not reported
    choice = json.loads((out / "choice" / "selection" / "results.json").read_text())["metrics"]["accuracy"]
    assert choice["n"] == opts["dev_limit"] and choice["accuracy"] == pytest.approx(meta["best"]["dev_accuracy"], abs=1e-12)
    assert "by_figure_type" in result.metrics["val"]
    cfg = make_config("flute", "nli", str(minilm_path), out, data_dir=str(data_dir), **opts)
    train_records, _, _, _ = _task_data(get_task("flute"), cfg)  # exactly what the trainer trained on
    assert len(train_records) == 16
    before = _initial_loss("flute", "nli", minilm_path, train_records, labels=("entailment", "contradiction"), **opts)
    model = NLIClassifierModel.load(out)
    assert _mean_loss(model, train_records) < before
    # transfer to IMPLI: contradiction answers become non-entailment, accuracy per gold label reported
    run = evaluate("impli", "trained", model=str(out), data_dir=data_dir, limit=12, use_cache=False, progress=False)
    assert {p.prediction for p in run.predictions.values()} <= {"entailment", "non-entailment"}
    assert "by_gold_label" in run.metrics
    assert map_label("contradiction", ("entailment", "non-entailment")) == "non-entailment"
    assert map_label("non-entailment", ("entailment", "contradiction")) == "contradiction"


def test_cli_eval_and_train_commands(flute_nli, tmp_path, data_dir, minilm_path):
    from figlang.cli.main import app
    from figlang.cli.train_cmds import _standalone

    out, _, _ = flute_nli
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "eval",
            "-t",
            "flute",
            "--method",
            "trained",
            "--model",
            str(out),
            "-n",
            "6",
            "--no-cache",
            "-q",
            "--data-dir",
            str(data_dir),
            "-o",
            str(tmp_path / "ev"),
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert results["method"]["name"] == "trained" and results["metrics"]["n_scored"] == 6
    res = runner.invoke(
        _standalone(),
        [
            "train",
            "-t",
            "idiom-cloze",
            "-m",
            "mc-continuation",
            "--model",
            str(minilm_path),
            "-o",
            str(tmp_path / "cli"),
            "-n",
            "4",
            "--dev-limit",
            "2",
            "--report-limit",
            "2",
            "--epochs",
            "1",
            "--batch-size",
            "2",
            "--max-length",
            "32",
            "-q",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    assert read_figlang_json(tmp_path / "cli")["method"] == "mc-continuation"


def test_rationale_classifier_and_simulatability(flute_nli, tmp_path, data_dir, minilm_path):
    io_dir, _, opts = flute_nli
    out = tmp_path / "iro"
    train("flute", "nli-rationale", str(minilm_path), out, data_dir=str(data_dir), **{**opts, "max_length": 96})
    meta = _check_saved_model(out, "nli-rationale", "nli")
    assert "{rationale}" in meta["input_format"]["template"]
    val = get_task("flute").load("val", data_dir)[:6]
    # predicted rationales from any prediction file (here: the gold ones, written as a model's output)
    pred_file = tmp_path / "rationales.jsonl"
    pred_file.write_text("".join(json.dumps({"id": r.id, "explanation": r.explanation}) + "\n" for r in val))
    report = simulatability_from_models(val, io_dir, out, predicted_rationales=pred_file)
    assert set(report) == {"gold", "predicted"}
    assert report["gold"]["accuracy_with_rationale"] == report["predicted"]["accuracy_with_rationale"]
    assert report["gold"]["n"] == 6
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({"id": r.id, "rationale_text": "It is raining."}) + "\n" for r in val))
    run = evaluate(
        "flute",
        "trained",
        model=str(out),
        data_dir=data_dir,
        limit=6,
        use_cache=False,
        progress=False,
        method_options={"rationales": str(other), "rationale_field": "rationale_text"},
    )
    assert run.results["method"]["fingerprint"]["rationale_field"] == "rationale_text"
    assert run.metrics["n_scored"] == 6


def test_impli_idiom_disjoint_folds(tmp_path, data_dir, minilm_path):
    summary = train_folds(
        "impli-idioms-manual",
        "nli",
        str(minilm_path),
        tmp_path / "folds",
        k=10,
        folds=[3],
        test_limit=10,
        data_dir=str(data_dir),
        **{**TINY, "limit": 8, "epochs": 1, "batch_size": 4},
    )
    assert summary["folds_run"] == [3] and summary["k"] == 10
    fold = summary["per_fold"]["3"]
    assert fold["items"] == 10 and fold["train_items"] == 8
    assert set(summary["pooled"]["by_gold_label"]) <= {"entailment", "non-entailment"}
    by_idiom = summary["pooled_ci_by_expression"]["accuracy"]  # idiom-disjoint folds: the CI resamples idioms
    assert by_idiom["accuracy"] == summary["pooled"]["accuracy"]["accuracy"] and 1 <= by_idiom["n_clusters"] <= 10
    assert (tmp_path / "folds" / "fold_03" / "eval" / "test-fold" / "predictions.jsonl").is_file()
    meta = read_figlang_json(tmp_path / "folds" / "fold_03")
    assert meta["task"]["fold"] == 3 and meta["task"]["folds"] == 10
    # the fold records how folds were grouped and that its model was chosen inside its own training part
    assert summary["fold_grouping"].startswith("linked") and "training part" in summary["selection"]
    prov = meta["provenance"]
    assert prov["selection_split"]["epoch"] == "fold-3-selection" and prov["fold_grouping"].startswith("linked")
    assert not prov["selection_reported"] and prov["splits"]["fold-3-train"]["items"] == 8
    test_prov = json.loads((tmp_path / "folds" / "fold_03" / "eval" / "test-fold" / "results.json").read_text())["provenance"]
    assert test_prov["splits"]["test-fold-3"]["items"] == 10 and not test_prov["chosen_on_evaluated_split"]
    assert load_trained(tmp_path / "folds" / "fold_03").labels == ("entailment", "non-entailment")
    # the pooled test folds are a run folder: `figlang report` draws the overlap (and, with enough idioms, ICE) plots
    from figlang.evaluation.report import build_report

    pooled = tmp_path / "folds" / "pooled"
    assert len((pooled / "predictions.jsonl").read_text().splitlines()) == 10
    written = build_report([pooled], tmp_path / "report")
    assert any(p.name.endswith("_overlap.png") for p in written)


def test_fold_runs_into_one_folder_pool_together(tmp_path, data_dir, minilm_path):
    """`--fold` runs one after another (or side by side) into one folder: each summary pools every fold finished there with
    the same settings, read back from disk, and says which finished folds it left out and why."""
    settings = dict(k=10, test_limit=6, data_dir=str(data_dir), **{**TINY, "limit": 8, "epochs": 1, "batch_size": 4})
    out = tmp_path / "folds"
    first = train_folds("impli-idioms-manual", "nli", str(minilm_path), out, folds=[1], **settings)
    second = train_folds(
        "impli-idioms-manual", "nli", str(minilm_path), out, folds=[2], **{**settings, "threads": 1}
    )  # how it ran: still pooled
    assert first["folds_run"] == [1] and first["folds_from_earlier_runs"] == []
    assert second["folds_run"] == [1, 2] and second["folds_from_earlier_runs"] == [1] and "folds_left_out" not in second
    assert second["per_fold"]["1"] == first["per_fold"]["1"]
    pooled = [json.loads(line) for line in (out / "pooled" / "predictions.jsonl").read_text().splitlines()]
    assert len(pooled) == 12 and {r["id"] for r in pooled} >= set(
        json.loads(line)["id"] for line in (out / "fold_01" / "eval" / "test-fold" / "predictions.jsonl").read_text().splitlines()
    )
    assert second["pooled"]["accuracy"]["n"] == 12
    assert json.loads((out / "folds_summary.json").read_text())["folds_run"] == [1, 2]
    # a fold trained with other settings (here the learning rate) is not pooled with them, and the summary says so
    third = train_folds("impli-idioms-manual", "nli", str(minilm_path), out, folds=[4], **{**settings, "lr": 1e-3})
    assert third["folds_run"] == [4] and set(third["folds_left_out"]) == {"1", "2"} and "other settings" in third["folds_left_out"]["1"]
