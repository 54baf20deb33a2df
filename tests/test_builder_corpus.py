"""Corpus reading for the narrative miner: Gutenberg stripping on the real files, unwrapping, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from figlang.builders.corpus import (
    CorpusFile,
    CorpusReport,
    ReadOptions,
    decode_bytes,
    discover,
    paragraphs_of,
    read_documents,
    strip_gutenberg,
)


def _src(path: Path, kind: str = "text", compressed: bool = False) -> CorpusFile:
    return CorpusFile(str(path), path.name, kind, compressed)


def _read(path: Path, **kw) -> tuple[list, CorpusReport]:
    report = CorpusReport()
    kind = "jsonl" if ".jsonl" in path.name else "text"
    docs = list(read_documents(_src(path, kind, path.name.endswith(".gz")), ReadOptions(**kw), report))
    return docs, report


@pytest.fixture(scope="module")
def gutenberg(data_dir: Path) -> Path:
    return data_dir / "gutenberg"


def test_potter_old_small_print_layout_is_stripped(gutenberg):
    raw = (gutenberg / "potter_the_great_big_treasury_of_beatrix_potter.txt").read_bytes().decode("utf-8").replace("\r\n", "\n")
    body, info = strip_gutenberg(raw)
    assert info.layout == "old"
    assert "SMALL PRINT" not in body and "Project Gutenberg" not in body
    assert "Scanned by Charles Keller" not in body  # the credit paragraph after the small print
    assert body.lstrip().startswith("The Great Big Treasury of Beatrix Potter")
    assert body.rstrip().endswith("There is something to\nplease everybody.")


def test_new_layout_markers_and_wrapped_lines(gutenberg):
    for name, first, last in [
        ("alcott_eight_cousins.txt", "EIGHT COUSINS", "spring revel of the eight cousins."),
        # the START marker's title wraps onto a second line
        ("stevenson_the_strange_case_of_dr_jekyll_and_mr_hyde.txt", "The Strange Case Of Dr. Jekyll And Mr. Hyde", "to an end."),
        # "End of the Project Gutenberg EBook of …, by" wraps onto a second line before the END marker
        ("doyle_the_adventures_of_sherlock_holmes.txt", "cover", "considerable success."),
    ]:
        docs, report = _read(gutenberg / name)
        assert len(docs) == 1 and not report.skipped
        paras = docs[0].paragraphs
        assert paras[0].text == first, name
        assert paras[-1].text.endswith(last), name
        assert not any("Gutenberg" in p.text for p in paras[:3] + paras[-3:]), name
        assert not any("EARLY FILES" in p.text for p in paras), name  # the asterisk notice box is credits


def test_crlf_hard_wrap_paragraphs_and_emphasis():
    text = (
        "First line of a\nwrapped para-\ngraph with _emphasis_ here.\n\n\nCHAPTER II\n\n[Illustration: a cat]\n\nSecond  para\u00a0here.\n"
    )
    report = CorpusReport()
    paras = paragraphs_of(text, report=report)
    assert [p.text for p in paras] == ["First line of a wrapped para-graph with emphasis here.", "CHAPTER II", "Second para here."]
    assert [p.line for p in paras] == [1, 6, 10]
    assert [p.is_break for p in paras] == [False, True, False]
    assert report.counts["illustration_tags"] == 1
    assert paragraphs_of("to-\nmorrow and--\nthen")[0].text == "to-morrow and-- then"


def test_bad_inputs_are_skipped_and_reported(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.txt").write_bytes(b"  \r\n\n")
    (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "latin.txt").write_bytes("Caf\xe9 society was as cold as ice.\n".encode("cp1252"))
    (tmp_path / "huge.txt").write_text("word " * 30_000 + "\n\nA normal paragraph follows.\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("not matched by the patterns\n", encoding="utf-8")
    (tmp_path / "undecodable.txt").write_bytes(b"fine line\nbad \x81\x8d\x8f\x90 bytes\n")
    report = CorpusReport()
    sources = discover([tmp_path], report=report)
    assert {s.display.split("/")[-1] for s in sources} == {
        "empty.txt",
        "blank.txt",
        "binary.txt",
        "latin.txt",
        "huge.txt",
        "undecodable.txt",
    }
    docs = []
    for s in sources:
        docs += list(read_documents(s, ReadOptions(max_paragraph_chars=100_000), report))
    reasons = {(Path(s.path).name, s.reason, s.line) for s in report.skipped}
    assert ("notes.md", "not_matched", None) in reasons
    assert ("empty.txt", "empty_file", None) in reasons
    assert ("blank.txt", "empty_file", None) in reasons
    assert ("binary.txt", "binary", 3) in reasons  # the first NUL byte is on line 3
    assert ("huge.txt", "enormous_paragraph", 1) in reasons
    assert ("undecodable.txt", "undecodable", 2) in reasons  # 0x81 is undefined in UTF-8 and in cp1252
    assert [n.reason for n in report.notes] == ["decoded_as_cp1252"]
    by_name = {Path(d.path).name: d for d in docs}
    assert by_name["latin.txt"].paragraphs[0].text.startswith("Café society")
    assert [p.text for p in by_name["huge.txt"].paragraphs] == ["A normal paragraph follows."]
    # an explicit encoding is strict: the same file is skipped with the line of the first bad byte
    docs, rep = _read(tmp_path / "latin.txt", encoding="utf-8")
    assert docs == [] and rep.skipped[0].reason == "undecodable" and rep.skipped[0].line == 1
    assert "0xe9" in rep.skipped[0].detail


def test_utf16_bom_and_gzip_and_jsonl(tmp_path):
    (tmp_path / "u16.txt").write_bytes("He was as brave as a lion.\n".encode("utf-16"))
    docs, rep = _read(tmp_path / "u16.txt")
    assert docs[0].paragraphs[0].text == "He was as brave as a lion."
    lines = [
        json.dumps({"id": "a", "text": "One.\nTwo wrapped\nline."}),
        "{broken",
        json.dumps({"body": "x"}),
        json.dumps({"text": ""}),
        json.dumps(["list"]),
        json.dumps({"text": "Three."}),
    ]
    (tmp_path / "docs.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode()))
    docs, rep = _read(tmp_path / "docs.jsonl.gz")
    assert [d.doc_id for d in docs] == ["docs.jsonl.gz:1", "docs.jsonl.gz:6"]
    assert docs[0].paragraphs[0].text == "One. Two wrapped line."
    assert [(s.reason, s.line) for s in rep.skipped] == [
        ("malformed_json", 2),
        ("missing_text_field", 3),
        ("empty_text", 4),
        ("malformed_json", 5),
    ]
    (tmp_path / "bad.txt.gz").write_bytes(b"not gzip at all")
    docs, rep = _read(tmp_path / "bad.txt.gz")
    assert docs == [] and rep.skipped[0].reason == "corrupt_gzip"


def test_decode_bytes_prefers_utf8():
    assert decode_bytes("naïve “quotes”".encode()) == ("naïve “quotes”", "utf-8")
    assert decode_bytes(b"\xef\xbb\xbfbom") == ("bom", "utf-8-sig")
