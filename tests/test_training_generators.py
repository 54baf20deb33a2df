"""The generating trained models (iro, generator, generator-context/-literal): each trains a few steps on a
small real slice and its loss falls; save → load → eval gives identical predictions; and the decoder's
properties: summed-logit decoding with one inference is plain decoding, the cached batched decoder equals a
naive full recompute, and batching the 12 prompts gives the same logits as running them one at a time.

The models are tiny and randomly initialised (a 2-layer Llama with smollm2-135m's real tokenizer, a 2-layer
T5 with MiniLM's tokenizer) so that the tests stay quick on a shared CPU; the real runs with smollm2-135m
are in docs/research/trained_models.md.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.methods.trained import load_trained, read_figlang_json
from figlang.methods.trained.generator import (
    SEP1,
    SEP2,
    GeneratorModel,
    IncrementalDecoder,
    choose_token,
    decode_groups,
    flute_target,
    sentence_done,
)
from figlang.methods.trained.nli_classifier import load_rationales
from figlang.training import train
from figlang.training.trainer import build_model, make_config, resolve_base, set_seeds

TINY = dict(
    limit=6,
    dev_limit=3,
    report_limit=3,
    epochs=2,
    batch_size=2,
    lr=3e-3,
    warmup_ratio=0.0,
    max_length=128,
    max_target_length=24,
    select="last",
    threads=1,
    progress=False,
    log_every=1,
    eval_batch_size=8,
)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory, save_tiny_llama) -> Path:
    """A 2-layer random Llama with smollm2-135m's tokenizer (49,152 tokens, <|im_end|> as end of sequence)."""
    from transformers import AutoTokenizer

    from figlang.backends.loading import resolve

    try:
        tok = AutoTokenizer.from_pretrained(resolve("smollm2-135m").path)
    except Exception as err:  # pragma: no cover - the catalog model ships with the dev environment
        pytest.skip(f"smollm2-135m is not available: {err}")
    return save_tiny_llama(tok, tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory, minilm_path) -> Path:
    """A 2-layer random T5 with MiniLM's (real) tokenizer, as tests/test_backend_transformers.py builds it."""
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    tok = AutoTokenizer.from_pretrained(minilm_path)
    tok.eos_token = tok.sep_token
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(
        T5Config(
            vocab_size=tok.vocab_size,
            d_model=32,
            d_kv=8,
            d_ff=64,
            num_layers=2,
            num_heads=2,
            pad_token_id=0,
            eos_token_id=tok.sep_token_id,
            decoder_start_token_id=0,
        )
    )
    root = tmp_path_factory.mktemp("tiny-t5")
    model.save_pretrained(root)
    tok.save_pretrained(root)
    return root


def _mean_loss(model, records) -> float:
    return model.dev_metric(model.features(records), 16)


def _initial_loss(task, method, base, records, **options) -> float:
    cfg = make_config(task, method, str(base), "/tmp/unused", **{**TINY, **options})
    set_seeds(cfg.seed)
    return _mean_loss(build_model(cfg, resolve_base(str(base)), get_task(task).labels), records)


def _check_dir(out: Path, method: str, shape: str) -> dict:
    meta = read_figlang_json(out)
    assert meta["status"] == "complete" and meta["method"] == method and meta["shape"] == shape and meta["model_class"] == "generator"
    assert meta["best"]["dev_loss"] > 0 and "dev_accuracy" not in meta["best"]
    assert meta["base_model"]["path"] and meta["data"]["train_records_sha256"]
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file() and (out / "model.safetensors").is_file()
    assert (out / "loss_curve.png").stat().st_size > 1000
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert {"start", "train", "eval", "stop"} <= {r["event"] for r in rows}
    assert all("loss" in r for r in rows if r["event"] == "eval")
    return meta


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# --- iro: FLUTE's self-rationalizing model -------------------------------------------------------------------


def _reevaluated(model_dir: Path, data_dir: Path, folder: Path, **method_options):
    """The harness run of a saved model on the first 3 val pairs (written to ``folder``) and its prediction rows."""
    run = evaluate(
        "flute",
        "trained",
        model=str(model_dir),
        split="val",
        data_dir=data_dir,
        limit=3,
        use_cache=False,
        progress=False,
        out_dir=folder,
        method_options=method_options or None,
    )
    return run, _rows(folder / "predictions.jsonl")


