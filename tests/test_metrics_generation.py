"""ROUGE-L / BLEU on hand-made pairs; BERTScore and BLEURT run for real on the offline MiniLM."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from figlang.metrics import (
    PAPER_BERTSCORE_MODEL,
    BertScore,
    Bleurt,
    CorpusBleu,
    NltkSentenceBleu,
    RougeL,
    SacreSentenceBleu,
)

PAIR = ("the cat sat on the mat", "the cat lay on a mat")

# ---------------------------------------------------------------- ROUGE-L


def test_rouge_l_known_values():
    rouge = RougeL()
    assert rouge.compute(["the cat sat"], ["the cat sat"]).score == pytest.approx(1.0)
    assert rouge.compute(["a b"], ["c d"]).score == 0.0
    # LCS(the cat sat on the mat, the cat lay on a mat) = "the cat on mat" = 4 tokens of 6 on each
    # side: P = R = 4/6, F = 2/3.
    assert rouge.compute([PAIR[0]], [PAIR[1]]).score == pytest.approx(2 / 3)
    cfg = rouge.config()
    assert cfg["use_stemmer"] is False and cfg["rouge_type"] == "rougeL" and cfg["protocol"] == "max"


def test_rouge_stemmer_is_recorded_and_matters():
    # "cats"/"cat": only the stemmer makes the first token match. Without it LCS = 1 of 2 tokens.
    assert RougeL(use_stemmer=False).compute(["cats sat"], ["cat sat"]).score == pytest.approx(0.5)
    stemmed = RougeL(use_stemmer=True)
    assert stemmed.compute(["cats sat"], ["cat sat"]).score == pytest.approx(1.0)
    assert stemmed.config()["use_stemmer"] is True


def test_max_and_mean_protocols_differ_as_expected():
    preds = [["the cat sat on the mat", "dogs bark loudly"]]  # two samples for one item
    refs = [["the cat sat on the mat", "a completely unrelated line"]]  # two references
    # Pair scores: (s1, r1) = 1, (s1, r2) = 0, (s2, r1) = 0, (s2, r2) = 0.
    assert RougeL(protocol="max").compute(preds, refs).score == pytest.approx(1.0)
    assert RougeL(protocol="mean").compute(preds, refs).score == pytest.approx(0.25)
    two_items = RougeL(protocol="max").compute(["the cat sat", "x"], ["the cat sat", "y"])
    assert two_items.per_item == (1.0, 0.0) and two_items.score == pytest.approx(0.5)
    with pytest.raises(ValueError):
        RougeL(protocol="median")  # type: ignore[arg-type]


def test_empty_predictions_score_zero_and_are_counted():
    rouge = RougeL(protocol="mean")
    res = rouge.compute(["", "   ", [], ["", "the cat sat"]], ["the cat sat"] * 4)
    # item 0 empty, item 1 whitespace, item 2 no samples: 0 each; item 3 mean of (0, 1) = 0.5.
    assert res.per_item == (0.0, 0.0, 0.0, 0.5)
    assert res.n_empty_predictions == 4 and res.n_predictions == 5
    assert "4 empty prediction(s)" in str(res)
    for metric in (SacreSentenceBleu(), NltkSentenceBleu()):
        out = metric.compute(["", "the cat sat on the mat"], [PAIR[0], PAIR[0]])
        assert out.per_item[0] == 0.0 and out.n_empty_predictions == 1


def test_missing_reference_and_misalignment_raise():
    with pytest.raises(ValueError, match="no reference"):
        RougeL().compute(["x"], [[]])
    with pytest.raises(ValueError):
        RougeL().compute(["x", "y"], ["x"])


# ---------------------------------------------------------------- BLEU


def test_sacrebleu_sentence_known_values():
    bleu = SacreSentenceBleu()
    assert bleu.compute(["the cat sat on the mat"], ["the cat sat on the mat"]).score == pytest.approx(100.0)
    assert bleu.compute(["a b c d"], ["w x y z"]).score == 0.0
    assert bleu.config()["signature"].startswith("nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:")


def test_nltk_bleu_known_values():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    bleu = NltkSentenceBleu()
    assert bleu.compute(["the cat sat on the mat"], ["the cat sat on the mat"]).score == pytest.approx(1.0)
    assert bleu.compute(["a b c d"], ["w x y z"]).score == 0.0
    direct = sentence_bleu([PAIR[1].split()], PAIR[0].split(), smoothing_function=SmoothingFunction().method1)
    assert bleu.compute([PAIR[0]], [PAIR[1]]).score == pytest.approx(direct)
    assert 0.0 < direct < 1.0
    assert bleu.config()["smoothing"] == "SmoothingFunction().method1"


def test_bleu_max_over_sample_reference_pairs():
    # max protocol scores pairs separately (the narrative paper), unlike multi-reference BLEU.
    bleu = SacreSentenceBleu(protocol="max")
    res = bleu.compute([["dogs bark", "the cat sat on the mat"]], [["birds sing", "the cat sat on the mat"]])
    assert res.score == pytest.approx(100.0)
    assert SacreSentenceBleu(protocol="mean").compute(
        [["dogs bark", "the cat sat on the mat"]], [["birds sing", "the cat sat on the mat"]]
    ).score == pytest.approx(25.0)


def test_corpus_bleu_matches_sacrebleu_and_counts_empties():
    import sacrebleu

    hyps = ["the cat sat on the mat", "", "hello there general kenobi"]
    refs = [["the cat sat on the mat", "a cat sat on a mat"], ["nothing"], ["hello there general kenobi"]]
    res = CorpusBleu().compute(hyps, refs)
    direct = sacrebleu.corpus_bleu(hyps, [[r[0] for r in refs], ["a cat sat on a mat", None, None]])
    assert res.score == pytest.approx(direct.score)
    assert res.n_empty_predictions == 1 and "nrefs:var" in res.signature
    assert CorpusBleu().compute(["the cat sat on the mat"], ["the cat sat on the mat"]).score == pytest.approx(100.0)


# ---------------------------------------------------------------- BERTScore (MiniLM)

SENTS_C = [
    "The cat sat on the mat.",
    "He was over the moon about the news.",
    "She spilled the beans at dinner.",
    "Prices went through the roof.",
    "It rained cats and dogs all night long.",
]
SENTS_R = [
    "A cat was sitting on the mat.",
    "He was extremely happy about the news.",
    "She revealed the secret at dinner.",
    "The stock market closed early today.",
    "It was raining very heavily all night.",
]


@pytest.fixture(scope="module")
def bertscore_b1(minilm_path: Path) -> BertScore:
    return BertScore(minilm_path, num_layers=6, batch_size=1, device="cpu")


def test_bertscore_requires_num_layers_for_unknown_models(minilm_path: Path):
    with pytest.raises(ValueError, match="num_layers"):
        BertScore(minilm_path)


def test_bertscore_paper_layer_is_bert_scores_default():
    from bert_score.utils import model2layers

    assert PAPER_BERTSCORE_MODEL == "microsoft/deberta-large-mnli"
    assert model2layers[PAPER_BERTSCORE_MODEL] == 18


def test_bertscore_runs_and_records_config(bertscore_b1: BertScore, minilm_path: Path):
    res = bertscore_b1.score(SENTS_C, SENTS_R)
    assert len(res.f1) == 5 and all(0.0 < f < 1.0 for f in res.f1)
    from bert_score.utils import get_hash

    assert res.hash == get_hash(str(minilm_path), 6, False, False, False, False)
    assert res.hash.startswith(f"{minilm_path}_L6_no-idf_version=")
    cfg = bertscore_b1.config()
    assert cfg["hash"] == res.hash and cfg["num_layers"] == 6 and cfg["idf"] is False
    assert cfg["comparable_to_published"] is False
    assert cfg["max_length"] == 512
    same = bertscore_b1.score(["The cat sat on the mat."], ["The cat sat on the mat."])
    assert same.f1[0] == pytest.approx(1.0, abs=1e-5)


def test_bertscore_batch_size_invariance(bertscore_b1: BertScore, minilm_path: Path):
    b8 = BertScore(minilm_path, num_layers=6, batch_size=8, device="cpu")
    f1_1 = bertscore_b1.score(SENTS_C, SENTS_R).f1
    f1_8 = b8.score(SENTS_C, SENTS_R).f1
    assert f1_1 == pytest.approx(f1_8, abs=1e-5)


def test_bertscore_empty_pairs_score_zero(bertscore_b1: BertScore):
    res = bertscore_b1.score(["", SENTS_C[0], "a"], [SENTS_R[0], SENTS_R[0], "  "])
    assert res.f1[0] == 0.0 and res.f1[2] == 0.0 and res.f1[1] > 0.5
    assert res.n_empty == 2
    agg = bertscore_b1.compute([[SENTS_C[0], ""]], [SENTS_R[0]])
    assert agg.score == pytest.approx(res.f1[1], abs=1e-6) and agg.n_empty_predictions == 1


def test_bertscore_caps_huge_model_max_length(minilm_path: Path, tmp_path: Path):
    """A tokenizer reporting ~1e30 (as deberta-large-mnli does) crashes plain bert_score; ours truncates."""
    model_dir = tmp_path / "minilm_huge_max_len"
    model_dir.mkdir()
    for entry in minilm_path.iterdir():
        if entry.name != "tokenizer_config.json":
            os.symlink(entry, model_dir / entry.name)
    tok_cfg = json.loads((minilm_path / "tokenizer_config.json").read_text())
    tok_cfg["model_max_length"] = 1000000000000000019884624838656
    (model_dir / "tokenizer_config.json").write_text(json.dumps(tok_cfg))
    long_text = "the idiom " * 600  # ~1200 word pieces, far beyond 512 positions

    from bert_score import BERTScorer

    raw = BERTScorer(model_type=str(model_dir), num_layers=6, device="cpu")
    assert raw._tokenizer.model_max_length > 10**20
    with pytest.raises((OverflowError, RuntimeError, IndexError)):
        raw.score([long_text], ["short reference"])

    guarded = BertScore(model_dir, num_layers=6, device="cpu")
    assert guarded.max_length == 512
    assert guarded.config()["tokenizer_reported_max_length"] == "1000000000000000019884624838656"
    res = guarded.score([long_text], ["short reference"])
    assert 0.0 < res.f1[0] < 1.0


# ---------------------------------------------------------------- BLEURT (MiniLM, seeded head)


@pytest.fixture(scope="module")
def bleurt_b1(minilm_path: Path) -> Bleurt:
    return Bleurt(minilm_path, untrained_head_seed=0, batch_size=1, device="cpu")


def test_bleurt_shim_leaves_transformers_untouched(bleurt_b1: Bleurt):
    import transformers.pytorch_utils as pytorch_utils

    assert not hasattr(pytorch_utils, "find_pruneable_heads_and_indices")
    # transformers itself may alias this name to its real tokenization_bert module (AutoTokenizer does);
    # the shim's own stand-in module (no __file__) must be gone.
    alias = sys.modules.get("transformers.models.bert.tokenization_bert_fast")
    assert alias is None or getattr(alias, "__file__", None) is not None
    assert "bleurt_pytorch.bleurt.modeling_bleurt" in sys.modules


def test_bleurt_bare_encoder_needs_explicit_seed(minilm_path: Path):
    with pytest.raises(ValueError, match="untrained_head_seed"):
        Bleurt(minilm_path)


def test_bleurt_seeded_head_is_deterministic_and_flagged(bleurt_b1: Bleurt, minilm_path: Path):
    cfg = bleurt_b1.config()
    assert cfg["kind"] == "encoder+seeded-head" and cfg["comparable_to_published"] is False
    assert cfg["untrained_head_seed"] == 0 and cfg["max_length"] == 512
    scores = bleurt_b1.score_pairs(SENTS_C, SENTS_R)
    again = Bleurt(minilm_path, untrained_head_seed=0, batch_size=8, device="cpu")
    # Same seed → same head; batch 1 vs 8 → same scores (padding is masked).
    assert again.score_pairs(SENTS_C, SENTS_R) == pytest.approx(scores, abs=1e-5)
    other = Bleurt(minilm_path, untrained_head_seed=1, device="cpu")
    assert other.score_pairs(SENTS_C, SENTS_R) != pytest.approx(scores, abs=1e-5)


def test_bleurt_architecture_matches_transformers_bert(bleurt_b1: Bleurt, minilm_path: Path):
    """The shimmed BLEURT forward pass (attention mask, head mask) equals transformers' own BERT on the same weights."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    bert = BertForSequenceClassification.from_pretrained(minilm_path, num_labels=1).eval()
    with torch.no_grad():
        bert.classifier.weight.copy_(bleurt_b1._model.classifier.weight)
        bert.classifier.bias.copy_(bleurt_b1._model.classifier.bias)
    tok = AutoTokenizer.from_pretrained(minilm_path)
    inputs = tok(SENTS_R, SENTS_C, padding="longest", return_tensors="pt")  # mixed lengths: padding is exercised
    with torch.no_grad():
        expected = bert(**inputs).logits[:, 0].tolist()
    assert bleurt_b1.score_pairs(SENTS_C, SENTS_R) == pytest.approx(expected, abs=1e-5)


