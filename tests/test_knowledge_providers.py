"""Knowledge providers end to end: shipped files, offline WordNet, smollm2-135m prompted per relation, and
the COMET/ParaCOMET path with a tiny randomly initialised BART (plumbing: input format, beams, top 2, parsing).

Every provider runs for real on benchmark items; the generative tests keep generation short (6 new tokens,
one sample besides the greedy answer).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from figlang.data.records import ClozeRecord
from figlang.data.registry import get_task
from figlang.knowledge.providers import (
    CONTEXT_RELATIONS,
    LITERAL_RELATIONS,
    KnowledgeError,
    KnowledgeInput,
    PrecomputedProvider,
    content_words,
    get_provider,
    inference_row,
    layout_literal,
    narrative_head,
    simile_vehicle,
    with_inferences,
)
from figlang.methods.trained import relation_of

MODEL = "smollm2-135m"
CONTEXT_PREFIXES = {
    "xNeed": "The narrator needed ",
    "xIntent": "The narrator intended ",
    "xWant": "The narrator wanted ",
    "xReact": "The narrator reacted ",
    "xEffect": "The effect on narrator is ",
    "xAttr": "The narrator has an attribute of being ",
}
LITERAL_RE = re.compile(r"^(\S+) (has propetry of being|is capable of|desires|can be found in|is used for|is made of) \S")
LITERAL_NAME = {
    "has propetry of being": "HasProperty",
    "is capable of": "CapableOf",
    "desires": "Desires",
    "can be found in": "AtLocation",
    "is used for": "UsedFor",
    "is made of": "MadeUpOf",
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def idioms(data_dir: Path) -> list[ClozeRecord]:
    return get_task("idiom-cloze").load("dev", data_dir)


@pytest.fixture(scope="module")
def similes(data_dir: Path) -> list[ClozeRecord]:
    return get_task("simile-cloze").load("dev", data_dir)


def _by_expression(records: list[ClozeRecord], expression: str) -> ClozeRecord:
    return next(r for r in records if r.expression == expression)


def _check_literal_idiom(infs: tuple[str, ...], expression: str) -> None:
    words = set(content_words(expression))
    assert 0 < len(infs) <= 12 and len(set(infs)) == len(infs)
    order = []
    for inf in infs:
        m = LITERAL_RE.match(inf)
        assert m, inf
        assert m.group(1) in words, inf
        order.append(LITERAL_RELATIONS.index(LITERAL_NAME[m.group(2)]))
        assert relation_of(inf) != "other"
    assert order == sorted(order)  # grouped by relation, in the shipped order


def _check_context(infs: tuple[str, ...]) -> None:
    assert 0 < len(infs) <= 12 and len(set(infs)) == len(infs)
    rels = []
    for inf in infs:
        rel = next(r for r, p in CONTEXT_PREFIXES.items() if inf.startswith(p))
        assert len(inf) > len(CONTEXT_PREFIXES[rel])
        assert relation_of(inf) == rel
        rels.append(CONTEXT_RELATIONS.index(rel))
    assert rels == sorted(rels)
    assert max(rels.count(i) for i in set(rels)) <= 2  # top 2 per relation


# --- shared pieces ---------------------------------------------------------------------------------------


def test_inputs_templates_and_layout() -> None:
    assert content_words("go places") == ["places"]
    assert content_words("save face") == ["save", "face"]
    assert content_words("get a rise out of") == ["rise"]
    assert content_words("beard the lion in his den") == ["beard", "lion", "den"]
    assert simile_vehicle("like an unfinished nightmare") == ("unfinished nightmare", ["unfinished"], None)
    assert simile_vehicle("as cold as ice") == ("ice", [], "cold")
    assert simile_vehicle("like a butterfly in a glass case.")[0] == "butterfly"
    assert narrative_head("He ran. She <b>hit the sack</b>.") == "He ran."
    assert narrative_head('"One sentence only."') == "One sentence only."
    cands = {"save": {r: [f"s{r}1", f"s{r}2"] for r in LITERAL_RELATIONS}, "face": {"HasProperty": ["round"], "MadeUpOf": ["skin", "nose"]}}
    out = layout_literal(cands, ["save", "face"])
    assert len(out) == 12
    assert out[:2] == ["save has propetry of being sHasProperty1", "face has propetry of being round"]
    assert "face is made of skin" in out and "save is capable of sCapableOf2" in out  # face has no CapableOf: save fills
    # a new narrative: the expression comes from the <b>…</b> markup, the type from its first word
    inp = KnowledgeInput.from_record(ClozeRecord("x", "It was hot. He was <b>as cool as a cucumber</b>.", ("a", "b"), 0))
    assert (inp.expression, inp.expression_type) == ("as cool as a cucumber", "simile")
    assert inp.key("context") == {"kind": "context", "head": "It was hot."}


# --- precomputed -------------------------------------------------------------------------------------------


def test_precomputed_is_the_shipped_files(data_dir: Path, idioms, similes, tmp_path: Path) -> None:
    prov = get_provider("precomputed", data_dir=data_dir)
    for records in (idioms[:5], similes[:5]):
        for kind in ("context", "literal"):
            got = prov.infer(records, kind)
            assert got == [r.inferences[kind] for r in records]
            # without the loader's attachment: found by (narrative, expression) in the shipped files
            bare = [replace(r, inferences={}) for r in records]
            assert PrecomputedProvider(data_dir).infer(bare, kind) == got
    new = ClozeRecord("new", "A story nobody wrote. He <b>spilled the beans</b>.", ("a", "b"), 0, "spill the beans", "idiom")
    with pytest.raises(KnowledgeError, match="only knows the benchmark"):
        prov.infer([new], "context")
    # the shipped-format writer reproduces the shipped rows
    shipped = [json.loads(line) for line in (data_dir / "fig_narrative/data/simile_inferences_literal/dev.jsonl").open()][:5]
    assert [inference_row(r, r.inferences["literal"]) for r in similes[:5]] == shipped


# --- WordNet ----------------------------------------------------------------------------------------------


def test_wordnet_literal_knowledge(idioms, similes, tmp_path: Path) -> None:
    prov = get_provider("wordnet", cache=tmp_path / "cache")
    items = [_by_expression(idioms, e) for e in ("go places", "shoot from the hip", "throw in the towel")]
    got = prov.infer(items, "literal")
    for r, infs in zip(items, got):
        _check_literal_idiom(infs, r.expression)
    towel = got[2]
    assert len(towel) >= 6 and any(i.startswith("towel has propetry of being") for i in towel)
    assert any(i.startswith("throw is capable of") for i in towel)
    assert any(i.startswith("hip is made of") for i in got[1]) and any(i.startswith("hip can be found in") for i in got[1])
    sims = [similes[0], _by_expression(similes, "like a distant cement mixer")]
    for infs in prov.infer(sims, "literal"):
        assert 0 < len(infs) <= 12 and len(set(infs)) == len(infs)
        assert all(i.startswith("The associated property is ") and relation_of(i) == "HasProperty" for i in infs)
    assert "The associated property is like a machine" in prov.infer([sims[1]], "literal")[0]
    with pytest.raises(KnowledgeError, match="produces literal knowledge"):
        prov.infer(items, "context")
    # cached: a second provider on the same cache computes nothing and answers the same
    again = get_provider("wordnet", cache=tmp_path / "cache")
    assert again.infer(items, "literal") == got and again.computed == 0 and again.cache_hits == 3


def test_with_inferences_feeds_the_knowledge_models(idioms) -> None:
    items = idioms[:4]
    out = with_inferences(items, "wordnet", "literal", cache=False)
    for before, after in zip(items, out):
        assert after.inferences["context"] == before.inferences["context"]  # the other kind is kept
        assert after.inferences["literal"] != before.inferences["literal"]
        _check_literal_idiom(after.inferences["literal"], before.expression)
        assert (after.id, after.options, after.label) == (before.id, before.options, before.label)
    # the knowledge-enhanced scorer reads record.inferences[kind] unchanged
    from figlang.methods.trained.multiple_choice import ChoiceScorerModel

    scorer = ChoiceScorerModel.__new__(ChoiceScorerModel)
    scorer.knowledge, scorer.max_inferences, scorer.method = "literal", 12, "mc-literal"
    assert scorer.inferences_of(out[0]) == list(out[0].inferences["literal"])


# --- generative (smollm2-135m) -----------------------------------------------------------------------------


@pytest.mark.slow
def test_generative_provider_with_smollm2(idioms, similes, tmp_path: Path) -> None:
    options = dict(samples=1, max_new_tokens=6, simile_samples=3, cache=tmp_path / "cache")
    prov = get_provider("generative", model=MODEL, **options)
    idiom = _by_expression(idioms, "save face")
    simile = similes[0]
    context = prov.infer([idiom], "context")
    _check_context(context[0])
    assert len(context[0]) >= 6  # greedy + one sample: at least one answer per relation
    lit_idiom, lit_simile = prov.infer([idiom, simile], "literal")
    _check_literal_idiom(lit_idiom, "save face")
    assert {LITERAL_RE.match(i).group(1) for i in lit_idiom} == {"save", "face"}
    assert 0 < len(lit_simile) <= 4 and all(i.startswith("The associated property is ") for i in lit_simile)
    fp = prov.fingerprint()
    assert fp["backend"]["model"] == MODEL and fp["chat"] is True and (fp["samples"], fp["max_new_tokens"]) == (1, 6)
    # per-item seeds and the cache: the same answers again, nothing recomputed
    again = get_provider("generative", model=MODEL, **options)
    assert again.infer([simile, idiom], "literal") == [lit_simile, lit_idiom] and again.computed == 0
    assert again.infer([idiom], "context") == context and again.computed == 0


# --- COMET / ParaCOMET (tiny random BART) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bart(minilm_path, tmp_path_factory):
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    root = tmp_path_factory.mktemp("tiny-bart") / "comet"
    tok = AutoTokenizer.from_pretrained(minilm_path)
    tok.add_special_tokens({"additional_special_tokens": ["[GEN]"]})
    torch.manual_seed(0)
    config = BartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=256,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        decoder_start_token_id=tok.sep_token_id,
        forced_bos_token_id=None,
        forced_eos_token_id=None,
    )
    model = BartForConditionalGeneration(config)
    model.save_pretrained(root)
    tok.save_pretrained(root)
    return root, tok, model.eval()


def test_comet_provider_plumbing_with_a_tiny_bart(tiny_bart, idioms, similes, tmp_path: Path) -> None:
    root, tok, model = tiny_bart
    prov = get_provider("comet", model=str(root), num_beams=4, max_new_tokens=5, cache=tmp_path / "cache")
    idiom = _by_expression(idioms, "save face")
    # the COMET-ATOMIC-2020 input format, and [GEN] kept whole at the end however long the head
    queries = prov.queries(KnowledgeInput.from_record(idiom), "context")
    head = narrative_head(idiom.narrative)
    assert [q[1] for q in queries] == [f"{head} {rel} [GEN]" for rel in CONTEXT_RELATIONS] and {q[2] for q in queries} == {2}
    lit = prov.queries(KnowledgeInput.from_record(idiom), "literal")
    assert [q[1] for q in lit[:2]] == ["save HasProperty [GEN]", "save CapableOf [GEN]"] and len(lit) == 12
    assert prov.queries(KnowledgeInput.from_record(similes[0]), "literal") == [
        ("HasProperty", "unfinished nightmare HasProperty [GEN]", 12)
    ]
    long = queries[0][1]
    prov.max_source_tokens = 16
    ids = prov.encode([long])["input_ids"][0].tolist()
    assert len(ids) == 16 and tok.convert_ids_to_tokens(ids)[-2:] == ["[GEN]", "[SEP]"] and ids[0] == tok.cls_token_id
    # beams: the provider's decoded beams are Hugging Face's beam search, in order
    sources = [q[1] for q in lit[:3]]
    ours = prov.beams(sources, 4)
    batch = {k: v for k, v in tok(sources, return_tensors="pt", padding=True).items() if k != "token_type_ids"}
    with torch.inference_mode():
        ref = model.generate(**batch, num_beams=4, num_return_sequences=4, do_sample=False, early_stopping=True, max_new_tokens=5)
    texts = [" ".join(t.split()) for t in tok.batch_decode(ref, skip_special_tokens=True, clean_up_tokenization_spaces=True)]
    assert ours == [texts[i * 4 : (i + 1) * 4] for i in range(3)]
    truncated = prov.beams([long], 2)  # left truncation keeps "{relation} [GEN]": runs without error
    assert len(truncated) == 1 and len(truncated[0]) == 2
    prov.max_source_tokens = 256
    # parsed inferences: templates, top 2 distinct per relation, "none" dropped
    context = prov.infer([idiom], "context")[0]
    _check_context(context)
    literal = prov.infer([idiom], "literal")[0]
    _check_literal_idiom(literal, "save face")
    sim = prov.infer([similes[0]], "literal")[0]
    assert len(sim) <= 12 and all(i.startswith("The associated property is ") for i in sim)
    from figlang.knowledge.generative import _distinct

    assert _distinct(["none", "a", "A", "b", "c"], 2) == ["a", "b"]
    again = get_provider("comet", model=str(root), num_beams=4, max_new_tokens=5, cache=tmp_path / "cache")
    assert again.infer([idiom], "context")[0] == context and again.computed == 0


# --- CLI ----------------------------------------------------------------------------------------------------


def test_cli_infer_and_data_dir(data_dir: Path, tmp_path: Path) -> None:
    from figlang.cli.knowledge_cmds import app

    runner = CliRunner()
    out = tmp_path / "pc.jsonl"
    res = runner.invoke(
        app,
        [
            "infer",
            "--task",
            "idiom-cloze",
            "--split",
            "dev",
            "--provider",
            "precomputed",
            "--kind",
            "context",
            "--out",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    shipped = [json.loads(line) for line in (data_dir / "fig_narrative/data/idiom_inferences_context/dev.jsonl").open()]
    assert [json.loads(line) for line in out.open()] == shipped  # the shipped file, line for line

    wn = tmp_path / "wn.jsonl"
    res = runner.invoke(
        app,
        [
            "infer",
            "-t",
            "simile-cloze",
            "-s",
            "dev",
            "-p",
            "wordnet",
            "-o",
            str(wn),
            "--limit",
            "3",
            "--data-dir",
            str(data_dir),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in wn.open()]
    ship = [json.loads(line) for line in (data_dir / "fig_narrative/data/simile_inferences_literal/dev.jsonl").open()][:3]
    assert len(rows) == 3 and [list(r) for r in rows] == [list(s) for s in ship]
    assert all(
        {k: v for k, v in r.items() if k != "inferences"} == {k: v for k, v in s.items() if k != "inferences"} for r, s in zip(rows, ship)
    )

    bad = runner.invoke(app, ["infer", "-t", "flute", "-p", "wordnet", "-o", str(tmp_path / "x.jsonl"), "--data-dir", str(data_dir)])
    assert bad.exit_code != 0

    # a data directory whose literal idiom dev inferences come from WordNet: the loader reads it as usual
    dd = tmp_path / "data"
    res = runner.invoke(
        app,
        [
            "data-dir",
            "-o",
            str(dd),
            "-p",
            "wordnet",
            "--type",
            "idiom",
            "-s",
            "dev",
            "--data-dir",
            str(data_dir),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert res.exit_code == 0, res.output
    orig = get_task("idiom-cloze").load("dev", data_dir)
    new = get_task("idiom-cloze").load("dev", dd)
    assert [r.narrative for r in new] == [r.narrative for r in orig]
    assert all(n.inferences["context"] == o.inferences["context"] for n, o in zip(new, orig))
    assert new[0].inferences["literal"] != orig[0].inferences["literal"]
    _check_literal_idiom(new[0].inferences["literal"], new[0].expression)