@pytest.mark.parametrize("arch", ["causal", "seq2seq"])
def test_iro_trains_saves_loads_evals(arch, tmp_path, data_dir, tiny_llama, tiny_t5):
    base = tiny_llama if arch == "causal" else tiny_t5
    opts = {**TINY, "report_splits": ("val",)}
    task = get_task("flute")
    out = tmp_path / f"iro-{arch}"
    result = train("flute", "iro", str(base), out, data_dir=str(data_dir), **opts)
    assert result.stopped == "complete" and result.best_dev_loss is not None and result.best_dev_accuracy is None
    assert not (out / "choice").exists()  # chosen on its dev loss: no answers to keep, no decoding of the dev split
    meta = _check_dir(out, "iro", "nli")
    assert meta["labels"] == ["entailment", "contradiction"] or set(meta["labels"]) == {"entailment", "contradiction"}
    assert meta["input_format"]["architecture"] == arch and meta["input_format"]["decoding"]["do_sample"] is False
    loaded = load_trained(out)
    assert isinstance(loaded, GeneratorModel) and loaded.seq2seq == (arch == "seq2seq")
    # the trainer's records are a seeded subset of a premise-disjoint carve of train: the loss on what it trained on
    from figlang.training.trainer import _task_data

    cfg = make_config("flute", "iro", str(base), out, data_dir=str(data_dir), **opts)
    trained_on = _task_data(task, cfg)[0]
    before = _initial_loss("flute", "iro", base, trained_on, report_splits=("val",))
    after = _mean_loss(loaded, trained_on)
    assert after < before, f"iro/{arch}: training loss did not fall ({before:.4f} → {after:.4f})"

    # save → load → eval: the harness's answers from the directory equal the trainer's final report
    run, again = _reevaluated(out, data_dir, tmp_path / "eval")
    report = _rows(out / "eval" / "val" / "predictions.jsonl")
    keys = ("id", "prediction", "raw", "valid", "explanation")
    assert [{k: r.get(k) for k in keys} for r in again] == [{k: r.get(k) for k in keys} for r in report]
    assert run.results["method"]["fingerprint"]["decoding"]["do_sample"] is False


def test_iro_answers_are_parsed_into_label_and_explanation(tiny_llama, data_dir, tmp_path):
    """What the model writes goes through parse_nli_answer: label + explanation, invalid (with the raw text) when unreadable."""
    model = GeneratorModel.from_base(str(tiny_llama), "iro", max_length=128, max_target_length=24)
    records = get_task("flute").load("val", data_dir)[:3]
    answers = ["Contradicts. Loving a high bill is sarcastic.", "entails, because both say the same thing", "the weather is nice"]
    texts = iter(answers)
    model._decode = lambda groups, seeds, done, *_: [model.tokenizer(next(texts), add_special_tokens=False)["input_ids"] for _ in groups]  # type: ignore[method-assign]
    preds = model.predict(records, batch_size=1)
    by_raw = {p.raw: p for p in preds}
    assert by_raw[answers[0]].prediction == "contradiction" and by_raw[answers[0]].explanation == "Loving a high bill is sarcastic."
    assert by_raw[answers[1]].prediction == "entailment" and by_raw[answers[1]].explanation == "because both say the same thing"
    assert not by_raw[answers[2]].valid and by_raw[answers[2]].prediction is None
    # FLUTE's target format is what the model is trained on
    r = records[0]
    assert flute_target(r).startswith(("Entails. ", "Contradicts. ")) and r.explanation.split()[0] in flute_target(r)
    # a predictions.jsonl with an unreadable row is usable as predicted rationales for IR→O (empty rationale there)
    path = tmp_path / "predictions.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": rec.id, **({"explanation": p.explanation} if p.explanation else {})}) + "\n" for rec, p in zip(records, preds)
        )
    )
    lookup = load_rationales(path)
    assert [lookup(rec) for rec in records] == [p.explanation or "" for p in preds]


