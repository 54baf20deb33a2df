"""The shared helpers that replaced per-module copies: text keys, the JSON-lines parser, the -O parser."""

from __future__ import annotations

import pytest

from figlang.lexicon import matcher as idiom_matcher
from figlang.lexicon.idioms import normalise_idiom as lexicon_key
from figlang.cli.common import parse_key_values
from figlang.data import hygiene, splits
from figlang.core.errors import DataError, FiglangError
from figlang.core.io import iter_jsonl, parse_jsonl, parse_table, read_jsonl
from figlang.data.records import NLIPair, expression_of
from figlang.core.text import (
    collapse_spaces,
    normalise_expression,
    normalise_idiom,
    normalise_sentence,
    normalise_spacing,
    normalise_text,
    normalise_word,
)
from figlang.metrics import impli_analysis


def test_each_caller_uses_the_one_module() -> None:
    # the old per-module names are the shared functions, not copies
    assert splits.normalise_expression is normalise_expression
    assert hygiene.normalise_text is normalise_text
    assert impli_analysis.normalise_spacing is normalise_spacing and not hasattr(impli_analysis, "normalize_expression")
    assert lexicon_key is normalise_idiom
    assert idiom_matcher.normalise_word is normalise_word and not hasattr(idiom_matcher, "norm")


def test_the_variants_differ_only_where_documented() -> None:
    texts = ["Out - of - the - blue’", "  Spill the Beans. ", "lose one’s temper", "a duck 's back", "snake_case"]
    assert [normalise_expression(t) for t in texts] == [
        "out of the blue",
        "spill the beans",
        "lose one s temper",
        "a duck s back",
        "snake case",
    ]
    assert [normalise_spacing(t) for t in texts] == [
        "out - of - the - blue’",
        "spill the beans.",
        "lose one’s temper",
        "a duck 's back",
        "snake_case",
    ]
    assert [normalise_idiom(t) for t in texts] == [
        "out - of - the - blue'",
        "spill the beans",
        "lose one's temper",
        "a duck's back",
        "snake_case",
    ]
    assert [normalise_sentence(t) for t in texts] == [
        "out - of - the - blue",
        "spill the beans",
        "lose one's temper",
        "a duck 's back",
        "snake_case",
    ]


def test_text_and_word_keys() -> None:
    assert normalise_text("He  <b>Spilled the\nBeans</b>. ") == "he spilled the beans."
    assert normalise_word("Can’t") == "can't" and normalise_word("`Tis") == "'tis"
    assert collapse_spaces(" Kick\tthe\n Bucket ") == "Kick the Bucket" and collapse_spaces(None) == ""
    assert expression_of(NLIPair("x", "p", "h", None, expression="  Kick THE  bucket")) == "kick the bucket"


def test_parse_jsonl_reports_each_bad_line_where_it_is() -> None:
    text = '{"a": 1}\n\n[1, 2]\n{"b": \n{"c": 3}\r\n'
    rows = list(parse_jsonl(text))
    assert [(n, obj) for n, obj, _ in rows] == [(1, {"a": 1}), (3, None), (4, None), (5, {"c": 3})]
    assert rows[1][2] == "expected a JSON object, got list"
    assert rows[2][2].startswith("malformed JSON (") and "column" in rows[2][2]


def test_read_jsonl_and_iter_jsonl(tmp_path) -> None:
    path = tmp_path / "x.jsonl"
    assert read_jsonl(path) == []  # a journal not written yet
    path.write_text('{"a": 1}\n{"a": 2}\n', encoding="utf-8")
    assert read_jsonl(path) == [{"a": 1}, {"a": 2}]
    assert [n for n, _ in iter_jsonl(path)] == [1, 2]
    path.write_text('{"a": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"x\.jsonl:2: malformed JSON"):
        read_jsonl(path)


def test_one_key_value_parser() -> None:
    got = parse_key_values(["threads=1", "bf16=True", "temperature=0.5", 'stop=["\\n"]', "name=smollm2-135m", " device = cuda"])
    assert got == {"threads": 1, "bf16": True, "temperature": 0.5, "stop": ["\n"], "name": "smollm2-135m", "device": "cuda"}
    assert parse_key_values(None) == {}
    with pytest.raises(FiglangError, match=r"--backend-option expects KEY=VALUE .*'threads'"):
        parse_key_values(["threads"], "--backend-option")


def test_parse_table_header_rows_and_quotes() -> None:
    header, rows = parse_table('\ufeffid, Idiom \n\n1,"a, b"\n2,c\n', ",")
    assert header == ["id", "Idiom"] and rows == [(3, ["1", "a, b"]), (4, ["2", "c"])]
    header, rows = parse_table('id\tsentence\n1\the said "no\n', "\t", quoting=False)
    assert rows == [(2, ["1", 'he said "no'])]
