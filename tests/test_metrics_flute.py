"""FLUTE Acc@0/50/60 on a hand-made set whose numbers are worked out by hand below."""

from __future__ import annotations

from pathlib import Path

import pytest

from figlang.data.records import NLIPair
from figlang.metrics import (
    BertScore,
    Bleurt,
    ExplanationSimilarity,
    FluteScoringError,
    evaluate_flute,
    explanation_score,
    explanation_similarity,
    flute_scores,
    normalize_flute_label,
)


def _gold(i: str, label: str, figure: str, explanation: str = "the gold explanation") -> NLIPair:
    return NLIPair(id=i, premise="p", hypothesis="h", label=label, explanation=explanation, figure_type=figure)


GOLD = [
    _gold("g1", "entailment", "sarcasm"),
    _gold("g2", "contradiction", "sarcasm"),
    _gold("g3", "contradiction", "sarcasm"),
    _gold("g4", "entailment", "simile"),
    _gold("g5", "contradiction", "simile"),
    _gold("g6", "entailment", "simile"),
    _gold("g7", "contradiction", "idiom"),
    _gold("g8", "entailment", "idiom"),
    _gold("g9", "contradiction", "idiom"),
]

PREDICTIONS = [
    {"id": "g1", "label": "Entailment", "explanation": "e1"},
    {"id": "g2", "label": "contradicts", "explanation": "e2"},
    {"id": "g3", "label": "Entailment", "explanation": "e3"},  # wrong label
    {"id": "g4", "label": "ENTAILS", "explanation": ""},  # right label, empty explanation
    # g5: no prediction (missing id)
    {"id": "g6", "label": "entailment", "explanation": "e6"},
    {"id": "g6", "label": "entailment", "explanation": "e6 again"},  # duplicate id
    {"id": "g7", "label": "neutral", "explanation": "e7"},  # label outside the label set
    {"id": "g8", "label": "entailment", "explanation": "e8"},
    {"id": "g9", "label": "Contradiction", "explanation": "e9"},
    {"id": "zzz", "label": "entailment", "explanation": "not in gold"},  # unknown id
]

# (BERTScore F1, BLEURT) per item, chosen so 50 × (F1 + BLEURT) is exact in binary floating point:
#   g1: 50 × (0.75 + 0.5)   = 62.5   → shared task int 62,  paper 62.5
#   g2: 50 × (0.75 + 0.25)  = 50.0   → shared task int 50,  paper 50.0 (the ≥ vs > boundary at 50)
#   g3: 50 × (0.9 + 0.8)    ≈ 85     → irrelevant, label wrong
#   g8: 50 × (0.625 + 0.5)  = 56.25  → shared task int 56,  paper 56.25
#   g9: 50 × (0.5 - 0.75)   = -12.5  → shared task int -12, paper -12.5 (negative BLEURT; still counts at 0)
SIMS = {
    "g1": ExplanationSimilarity(0.75, 0.5),
    "g2": ExplanationSimilarity(0.75, 0.25),
    "g3": ExplanationSimilarity(0.9, 0.8),
    "g6": ExplanationSimilarity(0.9, 0.9),
    "g7": ExplanationSimilarity(0.9, 0.9),
    "g8": ExplanationSimilarity(0.625, 0.5),
    "g9": ExplanationSimilarity(0.5, -0.75),
}


def test_label_normalisation():
    for raw in ("Entailment", "entails", "ENTAILMENT", " entailment "):
        assert normalize_flute_label(raw) == "entailment"
    for raw in ("Contradiction", "contradicts", "CONTRADICTS"):
        assert normalize_flute_label(raw) == "contradiction"
    for raw in ("neutral", "", None, 1, "entail"):
        assert normalize_flute_label(raw) is None


