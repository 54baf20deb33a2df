"""Regression tests for reviewed trainer bugs: gradient accumulation of token-mean losses, resuming on other
data, the relation of literal inferences, missing inference slots, the carved dev split and overlapping dev
splits, strict JSON in the training log, and early stopping with select=last.

Real small models (the catalog's MiniLM encoder; a tiny random Llama on MiniLM's tokenizer) and the real data.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.methods.trained import relation_of
from figlang.training import loop, trainer
from figlang.training.trainer import TrainLog, make_config, run_training, seeded_subset

TINY_MC = dict(epochs=1, batch_size=2, max_length=32, lr=1e-4, warmup_ratio=0.0, threads=1, progress=False, log_every=1, eval_batch_size=8)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, minilm_path, save_tiny_llama) -> Path:
    """A 2-layer random Llama on MiniLM's (real) tokenizer, [SEP] as its end of sequence."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(minilm_path)
    tok.eos_token = tok.sep_token
    return save_tiny_llama(tok, tmp_path_factory.mktemp("tiny-llama-minilm"), bos_token_id=tok.cls_token_id)


@pytest.fixture(scope="module")
def idiom_cloze(data_dir):
    task = get_task("idiom-cloze")
    return task.load("train-disjoint", data_dir), task.load("dev-disjoint", data_dir)


class _Captured(Exception):
    pass


def _first_step_gradient(monkeypatch, cfg, train_records, dev_records) -> list[torch.Tensor]:
    """The accumulated gradient of the trainer's first optimizer step (read where it clips the gradient)."""
    grads: list[torch.Tensor] = []

    def capture(parameters, *args, **kwargs):
        params = list(parameters)
        grads.extend(torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in params)
        raise _Captured

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", capture)
    with pytest.raises(_Captured):
        run_training(cfg, train_records, dev_records)
    monkeypatch.undo()
    return grads


# --- 1. gradient accumulation of token-mean losses --------------------------------------------------------------


@pytest.mark.parametrize("task_name,method", [("idiom-generation", "generator"), ("flute", "iro")])
def test_grad_accum_split_gives_the_gradient_of_one_batch(task_name, method, monkeypatch, tmp_path, tiny_llama, data_dir):
    task = get_task(task_name)
    records = task.load("train", data_dir)
    # four records whose targets differ in length (the weighting matters), one target each
    picked, lengths = [], set()
    for r in seeded_subset(records, 400, 0):
        n = len(r.references) if method == "generator" else 1
        size = len(str(r.references[0] if method == "generator" else r.explanation).split())
        if n == 1 and size not in lengths:
            picked.append(r)
            lengths.add(size)
        if len(picked) == 4:
            break
    dev = picked[:1]
    common = dict(max_length=96, max_target_length=24, epochs=1, lr=1e-3, warmup_ratio=0.0, threads=1, progress=False, dropout=0.0)
    one = make_config(task_name, method, str(tiny_llama), tmp_path / "one", batch_size=4, grad_accum=1, **common)
    split = make_config(task_name, method, str(tiny_llama), tmp_path / "split", batch_size=2, grad_accum=2, **common)
    g_one = _first_step_gradient(monkeypatch, one, picked, dev)
    g_split = _first_step_gradient(monkeypatch, split, picked, dev)
    assert len(g_one) == len(g_split) and g_one
    diff = math.sqrt(sum(float((a - b).pow(2).sum()) for a, b in zip(g_one, g_split)))
    norm = math.sqrt(sum(float(a.pow(2).sum()) for a in g_one))
    assert norm > 0
    assert diff / norm < 1e-4, f"relative gradient difference {diff / norm:.3%} between 1×4 and 2×2 micro-batches"
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-7) for a, b in zip(g_one, g_split))


# --- 2. resuming on other data is refused -------------------------------------------------------------------------


def test_resuming_on_other_data_is_refused(tmp_path, minilm_path, idiom_cloze):
    train_all, dev_all = idiom_cloze
    train_records, dev_records = seeded_subset(train_all, 4, 0), seeded_subset(dev_all, 2, 1)
    cfg = make_config("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", **TINY_MC)
    run_training(cfg, train_records, dev_records)
    other_train = seeded_subset(train_all, 4, 5)
    with pytest.raises(FiglangError, match=r"other data \(train records: 4 with sha256 .*new --out.*--restart"):
        run_training(cfg, other_train, dev_records)
    with pytest.raises(FiglangError, match=r"other data \(dev records: 2 .* → 3 "):
        run_training(cfg, train_records, seeded_subset(dev_all, 3, 1))
    _, again = run_training(cfg, train_records, dev_records)  # the same data resumes (the run is finished: nothing to do)
    assert again.resumed
    state = json.loads((tmp_path / "run" / "checkpoint" / "state.json").read_text())
    assert state["data"]["train_records_sha256"] == trainer.records_digest(train_records)
    assert state["data"]["dev_records_sha256"] == trainer.records_digest(dev_records)
    _, restarted = run_training(cfg, other_train, dev_records, restart=True)
    assert not restarted.resumed


