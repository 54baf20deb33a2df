"""Every built-in loader on the real shared data: counts, fields, quirks."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from figlang.core.errors import DataNotFoundError, LoadReport, PlaceholderLabelError
from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, ClozeRecord
from figlang.data.registry import ensure_labels_scoreable, get_task


@pytest.mark.parametrize(
    ("task", "split", "count"),
    [
        ("idiom-cloze", "train", 2715),
        ("idiom-cloze", "dev", 355),
        ("idiom-cloze", "test", 1542),
        ("simile-cloze", "train", 2627),
        ("simile-cloze", "dev", 376),
        ("simile-cloze", "test", 1520),
        ("flute", "train", 7035),
        ("flute", "val", 499),
        ("flute", "test", 1500),
        ("impli", "all", 26124),
    ],
)
def test_split_sizes(data_dir: Path, task: str, split: str, count: int) -> None:
    assert len(get_task(task).load(split, data_dir)) == count


def test_idiom_cloze_fields(data_dir: Path) -> None:
    dev = get_task("idiom-cloze").load("dev", data_dir)
    first = dev[0]
    assert isinstance(first, ClozeRecord)
    assert first.expression == "go places" and first.expression_type == "idiom"
    assert first.meaning.startswith("To progress or find success")
    assert first.label == 1 and first.reference.startswith("Someday cal would be a teacher")
    assert "<b>" in first.narrative and "<b>" not in first.context
    assert len(first.inferences["context"]) == 12 and first.inferences["context"][0].startswith("The narrator")
    assert "literal" in first.inferences
    assert len({r.id for r in dev}) == len(dev)
    # both answer positions occur: a loader that always said option1 would fail here
    labels = Counter(r.label for r in dev)
    assert set(labels) == {0, 1} and min(labels.values()) > 150


def test_test_labels_are_flagged_and_refused(data_dir: Path) -> None:
    for task in ("idiom-cloze", "simile-cloze"):
        test = get_task(task).load("test", data_dir)
        assert all(r.label_is_placeholder for r in test)
        assert all(r.reference is None for r in test)
        with pytest.raises(PlaceholderLabelError, match="placeholders"):
            ensure_labels_scoreable(test, f"{task}/test")
        dev = get_task(task).load("dev", data_dir)
        assert not any(r.label_is_placeholder for r in dev)
        ensure_labels_scoreable(dev, f"{task}/dev")  # no error


def test_simile_property_false_is_missing_not_text(data_dir: Path) -> None:
    task = get_task("simile-cloze")
    missing = sum(r.meta.get("property_missing", False) for s in ("train", "dev", "test") for r in task.load(s, data_dir))
    assert 0 < missing <= 27
    assert all(r.meaning is None or isinstance(r.meaning, str) for r in task.load("test", data_dir))
    assert sum(r.meta.get("property_missing", False) for r in task.load("test", data_dir)) == 9


def test_simile_inferences_attached_despite_missing_trailing_newline(data_dir: Path) -> None:
    dev = get_task("simile-cloze").load("dev", data_dir)
    assert all(len(r.inferences["context"]) == 12 for r in dev)
    assert all(r.inferences["literal"][0].startswith("The associated property") for r in dev[:20])


def test_generation_task_groups_references(data_dir: Path) -> None:
    gen = get_task("idiom-generation").load("dev", data_dir)
    assert len(gen) == 299  # one per distinct narrative, like the paper's committed generations
    assert sum(len(g.references) for g in gen) >= 299
    assert all(g.references for g in gen)
    assert len(get_task("simile-generation").load("dev", data_dir)) == 39
    test = get_task("idiom-generation").load("test", data_dir)
    assert all(g.references == () and g.meta["references_hidden"] for g in test)


def test_flute_figure_types_recovered(data_dir: Path) -> None:
    for split, expected in (
        ("train", {"sarcasm": 2992, "idiom": 1693, "simile": 1175, "metaphor": 1175}),
        ("val", {"sarcasm": 274, "idiom": 75, "simile": 75, "metaphor": 75}),
    ):
        records = get_task("flute").load(split, data_dir)
        assert Counter(r.figure_type for r in records) == expected
        assert all(r.label in (ENTAILMENT, CONTRADICTION) for r in records)
        assert all(r.explanation for r in records)
    val = get_task("flute").load("val", data_dir)
    assert val[0].premise == "And the song this shape detracted."
    assert val[0].hypothesis == "And the song this shape  suggested."
    assert val[0].label == CONTRADICTION and val[0].explanation.startswith("To suggest something means")
    idioms = get_task("flute-idiom").load("val", data_dir)
    assert len(idioms) == 75 and all(r.expression for r in idioms)


def test_flute_test_without_gold_is_unlabeled_and_says_so(data_dir: Path) -> None:
    report = LoadReport()
    test = get_task("flute").load("test", data_dir, report=report)
    assert len(test) == 1500 and all(r.label is None for r in test)
    assert any("gold" in str(w) and "figlang data download flute" in str(w) for w in report.warnings)
    with pytest.raises(DataNotFoundError, match="gold is absent"):
        get_task("flute-sarcasm").load("test", data_dir)


def test_flute_test_gold_is_read_when_present(data_dir: Path, tmp_path: Path) -> None:
    shutil.copytree(data_dir / "flute", tmp_path / "flute")
    gold = tmp_path / "flute" / "testgolddata"
    gold.mkdir()
    rows = {
        "sarcasm": [{"id": 1, "premise": "P1", "hypothesis": "H1", "label": "Contradiction", "explanation": "E1"}],
        "simile": [{"id": 1, "premise": "P2", "hypothesis": "H2", "label": "Entailment", "explanation": "E2"}],
        "metaphor": [{"id": 7, "premise": "P3", "hypothesis": "H3", "label": "Entailment", "explanation": "E3"}],
        "idiom": [
            {"id": 2, "premise": "P4", "hypothesis": "H4", "label": "Contradiction", "explanation": "E4", "idiom": "spill the beans"}
        ],
    }
    for figure, items in rows.items():
        (gold / f"{figure}_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    test = get_task("flute").load("test", tmp_path)
    assert [(r.id, r.figure_type, r.label) for r in test] == [
        ("sarcasm-1-0", "sarcasm", CONTRADICTION),
        ("simile-1-0", "simile", ENTAILMENT),
        ("metaphor-7-0", "metaphor", ENTAILMENT),
        ("idiom-2-0", "idiom", CONTRADICTION),
    ]
    assert test[3].expression == "spill the beans"
    assert [r.id for r in get_task("flute-simile").load("test", tmp_path)] == ["simile-1-0"]


def test_partial_flute_test_gold_is_refused_for_the_whole_test(data_dir: Path, tmp_path: Path) -> None:
    """Only the idiom gold present: flute/test would be an idiom score under the whole test's name."""
    from figlang.core.errors import DataError

    shutil.copytree(data_dir / "flute", tmp_path / "flute")
    gold = tmp_path / "flute" / "testgolddata"
    gold.mkdir()
    row = {"id": 2, "premise": "P4", "hypothesis": "H4", "label": "Contradiction", "explanation": "E4", "idiom": "spill the beans"}
    (gold / "idiom_test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError, match="gold incomplete: no file for metaphor, sarcasm, simile.*cover only idiom") as err:
        get_task("flute").load("test", tmp_path)
    assert "flute-idiom" in str(err.value.hint)
    report = LoadReport()
    assert [r.id for r in get_task("flute").load("test", tmp_path, lenient=True, report=report)] == ["idiom-2-0"]
    assert any("incomplete" in str(e) for e in report.warnings) and report.skipped == 0
    assert [r.id for r in get_task("flute-idiom").load("test", tmp_path)] == ["idiom-2-0"]
    with pytest.raises(DataNotFoundError, match="gold for simile is missing"):
        get_task("flute-simile").load("test", tmp_path)


IMPLI_COUNTS = {
    "idioms/fig_context_magpie_e": 15431,
    "idioms/fig_context_pie_e": 634,
    "idioms/fig_context_semeval_e": 587,
    "idioms/lit_context_magpie_ne": 687,
    "idioms/lit_context_pie_ne": 57,
    "idioms/lit_context_semeval_ne": 142,
    "idioms/adversarial_definition_ne_magpie": 5965,
    "idioms/adversarial_definition_ne_pie": 92,
    "idioms/adversarial_definition_ne_semeval": 59,
    "idioms/manual_e": 528,
    "idioms/manual_ne": 254,
    "idioms/manual_antonyms_ne": 375,
    "metaphors/manual_e": 387,
    "metaphors/manual_ne": 281,
    "metaphors/replacement_cc_e": 545,
    "metaphors/replacement_tsvetkov_e": 100,
}


def test_impli_files_labels_types_and_encoding(data_dir: Path) -> None:
    pairs = get_task("impli").load("all", data_dir)
    by_file = Counter(r.id.rsplit("-", 1)[0] for r in pairs)
    assert dict(by_file) == IMPLI_COUNTS
    labels = Counter((r.pair_type, r.label) for r in pairs)
    assert labels[("fig_context", ENTAILMENT)] == 16652
    assert labels[("lit_context", NON_ENTAILMENT)] == 886
    assert labels[("adversarial_definition", NON_ENTAILMENT)] == 6116
    assert labels[("manual_antonym", NON_ENTAILMENT)] == 375
    assert labels[("metaphor_replacement", ENTAILMENT)] == 645
    # Windows-1252 file decoded: curly quotes, no replacement characters
    tsvetkov = [r for r in pairs if r.source == "tsvetkov"]
    assert len(tsvetkov) == 100 and not any("\ufffd" in r.premise for r in tsvetkov)
    assert any("\u201c" in r.premise or "\u2019" in r.premise for r in tsvetkov)
    # quotes are not interpreted: a line with a bare '"' keeps it and its neighbours stay separate lines
    assert sum('"' in r.premise for r in pairs) > 300
    # the score column exists only in the MAGPIE semi-automatic files
    assert all(r.score is None for r in pairs if r.source in ("pie", "semeval") or r.pair_type == "manual")
    assert sum(r.score is not None for r in pairs if r.source == "magpie") > 20000


def test_impli_expression_is_the_replaced_span(data_dir: Path) -> None:
    pairs = get_task("impli-idioms-silver").load("all", data_dir)
    first = pairs[0]
    assert first.premise.endswith("an attack can come out of the blue.")
    assert first.expression == "out of the blue"
    assert first.meta["replacement"].startswith("without warning")
    manual = get_task("impli-idioms-manual").load("all", data_dir)
    assert {r.pair_type for r in manual} == {"manual", "manual_antonym"} and len(manual) == 528 + 254 + 375


@pytest.mark.parametrize(
    ("premise", "hypothesis", "span", "replacement"),
    [
        ("He kicked the bucket last year.", "He died last year.", "kicked the bucket", "died"),
        ("Getting away with murder", "doing bad things", "Getting away with murder", "doing bad things"),
        ("It came out of the blue.", "It came unexpectedly.", "out of the blue", "unexpectedly"),
        ("Same.", "Same.", "", ""),
    ],
)
def test_figurative_span(premise: str, hypothesis: str, span: str, replacement: str) -> None:
    from figlang.data.impli import figurative_span

    assert figurative_span(premise, hypothesis) == (span, replacement)
