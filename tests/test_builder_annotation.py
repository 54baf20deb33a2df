"""The annotation round trip (export → writers' answers → benchmark records) and the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from figlang.builders.annotation import TASK_FIELDS, export_tasks, import_answers, load_candidates
from figlang.cli.build_narratives import app
from figlang.data.narrative import load_cloze
from figlang.core.errors import LoadOptions, LoadReport

NARR = (
    "Cal was depending on me. I loved my little brother. He was all I really had. He deserved the best chance. "
    "One day he would <b>go places</b>, I was sure of it."
)
SIM = "It rained for days. The fields were flooded. Nobody could work. We stayed indoors. The old house felt <b>like a tomb</b>."


def _candidates(tmp_path: Path) -> Path:
    recs = [
        {
            "id": "d1#s5:idiom:14:go places",
            "narrative": NARR,
            "idiom": "go places",
            "meaning": "To succeed.",
            "option1": "",
            "option2": "",
            "correctanswer": "",
            "type": "idiom",
            "sentence": "One day he would go places, I was sure of it.",
            "matched": "go places",
            "source": {"doc": "d1", "line": 3},
        },
        {
            "id": "d2#s4:simile:20:like a tomb",
            "narrative": SIM,
            "simile": "like a tomb",
            "property": "cold and silent",
            "option1": "",
            "option2": "",
            "correctanswer": "",
            "type": "simile",
            "sentence": "The old house felt as silent as a tomb.",
            "matched": "as silent as a tomb",
            "source": {"doc": "d2", "line": 9},
        },
    ]
    out = tmp_path / "mined"
    out.mkdir()
    (out / "narratives.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return out


def _fill(rows: list[dict]) -> list[dict]:
    answers = [
        ("He became a doctor and moved to the city.", "He never left his room again.", "no"),  # fine
        ("The house warmed up by evening.", "It was full of music and laughter.", ""),  # fine simile
    ]
    for row, (p, i, lit) in zip(rows, answers):
        row.update(plausible_continuation=p, implausible_continuation=i, literal_use=lit)
    bad = []
    base = dict(rows[0])
    bad.append({**base, "plausible_continuation": ""})  # missing continuation
    bad.append({**base, "implausible_continuation": "He became a doctor and moved to the city!"})  # duplicated
    bad.append({**base, "plausible_continuation": "I loved my little brother."})  # repeats the narrative
    bad.append({**base, "task_id": "d3#s9:idiom:0:go places", "literal_use": "yes"})  # literal: dropped
    bad.append({**base, "literal_use": "maybe"})  # unreadable flag
    bad.append({**base, "narrative": NARR.replace("Cal", "Bob")})  # edited narrative (caught with --tasks)
    bad.append(dict(rows[0]))  # the same task answered twice
    bad.append({**base, "task_id": "", "type": ""})  # missing fields
    return rows + bad


def test_round_trip_csv_with_validation(tmp_path, data_dir):
    mined = _candidates(tmp_path)
    tasks = tmp_path / "tasks.csv"
    assert export_tasks(load_candidates(mined), tasks) == 2
    with open(tasks, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == TASK_FIELDS
    assert rows[0]["definition"] == "To succeed." and rows[1]["definition"] == "cold and silent"
    assert all(r["plausible_continuation"] == "" and r["literal_use"] == "" for r in rows)
    answers = tmp_path / "answers.csv"
    with open(answers, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TASK_FIELDS)
        w.writeheader()
        w.writerows(_fill(rows))
    out = tmp_path / "imported"
    report = import_answers(answers, out, tasks_file=tasks)
    assert report.rows == 10 and len(report.accepted) == 2 and len(report.literal) == 1
    by_line = {r["line"]: r["reasons"] for r in report.rejected}
    assert sorted(by_line) == [4, 5, 6, 8, 9, 10, 11]
    assert by_line[4] == ["missing continuation: plausible_continuation"]
    assert by_line[5][0].startswith("duplicated continuation")
    assert by_line[6] == ["continuation repeats the narrative: plausible_continuation"]
    assert by_line[8][0].startswith("unreadable literal_use")
    assert by_line[9] == ["narrative edited: it differs from the exported task"]
    assert by_line[10][0].startswith("duplicate task: task_id already answered at line 2")
    assert "missing field: task_id" in by_line[11] and "missing field: type" in by_line[11]
    # the imported files have exactly the benchmark's fields and load with figlang's narrative loader
    idiom = [json.loads(line) for line in (out / "idiom.jsonl").read_text(encoding="utf-8").splitlines()]
    assert list(idiom[0]) == ["narrative", "meaning", "idiom", "option1", "option2", "correctanswer"]
    plausible = idiom[0][idiom[0]["correctanswer"]]
    assert plausible == "He became a doctor and moved to the city."
    simile = json.loads((out / "simile.jsonl").read_text(encoding="utf-8"))
    assert list(simile) == ["narrative", "option1", "option2", "correctanswer", "simile", "property"]
    root = tmp_path / "data" / "fig_narrative" / "data"
    for kind in ("idiom", "simile"):
        (root / kind).mkdir(parents=True)
        (root / kind / "train.jsonl").write_text((out / f"{kind}.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
        recs = load_cloze(kind, "train", tmp_path / "data", LoadOptions(report=LoadReport()), inferences=False)
        assert len(recs) == 1 and recs[0].reference is not None
    assert json.loads((out / "import_report.json").read_text())["rejected"] == 7
    assert len((out / "rejected.jsonl").read_text().splitlines()) == 7


def test_jsonl_answers_and_cli(tmp_path, data_dir):
    mined = _candidates(tmp_path)
    runner = CliRunner()
    tasks = tmp_path / "tasks.jsonl"
    res = runner.invoke(app, ["export", str(mined), "--out", str(tasks), "--type", "idiom"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in tasks.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in rows] == ["idiom"]
    rows[0].update(plausible_continuation="He became a famous surgeon.", implausible_continuation="He failed every class.")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps(rows[0]) + "\n{oops\n", encoding="utf-8")
    res = runner.invoke(app, ["import", str(answers), "--out", str(tmp_path / "imp"), "--tasks", str(tasks)])
    assert res.exit_code == 0, res.output
    assert "accepted idiom" in res.output and "rejected" in res.output and "malformed JSON" in res.output
    assert len((tmp_path / "imp" / "idiom.jsonl").read_text().splitlines()) == 1


def test_cli_mine_summary_and_bad_lexicon(tmp_path, data_dir):
    story = (
        "Cal was depending on me. I loved my little brother. He was all I really had, and he needed me. "
        "He deserved the best chance at a normal life. Cal was smart and full of plans. One day he would go places, "
        "I was sure of it. When he heard the news, he turned as white as a sheet."
    )
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "story.txt").write_text(story + "\n", encoding="utf-8")
    (tmp_path / "c" / "empty.txt").write_text("", encoding="utf-8")
    lex = tmp_path / "lex.tsv"
    lex.write_text("go places\tto succeed\nbroken line\ngo places\tsucceed\n", encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "mine",
            str(tmp_path / "c"),
            "--out",
            str(tmp_path / "out"),
            "--lexicon",
            str(lex),
            "--min-words",
            "10",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert res.exit_code == 0, res.output
    out = res.output
    for label in (
        "documents",
        "sentences",
        "pre-filtered out",
        "parsed",
        "idiom hits",
        "simile hits",
        "narratives written",
        "skipped: empty file",
    ):
        assert label in out, label
    assert f"{lex}:2" in out and "duplicate idiom" in out
    recs = [json.loads(line) for line in (tmp_path / "out" / "narratives.jsonl").read_text().splitlines()]
    assert sorted(r["type"] for r in recs) == ["idiom", "simile"]
    res = runner.invoke(app, ["check-lexicon", str(lex)])
    assert res.exit_code == 1 and "no tab" in res.output
