"""WordNet access, antonym replacement and metaphor replacement for the IMPLI generator (real WordNet, real Tsvetkov data)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from figlang.builders.impli import (
    TSVETKOV_XLSX,
    Generator,
    IdiomSentence,
    ImpliLexicon,
    build_metaphor_pairs,
    compare_with_impli_metaphors,
    load_nlp,
    read_metaphor_replacements,
    read_tsvetkov_xlsx,
    read_xlsx_sheet,
)
from figlang.builders.wordnet import antonymize, antonyms_of, literal_replacement
from figlang.core.errors import DataError
from figlang.data.records import ENTAILMENT, NON_ENTAILMENT
from figlang.lexicon.wordnet import INSTALL_COMMAND, WordNetNotFoundError, find_wordnet_source, lexnames_text, load_wordnet


@pytest.fixture(scope="module")
def wn():
    try:
        find_wordnet_source()
    except WordNetNotFoundError as exc:  # only where WordNet cannot be installed (no apt, no root)
        pytest.skip(f"WordNet is not installed ({INSTALL_COMMAND} or scripts/install_wordnet.sh): {exc}")
    return load_wordnet()


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


# --------------------------------------------------------------------------------------------
# WordNet access
# --------------------------------------------------------------------------------------------


def test_shipped_lexnames_is_the_standard_list() -> None:
    lines = [line.split("\t") for line in lexnames_text().splitlines()]
    assert len(lines) == 45
    assert [int(n) for n, _, _ in lines] == list(range(45))
    assert lines[0] == ["00", "adj.all", "3"] and lines[3] == ["03", "noun.Tops", "1"]
    assert lines[43] == ["43", "verb.weather", "2"] and lines[44] == ["44", "adj.ppl", "3"]
    assert {c for _, _, c in lines} == {"1", "2", "3", "4"}


def test_load_wordnet_reads_wordnet_30(wn) -> None:
    assert wn.get_version() == "3.0"
    assert wn.synset("dog.n.01").lexname() == "noun.animal"  # lexnames is what NLTK needed from us
    assert load_wordnet() is wn  # cached
    assert wn.morphy("went", "v") == "go"


def test_missing_wordnet_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(WordNetNotFoundError, match=r"apt-get install -y wordnet-base") as err:
        load_wordnet(tmp_path / "nowhere", cache_dir=tmp_path)
    assert "missing data.adj" in str(err.value)


def test_install_script_is_a_no_op_when_wordnet_is_there(wn) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "install_wordnet.sh"
    env = {**os.environ, "FIGLANG_WORDNET_DIR": str(find_wordnet_source())}
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "WordNet found" in done.stdout


# --------------------------------------------------------------------------------------------
# Antonyms
# --------------------------------------------------------------------------------------------


def test_antonyms_direct_indirect_and_adverbs(wn) -> None:
    assert antonyms_of("increase", "VERB", wn)[0] == "decrease"
    assert antonyms_of("happy", "ADJ", wn)[0] == "unhappy"
    assert antonyms_of("huge", "ADJ", wn)[0] == "small"  # satellite -> cluster head "large" -> "small"
    assert antonyms_of("quickly", "ADV", wn) == ["slowly"]
    assert antonyms_of("secretly", "ADV", wn) == []


def test_antonymize_keeps_form_and_slots(wn, nlp) -> None:
    gen = Generator(ImpliLexicon(), nlp)
    assert antonymize(gen.templates("be very happy"), wn) == ("be very unhappy", (("happy", "unhappy"),))
    assert antonymize(gen.templates("lose one's composure"), wn) == ("keep one's composure", (("lose", "keep"),))
    assert antonymize(gen.templates("a difficult situation"), wn)[0] == "an easy situation"  # article agrees
    assert antonymize(gen.templates("the lowest possible level"), wn)[0] == "the highest possible level"
    assert antonymize(gen.templates("reveal the secret"), wn) is None


def test_antonym_pairs_in_figurative_contexts(wn, nlp) -> None:
    lex = ImpliLexicon()
    lex.add("lose one's temper", "lose one's composure")
    lex.add("lose one's temper", "reveal the secret")  # no antonym: reported, not generated
    gen = Generator(lex, nlp)
    sentences = [
        IdiomSentence("1", "She lost her temper.", "figurative", None, "demo"),
        IdiomSentence("2", "He is losing his temper.", "figurative", None, "demo"),
        IdiomSentence("3", "He lost his temper on the stairs.", "literal", None, "demo"),
    ]
    result = gen.antonyms(sentences, wn)
    assert [(p.hypothesis, p.label, p.pair_type) for p in result.pairs] == [
        ("She kept her composure.", NON_ENTAILMENT, "antonym"),
        ("He is keeping his composure.", NON_ENTAILMENT, "antonym"),
    ]
    assert result.pairs[0].ops[0] == "antonym:lose->keep"
    assert result.report.skipped == {"no_antonym": 2, "literal_context": 1}


# --------------------------------------------------------------------------------------------
# Metaphors (Tsvetkov et al. 2014 test sets)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tsvetkov(data_dir: Path):
    return read_tsvetkov_xlsx(data_dir / TSVETKOV_XLSX)


def test_read_tsvetkov_xlsx(tsvetkov, data_dir: Path) -> None:
    svo = [i for i in tsvetkov if i.kind == "SVO"]
    an = [i for i in tsvetkov if i.kind == "AN"]
    assert len(svo) == 111 and len(an) == 100
    first = svo[0]
    assert first.words == ("century", "see", "development") and first.target == "see"
    assert first.sentence == "The twentieth century saw intensive development of new technologies"
    assert first.origin.endswith("Datasets_ACL2014.xlsx:MET_SVO_EN.txt:2") and len(first.judges) == 5
    assert any(i.words[2] == "" for i in svo)  # intransitive rows have no object
    with pytest.raises(DataError, match="no sheet 'NOPE'"):
        read_xlsx_sheet(data_dir / TSVETKOV_XLSX, "NOPE")


def test_metaphor_replacement_on_real_items(tsvetkov, wn, nlp) -> None:
    wanted = {"conversation turn", "unemployment stand", "weak password", "action talk"}
    items = [i for i in tsvetkov if i.metaphor in wanted]
    result = build_metaphor_pairs(items, nlp, wn)
    got = {p.expression: p.hypothesis for p in result.pairs}
    assert all(p.label == ENTAILMENT and p.pair_type == "metaphor_replacement" for p in result.pairs)
    assert got["conversation turn"] == "Our conversation changed to the subject of “tongues”."  # = IMPLI's paraphrase
    assert got["unemployment stand"] == "Three years later, unemployment is at 8.2 percent."  # = IMPLI's; "be" agrees
    assert got["action talk"] == "Actions speak even louder than phrases."  # plural subject: base form
    assert got["weak password"] == "I put an\xa0imperfect password and somebody guessed it."  # article agrees, no-break space kept
    choice = literal_replacement("stand", "VERB", ["unemployment", "percent"], wn, subject="unemployment")
    assert (choice.word, choice.relation) == ("be", "hypernym")


def test_metaphor_replacements_file_and_comparison(tsvetkov, nlp, data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "rep.tsv"
    path.write_text("conversation turn\tchange\nbring\tcause\n", encoding="utf-8")
    reps = read_metaphor_replacements(path)
    items = [i for i in tsvetkov if i.metaphor in ("conversation turn", "resumption bring relief")]
    result = build_metaphor_pairs(items, nlp, None, reps)
    assert [p.hypothesis for p in result.pairs] == [
        "Our conversation changed to the subject of “tongues”.",
        "The resumption of school caused relief to thousands of children.",
    ]
    cmp = compare_with_impli_metaphors(result.pairs, data_dir)
    assert (cmp["shared_premises"], cmp["exact"], cmp["same_replacement_word"]) == (2, 2, 2)
    path.write_text("bring\tcause\nBring\tmake\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"duplicate metaphor 'bring' \(first at line 1\)") as err:
        read_metaphor_replacements(path)
    assert err.value.line == 2
