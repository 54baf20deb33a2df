"""lm-evaluation-harness and Hugging Face interop on real data and a real model (smollm2-135m, float32).

A few dozen idiom-cloze dev items go through `figlang export lm-eval`, lm-eval's own Python API, and
figlang's `lm-score -O input=lm-eval`: the predictions must be identical item for item and the
accuracies equal; lm-eval's --log_samples rows then score through `figlang eval --format lm-eval`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from figlang.cli.main import app
from figlang.core.paths import resolve_data_dir
from figlang.data.registry import get_task
from figlang.evaluation import evaluate, score_predictions_file
from figlang.interop.hf_export import export_hf, records_from_rows
from figlang.core.errors import FiglangError
from figlang.interop.lm_eval_export import export_lm_eval, lm_eval_task_name
from figlang.evaluation.lm_eval_samples import predicted_index
from figlang.backends.loading import resolve

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

N_ITEMS = 30
MODEL = "smollm2-135m"


def _run_lm_eval(root: Path, task: str, split: str, data_dir: Path) -> dict:
    """Export the first N_ITEMS of task/split with the CLI, run lm-eval's simple_evaluate on it, and write its samples
    as --log_samples writes them."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import lm_eval
    from lm_eval.tasks import TaskManager

    tasks = root / "tasks"
    res = CliRunner().invoke(
        app, ["export", "lm-eval", task, "-s", split, "-n", str(N_ITEMS), "-o", str(tasks), "--data-dir", str(data_dir)]
    )
    assert res.exit_code == 0, res.output
    name = lm_eval_task_name(task, split)
    config = yaml.safe_load((tasks / f"{name}.yaml").read_text())
    out = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={resolve(MODEL).path},dtype=float32",
        tasks=[name],
        task_manager=TaskManager(include_path=str(tasks)),
        batch_size=8,
        device="cpu",
        log_samples=True,
    )
    samples = out["samples"][name]
    path = root / f"samples_{name}.jsonl"  # as --log_samples writes them: numbers as strings
    with path.open("w") as f:
        for s in samples:
            row = {
                **s,
                "arguments": {f"gen_args_{i}": {"arg_0": a[0], "arg_1": a[1]} for i, a in enumerate(s["arguments"])},
                "filtered_resps": [[str(ll), str(g)] for ll, g in s["filtered_resps"]],
                "resps": [],
            }
            f.write(json.dumps(row, default=str) + "\n")
    return {"config": config, "results": out["results"][name], "samples": samples, "samples_path": path}


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict:
    """idiom-cloze dev (first N_ITEMS) through `figlang export lm-eval` and lm-eval."""
    return _run_lm_eval(tmp_path_factory.mktemp("lm_eval"), "idiom-cloze", "dev", data_dir)


