"""The explaining system: retrieval with the real minilm encoder, the `explain` method with the real smollm2-135m
(Transformers backend, a few FLUTE val pairs), the Python API's cache and bad input, the CLI's file reading, and
explanation scoring."""

from __future__ import annotations

import json

import pytest

from figlang.core.errors import FiglangError
from figlang.data.registry import get_task

MODEL = "smollm2-135m"
pytestmark = pytest.mark.usefixtures("one_torch_thread")
# pool=selection: ~700 train pairs to embed instead of 7,035 (the embeddings are cached on disk either way)
SMALL = {"backend": "transformers", "dtype": "float32", "threads": 1, "k": 2, "max_new_tokens": 16, "pool": "selection"}


@pytest.fixture(scope="module")
def train(data_dir):
    return get_task("flute").load("train", data_dir)


@pytest.fixture(scope="module")
def val(data_dir):
    records = get_task("flute").load("val", data_dir)
    picked, seen = [], set()
    for r in records:  # one pair of each figure type, balanced enough for a smoke test
        if r.figure_type not in seen:
            picked.append(r)
            seen.add(r.figure_type)
    return picked


# --- retrieval ---------------------------------------------------------------------------------------


def test_retrieval_excludes_the_premise_and_keeps_the_figure_type(train, tmp_path):
    from figlang.methods.retrieval import PairIndex

    pool = train[:400]
    index = PairIndex(pool, "minilm", tmp_path)
    item = pool[10]
    found = index.nearest(item.premise, item.hypothesis, 3, item.figure_type)
    assert len(found) == 3
    assert all(n.pair.premise.strip().lower() != item.premise.strip().lower() for n in found)
    assert all(n.pair.figure_type == item.figure_type for n in found)
    assert [n.similarity for n in found] == sorted((n.similarity for n in found), reverse=True)
    labelled = index.nearest(item.premise, item.hypothesis, 3, item.figure_type, "entailment")
    assert all(n.pair.label == "entailment" for n in labelled)
    # the embeddings are on disk, keyed by the pool's checksum: a second index reads them back unchanged
    files = list(tmp_path.glob("*.npy"))
    assert len(files) == 1
    stamp = files[0].stat().st_mtime_ns
    again = PairIndex(pool, "minilm", tmp_path)
    assert files[0].stat().st_mtime_ns == stamp
    assert (again.embeddings == index.embeddings).all()
    other = PairIndex(pool[:399], "minilm", tmp_path)  # another pool: another file, never the stale one
    assert other.path != index.path and len(list(tmp_path.glob("*.npy"))) == 2


def test_a_retrieval_key_embeds_one_sentence_and_keeps_its_own_cache_file(train, tmp_path):
    from figlang.methods.retrieval import PairIndex

    pool = train[:200]
    both = PairIndex(pool, "minilm", tmp_path)
    hyp = PairIndex(pool, "minilm", tmp_path, key="hypothesis")
    assert hyp.texts[0] == " ".join(pool[0].hypothesis.split()) and both.texts[0] != hyp.texts[0]
    assert hyp.path != both.path and hyp.config()["text"] == "hypothesis" and "premise +" in both.config()["text"]
    item = pool[5]  # the query is embedded the same way: a pool pair's own hypothesis is its nearest text
    assert float(hyp.query_vector(item.premise, item.hypothesis) @ hyp.embeddings[5]) > 0.999
    with pytest.raises(FiglangError, match="retrieval key 'both'"):
        PairIndex(pool, "minilm", tmp_path, key="both")


# --- the method --------------------------------------------------------------------------------------


