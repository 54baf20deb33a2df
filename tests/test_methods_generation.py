"""The `generate` method end to end with the real smollm2-135m backend: sentence cutting, per-item seeds, few-shot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from figlang.data.records import expression_of, strip_markup
from figlang.data.registry import get_task
from figlang.evaluation import evaluate
from figlang.methods.base import get_methods
from figlang.methods.prompted.parsing import first_sentence

MODEL = "smollm2-135m"
SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dev(data_dir: Path) -> list:
    return get_task("idiom-generation").load("dev", data_dir)


def test_first_sentence_cutting() -> None:
    assert first_sentence('\n\nShe said "Hi." Then she left') == ('She said "Hi."', True)
    assert first_sentence(" Mr. Smith went home. Later") == ("Mr. Smith went home.", True)
    assert first_sentence("Wow! Great.") == ("Wow!", True)
    assert first_sentence("no end in sight") == ("no end in sight", False)
    assert first_sentence("  \n ") == ("", False)
    assert first_sentence("It cost 3.5 dollars. Then") == ("It cost 3.5 dollars.", True)


def test_generate_zero_shot_end_to_end(data_dir: Path, tmp_path: Path) -> None:
    result = evaluate(
        "idiom-generation",
        "generate",
        model=MODEL,
        split="dev",
        data_dir=data_dir,
        limit=4,
        cache_dir=tmp_path,
        progress=False,
        method_options={"samples": 2},
    )
    assert result.metrics["generation"]["n_items"] == 4 and "rougeL" in result.metrics["generation"]
    complete = 0
    for r in result.records:
        p = result.predictions[r.id]
        assert p.valid and isinstance(p.prediction, list) and len(p.prediction) == 2
        for text, raw, done in zip(p.prediction, p.meta["raw_samples"], p.meta["complete"]):
            assert text and text == text.strip() and "\n" not in text
            assert (text, done) == first_sentence(raw)
            if done:
                assert SENTENCE_END.search(text)
                complete += 1
    assert complete >= 6  # 20 tokens usually reach a sentence end
    fp = result.results["method"]["fingerprint"]
    assert (fp["top_k"], fp["temperature"], fp["max_new_tokens"], fp["samples"], fp["shots"]) == (5, 0.7, 20, 2, 0)
    assert fp["backend"]["model"] == MODEL


def test_generate_is_deterministic_per_item_seed(dev: list) -> None:
    method = get_methods().create("generate", model=MODEL, samples=2, max_new_tokens=12)
    items = dev[:3]
    first = method.predict(items)
    alone = method.predict([items[2]])  # another batch composition, another order
    reversed_ = method.predict(list(reversed(items[:2])))
    assert alone[0].prediction == first[2].prediction and alone[0].meta["seed"] == first[2].meta["seed"]
    assert [p.prediction for p in reversed(reversed_)] == [p.prediction for p in first[:2]]
    assert first[0].prediction[0] != first[0].prediction[1] or first[1].prediction[0] != first[1].prediction[1]  # samples differ
    other = get_methods().create("generate", model=MODEL, samples=2, max_new_tokens=12, seed=1).predict(items)
    assert [p.meta["raw_samples"] for p in other] != [p.meta["raw_samples"] for p in first]


def test_generate_few_shot_uses_other_train_narratives(data_dir: Path, dev: list) -> None:
    train = get_task("idiom-generation").load("train", data_dir)
    method = get_methods().create("generate", model=MODEL, shots=4, max_new_tokens=12)
    assert method.needs_train and not get_methods().create("generate", model=MODEL).needs_train
    method.fit(train)
    by_id = {r.id: r for r in train}
    items = dev[:2]
    prompt, ids = method.prompt(items[0])
    assert len(ids) == 4 and prompt.count("Q: ") == 5 and prompt.endswith(" A:")
    preds = method.predict(items)
    for item, p in zip(items, preds):
        assert p.valid and p.prediction[0]
        assert len(p.meta["examples"]) == 4
        for ex_id in p.meta["examples"]:
            ex = by_id[ex_id]
            assert strip_markup(ex.source).strip() != strip_markup(item.source).strip()
            assert expression_of(ex) != expression_of(item)
    cfg = method.config()
    assert cfg["templates"]["example"] == "Q: {context} A: {continuation}" and cfg["pool_size"] == len(by_id)
    assert isinstance(cfg["pool_sha256"], str) and len(cfg["pool_sha256"]) == 64  # the examples are in the fingerprint