def test_label_normalisers_agree_with_the_loader():
    """The scorer and the FLUTE loader / prediction reader share one normaliser: no label one accepts, the other refuses."""
    from figlang.data.flute import normalise_label

    for raw in ("entailment.", "Entails.", " Contradicts. ", "CONTRADICTION."):
        assert normalize_flute_label(raw) is not None
    assert normalize_flute_label("entailment.") == "entailment" and normalize_flute_label("Contradicts.") == "contradiction"
    for raw in ("Entailment", "entails", "entailment.", "Contradicts.", "contradiction", "neutral", "", "entail", None, 1):
        assert normalize_flute_label(raw) == normalise_label(raw), raw
    gold = [g for g in GOLD if g.id in {"g1", "g2"}]
    preds = [{"id": "g1", "label": "Entailment.", "explanation": "e1"}, {"id": "g2", "label": "contradicts.", "explanation": "e2"}]
    report = flute_scores(gold, preds, SIMS)  # a trailing period is no longer a bad label
    assert not report.problems.blocking and report.overall.accuracy[0] == 1.0


def test_explanation_score_semantics():
    assert explanation_score(ExplanationSimilarity(0.75, 0.5), "shared_task") == 62.0
    assert explanation_score(ExplanationSimilarity(0.75, 0.5), "paper") == 62.5
    assert explanation_score(ExplanationSimilarity(0.5, -0.75), "shared_task") == -12.0  # int() truncates toward 0


def test_problems_raise_without_allow_partial():
    with pytest.raises(FluteScoringError) as info:
        flute_scores(GOLD, PREDICTIONS, SIMS)
    problems = info.value.problems
    assert problems is not None and problems.blocking
    assert problems.missing_ids == ("g5",)
    assert problems.duplicate_ids == ("g6",)
    assert problems.unknown_ids == ("zzz",)
    assert problems.bad_labels == (("g7", "neutral"),)
    assert problems.empty_explanations == ("g4",)
    message = str(info.value)
    for fragment in ("g5", "g6", "zzz", "neutral", "allow_partial"):
        assert fragment in message


def test_shared_task_semantics_by_hand():
    report = flute_scores(GOLD, PREDICTIONS, SIMS, allow_partial=True)
    # Unscorable items (g5 missing, g6 duplicate, g7 bad label) count as wrong and stay in the
    # denominator: n = 9 overall, 3 per figure type.
    # Acc@0 = label correct: g1, g2, g4 (empty explanation), g8, g9 (negative score)  → 5/9.
    # Acc@50 (int score ≥ 50): g1 (62), g2 (50), g8 (56)                               → 3/9.
    # Acc@60 (int score ≥ 60): g1 (62)                                                 → 1/9.
    assert report.overall.n == 9
    assert report.overall.accuracy == pytest.approx({0: 5 / 9, 50: 3 / 9, 60: 1 / 9})
    # sarcasm g1, g2, g3: @0 g1 g2 = 2/3, @50 g1 g2 = 2/3, @60 g1 = 1/3.
    # simile  g4, g5, g6: @0 g4 = 1/3 (empty explanation scores 0, enough for @0 only), @50 0, @60 0.
    # idiom   g7, g8, g9: @0 g8 g9 = 2/3, @50 g8 = 1/3, @60 0.
    by = report.by_figure_type
    assert list(by) == ["idiom", "sarcasm", "simile"]
    assert by["sarcasm"].accuracy == pytest.approx({0: 2 / 3, 50: 2 / 3, 60: 1 / 3})
    assert by["simile"].accuracy == pytest.approx({0: 1 / 3, 50: 0.0, 60: 0.0})
    assert by["idiom"].accuracy == pytest.approx({0: 2 / 3, 50: 1 / 3, 60: 0.0})
    statuses = {i.id: i.status for i in report.items}
    assert statuses == {
        "g1": "ok",
        "g2": "ok",
        "g3": "ok",
        "g4": "empty_explanation",
        "g5": "missing",
        "g6": "duplicate",
        "g7": "bad_label",
        "g8": "ok",
        "g9": "ok",
    }
    scores = {i.id: i.explanation_score for i in report.items}
    assert scores["g4"] == 0.0 and scores["g5"] is None and scores["g1"] == 62.0
    assert report.config["semantics"] == "shared_task" and report.config["alignment"] == "by id"
    d = report.to_dict()
    assert d["overall"]["acc@50"] == pytest.approx(3 / 9)
    assert d["problems"]["bad_labels"] == [{"id": "g7", "label": "neutral"}]
    assert "acc@60" in str(report)


