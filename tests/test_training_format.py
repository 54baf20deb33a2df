"""Input formatting of the trained models, the data order, presets and configuration (no training)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.methods.trained import assemble, fit_segments, relation_of
from figlang.methods.trained.multiple_choice import ChoiceScorerModel, relation_groups
from figlang.training.trainer import epoch_plan, make_config, seeded_subset


@pytest.fixture(scope="module")
def idiom_dev(data_dir):
    return get_task("idiom-cloze").load("dev", data_dir)


@pytest.fixture(scope="module")
def knowledge_model(minilm_path):
    torch.manual_seed(0)
    model = ChoiceScorerModel.from_base(str(minilm_path), "mc-context", max_length=256)
    model.module.eval()
    return model


def test_fit_segments_cuts_in_order_and_respects_floors():
    assert fit_segments([10, 50, 20], 100, order=[1, 0, 2]) == [10, 50, 20]
    # the narrative (index 1) is cut first, down to its floor, then the inference, then the continuation
    assert fit_segments([10, 50, 20], 60, order=[1, 0, 2], floors=[4, 32, 0]) == [8, 32, 20]
    assert fit_segments([10, 50, 20], 55, order=[1, 0, 2], floors=[4, 32, 0]) == [4, 32, 19]
    assert sum(fit_segments([10, 50, 20], 20, order=[1, 0, 2], floors=[4, 32, 0])) == 20


def test_assemble_keeps_the_end_of_a_left_truncated_segment():
    ids, types = assemble(
        [[1, 2, 3, 4, 5], [6, 7]], cls_id=100, sep_id=101, max_length=8, order=[0, 1], keep_end=[True, False], second_segment_from=1
    )
    assert ids == [100, 3, 4, 5, 101, 6, 7, 101]
    assert types == [0, 0, 0, 0, 0, 1, 1, 1]


def test_knowledge_input_is_inference_sep_narrative_sep_continuation(knowledge_model, idiom_dev):
    tok = knowledge_model.tokenizer
    record = idiom_dev[0]
    feat = knowledge_model.featurize(record)
    infs = record.inferences["context"]
    assert len(infs) == 12
    assert len(feat["seqs"]) == 12 * len(record.options)  # every inference × every option, one batch
    assert feat["choice"] == [0] * 12 + [1] * 12
    narrative = record.narrative.replace("<b>", "").replace("</b>", "")
    for k, option in enumerate(record.options):
        for j, inf in enumerate(infs):
            ids, _ = feat["seqs"][k * 12 + j]
            expected = (
                [tok.cls_token_id]
                + tok(inf, add_special_tokens=False)["input_ids"]
                + [tok.sep_token_id]
                + tok(narrative, add_special_tokens=False)["input_ids"]
                + [tok.sep_token_id]
                + tok(option, add_special_tokens=False)["input_ids"]
                + [tok.sep_token_id]
            )
            assert ids == expected
    text = tok.decode(feat["seqs"][0][0])
    assert text.startswith("[CLS] " + infs[0].lower()) and text.count("[SEP]") == 3


def test_knowledge_scores_are_sums_over_inferences(minilm_path, idiom_dev):
    torch.manual_seed(0)
    knowledge_model = ChoiceScorerModel.from_base(str(minilm_path), "mc-context", max_length=48)
    knowledge_model.module.eval()
    record = idiom_dev[1]
    feat = knowledge_model.featurize(record, inference_subset=[0, 5, 11])
    assert len(feat["seqs"]) == 3 * len(record.options)
    batch = knowledge_model.collate([feat])
    with torch.no_grad():
        option_scores = knowledge_model.scores(batch)[0]
        one_by_one = []
        for ids, types in feat["seqs"]:
            t = torch.tensor([ids])
            kwargs = {"token_type_ids": torch.tensor([types])} if knowledge_model.use_token_types else {}
            one_by_one.append(float(knowledge_model.module(t, torch.ones_like(t), **kwargs)[0]))
    for k in range(len(record.options)):
        expected = sum(s for s, c in zip(one_by_one, feat["choice"]) if c == k)
        assert float(option_scores[k]) == pytest.approx(expected, abs=1e-3)


def test_knowledge_truncation_cuts_the_narrative_first(minilm_path, idiom_dev):
    model = ChoiceScorerModel.from_base(str(minilm_path), "mc-literal", max_length=64)
    tok = model.tokenizer
    record = idiom_dev[2]
    narrative = record.narrative.replace("<b>", "").replace("</b>", "")
    ids, _ = model.sequence(narrative, record.options[0], record.inferences["literal"][0])
    assert len(ids) == 64
    inf_ids = tok(record.inferences["literal"][0], add_special_tokens=False)["input_ids"]
    cont_ids = tok(record.options[0], add_special_tokens=False)["input_ids"]
    narr_ids = tok(narrative, add_special_tokens=False)["input_ids"]
    kept = 64 - 4 - len(inf_ids) - len(cont_ids)
    assert ids[1 : 1 + len(inf_ids)] == inf_ids  # the inference is whole
    assert ids[-1 - len(cont_ids) : -1] == cont_ids  # so is the continuation
    assert ids[2 + len(inf_ids) : 2 + len(inf_ids) + kept] == narr_ids[-kept:]  # the narrative keeps its end (the idiom)


def test_continuation_only_and_plain_formats(minilm_path, idiom_dev):
    record = idiom_dev[0]
    plain = ChoiceScorerModel.from_base(str(minilm_path), "mc", max_length=256)
    cont = ChoiceScorerModel(plain.module, plain.tokenizer, "mc-continuation", max_length=256)
    tok = plain.tokenizer
    p = plain.featurize(record)
    c = cont.featurize(record)
    assert len(p["seqs"]) == len(c["seqs"]) == 2
    assert tok.decode(c["seqs"][1][0]) == f"[CLS] {record.options[1].lower()} [SEP]"
    assert tok.decode(p["seqs"][0][0]).count("[SEP]") == 2
    assert "<b>" not in tok.decode(p["seqs"][0][0])
    meaning = ChoiceScorerModel(plain.module, plain.tokenizer, "mc-meaning", max_length=256)
    m = meaning.featurize(record)
    assert len(m["seqs"]) == 2
    assert m["seqs"][0][0] == (
        [tok.cls_token_id] + tok(record.meaning, add_special_tokens=False)["input_ids"] + [tok.sep_token_id] + p["seqs"][0][0][1:]
    )


def test_missing_inferences_are_an_error(knowledge_model, idiom_dev):
    bare = replace(idiom_dev[0], inferences={})
    with pytest.raises(FiglangError, match="no context inferences"):
        knowledge_model.featurize(bare)


def test_relations_of_the_real_inferences(idiom_dev, data_dir):
    context = {relation_of(i) for r in idiom_dev for i in r.inferences["context"]}
    assert context == {"xNeed", "xIntent", "xWant", "xReact", "xEffect", "xAttr"}
    literal = {relation_of(i) for r in idiom_dev for i in r.inferences["literal"]}
    assert literal <= {"HasProperty", "CapableOf", "Desires", "AtLocation", "UsedFor", "MadeUpOf", "other"}
    assert sum(relation_of(i) == "other" for r in idiom_dev for i in r.inferences["literal"]) < 0.02 * 12 * len(idiom_dev)
    simile = get_task("simile-cloze").load("dev", data_dir)[0]
    assert set(relation_groups(simile, "literal")) == {"HasProperty"}
    groups = relation_groups(idiom_dev[0], "context")
    assert sorted(j for idx in groups.values() for j in idx) == list(range(12))


def test_epoch_plan_is_a_deterministic_permutation():
    lengths = [5, 9, 3, 7, 1, 8, 2, 6, 4, 10, 11]
    a = epoch_plan(lengths, batch_size=3, grad_accum=2, seed=1, epoch=0)
    assert a == epoch_plan(lengths, batch_size=3, grad_accum=2, seed=1, epoch=0)
    assert a != epoch_plan(lengths, batch_size=3, grad_accum=2, seed=1, epoch=1)
    flat = sorted(i for step in a for batch in step for i in batch)
    assert flat == list(range(len(lengths)))
    assert all(len(step) <= 2 for step in a)


def test_seeded_subset_keeps_order_and_is_stable(idiom_dev):
    a = seeded_subset(idiom_dev, 20, seed=3)
    assert a == seeded_subset(idiom_dev, 20, seed=3)
    assert len(a) == 20
    positions = [idiom_dev.index(r) for r in a]
    assert positions == sorted(positions)
    assert seeded_subset(idiom_dev, None, 0) == idiom_dev


def test_presets_and_overrides():
    cfg = make_config("idiom-cloze", "mc", "minilm", "/tmp/x")
    assert cfg.preset == "cpu-cloze" and cfg.epochs == 2 and cfg.lr == 3e-5
    paper = make_config("idiom-cloze", "mc", "roberta-large", "/tmp/x", preset="paper-mc", epochs=3)
    assert (paper.epochs, paper.lr, paper.batch_size) == (3, 1e-5, 8)  # explicit options beat the preset
    assert make_config("flute", "nli", "minilm", "/tmp/x").preset == "cpu-nli"
    assert make_config("idiom-cloze", "mc-context", "minilm", "/tmp/x").preset == "cpu-knowledge"
    assert make_config("flute", "iro", "smollm2-135m", "/tmp/x").limit == 2000  # cpu-iro trains on a sample
    assert make_config("flute", "iro", "smollm2-135m", "/tmp/x", limit=0).limit is None  # `--limit all`: every record
    from typer import BadParameter

    from figlang.cli.train_cmds import parse_limit

    assert (parse_limit("all"), parse_limit("ALL"), parse_limit("300"), parse_limit(None)) == (0, 0, 300, None)
    for bad in ("0", "-5", "many"):
        with pytest.raises(BadParameter, match="--limit all"):
            parse_limit(bad)
    with pytest.raises(FiglangError, match="unknown training option"):
        make_config("flute", "nli", "minilm", "/tmp/x", learning_rate=1)
    with pytest.raises(FiglangError, match="unknown training method"):
        make_config("flute", "svm", "minilm", "/tmp/x")
