"""Bad input gets a clear error naming file and line, or a reported skip in lenient mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from figlang.core.errors import DataError, DataNotFoundError, LoadReport
from figlang.data.registry import get_task


@pytest.fixture()
def idiom_dev(data_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """A data dir holding only a copy of idiom dev (no inference files), and its lines."""
    target = tmp_path / "fig_narrative" / "data" / "idiom" / "dev.jsonl"
    target.parent.mkdir(parents=True)
    lines = (data_dir / "fig_narrative" / "data" / "idiom" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return target, lines


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_malformed_json_line_strict_and_lenient(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    lines[6] = lines[6][:50]  # truncated JSON on line 7
    _write(path, lines)
    with pytest.raises(DataError) as info:
        get_task("idiom-cloze").load("dev", tmp_path)
    assert info.value.line == 7 and info.value.path == str(path)
    assert f"{path}:7: malformed JSON" in str(info.value)
    report = LoadReport()
    records = get_task("idiom-cloze").load("dev", tmp_path, lenient=True, report=report)
    assert len(records) == 354 and report.skipped == 1
    assert any(w.line == 7 for w in report.warnings)
    assert [r.id for r in records[5:7]] == ["idiom-dev-5", "idiom-dev-7"]  # ids follow the line: a skip shifts none
    # missing inference files are said, not hidden
    assert any("no context inferences" in str(w) for w in report.warnings)


def test_missing_field(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    obj = json.loads(lines[2])
    del obj["option2"]
    lines[2] = json.dumps(obj)
    _write(path, lines)
    with pytest.raises(DataError, match=r"dev.jsonl:3: missing field 'option2'"):
        get_task("idiom-cloze").load("dev", tmp_path)


def test_unknown_label(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    obj = json.loads(lines[0])
    obj["correctanswer"] = "option3"
    lines[0] = json.dumps(obj)
    _write(path, lines)
    with pytest.raises(DataError, match=r"dev.jsonl:1: unknown label 'option3'"):
        get_task("idiom-cloze").load("dev", tmp_path)
    report = LoadReport()
    assert len(get_task("idiom-cloze").load("dev", tmp_path, lenient=True, report=report)) == 354


def test_wrong_type_and_empty_field(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    obj = json.loads(lines[4])
    obj["option1"] = 5
    lines[4] = json.dumps(obj)
    obj = json.loads(lines[5])
    obj["option1"] = "   "
    lines[5] = json.dumps(obj)
    _write(path, lines)
    with pytest.raises(DataError, match=r":5: field 'option1' should be str, got int"):
        get_task("idiom-cloze").load("dev", tmp_path)
    report = LoadReport()
    get_task("idiom-cloze").load("dev", tmp_path, lenient=True, report=report)
    assert [w.line for w in report.warnings if w.line] == [5, 6]


def test_wrong_encoding(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    text = "\n".join(lines[:3]) + "\n" + lines[3].replace("the", "thé", 1) + "\n"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataError, match=r"dev.jsonl:4: cannot decode byte 0xe9 as utf-8"):
        get_task("idiom-cloze").load("dev", tmp_path)


def test_empty_and_missing_files(idiom_dev, tmp_path: Path) -> None:
    path, _ = idiom_dev
    path.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(DataError, match="file is empty"):
        get_task("idiom-cloze").load("dev", tmp_path)
    with pytest.raises(DataNotFoundError, match="figlang data download"):
        get_task("simile-cloze").load("dev", tmp_path)


def test_json_line_that_is_not_an_object(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    lines[1] = "[1, 2]"
    _write(path, lines)
    with pytest.raises(DataError, match=r":2: expected a JSON object, got list"):
        get_task("idiom-cloze").load("dev", tmp_path)


def test_impli_short_row_and_bad_score(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "impli" / "idioms"
    folder.mkdir(parents=True)
    lines = (data_dir / "impli" / "idioms" / "lit_context_pie_ne.tsv").read_text(encoding="utf-8").splitlines()
    lines[3] = "only one column"
    lines[4] = lines[4].rsplit("\t", 1)[0] + "\tnot-a-number"
    (folder / "lit_context_pie_ne.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    from figlang.core.errors import LoadOptions
    from figlang.data.impli import FILES, load_impli_file

    spec = next(f for f in FILES if f.path == "idioms/lit_context_pie_ne.tsv")
    with pytest.raises(DataError, match=r"lit_context_pie_ne.tsv:4: expected at least 2 tab-separated columns"):
        load_impli_file(spec, tmp_path, LoadOptions())
    report = LoadReport()
    pairs = load_impli_file(spec, tmp_path, LoadOptions(lenient=True, report=report))
    assert len(pairs) == 55 and [w.line for w in report.warnings] == [4, 5]


def test_flute_instruction_outside_template(data_dir: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(data_dir / "flute", tmp_path / "flute")
    path = tmp_path / "flute" / "FLUTEfinalval.json"
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[9])
    obj["translation"]["en1"] = "Is this entailed?"
    lines[9] = json.dumps(obj)
    obj = json.loads(lines[10])
    obj["translation"]["en2"] = "Maybe. Who knows."
    lines[10] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"FLUTEfinalval.json:10: instruction does not follow FLUTE's template"):
        get_task("flute").load("val", tmp_path)
    report = LoadReport()
    assert len(get_task("flute").load("val", tmp_path, lenient=True, report=report)) == 497
    assert [w.line for w in report.warnings] == [10, 11]


def test_cli_reports_errors_without_traceback(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    lines[6] = "{not json"
    _write(path, lines)
    run = subprocess.run(
        [sys.executable, "-m", "figlang.cli.main", "data", "show", "idiom-cloze", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "dev.jsonl:7: malformed JSON" in run.stderr.replace("\n", "")


def test_line_separator_characters_inside_json_strings(idiom_dev, tmp_path: Path) -> None:
    path, lines = idiom_dev
    obj = json.loads(lines[0])
    obj["option1"] = "He paused\u2028and then\u0085went on."
    lines[0] = json.dumps(obj, ensure_ascii=False)
    lines[2] = "{broken"
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")  # CRLF too
    with pytest.raises(DataError) as info:
        get_task("idiom-cloze").load("dev", tmp_path)
    assert info.value.line == 3
    records = get_task("idiom-cloze").load("dev", tmp_path, lenient=True, report=LoadReport())
    assert records[0].options[0] == "He paused\u2028and then\u0085went on." and len(records) == 354


def test_atomic_write_leaves_a_normal_file_and_nothing_half_written(tmp_path: Path) -> None:
    import os

    from figlang.core.io import atomic_write

    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "results.json") as f:
            f.write("{}")
        assert (tmp_path / "results.json").stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
        os.chmod(tmp_path / "results.json", 0o664)
        with atomic_write(tmp_path / "results.json") as f:  # a replaced file keeps its permissions
            f.write("{}")
        assert (tmp_path / "results.json").stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old)
    with pytest.raises(RuntimeError), atomic_write(tmp_path / "results.json") as f:
        f.write("half")
        raise RuntimeError("interrupted")
    assert (tmp_path / "results.json").read_text() == "{}" and len(list(tmp_path.iterdir())) == 1


def test_file_lock_makes_read_merge_write_take_turns(tmp_path: Path) -> None:
    """Processes that read a shared file, add to it and write it back, under ``file_lock``, lose nothing."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_append_under_lock, args=(tmp_path, i)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert all(w.exitcode == 0 for w in workers)
    assert sorted(json.loads((tmp_path / "shared.json").read_text())) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]