def test_paper_semantics_by_hand():
    report = flute_scores(GOLD, PREDICTIONS, SIMS, semantics="paper", allow_partial=True)
    # Same items, unrounded scores, strict ">": g2's 50.0 no longer passes 50.
    # Acc@0 = 5/9 (label accuracy, as in the paper), Acc@50: g1 (62.5), g8 (56.25) = 2/9, Acc@60: g1 = 1/9.
    assert report.overall.accuracy == pytest.approx({0: 5 / 9, 50: 2 / 9, 60: 1 / 9})
    # sarcasm @50 drops from 2/3 to 1/3 (g2); the other groups are unchanged.
    assert report.by_figure_type["sarcasm"].accuracy == pytest.approx({0: 2 / 3, 50: 1 / 3, 60: 1 / 3})
    assert report.by_figure_type["idiom"].accuracy == pytest.approx({0: 2 / 3, 50: 1 / 3, 60: 0.0})
    assert {i.id: i.explanation_score for i in report.items}["g8"] == 56.25


def test_clean_subset_scores_without_allow_partial():
    keep = {"g1", "g2", "g3", "g4", "g8", "g9"}
    gold = [g for g in GOLD if g.id in keep]
    preds = [p for p in PREDICTIONS if p["id"] in keep]
    report = flute_scores(gold, preds, SIMS)  # only an empty explanation: reported, not an error
    assert not report.problems.blocking and report.problems.empty_explanations == ("g4",)
    # n = 6: @0 g1 g2 g4 g8 g9 = 5/6, @50 g1 g2 g8 = 3/6, @60 g1 = 1/6.
    assert report.overall.accuracy == pytest.approx({0: 5 / 6, 50: 3 / 6, 60: 1 / 6})


def test_alignment_is_by_id_not_position():
    """The shared-task script shifted scores after an empty prediction; order must not matter here."""
    forward = flute_scores(GOLD, PREDICTIONS, SIMS, allow_partial=True)
    backward = flute_scores(list(reversed(GOLD)), list(reversed(PREDICTIONS)), SIMS, allow_partial=True)
    assert forward.overall == backward.overall
    assert forward.by_figure_type == backward.by_figure_type


def test_prediction_field_aliases_and_missing_similarity():
    gold = [_gold("a", "entailment", "metaphor"), _gold("b", "contradiction", "metaphor")]
    preds = [
        {"id": "a", "predicted_label": "entails", "model_explanation": "x"},
        {"id": "b", "predicted_label": "contradicts", "model_explanation": "y"},
    ]
    sims = {"a": (0.75, 0.5)}  # tuples are accepted; "b" has none although its label is right
    with pytest.raises(FluteScoringError, match="without BERTScore/BLEURT"):
        flute_scores(gold, preds, sims)
    report = flute_scores(gold, preds, sims, allow_partial=True)
    # a: correct, 62 → @0 @50 @60; b: correct, no score → @0 only. n = 2.
    assert report.overall.accuracy == pytest.approx({0: 1.0, 50: 0.5, 60: 0.5})
    assert report.problems.missing_similarity == ("b",)