def test_pipeline_explains_and_reruns_from_the_cache(data_dir, val, tmp_path):
    from figlang.evaluation import evaluate

    opts = SMALL
    first = evaluate(
        "flute",
        "explain",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path / "cache",
        out_dir=tmp_path / "run",
        method_options=opts,
        progress=False,
        limit=4,
    )
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        assert row["valid"] and row["prediction"] in ("entailment", "contradiction")
        assert isinstance(row["explanation"], str) and row["explanation"].strip()  # written into predictions.jsonl
        assert len(row["meta"]["examples"]) == 2
        # what the model was given and what it wrote: test_the_prompted_explainer_is_given_the_predicted_label
    fingerprint = first.results["method"]["fingerprint"]
    assert fingerprint["label_method"]["method"] == "nli-score" and fingerprint["mode"] == "pipeline"
    assert fingerprint["retrieval"]["encoder"] and fingerprint["retrieval"]["pool_sha256"]
    assert first.results["run"]["cache"]["computed"] == 4
    second = evaluate(
        "flute",
        "explain",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path / "cache",
        method_options=opts,
        progress=False,
        limit=4,
    )
    assert second.results["run"]["cache"] == {**second.results["run"]["cache"], "cached": 4, "computed": 0}
    assert {i: (p.prediction, p.explanation) for i, p in second.predictions.items()} == {
        i: (p.prediction, p.explanation) for i, p in first.predictions.items()
    }


def test_the_prompted_explainer_is_given_the_predicted_label(data_dir, tmp_path, monkeypatch):
    """Pipeline mode: the label method's answer, not the gold label, is the word the prompt ends with and the label of
    the retrieved examples; the prediction's raw text and explanation are what the model wrote after it. The label
    method is the seeded random baseline, so that on these items its answer differs from the gold on some."""
    from figlang.evaluation import evaluate
    from figlang.methods.base import get_methods
    from figlang.methods.baselines import RandomGuess
    from figlang.methods.prompted.explain import WORDS, one_sentence

    method = get_methods().create("explain", model=MODEL, label_method="random", label_seed=3, **SMALL)
    sent: list[tuple[str, str]] = []
    real = method.lm.generate

    def recording(requests):  # the real model answers; the prompts and its outputs are kept
        outputs = real(requests)
        sent.extend((req.prompt, out[0]) for req, out in zip(requests, outputs))
        return outputs

    monkeypatch.setattr(method.lm, "generate", recording)
    result = evaluate("flute", method, split="val", data_dir=data_dir, use_cache=False, progress=False, limit=6)
    records = result.records
    guesses = {p.id: p.prediction for p in RandomGuess(seed=3, labels=("entailment", "contradiction")).predict(records)}
    assert {guesses[r.id] == r.label for r in records} == {True, False}  # the test means something on these items
    pool = {r.id: r for r in get_task("flute").load("selection", data_dir)}
    assert len(sent) == len(records)
    for r, (prompt, written) in zip(records, sent):
        label = guesses[r.id]
        p = result.predictions[r.id]
        assert prompt.endswith(f"{WORDS[label]}."), (r.id, prompt[-40:])
        assert r.premise.strip() in prompt.rsplit("\n\n", 1)[-1]  # the item's own pair is the last one shown
        assert p.prediction == label and p.raw == f"{WORDS[label]}.{written}"
        assert p.explanation == one_sentence(written)[0]
        assert [pool[i].label for i in p.meta["examples"]] == [label, label]  # examples answered as the item is


