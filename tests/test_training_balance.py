"""Balanced NLI training and a decision threshold chosen on the selection split (IMPLI's non-entailments, issue #22):
the label mix a balanced --limit draws, loss weights, the threshold's choice on the fold's selection slice, its use
by the fold's test scoring and by `figlang eval --method trained`, and clear errors for bad values."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import torch

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.evaluation import evaluate_records
from figlang.methods.trained import choose_threshold, load_trained, read_figlang_json
from figlang.methods.trained.methods import TrainedMethod
from figlang.methods.trained.nli_classifier import NLIClassifierModel
from figlang.training import train_folds
from figlang.data.splits import expression_disjoint_split, expression_folds
from figlang.training.trainer import balanced_subset, carve_key_fn, group_weights, make_config, mix, seeded_subset

TINY = dict(
    limit=8,
    dev_limit=16,
    epochs=1,
    batch_size=4,
    lr=2e-4,
    warmup_ratio=0.0,
    max_length=48,
    patience=0,
    threads=1,
    progress=False,
    log_every=1,
)


@pytest.fixture(scope="module")
def impli_records(data_dir):
    return get_task("impli").load("all", data_dir)


def test_threshold_maximises_the_objective_nearest_the_argmax():
    margins = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]
    positive = [False, False, True, True, True, True]
    found = choose_threshold(margins, positive)
    assert found["threshold"] == -0.75  # between the highest negative (-1) and the lowest positive (-0.5)
    assert found["at_threshold"] == {"value": 1.0, "positive_recall": 1.0, "negative_recall": 1.0}
    assert found["at_argmax"]["positive_recall"] == 0.75 and found["items"] == 6 and found["positive_items"] == 4
    # already separated at 0: the argmax stays (ties go to the threshold nearest 0)
    assert choose_threshold([-1.0, 1.0], [False, True])["threshold"] == 0.0
    # accuracy on a label-skewed set keeps the majority; balanced accuracy gives the minority its share
    skewed = [-3.0, -2.0, -1.5, -1.2, -1.0, -0.9, -0.2]
    gold = [False, False, False, False, True, False, True]
    assert choose_threshold(skewed, gold, "balanced-accuracy")["threshold"] == -1.1
    assert choose_threshold(skewed, gold, "accuracy")["threshold"] == -0.55


def test_floor_holds_the_first_labels_recall_with_confidence():
    # 200 negatives (IMPLI: entailments) at margins 0..199 and 100 positives at 150..249: negative recall r at a
    # threshold t is (t+1)/200, so the floor's lower bound, not the raw recall, decides how far t may go
    neg = [float(m) for m in range(200)]
    pos = [float(m) for m in range(150, 250)]
    found = choose_threshold(neg + pos, [False] * 200 + [True] * 100, "floor=0.85")
    at = found["at_threshold"]
    assert at["negative_recall_lower_bound"] >= 0.85 and at["negative_recall"] > 0.88  # a margin above the floor
    assert found["objective"] == "floor=0.85" and found["floor_confidence"] == 0.95
    # the next lower threshold answers one more positive but breaks the floor
    lower = choose_threshold(neg + pos, [False] * 200 + [True] * 100, "balanced-accuracy")
    assert lower["at_threshold"]["negative_recall"] < at["negative_recall"]
    assert at["positive_recall"] == pytest.approx(sum(p > found["threshold"] for p in pos) / 100)
    # a floor no threshold short of "negative everywhere" reaches: the rule answers the negative label everywhere
    everywhere = choose_threshold([1.0, 2.0, 0.0], [False, False, True], "floor=0.9")
    assert everywhere["at_threshold"]["positive_recall"] == 0.0 and everywhere["threshold"] > 2.0
    with pytest.raises(FiglangError, match="floor must be a recall between 0 and 1"):
        choose_threshold([0.0, 1.0], [False, True], "floor=abc")


def test_threshold_errors_are_clear():
    with pytest.raises(FiglangError, match="unknown threshold objective 'f1'"):
        choose_threshold([0.0, 1.0], [False, True], "f1")
    with pytest.raises(FiglangError, match="both gold labels"):
        choose_threshold([0.0, 1.0], [True, True])
    with pytest.raises(FiglangError, match="2 margins but 1"):
        choose_threshold([0.0, 1.0], [True])


def test_balanced_sampling_changes_the_label_mix(impli_records):
    uniform = mix(seeded_subset(impli_records, 1000, 0))
    by_label = mix(balanced_subset(impli_records, 1000, 0, "label"))
    assert uniform["entailment"] > 600  # IMPLI is ~70% entailment
    assert by_label == {"entailment": 500, "non-entailment": 500}
    by_type = mix(balanced_subset(impli_records, 1200, 0, "pair-type"), "pair_type")
    assert set(by_type.values()) == {200} and len(by_type) == 6
    # a group smaller than its share gives all it has; the rest is spread over the others
    small = [r for r in impli_records if r.pair_type == "manual_antonym"][:50] + [r for r in impli_records if r.pair_type == "fig_context"][
        :500
    ]
    assert mix(balanced_subset(small, 300, 0, "pair-type"), "pair_type") == {"fig_context": 250, "manual_antonym": 50}
    assert balanced_subset(impli_records, 1000, 0, "label") == balanced_subset(impli_records, 1000, 0, "label")  # seeded
    assert len(balanced_subset(small, 10_000, 0, "label")) == len(small)  # a limit above the set keeps every record


def test_loss_weights_balance_the_labels(impli_records, minilm_path):
    records = seeded_subset(impli_records, 40, 0)
    weights = group_weights(records, "label")
    counts = mix(records)
    assert sum(weights.values()) == pytest.approx(len(records))
    heavy = {r.label for r in records if weights[r.id] > 1}
    assert heavy == {min(counts, key=counts.get)}  # the rarer label weighs more
    model = NLIClassifierModel.from_base(str(minilm_path), "nli", ("entailment", "non-entailment"), max_length=48)
    model.module.eval()
    feats = model.features(records[:12])
    with torch.no_grad():
        plain = float(model.loss(model.collate(feats)))
        model.example_weights = weights
        batch = model.collate(feats)
        weighted = float(model.loss(batch))
    assert "weights" in batch and batch["weights"].tolist() == pytest.approx([weights[r.id] for r in records[:12]])
    assert weighted != pytest.approx(plain)


def test_bad_balance_and_threshold_values(data_dir, minilm_path):
    def config(method="nli", **options):
        return make_config("impli", method, str(minilm_path), "/tmp/unused", data_dir=str(data_dir), **options)

    with pytest.raises(FiglangError, match="sample_balance must be one of none, label, pair-type, got 'labels'"):
        config(sample_balance="labels", limit=10)
    with pytest.raises(FiglangError, match="sample_balance draws a balanced subset of --limit records"):
        config(sample_balance="label", limit=None, preset="cpu-nli")
    with pytest.raises(FiglangError, match="loss_weights must be one of"):
        config(loss_weights="inverse")
    with pytest.raises(FiglangError, match="unknown threshold objective '0.3'"):
        config(threshold="0.3")
    with pytest.raises(FiglangError, match="the floor must be a recall between 0 and 1, e.g. floor=0.85"):
        config(threshold="floor=85")
    with pytest.raises(FiglangError, match="threshold chooses the decision of a two-label NLI classifier"):
        config(method="mc", threshold="balanced-accuracy")
    with pytest.raises(FiglangError, match="loss_weights weights an NLI classifier's loss"):
        config(method="mc", loss_weights="label")
    flute = get_task("flute").load("train", data_dir)[:20]
    with pytest.raises(FiglangError, match="has no pair type to balance by"):
        balanced_subset(flute, 10, 0, "pair-type")
    model = NLIClassifierModel.from_base(str(minilm_path), "nli", ("entailment", "non-entailment"), max_length=48)
    with pytest.raises(FiglangError, match="decision threshold label 'contradiction'"):
        model.set_decision({"label": "contradiction", "threshold": 0.5})
    with pytest.raises(FiglangError, match="finite number"):
        model.set_decision({"label": "non-entailment", "threshold": float("nan")})


def test_fold_threshold_is_chosen_on_its_selection_slice_and_applied(tmp_path, data_dir, minilm_path):
    out = tmp_path / "folds"
    summary = train_folds(
        "impli-idioms-manual",
        "nli",
        str(minilm_path),
        out,
        k=10,
        folds=[3],
        test_limit=12,
        data_dir=str(data_dir),
        sample_balance="label",
        loss_weights="label",
        threshold="balanced-accuracy",
        **TINY,
    )
    fold = summary["per_fold"]["3"]
    assert fold["train_label_mix"] == {"entailment": 4, "non-entailment": 4}  # the balanced draw
    meta = read_figlang_json(out / "fold_03")
    decision = meta["decision"]
    assert decision["chosen_on"] == "fold-3-selection" and decision["objective"] == "balanced-accuracy"
    assert decision["label"] == "non-entailment" and decision["items"] == fold["dev_items"] == 16
    assert meta["provenance"]["selection_split"]["threshold"] == "fold-3-selection"
    assert meta["data"]["balance"] == {"sample_balance": "label", "loss_weights": "label"}
    assert summary["provenance"]["selection_split"]["threshold"] == "fold-N-selection" and "threshold" in summary["selection"]
    # chosen on the selection slice: the same model's margins there give the same threshold
    task = get_task("impli-idioms-manual")
    records = task.load(task.default_split, data_dir)
    key = carve_key_fn("expression", records)
    fold_train, _ = expression_folds(records, k=10, seed=0, key=key)[3]
    _, dev = expression_disjoint_split(fold_train, dev_fraction=0.1, seed=0, key=key)
    dev = seeded_subset(dev, 16, 0 + 1 + 3)
    model = load_trained(out / "fold_03")
    assert model.decision["threshold"] == decision["threshold"]
    again = model.choose_decision(dev, "balanced-accuracy", batch_size=8)  # (other batches pad differently: float noise)
    assert again["threshold"] == pytest.approx(decision["threshold"], abs=1e-4)
    assert again["at_threshold"] == pytest.approx(decision["at_threshold"]) and again["items"] == 16
    # applied: every test prediction follows margin > threshold
    rows = [json.loads(x) for x in (out / "fold_03" / "eval" / "test-fold" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 12
    for row in rows:
        margin = row["scores"]["non-entailment"] - row["scores"]["entailment"]
        assert row["prediction"] == ("non-entailment" if margin > decision["threshold"] else "entailment")
    # and by `figlang eval --method trained`, which -O threshold=none turns back into the argmax
    test = [r for r in records if r.id in {row["id"] for row in rows}]
    as_saved = evaluate_records(task, TrainedMethod(model=str(out / "fold_03")), test, "test-fold-3")
    argmax = evaluate_records(task, TrainedMethod(model=str(out / "fold_03"), threshold="none"), test, "test-fold-3")
    assert {i: p.prediction for i, p in as_saved.predictions.items()} == {row["id"]: row["prediction"] for row in rows}
    for p in argmax.predictions.values():
        assert p.prediction == max(p.scores, key=p.scores.get)
    assert as_saved.results["method"]["fingerprint"]["decision"]["chosen_on"] == "fold-3-selection"
    with pytest.raises(FiglangError, match="threshold must be 'none'"):
        TrainedMethod(model=str(out / "fold_03"), threshold="high")


def test_committed_impli_floor_thresholds_recompute_from_their_selection_margins(data_dir):
    """The GPU floor=0.85 run (docs/results/gpu-minilm/impli-folds10-all-lw-floor85) kept each fold's selection
    margins: every fold's threshold, and every pooled test answer, follow from the committed files alone."""
    run = Path(__file__).resolve().parents[1] / "docs/results/gpu-minilm/impli-folds10-all-lw-floor85"
    thresholds = {}
    for fold in sorted(run.glob("fold_*")):
        decision = json.loads((fold / "figlang.json").read_text(encoding="utf-8"))["decision"]
        rows = [json.loads(line) for line in gzip.open(fold / "decision_margins.jsonl.gz", "rt", encoding="utf-8")]
        found = choose_threshold([r["margin"] for r in rows], [r["gold"] == "non-entailment" for r in rows], decision["objective"])
        assert found["threshold"] == decision["threshold"] and found["at_threshold"] == decision["at_threshold"], fold.name
        assert decision["chosen_on"] == f"fold-{int(fold.name[5:])}-selection" and len(rows) == decision["items"] == 500
        thresholds[int(fold.name[5:])] = decision["threshold"]
    assert len(thresholds) == 10
    # the folds as the trainer cut them; each pooled answer is its own fold's threshold applied to its margin
    records = get_task("impli").load("all", data_dir)
    parts = expression_folds(records, k=10, seed=0, key=carve_key_fn("expression", records))
    fold_of = {r.id: f for f, (_, test) in enumerate(parts) for r in test}
    answered = [json.loads(line) for line in gzip.open(run / "pooled/predictions.jsonl.gz", "rt", encoding="utf-8")]
    assert len(answered) == len(fold_of) == 26124
    for row in answered:
        margin = row["scores"]["non-entailment"] - row["scores"]["entailment"]
        expected = "non-entailment" if margin > thresholds[fold_of[row["id"]]] else "entailment"
        assert row["prediction"] == expected, row["id"]