def _append_under_lock(folder: Path, i: int) -> None:
    import time

    from figlang.core.io import atomic_write, file_lock

    for _ in range(3):
        with file_lock(folder / ".lock"):
            path = folder / "shared.json"
            items = json.loads(path.read_text()) if path.exists() else []
            time.sleep(0.05)  # without the lock, another process reads the old list here and one write is lost
            with atomic_write(path) as f:
                f.write(json.dumps([*items, i]))


def test_a_broken_inference_line_costs_one_record_its_inferences(data_dir: Path, tmp_path: Path) -> None:
    """Inferences are aligned by line: one malformed inference line must not shift every later record's."""
    src = data_dir / "fig_narrative" / "data"
    for folder in ("simile", "simile_inferences_context", "simile_inferences_literal"):
        (tmp_path / "fig_narrative" / "data" / folder).mkdir(parents=True)
        lines = (src / folder / "dev.jsonl").read_text(encoding="utf-8").splitlines()
        if folder == "simile_inferences_context":
            lines[4] = lines[4][:40]  # line 5 is truncated JSON
        _write(tmp_path / "fig_narrative" / "data" / folder / "dev.jsonl", lines)
    with pytest.raises(DataError, match="malformed JSON"):
        get_task("simile-cloze").load("dev", tmp_path)
    report = LoadReport()
    records = get_task("simile-cloze").load("dev", tmp_path, lenient=True, report=report)
    assert len(records) == 376 and report.skipped == 1  # the broken inference line; no record was dropped
    without = [r.id for r in records if "context" not in r.inferences]
    assert without == ["simile-dev-4"]  # only the record on line 5
    assert all("literal" in r.inferences for r in records)
    assert any("no context inferences" in str(w) and "line 5" in str(w) for w in report.warnings)
    clean = get_task("simile-cloze").load("dev", data_dir)
    assert [r.inferences for r in records if r.id != "simile-dev-4"] == [r.inferences for r in clean if r.id != "simile-dev-4"]
