"""The minimum-Bayes-risk choice among candidate explanations (``explain`` ``writer_mbr``), with the real ROUGE-L."""

import pytest

from figlang.metrics.generation import RougeL
from figlang.methods.prompted.mbr import mbr_choice, mbr_config


def test_the_candidate_closest_to_the_others_is_chosen():
    candidates = [
        "Dogs bark at night.",
        "Being stuck in traffic for hours is frustrating, so it is not fun.",
        "Being stuck in traffic is frustrating and not fun at all.",
        "Traffic for hours is frustrating, not fun.",
    ]
    best, means = mbr_choice(candidates)
    rouge = RougeL()
    expected = [sum(rouge.score_pairs([c], [o])[0] for o in candidates if o is not c) / 3 for c in candidates]
    assert means == pytest.approx(expected)
    assert best == max(range(4), key=lambda i: expected[i]) and best != 0  # the outlier is never the consensus
    assert means[0] < min(means[1:])


def test_ties_go_to_the_first_and_edge_cases():
    assert mbr_choice(["a b c", "a b c", "x y z"])[0] == 0
    assert mbr_choice(["only one"]) == (0, [0.0])
    with pytest.raises(ValueError):
        mbr_choice([])
    assert mbr_config()["utility"]["library"] == "rouge-score"
