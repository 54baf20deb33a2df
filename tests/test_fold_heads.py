"""IMPLI fold heads: ten linear heads on a frozen NLI classifier, one per idiom-disjoint fold, trained on real IMPLI
pairs (a seeded sample) over a real LoRA classifier (MiniLM, trained here on FLUTE pairs), and read back by
`-m trained` so that each pair is answered by the head of the fold that never saw its idiom."""

from __future__ import annotations

import json

import pytest

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.methods.trained import check_method
from figlang.methods.trained.methods import TrainedMethod
from figlang.training import train
from figlang.training.fold_heads import impli_folds, train_fold_heads

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = dict(limit=16, dev_limit=8, report_limit=8, epochs=1, batch_size=4, lr=5e-3, warmup_ratio=0.0, max_length=64, select="last")
TINY |= dict(patience=0, threads=1, progress=False, lora_rank=2)


@pytest.fixture(scope="module")
def fold_run(tmp_path_factory, data_dir):
    root = tmp_path_factory.mktemp("fold-heads")
    train("flute", "nli", "minilm", root / "base", data_dir=str(data_dir), **TINY)
    ctx = RunContext.create(data_dir=data_dir, threads=1)
    record = train_fold_heads(root / "heads", ctx, base=str(root / "base"), limit=400)
    return root, ctx, record


def test_each_fold_is_chosen_on_its_selection_slice_and_scored_once(fold_run):
    root, ctx, record = fold_run
    folds = record["folds"]
    assert [f["fold"] for f in folds] == list(range(10)) and record["records"] == 400
    assert sum(f["test_items"] for f in folds) == 400  # every sampled pair is in exactly one test fold
    for f in folds:
        assert f["decision"]["chosen_on"] == f"fold-{f['fold']}-selection" and f["decision"]["objective"] == "floor=0.85"
        assert f["penalty"] in [t["penalty"] for t in f["tried"]]
        best = max(t["selection_balanced_accuracy"] for t in f["tried"])
        assert [t for t in f["tried"] if t["penalty"] == f["penalty"]][0]["selection_balanced_accuracy"] == best
    assert record["file"]["bytes_per_fold"] < 1024 * 1024
    # the folds are the fine-tuned folds' cut: no idiom or premise in two test folds
    _, key, parts = impli_folds(ctx, 400)
    seen: dict[str, int] = {}
    for f, (_, test) in enumerate(parts):
        for r in test:
            assert seen.setdefault(key(r), f) == f


def test_the_folder_answers_each_pair_with_its_own_folds_head(fold_run):
    root, ctx, record = fold_run
    pooled = {json.loads(line)["id"]: json.loads(line) for line in (root / "heads" / "predictions.jsonl").read_text().splitlines()}
    by_id = {r.id: r for r in impli_folds(ctx, 400)[0]}
    sample = [by_id[i] for i in sorted(pooled)[:40]]
    method = TrainedMethod(model=str(root / "heads"), batch_size=7)  # another batch size than training's
    answers = method.predict(sample)
    for record_, answer in zip(sample, answers):
        row = pooled[record_.id]
        assert answer.meta["fold"] == row["meta"]["fold"]  # routed by idiom/premise to the fold that never saw it
        assert answer.prediction == row["prediction"]
        assert answer.scores["non-entailment"] == pytest.approx(row["scores"]["non-entailment"], abs=2e-3)


def test_a_pair_outside_impli_gets_the_mean_of_the_heads(fold_run):
    root, ctx, _ = fold_run
    pair = get_task("flute").load("val", ctx)[0]
    answer = TrainedMethod(model=str(root / "heads")).predict([pair])[0]
    assert answer.meta == {"fold": None, "heads": "mean of the ten folds"} and answer.prediction in ("entailment", "non-entailment")


def test_figlang_train_refuses_fold_heads_and_says_how_to_make_them():
    with pytest.raises(FiglangError, match="train_fold_heads.py"):
        check_method("nli-fold-heads")