def test_gold_problems_always_raise():
    dup = [_gold("a", "entailment", "idiom"), _gold("a", "entailment", "idiom")]
    with pytest.raises(FluteScoringError, match="gold"):
        flute_scores(dup, [], {}, allow_partial=True)
    bad = [_gold("a", "neutral", "idiom")]
    with pytest.raises(FluteScoringError, match="gold"):
        flute_scores(bad, [], {}, allow_partial=True)
    hidden = [NLIPair("a", "p", "h", "entailment", "e", "idiom", label_is_placeholder=True)]
    with pytest.raises(FluteScoringError, match="placeholder"):
        flute_scores(hidden, [], {}, allow_partial=True)
    with pytest.raises(ValueError):
        flute_scores(GOLD, PREDICTIONS, SIMS, semantics="other", allow_partial=True)  # type: ignore[arg-type]


def test_evaluate_flute_with_real_metric_objects(minilm_path: Path):
    """The convenience path runs BERTScore and BLEURT for real (MiniLM stand-ins) and aligns by id."""
    bertscore = BertScore(minilm_path, num_layers=6, device="cpu")
    bleurt = Bleurt(minilm_path, untrained_head_seed=0, device="cpu")
    gold = [
        _gold("a", "entailment", "simile", "Being as busy as a bee means being very busy."),
        _gold("b", "contradiction", "idiom", "Spilling the beans means revealing a secret."),
        _gold("c", "contradiction", "idiom", "Under the weather means feeling ill."),
    ]
    preds = [
        {"id": "c", "label": "contradiction", "explanation": "Feeling under the weather means being sick."},
        {"id": "a", "label": "entailment", "explanation": "Being as busy as a bee means being very busy."},
        {"id": "b", "label": "entailment", "explanation": ""},
    ]
    sims = explanation_similarity(gold, preds, bertscore=bertscore, bleurt=bleurt)
    assert set(sims) == {"a", "c"}  # b has an empty explanation: not sent to the models
    assert sims["a"].bertscore_f1 == pytest.approx(1.0, abs=1e-5)  # identical explanation
    expected_c = bleurt.score_pairs([preds[0]["explanation"]], [gold[2].explanation])[0]
    assert sims["c"].bleurt == pytest.approx(expected_c, abs=1e-6)

    report = evaluate_flute(gold, preds, bertscore=bertscore, bleurt=bleurt)
    assert report.overall.accuracy[0] == pytest.approx(2 / 3)  # a and c have the right label
    assert report.config["comparable_to_published"] is False
    assert report.config["bertscore"]["model_type"] == str(minilm_path)
    assert report.config["bleurt"]["kind"] == "encoder+seeded-head"
    direct = flute_scores(gold, preds, sims)
    assert report.overall == direct.overall


