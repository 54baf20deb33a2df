"""Idiom lexicons: the benchmark's own idioms, PIE-English, user files with malformed and duplicate lines."""

from __future__ import annotations

import json

import pytest

from figlang.lexicon.idioms import load_benchmark_lexicon, load_lexicon, load_lexicon_file, load_pie_lexicon
from figlang.core.errors import DataError


def test_benchmark_lexicon(data_dir):
    lex = load_benchmark_lexicon(data_dir)
    # 500 idiom strings in this copy (554 in the original, 54 held out); "to the letter." == "to the letter"
    assert len(lex) == 499
    assert not lex.report.warnings  # repeats across records are the data's shape, merged quietly
    entry = lex.get("Spill the beans") or lex.get("go places")
    assert entry is not None and entry.definition
    cards = lex.get("put your cards on the table")
    assert len(cards.definitions) >= 2  # the provenance notes a second, unrelated definition
    assert cards.source.endswith(tuple(f"{s}.jsonl:{n}" for s in ("train", "dev", "test") for n in range(1, 4000)))


def test_pie_lexicon_heads_and_duplicates(data_dir):
    lex = load_pie_lexicon(data_dir)
    assert 1100 < len(lex) < 1197
    assert lex.get("cold feet").definition == "become scared"
    assert lex.get("like water off a duck's back") is not None  # PIE's "duck 's" detokenised
    fiddle = lex.get("fit as a fiddle")
    assert fiddle.category == "Simile" and set(fiddle.definitions) == {"in perfect health", "in very good health"}
    dup = [w for w in lex.report.warnings if "fit as a fiddle" in w.message]
    assert dup and dup[0].line is not None and "duplicate" in dup[0].message and fiddle.source in dup[0].message
    long = [w for w in lex.report.warnings if "more than 12 words" in w.message]
    assert long and long[0].path.endswith("idiomscorpus.csv")


def test_user_tsv_validation(tmp_path):
    path = tmp_path / "my.tsv"
    path.write_text(
        "idiom\tdefinition\n"
        "spill the beans\treveal a secret\n"
        "no tab on this line\n"
        "\tempty idiom\n"
        "kick the bucket\t\n"
        "Spill the Beans.\tto reveal a secret\n"
        "123 456\tdigits only\n"
        "break a leg\tgood luck\textra\n"
        "# a comment\n"
        "lose one's temper\tget angry\n",
        encoding="utf-8",
    )
    lex = load_lexicon_file(path)
    assert [e.expression for e in lex] == ["spill the beans", "lose one's temper"]
    assert lex.get("spill the beans").definitions == ("reveal a secret", "to reveal a secret")
    problems = {(w.line, w.message.split(" (")[0].split(":")[0]) for w in lex.report.warnings}
    lines = sorted(line for line, _ in problems)
    assert lines == [3, 4, 5, 6, 7, 8]
    assert lex.report.skipped == 5  # the duplicate (line 6) is merged, not skipped
    dup = next(w for w in lex.report.warnings if w.line == 6)
    assert "duplicate idiom" in dup.message and f"{path}:2" in dup.message and str(path) == dup.path
    with pytest.raises(DataError) as exc:
        load_lexicon_file(path, strict=True)
    assert exc.value.line == 3


def test_user_jsonl_lexicon_and_spec(tmp_path, data_dir):
    path = tmp_path / "lex.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"idiom": "under the weather", "definition": "ill"}),
                "{not json",
                json.dumps({"expression": "over the moon", "meaning": "delighted"}),
                json.dumps({"idiom": 3}),
            ]
        ),
        encoding="utf-8",
    )
    lex = load_lexicon(str(path), data_dir)
    assert [e.key for e in lex] == ["under the weather", "over the moon"]
    assert [w.line for w in lex.report.warnings] == [2, 4]
    assert len(load_lexicon("benchmark", data_dir)) == 499
    empty = tmp_path / "empty.tsv"
    empty.write_text("only junk\n", encoding="utf-8")
    with pytest.raises(DataError):
        load_lexicon_file(empty)
