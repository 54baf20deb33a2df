"""Meaning-aware and knowledge-enhanced LM scoring (issue 22) with the real smollm2-135m on real narratives."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.records import ClozeRecord
from figlang.data.registry import get_task
from figlang.knowledge.meanings import MeaningFinder
from figlang.methods.base import get_methods
from figlang.methods.prompted.cloze import LMScore
from figlang.methods.prompted.meaning import KnowledgeLMScore, MeaningFewShot, MeaningLMScore, MeaningQA, aggregate, meaning_line

MODEL = "smollm2-135m"
OPTS = {"threads": 1, "dtype": "float32"}

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def idioms(data_dir: Path) -> list[ClozeRecord]:
    return get_task("idiom-cloze").load("dev", data_dir)[:3]  # type: ignore[return-value]


@pytest.fixture(scope="module")
def similes(data_dir: Path) -> list[ClozeRecord]:
    return get_task("simile-cloze").load("dev", data_dir)[:2]  # type: ignore[return-value]


def test_registered_and_options_checked() -> None:
    names = {m.name: m for m in get_methods()}
    for name in ("lm-score-meaning", "qa-meaning", "few-shot-meaning", "lm-score-knowledge"):
        assert names[name].shapes == ("cloze",) and names[name].needs_model
    with pytest.raises(FiglangError, match="position"):
        MeaningLMScore(MODEL, position="middle")
    with pytest.raises(FiglangError, match="aggregate"):
        KnowledgeLMScore(MODEL, aggregate="median")
    with pytest.raises(FiglangError, match="meaning source"):
        MeaningLMScore(MODEL, sources="record,oracle")
    with pytest.raises(FiglangError, match="meaning_model"):
        MeaningLMScore(MODEL, sources="record,lm")


def test_meaning_line_templates(idioms, similes) -> None:
    r = idioms[0]
    assert meaning_line(r, r.meaning) == f"'{r.expression}' means {r.meaning[0].lower()}{r.meaning[1:].rstrip('.')}."
    s = similes[0]
    assert meaning_line(s, s.meaning) == f"'{s.expression}' here means {s.meaning}."


def test_meaning_enters_the_scored_text_and_changes_the_scores(idioms, similes, data_dir) -> None:
    before = MeaningLMScore(MODEL, norm="sum", **OPTS)
    after = MeaningLMScore(MODEL, norm="sum", position="after", **OPTS)
    plain = LMScore(MODEL, norm="sum", **OPTS)
    items = [*idioms, *similes]
    before.resolve_meanings(items)
    after.resolve_meanings(items)
    for r in items:
        line = meaning_line(r, r.meaning)
        assert all(q.context == f"{line} {r.context.strip()}" for q in before.requests_for(r))
        assert all(q.context == f"{r.context.strip()} {line}" for q in after.requests_for(r))
    got, base = before.predict(items), plain.predict(items)
    for p, b, r in zip(got, base, items):
        assert p.meta["meaning_source"] == "record" and p.meta["meaning"] == " ".join(r.meaning.split())
        assert all(math.isfinite(s) for s in p.scores)
        assert p.scores != b.scores  # the meaning line is really in front of the narrative
    assert before.config()["meaning_position"] == "before" and before.fingerprint() != after.fingerprint()


def test_missing_meanings_come_from_the_providers(idioms, similes, data_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FIGLANG_DATA_DIR", str(tmp_path))  # elsewhere: the lexicons come from the run's data folder
    bare = [replace(r, meaning=None) for r in idioms]
    m = MeaningLMScore(MODEL, norm="sum", **OPTS)
    m.bind(get_task("idiom-cloze"), RunContext.create(data_dir))
    preds = m.predict(bare)
    for p, r in zip(preds, bare):
        assert p.meta["meaning_source"] == "lexicon:benchmark"  # the benchmark's idiom glosses, shipped as a lexicon
        assert isinstance(p.meta["meaning"], str) and p.meta["meaning"]
        assert m.requests_for(r)[0].context.startswith(meaning_line(r, p.meta["meaning"]) + " ")
    # WordNet knows "kick the bucket" as one lemma; the simile pattern reads "as busy as a bee"
    finder = MeaningFinder(sources=("record", "wordnet"), lexicons=())
    kick = ClozeRecord(
        "u1", "Old Tom finally <b>kicked the bucket</b>.", ("a", "b"), None, expression="kick the bucket", expression_type="idiom"
    )
    found = finder.find(kick)
    assert found.source == "wordnet" and "life" in (found.text or "")
    bee = ClozeRecord("u2", "She was <b>as busy as a bee</b>.", ("a", "b"), None)
    assert MeaningFinder().find(bee).text == "busy" and MeaningFinder().find(bee).source == "pattern"
    # nothing knows a made-up idiom: said in the prediction, scored without a meaning line; or refused
    odd = replace(idioms[0], id="u3", expression="juggle the quiet teapots", meaning=None)
    p = m.predict([odd])[0]
    assert p.meta["meaning"] is None and p.meta["meaning_source"] is None
    assert "no meaning found for 'juggle the quiet teapots'" in p.meta["meaning_note"]
    assert m.requests_for(odd)[0].context == odd.context.strip()
    strict = MeaningLMScore(MODEL, norm="sum", missing="error", **OPTS)
    with pytest.raises(FiglangError, match="no meaning and no meaning source knew one"):
        strict.predict([odd])


def test_prompting_methods_show_the_meaning(idioms, data_dir) -> None:
    qa = MeaningQA(MODEL, **OPTS)
    qa.resolve_meanings(idioms)
    r = idioms[0]
    prompt, _ = qa._prompt(qa.context_of(r), r.options)
    assert meaning_line(r, r.meaning) in prompt and r.context.strip()[:40] in prompt
    p = qa.predict(idioms[:1])[0]
    assert p.meta["meaning_source"] == "record" and len(p.scores) == 2
    few = MeaningFewShot(MODEL, max_shots=2, **OPTS)
    few.fit(get_task("idiom-cloze").load("train", data_dir))
    shown, prefix = few.examples_for(r)
    assert shown and all(meaning_line(ex, ex.meaning) in prefix for ex, _ in shown if ex.meaning)


def test_knowledge_scorer_pools_twelve_inferences_independent_of_batch_size(idioms) -> None:
    items = idioms[:2]
    assert all(len(r.inferences["context"]) == 12 for r in items)
    small = KnowledgeLMScore(MODEL, knowledge="context", batch_size=1, **OPTS).predict(items)
    large = KnowledgeLMScore(MODEL, knowledge="context", batch_size=32, **OPTS).predict(items)
    for a, b in zip(small, large):
        assert a.meta["inferences"] == 12 and len(a.meta["per_inference"]) == 12
        assert a.scores == pytest.approx(b.scores, abs=1e-3)
        assert a.scores == pytest.approx([aggregate([row[i] for row in a.meta["per_inference"]], "lse") for i in range(2)], abs=1e-9)
    nf = KnowledgeLMScore(MODEL, knowledge="context", order="narrative-first", **OPTS)
    r = items[0]
    ctx = nf.context(r, r.inferences["context"][0])
    assert ctx.startswith(r.context.strip()) and ctx.endswith(r.inferences["context"][0].rstrip(".") + ".")
    assert KnowledgeLMScore(MODEL, **OPTS).context(r, r.inferences["context"][0]).endswith(r.context.strip())


def test_knowledge_scorer_refuses_items_without_inferences(idioms) -> None:
    bare = [replace(r, inferences={}) for r in idioms[:1]]
    with pytest.raises(FiglangError, match="no literal inferences.*provider=wordnet"):
        KnowledgeLMScore(MODEL, knowledge="literal", **OPTS).predict(bare)