def test_flute_scores_from_records_for_the_harness(minilm_path: Path, tmp_path: Path):
    """The harness entry point: real Prediction objects, a saved BLEURT-format checkpoint, hyphenated semantics."""
    from figlang.evaluation.scoring import MetricOptions
    from figlang.metrics import flute_scores_from_records
    from figlang.methods.base import Prediction

    ckpt = tmp_path / "tiny-bleurt"
    seeded = Bleurt(minilm_path, untrained_head_seed=0, device="cpu")
    seeded._model.save_pretrained(ckpt)
    seeded._tokenizer.save_pretrained(ckpt)

    records = [
        _gold("a", "entailment", "simile", "Being as busy as a bee means being very busy."),
        _gold("b", "contradiction", "idiom", "Spilling the beans means revealing a secret."),
        _gold("c", "contradiction", "sarcasm", "Loving to wait means hating to wait."),
    ]
    predictions = {
        "a": Prediction(id="a", prediction="entailment", explanation="Being as busy as a bee means being very busy."),
        "b": Prediction(id="b", prediction=None, explanation="", valid=False, error="unparseable"),
        "c": Prediction(id="c", prediction="contradiction", explanation=""),
    }
    options = MetricOptions(
        bertscore_model=str(minilm_path), bertscore_layers=6, bleurt_checkpoint=str(ckpt), explanation_semantics="shared-task"
    )
    out = flute_scores_from_records(records, predictions, options)
    assert out["computed"] is True and out["semantics"] == "shared_task" and out["n"] == 3
    # a and c have the right label (Acc@0 = 2/3); b is invalid, reported as a bad label and counted wrong.
    assert out["acc@0"] == pytest.approx(2 / 3)
    assert out["problems"]["bad_labels"] == [{"id": "b", "label": ""}]
    assert out["problems"]["empty_explanations"] == ["b", "c"]
    assert out["explanation_scores"]["c"] == 0.0
    # a's explanation is identical (BERTScore F1 = 1), so its score is int(50 × (1 + BLEURT of the seeded head)).
    bleurt_a = seeded.score_pairs([records[0].explanation], [records[0].explanation])[0]
    assert out["explanation_scores"]["a"] == float(int(50 * (1.0 + bleurt_a)))
    assert out["comparable_to_published"] is False
    assert set(out["by_figure_type"]) == {"idiom", "sarcasm", "simile"}
    # every figure of the report, under the keys the harness writes into results.json
    assert set(out) == {
        "computed",
        "semantics",
        "acc@0",
        "acc@50",
        "acc@60",
        "n@0",
        "n@50",
        "n@60",
        "mean_explanation_score",
        "by_figure_type",
        "problems",
        "explanation_scores",
        "comparable_to_published",
        "config",
        "n",
    }
    assert out["n@0"] == 2 and out["by_figure_type"]["idiom"]["n"] == 1 and out["by_figure_type"]["idiom"]["acc@0"] == 0.0
    assert out["config"]["task"] == "flute" and out["config"]["allow_partial"] is True and out["config"]["semantics"] == "shared_task"
    assert out["config"]["bleurt"]["kind"] == "encoder+seeded-head" or out["config"]["bleurt"]["checkpoint"].endswith("tiny-bleurt")
    assert out["config"]["bertscore"]["num_layers"] == 6
    assert out["problems"]["missing_ids"] == [] and set(out["explanation_scores"]) == {"a", "b", "c"}
    with pytest.raises(ValueError, match="explanation_semantics must be 'shared-task' or 'paper', got 'other'"):
        flute_scores_from_records(records, predictions, MetricOptions(explanation_semantics="other"))


class _StandIn:
    """A metric object with BertScore's and Bleurt's interface (score(...).f1, score_pairs, config,
    comparable_to_published) whose numbers are fixed per candidate, so that what explanation_similarity and
    evaluate_flute do with them is checked in milliseconds; the real models are the two tests above."""

    def __init__(self, values: dict[str, float], comparable: bool = False, name: str = "stand-in"):
        self.values, self.comparable_to_published, self.name, self.calls = values, comparable, name, []

    def score(self, candidates, references):
        self.calls.append((list(candidates), list(references)))

        class Scores:
            f1 = [self.values[c] for c in candidates]

        return Scores()

    def score_pairs(self, candidates, references):
        self.calls.append((list(candidates), list(references)))
        return [self.values[c] for c in candidates]

    def config(self):
        return {"name": self.name}