def _explain_with_writer(writer: Path, data_dir: Path, **options):
    """The explain method on smollm2-135m (float32, one thread, 12 new tokens) with a trained writer, bound to FLUTE
    and the run's data folder and fitted: its retrieval pool (selection) is read from that folder."""
    from figlang.methods.base import get_methods

    task = get_task("flute")
    method = get_methods().create(
        "explain",
        model="smollm2-135m",
        backend="transformers",
        dtype="float32",
        threads=1,
        max_new_tokens=12,
        pool="selection",
        writer=str(writer),
        **options,
    )
    ctx = RunContext.create(data_dir)
    method.bind(task, ctx)
    method.fit(task.load("train", ctx))
    return method


def test_iro_model_writes_the_explanation_after_a_label_it_is_given(tiny_llama, data_dir, tmp_path):
    """The pipeline's writer: the prompt is the training sequence up to the given label word (so the tokens the model
    continues from are exactly those it was trained on), greedy and repeatable, and the explain method hands the
    chosen figure types to it and the rest to the prompted model."""
    from figlang.methods.base import get_methods

    out = tmp_path / "iro"
    train("flute", "iro", str(tiny_llama), out, data_dir=str(data_dir), **{**TINY, "report_splits": ()})
    model = load_trained(out)
    records = get_task("flute").load("val", data_dir)[:4]
    labels = ["contradiction", "entailment", "entailment", "contradiction"]
    seen: list[list[int]] = []
    decode = model._decode

    def spy(groups, seeds, done, *rest):  # records what is decoded from; the decoding itself is the model's
        seen.extend(list(g[0]) for g in groups)
        return decode(groups, seeds, done, *rest)

    model._decode = spy  # type: ignore[method-assign]
    texts = model.explain_given(records, labels, batch_size=3)
    assert len(texts) == 4 and all(isinstance(t, str) and "\n" not in t for t in texts)
    for r, label in zip(records, labels):
        gold = dataclasses.replace(r, label=label)
        trained_on = model.featurize(gold)[0]["ids"]  # prompt + "Entails. <explanation><eos>" as in training
        prompt = next(p for p in seen if p == trained_on[: len(p)] and len(p) > len(model.prompts(r)[0]))
        assert model.tokenizer.decode(prompt[len(model.prompts(r)[0]) :]) == f"{'Entails' if label == 'entailment' else 'Contradicts'}."
    assert model.explain_given(records, labels, batch_size=1) == texts  # batching changes nothing; greedy repeats
    model._decode = decode  # type: ignore[method-assign]
    drawn = model.explain_samples(records, labels, 3, temperature=1.0, batch_size=2)
    assert len(drawn) == 4 and all(len(d) == 3 and all("\n" not in t for t in d) for d in drawn)
    assert model.explain_samples(records, labels, 3, temperature=1.0, batch_size=5) == drawn  # seeded per item and sample
    assert model.explain_samples(records[1:2], labels[1:2], 3, temperature=1.0) == drawn[1:2]  # not by its neighbours
    assert len({t for d in drawn for t in d}) > 4  # sampled, not greedy again
    with pytest.raises(FiglangError, match="temperature > 0"):
        model.explain_samples(records, labels, 2, temperature=0.0)
    with pytest.raises(FiglangError, match="not 'neutral'"):
        model.explain_given(records[:1], ["neutral"])

    # the explain method: sarcasm pairs by the writer, the rest by the prompted model with its retrieved examples
    task = get_task("flute")
    by_type = {}
    for r in task.load("val", data_dir):
        by_type.setdefault(r.figure_type, r)
    pairs = [by_type[t] for t in ("sarcasm", "idiom")]
    method = _explain_with_writer(out, data_dir, k=1, writer_types="sarcasm")
    sarcasm, idiom = method.predict(pairs)
    assert sarcasm.meta["writer"] == "trained" and "examples" not in sarcasm.meta
    assert sarcasm.raw.startswith(("Entails. ", "Contradicts. ")) and sarcasm.prediction in ("entailment", "contradiction")
    assert sarcasm.raw.split(". ", 1)[1] == model.explain_given([pairs[0]], [sarcasm.prediction])[0]
    assert "writer" not in idiom.meta and len(idiom.meta["examples"]) == 1
    from figlang.explain import explain

    answer = explain(
        pairs[0].premise,
        pairs[0].hypothesis,
        "sarcasm",
        model="smollm2-135m",
        data_dir=data_dir,
        use_cache=False,
        backend="transformers",
        dtype="float32",
        threads=1,
        k=1,
        max_new_tokens=12,
        pool="selection",
        writer=str(out),
    )
    assert answer.produced_by["writer"] == str(out) and answer.produced_by["k"] == 0 and answer.produced_by["examples"] == []
    assert answer.explanation == sarcasm.explanation and answer.label == sarcasm.prediction  # the API is the method
    config = method.config()
    assert config["writer"]["types"] == ["sarcasm"] and config["writer"]["trained_method"] == "iro" and config["writer"]["weights_identity"]
    assert "mbr" not in config["writer"]

    # writer_mbr: the greedy line and N samples, first sentences, the one closest to the others under ROUGE-L kept
    mbr = _explain_with_writer(out, data_dir, k=1, writer_types="sarcasm", writer_mbr=3, writer_temperature=1.0)
    (chosen,) = mbr.predict(pairs[:1])
    m = chosen.meta["mbr"]
    assert len(m["candidates"]) == 4 and m["candidates"][0] == (sarcasm.explanation or "")  # the greedy line first
    assert (chosen.explanation or "") == m["candidates"][m["chosen"]] and chosen.prediction == sarcasm.prediction
    assert m["mean_rouge_l"][m["chosen"]] == max(m["mean_rouge_l"])
    assert mbr.config()["writer"]["mbr"]["samples"] == 3 and mbr.config()["writer"]["mbr"]["utility"]["rouge_type"] == "rougeL"
    with pytest.raises(FiglangError, match="give writer=DIR"):
        get_methods().create("explain", model="smollm2-135m", writer_mbr=4)
    with pytest.raises(FiglangError, match="writer_temperature"):
        get_methods().create("explain", model="smollm2-135m", writer=str(out), writer_mbr=4, writer_temperature=0)
    with pytest.raises(FiglangError, match="mode=pipeline"):
        get_methods().create("explain", model="smollm2-135m", mode="joint", writer=str(out))
    with pytest.raises(FiglangError, match="give writer=DIR"):
        get_methods().create("explain", model="smollm2-135m", writer_types="sarcasm")
    with pytest.raises(FiglangError, match="unknown figure type"):
        get_methods().create("explain", model="smollm2-135m", writer=str(out), writer_types="irony")