def test_bleurt_checkpoint_round_trip(bleurt_b1: Bleurt, tmp_path: Path):
    """A saved BLEURT-format checkpoint (model_type "bleurt") loads through BleurtForSequenceClassification."""
    ckpt = tmp_path / "tiny-bleurt"
    bleurt_b1._model.save_pretrained(ckpt)
    bleurt_b1._tokenizer.save_pretrained(ckpt)
    assert json.loads((ckpt / "config.json").read_text())["model_type"] == "bleurt"
    loaded = Bleurt(ckpt, device="cpu")
    assert loaded.kind == "bleurt" and loaded.comparable_to_published is False
    assert loaded.tokenizer_class == "BleurtTokenizerFast"
    assert loaded.score_pairs(SENTS_C, SENTS_R) == pytest.approx(bleurt_b1.score_pairs(SENTS_C, SENTS_R), abs=1e-6)


def test_bleurt_sentencepiece_checkpoint_gets_sentencepiece_tokenizer(bleurt_b1: Bleurt, tmp_path: Path):
    """BLEURT-20 ships spm.model; its tokenizer must be the SentencePiece one, not an empty WordPiece."""
    pytest.importorskip("google.protobuf", reason="transformers 5 needs protobuf to read spm.model")
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTS_C + SENTS_R) * 20)
    ckpt = tmp_path / "sp-bleurt"
    ckpt.mkdir()
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(ckpt / "spm"),
        vocab_size=60,
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        pad_piece="[PAD]",
        unk_piece="[UNK]",
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    (ckpt / "spm.vocab").unlink()
    bleurt_b1._model.save_pretrained(ckpt)
    loaded = Bleurt(ckpt, device="cpu")
    assert loaded.tokenizer_class == "BleurtSPTokenizer"
    ids = loaded._tokenizer("the cat sat")["input_ids"]
    assert loaded._tokenizer.unk_token_id not in ids
    assert len(loaded.score_pairs(["the cat sat"], ["a cat sat"])) == 1