def test_mbr_keeps_the_greedy_line_first_and_the_candidate_closest_to_the_others(data_dir, monkeypatch):
    """``mbr=N``: the same greedy line as without it (the samples are a second call, one request of N samples per
    prompt, all N rows in one batch even at batch_size=1), the chosen text is the candidate with the highest mean
    ROUGE-L against the rest, and a second run draws the same samples (seeded per item)."""
    from figlang.core.context import RunContext
    from figlang.methods.base import get_methods

    ctx = RunContext.create(data_dir)
    records = get_task("flute").load("val", data_dir)[:2]
    plain = get_methods().create("explain", model=MODEL, label_method="random", label_seed=3, **SMALL)
    plain.bind(get_task("flute"), ctx)
    plain.fit(get_task("flute").load("selection", data_dir))
    greedy = plain.predict(records)
    opts = {**SMALL, "batch_size": 1, "mbr": 3, "mbr_temperature": 1.0}
    method = get_methods().create("explain", model=MODEL, label_method="random", label_seed=3, **opts)
    method.bind(get_task("flute"), ctx)
    method.fit(get_task("flute").load("selection", data_dir))
    batches: list[int] = []
    real = method.lm._decode_batch

    def counting(batch, prompts, requests):  # the real decoding; the batch sizes are kept
        batches.append(len(batch))
        return real(batch, prompts, requests)

    monkeypatch.setattr(method.lm, "_decode_batch", counting)
    chosen = method.predict(records)
    assert batches == [1, 1, 3, 3]  # two lone greedy prompts, then each prompt's three samples together
    for g, c in zip(greedy, chosen):
        m = c.meta["mbr"]
        assert len(m["candidates"]) == 4 and m["candidates"][0] == g.explanation  # the greedy line first
        assert c.explanation == m["candidates"][m["chosen"]] and c.prediction == g.prediction
        assert m["mean_rouge_l"][m["chosen"]] == max(m["mean_rouge_l"])
        assert len(set(m["candidates"])) > 1  # sampled at temperature 1: the candidates differ
    assert [c.meta["mbr"] for c in method.predict(records)] == [c.meta["mbr"] for c in chosen]
    assert method.config()["mbr"]["samples"] == 3 and "mbr" not in plain.config()
    with pytest.raises(FiglangError, match="mode=pipeline"):
        get_methods().create("explain", model=MODEL, mode="joint", mbr=3)
    with pytest.raises(FiglangError, match="mbr_temperature"):
        get_methods().create("explain", model=MODEL, mbr=3, mbr_temperature=0)


def test_an_explainer_made_with_load_answers_its_first_pair_without_loading_weights(data_dir, tmp_path):
    """``explainer(load=True)`` loads the explaining model's and the label model's weights when it is made, so the
    first answer costs only the answer; without it the weights wait for the first answer that is not cached."""
    from figlang.backends import base
    from figlang.explain import explain, explainer

    # a backend of this test's own (a max_length no other test gives), so that no earlier test has loaded it
    own = {**SMALL, "max_length": 3001}
    lazy = explainer(MODEL, data_dir, label_method="random", label_seed=4, **{**own, "max_new_tokens": 5})
    assert lazy.lm.__dict__["_weights"] == "pending"  # made, identified, not loaded
    opts = {**own, "max_new_tokens": 6}
    method = explainer(MODEL, data_dir, load=True, **opts)
    assert method.label_method.name == "trained"  # the shipped label model, loaded too
    assert method.lm.__dict__["_weights"] == "loaded" and method.label_method._model is not None
    before = base.weight_loads
    answer = explain(
        "The meeting was very boring.", "The meeting was a snooze.", "metaphor", model=MODEL, data_dir=data_dir, use_cache=False, **opts
    )
    assert answer.explanation and base.weight_loads == before  # the first answer loaded nothing


def test_joint_answers_that_cannot_be_parsed_are_invalid_and_wrong(data_dir, tmp_path):
    from figlang.evaluation import evaluate

    # one new token cannot spell "Entails"/"Contradicts" in this tokenizer: the answers must be unreadable
    opts = {**SMALL, "mode": "joint", "k": 0, "max_new_tokens": 1}
    result = evaluate(
        "flute",
        "explain",
        model=MODEL,
        split="val",
        data_dir=data_dir,
        cache_dir=tmp_path / "cache",
        out_dir=tmp_path / "run",
        method_options=opts,
        progress=False,
        limit=3,
    )
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    invalid = [r for r in rows if not r["valid"]]
    assert invalid, rows
    for row in invalid:
        assert row["prediction"] is None and row["correct"] is False  # never a default label
        assert row["error"] and "raw" in row  # the raw text is kept
    assert result.results["metrics"]["n_invalid"] == len(invalid)
    assert result.results["metrics"]["accuracy"]["n_correct"] <= len(rows) - len(invalid)


def test_joint_mode_refuses_label_options():
    from figlang.methods.base import get_methods

    with pytest.raises(FiglangError, match="mode=joint"):
        get_methods().create("explain", model=MODEL, mode="joint", label_method="nli-score")


# --- the Python API ----------------------------------------------------------------------------------


