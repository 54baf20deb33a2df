"""The calibrated ensemble (issue #22) on committed runs: temperatures and weights chosen on one split, applied once
to another, scored by the harness; and the clear errors for runs that cannot be combined."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from figlang.core.errors import FiglangError
from figlang.evaluation.ensemble import TEMPERATURES, choose_ensemble, ensemble_runs
from figlang.evaluation.runs import load_run

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PROBE_DEV, PROBE_DD = RESULTS / "cpu/idiom-probe-qwen-sel/eval/dev", RESULTS / "cpu/idiom-probe-qwen-sel/eval/dev-disjoint"
PMI_DEV, PMI_DD = RESULTS / "suite-smollm2/idiom-dev", RESULTS / "zs/idiom-devdisjoint-pmi-smollm2"


def accuracy(run: Path) -> float:
    return json.loads((run / "results.json").read_text(encoding="utf-8"))["metrics"]["accuracy"]["accuracy"]


def _rows(run: Path) -> list[dict]:
    return load_run(run).rows


def _log_softmax(scores: list[float], temperature: float) -> list[float]:
    """Written apart from figlang.evaluation.ensemble, so that the tests check it rather than repeat it."""
    z = [s / temperature for s in scores]
    top = max(z)
    log_norm = top + math.log(math.fsum(math.exp(v - top) for v in z))
    return [v - log_norm for v in z]


def _nll(rows: list[dict], temperature: float) -> float:
    return -math.fsum(_log_softmax(r["scores"], temperature)[r["gold"]] for r in rows) / len(rows)


def _mixed(members: list[list[dict]], temperatures: list[float], weights: list[float], i: int) -> list[float]:
    logps = [_log_softmax(rows[i]["scores"], t) for rows, t in zip(members, temperatures)]
    return [math.fsum(w * lp[j] for w, lp in zip(weights, logps)) for j in range(len(logps[0]))]


def _answer(scores: list[float]) -> int:
    return max(range(len(scores)), key=lambda j: (scores[j], -j))  # the first of equal scores


def _accuracy(members: list[list[dict]], temperatures: list[float], weights: list[float]) -> float:
    rows = members[0]
    return sum(_answer(_mixed(members, temperatures, weights, i)) == rows[i]["gold"] for i in range(len(rows))) / len(rows)


def test_choice_on_selection_is_recomputed_from_the_member_runs():
    """Every number the choice reports is recomputed here from the members' committed scores: the temperature is
    the grid's minimum of the log-loss, the chosen mix's accuracy is what that mix answers, and no mix on the
    weight grid answers better."""
    chosen = choose_ensemble([PROBE_DEV, PMI_DEV], names=["probe", "pmi"])
    assert chosen["chosen_on"] == "dev" and chosen["items"] == 355 and chosen["task"] == "idiom-cloze"
    members = [_rows(PROBE_DEV), _rows(PMI_DEV)]
    assert [r["id"] for r in members[0]] == [r["id"] for r in members[1]] and all(r.get("valid", True) for m in members for r in m)
    alone = [m["selection_accuracy"] for m in chosen["members"]]
    assert alone == pytest.approx([accuracy(PROBE_DEV), accuracy(PMI_DEV)])  # a member at weight 1 answers as its run did
    temperatures = []
    for member, rows in zip(chosen["members"], members):
        t = member["temperature"]
        temperatures.append(t)
        assert t in TEMPERATURES
        assert member["nll_at_1"] == pytest.approx(_nll(rows, 1.0), abs=1e-9)
        assert member["nll"] == pytest.approx(_nll(rows, t), abs=1e-9)
        assert _nll(rows, t) <= min(_nll(rows, u) for u in TEMPERATURES) + 1e-9  # the grid's best, not just better than 1
        assert member["items"] == 355
    # PMI scores are differences of log-probabilities, far from calibrated: a high temperature, and a real gain
    pmi = chosen["members"][1]
    assert pmi["temperature"] > 2.0 and pmi["nll"] < pmi["nll_at_1"] - 0.1
    weights = chosen["weights"]
    assert sum(weights) == pytest.approx(1.0) and len(weights) == 2
    assert chosen["selection_accuracy"] == pytest.approx(_accuracy(members, temperatures, weights), abs=1e-12)
    grid = [[k / 10, 1 - k / 10] for k in range(11)]
    best = max(_accuracy(members, temperatures, w) for w in grid)
    assert chosen["selection_accuracy"] == pytest.approx(best, abs=1e-12)
    for mix in chosen["top_mixes"]:
        assert mix["accuracy"] == pytest.approx(_accuracy(members, temperatures, mix["weights"]), abs=1e-12)
    # deterministic: the same runs choose the same ensemble
    assert choose_ensemble([PROBE_DEV, PMI_DEV], names=["probe", "pmi"]) == chosen


def test_ensemble_reports_once_on_another_split(tmp_path, data_dir):
    """Every answer on the report split is recomputed from the members' report runs with the chosen temperatures
    and weights, whatever mix was chosen."""
    out = tmp_path / "ens"
    results = ensemble_runs([PROBE_DEV, PMI_DEV], [PROBE_DD, PMI_DD], out, data_dir=data_dir, names=["probe", "pmi"])
    chosen = results["ensemble"]
    assert chosen["report_split"] == "dev-disjoint" and results["task"]["split"] == "dev-disjoint"
    assert results["provenance"]["selection_split"]["weights"] == "dev"
    rows = load_run(out).rows
    assert len(rows) == 278
    members = [_rows(PROBE_DD), _rows(PMI_DD)]
    assert [r["id"] for r in rows] == [r["id"] for r in members[0]] == [r["id"] for r in members[1]]
    temperatures = [m["temperature"] for m in chosen["members"]]
    for i, row in enumerate(rows):
        expected = _mixed(members, temperatures, chosen["weights"], i)
        assert row["scores"] == pytest.approx(expected, abs=1e-9), row["id"]
        assert row["prediction"] == _answer(expected), row["id"]
        assert row["meta"]["ensemble"] == {"probe": members[0][i]["scores"], "pmi": members[1][i]["scores"]}
    right = sum(r["prediction"] == r["gold"] for r in rows)
    assert results["metrics"]["accuracy"]["n_correct"] == right
    assert right == round(_accuracy(members, temperatures, chosen["weights"]) * 278)


def test_runs_that_cannot_be_combined_are_refused(tmp_path, data_dir):
    with pytest.raises(FiglangError, match="share one task and split"):
        choose_ensemble([PROBE_DEV, PMI_DD])
    with pytest.raises(FiglangError, match="at least two member runs"):
        choose_ensemble([PROBE_DEV])
    with pytest.raises(FiglangError, match="the split the ensemble was chosen on"):
        ensemble_runs([PROBE_DEV, PMI_DEV], [PROBE_DEV, PMI_DEV], tmp_path / "same", data_dir=data_dir)
    with pytest.raises(FiglangError, match="weight step must divide 1"):
        choose_ensemble([PROBE_DEV, PMI_DEV], step=0.3)
    with pytest.raises(FiglangError, match="2 members were chosen but 1 report runs"):
        ensemble_runs([PROBE_DEV, PMI_DEV], [PROBE_DD], tmp_path / "short", data_dir=data_dir)


def _run(task: str, split: str, method: str, model: str, options: dict, out: Path, data_dir: Path) -> Path:
    from figlang.api import evaluate

    evaluate(task, method, model, split=split, data_dir=data_dir, limit=10, out_dir=out, method_options=options, use_cache=False)
    return out


def test_ensemble_method_answers_as_the_offline_combination(tmp_path, data_dir, one_torch_thread):
    """`-m ensemble --model ensemble.json` on a split in one pass gives, item for item, the answers and scores of the
    offline combination of the members' finished runs on that split (real runs of smollm2-135m, two scorings)."""
    from figlang.api import evaluate
    from figlang.evaluation.ensemble import apply_ensemble, write_choice

    members = [("lm-score", {"norm": "sum"}), ("lm-score", {"norm": "pmi"})]
    sel = [_run("simile-cloze", "selection", m, "smollm2-135m", o, tmp_path / f"sel-{i}", data_dir) for i, (m, o) in enumerate(members)]
    rep = [_run("simile-cloze", "dev-disjoint", m, "smollm2-135m", o, tmp_path / f"rep-{i}", data_dir) for i, (m, o) in enumerate(members)]
    chosen = choose_ensemble(sel, names=["sum", "pmi"])
    assert [m["options"] for m in chosen["members"]] == [{"norm": "sum"}, {"norm": "pmi"}]
    # the chosen mix, and a hand-set one with temperatures far from 1 (so the test does not rest on one member alone)
    for label, choice in (("chosen", chosen), ("set", {**chosen, "weights": [0.3, 0.7]})):
        if label == "set":
            choice["members"] = [{**m, "temperature": t} for m, t in zip(chosen["members"], (0.5, 7.0))]
        path = write_choice(choice, tmp_path / f"ens-{label}")
        apply_ensemble(choice, rep, tmp_path / f"offline-{label}")
        lines = (tmp_path / f"offline-{label}" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        offline = {r["id"]: r for r in map(json.loads, lines)}
        online = evaluate("simile-cloze", "ensemble", str(path), split="dev-disjoint", data_dir=data_dir, limit=10, use_cache=False)
        assert len(online.predictions) == len(offline) == 10
        for p in online.predictions.values():
            assert p.prediction == offline[p.id]["prediction"], (label, p.id)
            assert p.scores == pytest.approx(offline[p.id]["scores"], abs=1e-9), (label, p.id)
        assert online.results["metrics"]["accuracy"]["n_correct"] == sum(r["prediction"] == r["gold"] for r in offline.values())
        assert online.results["method"]["name"] == "ensemble"
        assert online.results["provenance"]["selection_split"]["weights"] == "selection"


def test_ensemble_method_refuses_another_task(tmp_path, data_dir):
    from figlang.api import evaluate

    member = {"name": "a", "method": "always-first", "model": None, "options": {}, "temperature": 1.0, "labels": None}
    path = tmp_path / "ensemble.json"
    path.write_text(
        json.dumps({"task": "idiom-cloze", "chosen_on": "selection", "members": [member, {**member, "name": "b"}], "weights": [0.5, 0.5]})
    )
    with pytest.raises(FiglangError, match="chosen on 'idiom-cloze'"):
        evaluate("simile-cloze", "ensemble", str(path), split="dev-disjoint", data_dir=data_dir, limit=2, use_cache=False)
    path.write_text(json.dumps({"task": "idiom-cloze", "members": [member], "weights": [1.0]}))
    with pytest.raises(FiglangError, match="two or more members"):
        evaluate("idiom-cloze", "ensemble", str(path), split="dev-disjoint", data_dir=data_dir, limit=2, use_cache=False)


def test_ensemble_command_without_report_writes_the_members_file(tmp_path):
    from typer.testing import CliRunner

    from figlang.cli.main import app

    done = CliRunner().invoke(
        app, ["ensemble", "--select", str(PROBE_DEV), "--select", str(PMI_DEV), "--name", "probe", "--name", "pmi", "-o", str(tmp_path)]
    )
    assert done.exit_code == 0, done.output
    chosen = json.loads((tmp_path / "ensemble.json").read_text(encoding="utf-8"))
    assert chosen == json.loads(json.dumps(choose_ensemble([PROBE_DEV, PMI_DEV], names=["probe", "pmi"])))
    assert [m["method"] for m in chosen["members"]] == ["trained", "lm-score"]
    assert not (tmp_path / "predictions.jsonl").exists()


@pytest.mark.parametrize(
    "name, probe_run, probe_name, report_name",
    [
        ("idiom-probe-fewshot-qwen", "idiom-sel-probe", "probe", "idiom-probe-fewshot-qwen"),
        ("simile-probe-fewshot-qwen", "simile-sel-probe", "probe", "simile-probe-fewshot-qwen"),
        # #39 target 1
        ("idiom-probe-meaning-fewshot-qwen", "idiom-sel-probe-meaning", "meaning-probe", "idiom-meaning-probe-fewshot-qwen"),
        ("simile-probe-meaning-fewshot-qwen", "simile-sel-probe-meaning", "meaning-probe", "simile-meaning-probe-fewshot-qwen"),
    ],
)
def test_shipped_ensembles_are_the_ones_chosen_on_the_committed_selection_runs(name, probe_run, probe_name, report_name):
    from figlang.methods.prompted.ensemble import read_choice, shipped_ensemble

    path = shipped_ensemble(f"figlang:{name}")
    figure = name.split("-")[0]
    sel = [RESULTS / f"ensemble/{probe_run}", RESULTS / f"ensemble/{figure}-sel-fewshot"]
    chosen = json.loads(json.dumps(choose_ensemble(sel, names=[probe_name, "few-shot"])))
    shipped = read_choice(path)
    assert shipped == chosen and shipped["chosen_on"] == "selection"
    assert shipped["members"][0]["model"].startswith("figlang:")  # a shipped head, not a local run folder
    report = json.loads((RESULTS / f"ensemble/{report_name}/ensemble.json").read_text(encoding="utf-8"))
    assert shipped["weights"] == report["weights"]  # the published report was combined with these weights
    assert [m["temperature"] for m in shipped["members"]] == [m["temperature"] for m in report["members"]]
    with pytest.raises(FiglangError, match="ships no ensemble named"):
        shipped_ensemble("figlang:nothing")