def test_bleurt_truncates_long_inputs_and_scores_empty_as_zero(bleurt_b1: Bleurt):
    long_text = "the idiom " * 600
    assert len(bleurt_b1.score_pairs([long_text], [long_text])) == 1
    res = bleurt_b1.compute(["", SENTS_C[0]], [SENTS_R[0], SENTS_R[0]])
    assert res.per_item[0] == 0.0 and res.n_empty_predictions == 1
    assert res.config["metric"] == "bleurt"


def test_non_bert_non_bleurt_checkpoint_is_refused(tmp_path: Path, minilm_path: Path):
    ckpt = tmp_path / "weird"
    ckpt.mkdir()
    shutil.copy(minilm_path / "config.json", ckpt / "config.json")
    cfg = json.loads((ckpt / "config.json").read_text())
    cfg["model_type"] = "gpt2"
    (ckpt / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="cannot score BLEURT"):
        Bleurt(ckpt)


# ---------------------------------------------------------------- harness entry point


def test_generation_scores_from_records(minilm_path: Path):
    from figlang.data.records import GenerationRecord
    from figlang.evaluation.scoring import MetricOptions
    from figlang.metrics import generation_scores_from_records
    from figlang.methods.base import Prediction

    records = [
        GenerationRecord(id="a", source="s", references=("the cat sat on the mat", "a cat sat")),
        GenerationRecord(id="b", source="s", references=("he was over the moon",)),
        GenerationRecord(id="c", source="s", references=()),  # hidden reference: left out
    ]
    predictions = {
        "a": Prediction(id="a", prediction=["dogs bark", "the cat sat on the mat"]),
        "b": Prediction(id="b", prediction=None, valid=False, error="unparseable"),
        "c": Prediction(id="c", prediction=["anything"]),
    }
    options = MetricOptions(generation_protocol="max", bertscore_model=str(minilm_path), bertscore_layers=6)
    out = generation_scores_from_records(records, predictions, options)
    assert (out["n_items"], out["n_without_references"], out["protocol"]) == (2, 1, "max")
    # a: best pair is an exact match (1.0); b: invalid → no samples → 0. Mean over 2 items = 0.5.
    assert out["rougeL"] == pytest.approx(0.5)
    assert out["bleu"] == pytest.approx(0.5)
    assert out["sacrebleu_sentence"] == pytest.approx(50.0)
    assert out["bertscore_f1"] == pytest.approx(0.5, abs=1e-5)
    assert out["n_empty_predictions"] == 1
    assert out["configs"]["bertscore_f1"]["comparable_to_published"] is False
    assert out["configs"]["bleu"]["smoothing"] == "SmoothingFunction().method1"