def test_api_explains_one_pair_and_answers_again_from_the_cache(data_dir, tmp_path):
    from figlang.explain import explain

    kw = dict(figure_type="simile", model=MODEL, data_dir=data_dir, cache_dir=tmp_path / "cache", **SMALL)
    a = explain("He was very nervous before the exam.", "He was as cool as a cucumber before the exam.", **kw)
    assert a.valid and a.label in ("entailment", "contradiction") and a.explanation
    # figlang.explain's default label: the shipped FLUTE model (the method alone, in `figlang eval`, keeps nli-score)
    assert a.produced_by["label_method"] == "trained" and a.produced_by["label_model"] == "figlang:flute-lora-mpnet"
    assert len(a.produced_by["examples"]) == 2
    assert not a.cached
    b = explain("He was very nervous before the exam.", "He was as cool as a cucumber before the exam.", **kw)
    assert b.cached and (b.label, b.explanation) == (a.label, a.explanation)


@pytest.mark.parametrize(
    "premise, hypothesis, match",
    [
        ("", "He was as cool as a cucumber.", "premise is empty"),
        ("He was calm.", "   \n", "hypothesis is empty"),
    ],
)
def test_api_refuses_empty_text(premise, hypothesis, match, data_dir, tmp_path):
    from figlang.explain import explain

    with pytest.raises(FiglangError, match=match):
        explain(premise, hypothesis, model=MODEL, data_dir=data_dir, cache_dir=tmp_path, **SMALL)


def test_api_refuses_text_longer_than_the_context_and_says_the_limit(data_dir, tmp_path):
    from figlang.explain import explain

    long = "The weather was fine and the people were happy. " * 80
    with pytest.raises(FiglangError, match=r"context of 256 tokens"):
        explain(long, "It was raining cats and dogs.", model=MODEL, data_dir=data_dir, cache_dir=tmp_path, **{**SMALL, "max_length": 256})


def test_api_refuses_an_unknown_figure_type(data_dir, tmp_path):
    from figlang.explain import explain

    with pytest.raises(FiglangError, match="unknown figure type 'hyperbole'"):
        explain("It was big.", "It was as big as a house.", "hyperbole", model=MODEL, data_dir=data_dir, cache_dir=tmp_path)


# --- files and scoring -------------------------------------------------------------------------------


def test_pairs_file_that_is_not_utf8_is_refused_with_its_line(tmp_path):
    from figlang.cli.explain_cmds import _read_pairs

    path = tmp_path / "pairs.jsonl"
    path.write_bytes(b'{"premise": "ok", "hypothesis": "ok"}\n{"premise": "caf\xe9", "hypothesis": "x"}\n')
    with pytest.raises(FiglangError, match=r"pairs.jsonl:2: not UTF-8"):
        _read_pairs(path)
    path.write_bytes(b'{"premise": "ok"}\n')
    with pytest.raises(FiglangError, match="missing hypothesis"):
        _read_pairs(path)