def test_explanation_similarity_sends_only_scoreable_pairs_and_aligns_by_id():
    gold = [
        _gold("a", "entailment", "simile", "gold a"),
        _gold("b", "contradiction", "idiom", "gold b"),
        _gold("c", "contradiction", "idiom", "gold c"),
        _gold("d", "entailment", "idiom", "   "),  # no gold explanation to compare with
        _gold("e", "entailment", "idiom", "gold e"),
    ]
    preds = [
        {"id": "zzz", "label": "entailment", "explanation": "pred z"},  # not in the gold: not sent
        {"id": "e", "label": "entailment", "explanation": "pred e"},
        {"id": "b", "label": "entailment", "explanation": "  "},  # empty: not sent
        {"id": "d", "label": "entailment", "explanation": "pred d"},
        {"id": "c", "label": "contradiction", "explanation": "pred c"},
        {"id": "a", "label": "entailment", "explanation": "pred a"},
        {"id": "e", "label": "entailment", "explanation": "pred e again"},  # predicted twice: not sent
    ]
    bert = _StandIn({"pred c": 0.5, "pred a": 0.75})
    bleurt = _StandIn({"pred c": 0.25, "pred a": float("nan")})  # a NaN drops the pair
    sims = explanation_similarity(gold, preds, bertscore=bert, bleurt=bleurt)
    assert bert.calls == [(["pred c", "pred a"], ["gold c", "gold a"])] and bleurt.calls == bert.calls
    assert sims == {"c": ExplanationSimilarity(0.5, 0.25)}
    assert isinstance(sims["c"].bertscore_f1, float)
    nan_bert = _StandIn({"pred c": float("nan"), "pred a": 0.75})
    assert set(explanation_similarity(gold, preds, bertscore=nan_bert, bleurt=_StandIn({"pred c": 0.1, "pred a": 0.2}))) == {"a"}
    nothing = _StandIn({})
    assert explanation_similarity(gold, preds[2:3], bertscore=nothing, bleurt=nothing) == {} and nothing.calls == []
    # skipping a pair goes on to the next one: a NaN first, a number after it
    both = {"pred c": float("nan"), "pred a": 0.5}
    assert explanation_similarity(gold, preds, bertscore=_StandIn(both), bleurt=_StandIn({"pred c": 0.1, "pred a": 0.2})) == {
        "a": ExplanationSimilarity(0.5, 0.2)
    }


def test_evaluate_flute_scores_with_the_given_metrics_and_records_them():
    gold = [_gold("a", "entailment", "simile", "gold a"), _gold("b", "contradiction", "idiom", "gold b")]
    preds = [{"id": "a", "label": "entailment", "explanation": "x"}, {"id": "b", "label": "contradiction", "explanation": "y"}]
    bert, bleurt = _StandIn({"x": 0.75, "y": 0.5}, name="bert"), _StandIn({"x": 0.5, "y": 0.25}, comparable=True, name="bleurt")
    report = evaluate_flute(gold, preds, bertscore=bert, bleurt=bleurt)
    # a: 50 × (0.75 + 0.5) = 62.5 → 62; b: 50 × (0.5 + 0.25) = 37.5 → 37
    assert {i.id: i.explanation_score for i in report.items} == {"a": 62.0, "b": 37.0}
    assert report.overall.accuracy[0] == 1.0 and report.overall.accuracy[50] == 0.5 and report.overall.accuracy[60] == 0.5
    assert report.config["bertscore"] == {"name": "bert"} and report.config["bleurt"] == {"name": "bleurt"}
    assert report.config["comparable_to_published"] is False  # only when both are
    both = evaluate_flute(gold, preds, bertscore=_StandIn(bert.values, True), bleurt=_StandIn(bleurt.values, True))
    assert both.config["comparable_to_published"] is True
    paper = evaluate_flute(gold, preds, bertscore=bert, bleurt=bleurt, semantics="paper", thresholds=(0, 40))
    assert {i.id: i.explanation_score for i in paper.items} == {"a": 62.5, "b": 37.5} and paper.overall.accuracy[40] == 0.5
    with pytest.raises(FluteScoringError, match=r"1 gold id\(s\) without a prediction: b"):
        evaluate_flute(gold, preds[:1], bertscore=bert, bleurt=bleurt)
    partial = evaluate_flute(gold, preds[:1], bertscore=bert, bleurt=bleurt, allow_partial=True)
    assert partial.problems.missing_ids == ("b",)