@pytest.fixture(scope="module")
def lm_eval_nli_run(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict:
    """FLUTE val (first N_ITEMS) through `figlang export lm-eval` and lm-eval."""
    return _run_lm_eval(tmp_path_factory.mktemp("lm_eval_nli"), "flute", "val", data_dir)


def _same_as_lm_eval(run, samples: list[dict], results: dict, metric: str, label_of=lambda doc, i: i) -> None:
    """figlang's predictions equal lm-eval's item for item, and the accuracies are equal."""
    theirs = {s["doc"]["id"]: label_of(s["doc"], predicted_index(s, metric)) for s in samples}
    mine = {rid: p.prediction for rid, p in run.predictions.items()}
    assert mine == theirs, f"{metric}: {sum(mine[k] != theirs[k] for k in mine)} of {len(mine)} predictions differ"
    assert run.metrics["accuracy"]["accuracy"] == pytest.approx(results[f"{metric},none"])
    for s in samples:  # the log-likelihoods themselves agree to float32 noise
        got = run.predictions[s["doc"]["id"]].meta["logprob"]
        want = [float(ll) for ll, _ in s["filtered_resps"]]
        assert got == pytest.approx(want, abs=2e-3)


def test_export_is_an_lm_eval_multiple_choice_task(lm_eval_run: dict, data_dir: Path) -> None:
    config = lm_eval_run["config"]
    assert config["output_type"] == "multiple_choice" and config["target_delimiter"] == " "
    assert config["dataset_path"] == "json" and Path(config["dataset_kwargs"]["data_files"]["test"]).is_absolute()
    records = get_task("idiom-cloze").load("dev", data_dir)[:N_ITEMS]
    docs = [s["doc"] for s in sorted(lm_eval_run["samples"], key=lambda s: s["doc_id"])]
    assert [d["id"] for d in docs] == [r.id for r in records]
    assert all("<b>" not in d["context"] for d in docs)  # lm-eval reads the narrative without its markup, as figlang does
    # lm-eval asked for context + " " + option, exactly
    first = lm_eval_run["samples"][0]
    assert [a[1] for a in first["arguments"]] == [" " + o for o in first["doc"]["options"]]


def test_lm_score_input_lm_eval_equals_lm_eval_item_for_item(lm_eval_run: dict, data_dir: Path, tmp_path: Path) -> None:
    ours = {}
    for norm, metric in (("sum", "acc"), ("char", "acc_norm")):
        run = evaluate(
            "idiom-cloze",
            "lm-score",
            model=MODEL,
            split="dev",
            data_dir=data_dir,
            limit=N_ITEMS,
            use_cache=False,
            progress=False,
            method_options={"input": "lm-eval", "norm": norm, "dtype": "float32", "batch_size": 8},
        )
        _same_as_lm_eval(run, lm_eval_run["samples"], lm_eval_run["results"], metric)
        ours[metric] = run
    assert ours["acc"].results["method"]["fingerprint"] != ours["acc_norm"].results["method"]["fingerprint"]


def test_nli_score_input_lm_eval_equals_lm_eval_item_for_item(lm_eval_nli_run: dict, data_dir: Path) -> None:
    """FLUTE: lm-eval's choice (an index into the doc's label words) is figlang's label, item for item."""
    samples = lm_eval_nli_run["samples"]
    assert samples[0]["arguments"][0][1] == " Entails" and samples[0]["doc"]["query"].endswith("\nAnswer:")
    for norm, metric in (("sum", "acc"), ("char", "acc_norm")):
        run = evaluate(
            "flute",
            "nli-score",
            model=MODEL,
            split="val",
            data_dir=data_dir,
            limit=N_ITEMS,
            use_cache=False,
            progress=False,
            method_options={"input": "lm-eval", "norm": norm, "dtype": "float32", "batch_size": 8},
        )
        _same_as_lm_eval(run, samples, lm_eval_nli_run["results"], metric, label_of=lambda doc, i: doc["labels"][i])
        assert run.results["method"]["fingerprint"]["lm_eval_metric"] == metric
    # lm-eval's acc_norm answers both labels here, so the agreement is not a constant answer agreeing with itself
    assert {s["doc"]["labels"][predicted_index(s, "acc_norm")] for s in samples} == {"entailment", "contradiction"}


def test_nli_score_input_lm_eval_refuses_what_lm_eval_does_not_ask() -> None:
    from figlang.methods.base import get_methods

    with pytest.raises(FiglangError, match="explain=true"):
        get_methods().create("nli-score", model=MODEL, input="lm-eval", explain="true")


def test_log_samples_score_through_figlang_eval(lm_eval_run: dict, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored"
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "-t",
            "idiom-cloze",
            "-s",
            "dev",
            "-p",
            str(lm_eval_run["samples_path"]),
            "--format",
            "lm-eval",
            "--allow-partial",
            "-o",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"]["coverage"]["predicted"] == N_ITEMS
    assert results["metrics"]["accuracy"]["accuracy"] == pytest.approx(lm_eval_run["results"]["acc,none"])
    assert (
        results["metrics"]["accuracy"]["ci_low"] <= results["metrics"]["accuracy"]["accuracy"] <= results["metrics"]["accuracy"]["ci_high"]
    )
    # detected without --format too, and acc_norm on request
    run = score_predictions_file(lm_eval_run["samples_path"], "idiom-cloze", "dev", data_dir, fmt="lm-eval-acc_norm", allow_partial=True)
    assert run.metrics["accuracy"]["accuracy"] == pytest.approx(lm_eval_run["results"]["acc_norm,none"])
    assert (
        score_predictions_file(lm_eval_run["samples_path"], "idiom-cloze", "dev", data_dir, allow_partial=True).results["method"][
            "fingerprint"
        ]["format"]
        == "lm-eval"
    )


def test_samples_are_matched_by_content_not_position(lm_eval_run: dict, data_dir: Path, tmp_path: Path) -> None:
    """Shuffled rows, a row without figlang's id and a row of another item still land on the right items."""
    rows = [json.loads(line) for line in lm_eval_run["samples_path"].read_text().splitlines()]
    rows.reverse()
    for r in rows:
        r["doc"].pop("id")
        r["doc_id"] = 0
    stranger = json.loads(json.dumps(rows[0]))
    stranger["doc"]["context"] = "A story figlang has never seen."
    path = tmp_path / "shuffled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, stranger]))
    run = score_predictions_file(path, "idiom-cloze", "dev", data_dir, fmt="lm-eval", allow_partial=True)
    expected = {s["doc"]["id"]: predicted_index(s, "acc") for s in lm_eval_run["samples"]}
    assert {k: p.prediction for k, p in run.predictions.items()} == expected
    assert len(run.problems.unknown) == 1


@pytest.mark.parametrize("task", ["flute", "impli-idioms-manual"])
def test_nli_tasks_export_as_multiple_choice_over_label_words(task: str, data_dir: Path, tmp_path: Path) -> None:
    result = export_lm_eval(task, tmp_path, data_dir=data_dir, limit=12)
    config = yaml.safe_load(result.yaml_path.read_text())
    assert (config["doc_to_text"], config["doc_to_choice"], config["doc_to_target"]) == ("query", "choices", "label")
    docs = [json.loads(line) for line in result.data_path.read_text().splitlines()]
    records = get_task(task).load(None, data_dir)[:12]
    assert len(docs) == 12
    for doc, r in zip(docs, records):
        assert doc["labels"][doc["label"]] == r.label
        assert r.premise in doc["query"] and doc["query"].endswith("\nAnswer:")
    assert docs[0]["choices"] == (["Entails", "Contradicts"] if task == "flute" else ["Entails", "Does not entail"])


def test_export_refuses_generation_tasks_clearly(data_dir: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["export", "lm-eval", "idiom-generation", "-o", str(tmp_path), "--data-dir", str(data_dir)])
    assert res.exit_code != 0
    assert "cloze and NLI" in str(res.exception) + res.output


@pytest.mark.parametrize("task", ["idiom-cloze", "flute"])
def test_hf_export_round_trips_into_figlang_records(task: str, data_dir: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / task
    result = export_hf(task, out, data_dir=data_dir)
    loaded = datasets.load_dataset("parquet", data_dir=str(out))
    t = get_task(task)
    assert sorted(loaded) == sorted(result.splits)
    for split in result.splits:
        original = t.load(split, data_dir)
        assert all(not json.loads(m).get("file", "x").startswith("/") for m in loaded[split]["meta"])  # no machine paths
        back = records_from_rows(loaded[split], t.shape, data_dir=resolve_data_dir(data_dir))
        assert back == original, f"{task}/{split} differs after the round trip"
    card = (out / "README.md").read_text()
    if task == "idiom-cloze":
        assert "9640095ed599d70d5a2e612d4731c2c27ef59015" in card and "license: mit" in card
        assert "Placeholder labels in `test`" in card and "Overlap between splits" in card
    else:
        assert "contradictory gold labels" in card  # FLUTE train holds one item twice with both labels
