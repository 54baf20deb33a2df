"""Every figure README.md and docs/ quote is backed by a committed result file (docs/results/INDEX.yaml).

The registry test fails when a registered figure has no file or key, when the printed text differs from
the file by one unit in its last printed digit, and when a marked results table prints a number that no
registered figure backs (outside rows that say they have no result file).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from figlang.evaluation.prose_figures import MINUS, flatten, headline_numbers, load_not_figures, printed_sign
from figlang.evaluation.registry import (
    NO_RESULT_FILE,
    Figure,
    check_index,
    check_pages,
    figure_value,
    has_predictions,
    load_index,
    marked_without_file,
    matches,
    missing_predictions,
    regenerate_tables,
    results_tables,
    unmarked_numbers,
    unmarked_tables,
)

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
PAPER = "docs/research/paper_outputs.md"  # the paper-output and baseline tables (README.md's until the docs site, #38)
# README and every page of the documentation site (docs/results/ holds result files, not pages)
DOCS = [
    "README.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md") if p.relative_to(REPO / "docs").parts[0] != "results"),
]


@pytest.fixture(scope="module")
def figures() -> list[Figure]:
    return load_index(RESULTS)


def test_every_registered_figure_matches_its_result_file(figures):
    assert len(figures) >= 90
    problems = check_index(figures, RESULTS, REPO)
    assert not problems, "\n".join(problems[:20])


def test_every_number_of_a_marked_results_table_is_registered(figures):
    tables_seen = 0
    problems: list[str] = []
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        tables_seen += len(results_tables(text))
        problems += unmarked_numbers(doc, text, figures)
    assert tables_seen >= 4  # README's suite table, the paper-output and baseline tables at least
    assert not problems, "\n".join(problems[:20])


def test_a_figure_one_unit_off_in_its_last_digit_fails(figures):
    """Change each kind of printed figure by one unit of its last digit: the check must catch it."""
    picked = {f.text.count(".") and len(f.text.split(".")[1]): f for f in figures if "," not in f.text}  # one per precision
    assert len(picked) >= 3
    for figure in picked.values():
        places = len(figure.text.split(".")[1]) if "." in figure.text else 0
        for step in (1, -1):
            shifted = f"{float(figure.text) + step * 10**-places:.{places}f}"
            wrong = dataclasses.replace(figure, text=shifted)
            assert not matches(figure_value(figure, RESULTS), shifted), wrong.where
            assert check_index([wrong], RESULTS, REPO), f"{wrong.where} passed the check"


def test_a_table_number_without_a_file_fails_unless_its_row_says_so(figures, tmp_path):
    readme = (REPO / PAPER).read_text(encoding="utf-8")
    rows = results_tables(readme)["baselines"]
    extra = "| impli / all | coin flip | 50.00 [47.1, 52.9] | `figlang eval -t impli -m random` |"
    changed = readme.replace(rows[-1], rows[-1] + "\n" + extra)
    problems = unmarked_numbers(PAPER, changed, figures)
    assert len(problems) == 3 and all("coin flip" in p for p in problems)
    marked = readme.replace(rows[-1], rows[-1] + "\n" + extra.replace("impli / all", f"impli / all {NO_RESULT_FILE}"))
    assert not unmarked_numbers(PAPER, marked, figures)  # in the first cell: the whole row
    # elsewhere the marker excuses its own cell only
    cell = "| impli / all | coin flip | 50.00 " + NO_RESULT_FILE + " | [47.1, 52.9] | `figlang eval -t impli -m random` |"
    problems = unmarked_numbers(PAPER, readme.replace(rows[-1], rows[-1] + "\n" + cell), figures)
    assert [p.split(": ")[1].split(" ")[0] for p in problems] == ["47.1", "52.9"]
    # a registered figure whose file is gone
    gone = dataclasses.replace(figures[0], file="nowhere/results.json")
    assert any("does not exist" in p for p in check_index([gone], RESULTS, REPO))


def test_regenerating_the_tables_from_the_files_restores_a_changed_figure(figures):
    readme = (REPO / PAPER).read_text(encoding="utf-8")
    same, changes = regenerate_tables(readme, PAPER, figures, RESULTS)
    assert same == readme and changes == []
    figure = next(f for f in figures if f.table == "baselines" and f.id == "accuracy")
    row = next(r for r in results_tables(readme)["baselines"] if figure.row in r)
    broken = readme.replace(row, row.replace(figure.text, "12.34", 1))
    fixed, changes = regenerate_tables(broken, PAPER, figures, RESULTS)
    assert fixed == readme and changes == [f"{PAPER} baselines {figure.row}: 12.34 -> {figure.text}"]


def test_figlang_report_readme_tables_rewrites_the_readme(tmp_path, figures):
    from typer.testing import CliRunner

    from figlang.cli.main import app

    readme = (REPO / PAPER).read_text(encoding="utf-8")
    figure = next(f for f in figures if f.table == "paper-discriminative")
    row = next(r for r in results_tables(readme)["paper-discriminative"] if figure.row in r)
    copy = tmp_path / "paper_outputs.md"  # a copy outside the repository: found by its file name in INDEX.yaml
    copy.write_text(readme.replace(row, row.replace(figure.text, "99.99", 1)), encoding="utf-8")
    res = CliRunner().invoke(app, ["report", str(RESULTS), "--readme-tables", str(copy)])
    assert res.exit_code == 0, res.output
    assert copy.read_text(encoding="utf-8") == readme and "99.99 ->" in res.output


# Registered figures whose result folder keeps no per-item predictions, each excused in INDEX.yaml with a reason
# (GPU runs, deleted CPU runs still to be re-made, summaries that write no per-item file). A ratchet: re-making a
# run lowers it; a new figure without predictions must raise it here, in review, with its reason in INDEX.yaml.
MAX_WITHOUT_PREDICTIONS = 928  # 2026-12-07, thirteenth session (#39; was 924): +4 figures of the two writers trained for the examples lever (explain/flute-iro-writer-2000*/: the kept dev loss, the training minutes; the trainer keeps no per-item losses). Earlier, 2026-12-07, twelfth session (#39; was 900): +24 figures of two benchmarks on the AMX Xeon, which score no items: the bound on one explanation with the writing added (explain/bound-amx.json: per dtype the peak matrix-product rate, the prompt's bound, the prefill, the memory read rate, a pass's bound, the drafted pass, the pair's bound and the model's pair; the passes a pair, the decoding bound, the prefill's share of the peak) and the explainer's speed with whole prompts (explain/bench-amx-2threads-whole-prompt.json: loading, one new pair, the same pair again, six pairs, val minutes). Earlier, 2026-11-29, tenth session (#39; was 890): +10 figures of the bound on one explanation's prompt on an AMD EPYC (explain/bound-amd-epyc.json: the peak matrix-product rate, the prompt's lower bound, the model's prefill, its share of the peak, the longest prompt inside 2 s, per dtype; a benchmark on random tokens, no items). Earlier, 2026-11-29, ninth session (#39; was 875): +2 figures of the bfloat16/float32 forward speed on an AMD EPYC that the scoring how-to and the speed page quote for dtype=auto (bench/cpu_forward_bf16_amd_epyc.json; random tokens, a benchmark, no items), and +13 of the explainer speed by backend on that AMD EPYC (explain/bench-amd-epyc-backends.json: seconds and CPU seconds of one pair and a batch per setting; a benchmark, no items). Earlier, 2026-11-28, seventh session (#35; was 883): -8 figures that now name their run: the idiom probe's training record (its selection accuracy is the shipped head's own selection run, ensemble/idiom-sel-probe, recomputed by test_summary_rows_agree_with_the_runs_they_name) and the prompt-lookup replay (the explain run whose answers it replays). Earlier, 2026-11-28, sixth session (#35; was 1130): -247 figures of summaries that now name, row by row, the run each comes from (predictions: in INDEX.yaml): the explainer's selection sweeps (config-N/ and retime-config-N/ runs), the FLUTE zero-shot grid (its selection-*/ runs, the val run), the trivial-explanation baselines (their folders, the system's val run) and the MBR subsets (both runs they read); test_summary_rows_agree_with_the_runs_they_name checks each against the run named. Earlier, 2026-11-27, fifth session (#39; was 1116): +14 figures of the explainer speed by backend on an AVX-512 CPU without AMX (explain/bench-avx512-backends.json: seconds and CPU seconds of one pair and a batch per setting; a benchmark, no items). Earlier (#39; was 1110): +6 figures of the llama.cpp build benchmark the speed page quotes (bench/llama_build_dispatch.json: tokens/s and ms a token of two builds, logits on random tokens; a benchmark, no items). Earlier, third session (#36; was 1106): +4 figures of the shipped FLUTE LoRA model's training record (rank, kept epoch, epochs, selection accuracy; the trainer keeps no per-item selection answers). Earlier (#35; was 1101): +5 figures of the web server's start and page times, which the prose of docs/how-to/web.md quoted unregistered and wrong (serve/bench_serve_start.json; a benchmark, no items). Earlier (#39; was 1096): +5 figures of the test suite's wall time (tests/suite_timing.json; a benchmark, no items). Earlier (#35; was 641): a figure counts as backed only by its own run's predictions (its folder, NAME.predictions.jsonl, NAME/, or the files its group names), no longer by any run below its file's folder: 460 lost that backing, 19 regained it by naming their runs (the comparisons), the rest carry a reason (KNOWN_GAPS below, or a summary/benchmark that writes no per-item file). 2026-11-26, sixth session (was 596): +45 figures of the writer recipes tried on a lent H200 (epochs, lr, steps, dev loss of training runs; no predictions exist). Third session (was 528): +68 figures that were marked ⁿ (no file at all) are now tied to their result files, which keep no per-item predictions (the GPU relations files, the smollm2 I→OR val run, configuration figures, benchmarks); GPU runs, deleted CPU runs, zero-shot runs whose predictions stayed in runs/, summaries and benchmarks (reasons in INDEX.yaml); lower it as runs are re-made
# of those, the summaries whose figures were backed by a sibling run's predictions until #35 and whose own file is not
# named yet (reason "known gap (#35): …" in INDEX.yaml, NO_PREDICTIONS in scripts/results_index.py): sweeps over
# config-N/ runs, the FLUTE selection grid, training records, explainer benchmarks. A ratchet too.
MAX_KNOWN_GAPS = 0  # 2026-11-28, seventh session (#35; was 23): none left. The idiom probe's record and the prompt-lookup replay name their runs; the IMPLI recipe choice names its 20 fold runs in its reason and test_recipe_choice_recomputes_from_its_fold_runs recomputes it; the other training records (the simile probe, the mpnet FLUTE classifier, the writer) say why they have none: the trainer keeps no per-item selection answers or losses, as for the shipped FLUTE LoRA model. Earlier, 2026-11-28, sixth session (#35; was 45): the explainer's speed benchmarks (explain/bench-*.json, 22 figures) are benchmarks that score no items, not summaries of unnamed runs, and carry that reason now. Earlier the same day (was 292): the sweeps, the grid and the baselines name their runs (41 entries, 247 figures); left: explainer benchmarks and one measurement, training records whose selection answers were not kept, the recipe choice (21 entries)


def test_registered_figures_keep_predictions_or_say_why(figures):
    problems, excused = missing_predictions(figures, RESULTS)
    assert not problems, "\n".join(problems[:20])
    print(f"{len(excused)} of {len(figures)} registered figures have no per-item predictions (reasons in INDEX.yaml)")
    assert len(excused) <= MAX_WITHOUT_PREDICTIONS, f"{len(excused)} figures without predictions (was {MAX_WITHOUT_PREDICTIONS})"
    gaps = [f for f in excused if f.no_predictions.startswith("known gap")]
    print(f"{len(gaps)} of them are known gaps (a summary whose own predictions file is not named yet)")
    assert len(gaps) <= MAX_KNOWN_GAPS, f"{len(gaps)} known gaps (was {MAX_KNOWN_GAPS})"
    # a sibling run's predictions do not count: a sweep summary above config-N/ runs is backed only by the run its
    # row names (predictions:), not by the runs below it
    sweep = next(f for f in figures if f.file == "explain/selection-sweep-compact/sweep.json")
    assert sweep.predictions == ("explain/selection-sweep-compact/config-0/predictions.jsonl.gz",) and has_predictions(sweep, RESULTS)
    assert (RESULTS / "explain/selection-sweep-compact/config-0").is_dir()
    assert not has_predictions(dataclasses.replace(sweep, predictions=()), RESULTS)
    # named predictions count only when every named file exists
    named = next(f for f in figures if f.predictions)
    assert has_predictions(named, RESULTS)
    assert not has_predictions(dataclasses.replace(named, predictions=(*named.predictions, "nowhere/predictions.jsonl")), RESULTS)
    # the check can fail: a folder without predictions and no reason, a reason where predictions exist
    bare = next(f for f in excused)
    assert missing_predictions([dataclasses.replace(bare, no_predictions=None)], RESULTS)[0]
    kept = next(f for f in figures if f.no_predictions is None)
    assert "has predictions, yet" in missing_predictions([dataclasses.replace(kept, no_predictions="x")], RESULTS)[0][0]


def test_every_table_with_numbers_is_marked():
    problems = [p for doc in DOCS for p in unmarked_tables(doc, (REPO / doc).read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems[:30])
    # an unmarked table with figures fails; one marked either way passes
    table = "| run | accuracy |\n|---|---|\n| smollm2 | 60.85 |\n"
    assert unmarked_tables("x.md", "text\n\n" + table) and "1 number(s)" in unmarked_tables("x.md", table)[0]
    assert not unmarked_tables("x.md", "<!-- results-table: t -->\n" + table)
    assert not unmarked_tables("x.md", "<!-- not-results-table: option defaults -->\n\n" + table)
    assert not unmarked_tables("x.md", "| a | b |\n|---|---|\n| no | numbers |\n")


def test_no_figure_is_quoted_without_its_file(figures):
    """Every figure lost its last ⁿ mark on 2026-11-26 (re-made or removed): marking one as unbacked again fails here,
    and the marks are still found where they would be (a table cell, a prose mark)."""
    cells = prose = 0
    for doc in DOCS:
        c, p = marked_without_file((REPO / doc).read_text(encoding="utf-8"))
        cells, prose = cells + c, prose + p
    print(f"{len(figures)} registered figures; {cells} table numbers and {prose} prose figures marked without a result file")
    assert len(figures) >= 500 and cells == 0 and prose == 0
    table = "<!-- results-table: t no-file=ⁿ -->\n| a | b | c |\n|---|---|---|\n| x | 1.5 ⁿ | 2.5 |\n| y (no result file; to be re-run) | 3 | 4 |\n"
    assert marked_without_file(table + "And 7 (no result file; to be re-run).") == (3, 1)


def test_every_headline_number_in_prose_is_registered_or_marked(figures):
    """README.md and every page: each percentage, decimal, ratio, time or speed-up of the prose is a registered figure
    at its anchored place or in an entry of docs/results/NOT-FIGURES.yaml; research diaries marked
    <!-- unverified-figures --> are not scanned (and only they may be)."""
    problems, counts = check_pages(figures, load_not_figures(RESULTS), REPO, DOCS)
    print(f"prose numbers: {counts}")
    assert not problems, "\n".join(problems[:30])
    assert counts["registered"] >= 90 and counts["unused_patterns"] == 0
    assert counts["excluded_pages"] <= 10  # the research diaries; user-facing pages are fully checked
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "unverified-figures" not in readme
    added = readme.replace("figlang is Apache-2.0 licensed.", "figlang is Apache-2.0 licensed; it scores 91.3% on FLUTE.")
    found = check_pages(figures, load_not_figures(RESULTS), REPO, ["README.md"])[0]
    assert not found
    from figlang.evaluation.prose_figures import unaccounted_numbers

    assert any("91.3" in p for p in unaccounted_numbers("README.md", added, {}, load_not_figures(RESULTS))[0])


def test_headline_numbers_and_printed_signs():
    flat = flatten("Acc 80.6% in 35 minutes, precision 82/100, 3× faster; 2026 and 12 items; `p0.9` and\n```\n1.5\n```\n")
    assert [(flat.text[a:b], k) for a, b, k in headline_numbers(flat)] == [
        ("80.6", "percentage"),
        ("35", "time"),
        ("82", "ratio"),
        ("100", "ratio"),
        ("3", "speed-up"),
    ]
    text = f"[{MINUS}1.69, +6.48] and [-3.6, 2-45] IMPLI-2"
    assert [printed_sign(text, text.index(t)) for t in ("1.69", "6.48", "3.6", "45", "2")] == [-1, 1, -1, 0, 0]


def test_a_prose_figure_is_checked_at_its_place(figures, tmp_path):
    """A changed digit at the figure's place fails though the same text stands elsewhere on the page; a sign flipped
    before a difference registered by its magnitude (abs) fails in a table and in prose."""
    figure = next(f for f in figures if f.table is None and f.at and f.doc == "docs/tutorials/first-evaluation.md")
    page = (REPO / figure.doc).read_text(encoding="utf-8")
    assert not check_index([figure], RESULTS, REPO)
    elsewhere = f"{figure.text} stands here too. "
    target = tmp_path / figure.doc
    target.parent.mkdir(parents=True)
    target.write_text(elsewhere + page.replace(figure.text + "%", "83.6%", 1), encoding="utf-8")
    assert any("no longer prints" in p for p in check_index([figure], RESULTS, tmp_path))
    signed = [f for f in figures if f.derive == "abs" and figure_value(f, RESULTS, signed=True) < 0]
    assert signed  # CI bounds and differences below zero, printed with a minus
    bound = next(f for f in signed if f.text == "1.69" and f.doc == "docs/research/trained_models.md")
    tm = (REPO / bound.doc).read_text(encoding="utf-8")
    (tmp_path / "docs/research").mkdir(parents=True)
    (tmp_path / bound.doc).write_text(tm.replace(f"[{MINUS}1.69, +6.48]", "[+1.69, +6.48]"), encoding="utf-8")
    assert any("negative" in p for p in check_index([f for f in figures if f.doc == bound.doc], RESULTS, tmp_path))


def test_mutations_of_registered_figures_are_caught():
    """scripts/registry_mutations.py: #35's named mutations (a README figure, the tutorial's 80.2% -> 83.2%, a CI sign
    flipped, an unregistered number added) and a seeded sample of figures changed by a digit, a sign, a rounding.
    The registry before #35 let all but the table figure through."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("registry_mutations", REPO / "scripts" / "registry_mutations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got, tried, missed = module.run(sample=15, seed=1)
    assert tried >= len(module.NAMED) + 15 and not missed, missed


