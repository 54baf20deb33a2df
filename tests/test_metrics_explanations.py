"""figlang.metrics.explanations (explanation quality) and figlang.metrics.simulatability on small cases counted
here (issue #35: written to kill the mutants mutmut left alive). ROUGE-L F1 is counted by hand from the longest
common subsequence; BLEU is sacrebleu's own sentence and corpus score with the same settings."""

from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU

from figlang.metrics.explanations import ExplanationRow, explanation_quality
from figlang.metrics.simulatability import simulatability, simulatability_report

ROWS = [
    ExplanationRow("a", "idiom", "the cat sat on the mat", "the cat lay on the mat", correct=True),  # LCS 5 of 6 and 6
    ExplanationRow("b", "idiom", "a dog barks", "", correct=False),  # empty: 0 on every measure
    ExplanationRow("c", None, "rain falls down", "rain falls down", correct=None),  # identical: 100
    ExplanationRow("d", "simile", "it is bright like the sun", None, correct=True),  # missing: 0
]


def _sentence_bleu(hyp: str, ref: str) -> float:
    return BLEU(tokenize="13a", smooth_method="exp", effective_order=True).sentence_score(hyp, [ref]).score


def test_explanation_quality_scores_each_pair_and_counts_missing_ones_as_zero():
    out = explanation_quality(ROWS)
    per = out["per_pair"]
    assert per["a"]["rougeL_f1"] == pytest.approx(5 / 6, abs=1e-4) and per["c"]["rougeL_f1"] == 1.0
    assert per["b"] == {"rougeL_f1": 0.0, "bleu": 0.0} and per["d"] == {"rougeL_f1": 0.0, "bleu": 0.0}
    assert per["a"]["bleu"] == pytest.approx(round(_sentence_bleu("the cat lay on the mat", "the cat sat on the mat"), 4))
    assert per["c"]["bleu"] == pytest.approx(100.0)
    overall = out["overall"]
    assert overall["n"] == 4 and overall["empty_explanations"] == 2
    assert overall["rougeL_f1"] == round(100 * (5 / 6 + 1.0) / 4, 2)
    assert overall["bleu"] == round((_sentence_bleu("the cat lay on the mat", "the cat sat on the mat") + 100.0) / 4, 2)
    corpus = BLEU(tokenize="13a", smooth_method="exp").corpus_score(
        ["the cat lay on the mat", "", "rain falls down", ""], [[r.gold for r in ROWS]]
    )
    assert overall["corpus_bleu"] == round(corpus.score, 2)
    assert overall["label_accuracy"] == round(100 * 2 / 3, 2)  # the row whose correctness is unknown is left out
    assert "bertscore_f1" not in overall and out["config"]["bertscore"] is None
    assert out["config"]["missing_or_empty"] == "scored 0 on every measure"
    assert set(out["config"]) == {"rougeL", "bleu", "corpus_bleu", "bertscore", "missing_or_empty"}
    assert out["config"]["bleu"]["metric"] == "sacrebleu_sentence" and out["config"]["corpus_bleu"]["metric"] == "sacrebleu_corpus"
    assert out["config"]["rougeL"]["metric"] == "rougeL"


def test_explanation_quality_groups_by_figure_type():
    groups = explanation_quality(ROWS)["by_figure_type"]
    assert list(groups) == ["idiom", "simile", "unknown"]
    assert groups["idiom"]["n"] == 2 and groups["idiom"]["empty_explanations"] == 1
    assert groups["idiom"]["rougeL_f1"] == round(100 * (5 / 6) / 2, 2) and groups["idiom"]["label_accuracy"] == 50.0
    assert groups["simile"] == {
        "n": 1,
        "rougeL_f1": 0.0,
        "bleu": 0.0,
        "corpus_bleu": 0.0,
        "label_accuracy": 100.0,
        "empty_explanations": 1,
    }
    assert groups["unknown"]["rougeL_f1"] == 100.0 and "label_accuracy" not in groups["unknown"]


class _WordOverlap:
    """A stand-in for BertScore with its interface (score(...).f1, config(), comparable_to_published): the share of
    the gold's words in the prediction. BERTScore itself is tested in test_metrics_generation.py; here only what
    explanation_quality does with its numbers is."""

    comparable_to_published = False

    def score(self, predictions, references):
        class Scores:
            f1 = [len(set(p.split()) & set(r.split())) / len(set(r.split())) for p, r in zip(predictions, references)]

        return Scores()

    def config(self):
        return {"model": "word-overlap"}


def test_explanation_quality_records_the_embedding_score_when_given():
    out = explanation_quality(ROWS, bertscore=_WordOverlap())
    assert out["per_pair"]["a"]["bertscore_f1"] == pytest.approx(0.8) and out["per_pair"]["b"]["bertscore_f1"] == 0.0
    assert out["overall"]["bertscore_f1"] == round(100 * (0.8 + 0 + 1 + 0) / 4, 2)
    assert out["config"]["bertscore"] == {"model": "word-overlap", "comparable_to_paper": False}


def test_simulatability_is_the_accuracy_difference_with_its_test():
    gold = ["e", "c", "e", "c", "e"]
    without = ["e", "e", "e", "e", None]  # 2 right
    with_r = ["e", "c", "e", "c", "c"]  # 4 right
    r = simulatability(gold, without, with_r, rationale="gold")
    assert (r.accuracy_with_rationale, r.accuracy_without_rationale, r.simulatability, r.n) == (0.8, 0.4, pytest.approx(0.4), 5)
    assert r.rationale == "gold" and (r.test.b, r.test.c) == (2, 0)  # b: items only IR→O got right
    assert (
        str(r) == f"simulatability (gold rationales) = +40.00 points (IR→O 80.00% vs I→O 40.00%, n=5; {r.test.test} p={r.test.p_value:.3g})"
    )
    assert r.to_dict()["test"]["b"] == 2
    assert simulatability(gold, with_r, without).simulatability == pytest.approx(-0.4)
    with pytest.raises(ValueError, match="5 gold, 4 I→O, 5 IR→O"):
        simulatability(gold, without[:4], with_r)
    with pytest.raises(ValueError, match="5 gold, 5 I→O, 4 IR→O"):
        simulatability(gold, without, with_r[:4])
    with pytest.raises(ValueError, match="zero items"):
        simulatability([], [], [])


def test_simulatability_report_keys_what_it_is_given():
    gold, without = ["e", "c"], ["e", "e"]
    both = simulatability_report(gold, without, with_predicted_rationales=["c", "c"], with_gold_rationales=["e", "c"])
    assert list(both) == ["predicted", "gold"]
    assert both["predicted"].rationale == "predicted" and both["predicted"].simulatability == 0.0
    assert both["gold"].rationale == "gold" and both["gold"].simulatability == 0.5
    assert list(simulatability_report(gold, without, with_gold_rationales=["e", "c"])) == ["gold"]
    assert list(simulatability_report(gold, without, with_predicted_rationales=["e", "c"])) == ["predicted"]
    with pytest.raises(ValueError, match="predicted rationales, gold rationales, or both"):
        simulatability_report(gold, without)
