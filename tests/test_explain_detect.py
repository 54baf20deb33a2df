"""A pair explained without -f/--idiom gets its figure type from the shipped figure-type model and, for an idiom,
the idiom and its meaning from the interpret lexicon; the explain method then shows that meaning to the writer.
Real models: the shipped heads on the catalog MiniLM, the interpret lexicon built from the shared data."""

from __future__ import annotations

import pytest

from figlang.explain import _detected, _pair, detect_figure
from figlang.methods.trained.figure_type import FIGURE_TYPES, FigureTypeModel

TIRED = ("He was very tired after the long walk.", "He was dead on his feet after the long walk.")
# "ready to drop" is in none of the lexicon's resources (since figlang's own list, "dead on one's feet" is)
READY = ("He was very tired after the long walk.", "He was ready to drop after the long walk.")


def test_the_idiom_pair_is_typed_and_its_idiom_found_with_its_meaning(data_dir):
    pair = ("He was ready to give up on the project.", "He was ready to throw in the towel on the project.")
    found = detect_figure(*pair, data_dir=data_dir)
    assert found["figure_type"] == "idiom"
    assert found["idiom"] == "throw in the towel" and found["meaning"] and found["meaning_source"].startswith("lexicon")
    assert sum(found["probabilities"].values()) == pytest.approx(1.0)

    given = {"premise": pair[0], "hypothesis": pair[1]}
    record, why = _detected(given, _pair(*pair, None, None), data_dir, "pair 1")
    assert record.figure_type == "idiom" and record.expression == found["idiom"] and record.meta["meaning"] == found["meaning"]
    assert why == found
    typed = _pair(*pair, "idiom", None)  # a type given by the user is kept: nothing is detected
    assert _detected(given, typed, data_dir, "pair 1") == (typed, None)


def test_an_idiom_outside_the_lexicon_is_the_span_that_differs(data_dir):
    found = detect_figure(*READY, data_dir=data_dir)  # "ready to drop" is in none of the lexicon's resources
    assert found["figure_type"] == "idiom" and found["idiom"] == "ready to drop" and found["meaning"] is None
    assert found["literal_span"] == "very tired"  # what the premise says in the idiom's place


def test_a_misspelt_word_beside_the_idiom_does_not_hide_it(data_dir):
    """FLUTE val-3 (the suite's explained idiom pair): "predicta" and "esespecially" are typos of the premise's words,
    not part of what the hypothesis says differently, so the lexicon's idiom covers that span and brings its meaning."""
    from figlang.data.impli import figurative_span

    premise = "When the weatherman predicts flurries, you'd better not prepare for difficult times especially in December."
    hypothesis = "When the weatherman predicta flurries, you'd better batten down the hatch, esespecially in December."
    found = detect_figure(premise, hypothesis, data_dir=data_dir)
    assert found["idiom"] == "batten down the hatches" and found["span"] == "batten down the hatch"
    assert found["meaning"] and found["meaning_source"].startswith("lexicon")
    assert figurative_span(premise, hypothesis)[1].startswith("predicta")  # IMPLI's own rule stays exact


def test_an_unknown_idiom_means_what_the_premise_says_only_when_the_pair_entails(data_dir):
    """The writer is told the idiom means the premise's span only under an entailment label: under contradiction the
    premise says something else, and a known meaning (lexicon or detection) always wins."""
    from figlang.methods.base import get_methods

    record, _ = _detected({"premise": READY[0], "hypothesis": READY[1]}, _pair(*READY, None, None), data_dir, "pair 1")
    assert record.meta == {"literal_span": "very tired"}
    method = get_methods().create("explain", model="smollm2-135m", meanings="none")
    assert method.meaning(record, "entailment") is None  # meanings=none: no meaning at all
    method = get_methods().create("explain", model="smollm2-135m")
    method.lexicon = {}
    assert method.meaning(record, "entailment") == "very tired"
    assert method.meaning(record, "contradiction") is None and method.meaning(record) is None
    assert 'The idiom "ready to drop" means: very tired' in method._instruction(record, "entailment")
    assert "means:" not in method._instruction(record, "contradiction")
    known = _pair(*READY, "idiom", None)
    known.meta["meaning"] = "exhausted"
    known.meta["literal_span"] = "very tired"
    assert method.meaning(known, "entailment") == "exhausted"


def test_the_shipped_figure_type_model_reproduces_its_published_val_answers(data_dir):
    import json
    from pathlib import Path

    from figlang.data.registry import get_task

    model = FigureTypeModel()
    published = Path(__file__).resolve().parents[1] / "docs/results/cpu/figure-type-minilm/predictions.jsonl"
    rows = [json.loads(line) for line in published.read_text(encoding="utf-8").splitlines()][:24]
    val = {r.id: r for r in get_task("flute").load("val", data_dir)}
    records = [val[row["id"]] for row in rows]
    sentence = model.probabilities([r.hypothesis for r in records])
    pair = model.probabilities([r.hypothesis for r in records], [r.premise for r in records])
    for row, s, p in zip(rows, sentence, pair):
        assert max(FIGURE_TYPES, key=s.get) == row["sentence"] and max(FIGURE_TYPES, key=p.get) == row["pair"]
        assert s == pytest.approx(row["sentence_probabilities"], abs=1e-5)
    assert model.predict("She was as quiet as a mouse.")[0] == "simile"


@pytest.mark.slow
def test_the_issue_pair_is_explained_as_entailment_with_no_options(data_dir):
    """Issue #36's pair, given as a user gives it (no -f, no --idiom, no label options): the figure type and the idiom
    are detected, the shipped FLUTE label model answers entailment, and the writer is told what the idiom means here.
    The writer here is smollm2-135m (what the suite installs); `make run` shows the same pair's explanation by the
    default qwen2.5-1.5b."""
    from figlang.explain import LABEL_MODEL, explain_pairs

    [e] = explain_pairs([{"premise": TIRED[0], "hypothesis": TIRED[1]}], model="smollm2-135m", data_dir=data_dir, use_cache=False)
    assert e.label == "entailment" and e.valid and e.explanation
    assert e.produced_by["label_method"] == "trained" and e.produced_by["label_model"] == LABEL_MODEL
    assert e.produced_by["detected"]["idiom"] == "dead on one's feet" and e.figure_type == "idiom"  # figlang's own list
    assert e.produced_by["idiom_meaning"] == "extremely tired but still working"  # the writer was told its meaning