def test_suggested_keys_skip_configuration_but_not_a_named_subtree(tmp_path):
    """A number under a configuration key (config, configs, seed …) is never proposed by chance; a row that names
    its own sub-tree under such a key (FILE#configs.1: one benchmark setting's figures) gets that sub-tree's numbers,
    and still not the configuration inside it."""
    from figlang.evaluation.registry import suggest_keys

    (tmp_path / "bench.json").write_text(
        json.dumps({"configs": [{"seconds": 17.41, "config": {"n": 12.5}}, {"seconds": 13.52, "config": {"n": 12.5}}]}),
        encoding="utf-8",
    )
    assert suggest_keys("13.52", ["bench.json"], tmp_path) is None
    assert suggest_keys("13.52", ["bench.json#configs.1"], tmp_path)[:2] == ("bench.json", "configs.1.seconds")
    assert suggest_keys("17.41", ["bench.json#configs.1"], tmp_path) is None
    assert suggest_keys("12.5", ["bench.json#configs.1"], tmp_path) is None


def _numbers(node, path=()):
    """{key path: number} of a JSON tree (the numeric leaves)."""
    if isinstance(node, dict):
        return {k: v for key, child in node.items() for k, v in _numbers(child, (*path, str(key))).items()}
    return {path: node} if isinstance(node, (int, float)) and not isinstance(node, bool) else {}