def test_iro_model_with_examples_reads_its_nearest_solved_pairs(tiny_llama, data_dir, tmp_path):
    """--examples K: each training prompt starts with the K pool pairs nearest to it (same figure type and gold label,
    never itself), in the compact form; the saved model says so, cannot run without a pool, gets one from the harness
    (-O pool) and from the explain method, whose label picks the examples."""
    from figlang.methods.base import get_methods
    from figlang.methods.retrieval import PairIndex
    from figlang.methods.trained.iro_examples import example_text

    task = get_task("flute")
    out = tmp_path / "iro-shots"
    opts = {**TINY, "max_length": 400, "train_split": "selection", "report_splits": ("val",), "epochs": 1}
    train("flute", "iro", str(tiny_llama), out, data_dir=str(data_dir), examples=2, **opts)
    form = read_figlang_json(out)["input_format"]
    assert form["examples"]["k"] == 2 and form["examples"]["encoder"] == "minilm" and form["template"].startswith("{examples}")

    pool = task.load("selection", data_dir)  # the training split is the pool
    index = PairIndex(pool, "minilm")
    model = load_trained(out)
    assert model.examples == 2 and model.pool is None
    with pytest.raises(FiglangError, match="no pool"):
        model.featurize(pool[0])
    model.use_pool(pool)
    pair = next(r for r in pool if r.figure_type == "metaphor")
    for label in ("entailment", "contradiction"):
        near = index.nearest(pair.premise, pair.hypothesis, 2, pair.figure_type, label)
        assert len(near) == 2 and all(n.pair.label == label and n.pair.premise != pair.premise for n in near)
        block = "".join(example_text(n.pair) for n in near)
        assert block.count("Premise: ") == 2 and near[0].pair.explanation.split()[0] in block
        ids = model.featurize(dataclasses.replace(pair, label=label))[0]["ids"]
        shown = model.tokenizer.decode(ids)
        assert shown.startswith(block) and "Does the sentence" in shown[len(block) :]  # the examples, then the instruction
    # the given label picks the examples: an explanation after "Entails" reads entailing pairs, after "Contradicts" contradicting
    entail, contra = model._given_prompts([pair, pair], ["entailment", "contradiction"])
    for given, label in ((entail, "entailment"), (contra, "contradiction")):
        assert given == model.featurize(dataclasses.replace(pair, label=label))[0]["ids"][: len(given)]  # as trained

    # the harness gives the model its pool (-O pool=SPLIT) and answers as the trainer's report did
    _, rows = _reevaluated(out, data_dir, tmp_path / "eval", pool="selection")
    keys = ("id", "prediction", "raw")
    again = [{k: r.get(k) for k in keys} for r in rows]
    assert again == [{k: r.get(k) for k in keys} for r in _rows(out / "eval" / "val" / "predictions.jsonl")]

    # the explain method hands its own pool to the writer
    method = _explain_with_writer(out, data_dir, k=0, writer_types="sarcasm")
    sarcasm = next(r for r in task.load("val", data_dir) if r.figure_type == "sarcasm")
    (answer,) = method.predict([sarcasm])
    assert answer.meta["writer"] == "trained" and {r.id for r in method.writer.model.pool.pool} <= {r.id for r in pool}
    assert answer.raw.split(". ", 1)[1] == model.explain_given([sarcasm], [answer.prediction])[0]  # the same pool, the same text
    plain = tmp_path / "iro-plain"
    train("flute", "iro", str(tiny_llama), plain, data_dir=str(data_dir), **{**TINY, "epochs": 1, "report_splits": ()})
    with pytest.raises(FiglangError, match="trained without examples"):
        get_methods().create("trained", model=str(plain), pool="selection")
    with pytest.raises(FiglangError, match="not to 'generator'"):
        make_config("idiom-generation", "generator", str(tiny_llama), tmp_path / "x", data_dir=str(data_dir), examples=2)


