"""The harness's scoring path, figlang.evaluation.scoring, on made-up records whose every figure is counted here
by hand (issue #35: written to kill the mutants mutmut left alive): accuracy and its groups, invalid answers,
answer balance, resampling clusters, and why FLUTE's explanation score is or is not computed."""

from __future__ import annotations

import pytest

from figlang.core.errors import FiglangError
from figlang.data.records import ClozeRecord, GenerationRecord, NLIPair
from figlang.evaluation.scoring import (
    CI_CLUSTERS,
    MetricOptions,
    check_ci_cluster,
    cluster_key,
    cluster_keys,
    is_correct,
    score,
)
from figlang.metrics.classification import Accuracy
from figlang.methods.base import Prediction

OPTIONS = MetricOptions(n_resamples=200, seed=3)


def _nli(i: int, label: str, premise: str, figure: str, expression: str | None = None, explanation: str | None = "why") -> NLIPair:
    return NLIPair(f"p{i}", premise, f"h{i}", label, explanation=explanation, figure_type=figure, expression=expression)


RECORDS = [
    _nli(0, "entailment", "The sky is blue.", "simile", "like the sea"),
    _nli(1, "contradiction", "The sky is blue.", "simile", "like the sea"),
    _nli(2, "entailment", "He ran.", "idiom", "hit the road"),
    _nli(3, "contradiction", "He ran.", "idiom", "hit the road"),
    _nli(4, "entailment", "She sang.", "idiom"),
    _nli(5, "contradiction", "  she   SANG. ", "idiom"),
]
ANSWERS = {
    "p0": Prediction("p0", "entailment"),  # right
    "p1": Prediction("p1", "entailment"),  # wrong
    "p2": Prediction("p2", "entailment"),  # right
    "p3": Prediction("p3", None, valid=False, error="unparseable"),  # invalid: wrong
    "p4": Prediction("p4", "entailment"),  # right
    "p5": Prediction("p5", "contradiction"),  # right
}


def test_is_correct():
    r = RECORDS[0]
    assert is_correct(r, Prediction("p0", "entailment")) is True
    assert is_correct(r, Prediction("p0", "contradiction")) is False
    assert is_correct(r, Prediction("p0", "entailment", valid=False)) is False  # an invalid answer never counts
    assert is_correct(r, None) is False
    gen = GenerationRecord("g", "source", ("ref",))
    assert is_correct(gen, Prediction("g", ["ref"])) is None


def test_score_counts_accuracy_groups_and_invalid_answers():
    out = score(RECORDS, ANSWERS, ("figure_type", "expression"), OPTIONS)
    assert out["n_scored"] == 6 and out["n_invalid"] == 1
    acc = out["accuracy"]
    assert (acc["n_correct"], acc["n"], acc["accuracy"]) == (4, 6, pytest.approx(4 / 6))
    assert "n_clusters" not in acc
    expected = Accuracy(n_resamples=200, seed=3).from_correctness([True, False, True, False, True, True])
    assert (acc["ci_low"], acc["ci_high"]) == (expected.ci_low, expected.ci_high)
    assert {k: (v["n_correct"], v["n"]) for k, v in out["by_gold_label"].items()} == {"contradiction": (1, 3), "entailment": (3, 3)}
    assert {k: (v["n_correct"], v["n"]) for k, v in out["by_figure_type"].items()} == {"idiom": (3, 4), "simile": (1, 2)}
    assert {k: (v["n_correct"], v["n"]) for k, v in out["by_expression"].items()} == {
        "hit the road": (1, 2),
        "like the sea": (1, 2),
        "unknown": (2, 2),
    }
    assert list(out["by_figure_type"]) == ["idiom", "simile"]  # sorted
    assert "prediction_balance" not in out  # NLI: no option balance
    # only the records with an answer are scored
    partial = score(RECORDS, {k: ANSWERS[k] for k in ("p0", "p1")}, (), OPTIONS)
    assert partial["n_scored"] == 2 and partial["accuracy"]["n_correct"] == 1 and partial["n_invalid"] == 0
    assert score(RECORDS, {}, (), OPTIONS) == {"n_scored": 0}


