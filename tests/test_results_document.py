"""The results document (issue 34): results.json is a typed ResultsDocument whose per-item scores are a real field
(they go into the predictions file), and whose JSON one method writes, with the bytes figlang always wrote."""

from __future__ import annotations

import json
from pathlib import Path

from figlang.evaluation import evaluate, write_run
from figlang.evaluation.results import SECTIONS, ResultsDocument


def test_a_run_has_a_typed_document_written_as_results_json(data_dir: Path, tmp_path: Path) -> None:
    run = evaluate("flute", "majority", split="val", data_dir=data_dir, out_dir=tmp_path / "run", progress=False, use_cache=False)
    doc = run.document
    assert isinstance(doc, ResultsDocument) and doc.task["name"] == "flute" and doc.scored and doc.per_item == {}
    text = (tmp_path / "run" / "results.json").read_text(encoding="utf-8")
    assert text == json.dumps(run.results, ensure_ascii=False, indent=2) + "\n"  # the dict a run returns is the file
    on_disk = json.loads(text)
    assert list(on_disk)[: len(SECTIONS) + 1] == ["format", *SECTIONS] and "_per_item" not in on_disk
    assert list(on_disk)[len(SECTIONS) + 1 :] == list(doc.extra)  # the caller's keys follow, in order
    again = ResultsDocument.read(tmp_path / "run" / "results.json")
    again.write(tmp_path / "copy.json")
    assert (tmp_path / "copy.json").read_text(encoding="utf-8") == text  # read back and written again: the same bytes


def test_per_item_scores_go_to_the_predictions_file_not_results_json(data_dir: Path, tmp_path: Path) -> None:
    run = evaluate("flute", "majority", split="val", data_dir=data_dir, limit=3, progress=False, use_cache=False)
    doc = run.document
    ids = [r.id for r in run.records]
    doc.per_item = {"explanation_score": {ids[0]: 0.75, ids[1]: 0.25}}
    write_run(tmp_path, doc, run.records, run.predictions)
    rows = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row.get("explanation_score") for row in rows] == [0.75, 0.25, None]
    on_disk = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert "explanation_score" not in json.dumps(on_disk) and on_disk == doc.to_dict()
    assert doc.per_item  # writing does not consume the document (no key popped out of it)