def test_scoring_reports_rouge_bleu_bertscore_by_type_and_says_why_paper_metrics_are_absent(tmp_path):
    from figlang.evaluation.explanations import read_prediction_rows, score_explanations

    gold = "To be as cool as a cucumber means to be calm, but the premise says he was nervous."
    rows = [
        {
            "id": "a",
            "figure_type": "simile",
            "gold": "contradiction",
            "gold_explanation": gold,
            "prediction": "contradiction",
            "explanation": gold,
            "valid": True,
            "correct": True,
        },
        {
            "id": "b",
            "figure_type": "idiom",
            "gold": "entailment",
            "gold_explanation": gold,
            "prediction": None,
            "explanation": None,
            "valid": False,
            "correct": False,
            "raw": "asdf",
        },
        {
            "id": "c",
            "figure_type": "idiom",
            "gold": "entailment",
            "gold_explanation": gold,
            "prediction": "entailment",
            "explanation": "Something else entirely about the weather.",
            "valid": True,
            "correct": True,
        },
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = score_explanations(tmp_path, bertscore_model="minilm", bertscore_layers=6, paper=True)
    assert out["per_pair"]["a"]["rougeL_f1"] == pytest.approx(1.0)
    assert out["per_pair"]["b"] == {"rougeL_f1": 0.0, "bleu": 0.0, "bertscore_f1": 0.0}  # invalid: 0, still counted
    assert 0 < out["per_pair"]["c"]["rougeL_f1"] < 0.5
    assert out["overall"]["n"] == 3 and out["overall"]["label_accuracy"] == pytest.approx(66.67)
    assert set(out["by_figure_type"]) == {"simile", "idiom"} and out["by_figure_type"]["simile"]["rougeL_f1"] == pytest.approx(100.0)
    bert = out["config"]["bertscore"]
    assert bert["num_layers"] == 6 and bert["comparable_to_paper"] is False
    if not out["paper_acc"]["computed"]:
        assert "deberta-large-mnli" in out["paper_acc"]["reason"] or "did not load" in out["paper_acc"]["reason"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "predictions.jsonl").write_bytes(b'{"id": "x"}\n\xff\n')
    with pytest.raises(FiglangError, match="not UTF-8"):
        read_prediction_rows(tmp_path / "bad")


def test_side_by_side_examples_are_drawn_per_type_with_a_seed(tmp_path):
    from figlang.evaluation.explanations import side_by_side, side_by_side_markdown

    rows = [
        {
            "id": f"{t}-{i}",
            "figure_type": t,
            "premise": "p|q",
            "hypothesis": "h",
            "gold": "entailment",
            "gold_explanation": "g",
            "prediction": "entailment",
            "explanation": f"e{i}",
            "valid": True,
        }
        for t in ("idiom", "simile")
        for i in range(5)
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = side_by_side(tmp_path, 2, seed=3), side_by_side(tmp_path, 2, seed=3)
    assert a == b and [e["figure_type"] for e in a] == ["idiom", "idiom", "simile", "simile"]
    md = side_by_side_markdown(a)
    assert "#### idiom" in md and "p\\|q" in md  # a pipe inside a cell cannot break the table


def test_cli_explains_a_pair(data_dir, tmp_path):
    from typer.testing import CliRunner

    from figlang.cli.main import app

    args = [
        "explain",
        "--premise",
        "She was very happy.",
        "--hypothesis",
        "She was over the moon.",
        "-f",
        "idiom",
        "--model",
        MODEL,
        "--k",
        "1",
        "--data-dir",
        str(data_dir),
        "--cache-dir",
        str(tmp_path),
        "--json",
        "-O",
        "backend=transformers",
        "-O",
        "pool=selection",
        "-O",
        "max_new_tokens=12",
        "--threads",
        "1",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    row = json.loads(result.output[result.output.index("{") :])
    assert row["label"] in ("entailment", "contradiction") and row["explanation"] and row["produced_by"]["model"] == MODEL


# --- prompt forms (shots, style) ---------------------------------------------------------------------


def test_compact_shots_state_the_instruction_once_and_take_fewer_tokens(train):
    from figlang.methods.prompted.explain import COMPACT_INSTRUCTION, STYLE_GUIDE, Explain

    item, examples = train[0], [r for r in train[1:40] if r.figure_type == train[0].figure_type][:4]
    forms = {}
    for shots, style in (("flute", "none"), ("compact", "none"), ("compact", "examples"), ("flute", "examples")):
        method = Explain(MODEL, shots=shots, style=style, backend="transformers", dtype="float32", threads=1)
        forms[shots, style] = (method, method.prompt(item, "contradiction", examples))
    flute_text = forms["flute", "none"][1]
    assert COMPACT_INSTRUCTION not in flute_text and STYLE_GUIDE not in flute_text
    assert flute_text.count("Please answer between") == len(examples) + 1  # FLUTE's instruction for every pair
    compact = forms["compact", "none"][1]
    assert compact.count("Please answer between") == 1 and compact.count(COMPACT_INSTRUCTION) == 1
    assert compact.count("Premise: ") == len(examples) + 1 and compact.rstrip().endswith("Contradicts.")
    for ex in examples:  # every example is still shown with its gold explanation
        assert " ".join(ex.explanation.split()) in compact
    method = forms["flute", "none"][0]
    assert method.prompt_tokens(compact) < method.prompt_tokens(flute_text)
    assert STYLE_GUIDE in forms["compact", "examples"][1] and STYLE_GUIDE in forms["flute", "examples"][1]
    # the defaults record nothing new, so earlier runs' configurations (and their request caches) read as before
    assert method.prompt_form() == {}
    assert forms["compact", "examples"][0].prompt_form()["header"] == f"{COMPACT_INSTRUCTION} {STYLE_GUIDE}"
    with pytest.raises(FiglangError, match="shots"):
        Explain(MODEL, shots="short")


def test_the_sarcasm_style_line_is_shown_to_sarcasm_pairs_only(train):
    from figlang.methods.prompted.explain import COMPACT_INSTRUCTION, SARCASM_GUIDE, Explain

    method = Explain(MODEL, shots="compact", style="sarcasm", backend="transformers", dtype="float32", threads=1)
    sarcasm = next(r for r in train if r.figure_type == "sarcasm")
    simile = next(r for r in train if r.figure_type == "simile")
    assert SARCASM_GUIDE in method.prompt(sarcasm, "contradiction", [])
    assert SARCASM_GUIDE not in method.prompt(simile, "contradiction", []) and COMPACT_INSTRUCTION in method.prompt(
        simile, "contradiction", []
    )
    form = method.prompt_form()  # part of the configuration, so of the request cache's key
    assert form["header"] == COMPACT_INSTRUCTION and form["sarcasm_header"] == f"{COMPACT_INSTRUCTION} {SARCASM_GUIDE}"


def test_k_by_type_gives_a_figure_type_its_own_number_of_examples(train):
    from figlang.methods.prompted.explain import Explain, parse_k_by_type

    assert parse_k_by_type("simile:16, idiom:12") == {"idiom": 12, "simile": 16}
    assert parse_k_by_type(None) == {}
    for bad, match in (("idiom=16", "TYPE:K"), ("irony:4", "unknown figure type 'irony'"), ("idiom:x", "integer")):
        with pytest.raises(FiglangError, match=match):
            parse_k_by_type(bad)
    method = Explain(MODEL, k=2, k_by_type="idiom:5", pool="train", backend="transformers", dtype="float32", threads=1)
    method.fit(train[:600])
    idiom = next(r for r in train[600:] if r.figure_type == "idiom")
    other = next(r for r in train[600:] if r.figure_type == "sarcasm")
    assert (method.k_for(idiom), method.k_for(other)) == (5, 2)
    assert len(method.examples(idiom, idiom.label)) == 5 and len(method.examples(other, other.label)) == 2
    assert method.config()["k_by_type"] == {"idiom": 5}
    assert "k_by_type" not in Explain(MODEL, k=2).config()  # not set: earlier runs' configurations read as before


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"avx2", "avx512f", "avx512_bf16", "amx_bf16"}, {"dtype": "bfloat16", "batch_size": 16}),
        ({"avx2", "avx512f", "avx512_bf16"}, {"dtype": "float32", "batch_size": 1}),  # AVX512-BF16 alone: float32 was faster
        ({"AuthenticAMD", "avx2", "avx512f", "avx512_bf16"}, {"dtype": "bfloat16", "batch_size": 1}),  # on AMD it was not
        ({"avx2", "fma"}, {"backend": "llama.cpp"}),
    ],
)
def test_qwen_backend_is_the_one_measured_fastest_for_the_cpu_class(flags, expected, monkeypatch):
    import importlib

    from figlang.core import devices

    explain_module = importlib.import_module("figlang.explain")  # the module (figlang.explain is also the function)

    monkeypatch.setattr(devices, "cpu_info", lambda: ("a test CPU", frozenset(flags)))
    assert explain_module.default_options() == expected
    explain_module.default_options()["backend"] = "changed"  # a copy: the table itself stays
    assert explain_module.default_options() == expected