# --- generators -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["generator", "generator-context", "generator-literal"])
def test_generators_train_save_load_eval(method, tmp_path, data_dir, tiny_llama):
    knowledge = method != "generator"
    extra = {"limit": 3, "max_inferences": 3, "report_limit": 2, "epochs": 1} if knowledge else {}
    opts = {**TINY, **extra}
    task = get_task("idiom-generation")
    out = tmp_path / method
    from figlang.training.trainer import _task_data

    cfg = make_config("idiom-generation", method, str(tiny_llama), out, data_dir=str(data_dir), **opts)
    trained_on = _task_data(task, cfg)[0]
    before = _initial_loss("idiom-generation", method, tiny_llama, trained_on, **extra)
    result = train("idiom-generation", method, str(tiny_llama), out, data_dir=str(data_dir), **opts)
    assert result.stopped == "complete"
    assert set(result.metrics) == {"dev-disjoint", "dev"}
    assert "rougeL" in result.metrics["dev"]["generation"] and "bleu" in result.metrics["dev"]["generation"]
    meta = _check_dir(out, method, "generation")
    fmt = meta["input_format"]
    assert fmt["decoding"] == {
        "do_sample": True,
        "top_k": 5,
        "temperature": 0.7,
        "max_new_tokens": 20,
        "min_new_tokens": 1,
        "samples": 1,
        "seed": 0,
    }
    assert fmt["knowledge"] == ({"generator-context": "context", "generator-literal": "literal"}.get(method))
    loaded = load_trained(out)
    after = _mean_loss(loaded, trained_on)
    assert after < before, f"{method}: training loss did not fall ({before:.4f} → {after:.4f})"
    if knowledge:
        vocab = loaded.tokenizer.get_vocab()
        assert SEP1 in vocab and SEP2 in vocab
        feats = loaded.featurize(trained_on[0])
        assert len({f["j"] for f in feats}) == 3  # one training sequence per inference (and reference)
        ids = feats[0]["ids"]
        assert ids.count(vocab[SEP1]) == 1 and ids.count(vocab[SEP2]) == 1 and ids.index(vocab[SEP1]) < ids.index(vocab[SEP2])
        assert all(lab == -100 for lab in feats[0]["labels"][: ids.index(vocab[SEP2]) + 1])  # loss on the continuation only

    limit = opts["report_limit"]
    run = evaluate(
        "idiom-generation",
        "trained",
        model=str(out),
        split="dev",
        data_dir=data_dir,
        limit=limit,
        use_cache=False,
        progress=False,
        out_dir=tmp_path / "eval",
    )
    again = _rows(tmp_path / "eval" / "predictions.jsonl")
    report = _rows(out / "eval" / "dev" / "predictions.jsonl")
    keys = ("id", "prediction", "raw", "valid")
    assert [{k: r.get(k) for k in keys} for r in again] == [{k: r.get(k) for k in keys} for r in report]
    assert all(isinstance(r["prediction"], list) and len(r["prediction"]) == 1 for r in again)
    assert "rougeL" in run.metrics["generation"]
    # another seed draws other samples; the same seed the same ones
    other = evaluate(
        "idiom-generation",
        "trained",
        model=str(out),
        split="dev",
        data_dir=data_dir,
        limit=limit,
        use_cache=False,
        progress=False,
        method_options={"seed": 1, "samples": 2},
    )
    assert all(len(p.prediction) == 2 for p in other.predictions.values())
    assert other.results["method"]["fingerprint"]["decoding"]["seed"] == 1


