"""User-defined tasks: spec validation, row validation (strict and lenient), and the three shapes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from figlang.data.custom import SHAPES, load_task_spec, read_task_spec, write_task_spec_template
from figlang.core.errors import DataError, DataNotFoundError, FiglangError, LoadReport
from figlang.data.records import CONTRADICTION, ENTAILMENT, NON_ENTAILMENT, ClozeRecord, GenerationRecord, NLIPair
from figlang.data.registry import TASKS, Task, get_task

FIXTURES = Path(__file__).parent / "fixtures" / "custom"


# ---------------------------------------------------------------------------------------------
# helpers


def make_task(tmp_path: Path, spec: dict | str, files: dict[str, str | bytes], name: str = "spec.yaml") -> Task:
    """Write a spec and its data files under tmp_path and load the spec."""
    for rel, content in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    spec_path = tmp_path / name
    spec_path.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return load_task_spec(spec_path)


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


NLI_SPEC = {
    "name": "t",
    "shape": "nli",
    "splits": {"train": "train.jsonl"},
    "columns": {"premise": "p", "hypothesis": "h", "label": "y"},
    "labels": {"yes": "entailment", "no": "non-entailment"},
}
CLOZE_CSV_SPEC = {
    "name": "c",
    "shape": "cloze",
    "splits": {"train": "train.csv"},
    "columns": {"context": "story", "options": ["o1", "o2"], "label": "answer", "expression": "idiom"},
}


def row(p: str = "A premise.", h: str = "A hypothesis.", y: str = "yes", **extra) -> dict:
    return {"p": p, "h": h, "y": y, **extra}


# ---------------------------------------------------------------------------------------------
# the three shapes, from the committed fixtures


def test_cloze_jsonl_spec_loads_typed_records():
    task = load_task_spec(FIXTURES / "cloze.yaml")
    assert task.name == "toy-idiom-cloze" and task.shape == "cloze"
    assert task.splits == ("train", "test") and task.default_split == "test"
    # paths as given, made absolute (figlang never resolves links: see test_data_dir_through_a_symlink_is_reported_as_given)
    assert task.spec_path == os.path.abspath(FIXTURES / "cloze.yaml")
    assert task.files("train") == [Path(os.path.abspath(FIXTURES / "data" / "cloze_train.jsonl"))]

    train = task.load("train")
    assert [r.id for r in train] == ["a1", "a2", "a3"]
    assert all(isinstance(r, ClozeRecord) for r in train)
    assert [r.label for r in train] == [1, 0, 2]  # "ENDING1" matches ending1 case-insensitively
    assert train[0].options == (
        "Everyone at the table cheered about the cake.",
        "His sister groaned: the surprise was ruined.",
        "He spilled soup on his shirt.",
    )
    assert train[0].reference == "His sister groaned: the surprise was ruined."
    assert train[1].expression == "A piece of  cake" and train[2].meaning is None  # empty optional field -> None
    assert train[2].meta == {"file": "data/cloze_train.jsonl", "line": 4}  # physical line, blank line 3 counted

    test = task.load("test")
    assert len(test) == 1 and test[0].label is None  # unlabeled split: the label column is not read


def test_cloze_spec_from_registry_path_and_json_spec_with_list_column():
    task = get_task(str(FIXTURES / "cloze_list.json"))
    assert task.name == "toy-cloze-csv" and task.name not in TASKS  # user tasks are not registered globally
    dev = task.load("dev")
    assert [r.id for r in dev] == ["dev-0", "dev-1", "dev-2"]  # no id column: '{split}-{index}'
    assert [len(r.options) for r in dev] == [3, 2, 2]  # options from one column holding a JSON list
    assert [r.label for r in dev] == [1, 0, 1]  # one-based labels
    assert dev[0].narrative == 'She was as busy as a bee, "always" moving'
    assert dev[1].narrative == "The night was\nas dark as pitch."
    assert [r.meta["line"] for r in dev] == [2, 3, 5]  # where each CSV record starts (line 3 spans two lines)


def test_nli_csv_spec_maps_labels_and_declares_label_set():
    task = load_task_spec(FIXTURES / "nli.yaml")
    assert task.labels == (ENTAILMENT, CONTRADICTION)
    assert task.group_by == ("figure_type",)
    pairs = task.load("train")
    assert all(isinstance(p, NLIPair) for p in pairs)
    assert [p.label for p in pairs] == [CONTRADICTION, ENTAILMENT, ENTAILMENT]
    assert [p.figure_type for p in pairs] == ["sarcasm", "simile", "idiom"]
    assert pairs[0].explanation == "Sarcasm: nobody is thrilled\nby a parking ticket."
    assert pairs[2].explanation is None
    assert [p.meta["line"] for p in pairs] == [2, 4, 5]


def test_generation_tsv_spec_keeps_quotes_and_skips_empty_extra_reference():
    task = load_task_spec(FIXTURES / "generation.yaml")
    gens = task.load()
    assert all(isinstance(g, GenerationRecord) for g in gens)
    assert gens[0].source == 'He said the "plan" was a <b>piece of cake</b>.'  # quoting disabled
    assert gens[0].references == ("It took five minutes.", "Everyone finished early.")
    assert gens[1].references == ("The room got friendlier.",)


def test_generation_references_from_a_list_valued_jsonl_column(tmp_path):
    spec = {"shape": "generation", "splits": {"test": "g.jsonl"}, "columns": {"source": "s", "references": "refs"}}
    task = make_task(tmp_path, spec, {"g.jsonl": jsonl({"s": "x", "refs": ["a", "b"]}, {"s": "y", "refs": "only one"})})
    assert task.name == "spec"  # defaults to the spec file's stem
    assert [g.references for g in task.load("test")] == [("a", "b"), ("only one",)]


def test_headerless_tsv_from_the_data_dir_reads_impli_manual_pairs(data_dir):
    """A spec can describe files of the shared datasets: {data_dir}, header: false, 0-based positions."""
    task = load_task_spec(FIXTURES / "impli_manual.yaml")
    pairs = task.load("all", data_dir)
    source = data_dir / "impli" / "idioms" / "manual_e.tsv"
    expected = [ln for ln in source.read_text(encoding="utf-8").split("\n") if ln.strip()]
    assert len(pairs) == len(expected) > 0
    assert pairs[0].premise == expected[0].split("\t")[0].strip()
    assert all(p.label is None for p in pairs)  # the label is in the file name, which a spec cannot map
    assert task.files("all", data_dir) == [source]


def test_data_dir_through_a_symlink_is_reported_as_given(data_dir, tmp_path):
    """figlang reports paths as given, never with links resolved: a data folder shared through a symbolic link
    keeps the name the user gave it, in a spec task's files and in results.json, whose checksums describe the
    data directory's files (not the spec's folder, where `{data_dir}/...` names nothing)."""
    from figlang.evaluation import evaluate

    link = tmp_path / "shared-data"
    link.symlink_to(data_dir.resolve(), target_is_directory=True)
    spec = tmp_path / "spec" / "impli_manual.yaml"  # the fixture, with the label set a baseline answers from
    spec.parent.mkdir()
    spec.write_text(
        (FIXTURES / "impli_manual.yaml").read_text(encoding="utf-8") + "labels: [entailment, non-entailment]\n", encoding="utf-8"
    )
    task = load_task_spec(spec)
    source = link / "impli" / "idioms" / "manual_e.tsv"
    assert task.files("all", link) == [source]  # not data_dir.resolve() / ...
    assert len(task.load("all", link)) == len(task.load("all", data_dir)) > 0

    run = evaluate(task, "always-first", data_dir=link, out_dir=tmp_path / "run", use_cache=False, progress=False, predict_only=True)
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["data"]["data_dir"] == str(link)
    [entry] = results["data"]["files"]
    assert entry["path"] == "impli/idioms/manual_e.tsv"  # relative to the data dir, so no machine path
    assert entry["sha256"] is not None and entry["bytes"] == source.stat().st_size
    assert run.results["data"] == results["data"]

    builtin = evaluate("simile-cloze", "longer-option", split="dev", data_dir=link, use_cache=False, progress=False)
    assert builtin.results["data"]["data_dir"] == str(link)
    paths = [f["path"] for f in builtin.results["data"]["files"]]
    assert paths[0] == "fig_narrative/data/simile/dev.jsonl" and not any(p.startswith("/") for p in paths)


# ---------------------------------------------------------------------------------------------
# templates


@pytest.mark.parametrize("shape", SHAPES)
def test_template_is_a_valid_spec(tmp_path, shape):
    text = write_task_spec_template(shape)
    raw = yaml.safe_load(text)
    assert raw["shape"] == shape
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(text, encoding="utf-8")
    spec = read_task_spec(spec_path)
    assert spec.shape == shape and set(spec.splits) == set(raw["splits"])


def test_template_round_trip_with_data(tmp_path):
    (tmp_path / "data").mkdir()
    rec = {
        "story": "s <b>x</b>",
        "ending1": "a",
        "ending2": "b",
        "ending3": "c",
        "answer": "ending3",
        "idiom": "x",
        "definition": "d",
        "uid": "u1",
    }
    for split in ("train", "dev"):
        (tmp_path / "data" / f"{split}.jsonl").write_text(jsonl(rec), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(write_task_spec_template("cloze"), encoding="utf-8")
    (only,) = load_task_spec(tmp_path / "spec.yaml").load("train")
    assert only.label == 2 and only.id == "u1"


def test_template_unknown_shape_suggests():
    with pytest.raises(FiglangError, match="did you mean 'nli'"):
        write_task_spec_template("nlii")


# ---------------------------------------------------------------------------------------------
# spec validation


@pytest.mark.parametrize(
    "change, message",
    [
        ({"shape": "clozee"}, r"unknown shape 'clozee'; did you mean 'cloze'"),
        ({"colums": {}}, r"unknown key 'colums'; did you mean 'columns'"),
        ({"columns": {"premise": "p", "label": "y"}}, r"needs the 'hypothesis' column mapped"),
        ({"labels": None}, r"must declare its label set"),
        ({"labels": {"yes": "entailed"}}, r"'entailed' is not an NLI label; did you mean 'entailment'"),
        (
            {"columns": {"premise": "p", "hypothesis": "h", "label": "y", "context": "c"}},
            r"unknown column role 'context' for shape nli \(it is a role of the cloze shape\)",
        ),
        ({"columns": {"premise": "p", "hypothesis": "h", "label": "y", "explanaton": "e"}}, r"did you mean 'explanation'"),
        ({"columns": {"premise": ["p", "q"], "hypothesis": "h", "label": "y"}}, r"takes one column, not a list"),
        ({"splits": {"train": "train.txt"}}, r"cannot tell the format of 'train.txt'"),
        ({"format": "jsonlines"}, r"unknown format 'jsonlines'"),
        ({"splits": {}}, r"a spec needs `splits:`"),
        ({"unlabeled_splits": ["tset"]}, r"'tset' is not one of the splits"),
        ({"group_by": ["figure_type"]}, r"groups by 'figure_type' but no column is mapped to it"),
        ({"encoding": "utf-9"}, r"unknown encoding"),
    ],
)
def test_spec_errors_say_what_to_fix(tmp_path, change, message):
    spec = {**NLI_SPEC, **change}
    spec = {k: v for k, v in spec.items() if v is not None}
    with pytest.raises(DataError, match=message) as info:
        make_task(tmp_path, spec, {"train.jsonl": jsonl(row())})
    assert info.value.path == os.path.abspath(tmp_path / "spec.yaml")


def test_spec_error_points_at_the_yaml_line(tmp_path):
    text = "name: t\nshape: nli\nsplits: {train: train.jsonl}\ncolumns:\n  premise: p\n  hypothesis: h\n  lable: y\n"
    with pytest.raises(DataError, match="did you mean 'label'") as info:
        make_task(tmp_path, text, {"train.jsonl": jsonl(row())})
    assert info.value.line == 7


def test_cloze_spec_errors(tmp_path):
    base = {**CLOZE_CSV_SPEC}
    with pytest.raises(DataError, match=r"unknown label rule 'one_based'; did you mean 'one-based'"):
        make_task(tmp_path, {**base, "labels": "one_based"}, {})
    with pytest.raises(DataError, match=r"option index 2 is out of range \(0..1"):
        make_task(tmp_path, {**base, "labels": {"a": 0, "b": 2}}, {})
    with pytest.raises(DataError, match=r"'o3' is not one of the option columns"):
        make_task(tmp_path, {**base, "labels": {"a": "o1", "b": "o3"}}, {})
    with pytest.raises(DataError, match="at least two option columns"):
        make_task(tmp_path, {**base, "columns": {**base["columns"], "options": ["o1"]}}, {})
    with pytest.raises(DataError, match="generation tasks have references, not labels"):
        make_task(
            tmp_path,
            {"shape": "generation", "splits": {"t": "t.jsonl"}, "columns": {"source": "s", "references": "r"}, "labels": {"a": 0}},
            {},
        )


def test_label_mapping_may_be_omitted_when_every_split_is_unlabeled(tmp_path):
    spec = {"shape": "nli", "splits": {"test": "t.jsonl"}, "unlabeled_splits": ["test"], "columns": {"premise": "p", "hypothesis": "h"}}
    task = make_task(tmp_path, spec, {"t.jsonl": jsonl({"p": "a", "h": "b"})})
    assert task.labels == () and task.load("test")[0].label is None


def test_spec_file_problems(tmp_path):
    with pytest.raises(DataNotFoundError, match="task spec not found"):
        load_task_spec(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: t\nshape: nli\ncolumns: {premise: p\n", encoding="utf-8")
    with pytest.raises(DataError, match="malformed YAML") as info:
        load_task_spec(bad)
    assert info.value.line is not None
    listy = tmp_path / "list.yaml"
    listy.write_text("- shape: nli\n", encoding="utf-8")
    with pytest.raises(DataError, match="must be a mapping"):
        load_task_spec(listy)
    badjson = tmp_path / "bad.json"
    badjson.write_text('{"shape": "nli",\n "name": }\n', encoding="utf-8")
    with pytest.raises(DataError, match="malformed JSON") as info:
        load_task_spec(badjson)
    assert info.value.line == 2


# ---------------------------------------------------------------------------------------------
# row validation: every error names file and line


@pytest.mark.parametrize(
    "content, line, message",
    [
        (jsonl(row(), row(), {"p": "x", "y": "yes"}), 3, r"missing column 'h' \(mapped as hypothesis"),
        (jsonl(row(), row(h="   ")), 2, r"empty hypothesis \(column 'h'\)"),
        (jsonl(row(), row(y="maybe")), 2, r"label 'maybe' is outside the declared label set \('yes', 'no'\)"),
        (jsonl(row()) + '{"p": "x", "h": "y", "y": "yes"\n', 2, r"malformed JSON"),
        (jsonl(row()) + "[1, 2]\n", 2, r"expected a JSON object, got list"),
        (jsonl(row(), row(p=3)), 2, r"premise \(column 'p'\) should be text, got int"),
        (jsonl(row(), row(y="")), 2, r"empty label"),
        ("", None, r"file is empty"),
        ("\n  \n", None, r"file is empty"),
    ],
)
def test_row_errors_name_file_and_line(tmp_path, content, line, message):
    task = make_task(tmp_path, NLI_SPEC, {"train.jsonl": content})
    with pytest.raises(DataError, match=message) as info:
        task.load("train")
    assert info.value.path == str(tmp_path / "train.jsonl")
    assert info.value.line == line


def test_bad_encoding_names_the_line_and_suggests_declaring_it(tmp_path):
    data = (jsonl(row(), row()) + jsonl(row(p="caf\u00e9"))).encode("cp1252")
    task = make_task(tmp_path, NLI_SPEC, {"train.jsonl": data})
    with pytest.raises(DataError, match=r"cannot decode byte 0xe9 as utf-8.*encoding:") as info:
        task.load("train")
    assert info.value.line == 3
    declared = make_task(tmp_path, {**NLI_SPEC, "encoding": "cp1252"}, {"train.jsonl": data})
    assert declared.load("train")[2].premise == "caf\u00e9"


def test_lenient_load_skips_bad_rows_reports_each_and_keeps_ids_stable(tmp_path):
    data = (
        jsonl(row(), {"p": "x", "y": "yes"}, row(y="maybe")) + "{oops\n" + jsonl(row(p="last"))
    ).encode() + b'{"p": "caf\xe9", "h": "h", "y": "no"}\n'
    task = make_task(tmp_path, NLI_SPEC, {"train.jsonl": data})
    report = LoadReport()
    pairs = task.load("train", lenient=True, report=report)
    assert [p.id for p in pairs] == ["train-0", "train-4"]  # row indexes, not renumbered after skips
    assert pairs[1].premise == "last"
    assert report.skipped == 4
    assert [w.line for w in report.warnings] == [6, 2, 3, 4]  # encoding is checked before parsing
    assert all(w.path == str(tmp_path / "train.jsonl") for w in report.warnings)


def test_lenient_empty_file_is_reported_not_raised(tmp_path):
    task = make_task(tmp_path, NLI_SPEC, {"train.jsonl": ""})
    report = LoadReport()
    assert task.load("train", lenient=True, report=report) == []
    assert "file is empty" in str(report.warnings[0])


def test_missing_data_file_raises_even_when_lenient(tmp_path):
    task = make_task(tmp_path, NLI_SPEC, {})
    with pytest.raises(DataNotFoundError, match="data file not found"):
        task.load("train", lenient=True)


def test_duplicate_ids_are_rejected(tmp_path):
    spec = {**NLI_SPEC, "columns": {**NLI_SPEC["columns"], "id": "id"}}
    task = make_task(tmp_path, spec, {"train.jsonl": jsonl(row(id=1), row(id=2), row(id=1))})
    with pytest.raises(DataError, match=r"duplicate id '1' \(first at .*train.jsonl:1\)") as info:
        task.load("train")
    assert info.value.line == 3


def test_line_separator_inside_json_string_does_not_shift_line_numbers(tmp_path):
    content = json.dumps(row(p="one\u2028two"), ensure_ascii=False) + "\n" + jsonl(row(y="maybe"))
    task = make_task(tmp_path, NLI_SPEC, {"train.jsonl": content})
    with pytest.raises(DataError) as info:
        task.load("train")
    assert info.value.line == 2


def test_csv_missing_header_column_is_reported_on_line_1_with_suggestion(tmp_path):
    task = make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": "story,o1,o2,answr,idiom\ns,a,b,0,i\n"})
    with pytest.raises(DataError, match=r"missing column 'answer'.*'answer': did you mean 'answr'") as info:
        task.load("train")
    assert info.value.line == 1


def test_csv_errors_report_physical_lines(tmp_path):
    csv_text = 'story,o1,o2,answer,idiom\n"two\nlines",a,b,0,i\ns,a,b,0\ns,a,b,5,i\n'
    task = make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": csv_text})
    report = LoadReport()
    assert task.load("train", lenient=True, report=report)[0].narrative == "two\nlines"
    assert [(w.line, w.message.split(" (")[0]) for w in report.warnings] == [
        (4, "expected 5 columns, found 4"),
        (5, "label '5' is outside the declared set: option 5 of 2"),
    ]


def test_csv_byte_order_mark_and_header_only(tmp_path):
    task = make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": "\ufeffstory,o1,o2,answer,idiom\ns,a,b,1,i\n"})
    assert task.load("train")[0].label == 1
    task = make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": "story,o1,o2,answer,idiom\n"})
    with pytest.raises(DataError, match="header row but no data rows"):
        task.load("train")


def test_cloze_label_rules(tmp_path):
    data = "story,o1,o2,answer,idiom\ns,a,b,o2,i\n"
    with pytest.raises(DataError, match=r"label 'o2' is not an integer.*declare `labels: option-name`"):
        make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": data}).load("train")
    assert make_task(tmp_path, {**CLOZE_CSV_SPEC, "labels": "option-name"}, {"train.csv": data}).load("train")[0].label == 1
    one_based_data = "story,o1,o2,answer,idiom\ns,a,b,2,i\n"
    with pytest.raises(DataError, match=r"outside the declared set.*declare `labels: one-based`"):
        make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": one_based_data}).load("train")
    with pytest.raises(DataError, match=r"label '0' is outside the declared set: option 0 of 2"):
        make_task(tmp_path, {**CLOZE_CSV_SPEC, "labels": "one-based"}, {"train.csv": "story,o1,o2,answer,idiom\ns,a,b,0,i\n"}).load("train")


def test_tsv_wrong_column_count(tmp_path):
    spec = {"shape": "generation", "splits": {"t": "t.tsv"}, "columns": {"source": "s", "references": "r"}}
    task = make_task(tmp_path, spec, {"t.tsv": "s\tr\nfine\tok\nextra\ttab\there\n"})
    with pytest.raises(DataError, match="expected 2 columns, found 3") as info:
        task.load("t")
    assert info.value.line == 3


def test_options_column_must_hold_a_list(tmp_path):
    spec = {"shape": "cloze", "splits": {"t": "t.jsonl"}, "columns": {"context": "c", "options": "opts", "label": "y"}}
    task = make_task(
        tmp_path,
        spec,
        {
            "t.jsonl": jsonl(
                {"c": "x", "opts": ["a", "b"], "y": 1},
                {"c": "x", "opts": "a", "y": 0},
                {"c": "x", "opts": ["a", ""], "y": 0},
                {"c": "x", "opts": ["a"], "y": 0},
            )
        },
    )
    report = LoadReport()
    (ok,) = task.load("t", lenient=True, report=report)
    assert ok.options == ("a", "b") and ok.label == 1
    assert [w.line for w in report.warnings] == [2, 3, 4]
    assert "should hold a list" in report.warnings[0].message
    assert "item 1 is empty" in report.warnings[1].message
    assert "at least 2" in report.warnings[2].message


def test_nli_label_set_as_a_list_of_canonical_labels(tmp_path):
    spec = {**NLI_SPEC, "labels": ["entailment", "Non-Entailment"]}
    task = make_task(tmp_path, spec, {"train.jsonl": jsonl(row(y="ENTAILMENT"), row(y="non-entailment"))})
    assert task.labels == (ENTAILMENT, NON_ENTAILMENT)
    assert [p.label for p in task.load("train")] == [ENTAILMENT, NON_ENTAILMENT]
    with pytest.raises(DataError, match=r"label 'yes' is outside the declared label set"):
        make_task(tmp_path, spec, {"train.jsonl": jsonl(row(y="yes"))}).load("train")


def test_lenient_csv_with_an_undecodable_line_keeps_the_other_rows_and_their_ids(tmp_path):
    data = "story,o1,o2,answer,idiom\ns1,a,b,0,i\ns2 caf\u00e9,a,b,1,j\ns3,a,b,1,k\n".encode("cp1252")
    task = make_task(tmp_path, CLOZE_CSV_SPEC, {"train.csv": data})
    report = LoadReport()
    records = task.load("train", lenient=True, report=report)
    assert [(r.id, r.narrative) for r in records] == [("train-0", "s1"), ("train-2", "s3")]
    assert [w.line for w in report.warnings] == [3]


def test_meta_columns_default_split_and_group_by(tmp_path):
    spec = {
        **NLI_SPEC,
        "splits": {"train": "train.jsonl", "extra": "train.jsonl"},
        "default_split": "extra",
        "meta": ["source_url"],
        "columns": {**NLI_SPEC["columns"], "pair_type": "how"},
        "group_by": ["pair_type"],
    }
    task = make_task(tmp_path, spec, {"train.jsonl": jsonl(row(source_url="http://x", how="manual"))})
    assert task.default_split == "extra" and task.group_by == ("pair_type",)
    (pair,) = task.load()
    assert pair.meta == {"file": "train.jsonl", "line": 1, "source_url": "http://x"} and pair.pair_type == "manual"
    with pytest.raises(FiglangError, match="has no split 'dev'"):
        task.load("dev")


def test_one_list_column_of_options_is_not_read_letter_by_letter(tmp_path):
    """Options in one list-valued column: a non-integer label gets the mapping hint. The option-name hint is for
    several option columns; reading the column's name as a sequence of names once matched the label 'c' against the
    letters of 'choices'."""
    spec = {"name": "c", "shape": "cloze", "splits": {"train": "t.jsonl"}, "columns": {"context": "s", "options": "choices", "label": "y"}}
    task = make_task(tmp_path, spec, {"t.jsonl": jsonl({"s": "A story.", "choices": ["a", "b"], "y": "c"})})
    with pytest.raises(DataError, match=r"label 'c' is not an integer") as err:
        task.load("train")
    assert "option-name" not in str(err.value) and "declare a mapping under `labels:`" in str(err.value)


def test_a_data_dir_path_without_a_data_folder_says_so():
    from figlang.data.custom import load_split
    from figlang.data.custom_spec import read_task_spec

    spec = read_task_spec(FIXTURES / "impli_manual.yaml")  # its files are {data_dir}/impli/...
    with pytest.raises(DataError, match=r"under the data folder, and none was given.*--data-dir"):
        load_split(spec, "all")
