"""IMPLI generator review: export → hand edits → import → stats → finalize, bad rows, resume (real generator, real spaCy)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.builders.impli import load_generated
from figlang.builders.impli.review import (
    current_verdicts,
    export_queue,
    finalize,
    import_verdicts,
    load_pairs,
    queue_items,
    record_verdict,
    review_rates,
)
from figlang.cli.build_impli import app
from figlang.core.errors import DataError

SENTENCES = (
    "He kicked the bucket last year.\tkick the bucket\tfigurative\n"
    "She lost her temper.\tlose one's temper\tfigurative\n"
    "They spilled the beans at the meeting.\tspill the beans\tfigurative\n"
    "The cook spilled the beans on the floor.\tspill the beans\tliteral\n"
)
LEXICON = "kick the bucket\tdie\nlose one's temper\tlose one's composure\nspill the beans\treveal the secret\n"


def make_output(tmp: Path) -> Path:
    """A real generator output folder: `figlang build impli substitute` on four sentences."""
    (tmp / "s.tsv").write_text(SENTENCES, encoding="utf-8")
    (tmp / "lex.tsv").write_text(LEXICON, encoding="utf-8")
    out = tmp / "gen"
    result = CliRunner().invoke(
        app, ["substitute", "-s", str(tmp / "s.tsv"), "-l", str(tmp / "lex.tsv"), "-o", str(out), "--source", "demo"]
    )
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_output(tmp_path_factory.mktemp("impli-review"))


@pytest.fixture()
def out(generated: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(generated, tmp_path / "gen")
    return tmp_path / "gen"


def _ids(out: Path) -> dict[str, str]:
    """Pair id by premise."""
    return {p["premise"]: pid for pid, p in load_pairs(out).items()}


def test_round_trip_export_edit_import_stats_finalize(out: Path, tmp_path: Path) -> None:
    pairs = load_pairs(out)
    assert len(pairs) == 4 and {p["pair_type"] for p in pairs.values()} == {"fig_context", "lit_context"}
    queue = tmp_path / "queue.csv"
    assert export_queue(out, queue) == 4
    with queue.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_premise = {r["premise"]: r for r in rows}
    by_premise["He kicked the bucket last year."]["verdict"] = "accept"
    edited = by_premise["She lost her temper."]
    edited.update(verdict="edit", edited_hypothesis="She lost her calm.")
    by_premise["They spilled the beans at the meeting."].update(verdict="reject", reason="definition does not fit", note="too literal")
    relabel = by_premise["The cook spilled the beans on the floor."]
    relabel.update(verdict="edit", edited_label="entailment")
    with queue.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    result = CliRunner().invoke(app, ["review-import", str(out), str(queue)])
    assert result.exit_code == 0, result.output
    assert "4 verdict(s) stored" in result.output
    rates = review_rates(out)
    assert rates["fig_context"] == {"candidates": 3, "reviewed": 3, "accept": 1, "edit": 1, "reject": 1, "unreviewed": 0}
    assert rates["lit_context"]["edit"] == 1 and rates["all"]["reviewed"] == 4
    stats = CliRunner().invoke(app, ["review-stats", str(out), "--json"])
    assert json.loads(stats.stdout)["reject_reasons"] == {"definition_does_not_fit": 1}
    assert export_queue(out, tmp_path / "left.jsonl") == 0  # nothing left to review

    fin = CliRunner().invoke(app, ["finalize", str(out)])
    assert fin.exit_code == 0, fin.output
    final = out / "final"
    assert (final / "impli/idioms/fig_context_demo_e.tsv").read_text().splitlines() == [
        "He kicked the bucket last year.\tHe died last year.",
        "She lost her temper.\tShe lost her calm.",
    ]
    assert (final / "impli/relabelled/lit_context_demo_ne_e.tsv").read_text().startswith("The cook spilled the beans on the floor.\t")
    manifest = json.loads((final / "manifest.json").read_text())
    assert manifest["pairs"] == 3 and manifest["left_out"] == {"rejected: definition_does_not_fit": 1}
    # the kept-label files read back with figlang's IMPLI loader (final/ is laid out as a generator folder)
    back = load_generated(final)
    assert [p.hypothesis for p in back] == ["He died last year.", "She lost her calm."]


def test_bad_rows_are_located_and_left_out(out: Path, tmp_path: Path) -> None:
    ids = _ids(out)
    first = ids["He kicked the bucket last year."]
    rows = [
        {"id": "nope", "verdict": "accept"},
        {"id": first, "verdict": "reject"},  # no reason
        {"id": ids["She lost her temper."], "verdict": "edit", "edited_label": "maybe"},
        {"id": ids["The cook spilled the beans on the floor."], "verdict": "reject", "reason": "other"},
        {"id": ids["They spilled the beans at the meeting."], "verdict": "edit"},
        {"id": first, "verdict": "accept"},
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n", encoding="utf-8")
    report = import_verdicts(out, path)
    assert report.stored == 0 and len(report.errors) == 7, report.errors
    joined = "\n".join(report.errors)
    for where, what in (
        (1, "unknown id 'nope'"),
        (2, "a rejection needs a reason"),
        (3, "edited_label 'maybe' is not"),
        (4, "reason 'other' needs a note"),
        (5, "verdict 'edit' but no edited_"),
        (6, "duplicate id"),
        (7, "malformed JSON"),
    ):
        assert f"{path}:{where}: {what}" in joined
    single = record_verdict(out, {"id": first, "verdict": "reject", "reason": "boring"}, "form")
    assert single.errors == [
        "form: reason 'boring' is not one of ungrammatical, definition_does_not_fit, label_wrong, not_figurative, other"
    ]
    single = record_verdict(out, {"id": first, "verdict": "accept", "edited_hypothesis": "He was calm."}, "form")
    assert "use verdict 'edit'" in single.errors[0] and single.stored == 0
    assert current_verdicts(out) == {}
    result = CliRunner().invoke(app, ["review-import", str(out), str(path)])
    assert result.exit_code == 1 and "rows not imported" in result.output
    with pytest.raises(DataError, match="not an IMPLI generator output folder"):
        load_pairs(tmp_path / "empty")


def test_verdicts_stored_one_at_a_time_survive_a_new_process(out: Path) -> None:
    items = queue_items(out)
    report = record_verdict(out, {"id": items[0]["id"], "verdict": "accept"}, "test")
    assert report.stored == 1 and not report.errors
    report = record_verdict(out, {"id": items[1]["id"], "verdict": "reject", "reason": "ungrammatical"}, "test")
    assert report.stored == 1
    assert not list((out / "review").glob("*.tmp*"))  # the atomic write left no temporary file
    code = (
        "import json, sys; from figlang.builders.impli.review import review_rates, queue_items;"
        "print(json.dumps([review_rates(sys.argv[1])['all'], [i['review'] and i['review']['verdict'] for i in queue_items(sys.argv[1])]]))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=True)
    rates, verdicts = json.loads(done.stdout)
    assert rates["reviewed"] == 2 and rates["unreviewed"] == 2
    assert verdicts[:2] == ["accept", "reject"] and verdicts[2:] == [None, None]
    # a pair generated again with other text is unreviewed again: the old verdict judged other words
    jsonl = sorted((out / "jsonl").glob("*.jsonl"))[0]
    recs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    recs[0]["hypothesis"] += " Indeed."
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert items[0]["id"] not in current_verdicts(out)
    assert finalize(out)["left_out"]["unreviewed"] == 3