# ---------------------------------------------------------------- every recorded setting (issue #35: mutation survivors)


def test_every_generation_metric_records_its_settings():
    from importlib.metadata import version

    from figlang.metrics.generation import CorpusBleu, NltkSentenceBleu, RougeL, SacreSentenceBleu

    pred, ref = [["a cat sat on the mat"]], [["the cat sat on the mat"]]
    base = {"protocol": "max", "empty_prediction_score": 0.0}
    rouge = RougeL()
    assert rouge.protocol == "max" and rouge.config() == {
        "metric": "rougeL",
        **base,
        "library": "rouge-score",
        "library_version": version("rouge-score"),
        "rouge_type": "rougeL",
        "use_stemmer": False,
        "measure": "fmeasure",
        "tokenizer": "rouge_score default (lowercase, non-alphanumerics removed)",
        "scale": "0-1",
    }
    sacre = SacreSentenceBleu()
    result = sacre.compute(pred, ref)
    assert sacre.config() == {
        "metric": "sacrebleu_sentence",
        **base,
        "library": "sacrebleu",
        "library_version": version("sacrebleu"),
        "signature": f"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version('sacrebleu')}",
        "scale": "0-100",
    }
    assert result.to_dict() == {
        "metric": "sacrebleu_sentence",
        "score": result.score,
        "per_item": [result.score],
        "n_items": 1,
        "n_predictions": 1,
        "n_empty_predictions": 0,
        "n_empty_references": 0,
        "protocol": "max",
        "config": sacre.config(),
    }
    nltk_bleu = NltkSentenceBleu()
    assert nltk_bleu.config() == {
        "metric": "nltk_bleu",
        **base,
        "library": "nltk",
        "library_version": version("nltk"),
        "function": "nltk.translate.bleu_score.sentence_bleu",
        "smoothing": "SmoothingFunction().method1",
        "weights": [0.25, 0.25, 0.25, 0.25],
        "tokenizer": "whitespace",
        "lowercase": False,
        "scale": "0-1",
    }
    lower = NltkSentenceBleu(lowercase=True)
    assert lower.config()["lowercase"] is True
    assert lower.score_pairs(["THE CAT SAT ON THE MAT"], ["the cat sat on the mat"]) == [pytest.approx(1.0)]
    assert nltk_bleu.score_pairs(["THE CAT SAT ON THE MAT"], ["the cat sat on the mat"])[0] < 0.1
    corpus = CorpusBleu()
    out = corpus.compute(["a cat sat on the mat", ""], [["the cat sat on the mat"], ["a dog"]])
    assert corpus.config() == {
        "metric": "sacrebleu_corpus",
        "library": "sacrebleu",
        "library_version": version("sacrebleu"),
        "tokenize": "13a",
        "smooth_method": "exp",
        "lowercase": False,
        "scale": "0-100",
    }
    signature = f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version('sacrebleu')}"
    assert out.to_dict() == {
        "score": out.score,
        "signature": signature,
        "n_items": 2,
        "n_empty_predictions": 1,
        "config": {**corpus.config(), "signature": signature},
    }
    with pytest.raises(ValueError, match="1 predictions for 2 reference items"):
        corpus.compute(["x"], [["a"], ["b"]])
    # the 13a tokenizer splits punctuation off: "mat." and "mat ." are the same tokens to it, not to "none"
    assert CorpusBleu().compute(["the cat sat on the mat."], [["the cat sat on the mat ."]]).score == pytest.approx(100.0)
    assert CorpusBleu(tokenize="none").compute(["the cat sat on the mat."], [["the cat sat on the mat ."]]).score < 100.0
