"""The narrative miner end to end: windows, de-duplication, shards, resume, processes, Ray, crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from figlang.builders.corpus import strip_gutenberg
from figlang.lexicon.idioms import LexiconEntry, load_benchmark_lexicon, normalise_idiom
from figlang.builders.narratives import CRASH_ENV, MinerConfig, mine_corpus, mine_texts
from figlang.core.errors import FiglangError

BOOKS = ("potter_the_great_big_treasury_of_beatrix_potter.txt", "london_the_call_of_the_wild.txt", "alcott_eight_cousins.txt")


@pytest.fixture(scope="module")
def lexicon(data_dir):
    return load_benchmark_lexicon(data_dir)


@pytest.fixture(scope="module")
def corpus(data_dir, tmp_path_factory) -> Path:
    """A small real slice: the start of three Gutenberg books (one keeps its header), plus two bad files."""
    root = tmp_path_factory.mktemp("corpus") / "slice"
    root.mkdir()
    for i, name in enumerate(BOOKS):
        raw = (data_dir / "gutenberg" / name).read_bytes()
        text = raw.decode("utf-8").replace("\r\n", "\n")
        if i == 0:
            lines = text.split("\n")
            (root / f"book{i}.txt").write_bytes("\r\n".join(lines[:1000] + lines[-40:]).encode())  # header + footer kept
        else:
            body, _ = strip_gutenberg(text)
            (root / f"book{i}.txt").write_text("\n".join(body.split("\n")[300:1300]), encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    (root / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    return root


def _read(path: Path) -> bytes:
    return path.read_bytes()


STORY = [
    "Cal was depending on me.",
    "I loved my little brother.",
    "He was all I really had, and he needed me.",
    "He deserved the best chance at a normal life that I could give him.",
    "Cal was a smart kid with a solid head on his shoulders and big plans.",
    "One day he would go places, I was sure of it.",
    "We went home.",
]


def test_windows_markup_filters_and_dedup(lexicon):
    texts = [
        ("full", " ".join(STORY)),
        ("copy", " ".join(STORY)),  # the same narrative again: de-duplicated
        ("short", " ".join(STORY[3:])),  # only 2 sentences before the idiom: skipped
        ("heading", " ".join(STORY[:3]) + "\n\nCHAPTER II\n\n" + " ".join(STORY[3:])),  # a heading breaks the window
    ]
    res = mine_texts(texts, lexicon, MinerConfig(similes=False, min_words=10))
    assert [r["source"]["doc"] for r in res.narratives] == ["docs.jsonl:full"]
    rec = res.narratives[0]
    assert rec["narrative"] == " ".join(STORY[1:5]) + " One day he would <b>go places</b>, I was sure of it."
    assert (rec["idiom"], rec["option1"], rec["option2"], rec["correctanswer"]) == ("go places", "", "", "")
    assert rec["meaning"] == lexicon.get("go places").definition
    assert rec["sentence"] == STORY[5] and rec["matched"] == "go places" and rec["lexicon"]["source"]
    reasons = {h["doc"].split(":")[1]: h["narrative_skipped"] for h in res.hits}
    assert reasons == {"full": None, "copy": "duplicate", "short": "too_few_preceding_sentences", "heading": "too_few_preceding_sentences"}
    assert res.stats["skipped:duplicate"] == 1 and res.stats["idiom_hits"] == 4
    # length filters
    res = mine_texts(texts[:1], lexicon, MinerConfig(similes=False, max_words=30))
    assert res.narratives == [] and res.stats["skipped:narrative_too_long"] == 1


def test_simile_narrative_is_implicit(lexicon):
    story = STORY[:4] + ["When he heard the news, Cal turned as white as a sheet."]
    res = mine_texts([("s", " ".join(story))], None, MinerConfig(idioms=False, min_words=10))
    [rec] = res.narratives
    assert rec["narrative"].endswith("When he heard the news, Cal turned <b>like a sheet</b>.")
    assert (rec["simile"], rec["property"]) == ("like a sheet", "white")
    assert rec["simile_info"]["explicit"] == "as white as a sheet" and rec["sentence"] == story[-1]


def test_shards_resume_and_processes(corpus, lexicon, tmp_path, monkeypatch):
    config = MinerConfig()
    serial = mine_corpus([corpus], tmp_path / "serial", lexicon, config)
    assert serial.shards == 5 and serial.ran == 5 and not serial.failures
    t = serial.totals
    assert t["documents"] == 3 and t["sentences"] > 1000 and t["idiom_hits"] >= 3 and t["simile_hits"] >= 3
    assert t["parsed"] + t["tagged"] < t["sentences"] / 3  # most sentences never reach the tagger or parser
    assert t["skipped:empty_file"] == 1 and t["skipped:binary"] == 1
    assert {Path(s.path).name for s in serial.skipped if s.reason in {"empty_file", "binary"}} == {"empty.txt", "binary.txt"}
    assert t["corpus:gutenberg_old"] == 1  # the Potter slice kept its 1990s header
    out = tmp_path / "serial"
    narratives = _read(out / "narratives.jsonl")
    recs = [json.loads(line) for line in narratives.decode().splitlines()]
    docs = [r["source"]["doc"] for r in recs]
    assert docs == sorted(docs, key=lambda d: ["slice/book0.txt", "slice/book1.txt", "slice/book2.txt"].index(d))
    assert not any("Gutenberg" in r["narrative"] for r in recs)
    for r in recs:
        assert r["narrative"].count("<b>") == 1 and (r.get("idiom") or r.get("simile"))

    # resume: nothing to do; output unchanged
    again = mine_corpus([corpus], out, lexicon, config)
    assert again.ran == 0 and again.resumed == 5 and _read(out / "narratives.jsonl") == narratives
    # a lost shard is redone, the rest resumed
    next((out / "shards").glob("*book1.txt.stats.json")).unlink()
    again = mine_corpus([corpus], out, lexicon, config)
    assert again.ran == 1 and again.resumed == 4 and _read(out / "narratives.jsonl") == narratives
    # other settings in the same folder are refused unless --restart
    with pytest.raises(FiglangError, match="other settings"):
        mine_corpus([corpus], out, lexicon, MinerConfig(min_words=5))

    # two worker processes: identical output
    multi = mine_corpus([corpus], tmp_path / "multi", lexicon, config, workers=2)
    assert not multi.failures and _read(tmp_path / "multi" / "narratives.jsonl") == narratives
    assert _read(tmp_path / "multi" / "hits.jsonl") == _read(out / "hits.jsonl")
    assert len({w["pid"] for w in multi.workers}) == 2 and all(w["peak_rss_mb"] > 50 for w in multi.workers)

    # a worker that dies on one shard: reported with its location, the rest still mined; a rerun finishes it
    monkeypatch.setenv(CRASH_ENV, "book1")
    crashed = mine_corpus([corpus], tmp_path / "crash", lexicon, config, workers=2)
    assert [(f.kind, Path(f.shard.location).name) for f in crashed.failures] == [("crash", "book1.txt")]
    assert (tmp_path / "crash" / "shards").glob("*book1.txt.error.json")
    crash_docs = {json.loads(line)["source"]["doc"] for line in (tmp_path / "crash" / "narratives.jsonl").read_text().splitlines()}
    assert crash_docs == set(docs) - {"slice/book1.txt"} and "slice/book2.txt" in crash_docs
    monkeypatch.delenv(CRASH_ENV)
    fixed = mine_corpus([corpus], tmp_path / "crash", lexicon, config)
    assert fixed.ran == 1 and not fixed.failures and _read(tmp_path / "crash" / "narratives.jsonl") == narratives


def test_ray_local_cluster_matches_single_process(corpus, lexicon, tmp_path):
    pytest.importorskip("ray")
    files = sorted(corpus.glob("book*.txt"))[1:]
    config = MinerConfig()
    mine_corpus(files, tmp_path / "one", lexicon, config)
    summary = mine_corpus(files, tmp_path / "ray", lexicon, config, workers=2, use_ray=True)
    assert not summary.failures and summary.ran == 2
    assert _read(tmp_path / "ray" / "narratives.jsonl") == _read(tmp_path / "one" / "narratives.jsonl")
    assert _read(tmp_path / "ray" / "hits.jsonl") == _read(tmp_path / "one" / "hits.jsonl")


def test_jsonl_corpus_is_sharded_by_lines(tmp_path):
    entries = [LexiconEntry("go places", ("succeed",), "t:1", normalise_idiom("go places"))]
    path = tmp_path / "docs.jsonl"
    rows = [{"body": " ".join(STORY).replace("Cal", f"Cal{i}")} for i in range(5)] + [{"other": 1}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    from figlang.builders.corpus import ReadOptions
    from figlang.lexicon.idioms import Lexicon

    lex = Lexicon("t", entries)
    config = MinerConfig(similes=False, min_words=10, read=ReadOptions(text_field="body"))
    summary = mine_corpus([path], tmp_path / "out", lex, config, docs_per_shard=2)
    assert summary.shards == 3 and summary.totals["narratives"] == 5 and summary.totals["documents"] == 5
    assert [(s.reason, s.line) for s in summary.skipped] == [("missing_text_field", 6)]