def test_cluster_resampling_counts_premises_and_expressions():
    by_context = score(RECORDS, ANSWERS, ("figure_type",), MetricOptions(n_resamples=200, seed=3, ci_cluster="context"))
    assert by_context["accuracy"]["n_clusters"] == 3  # "She sang." and "  she   SANG. " are one premise
    assert by_context["by_figure_type"]["idiom"]["n_clusters"] == 2
    assert by_context["by_gold_label"]["entailment"]["n_clusters"] == 3 and by_context["by_gold_label"]["contradiction"]["n_clusters"] == 3
    correct = [True, False, True, False, True, True]
    keys = cluster_keys(RECORDS, "context")
    expected = Accuracy(n_resamples=200, seed=3).from_correctness(correct, keys)
    assert (by_context["accuracy"]["ci_low"], by_context["accuracy"]["ci_high"]) == (expected.ci_low, expected.ci_high)
    by_expression = score(RECORDS, ANSWERS, (), MetricOptions(n_resamples=200, seed=3, ci_cluster="expression"))
    assert by_expression["accuracy"]["n_clusters"] == 4  # two expressions, and p4, p5 alone
    assert cluster_keys(RECORDS, None) is None
    assert cluster_keys(RECORDS, "expression") == ["expr:like the sea"] * 2 + ["expr:hit the road"] * 2 + ["id:p4", "id:p5"]


def test_cluster_key_and_its_units():
    assert cluster_key("context", "a", "the premise", "an idiom") == "ctx:the premise"
    assert cluster_key("context", "a", None, "an idiom") == "id:a" and cluster_key("context", "a", "", None) == "id:a"
    assert cluster_key("expression", "a", "the premise", "an idiom") == "expr:an idiom"
    assert cluster_key("expression", "a", "the premise", None) == "id:a"
    assert set(CI_CLUSTERS) == {None, "context", "expression"}
    check_ci_cluster(None)
    with pytest.raises(FiglangError, match="unknown CI cluster 'premise': use context, expression"):
        cluster_key("premise", "a", "x", "y")
    with pytest.raises(FiglangError, match="unknown CI cluster"):
        MetricOptions(ci_cluster="items")


def test_metric_options_make_the_accuracy_they_record():
    a = MetricOptions(n_resamples=50, confidence=0.9, seed=7).accuracy()
    assert (a.n_resamples, a.confidence, a.seed) == (50, 0.9, 7)
    d = MetricOptions()
    assert (d.n_resamples, d.confidence, d.seed, d.generation_protocol, d.explanation_semantics) == (1000, 0.95, 0, "max", "shared-task")
    assert d.bertscore_model is None and d.bleurt_checkpoint is None and d.ci_cluster is None and d.extra == {}


def test_cloze_scores_gold_options_and_answer_balance():
    records = [ClozeRecord(f"c{i}", f"story {i}", ("a", "b"), label) for i, label in enumerate([0, 1, 1, 0, None])]
    answers = {
        "c0": Prediction("c0", 0),
        "c1": Prediction("c1", 0),
        "c2": Prediction("c2", 1),
        "c3": Prediction("c3", None, valid=False),
        "c4": Prediction("c4", 1),
    }
    out = score(records, answers, (), OPTIONS)
    assert out["n_invalid"] == 1 and (out["accuracy"]["n_correct"], out["accuracy"]["n"]) == (2, 5)
    assert {k: (v["n_correct"], v["n"]) for k, v in out["by_gold_label"].items()} == {
        "option1": (1, 2),
        "option2": (1, 2),
        "unknown": (0, 1),
    }
    assert out["prediction_balance"] == {"0": 2, "1": 2, "invalid": 1}
    assert "explanations" not in out