# --- 3. relations of the shipped inferences -------------------------------------------------------------------------


def test_every_shipped_inference_maps_to_a_relation_of_its_kind(data_dir):
    from figlang.knowledge.providers import CONTEXT_RELATIONS, LITERAL_RELATIONS

    assert relation_of("jobs has propetry of being needed to pay bills") == "HasProperty"
    assert relation_of("The associated property is needed for construction") == "HasProperty"
    assert relation_of("face is made of skin") == "MadeUpOf"
    assert relation_of("The narrator needed to find a goat") == "xNeed"
    seen: dict[str, set[str]] = {"context": set(), "literal": set()}
    for name in ("idiom-cloze", "simile-cloze"):
        task = get_task(name)
        for split in ("train", "dev", "test"):
            for r in task.load(split, data_dir):
                for kind, allowed in (("context", CONTEXT_RELATIONS), ("literal", LITERAL_RELATIONS)):
                    for inf in r.inferences.get(kind, ()):
                        rel = relation_of(inf)
                        assert rel in allowed, f"{name}/{split} {r.id}: {kind} inference {inf!r} → {rel}"
                        seen[kind].add(rel)
    assert seen["context"] == set(CONTEXT_RELATIONS)
    assert seen["literal"] == set(LITERAL_RELATIONS)


# --- 4. an inference slot a record lacks ---------------------------------------------------------------------------


def test_missing_inference_slot_marks_the_item_instead_of_aborting(minilm_path, data_dir):
    from figlang.methods.trained.multiple_choice import ChoiceScorerModel

    records = get_task("idiom-cloze").load("dev", data_dir)
    short = next(r for r in records if r.id == "idiom-dev-45")
    assert 0 < len(short.inferences["literal"]) < 12
    full = [r for r in records if len(r.inferences["literal"]) >= 12][:2]
    torch.manual_seed(0)
    model = ChoiceScorerModel.from_base(str(minilm_path), "mc-literal", max_length=96)
    preds = model.predict([full[0], short, full[1]], batch_size=8, inference_subset=[11])
    assert [p.id for p in preds] == [full[0].id, short.id, full[1].id]
    assert preds[0].valid and preds[2].valid and preds[0].prediction in (0, 1)
    bad = preds[1]
    assert not bad.valid and bad.prediction is None
    assert f"has {len(short.inferences['literal'])} literal inferences, none in the selected slot(s) 12" in bad.error
    assert "inference files" not in bad.error
    # a slot the record has still answers; a record with no inferences at all is still missing data
    assert model.predict([short], inference_subset=[0])[0].valid
    from dataclasses import replace

    with pytest.raises(FiglangError, match="needs the literal inference files"):
        model.predict([replace(short, inferences={})], inference_subset=[11])


def test_a_record_without_inferences_is_marked_and_left_out_of_training(tmp_path, minilm_path, idiom_cloze, capsys):
    """A provider that finds nothing for one rare word must not abort a run over thousands of records."""
    from dataclasses import replace

    from figlang.methods.trained.multiple_choice import ChoiceScorerModel

    train_all, dev_all = idiom_cloze
    train_records, dev_records = list(seeded_subset(train_all, 4, 0)), list(seeded_subset(dev_all, 3, 1))
    bare = replace(dev_records[1], inferences={**dev_records[1].inferences, "literal": ()})
    torch.manual_seed(0)
    model = ChoiceScorerModel.from_base(str(minilm_path), "mc-literal", max_length=96)
    preds = model.predict([dev_records[0], bare, dev_records[2]], batch_size=8)
    assert [p.valid for p in preds] == [True, False, True] and preds[1].prediction is None
    assert "has no literal inferences (the knowledge provider found none)" in preds[1].error and preds[1].meta["inferences"] == 0
    alone = model.predict([dev_records[0], dev_records[2]], batch_size=8)
    assert [p.scores for p in alone] == [preds[0].scores, preds[2].scores]

    train_records[2] = replace(train_records[2], inferences={**train_records[2].inferences, "literal": ()})
    cfg = make_config("idiom-cloze", "mc-literal", str(minilm_path), tmp_path / "run", **{**TINY_MC, "progress": True, "max_length": 96})
    run_training(cfg, train_records, dev_records)
    start = next(
        json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines() if json.loads(line)["event"] == "start"
    )
    assert start["dropped"] == {"train": [train_records[2].id], "dev": []} and start["train_items"] == 3
    assert "train: 1 of 4 records left out" in capsys.readouterr().err