def _rows(predictions_file):
    import gzip

    return [json.loads(line) for line in gzip.open(RESULTS / predictions_file, "rt", encoding="utf-8")]


def _grid_accuracies(predictions_file, calibrated):
    """A FLUTE zero-shot grid row recomputed from its run's predictions: calibrated as run, or uncalibrated (the
    scores plus the content-free offset the run records), in the grid's percentages."""
    rows = _rows(predictions_file)

    def answer(p):
        if calibrated:
            return p["prediction"]
        return max(p["scores"], key=lambda label: p["scores"][label] + p["meta"]["content_free"][label])

    right = [answer(p) == p["gold"] for p in rows]
    out = {("n",): len(rows), ("n_correct",): sum(right), ("accuracy",): 100 * sum(right) / len(rows)}
    for field, group in (("gold", "by_gold_label"), ("figure_type", "by_figure_type")):
        for value in {p[field] for p in rows}:
            mine = [r for r, p in zip(right, rows) if p[field] == value]
            out[(group, value, "accuracy")] = 100 * sum(mine) / len(mine)
    return out


def own_run_problems(figures):
    """#35: each summary row that names its run agrees with it. A sweep's row (results.N) with the config-N/ run's own
    sweep_entry.json, number for number, and its split-weighted mix with the row's ROUGE-L by type; the FLUTE
    zero-shot grid's rows and its val figure recompute from the named run's predictions; the trivial-explanation
    baselines' rows and the MBR subsets' prompted row with the named run's own explanation scores. ROUGE-L itself is
    not recomputed here (it needs the gold explanations of the data folder): as for every explain run, the figure
    is checked against the file of the run it names. Returns (problems, figures checked)."""
    problems, checked = [], 0
    grid = RESULTS / "zs/flute-selection-grid-qwen/grid.json"
    for f in figures:
        if not f.predictions:
            continue
        run = RESULTS / Path(f.predictions[0]).parent
        value = figure_value(f, RESULTS)
        want, slack = None, 0.0
        if f.file.startswith("explain/selection-sweep") and f.file.endswith((".json",)) and f.key[0] == "results":
            row = json.loads((RESULTS / f.file).read_text(encoding="utf-8"))
            entry = _numbers(json.loads((run / "sweep_entry.json").read_text(encoding="utf-8")))
            if f.key[2:] in entry:
                want = entry[f.key[2:]] * f.scale
            elif f.key[2:] == ("rougeL_f1_split_mix",):
                by_type = row["results"][int(f.key[1])]["by_figure_type"]
                want = sum(share * by_type[t] for t, share in row["split_shares"].items())
                slack = 0.01  # mixed from the rounded per-type figures, which the sweep mixed unrounded
        elif f.file == "explain/selection-sweep-mbr/mbr_subsets.json" and f.key[1] == "prompted alone":
            prompted = RESULTS / Path(f.predictions[1]).parent / "sweep_entry.json"
            entry = _numbers(json.loads(prompted.read_text(encoding="utf-8")))
            want = entry.get(("by_figure_type", f.key[2]), entry.get(("rougeL_f1_split_mix",)) if f.key[2] == "selection_mix" else None)
        elif f.file == "explain/baselines-val/summary.json":
            scores = json.loads((run / "explanations.json").read_text(encoding="utf-8"))
            want = scores["overall"]["rougeL_f1"] if f.key[3:] == () else scores["by_figure_type"][f.key[-1]]["rougeL_f1"]
            want = want if f.key[2] in ("rougeL_f1", "by_figure_type") else None
        elif f.file.endswith("/figlang.json") and f.key == ("best", "dev_accuracy"):
            # the trainer's selection accuracy of the kept epoch, against the shipped head's own selection run
            right = [p["correct"] for p in _rows(f.predictions[0])]
            want = f.scale * sum(right) / len(right)
        elif f.file == "explain/prompt-lookup-passes-selection.json" and f.key == ("answers",):
            want = len(_rows(f.predictions[0]))  # the replay reads every answer of the run it names
        elif RESULTS / f.file == grid and f.key[0] in ("rows", "val_not_used_for_choosing") and len(f.predictions) == 1:
            d = json.loads(grid.read_text(encoding="utf-8"))
            if f.key[0] == "rows":
                calibrated, rest = d["rows"][int(f.key[1])]["config"]["calibrate"] != "none", f.key[2:]
            else:
                calibrated, rest = "-cf-" in f.key[1], f.key[2:]
            want = _grid_accuracies(f.predictions[0], calibrated).get(rest)
        if want is None:
            continue
        checked += 1
        if (abs(want - value) > slack + 1e-9) if slack else not matches(want, f.text):  # at the printed precision
            problems.append(f"{f.where}: {f.file} says {value}, its named run {run.relative_to(RESULTS)} gives {want}")
    return problems, checked


