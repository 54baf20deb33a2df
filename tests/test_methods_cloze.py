"""Cloze methods (lm-score, qa, few-shot, pet) end to end with the real smollm2-135m backend on real data."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest

from figlang.core.errors import FiglangError
from figlang.data.records import expression_of
from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.methods.base import get_methods
from figlang.methods.prompted import argmax_first, backend_for, item_seed
from figlang.methods.prompted.cloze import FewShot

MODEL = "smollm2-135m"
N = 10

pytestmark = pytest.mark.slow


def run(task: str, method: str, data_dir: Path, cache: Path, limit: int = N, **options):
    return evaluate(
        task, method, model=MODEL, split="dev", data_dir=data_dir, limit=limit, cache_dir=cache, progress=False, method_options=options
    )


def check_cloze(result) -> list:
    """Valid predictions, finite per-option scores, prediction = first argmax, not always the same position."""
    preds = [result.predictions[r.id] for r in result.records]
    for r, p in zip(result.records, preds):
        assert p.valid and p.error is None
        assert p.prediction in range(len(r.options))
        assert len(p.scores) == len(r.options) and all(math.isfinite(s) for s in p.scores)
        assert p.prediction == argmax_first(p.scores)[0]
        assert p.meta["tie"] is (p.scores.count(max(p.scores)) > 1)
    counts = Counter(p.prediction for p in preds)
    assert len(counts) > 1, f"{result.results['method']['name']} always answers option {next(iter(counts)) + 1}"
    assert result.metrics["n_invalid"] == 0 and result.metrics["coverage"]["predicted"] == len(preds)
    return preds


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cloze-cache")


@pytest.fixture(scope="module")
def lm_runs(data_dir: Path, cache: Path) -> dict:
    return {norm: run("idiom-cloze", "lm-score", data_dir, cache, norm=norm) for norm in ("sum", "pmi")}


def test_methods_are_registered() -> None:
    names = {m.name: m for m in get_methods()}
    for name in ("lm-score", "qa", "few-shot", "pet"):
        assert names[name].shapes == ("cloze",) and names[name].needs_model
    with pytest.raises(FiglangError, match="norm"):
        get_methods().create("lm-score", model=MODEL, norm="bogus")
    with pytest.raises(FiglangError, match="needs a model"):
        get_methods().create("qa")


def test_backend_is_loaded_once_per_model_and_options() -> None:
    assert backend_for(MODEL) is backend_for(MODEL)
    assert backend_for(backend_for(MODEL)) is backend_for(MODEL)  # an instance passes through


def test_lm_score_sum_and_pmi(lm_runs: dict, data_dir: Path) -> None:
    total, pmi = lm_runs["sum"], lm_runs["pmi"]
    check_cloze(total)
    check_cloze(pmi)
    for r in total.records:
        s, p = total.predictions[r.id], pmi.predictions[r.id]
        assert s.scores == pytest.approx(s.meta["logprob"])  # sum = total log-probability
        assert s.meta["logprob"] == pytest.approx(p.meta["logprob"], abs=1e-3)  # the same conditional scores
        expected = [c - u for c, u in zip(p.meta["logprob"], p.meta["neutral_logprob"])]
        assert p.scores == pytest.approx(expected)
        assert all(lp < 0 for lp in s.scores)
    assert [total.predictions[r.id].scores for r in total.records] != [pmi.predictions[r.id].scores for r in pmi.records]
    assert [total.predictions[r.id].prediction for r in total.records] != [pmi.predictions[r.id].prediction for r in pmi.records]
    fp = pmi.results["method"]["fingerprint"]
    assert fp["method"] == "lm-score" and fp["norm"] == "pmi" and fp["neutral_prompt"] == "Answer:"
    assert fp["model"] == MODEL and fp["backend"]["model"] == MODEL and fp["backend"]["revision"]
    assert "batch_size" not in fp["backend_options"]


def test_lm_score_token_and_char_normalise_the_same_logprobs(lm_runs: dict) -> None:
    total = lm_runs["sum"]
    records = total.records[:3]
    for norm in ("token", "char"):
        method = get_methods().create("lm-score", model=MODEL, norm=norm)
        for r, p in zip(records, method.predict(records)):
            lps, ntok = total.predictions[r.id].meta["logprob"], total.predictions[r.id].meta["n_tokens"]
            denom = ntok if norm == "token" else [len(" " + o) for o in r.options]
            assert p.scores == pytest.approx([lp / d for lp, d in zip(lps, denom)], abs=1e-4)
            assert p.prediction == argmax_first(p.scores)[0]


def test_lm_score_does_not_depend_on_batch_size(lm_runs: dict, data_dir: Path, tmp_path: Path) -> None:
    one = run("idiom-cloze", "lm-score", data_dir, tmp_path, norm="pmi", batch_size=1)
    sixteen = lm_runs["pmi"]  # the default backend (batch_size 16)
    assert backend_for(MODEL, batch_size=1).batch_size == 1 and backend_for(MODEL).batch_size == 16
    assert one.results["method"]["fingerprint"] == sixteen.results["method"]["fingerprint"]  # batch size is speed only
    for r in one.records:
        assert one.predictions[r.id].prediction == sixteen.predictions[r.id].prediction
        assert one.predictions[r.id].scores == pytest.approx(sixteen.predictions[r.id].scores, abs=1e-3)


def test_qa_letters_with_both_orders(data_dir: Path, cache: Path) -> None:
    result = run("idiom-cloze", "qa", data_dir, cache)
    preds = check_cloze(result)
    fp = result.results["method"]["fingerprint"]
    assert fp["question"] == "Which is more plausible between the two based on the context?"
    assert fp["chat_used"] is True and fp["permute"] is True and fp["answer"] == "letter"  # smollm2 is an instruct model
    for p in preds:  # each option was scored in both positions; the score is their mean
        assert len(p.meta["per_order"]) == 2
        assert p.scores == pytest.approx([sum(v[i] for v in p.meta["per_order"]) / 2 for i in range(2)])


def test_qa_plain_prompt_with_option_texts(data_dir: Path, cache: Path) -> None:
    result = run("simile-cloze", "qa", data_dir, cache, limit=6, chat=False, answer="text", permute=False)
    for r in result.records:
        p = result.predictions[r.id]
        assert p.valid and p.prediction == argmax_first(p.scores)[0] and len(p.meta["per_order"]) == 1
    fp = result.results["method"]["fingerprint"]
    assert fp["chat_used"] is False and fp["templates"]["prompt"].startswith("Context: {context}")


def test_pet_picks_the_pattern_by_expression_type(data_dir: Path, cache: Path) -> None:
    simile = run("simile-cloze", "pet", data_dir, cache)
    check_cloze(simile)
    idiom = run("idiom-cloze", "pet", data_dir, cache, limit=4)
    assert {p.meta["pattern"] for p in simile.predictions.values()} == {"simile"}
    assert {p.meta["pattern"] for p in idiom.predictions.values()} == {"idiom"}
    for p in simile.predictions.values():
        assert p.scores == pytest.approx([g - b for g, b in zip(p.meta["good"], p.meta["bad"])])
    assert simile.results["method"]["fingerprint"]["patterns"]["simile"]["bad"] == " unexpected"


@pytest.fixture(scope="module")
def idiom_train(data_dir: Path) -> list:
    return get_task("idiom-cloze").load("train", data_dir)


def test_few_shot_examples_never_include_the_item(data_dir: Path, idiom_train: list) -> None:
    """Model-free: for every dev item the examples fit the budget, are balanced and are never the item itself."""
    dev = get_task("idiom-cloze").load("dev", data_dir)
    method = FewShot(model=MODEL, budget=3000, max_shots=8)
    method.fit(idiom_train)
    shots = []
    same_narrative_in_train = 0
    norm = lambda t: " ".join(t.lower().split())  # noqa: E731
    train_contexts = {norm(r.context) for r in idiom_train}
    for item in dev:
        same_narrative_in_train += norm(item.context) in train_contexts
        shown, prefix = method.examples_for(item)
        query = f"Q: {item.context.strip()} (1) {item.options[0]} (2) {item.options[1]} A:"
        assert len(prefix + query) <= 3000 or not shown
        assert norm(item.context) not in norm(prefix)
        for ex, pos in shown:
            assert norm(ex.context) != norm(item.context) and expression_of(ex) != expression_of(item)
            assert f"A: ({pos + 1})" in prefix
        positions = Counter(pos for _, pos in shown)
        assert abs(positions[0] - positions[1]) <= 1
        shots.append(len(shown))
    assert same_narrative_in_train > 200  # dev narratives recur in train: exclusion by text is what matters
    assert min(shots) >= 2 and max(shots) <= 8
    # the same item gets the same examples whatever else is predicted (fixed seed)
    again = FewShot(model=MODEL, budget=3000, max_shots=8)
    again.fit(list(reversed(idiom_train)))
    assert again.examples_for(dev[5])[1] == method.examples_for(dev[5])[1]
    # the examples are in the fingerprint: an edited train split of the same size cannot reuse cached answers
    from dataclasses import replace

    assert again.pool_sha256 == method.pool_sha256 is not None
    edited = list(idiom_train)
    edited[3] = replace(edited[3], options=(edited[3].options[0], edited[3].options[1] + " Then it rained."))
    other = FewShot(model=MODEL, budget=3000, max_shots=8)
    other.fit(edited)
    assert other.pool_size == method.pool_size and other.pool_sha256 != method.pool_sha256
    loose = FewShot(model=MODEL, exclude="item")
    loose.fit(idiom_train)
    assert any(expression_of(ex) == expression_of(dev[0]) for ex in loose.pool) and loose.examples_for(dev[0])[0]
    # the default (linked) also keeps out an idiom's spelling variants and same-gloss idioms, as the disjoint splits do
    hilt = next(r for r in idiom_train if expression_of(r) == "up to the hilt")
    variants = [ex for ex in idiom_train if expression_of(ex) == "to the hilt"]
    assert variants and method.exclude == "linked"
    assert all(method._excluded(ex, hilt) for ex in variants)
    assert not any(FewShot(model=MODEL, exclude="expression")._excluded(ex, hilt) for ex in variants)
    method_examples = method.examples_for(hilt)[0]
    assert method_examples and not any(expression_of(ex) in ("to the hilt", "up to the hilt") for ex, _ in method_examples)


def test_few_shot_end_to_end(data_dir: Path, cache: Path, idiom_train: list) -> None:
    result = run("idiom-cloze", "few-shot", data_dir, cache, limit=8, budget=1600)
    preds = check_cloze(result)
    by_id = {r.id: r for r in idiom_train}
    for r, p in zip(result.records, preds):
        assert p.meta["shots"] == len(p.meta["examples"]) >= 1
        for ex_id in p.meta["examples"]:
            ex = by_id[ex_id]
            assert ex.id != r.id and ex.context.strip() != r.context.strip()
    fp = result.results["method"]["fingerprint"]
    assert fp["budget_chars"] == 1600 and fp["pool_size"] == len(idiom_train) and fp["permute"] is True
    assert re.fullmatch(r"Q: \{context\} \{options\} A: \(\{answer\}\)", fp["templates"]["example"])


def test_ties_go_to_the_lowest_index_and_seeds_are_per_item() -> None:
    assert argmax_first([1.0, 1.0]) == (0, True)
    assert argmax_first([0.0, 2.0, 2.0]) == (1, True)
    assert argmax_first([3.0, 2.0]) == (0, False)
    assert item_seed(0, "a") == item_seed(0, "a") != item_seed(1, "a")


# --- masked-LM PET and seq2seq QA on tiny real models ------------------------------------------------
# No masked LM with its MLM head and no seq2seq model ships offline (all-MiniLM-L6-v2 has no MLM head),
# so these run on tiny randomly initialised BERT-MLM / T5 checkpoints built here with MiniLM's real
# tokenizer, loaded through the ordinary resolver (load_backend on the saved folder).


@pytest.fixture(scope="module")
def tiny_mlm_t5(minilm_path: Path, tmp_path_factory) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, T5Config, T5ForConditionalGeneration

    root = tmp_path_factory.mktemp("tiny-cloze")
    tok = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    models = {
        "mlm": BertForMaskedLM(
            BertConfig(
                vocab_size=tok.vocab_size,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
                max_position_embeddings=512,
            )
        ),
        "t5": T5ForConditionalGeneration(
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
        ),
    }
    for name, model in models.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root


PET_MASKED = {"idiom": ("You are", "right", "wrong"), "simile": ("That was", "expected", "unexpected")}


def test_pet_on_a_masked_lm_scores_good_minus_bad_at_the_blank(tiny_mlm_t5: Path, data_dir: Path, tmp_path: Path, one_torch_thread) -> None:
    from figlang.backends.base import MaskedScoreRequest

    model = str(tiny_mlm_t5 / "mlm")
    lm = backend_for(model)
    assert lm.info().kind == "masked" and lm.can_score_masked
    for task, kind, limit in (("idiom-cloze", "idiom", 4), ("simile-cloze", "simile", 3)):
        result = evaluate(task, "pet", model=model, split="dev", data_dir=data_dir, limit=limit, cache_dir=tmp_path / task, progress=False)
        assert len(result.records) == limit and result.metrics["n_invalid"] == 0
        fp = result.results["method"]["fingerprint"]
        assert fp["scorer"] == "masked" and fp["patterns"][kind]["good"] == PET_MASKED[kind][1]
        stem, good, bad = PET_MASKED[kind]
        for r in result.records:
            p = result.predictions[r.id]
            assert p.valid and p.error is None and p.meta["masked"] is True and p.meta["pattern"] == kind
            assert len(p.scores) == len(r.options) and all(math.isfinite(s) for s in p.scores)
            assert p.prediction == argmax_first(p.scores)[0]
            # the same requests scored directly: "N C <stem> {mask}." with (good, bad)
            direct = lm.score_masked(
                [MaskedScoreRequest(f"{r.context.strip()} {o.strip()} {stem} {{mask}}.", (good, bad)) for o in r.options]
            )
            assert all(len(row) == 2 for row in direct)
            assert p.scores == pytest.approx([row[0].logprob - row[1].logprob for row in direct], abs=1e-4)
            assert p.meta["good"] == pytest.approx([row[0].logprob for row in direct], abs=1e-4)
            assert p.meta["bad"] == pytest.approx([row[1].logprob for row in direct], abs=1e-4)


def test_pet_on_a_masked_lm_does_not_depend_on_what_is_scored_together(tiny_mlm_t5: Path, data_dir: Path, one_torch_thread) -> None:
    records = get_task("idiom-cloze").load("dev", data_dir)[:3] + get_task("simile-cloze").load("dev", data_dir)[:3]
    method = get_methods().create("pet", model=str(tiny_mlm_t5 / "mlm"))
    together = method.predict(records)
    alone = [method.predict([r])[0] for r in records]
    assert [p.id for p in together] == [r.id for r in records]
    assert [p.prediction for p in together] == [p.prediction for p in alone]
    for a, b in zip(together, alone):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    assert [p.meta["pattern"] for p in together] == ["idiom"] * 3 + ["simile"] * 3


def test_qa_on_a_seq2seq_model_applies_norm(tiny_mlm_t5: Path, data_dir: Path, tmp_path: Path, one_torch_thread) -> None:
    """A seq2seq model scores the option texts, so norm applies (answer defaults to letter) and config() says so."""
    from figlang.backends.base import ScoreRequest

    model = str(tiny_mlm_t5 / "t5")
    lm = backend_for(model)
    assert lm.info().kind == "seq2seq"
    runs = {
        norm: evaluate(
            "idiom-cloze",
            "qa",
            model=model,
            split="dev",
            data_dir=data_dir,
            limit=3,
            cache_dir=tmp_path / norm,
            progress=False,
            method_options={"norm": norm},
        )
        for norm in ("sum", "token", "char")
    }
    method = get_methods().create("qa", model=model)
    for norm, result in runs.items():
        fp = result.results["method"]["fingerprint"]
        assert fp["fmt"] == "seq2seq" and fp["answer"] == "text" and fp["norm"] == norm
        for r in result.records:
            p = result.predictions[r.id]
            assert len(p.meta["per_order"]) == len(r.options)  # permute: every rotation
            for rot, view in enumerate(p.meta["per_order"]):
                order = [(rot + j) % len(r.options) for j in range(len(r.options))]
                prompt, conts = method._prompt(r.context.strip(), [r.options[i] for i in order])
                direct = lm.score([ScoreRequest(prompt, c) for c in conts])
                for pos, option in enumerate(order):
                    s = direct[pos]
                    assert s.n_tokens >= 2  # the option's tokens and the end token: mean != sum
                    expected = {"sum": s.logprob, "token": s.logprob / s.n_tokens, "char": s.logprob / s.n_chars}[norm]
                    assert view[option] == pytest.approx(expected, abs=1e-4)
            assert p.scores == pytest.approx([sum(v[i] for v in p.meta["per_order"]) / len(r.options) for i in range(len(r.options))])
    for r in runs["sum"].records:
        assert runs["token"].predictions[r.id].scores != pytest.approx(runs["sum"].predictions[r.id].scores, abs=1e-4)