# --- 5. the carved dev split and dev splits that overlap train --------------------------------------------------------


def test_carved_dev_leaves_no_idiom_variant_in_train(data_dir):
    from figlang.data.splits import narrative_links

    task = get_task("idiom-cloze")
    cfg = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", train_split="train", dev_split="carve", data_dir=str(data_dir), seed=0)
    train, dev, sets, _ = trainer._task_data(task, cfg)
    in_dev = {v for r in dev for v in narrative_links(r)}
    leaked = [r.id for r in train if any(v in in_dev for v in narrative_links(r))]
    assert not leaked, f"{len(leaked)} train records share an expression or idiom gloss with the carved dev (first {leaked[0]})"
    assert not {r.id for r in train} & {r.id for r in dev}
    assert "carved-dev" not in sets and list(sets) == ["dev"]  # the carved dev chooses the model; it is not reported
    both = make_config(
        "idiom-cloze",
        "mc",
        "minilm",
        "/tmp/unused",
        train_split="train",
        dev_split="carve",
        data_dir=str(data_dir),
        seed=0,
        report_splits=("carve", "dev"),
        select_on_eval_split=True,
    )
    _, dev2, sets2, info = trainer._task_data(task, both)
    assert sets2["carved-dev"] is dev2 and info["provenance"]["selection_reported"]
    assert info["provenance"]["selection_split"]["epoch"] == "carved-dev"


def test_dev_split_overlapping_train_is_refused(data_dir):
    task = get_task("idiom-cloze")
    cfg = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", train_split="train", dev_split="dev-disjoint", data_dir=str(data_dir))
    with pytest.raises(FiglangError, match=r"dev split 'dev-disjoint' shares \d+ of its \d+ records with the train split 'train'"):
        trainer._task_data(task, cfg)
    ok = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", data_dir=str(data_dir))  # train-fit / selection
    train, dev, sets, info = trainer._task_data(task, ok)
    assert info["task"]["train_split"] == "train-fit" and not {r.id for r in train} & {r.id for r in dev}
    assert info["task"]["dev_split"] == "selection" and list(sets) == ["dev-disjoint", "dev"]


def test_selecting_on_a_reported_split_is_refused_unless_asked_and_then_recorded(data_dir):
    """The split that early-stops and keeps the checkpoint may not also be a reported figure, unless the run says so;
    then the provenance says which choice was made on it."""
    task = get_task("idiom-cloze")
    quiet = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", train_split="train-disjoint", data_dir=str(data_dir))
    assert list(trainer._task_data(task, quiet)[2]) == ["dev"]  # selecting on dev-disjoint: it is left out of the report
    old = make_config(
        "idiom-cloze",
        "mc",
        "minilm",
        "/tmp/unused",
        train_split="train-disjoint",
        data_dir=str(data_dir),
        report_splits=("dev-disjoint", "dev"),
    )
    with pytest.raises(FiglangError, match=r"'dev-disjoint' would both choose the model .* --select-on-eval-split"):
        trainer._task_data(task, old)  # the pre-selection default: train-disjoint, chosen and reported on dev-disjoint
    told = make_config(
        "idiom-cloze",
        "mc",
        "minilm",
        "/tmp/unused",
        train_split="train-disjoint",
        data_dir=str(data_dir),
        report_splits=("dev-disjoint", "dev"),
        select_on_eval_split=True,
        chosen_on={"layer": "dev-disjoint"},
    )
    _, dev, sets, info = trainer._task_data(task, told)
    prov = info["provenance"]
    assert "dev-disjoint" in sets and prov["selection_reported"] and prov["select_on_eval_split"]
    assert prov["selection_split"] == {"epoch": "dev-disjoint", "checkpoint": "dev-disjoint", "layer": "dev-disjoint"}
    assert prov["splits"]["dev-disjoint"]["items"] == len(dev) == 278
    default = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", data_dir=str(data_dir))
    prov = trainer._task_data(task, default)[3]["provenance"]
    assert not prov["selection_reported"] and set(prov["splits"]) == {"train-fit", "selection"}
    assert prov["code"]["git_commit"] is None or len(prov["code"]["git_commit"]) == 40


# --- 6. strict JSON in the training log -----------------------------------------------------------------------------


def _strict_rows(path: Path) -> list[dict]:
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return [json.loads(line, parse_constant=refuse) for line in path.read_text(encoding="utf-8").splitlines()]