def recipe_choice_problems(choice_file):
    """#35: the IMPLI recipe choice's per-fold selection figures and their means, against the 20 fold runs it compares
    (each fold's figlang.json: decision.at_threshold.value, the balanced accuracy at the threshold chosen on its
    selection slice). Returns the problems found."""
    choice, problems = json.loads((RESULTS / choice_file).read_text(encoding="utf-8")), []
    for recipe, row in choice["recipes"].items():
        folds = sorted((RESULTS / "gpu-minilm" / recipe).glob("fold_*/figlang.json"))
        values = [json.loads(p.read_text(encoding="utf-8"))["decision"]["at_threshold"]["value"] for p in folds]
        if len(values) != 10 or values != row["selection_balanced_accuracy_by_fold"]:
            problems.append(f"{recipe}: the fold runs give {values}, the choice says {row['selection_balanced_accuracy_by_fold']}")
        elif abs(sum(values) / len(values) - row["mean"]) > 1e-12:
            problems.append(f"{recipe}: the mean of its folds is {sum(values) / len(values)}, the choice says {row['mean']}")
    return problems


def test_recipe_choice_recomputes_from_its_fold_runs(tmp_path):
    choice = "gpu-minilm/impli-folds10-all-lw-floor85/recipe_choice.json"
    assert recipe_choice_problems(choice) == []
    # the check can fail: one fold's figure changed in a copy of the choice
    d = json.loads((RESULTS / choice).read_text(encoding="utf-8"))
    d["recipes"]["impli-folds10-bal-thr"]["selection_balanced_accuracy_by_fold"][3] += 0.01
    bad = tmp_path / "choice.json"
    bad.write_text(json.dumps(d), encoding="utf-8")
    assert recipe_choice_problems(bad) and "impli-folds10-bal-thr" in recipe_choice_problems(bad)[0]