# --- the decoder ------------------------------------------------------------------------------------------------------


def _naive_decode(module, prompts, max_new, do_sample, temperature, top_k, seed, eos):
    """Reference: every step recomputes every prompt + the tokens so far in full (no cache, no batching), sums the logits."""
    gen = torch.Generator().manual_seed(seed)
    out: list[int] = []
    with torch.no_grad():
        for _ in range(max_new):
            logits = sum(module(input_ids=torch.tensor([list(p) + out])).logits[0, -1].float() for p in prompts)
            token = choose_token(logits, do_sample, temperature, top_k, gen if do_sample else None)
            if token in eos:
                break
            out.append(token)
    return out


@pytest.fixture(scope="module")
def knowledge_model(tiny_llama):
    model = GeneratorModel.from_base(str(tiny_llama), "generator-context", max_length=176, max_target_length=32)
    model.module.eval()
    return model


@pytest.fixture(scope="module")
def knowledge_record(data_dir):
    rec = get_task("idiom-generation").load("dev", data_dir)[0]
    assert len(rec.inferences["context"]) == 12
    return rec


def test_summed_logits_with_one_inference_is_plain_decoding(knowledge_model, knowledge_record):
    m = knowledge_model
    prompts = m.prompts(knowledge_record)
    for do_sample in (True, False):
        for j in (0, 5):
            single = decode_groups(
                m.module,
                [[prompts[j]]],
                pad_id=m.pad_id,
                eos_ids=m.stop_ids,
                max_new_tokens=12,
                do_sample=do_sample,
                temperature=0.7,
                top_k=5,
                seeds=[123],
            )
            plain = _naive_decode(m.module, [prompts[j]], 12, do_sample, 0.7, 5, 123, m.stop_ids)
            assert single[0] == plain and len(plain) > 0
    # and through the model: a record with one inference is decoded exactly like that one prompt alone
    from dataclasses import replace

    one = replace(knowledge_record, inferences={"context": knowledge_record.inferences["context"][:1]})
    m.set_decoding(seed=7)
    pred = m.predict([one], batch_size=24)[0]
    from figlang.methods.trained.generator import seed_of

    tokens = _naive_decode(m.module, [prompts[0]], 20, True, 0.7, 5, seed_of(7, one.id, 0), m.stop_ids)
    text = m.tokenizer.decode(tokens, skip_special_tokens=True)
    assert pred.raw is not None and text.startswith(pred.raw)  # the decoder may stop earlier, at the sentence end