def test_result_files_are_strict_json(tmp_path):
    """figlang.json and train_result.json are read by people and other tools (jq, JavaScript): no NaN literals."""
    trainer._atomic_json(tmp_path / "figlang.json", {"metrics": {"dev_loss": float("nan"), "dev_accuracy": 0.5}, "best": [float("-inf")]})
    meta = json.loads((tmp_path / "figlang.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert meta == {"metrics": {"dev_loss": None, "dev_loss_nonfinite": "nan", "dev_accuracy": 0.5}, "best": [None]}


def test_train_log_writes_non_finite_numbers_as_null(tmp_path):
    log = TrainLog(tmp_path / "log.jsonl")
    log.write(event="train", step=1, loss=float("nan"), lr=1e-4)
    log.write(event="skipped", step=2, loss=float("inf"), best={"dev_loss": float("-inf")})
    rows = _strict_rows(tmp_path / "log.jsonl")
    assert rows[0]["loss"] is None and rows[0]["loss_nonfinite"] == "nan" and rows[0]["lr"] == 1e-4
    assert rows[1]["loss"] is None and rows[1]["loss_nonfinite"] == "inf"
    assert rows[1]["best"] == {"dev_loss": None, "dev_loss_nonfinite": "-inf"}


# every update is skipped here, so torch warns that the schedule stepped without the optimizer: that is the point
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before:UserWarning")
def test_training_with_a_nan_loss_keeps_the_log_strict_json(tmp_path, minilm_path, idiom_cloze, monkeypatch):
    from figlang.methods.trained.multiple_choice import ChoiceScorerModel

    original = ChoiceScorerModel.loss
    monkeypatch.setattr(ChoiceScorerModel, "loss", lambda self, batch: original(self, batch) * float("nan"))
    train_all, dev_all = idiom_cloze
    cfg = make_config("idiom-cloze", "mc-continuation", str(minilm_path), tmp_path / "run", **TINY_MC)
    _, summary = run_training(cfg, seeded_subset(train_all, 4, 0), seeded_subset(dev_all, 2, 1))
    assert summary.state.skipped_steps == 2
    rows = _strict_rows(tmp_path / "run" / "train_log.jsonl")
    skipped = [r for r in rows if r["event"] == "skipped"]
    assert len(skipped) == 2 and all(r["loss"] is None and r["loss_nonfinite"] == "nan" for r in skipped)
    assert any(r["event"] == "train" and r["loss"] is None for r in rows)


# --- 7. select=last keeps early stopping ------------------------------------------------------------------------


@pytest.mark.parametrize("select", ["last", "best"])
def test_early_stopping_counts_with_select_last_too(select, tmp_path, minilm_path, idiom_cloze, monkeypatch):
    calls = []

    def falling(model, feats, batch_size):  # dev accuracy falls at every evaluation: 0.5, 0.45, 0.4, …
        calls.append(1)
        return 0.55 - 0.05 * len(calls)

    monkeypatch.setattr(loop, "_accuracy", falling)  # the trainer's dev accuracy
    train_all, dev_all = idiom_cloze
    cfg = make_config(
        "idiom-cloze",
        "mc-continuation",
        str(minilm_path),
        tmp_path / "run",
        **{**TINY_MC, "epochs": 2, "eval_every": 1, "patience": 2, "select": select},
    )
    _, summary = run_training(cfg, seeded_subset(train_all, 8, 0), seeded_subset(dev_all, 2, 1))
    state = summary.state
    assert summary.stopped == "early-stopping" and state.step == 3  # 0.5, then two evaluations without improvement
    assert state.best["step"] == (3 if select == "last" else 1)  # select decides which model is kept, not when to stop


def test_training_data_with_contradictory_copies_is_named(data_dir, capsys):
    """FLUTE train holds one pair labelled both ways: training keeps it (as published) and says so in figlang.json."""
    from figlang.training.trainer import _task_data

    cfg = make_config("flute", "nli", "minilm", "/tmp/unused", data_dir=str(data_dir), progress=True)
    train, dev, _, info = _task_data(get_task("flute"), cfg)
    (conflict,) = info["data"]["label_conflicts"]
    ids = {r["id"] for r in conflict["records"]}
    assert ids == {"train-4539", "train-5830"} and ids <= {r.id for r in [*train, *dev]}
    assert "1 item(s) in the training data occur with different gold labels" in capsys.readouterr().err
    quiet = make_config("idiom-cloze", "mc", "minilm", "/tmp/unused", data_dir=str(data_dir), progress=True)
    assert "label_conflicts" not in _task_data(get_task("idiom-cloze"), quiet)[3]["data"]
