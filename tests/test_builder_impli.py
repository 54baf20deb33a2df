"""IMPLI pair generator: matching, inflection agreement, slots, capitalisation, filters, I/O, CLI (real spaCy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.builders.impli import (
    Generator,
    IdiomSentence,
    ImpliLexicon,
    check_pair,
    generated_files,
    load_generated,
    load_nlp,
    read_lexicon,
    read_sentences,
    write_outputs,
)
from figlang.cli.build_impli import app
from figlang.core.errors import DataError, LoadOptions, LoadReport
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT

LEXICON = [
    ("kick the bucket", "die"),
    ("spill the beans", "reveal the secret"),
    ("lose one's temper", "become angry"),
    ("lose one's temper", "lose one's composure"),
    ("lose one's temper", "work oneself into a rage"),
    ("blow a fuse", "lose one's temper"),
    ("red herring", "misleading clue"),
    ("fly in the face of", "contradict"),
    ("give someone the cold shoulder", "ignore someone"),
    ("behind the scenes", "secretly"),
    ("out of the blue", "unexpectedly"),
    ("be on cloud nine", "be very happy"),
    ("pull one's weight", "do one's share"),
    ("take the plunge", "commit oneself"),
]


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


@pytest.fixture(scope="module")
def gen(nlp) -> Generator:
    lex = ImpliLexicon()
    for idiom, definition in LEXICON:
        lex.add(idiom, definition)
    return Generator(lex, nlp)


def hyps(gen: Generator, sentence: str, definition: str | None = None) -> list[str]:
    """Every hypothesis the generator makes for a sentence (optionally only from one definition)."""
    doc = gen.doc(sentence)
    out = []
    for m in gen.matcher.find(doc):
        for d in gen.lexicon.get(m.idiom).definitions:
            if definition is None or d.text == definition:
                r = gen.realise(d.text, m, doc)
                out.append(sentence[: m.start_char] + r.text + sentence[m.end_char :])
    return out


# --------------------------------------------------------------------------------------------
# Inflection agreement
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "definition", "expected"),
    [
        ("He kicked the bucket last year.", "die", "He died last year."),  # past
        ("He has kicked the bucket.", "die", "He has died."),  # participle
        ("That flies in the face of reason.", "contradict", "That contradicts reason."),  # 3rd person singular
        ("He pulls his weight.", "do one's share", "He does his share."),  # 3sg + slot
        ("She is spilling the beans.", "reveal the secret", "She is revealing the secret."),  # progressive
        ("We are pulling our weight.", "do one's share", "We are doing our share."),
        ("These are red herrings.", "misleading clue", "These are misleading clues."),  # plural noun
        ("They were on cloud nine.", "be very happy", "They were very happy."),  # be, plural past
        ("I am on cloud nine.", "be very happy", "I am very happy."),  # be, 1st person
        ("The kids pull their weight.", "do one's share", "The kids do their share."),  # plural present: base form
    ],
)
def test_inflection_agreement(gen: Generator, sentence: str, definition: str, expected: str) -> None:
    assert hyps(gen, sentence, definition) == [expected]


def test_past_tense_of_be_follows_the_subject(gen: Generator) -> None:
    assert hyps(gen, "She was on cloud nine.", "be very happy") == ["She was very happy."]


# --------------------------------------------------------------------------------------------
# Slots
# --------------------------------------------------------------------------------------------


def test_possessive_slot_is_filled_from_the_occurrence(gen: Generator) -> None:
    assert hyps(gen, "She lost her temper.", "lose one's composure") == ["She lost her composure."]
    assert hyps(gen, "The manager lost his temper again.", "lose one's composure") == ["The manager lost his composure again."]
    # a possessive noun phrase fills the slot too
    assert hyps(gen, "Then John lost John's temper.", "lose one's composure") == ["Then John lost John's composure."]


def test_reflexive_slot_derives_from_the_possessive(gen: Generator) -> None:
    assert hyps(gen, "She lost her temper.", "work oneself into a rage") == ["She worked herself into a rage."]


def test_slot_filled_from_the_subject_when_the_idiom_has_none(gen: Generator) -> None:
    assert hyps(gen, "He blew a fuse.", "lose one's temper") == ["He lost his temper."]
    assert hyps(gen, "They took the plunge.", "commit oneself") == ["They committed themselves."]


def test_noun_phrase_slot(gen: Generator) -> None:
    assert hyps(gen, "They gave him the cold shoulder.") == ["They ignored him."]
    assert hyps(gen, "The club gave the new coach the cold shoulder.") == ["The club ignored the new coach."]


# --------------------------------------------------------------------------------------------
# Capitalisation and span detection
# --------------------------------------------------------------------------------------------


def test_sentence_initial_capital_is_kept(gen: Generator, nlp) -> None:
    assert hyps(gen, "Out of the blue, it rained.") == ["Unexpectedly, it rained."]
    assert hyps(gen, "It came out of the blue.") == ["It came unexpectedly."]
    assert hyps(gen, "He smiled. Out of the blue, it rained.") == ["He smiled. Unexpectedly, it rained."]
    lower = Generator(gen.lexicon, nlp, capitalise=False)
    assert hyps(lower, "Out of the blue, it rained.") == ["unexpectedly, it rained."]


def test_span_detection_tolerates_inflection_determiners_and_hyphens(gen: Generator) -> None:
    doc = gen.doc("Everyone knew he had spilled the beans behind-the-scenes.")
    found = {m.idiom: m.text for m in gen.matcher.find(doc)}
    assert found == {"spill the beans": "spilled the beans", "behind the scenes": "behind-the-scenes"}
    doc = gen.doc("She finally took a plunge and lost her temper.")
    assert [m.text for m in gen.matcher.find(doc)] == ["took a plunge", "lost her temper"]
    assert gen.matcher.find(gen.doc("He kicked the ball into the bucket.")) == []
    assert gen.matcher.find(gen.doc("She lost the temper.")) == []  # "the" does not fill a possessive slot
    assert gen.matcher.find(gen.doc("She lost temper.")) == []


# --------------------------------------------------------------------------------------------
# Builders, filters, report
# --------------------------------------------------------------------------------------------


def _s(i: int, sentence: str, label: str = "figurative", idiom: str | None = None) -> IdiomSentence:
    return IdiomSentence(f"s{i}", sentence, label, idiom, "test", "mem.tsv", i)


def test_substitute_labels_filters_and_report(gen: Generator) -> None:
    sentences = [
        _s(1, "He kicked the bucket last year."),
        _s(2, "The boy kicked the bucket across the yard.", "literal"),
        _s(3, "Nothing idiomatic here.", "figurative"),
        _s(4, "She lost her temper.", "figurative", "spill the beans"),  # named idiom absent
        _s(5, "She lost her temper.", "figurative", "break a leg"),  # not in the lexicon
        _s(6, "He came unexpectedly out of the blue.", "figurative"),  # "unexpectedly unexpectedly": doubled
    ]
    result = gen.substitute(sentences)
    by_type = {(p.pair_type, p.label) for p in result.pairs}
    assert by_type == {("fig_context", ENTAILMENT), ("lit_context", NON_ENTAILMENT)}
    lit = [p for p in result.pairs if p.pair_type == "lit_context"]
    assert lit[0].hypothesis == "The boy died across the yard."
    r = result.report
    assert r.inputs == 6
    assert r.skipped == {"idiom_not_found": 2, "idiom_not_in_lexicon": 1}
    assert r.filtered["doubled_word"] == 1
    assert r.examples["doubled_word"][0]["hypothesis"] == "He came unexpectedly unexpectedly."
    assert r.counts == {"fig_context/test/entailment": 1, "lit_context/test/non-entailment": 1}
    assert r.ice == {"kick the bucket": 1.0, "out of the blue": 0.0}  # both kick-the-bucket occurrences inflected
    assert json.loads(json.dumps(r.to_dict()))["skipped_inputs"]["idiom_not_found"]["count"] == 2


def test_adversarial_only_in_figurative_contexts(nlp) -> None:
    lex = ImpliLexicon()
    lex.add("kick the bucket", "die")
    lex.add("kick the bucket", "kick a pail with one's foot", kind="adversarial")
    g = Generator(lex, nlp)
    result = g.adversarial([_s(1, "Sadly, he kicked the bucket."), _s(2, "He kicked the bucket over.", "literal")])
    assert [(p.hypothesis, p.label, p.pair_type) for p in result.pairs] == [
        ("Sadly, he kicked a pail with his foot.", NON_ENTAILMENT, "adversarial_definition")
    ]
    assert result.report.skipped == {"literal_context": 1}


@pytest.mark.parametrize(
    ("premise", "hypothesis", "kw", "reasons"),
    [
        ("He kicked the bucket.", "He died.", {}, []),
        ("He kicked the bucket.", "He kicked the bucket.", {}, ["unchanged"]),
        ("He kicked the bucket.", "he  kicked the BUCKET.", {}, ["unchanged", "spacing"]),
        ("They were digging in all over the place.", "They were digging in in many places.", {}, ["doubled_word"]),
        ("Is it out of the blue?", "Is it unexpectedly", {}, ["bad_ending"]),
        ("He kicked the bucket.", "He died.", {"span": (3, 10), "matched": "kicked the bucket"}, ["span_mismatch"]),
        ("He lost it.", "He lost one's composure.", {"unfilled": ["poss"]}, ["unfilled_slot"]),
        ("He kicked the bucket.", "He .", {"replacement": " "}, ["empty_definition"]),
    ],
)
def test_filters(premise: str, hypothesis: str, kw: dict, reasons: list[str]) -> None:
    assert check_pair(premise, hypothesis, **kw) == reasons


def test_doubled_words_already_in_the_premise_are_not_blamed() -> None:
    assert check_pair("I had had enough of the red tape.", "I had had enough of the bureaucracy.") == []


# --------------------------------------------------------------------------------------------
# Outputs: IMPLI TSVs readable by figlang's IMPLI loader, JSONL with provenance
# --------------------------------------------------------------------------------------------


def test_outputs_are_readable_by_the_impli_loader(gen: Generator, tmp_path: Path) -> None:
    result = gen.substitute([_s(1, "She lost her temper."), _s(2, "The boy kicked the bucket over.", "literal")])
    written = write_outputs(result, tmp_path, "report_substitute.json")
    names = sorted(p.relative_to(tmp_path).as_posix() for p in written)
    assert names == [
        "impli/idioms/fig_context_test_e.tsv",
        "impli/idioms/lit_context_test_ne.tsv",
        "jsonl/fig_context_test_e.jsonl",
        "jsonl/lit_context_test_ne.jsonl",
        "report_substitute.json",
    ]
    specs = generated_files(tmp_path)
    assert [(s.pair_type, s.source, s.label) for s in specs] == [
        ("fig_context", "test", ENTAILMENT),
        ("lit_context", "test", NON_ENTAILMENT),
    ]
    records = load_generated(tmp_path)
    assert sorted(r.hypothesis for r in records if r.label == ENTAILMENT) == [
        "She became angry.",
        "She lost her composure.",
        "She worked herself into a rage.",
    ]
    # the loader names each pair by the replaced span (common prefix/suffix removed: "lost her composure" -> "temper")
    assert {r.expression for r in records if r.label == ENTAILMENT} == {"lost her temper", "temper"}
    row = json.loads((tmp_path / "jsonl" / "fig_context_test_e.jsonl").read_text().splitlines()[0])
    assert row["expression"] == "lose one's temper" and row["origin"] == "mem.tsv:1" and row["span"] == [4, 19]
    assert row["generator"].startswith("figlang-impli-generator/")
    assert "inflect:become->became(VBD)" in row["ops"]


# --------------------------------------------------------------------------------------------
# Bad input: located errors
# --------------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_lexicon_errors_are_located(tmp_path: Path) -> None:
    bad = _write(tmp_path, "lex.tsv", "# comment\nkick the bucket\tdie\nspill the beans reveal\n")
    with pytest.raises(DataError) as err:
        read_lexicon(bad)
    assert err.value.line == 3 and "no tab" in err.value.message and str(bad) in str(err.value)

    dup = _write(tmp_path, "dup.tsv", "idiom\tdefinition\nkick the bucket\tdie\nKick  the bucket\tDie\n")
    with pytest.raises(DataError, match=r"duplicate definition 'Die' for idiom 'Kick  the bucket' \(first at .*dup.tsv:2\)") as err:
        read_lexicon(dup)
    assert err.value.line == 3

    for text, line, message in [
        ("kick the bucket\t\n", 1, "empty or non-string definition"),
        ("\tdie\n", 1, "empty idiom"),
        ("one's\tsomeone's\n", 1, "only a slot"),
        ("a\tb\tc\n", 1, "expected 2 tab-separated columns, found 3"),
        ("kick the bucket\tkick the bucket\n", 1, "is the idiom itself"),
    ]:
        with pytest.raises(DataError, match=message) as err:
            read_lexicon(_write(tmp_path, "x.tsv", text))
        assert err.value.line == line

    with pytest.raises(DataError, match="file is empty"):
        read_lexicon(_write(tmp_path, "empty.tsv", "\n  \n"))

    report = LoadReport()
    lex = read_lexicon(
        _write(tmp_path, "mixed.tsv", "kick the bucket\tdie\nno tab here\nkick the bucket\tdie\nspill the beans\ttell\n"),
        LoadOptions(lenient=True, report=report),
    )
    assert len(lex) == 2 and [w.line for w in report.warnings] == [2, 3]


def test_lexicon_jsonl_and_errors(tmp_path: Path) -> None:
    good = _write(
        tmp_path, "lex.jsonl", '{"idiom": "kick the bucket", "definitions": ["die", "pass away"], "adversarial": "kick a pail"}\n'
    )
    lex = read_lexicon(good)
    entry = lex.get("Kick the Bucket")
    assert [(d.text, d.kind) for d in entry.definitions] == [
        ("die", "definition"),
        ("pass away", "definition"),
        ("kick a pail", "adversarial"),
    ]
    bad = _write(tmp_path, "bad.jsonl", '{"idiom": "kick the bucket", "definition": "die"}\n{"idiom": 3}\n')
    with pytest.raises(DataError, match="'idiom'") as err:
        read_lexicon(bad)
    assert err.value.line == 2
    with pytest.raises(DataError, match="malformed JSON") as err:
        read_lexicon(_write(tmp_path, "broken.jsonl", '{"idiom": "a b", "definition": "c"}\n{"idiom": \n'))
    assert err.value.line == 2


def test_sentence_errors_are_located(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.tsv", "sentence\tidiom\tlabel\nHe kicked the bucket.\tkick the bucket\tfigurative\nHe kicked it.\t\tmaybe\n")
    with pytest.raises(DataError, match="label should be figurative or literal, got 'maybe'") as err:
        read_sentences(path)
    assert err.value.line == 3
    path = _write(tmp_path, "s2.tsv", "He kicked the bucket.\tfigurative\n")
    with pytest.raises(DataError, match="3 or 4 columns") as err:
        read_sentences(path)
    assert err.value.line == 1
    path = _write(tmp_path, "s3.tsv", "A b.\t\tfig\nA b.\t\tfigurative\n")
    with pytest.raises(DataError, match=r"duplicate sentence \(first at line 1\)") as err:
        read_sentences(path)
    assert err.value.line == 2
    sents = read_sentences(_write(tmp_path, "ok.tsv", "A b.\t\tfig\tMy Corpus\nC d.\tkick the bucket\tLIT\n"))
    assert [(s.label, s.idiom, s.source) for s in sents] == [("figurative", None, "my-corpus"), ("literal", "kick the bucket", "ok")]


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def test_cli_substitute_and_bad_lexicon(tmp_path: Path) -> None:
    sentences = _write(
        tmp_path, "s.tsv", "He kicked the bucket last year.\t\tfigurative\nShe lost her temper.\tlose one's temper\tfigurative\n"
    )
    lexicon = _write(tmp_path, "lex.tsv", "kick the bucket\tdie\nlose one's temper\tlose one's composure\n")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(
        app, ["substitute", "--sentences", str(sentences), "--lexicon", str(lexicon), "--out", str(out), "--source", "demo"]
    )
    assert result.exit_code == 0, result.output
    assert "2 pairs from 2 inputs" in result.output
    tsv = (out / "impli" / "idioms" / "fig_context_demo_e.tsv").read_text().splitlines()
    assert tsv == ["He kicked the bucket last year.\tHe died last year.", "She lost her temper.\tShe lost her composure."]
    report = json.loads((out / "report_substitute.json").read_text())
    assert report["pairs"] == 2 and report["counts"] == {"fig_context/demo/entailment": 2}

    bad = _write(tmp_path, "bad.tsv", "kick the bucket\tdie\nlose one's temper\n")
    result = runner.invoke(app, ["substitute", "--sentences", str(sentences), "--lexicon", str(bad), "--out", str(out)])
    assert result.exit_code != 0
    assert isinstance(result.exception, DataError) and result.exception.line == 2 and result.exception.path == str(bad)
    result = runner.invoke(app, ["substitute", "--sentences", str(sentences), "--lexicon", str(bad), "--out", str(out / "x"), "--lenient"])
    assert result.exit_code == 0 and "1 malformed line(s) skipped" in result.output