def test_cached_batched_summed_decoding_equals_naive_recompute(knowledge_model, knowledge_record):
    m = knowledge_model
    prompts = m.prompts(knowledge_record)
    assert len(prompts) == 12 and len({len(p) for p in prompts}) > 1  # different lengths: left padding is exercised
    for do_sample in (True, False):
        fast = decode_groups(
            m.module,
            [prompts],
            pad_id=m.pad_id,
            eos_ids=m.stop_ids,
            max_new_tokens=10,
            do_sample=do_sample,
            temperature=0.7,
            top_k=5,
            seeds=[99],
        )
        slow = _naive_decode(m.module, prompts, 10, do_sample, 0.7, 5, 99, m.stop_ids)
        assert fast[0] == slow
    # groups in one batch decode exactly as when each runs alone (their own generators; finished groups leave the batch)
    groups = [prompts[:4], prompts[4:], [prompts[0]]]
    together = decode_groups(
        m.module, groups, pad_id=m.pad_id, eos_ids=m.stop_ids, max_new_tokens=8, do_sample=True, temperature=0.7, top_k=5, seeds=[1, 2, 3]
    )
    alone = [
        decode_groups(
            m.module, [g], pad_id=m.pad_id, eos_ids=m.stop_ids, max_new_tokens=8, do_sample=True, temperature=0.7, top_k=5, seeds=[s]
        )[0]
        for g, s in zip(groups, [1, 2, 3])
    ]
    assert together == alone


def test_min_new_tokens_keeps_the_end_token_from_being_drawn_first(knowledge_model, knowledge_record):
    m = knowledge_model
    prompts = m.prompts(knowledge_record)[:3]
    first = decode_groups(m.module, [prompts], pad_id=m.pad_id, eos_ids=set(), max_new_tokens=1, do_sample=False)[0][0]
    # make the greedy first token an end token: without a minimum the continuation is empty, with one it is not
    stop = {first, *m.stop_ids}
    empty = decode_groups(m.module, [prompts], pad_id=m.pad_id, eos_ids=stop, max_new_tokens=4, do_sample=False)[0]
    forced = decode_groups(m.module, [prompts], pad_id=m.pad_id, eos_ids=stop, max_new_tokens=4, do_sample=False, min_new_tokens=1)[0]
    assert empty == [] and forced and forced[0] not in stop
    assert m.decoding["min_new_tokens"] == 1  # the generators' default; iro keeps 0


def test_batching_the_12_prompts_gives_the_logits_of_one_at_a_time(knowledge_model, knowledge_record):
    m = knowledge_model
    prompts = m.prompts(knowledge_record)
    fed = [m.tokenizer(" He", add_special_tokens=False)["input_ids"][0], m.tokenizer(" could", add_special_tokens=False)["input_ids"][0]]
    batched = IncrementalDecoder(m.module, m.pad_id)
    steps_b = [batched.prefill(prompts)] + [batched.step([t] * len(prompts)) for t in fed]
    for i, p in enumerate(prompts):
        single = IncrementalDecoder(m.module, m.pad_id)
        steps_s = [single.prefill([p])] + [single.step([t]) for t in fed]
        for b, s in zip(steps_b, steps_s):
            torch.testing.assert_close(b[i], s[0], atol=1e-4, rtol=1e-4)
    # and dropping rows from the cache keeps the others' logits
    batched.keep([0, 3])
    nxt = batched.step([fed[0], fed[0]])
    for k, i in enumerate([0, 3]):
        single = IncrementalDecoder(m.module, m.pad_id)
        single.prefill([prompts[i]])
        for t in fed:
            single.step([t])
        torch.testing.assert_close(nxt[k], single.step([fed[0]])[0], atol=1e-4, rtol=1e-4)


def test_knowledge_prompts_keep_the_narrative_end_and_the_continuation_budget(knowledge_model, knowledge_record):
    m = knowledge_model
    short = GeneratorModel(m.module, m.tokenizer, "generator-context", max_length=80, max_target_length=32)
    for p in short.prompts(knowledge_record):
        assert len(p) <= 80 - 32
        assert p[-1] == short.sep2_id and p.count(short.sep1_id) == 1
    narrative_end = m.tokenizer(" places.", add_special_tokens=False)["input_ids"]
    text = m.tokenizer.decode(short.prompts(knowledge_record)[0])
    assert "go places" in text and len(narrative_end) > 0  # the narrative's end (with its idiom) survives truncation


def test_sentence_end_detection():
    assert not sentence_done("He paid $3.")  # may go on as "$3.50"
    assert sentence_done("He paid $3. Then")
    assert sentence_done("He left\nand")
    assert not sentence_done("\nHe left")
    assert not sentence_done("Mr. Smith")


