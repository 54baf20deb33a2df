"""`figlang eval`, `figlang compare`, `figlang report`, `figlang methods`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write
from figlang.evaluation import evaluate, score_predictions_file
from figlang.evaluation.scoring import MetricOptions
from figlang.backends.options import BACKENDS, Selection
from figlang.methods.base import get_methods
from figlang.core.options import option_names, options_lines, options_markdown
from figlang.cli.common import (
    DataDirOption,
    EvalSplitOption,
    JsonOption,
    NoRequestCacheOption,
    RequestCacheDirOption,
    console,
    parse_key_values,
)


def parse_chosen_on(pairs: list[str] | None) -> dict[str, str]:
    """``--chosen-on layer=selection`` -> {"layer": "selection"}."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        choice, _, split = pair.partition("=")
        if not choice.strip() or not split.strip():
            raise FiglangError(f"--chosen-on expects CHOICE=SPLIT (e.g. prompt=selection), got {pair!r}")
        out[choice.strip()] = split.strip()
    return out


def eval_cmd(
    task: Annotated[str, typer.Option("--task", "-t", help="Task name (`figlang data tasks`) or a task spec file (.yaml/.json).")],
    method: Annotated[
        str | None, typer.Option("--method", "-m", help="Method name (`figlang methods`). Not needed with --predictions.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Catalog name, Hugging Face id, local path, or endpoint model.")] = None,
    split: EvalSplitOption = None,
    predictions: Annotated[
        list[Path] | None,
        typer.Option(
            "--predictions",
            "-p",
            help="Score this prediction file instead of running a method (figlang JSONL, the narrative paper's outputs, or a FLUTE submission, JSON lines or the FLUTE repository's JSON arrays). Repeat it, or name a folder, to score several files as one submission (FLUTE's four per-figure-type files).",
        ),
    ] = None,
    prediction_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Prediction file format (default: detected): figlang, narrative-discriminative, narrative-generative, flute-submission, lm-eval (lm-evaluation-harness --log_samples rows, answered as its acc) or lm-eval-acc_norm.",
        ),
    ] = None,
    allow_partial: Annotated[
        bool,
        typer.Option(
            "--allow-partial", help="Score what can be scored when predictions are missing, duplicated or invalid (reported, never hidden)."
        ),
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Only the first N items (for a quick look).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for predictions.jsonl, results.json and results.md.")] = None,
    data_dir: DataDirOption = None,
    cache_dir: RequestCacheDirOption = None,
    no_cache: NoRequestCacheOption = False,
    seed: Annotated[
        int,
        typer.Option(
            help="Seed for the bootstrap CIs and for methods that take one (random, few-shot, generate, nli-*, trained generators); -O seed=N sets the method's alone."
        ),
    ] = 0,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-O",
            help="Method or backend option KEY=VALUE (JSON values allowed); repeatable; checked before any model loads. `figlang methods NAME` lists a method's options and its backends' (e.g. dtype=bfloat16, threads=N; backend=llama.cpp runs a GGUF model, with n_ctx=N).",
        ),
    ] = None,
    predict_only: Annotated[
        bool,
        typer.Option(
            "--predict-only", help="Write predictions without scoring (test-set submissions: the narrative test labels are hidden)."
        ),
    ] = False,
    bertscore_model: Annotated[
        str | None, typer.Option(help="BERTScore model for generation/explanations (papers: microsoft/deberta-large-mnli).")
    ] = None,
    bertscore_layers: Annotated[int | None, typer.Option(help="BERTScore layer (required for models outside bert-score's table).")] = None,
    bleurt_checkpoint: Annotated[
        str | None, typer.Option(help="BLEURT checkpoint for FLUTE explanation scores (paper: lucadiliello/BLEURT-20).")
    ] = None,
    protocol: Annotated[str, typer.Option(help="Generation scoring over samples × references: max (narrative paper) or mean.")] = "max",
    explanation_semantics: Annotated[
        str, typer.Option(help="FLUTE explanation score: shared-task (int(50×(BERTScore+BLEURT)) ≥ t) or paper (mean on 0–100 > t).")
    ] = "shared-task",
    ci_cluster: Annotated[
        str | None,
        typer.Option(
            "--ci-cluster",
            help="Bootstrap CIs over clusters instead of items: context (pairs of one IMPLI premise or one narrative together) or expression (one idiom's pairs together). The papers resample items; IMPLI's pairs of one premise are not independent, so item CIs are too narrow.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    chosen_on: Annotated[
        list[str] | None,
        typer.Option(
            "--chosen-on",
            help="CHOICE=SPLIT: the split a choice behind this run was made on (prompt=selection, calibration=selection, threshold=selection); repeatable; recorded in results.json provenance.selection_split, and flagged when it is the split scored here.",
        ),
    ] = None,
) -> None:
    """Run a method on a task split, or score a prediction file, and print the results table.

    Examples:

      figlang eval -t flute -m majority --data-dir ../shared/data

      figlang eval -t idiom-cloze -s dev -p output/idiom/discriminative/idiom_dev_predictions.jsonl

      figlang eval -t flute -s test -p modelpredictions/   (FLUTE's released sarcasm/simile/metaphor/idiom.json)
      figlang eval -t idiom-cloze -s dev -p samples_figlang_idiom_cloze_dev_DATE.jsonl --format lm-eval -o runs/lm-eval

      figlang eval --model qwen2.5-1.5b -O backend=llama.cpp -O threads=2 -t idiom-cloze -s dev -m qa
    """
    from figlang.evaluation.tables import print_summary

    options = MetricOptions(
        seed=seed,
        generation_protocol=protocol,
        bertscore_model=bertscore_model,
        bertscore_layers=bertscore_layers,
        bleurt_checkpoint=bleurt_checkpoint,
        explanation_semantics=explanation_semantics,
        ci_cluster=ci_cluster,
    )
    ctx = RunContext.create(data_dir, cache_dir, seed)  # the run's context: built here, once, and handed down
    if predictions:
        source = predictions[0] if len(predictions) == 1 else predictions
        result = score_predictions_file(source, task, split, None, prediction_format, allow_partial, out, options, ctx=ctx)
        if result.problems.blocking or result.problems.empty_explanations or result.problems.empty_generations:
            named = ", ".join(map(str, predictions))
            console.print(f"[yellow]problems in {named}: {result.problems.summary()}[/yellow]")
        for note in result.problems.notes():
            console.print(f"note: {note}", markup=False, highlight=False)
    else:
        if not method:
            raise FiglangError("pass --method (see `figlang methods`) or --predictions FILE")
        result = evaluate(
            task,
            method,
            model=model,
            split=split,
            limit=limit,
            out_dir=out,
            use_cache=not no_cache,
            metric_options=options,
            method_options=parse_key_values(option),
            progress=not quiet,
            predict_only=predict_only,
            chosen_on=parse_chosen_on(chosen_on),
            ctx=ctx,
        )
    print_summary(result.results)
    if out:
        console.print(f"[dim]wrote {out}/predictions.jsonl, results.json, results.md[/dim]")