def test_why_the_explanation_score_is_or_is_not_computed():
    explained = {k: Prediction(k, "entailment", explanation="because") for k in ANSWERS}
    out = score(RECORDS, explained, (), OPTIONS)["explanations"]
    assert out == {
        "computed": False,
        "reason": "FLUTE's explanation score needs BERTScore and BLEURT models: pass --bertscore-model and --bleurt-checkpoint",
    }
    half = MetricOptions(bertscore_model="x")
    assert score(RECORDS, explained, (), half)["explanations"]["computed"] is False
    without_gold = [_nli(9, "entailment", "p", "idiom", explanation=None), *RECORDS[:2]]
    answers = {r.id: Prediction(r.id, "entailment", explanation="e") for r in without_gold}
    out = score(without_gold, answers, (), OPTIONS)["explanations"]
    assert out == {
        "computed": False,
        "reason": "not computed: 1 of 3 gold items have no gold explanation to compare with",
        "n_with_explanation": 3,
    }
    impli = [NLIPair("i0", "p", "h", "not-entailment", explanation="x"), NLIPair("i1", "p", "h", "entailment", explanation="x")]
    answers = {"i0": Prediction("i0", "entailment", explanation="e"), "i1": Prediction("i1", "entailment")}
    out = score(impli, answers, (), OPTIONS, labels=("entailment", "not-entailment"))["explanations"]
    assert out["computed"] is False and out["n_with_explanation"] == 1
    assert out["reason"].endswith("this task's labels include not-entailment")
    # the task's labels decide, not only the gold labels present
    out = score(RECORDS, explained, (), OPTIONS, labels=("entailment", "contradiction", "neutral"))["explanations"]
    assert out["reason"].endswith("labels include neutral")
    # no explanation at all: no explanation metrics
    assert "explanations" not in score(RECORDS, ANSWERS, (), OPTIONS)


def test_generation_scores_without_the_embedding_metric():
    """The generation path of score() without BERTScore (test_metrics_generation.py runs it with one): the mean
    over items of the best sample-reference pair, invalid answers as no samples, hidden references left out."""
    records = [
        GenerationRecord("a", "s", ("the cat sat on the mat", "a cat sat")),
        GenerationRecord("b", "s", ("he was over the moon",)),
        GenerationRecord("c", "s", ()),  # hidden reference: left out, counted
        GenerationRecord("d", "s", ("the rain falls on the hills",)),
    ]
    predictions = {
        "a": Prediction("a", ["dogs bark", "the cat sat on the mat"]),
        "b": Prediction("b", None, valid=False, error="unparseable"),
        "c": Prediction("c", ["anything"]),
        "d": Prediction("d", "the rain falls on the hills"),  # one string is one sample
    }
    out = score(records, predictions, (), MetricOptions(generation_protocol="max"))["generation"]
    assert (out["n_items"], out["n_without_references"], out["protocol"]) == (3, 1, "max")
    assert out["rougeL"] == pytest.approx(2 / 3) and out["bleu"] == pytest.approx(2 / 3)
    assert out["sacrebleu_sentence"] == pytest.approx(200 / 3)
    assert out["n_empty_predictions"] == 1 and "bertscore_f1" not in out
    assert set(out["configs"]) == {"rougeL", "bleu", "sacrebleu_sentence"} and out["configs"]["rougeL"]["protocol"] == "max"
    mean = score(records, predictions, (), MetricOptions(generation_protocol="mean"))["generation"]
    assert mean["protocol"] == "mean" and mean["rougeL"] < out["rougeL"]  # a's "dogs bark" now counts
    from types import SimpleNamespace

    from figlang.metrics.generation_scores import generation_scores_from_records

    bare = generation_scores_from_records(records, predictions, SimpleNamespace())  # options without the fields: defaults
    assert bare["protocol"] == "max" and bare["rougeL"] == out["rougeL"] and "bertscore_f1" not in bare
    hidden = score(records[2:3], predictions, (), MetricOptions())["generation"]
    assert hidden == {"protocol": "max", "n_items": 0, "n_without_references": 1}
