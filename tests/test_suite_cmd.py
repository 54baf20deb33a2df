"""`figlang suite` (`make run`): its configuration, its samples, the shipped heads, and a run end to end with
smollm2-135m alone (a tiny probe head on smollm2 stands in for the shipped qwen2.5-1.5b one)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.data.registry import get_task
from figlang.evaluation.registry import NUMBER, results_tables
from figlang.evaluation.suite import (
    DEFAULT_MODEL,
    DEFAULT_SUITE,
    FLUTE_LABEL_MODEL,
    IMPLI_FOLD_MODEL,
    GROUPS,
    README_END,
    README_START,
    SuiteResult,
    SuiteRow,
    _sampled_task,
    entry_command,
    publish_suite,
    registry_rows,
    stratified_sample,
    suite_entries,
    suite_markdown,
)

pytestmark = pytest.mark.slow

N = 4
REPO = Path(__file__).resolve().parents[1]
# `figlang suite` is registered in cli/main.py; this runs the command function the same way, in its own process
SUITE = "import typer; from figlang.cli.suite_cmds import suite_cmd; app = typer.Typer(); app.command()(suite_cmd); app()"


def suite(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SUITE, *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200", **(env or {})}
    )


# --- the configuration ------------------------------------------------------------------------------------------


def test_entries_and_selection() -> None:
    names = [e.name for e in DEFAULT_SUITE]
    assert names == ["idiom-best", "idiom-model", "simile-best", "simile-model", "flute-best", "flute-model", "impli-best", "impli-model"]
    assert GROUPS["best"] == names[::2] and GROUPS["model"] == names[1::2]
    assert [e.name for e in suite_entries(["flute", "idiom-model"])] == ["idiom-model", "flute-best", "flute-model"]
    assert [e.name for e in suite_entries(["model"])] == GROUPS["model"]
    assert [e.name for e in suite_entries(["best,impli-model"])] == [*GROUPS["best"][:3], "impli-best", "impli-model"]
    with pytest.raises(FiglangError, match="unknown suite entry"):
        suite_entries(["nope"])


def test_showcase_configuration_is_valid(data_dir: Path) -> None:
    """Two rows a benchmark (figlang's fixed best, then --model) on the same split; the narrative rows on the same
    sample size, the NLI best rows (shipped models that cost milliseconds a pair) on the whole split; the splits exist;
    the methods and models exist; the plain-words descriptions carry no digits (the results registry would read them
    as figures)."""
    from figlang.methods.base import get_methods

    by_benchmark: dict[str, list] = defaultdict(list)
    for e in DEFAULT_SUITE:
        by_benchmark[e.benchmark].append(e)
    assert len(by_benchmark) == 4
    for bench, (best, model) in by_benchmark.items():
        assert best.fixed and not model.fixed, bench
        assert (best.task, best.split) == (model.task, model.split), bench
        task = get_task(best.task)
        split = task.check_split(best.split)
        assert model.limit is not None and 20 <= model.limit < len(task.load(split, data_dir)), bench  # a sample, marked as such
        for e in (best, model):
            assert get_methods().info(e.method) is not None
            about = e.describe(DEFAULT_MODEL)
            assert len(about.split()) >= 8 and not NUMBER.findall(about), about
        assert best.method in ("trained", "ensemble") and best.model.startswith("figlang:")  # a system shipped in the package
        if best.split == "dev-disjoint":  # the narrative heads, on the frozen qwen2.5-1.5b, on the model row's sample
            assert best.limit == model.limit
            assert "qwen2.5-1.5b" in best.describe(DEFAULT_MODEL) and "frozen" in best.describe(DEFAULT_MODEL)
        else:
            assert best.limit is None and best.model in (FLUTE_LABEL_MODEL, IMPLI_FOLD_MODEL)
        assert model.describe("gemma3-270m").startswith("gemma3-270m ")
    # the model rows run the suite's dtype; the fixed ones keep their own (the head's base as trained)
    assert [e.uses_torch_lm for e in DEFAULT_SUITE] == [False, True] * 4


# shipped before ship_head refused modified trees (issue #35): listed, so that re-making one from a clean commit must
# take it off this list, and any new head from a modified tree fails. Empty since idiom-probe-qwen was re-made from
# the clean commit a723ad6 (2026-11-28).
MADE_DIRTY: set[str] = set()


def test_shipped_heads_have_a_complete_record() -> None:
    from figlang.methods.trained.heads import MAX_ADAPTER_BYTES, MAX_HEAD_BYTES, heads_dir, read_record, shipped_heads

    shipped = shipped_heads(heads_dir())
    for e in DEFAULT_SUITE:
        if e.method != "trained":
            continue
        name = e.model.removeprefix("figlang:")
        assert name in shipped, f"{e.name}: {e.model} is not shipped"
        record = read_record(name, heads_dir())
        assert record["code"]["git_commit"] and record["code"]["git_dirty"] is (name in MADE_DIRTY), name  # re-makeable: a clean commit
        assert "/root/" not in json.dumps(record) and "/home/" not in json.dumps(record)
        assert record["data_files"] and all(f["sha256"] for f in record["data_files"])
        if e.model == IMPLI_FOLD_MODEL:
            assert record["base"]["model"] == FLUTE_LABEL_MODEL and len(record["folds"]) == 10
            assert record["file"]["bytes_per_fold"] <= 1024 * 1024
            assert all(f["decision"]["chosen_on"] == f"fold-{f['fold']}-selection" for f in record["folds"])
            continue
        assert record["task"] == e.task and record["selection_split"] == "selection" and record["train_split"] == "train-fit"
        assert set(record["choices_made_on"].values()) == {"selection"}
        if e.model == FLUTE_LABEL_MODEL:
            assert record["lora"]["rank"] and record["head"]["bytes"] <= MAX_ADAPTER_BYTES
            assert record["command"].startswith("figlang train -t flute -m nli --model mpnet --lora-rank")
            continue
        assert record["base_model"]["catalog"] == "qwen2.5-1.5b"
        assert record["base_model"]["revision"] and record["base_model"]["layers_read"]
        assert record["head"]["bytes"] <= MAX_HEAD_BYTES


@pytest.mark.parametrize("figure, epoch, items", [("idiom", 7, 281), ("simile", 10, 266)])
def test_the_meaning_probe_ships_as_its_selection_run_scored_it(figure: str, epoch: int, items: int) -> None:
    """#39 target 1: figlang:<figure>-probe-meaning-qwen is the head of the registered run, made from a clean commit,
    every choice on selection; its training record's selection accuracy is its shipped head's own selection run's
    (idiom 228 of 281, simile 226 of 266)."""
    from figlang.methods.trained.heads import heads_dir, read_record, shipped_heads

    name = f"{figure}-probe-meaning-qwen"
    assert name in shipped_heads(heads_dir())
    record = read_record(name, heads_dir())
    assert record["method"] == "mc-meaning" and record["code"]["git_dirty"] is False
    assert set(record["choices_made_on"].values()) == {"selection"} and record["base_model"]["layers_read"] == 18
    results = Path(__file__).resolve().parents[1] / "docs" / "results"
    run = json.loads((results / f"cpu/{figure}-probe-meaning-qwen-sel/figlang.json").read_text(encoding="utf-8"))
    assert record["head"]["sha256"] and run["best"]["epoch"] == epoch
    rows = [json.loads(x) for x in gzip.open(results / f"ensemble/{figure}-sel-probe-meaning/predictions.jsonl.gz", "rt")]
    assert len(rows) == record["selection_items"] == items
    assert sum(r["correct"] for r in rows) / len(rows) == pytest.approx(run["best"]["dev_accuracy"], abs=1e-12)


# --- the samples -------------------------------------------------------------------------------------------------


def test_stratified_sample_keeps_every_label(data_dir: Path) -> None:
    records = get_task("impli-idioms-manual").load("all", data_dir)
    first = Counter(str(r.label) for r in records[:20])
    assert len(first) == 1  # why the suite samples instead of taking the first N: the files are label by label
    sample = stratified_sample(records, 20, seed=0)
    assert len(sample) == 20 and len({r.id for r in sample}) == 20
    counts = Counter(str(r.label) for r in sample)
    share = Counter(str(r.label) for r in records)
    for label, k in counts.items():
        assert abs(k - 20 * share[label] / len(records)) <= 1
    assert sample == stratified_sample(records, 20, seed=0)  # seeded
    assert {r.id for r in sample} != {r.id for r in stratified_sample(records, 20, seed=1)}
    order = {r.id: i for i, r in enumerate(records)}
    assert [order[r.id] for r in sample] == sorted(order[r.id] for r in sample)  # original order
    assert stratified_sample(records[:5], 20, seed=0) == records[:5]


def test_both_rows_of_a_benchmark_score_the_same_stratified_items(data_dir: Path) -> None:
    seen: dict[str, list[str]] = {}
    for e in DEFAULT_SUITE:
        if e.limit is None:  # a whole split
            continue
        task = get_task(e.task)
        split = task.check_split(e.split)
        whole = task.load(split, data_dir)
        sample = _sampled_task(task, split, e.limit, 0).load(split, data_dir)
        assert len(sample) == e.limit
        share = Counter(str(r.label) for r in whole)
        for label, k in Counter(str(r.label) for r in sample).items():
            assert abs(k - e.limit * share[label] / len(whole)) <= 1, (e.name, label)
        ids = [r.id for r in sample]
        if e.benchmark in seen:
            assert ids == seen[e.benchmark], e.name
        seen[e.benchmark] = ids


# --- shipped heads -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_probe(tmp_path_factory, data_dir: Path) -> Path:
    """A probe head on the first layer of the frozen smollm2-135m, trained on 8 narratives (seconds)."""
    from figlang.api import train

    out = tmp_path_factory.mktemp("probe") / "idiom-probe"
    train(
        "idiom-cloze",
        "mc",
        "smollm2-135m",
        out,
        data_dir=str(data_dir),
        preset="cpu-probe",
        bf16=False,
        base_layers=1,
        limit=8,
        dev_limit=4,
        report_splits=("dev-disjoint",),
        report_limit=2,
        epochs=1,
        batch_size=4,
        threads=1,
        progress=False,
    )
    return out


def test_a_shipped_head_answers_by_name_as_its_run_does(tiny_probe: Path, tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    from figlang.methods.trained.heads import RECORD_FILE, ship_head, shipped_head_dir, shipped_heads
    from figlang.methods.trained.methods import TrainedMethod

    root = tmp_path / "heads"
    folder = ship_head(tiny_probe, "idiom-probe-tiny", root=root, allow_dirty=True)  # the suite may run in a modified tree
    assert sorted(p.name for p in folder.iterdir()) == ["choice_head.safetensors", "figlang.json", RECORD_FILE]  # no base, no tokenizer
    assert sum(p.stat().st_size for p in folder.iterdir()) < 64_000
    record = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
    assert record["base_model"]["catalog"] == "smollm2-135m" and record["base_model"]["layers_read"] == 1
    assert record["selection_split"] == "selection" and record["training"]["seed"] == 0 and record["code"]["git_commit"]
    assert str(tmp_path) not in (folder / "figlang.json").read_text() + (folder / RECORD_FILE).read_text()
    with pytest.raises(FiglangError, match="exists"):
        ship_head(tiny_probe, "idiom-probe-tiny", root=root, allow_dirty=True)
    with pytest.raises(FiglangError, match="head name"):
        ship_head(tiny_probe, "Idiom Probe", root=root, allow_dirty=True)

    monkeypatch.setenv("FIGLANG_HEADS_DIR", str(root))
    assert "idiom-probe-tiny" in shipped_heads() and shipped_head_dir("figlang:idiom-probe-tiny") == folder
    with pytest.raises(FiglangError, match="ships no trained head named 'nope'.*idiom-probe-tiny"):
        TrainedMethod(model="figlang:nope")
    records = get_task("idiom-cloze").load("dev-disjoint", data_dir)[:3]
    by_name = TrainedMethod(model="figlang:idiom-probe-tiny", threads=1)
    by_dir = TrainedMethod(model=str(tiny_probe), threads=1)
    for a, b in zip(by_name.predict(records), by_dir.predict(records)):
        assert a.prediction == b.prediction and a.scores == pytest.approx(b.scores, abs=1e-6)
    assert by_name.config()["model"] == "figlang:idiom-probe-tiny"


def test_a_head_ships_only_from_a_clean_commit(tiny_probe: Path, tmp_path: Path) -> None:
    """A run trained from a modified tree is refused (nobody could check out the code that made it) unless the
    caller asks for a trial folder; the record then says git_dirty."""
    import shutil

    from figlang.methods.trained.heads import RECORD_FILE, ship_head

    for dirty in (True, False):
        run = tmp_path / f"run-{dirty}"
        shutil.copytree(tiny_probe, run)
        meta = json.loads((run / "figlang.json").read_text(encoding="utf-8"))
        meta["provenance"]["code"] = {**meta["provenance"].get("code", {}), "git_commit": "0" * 40, "git_dirty": dirty}
        (run / "figlang.json").write_text(json.dumps(meta), encoding="utf-8")
        if dirty:
            with pytest.raises(FiglangError, match="not trained from a clean commit"):
                ship_head(run, "idiom-probe-dirty", root=tmp_path / "heads")
            folder = ship_head(run, "idiom-probe-dirty", root=tmp_path / "heads", allow_dirty=True)
        else:
            folder = ship_head(run, "idiom-probe-clean", root=tmp_path / "heads")
        assert json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))["code"]["git_dirty"] is dirty


def test_only_a_probe_run_ships(tmp_path: Path) -> None:
    from figlang.methods.trained.heads import ship_head

    run = tmp_path / "run"
    run.mkdir()
    (run / "figlang.json").write_text(json.dumps({"method": "nli", "status": "complete", "input_format": {}}), encoding="utf-8")
    with pytest.raises(FiglangError, match="only a probe"):
        ship_head(run, "flute-nli", root=tmp_path / "heads")
    (run / "figlang.json").write_text(
        json.dumps({"method": "mc", "status": "running", "input_format": {"frozen_base": True}}), encoding="utf-8"
    )
    with pytest.raises(FiglangError, match="not complete"):
        ship_head(run, "idiom", root=tmp_path / "heads")


# --- end to end: smollm2-135m alone ---------------------------------------------------------------------------------


def test_suite_runs_writes_the_table_and_publishes_it(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    args = [
        "--only",
        "model",
        "--model",
        "smollm2-135m",
        "--data-dir",
        str(data_dir),
        "--out",
        str(out),
        "--limit",
        str(N),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--threads",
        "1",
        "--quiet",
    ]
    env: dict[str, str] = {}
    result = suite(*args, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    entries = suite_entries(["model"])
    assert "acc. % [95% CI]" in result.stdout and "Wall time" in result.stdout
    assert "unseen idioms" in result.stdout and "sample of 278, seed 0" in result.stdout

    summary = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    assert summary["model"] == "smollm2-135m" and summary["threads"] == 1
    rows = {r["entry"]: r for r in summary["rows"]}
    assert list(rows) == [e.name for e in entries]
    for entry in entries:
        row = rows[entry.name]
        assert row["n"] == N and row["sampled"] and row["n_split"] > N and row["seed"] == 0
        assert row["method"] == entry.method and row["n_invalid"] == 0 and row["cpu_seconds"] > 0
        acc = row["accuracy"]
        assert acc["n"] == N and 0 <= acc["ci_low"] <= acc["accuracy"] <= acc["ci_high"] <= 1
        assert sum(g["n"] for g in row["by_gold_label"].values()) == N
        assert 0.5 <= row["majority"] <= 1
        folder = out / entry.name
        lines = (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == N
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        assert results["task"]["items"] == N and results["method"]["name"] == entry.method
        assert results["suite_sample"] == {"n": N, "of": row["n_split"], "how": "stratified by gold label", "seed": 0}
        assert results["suite_entry"]["name"] == entry.name
    assert rows["idiom-model"]["model"] == "smollm2-135m"
    assert set(rows["impli-model"]["by_gold_label"]) == {"entailment", "non-entailment"}
    assert rows["flute-model"]["by_type"]["kind"] == "figure_type"

    md = (out / "suite.md").read_text(encoding="utf-8")
    table = [ln for ln in md.split("## Breakdowns")[0].splitlines() if ln.startswith("| ")]
    assert table[0] == "| benchmark | system (what it is) | n | accuracy % [95% CI] | majority % |"
    assert len(table) == 1 + len(entries)
    assert re.search(
        r"\| idiom cloze, unseen idioms \| smollm2-135m scores each ending .* \| 4 \(sample of 278, seed 0\) \| \d+\.\d \[", md
    )
    commands = md.split("```bash")[1].split("```")[0]
    dtype = "float32"  # the default: the same answers on every CPU and thread count
    assert re.search(
        rf"figlang suite --only idiom-model --model smollm2-135m --limit 4 --dtype {dtype} +# figlang eval -t idiom-cloze -s dev-disjoint -m lm-score",
        commands,
    ), commands
    for entry in entries:
        assert f"--only {entry.name} " in commands

    # a rerun answers from the request cache and gives the same numbers
    again = suite(*args, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    for a, b in zip(summary["rows"], rerun["rows"]):
        assert a["accuracy"] == b["accuracy"] and b["cache"]["computed"] == 0 and b["cache"]["cached"] == N

    # publishing: result files (predictions gzip'd) and README's block, which the results registry then reads
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{README_START}\nOLD TABLE\n{README_END}\n\nafter\n", encoding="utf-8")
    dest = tmp_path / "docs" / "results" / "suite"
    publish_suite(out, dest, readme)
    for entry in entries:
        with gzip.open(dest / entry.name / "predictions.jsonl.gz", "rt", encoding="utf-8") as f:
            assert len(f.read().splitlines()) == N
        assert (dest / entry.name / "results.json").is_file()
    text = readme.read_text(encoding="utf-8")
    assert "OLD TABLE" not in text and text.endswith(f"{README_END}\n\nafter\n") and "```bash" in text
    printed = results_tables(text)["suite"]
    assert printed == table[1:]  # README shows the rows of suite.md, the cells the terminal printed
    published = json.loads((dest / "suite.json").read_text(encoding="utf-8"))
    for pick, file, figs in registry_rows(published):
        [line] = [ln for ln in printed if pick in ln]
        assert (dest.parent / file).is_file()
        tokens = NUMBER.findall(line)
        assert len(tokens) == len(figs), (line, figs)  # every number of the row is a registered figure


# --- the printed table ------------------------------------------------------------------------------------------


def _row(entry, n: int, n_split: int, acc: float) -> SuiteRow:
    groups = {"entailment": {"accuracy": 1.0, "n": n // 2}, "non-entailment": {"accuracy": 0.0, "n": n - n // 2}}
    metrics = {"accuracy": {"accuracy": acc, "ci_low": acc - 0.031, "ci_high": acc + 0.029, "n": n}, "by_gold_label": groups}
    return SuiteRow(
        entry, entry.split or "dev", n, n_split, n < n_split, metrics, 0.544, 1.0, None, {}, entry.model_for("smollm2-135m"), 0, 2.0
    )


def _result() -> SuiteResult:
    rows = [_row(e, e.limit or 1157, 1157, 0.571) for e in DEFAULT_SUITE]
    return SuiteResult("smollm2-135m", rows, 551.0, (1.9, 1.8, 1.7), None, None, "float32", 1079.0)


def test_terminal_table_fits_80_columns() -> None:
    """The table a newcomer sees in an 80-column terminal: every line fits, numbers are never folded."""
    from rich.console import Console

    from figlang.cli.suite_cmds import print_suite

    console = Console(width=80, record=True, color_system=None, force_terminal=False)
    print_suite(_result(), to=console)
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 80, "\n" + text
    assert text.count("57.1 [54.0, 60.0]") == len(DEFAULT_SUITE) and text.count(" 54.4") == len(DEFAULT_SUITE)
    assert text.count(f"unseen idioms: n = {DEFAULT_SUITE[0].limit} (sample of") == 1  # a benchmark heads its two rows
    for e in DEFAULT_SUITE:  # each row says what it is, in words (wrapped over its lines)
        assert e.describe("smollm2-135m").split()[0] in text
    assert "stratified by gold label" in text and "Wall time 551 s" in text


def test_the_timing_line_prints_the_seconds_suite_json_records() -> None:
    """The registry recomputes the printed wall time from suite.json: the line prints that recorded figure."""
    from figlang.evaluation.suite import timing_line

    half = dataclasses.replace(_result(), seconds=388.52, cpu_seconds=756.94)  # recorded as 388.5 and 756.9
    assert half.to_dict()["seconds"] == 388.5
    assert timing_line(half).startswith("Wall time 388 s, 757 CPU s")  # what a reader gets from suite.json


def test_markdown_names_every_entry_with_its_command() -> None:
    md = suite_markdown(_result())
    block = md.split("```bash")[1].split("```")[0]
    commands = [ln for ln in block.splitlines() if ln.startswith("figlang ")]
    assert len(commands) == len(DEFAULT_SUITE)
    assert commands[0].startswith(
        "figlang suite --only idiom-best   # figlang eval -t idiom-cloze -s dev-disjoint -m trained --model figlang:idiom-probe-meaning-qwen"
    )
    assert commands[1].startswith("figlang suite --only idiom-model --model smollm2-135m --dtype float32   # ")
    assert commands[-1].endswith("figlang eval -t impli-idioms-manual -s all -m nli-score --model smollm2-135m -O dtype=float32")
    assert entry_command(_result().rows[-1], "m", None) == "figlang suite --only impli-model --model m"
    assert "| impli-best | figlang:impli-folds-flute-mpnet | 1 | 2 | entailment" in md
    assert "figlang eval -t flute -s val -m trained --model figlang:flute-lora-mpnet" in block  # a whole split: its own command


def test_a_missing_head_stops_the_suite_before_any_row(data_dir: Path, tmp_path: Path) -> None:
    import dataclasses

    from figlang.evaluation.suite import run_suite

    missing = dataclasses.replace(DEFAULT_SUITE[0], method="trained", options={}, model="figlang:no-such-head")
    with pytest.raises(FiglangError, match="ships no trained head named 'no-such-head'"):
        run_suite(out=tmp_path / "suite", entries=[DEFAULT_SUITE[1], missing], limit=2, progress=False, ctx=RunContext.create(data_dir))
    assert not (tmp_path / "suite").exists()  # nothing ran


def test_the_explained_pairs_print_below_the_table_in_80_columns() -> None:
    """The FLUTE pairs figlang explained: each with what figlang detected, its label and explanation, and the gold,
    wrapped to the terminal; suite.md lists them with the command that explains one alone."""
    import dataclasses

    from rich.console import Console

    from figlang.cli.suite_cmds import print_suite

    pair = {
        "id": "idiom-12",
        "premise": "He was very tired after the long walk, so tired that he could barely stand up straight at the door.",
        "hypothesis": "He was dead on his feet after the long walk.",
        "gold": "entailment",
        "gold_explanation": "To be dead on one's feet means to be extremely tired.",
        "gold_figure_type": "idiom",
        "label": "entailment",
        "explanation": "Being dead on one's feet means being so tired that one can barely stand, as the premise says.",
        "figure_type": "idiom",
        "idiom": "dead on his feet",
    }
    result = dataclasses.replace(_result(), explained=[pair, {**pair, "id": "sarcasm-3", "idiom": None, "figure_type": "sarcasm"}])
    console = Console(width=80, record=True, color_system=None, force_terminal=False)
    print_suite(result, to=console)
    text = console.export_text()
    assert max(len(ln) for ln in text.splitlines()) <= 80, "\n" + text
    tail = text.split("Three FLUTE val pairs, explained", 1)[1]
    assert tail.count("figlang    entailment (idiom, idiom 'dead on his feet')") == 1 and tail.count("gold       entailment") == 2
    assert "(sarcasm):" in " ".join(tail.split())
    md = suite_markdown(result)
    section = md.split("## Three FLUTE val pairs, explained", 1)[1]
    assert "**idiom-12** (idiom)" in section and "figlang (idiom, idiom 'dead on his feet'): **entailment**" in section
    assert "figlang explain --premise 'He was very tired" in section
    assert "## Three FLUTE" not in suite_markdown(_result())  # nothing explained: no section