def methods_cmd(
    name: Annotated[str | None, typer.Argument(help="A method: print its -O options (type, default, allowed values, help).")] = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print every method's and backend's options as Markdown (docs/method_options.md).")
    ] = False,
) -> None:
    """List the methods, the task shapes they answer, whether they need --model, and their -O options.

    `figlang methods NAME` prints one method's options, one line each, from the dataclass that declares them
    (and the options of the backend it runs on)."""
    registry = get_methods()
    if markdown:
        typer.echo(methods_markdown(), nl=False)
        return
    if name is not None:
        info = registry.info(name)
        console.print(f"[bold]{info.name}[/bold] ({', '.join(info.shapes)}): {info.description}")
        if info.options is None:
            console.print("  (a plugin's method that declares no options dataclass: its options are not listed or checked)")
            return
        typer.echo("\n".join(options_lines(info.options, indent="  ")) or "  (no options)")
        if info.needs_model and info.backend_options:
            for backend, cls in {"": Selection, **BACKENDS}.items():
                typer.echo(f"backend {backend} options:" if backend else "choosing the backend:")
                typer.echo("\n".join(options_lines(cls, indent="  ")))
        return
    table = Table(title="figlang methods (`figlang methods NAME` for a method's options)", title_justify="left")
    for col in ("method", "shapes", "needs --model", "description", "options (-O KEY=VALUE)"):
        table.add_column(col, overflow="fold")
    for info in registry:
        options = ", ".join(option_names(info.options)) if info.options is not None else "(not declared)"
        table.add_row(info.name, ", ".join(info.shapes), "yes" if info.needs_model else "no", info.description, options or "none")
    console.print(table)


def methods_markdown() -> str:
    """docs/method_options.md: every registered method's options and every backend's, from their dataclasses."""
    out = [
        "# Method and backend options",
        "",
        "<!-- made by `figlang methods --markdown` from the options dataclasses; tests/test_method_options.py checks it -->",
        "",
        "Give them as `-O KEY=VALUE` (`figlang eval`, `figlang explain`, `figlang suite` …); a method's model-backed options",
        "not in its own table are its backend's. An unknown key, a value of the wrong type and a key given both as a flag",
        "and as `-O` are refused before any model loads.",
    ]
    for info in get_methods():
        if info.options is None:
            continue
        out += ["", f"## `{info.name}` ({', '.join(info.shapes)})", ""]
        out += options_markdown(info.options) if option_names(info.options) else ["No options."]
    out += ["", "## Backends", "", "Chosen with `backend` and `source`:", "", *options_markdown(Selection)]
    for backend, cls in BACKENDS.items():
        out += ["", f"### {backend}", "", *options_markdown(cls)]
    return "\n".join(out) + "\n"