@pytest.mark.parametrize("spare_rows", [0, 16])
def test_separators_start_at_the_mean_of_the_real_tokens_even_in_a_padded_matrix(minilm_path, spare_rows):
    """Qwen's matrix has spare rows past its tokenizer: <sep1>/<sep2> land there, on rows no token ever trained."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from figlang.methods.trained.generator import SEP1, SEP2, add_separators

    tok = AutoTokenizer.from_pretrained(minilm_path)
    real = len(tok)
    torch.manual_seed(0)
    module = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=real + spare_rows,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            tie_word_embeddings=False,
        )
    )
    with torch.no_grad():
        module.get_input_embeddings().weight[real:] = 100.0  # what a spare row might hold
        module.get_output_embeddings().weight[real:] = -100.0
    add_separators(module, tok)
    ids = tok.convert_tokens_to_ids([SEP1, SEP2])
    assert ids == [real, real + 1]
    rows = module.get_input_embeddings().weight
    assert rows.shape[0] == real + max(spare_rows, 2)  # grown only when there was no spare row
    for weight in (rows, module.get_output_embeddings().weight):
        expected = weight[:real].mean(0)
        assert torch.allclose(weight[ids[0]], expected) and torch.allclose(weight[ids[1]], expected)
    add_separators(module, tok)  # a second call changes nothing
    assert tok.convert_tokens_to_ids([SEP1, SEP2]) == ids and module.get_input_embeddings().weight.shape[0] == rows.shape[0]


def test_epoch_plan_draws_one_feature_per_group_anew_each_epoch():
    from figlang.training import epoch_plan

    groups = [(f"r{i // 12}", 0) for i in range(12 * 10)]  # 10 narratives × 12 inferences
    lengths = [10 + i % 7 for i in range(len(groups))]
    flat = lambda plan: [i for step in plan for batch in step for i in batch]  # noqa: E731
    picks = [flat(epoch_plan(lengths, 4, 1, seed=0, epoch=e, groups=groups)) for e in range(3)]
    for pick in picks:
        assert len(pick) == 10 and sorted(groups[i] for i in pick) == sorted(set(groups))  # each narrative once
    assert len({tuple(sorted(p)) for p in picks}) == 3  # other inferences in other epochs
    assert flat(epoch_plan(lengths, 4, 1, seed=0, epoch=1, groups=groups)) == picks[1]  # resuming recomputes it
    assert sorted(flat(epoch_plan(lengths, 4, 1, seed=0, epoch=0))) == list(range(120))  # without groups: every feature


def test_one_inference_per_epoch_trains_a_knowledge_generator_on_each_narrative_once(tmp_path, data_dir, tiny_llama):
    opts = {**TINY, "limit": 3, "max_inferences": 3, "report_limit": 1, "epochs": 2, "report_splits": ("dev",)}
    result = train(
        "idiom-generation",
        "generator-context",
        str(tiny_llama),
        tmp_path / "one",
        data_dir=str(data_dir),
        inference_sampling="one-per-epoch",
        **opts,
    )
    start = next(
        json.loads(line) for line in (tmp_path / "one" / "train_log.jsonl").read_text().splitlines() if json.loads(line)["event"] == "start"
    )
    # 3 narratives × their references × 3 inferences; one inference per (narrative, reference) each epoch, batches of 2
    n_groups = start["train_items"] // 3
    assert start["train_items"] % 3 == 0 and start["steps_per_epoch"] == -(-n_groups // 2) < start["train_items"] // 2
    assert result.steps == 2 * start["steps_per_epoch"] and start["config"]["inference_sampling"] == "one-per-epoch"
    assert read_figlang_json(tmp_path / "one")["training"]["inference_sampling"] == "one-per-epoch"
    with pytest.raises(FiglangError, match="generator-context, generator-literal.*'generator' has none"):
        make_config("idiom-generation", "generator", str(tiny_llama), tmp_path / "x", inference_sampling="one-per-epoch")
    with pytest.raises(FiglangError, match="one of all, one-per-epoch"):
        make_config("idiom-generation", "generator-context", str(tiny_llama), tmp_path / "y", inference_sampling="some")