def test_summary_rows_agree_with_the_runs_they_name(figures):
    problems, checked = own_run_problems(figures)
    assert not problems, "\n".join(problems[:20])
    print(f"{checked} figures of sweeps, the zero-shot grid and the explanation baselines checked against the run they name")
    assert checked >= 150
    # the check can fail: a sweep row pointed at another config's run, a grid row at the other question's run
    row = next(f for f in figures if f.file == "explain/selection-sweep-compact/sweep.json" and f.id == "seconds_per_pair")
    assert row.predictions == ("explain/selection-sweep-compact/config-0/predictions.jsonl.gz",)
    wrong = (row.predictions[0].replace("/config-0/", "/config-1/"),)
    assert own_run_problems([dataclasses.replace(row, predictions=wrong)])[0]
    cell = next(f for f in figures if f.file == "zs/flute-selection-grid-qwen/grid.json" and f.key[:1] == ("rows",) and f.id == "accuracy")
    other = tuple(p.replace("task", "TMP").replace("meaning", "task").replace("TMP", "meaning") for p in cell.predictions)
    assert own_run_problems([dataclasses.replace(cell, predictions=other)])[0]
    # the idiom probe's selection accuracy against the simile head's selection run (80.08, not 79.72)
    probe = next(f for f in figures if f.file == "cpu/idiom-probe-qwen-sel/figlang.json" and f.key == ("best", "dev_accuracy"))
    assert probe.predictions == ("ensemble/idiom-sel-probe/predictions.jsonl.gz",)
    assert own_run_problems([dataclasses.replace(probe, predictions=("ensemble/simile-sel-probe/predictions.jsonl.gz",))])[0]
