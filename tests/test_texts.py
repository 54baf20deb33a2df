"""Dataset texts that no licence lets us redistribute (#35, docs/data_licences.md): published prediction rows leave them
out (figlang.evaluation.texts, scripts/publish_run.py), readers re-join them from the data folder, and no committed
predictions file of such a dataset carries them."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from pathlib import Path

import pytest
from script_loader import load_script

from figlang.evaluation.compare import compare_runs
from figlang.evaluation.runs import load_run
from figlang.evaluation.texts import STRIP_KEY, apply_edit, policy, strip_rows, strip_texts, stripped_record

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
# committed predictions that still carry texts of a dataset that may not be redistributed, each with why
PENDING = {}
FLUTE_ROW = {
    "id": "val-0",
    "premise": "And the song this shape detracted.",
    "hypothesis": "And the song this shape  suggested.",
    "gold": "contradiction",
    "gold_explanation": "To suggest something means ...",
    "figure_type": "metaphor",
    "pair_type": None,
    "expression": None,
    "prediction": "contradiction",
    "scores": {"entailment": -1.3, "contradiction": 1.3},
    "explanation": "the model's own words",
    "valid": True,
    "correct": True,
    "rougeL": 0.5,
}


def test_flute_rows_keep_everything_but_the_texts():
    out = strip_texts(FLUTE_ROW, "flute")
    assert out == {k: v for k, v in FLUTE_ROW.items() if k not in ("premise", "hypothesis", "gold_explanation")}
    assert strip_texts(FLUTE_ROW, "flute-metaphor") == out and FLUTE_ROW["premise"]  # the row itself is not changed
    assert strip_texts(FLUTE_ROW, "idiom-cloze") is FLUTE_ROW and policy("simile-generation") is None  # MIT: kept


def test_impli_rows_lose_texts_only_where_the_premise_is_pie_english():
    magpie = {"id": "idioms/fig_context_magpie_e-1", "premise": "p", "hypothesis": "h", "gold": "entailment", "expression": "x"}
    pie = {**magpie, "id": "idioms/adversarial_definition_ne_pie-7"}
    assert strip_texts(magpie, "impli") is magpie
    assert strip_texts(pie, "impli-idioms") == {"id": pie["id"], "gold": "entailment", "expression": "x"}
    for rid in ("idioms/fig_context_pie_e-1", "idioms/lit_context_pie_ne-12"):
        assert "premise" not in strip_texts({**magpie, "id": rid}, "impli")
    rows, record = strip_rows([magpie, pie], "impli", "all")
    assert rows[0] is magpie and record is not None and (record["rows"], record["of"]) == (1, 2)
    assert record["fields"] == ["hypothesis", "premise"] and "PIE-English" in record["reason"]
    assert strip_rows([magpie], "impli", "all") == ([magpie], None)  # nothing dropped: nothing to record


def test_the_use_models_rows_lose_their_pie_sentences():
    """The use model's task (benchmarks/train_use_model.py --export) is built from PIE-English's sentences."""
    row = {"id": "use-12", "premise": "[MASK] from start to finish", "hypothesis": "m", "gold": "non-entailment", "expression": "x"}
    assert strip_texts(row, "idiom-use") == {"id": "use-12", "gold": "non-entailment", "expression": "x"}
    assert "train_use_model.py --export" in policy("idiom-use").reason


def test_generator_rows_keep_their_rewrites_as_edits_of_the_sentence():
    row = {
        "source": "pie",
        "origins": ["impli/idioms/fig_context_pie_e.tsv:3"],
        "premise": "He spilled the beans at last.",
        "definition": "revealed the secret",
        "generated": "He revealed the secret at last.",
        "gold": ["He revealed the secret at last.", "He told at last."],
        "category": "exact",
    }
    out = strip_texts(row, "impli-generator")
    assert not {"premise", "generated", "gold"} & set(out) and out["source"] == "pie" and out["definition"] == row["definition"]
    assert apply_edit(row["premise"], out["generated_edit"]) == row["generated"]
    assert [apply_edit(row["premise"], e) for e in out["gold_edits"]] == row["gold"]
    magpie = {**row, "origins": ["impli/idioms/fig_context_magpie_e.tsv:3"]}
    assert strip_texts(magpie, "impli-generator") is magpie


def _run(folder: Path, task: dict, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"task": task, "method": {"name": "m"}, "metrics": {}}), encoding="utf-8")
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_publish_run_strips_and_records_and_load_run_rejoins(tmp_path, monkeypatch, data_dir):
    monkeypatch.chdir(tmp_path)
    publish_run = load_script("scripts/publish_run.py")
    committed = next(RESULTS.glob("zs/flute-val-nli-score-gemma"))
    full = load_run(committed, data_dir=data_dir).rows  # re-joined from the data folder
    assert full[0]["premise"] and full[0]["gold_explanation"]
    results = json.loads((committed / "results.json").read_text(encoding="utf-8"))
    results = {k: results[k] for k in ("task", "data", "metrics")}  # as the run wrote it: nothing stripped yet
    run = _run(tmp_path / "runs" / "flute", results["task"], full)
    (run / "results.json").write_text(json.dumps({**results, "method": {"name": "m"}}), encoding="utf-8")
    publish_run.publish(run, tmp_path / "out", None)
    published = [json.loads(x) for x in gzip.open(tmp_path / "out" / "predictions.jsonl.gz", "rt", encoding="utf-8")]
    assert not any("premise" in r or "hypothesis" in r or "gold_explanation" in r for r in published)
    assert [r["prediction"] for r in published] == [r["prediction"] for r in full] and published[0]["scores"]
    record = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))[STRIP_KEY]
    assert record["fields"] == ["gold_explanation", "hypothesis", "premise"] and record["rows"] == len(full) == 499
    assert load_run(tmp_path / "out", data_dir=data_dir).rows == full  # every text back, in the harness's order
    bare = load_run(tmp_path / "out", data_dir=tmp_path / "no-data")
    assert bare.rows == published and "not re-joined" in (bare.texts_note or "")
    # a data file that is not the one the run read: no texts (they might be another version's), and says which
    copy = tmp_path / "data" / "flute"
    copy.mkdir(parents=True)
    for f in results["data"]["files"]:
        (tmp_path / "data" / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / f["path"]).write_bytes((data_dir / f["path"]).read_bytes() + b" ")
    changed = load_run(tmp_path / "out", data_dir=tmp_path / "data")
    assert changed.rows == published and "is not the file the run read" in (changed.texts_note or "")
    with pytest.raises(Exception, match="needs the items' texts"):
        compare_runs(tmp_path / "out", tmp_path / "out", ci_cluster="context", data_dir=tmp_path / "no-data", n_resamples=10)


def test_narrative_runs_publish_with_their_texts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    publish_run = load_script("scripts/publish_run.py")
    row = {"id": "1", "narrative": "n", "options": ["a", "b"], "gold": 0, "prediction": 0, "valid": True, "correct": True}
    run = _run(tmp_path / "r", {"name": "idiom-cloze", "split": "dev"}, [row])
    publish_run.publish(run, tmp_path / "out", None)
    assert [json.loads(x) for x in gzip.open(tmp_path / "out" / "predictions.jsonl.gz", "rt")] == [row]
    assert STRIP_KEY not in json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))


def _task_of(path: Path, first: dict) -> str | None:
    """The task whose licence policy a committed predictions file falls under: its results.json's, the one its
    describing summary records, else what its rows show (FLUTE ids, IMPLI generator origins, PIE-English lines)."""
    results = path.parent / "results.json"
    if results.is_file():
        return (json.loads(results.read_text(encoding="utf-8")).get("task") or {}).get("name")
    described = stripped_record(path.parent)
    if described is not None:
        return described[STRIP_KEY]["task"]["name"]
    if re.fullmatch(r"(train|val|test|selection)-\d+", str(first.get("id"))):
        return "flute"
    if "origins" in first:
        return "impli-generator"
    if {"line", "idiom", "text"} <= set(first):
        return "pie-english"
    return None


def test_no_committed_predictions_carry_texts_their_licence_keeps_out():
    """Every committed predictions file (plain or gzip'd) of FLUTE, PIE-English or IMPLI's PIE-English rows is free
    of their texts, but for the folders PENDING names with the reason."""
    offending, checked, names = [], 0, set()
    for path in sorted(RESULTS.rglob("*.jsonl*")):  # the predictions, and the other row files (prompt-lookup-val-identity.jsonl)
        rel = path.relative_to(RESULTS).as_posix()
        if rel.startswith(tuple(PENDING)) or not path.name.endswith((".jsonl", ".jsonl.gz")) or path.name == "train_log.jsonl":
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        task = _task_of(path, rows[0]) if rows else None
        if policy(task) is None:
            continue
        checked += 1
        names.add(path.name)
        bad = [r.get("id") for r in rows if strip_texts(r, task) is not r]
        if bad:
            offending.append(f"{rel} ({task}): {len(bad)} rows with texts, e.g. {bad[0]!r}")
    assert checked >= 40 and "prompt-lookup-val-identity.jsonl" in names, (checked, names)
    assert not offending, "run `python scripts/strip_texts.py`:\n" + "\n".join(offending)


OLD_HEAD = "| premise | hypothesis | gold | FLUTE's explanation |"
ID_HEAD = "| id | gold | figlang | figlang's explanation |"


def _example_pages() -> list[Path]:
    """The pages that show the explaining system's side-by-side examples: the examples files beside the FLUTE runs and
    the research page that copies them (docs/results/interpret/ is PIE-English's, another session's)."""
    pages = [p for p in sorted(RESULTS.rglob("*.examples.md")) if "interpret" not in p.relative_to(RESULTS).parts]
    return [*pages, REPO / "docs" / "research" / "flute_explanations.md"]


def test_example_tables_give_flute_ids_not_texts_and_say_how_to_see_them(data_dir):
    """No page quotes FLUTE's premises, hypotheses or gold explanations in a side-by-side table: each row names a FLUTE val
    id, and the page says how to see the item with the data folder."""
    from figlang.data.registry import get_task

    val = {r.id: r for r in get_task("flute").load("val", data_dir)}
    gold_texts = [r.explanation for r in val.values() if r.explanation and len(r.explanation) > 40]
    pages = _example_pages()
    assert len(pages) >= 5, pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert OLD_HEAD not in text, f"{page}: run `python scripts/strip_texts.py --data-dir DATA`"
        lines = text.split("\n")
        heads = [i for i, line in enumerate(lines) if line.startswith(ID_HEAD)]
        assert heads, f"{page}: no example table"
        assert "figlang data show flute -s val --id ID --data-dir DATA" in text, page
        for i in heads:
            rows = list(itertools.takewhile(lambda line: line.startswith("|"), lines[i + 2 :]))
            assert rows and all(row.split(" | ")[0].removeprefix("| ") in val for row in rows), (page, rows[:2])
        assert not [t for t in gold_texts if t in text], page  # FLUTE's own explanations nowhere on the page


def test_side_by_side_tables_give_ids_where_the_licence_keeps_texts_out():
    from figlang.evaluation.explanations import side_by_side_markdown

    example = {**FLUTE_ROW, "gold_explanation": "FLUTE's words", "explanation": "figlang's | words"}
    flute = side_by_side_markdown([example], "flute", "val")
    assert ID_HEAD in flute and "| val-0 | contradiction | contradiction | figlang's \\| words |" in flute
    assert FLUTE_ROW["premise"] not in flute and "FLUTE's words" not in flute
    assert "`figlang data show flute -s val --id ID --data-dir DATA`" in flute
    mine = side_by_side_markdown([example], "my-pairs", "dev")  # a task of one's own: its texts may be shown
    assert OLD_HEAD in mine and FLUTE_ROW["premise"] in mine and "figlang data show" not in mine


def test_data_show_prints_the_items_a_table_names_by_id(data_dir):
    from typer.testing import CliRunner

    from figlang.cli.main import app

    shown = CliRunner().invoke(app, ["data", "show", "flute", "-s", "val", "--id", "val-12", "--id", "val-0", "--data-dir", str(data_dir)])
    assert shown.exit_code == 0, shown.output
    assert [json.loads(x)["id"] for x in re.split(r"(?m)^(?=\{)", shown.output) if x.strip()] == ["val-12", "val-0"]
    assert FLUTE_ROW["premise"] in shown.output
    unknown = CliRunner().invoke(app, ["data", "show", "flute", "-s", "val", "--id", "val-99999", "--data-dir", str(data_dir)])
    assert unknown.exit_code != 0 and "no record with id 'val-99999'" in str(unknown.exception)