def test_a_report_prints_and_serialises_every_figure():
    gold = [_gold("a", "entailment", "simile", "gold a"), _gold("b", "contradiction", "idiom", "gold b")]
    preds = [{"id": "a", "label": "entailment", "explanation": "x"}, {"id": "b", "label": "entailment", "explanation": "y"}]
    report = evaluate_flute(gold, preds, bertscore=_StandIn({"x": 0.75, "y": 0.5}), bleurt=_StandIn({"x": 0.5, "y": 0.25}))
    assert str(report) == "\n".join(
        [
            "group             n    acc@0   acc@50   acc@60",
            "overall           2    50.00    50.00    50.00",
            "idiom             1     0.00     0.00     0.00",
            "simile            1   100.00   100.00   100.00",
            f"semantics=shared_task; {report.problems.summary()}",
        ]
    )
    d = report.to_dict()
    assert d["overall"] == {
        "n": 2,
        "acc@0": 0.5,
        "acc@50": 0.5,
        "acc@60": 0.5,
        "n@0": 1,
        "n@50": 1,
        "n@60": 1,
        "mean_explanation_score": 49.5,
    }
    assert d["by_figure_type"]["idiom"] == {
        "n": 1,
        "acc@0": 0.0,
        "acc@50": 0.0,
        "acc@60": 0.0,
        "n@0": 0,
        "n@50": 0,
        "n@60": 0,
        "mean_explanation_score": 37.0,
    }
    assert d["semantics"] == "shared_task" and d["thresholds"] == [0, 50, 60] and d["problems"] == report.problems.to_dict()
    assert d["config"] == report.config and [i["id"] for i in d["items"]] == ["a", "b"]
    assert d["items"][0]["explanation_score"] == 62.0 and d["items"][1]["label_correct"] is False and d["items"][1]["status"] == "ok"


def test_report_config_says_how_every_figure_was_counted():
    gold = [_gold("a", "entailment", "simile", "gold a")]
    preds = [{"id": "a", "label": "entailment", "explanation": "x"}]
    sims = {"a": ExplanationSimilarity(0.75, 0.5)}
    shared = flute_scores(gold, preds, sims, similarity_config={"bertscore": {"m": 1}})
    assert shared.config == {
        "task": "flute",
        "semantics": "shared_task",
        "thresholds": [0, 50, 60],
        "score_formula": "int(50 * (bertscore_f1 + bleurt))",
        "count_rule": "label correct and (threshold == 0 or score >= threshold)",
        "empty_explanation_score": 0,
        "allow_partial": False,
        "unscorable_items": "counted as wrong, kept in the denominator",
        "alignment": "by id",
        "bertscore": {"m": 1},
    }
    paper = flute_scores(gold, preds, sims, semantics="paper", allow_partial=True)
    assert paper.config["score_formula"] == "50 * (bertscore_f1 + bleurt)" and paper.config["allow_partial"] is True
    assert paper.config["count_rule"] == "label correct and (threshold == 0 or score > threshold)"
    assert explanation_score(ExplanationSimilarity(0.755, 0.5)) == 62.0  # the default semantics is the shared task's
    # an empty explanation of a wrongly labelled item keeps its bad-label status
    report = flute_scores(gold, [{"id": "a", "label": "neutral", "explanation": ""}], {}, allow_partial=True)
    assert report.items[0].status == "bad_label" and report.items[0].explanation_score == 0.0


def test_gold_items_read_aliases_and_name_every_problem():
    rows = [
        {"id": "a", "label": "Entailment", "type": "idiom", "explanation": "gold a"},  # "type" for the figure type
        {"id": "b", "label": "contradiction", "explanation": "gold b"},  # no figure type: unknown
    ]
    report = flute_scores(
        rows, [{"id": "a", "label": "entailment", "explanation": "x"}], {"a": ExplanationSimilarity(1.0, 1.0)}, allow_partial=True
    )
    assert set(report.by_figure_type) == {"idiom", "unknown"} and report.items[0].gold_label == "entailment"
    assert report.items[1].status == "missing"
    with pytest.raises(FluteScoringError, match=r"malformed: duplicate ids \['a'\]; labels outside the label set \[\"b='neutral'\"\]"):
        flute_scores([*rows[:1], rows[0], {"id": "b", "label": "neutral"}], [], {}, allow_partial=True)
    with pytest.raises(FluteScoringError, match=r"malformed: labels outside the label set"):
        flute_scores([{"id": "b", "label": "neutral"}], [], {}, allow_partial=True)