def compare_cmd(
    run_a: Annotated[Path, typer.Argument(help="Folder of the first run (has predictions.jsonl or predictions.jsonl.gz).")],
    run_b: Annotated[Path, typer.Argument(help="Folder of the second run, on the same task and split.")],
    as_json: JsonOption = False,
    seed: Annotated[int, typer.Option(help="Seed of the paired bootstrap CI of the difference.")] = 0,
    resamples: Annotated[int, typer.Option(min=1000, help="Paired bootstrap resamples.")] = 10_000,
    ci_cluster: Annotated[
        str | None,
        typer.Option(
            "--ci-cluster",
            help="Resample clusters in the paired bootstrap: context (one premise's or narrative's items together) or expression (one idiom's). IMPLI's pairs of one idiom are not independent.",
        ),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Paired significance tests between two runs on the same items: paired t-test, McNemar, Wilcoxon.

    Discriminative runs also get a paired bootstrap CI of the accuracy difference (by item, or by cluster with
    --ci-cluster). Both runs must be scored (not --predict-only). Items scored in one run only are counted and left out;
    runs that read different data files (sha256 in results.json) are warned about. Generation runs are compared on
    per-item ROUGE-L, sentence sacreBLEU and NLTK BLEU, recomputed with the configuration each run's results.json
    records: each run's mean, paired t-test, Wilcoxon signed-rank and a seeded paired-bootstrap CI of the difference.

    Runs published without their dataset texts (FLUTE's, and IMPLI's PIE-English premises: their licences) get them back by id from the data folder
    (--data-dir), when it holds the very files the runs read; otherwise the comparison says so in its warnings and
    refuses --ci-cluster context, whose clusters are those texts.
    """
    from figlang.evaluation.compare import compare_runs, print_comparison

    ctx = RunContext.create(data_dir, seed=seed)  # the run's context: built here, once, and handed down
    comparison = compare_runs(run_a, run_b, n_resamples=resamples, ci_cluster=ci_cluster, ctx=ctx)
    if as_json:
        typer.echo(json.dumps(comparison, indent=2))
    else:
        print_comparison(comparison)


def ensemble_cmd(
    select: Annotated[
        list[Path],
        typer.Option(
            "--select", help="A member's run on the selection split (repeat, one per member); these choose the temperatures and weights."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for predictions.jsonl, ensemble.json and results.json.")],
    report: Annotated[
        list[Path] | None,
        typer.Option(
            "--report",
            help="The same members' runs on the reported split, in the same order; these are only combined. Without it only "
            "OUT/ensemble.json is written: run it on any split with `figlang eval -m ensemble --model OUT/ensemble.json`.",
        ),
    ] = None,
    name: Annotated[
        list[str] | None, typer.Option("--name", help="A name for each member (repeat; default: the run folders' names).")
    ] = None,
    step: Annotated[float, typer.Option(help="Weight grid step: every convex mix of the members in steps of this size.")] = 0.1,
    data_dir: DataDirOption = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap CIs.")] = 0,
) -> None:
    """A calibrated ensemble of finished runs: methods and models that answered the same items.

    Each member's scores become log-probabilities with a temperature fitted on its --select run; the convex weights
    with the best accuracy on the selection split (then the lowest log-loss) are chosen there, and the --report runs
    are combined with them once and scored like any run (results.json with CIs; `figlang compare` works on it).

    Example (the probe and few-shot qwen2.5-1.5b on unseen idioms):

      figlang ensemble --select runs/idiom-sel-probe --select runs/idiom-sel-fewshot \\
          --report runs/idiom-dd-probe --report runs/idiom-dd-fewshot -o runs/idiom-ensemble

    OUT/ensemble.json names each member's method, model and options with its temperature and weight, so the
    ensemble is also a method: `figlang eval -t idiom-cloze -s dev-disjoint -m ensemble --model runs/idiom-ensemble/ensemble.json`.
    """
    from figlang.api import ensemble

    ctx = RunContext.create(data_dir, seed=seed)  # the run's context: built here, once, and handed down
    if not report:
        from figlang.evaluation.ensemble import choose_ensemble, write_choice

        chosen = choose_ensemble(select, step=step, names=name)
        path = write_choice(chosen, out)
        weights = ", ".join(f"{m['name']} {w:.2f} (T={m['temperature']:.3g})" for m, w in zip(chosen["members"], chosen["weights"]))
        console.print(
            f"chosen on {chosen['chosen_on']} ({chosen['items']} items, accuracy {100 * chosen['selection_accuracy']:.2f}): {weights}"
        )
        console.print(f"wrote {path}; run it with: figlang eval -t {chosen['task']} -s SPLIT -m ensemble --model {path}")
        return
    results = ensemble(select, report, out, step=step, names=name, ctx=ctx)
    chosen = results["ensemble"]
    table = Table(title=f"ensemble chosen on {chosen['chosen_on']} ({chosen['items']} items), reported on {chosen['report_split']}")
    for column in ("member", "temperature", f"accuracy on {chosen['chosen_on']} %", "weight"):
        table.add_column(column)
    for member, weight in zip(chosen["members"], chosen["weights"]):
        table.add_row(member["name"], f"{member['temperature']:.3g}", f"{100 * member['selection_accuracy']:.2f}", f"{weight:.2f}")
    table.add_row("ensemble", "", f"{100 * chosen['selection_accuracy']:.2f}", "1.00")
    console.print(table)
    acc = results["metrics"]["accuracy"]
    console.print(
        f"{chosen['report_split']}: {100 * acc['accuracy']:.2f} [{100 * acc['ci_low']:.2f}, {100 * acc['ci_high']:.2f}] (n={acc['n']}); wrote {out}/results.json"
    )


def _registered_name(doc: Path, results: Path, registered: set[str]) -> str:
    """The name INDEX.yaml gives ``doc``: its path from the repository that holds ``results`` (docs/results), else the one
    registered document with its file name (a copy elsewhere: README.md, paper_outputs.md), else the path as given."""
    try:
        name = doc.resolve().relative_to(results.resolve().parent.parent).as_posix()
        if name in registered:
            return name
    except ValueError:
        pass
    same = [d for d in registered if Path(d).name == doc.name]
    return same[0] if len(same) == 1 else str(doc)


def _regenerate_readme_tables(runs: list[Path], doc: Path) -> None:
    from figlang.evaluation.registry import load_index, regenerate_tables

    if len(runs) != 1:
        raise FiglangError(f"--readme-tables takes one results folder (the one with INDEX.yaml, e.g. docs/results), got {len(runs)}")
    if not doc.exists():
        raise FiglangError(f"{doc}: no such document to regenerate tables in")
    figures = load_index(runs[0])
    name = _registered_name(doc, runs[0], {f.doc for f in figures})
    text = doc.read_text(encoding="utf-8")
    new, changes = regenerate_tables(text, name, figures, runs[0])
    if new != text:
        with atomic_write(doc) as f:
            f.write(new)
    for change in changes:
        console.print(change)
    console.print(f"{len(changes)} figure(s) changed in {doc}; {sum(f.doc == name and f.table is not None for f in figures)} registered")


def report_cmd(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run folders (results.json; predictions.jsonl too for the per-item plots and analyses). Runs over several tasks/splits also get a model × method grid."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.md, report.html and the plots.")] = Path("report"),
    readme_tables: Annotated[
        Path | None,
        typer.Option(
            "--readme-tables",
            help="Instead of a report: reprint every registered figure of this document's results tables (<!-- results-table: NAME -->) from the result files that RUNS (one folder: docs/results) lists in INDEX.yaml, in place; prints what changed.",
        ),
    ] = None,
    pack: Annotated[
        bool,
        typer.Option(
            "--pack",
            help="Instead of a report: gzip every predictions.jsonl under RUNS into predictions.jsonl.gz (how docs/results commits them; compare and report read either).",
        ),
    ] = False,
) -> None:
    """Combine runs into one table (Markdown and HTML) with plots: accuracy with CIs, IMPLI overlap histograms, ICE scatter.

    `figlang report docs/results --readme-tables README.md` regenerates README.md's results tables from docs/results;
    `figlang report docs/results --pack` gzips the per-item predictions of runs copied there.
    """
    from figlang.evaluation.report import build_report

    if pack:
        from figlang.evaluation.runs import pack_predictions

        packed = [p for r in runs for p in pack_predictions(r)]
        for p in packed:
            console.print(f"wrote {p}")
        console.print(f"{len(packed)} predictions file(s) gzip'd")
        return

    if readme_tables is not None:
        _regenerate_readme_tables(runs, readme_tables)
        return

    # `figlang report runs/* -o runs/report` must not read its own earlier output as a run.
    runs = [r for r in runs if r.resolve() != out.resolve()]
    paths = build_report(runs, out)
    for p in paths:
        console.print(f"wrote {p}")
