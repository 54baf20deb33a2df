"""`figlang build flute …`: create FLUTE-style NLI pairs with a model in the loop, then verify them."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from figlang.builders.flute_checks import CheckLimits, load_prompts
from figlang.builders.flute_creator import CreateSummary, CreatorConfig, create
from figlang.builders.flute_edits import export_edit_tasks, import_edits
from figlang.builders.flute_inputs import FIGURE_TYPES, InputSet, load_idioms, read_input_file, select
from figlang.builders.review_queue import ReviewQueue
from figlang.core.errors import FiglangError
from figlang.core.context import RunContext
from figlang.core.provenance import portable_path, write_result_files
from figlang.core.progress import rate_column
from figlang.cli.common import (
    DataDirOption,
    JsonReportOption,
    QueueLimitOption,
    console,
    err_console,
    parse_key_values,
    print_problems,
)

app = typer.Typer(
    help="Build FLUTE-style figurative NLI pairs (FLUTE paper section 2): a model writes literal/figurative "
    "pairs and explanations with the paper's prompts, automatic checks resample bad outputs, experts verify "
    "the candidates, and the accepted pairs are written in FLUTE's format with a figlang task spec.",
    no_args_is_help=True,
)

CHECK_ORDER = (
    "empty",
    "too_short",
    "too_long",
    "label_leak",
    "copy_of_input",
    "same_as_premise",
    "same_as_entailment",
    "not_minimal_edit",
    "missing_idiom",
    "kept_idiom",
    "kept_simile",
    "missing_preserved",
    "explanation_copy",
)


# `generate_cmd`'s options; the creator's own defaults (CreatorConfig, CheckLimits) are written once, there
_CREATOR = CreatorConfig()
_GenerateOutOption = Annotated[Path, typer.Option("--out", "-o", help="Run folder (resumable: rerun the same command to continue).")]
_GenerateIdiomsOption = Annotated[
    str | None, typer.Option("--idioms", help="'benchmark', 'pie', or a JSONL/TSV/CSV file (idiom, meaning[, sentence]).")
]
_GenerateSimilesOption = Annotated[Path | None, typer.Option("--similes", help="JSONL/TSV/CSV: sentence, property, simile (or literal).")]
_GenerateMetaphorsOption = Annotated[Path | None, typer.Option("--metaphors", help="JSONL/TSV/CSV: sentence[, metaphor, meaning].")]
_GenerateSarcasmOption = Annotated[
    Path | None, typer.Option("--sarcasm", help="JSONL/TSV/CSV: literal sentence (sentence/prompt), emotion.")
]
_GenerateLimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, help="At most N inputs per figure type, drawn with --sample-seed.")
]
_GenerateSampleSeedOption = Annotated[int, typer.Option("--sample-seed", help="Seed of the --limit draw.")]
_GenerateModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="Generator: catalog name, hub id, local path, or an OpenAI-compatible endpoint (http(s)://…/v1, openai:MODEL@URL).",
    ),
]
_GenerateTemperatureOption = Annotated[
    float | None, typer.Option("--temperature", help="Sampling temperature (0 = greedy); default from decoding.yaml (0.7).")
]
_GenerateTopPOption = Annotated[float | None, typer.Option("--top-p", help="Nucleus sampling; default from decoding.yaml (1.0).")]
_GenerateMaxNewTokensOption = Annotated[
    int | None, typer.Option("--max-new-tokens", help="New tokens per call; default from decoding.yaml (64).")
]
_GenerateRoundsOption = Annotated[
    int | None, typer.Option("--rounds", help="Attempts per output (checks or reviewer reject → resample); default 3.")
]
_GenerateSeedOption = Annotated[int, typer.Option("--seed", help="Run seed (per-call seeds derive from it and the item/step/round).")]
_GenerateChatOption = Annotated[
    str, typer.Option("--chat", help="false: complete the few-shot prompt (as with GPT-3); true/auto: the model's chat template.")
]
_GenerateSarcasmContradictionOption = Annotated[
    str, typer.Option("--sarcasm-contradiction", help="human (the paper: export-edits/import-edits) or model.")
]
_GenerateMinEditSimilarityOption = Annotated[
    float, typer.Option("--min-edit-similarity", help="Word similarity a minimal-edit contradiction keeps with its base.")
]
_GenerateMaxWordsOption = Annotated[int, typer.Option("--max-words", help="Longest generated sentence (words).")]
_GeneratePromptsDirOption = Annotated[
    Path | None, typer.Option("--prompts", help="A folder with your own {idiom,simile,metaphor,sarcasm,decoding}.yaml.")
]
_GenerateOptionOption = Annotated[
    list[str] | None, typer.Option("--backend-option", "-O", help="Backend option KEY=VALUE (threads=1, device=cuda, …).")
]
_GenerateResampleRejectedOption = Annotated[
    bool, typer.Option("--resample-rejected", help="Give pairs the reviewer rejected a new round (import verdicts first).")
]
_GenerateRestartOption = Annotated[
    bool, typer.Option("--restart", help="Discard this folder's run (items, candidates, review) and start again.")
]
_GenerateNoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not store model calls in OUT/cache/requests.sqlite.")]
_GenerateStrictOption = Annotated[bool, typer.Option("--strict", help="Stop at the first bad input line instead of skipping it.")]


@app.command("generate")
def generate_cmd(
    out: _GenerateOutOption,
    idioms: _GenerateIdiomsOption = None,
    similes: _GenerateSimilesOption = None,
    metaphors: _GenerateMetaphorsOption = None,
    sarcasm: _GenerateSarcasmOption = None,
    limit: _GenerateLimitOption = None,
    sample_seed: _GenerateSampleSeedOption = 0,
    model: _GenerateModelOption = _CREATOR.model,
    temperature: _GenerateTemperatureOption = None,
    top_p: _GenerateTopPOption = None,
    max_new_tokens: _GenerateMaxNewTokensOption = None,
    rounds: _GenerateRoundsOption = None,
    seed: _GenerateSeedOption = _CREATOR.seed,
    chat: _GenerateChatOption = _CREATOR.chat,
    sarcasm_contradiction: _GenerateSarcasmContradictionOption = _CREATOR.sarcasm_contradiction,
    min_edit_similarity: _GenerateMinEditSimilarityOption = _CREATOR.limits.min_edit_similarity,
    max_words: _GenerateMaxWordsOption = _CREATOR.limits.max_words,
    prompts_dir: _GeneratePromptsDirOption = None,
    option: _GenerateOptionOption = None,
    resample_rejected: _GenerateResampleRejectedOption = False,
    restart: _GenerateRestartOption = False,
    no_cache: _GenerateNoCacheOption = False,
    strict: _GenerateStrictOption = False,
    data_dir: DataDirOption = None,
) -> None:
    """Generate candidate pairs and explanations into OUT (candidates.jsonl, failed.jsonl, summary.json)."""
    ctx = RunContext.create(data_dir, seed=seed)  # the run's context: built here, once; the idiom lexicons are in its folder
    inputs = _creator_inputs(idioms, similes, metaphors, sarcasm, strict, ctx)
    inputs = [select(i, limit, sample_seed) for i in inputs]
    for inp in inputs:
        console.print(f"{inp.figure_type}: {len(inp.items)} input(s) from {inp.source}")
        print_problems(f"{inp.figure_type} input", inp.problems)
    config = CreatorConfig(
        model=model,
        temperature=temperature,
        top_p=top_p,
        max_new_tokens=max_new_tokens,
        rounds=rounds,
        seed=seed,
        chat=chat,
        sarcasm_contradiction=sarcasm_contradiction,
        limits=CheckLimits(max_words=max_words, min_edit_similarity=min_edit_similarity),
        backend_options=parse_key_values(option, "--backend-option"),
    )
    prompts = load_prompts(prompts_dir)
    with task_progress() as progress:
        summary = create(
            inputs,
            out,
            config,
            prompts=prompts,
            restart=restart,
            resample_rejected=resample_rejected,
            progress=_creator_events(progress),
            use_cache=not no_cache,
        )
    render_summary(summary)
    if summary.interrupted:
        err_console.print(f"[red]interrupted[/red]: {summary.interrupted}")
        raise typer.Exit(1)


def _creator_inputs(
    idioms: str | None, similes: Path | None, metaphors: Path | None, sarcasm: Path | None, strict: bool, ctx: RunContext
) -> list[InputSet]:
    """The creator's input sets, one per figure type given."""
    inputs: list[InputSet] = []
    if idioms:
        inputs.append(load_idioms(idioms, strict=strict, ctx=ctx))
    for ftype, path in (("simile", similes), ("metaphor", metaphors), ("sarcasm", sarcasm)):
        if path is not None:
            inputs.append(read_input_file(path, ftype, strict=strict))
    if not inputs:
        raise FiglangError("no input: pass --idioms, --similes, --metaphors and/or --sarcasm")
    return inputs


def task_progress() -> Progress:
    """A progress bar with a count, a line of information, the time spent and the time left."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        rate_column(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def _creator_events(progress: Progress) -> Callable[[str, dict], None]:
    """The creator's progress callback: the plan sets the total, each finished item advances the bar."""
    task = progress.add_task("generating", total=None, info="")

    def on_event(event: str, payload: dict) -> None:
        if event == "plan":
            progress.update(task, total=payload["total"], info=f"{payload['resumed']} already done")
        elif event == "item":
            progress.update(task, advance=1, info=payload["uid"])

    return on_event


def render_summary(summary: CreateSummary) -> None:
    types = [t for t in FIGURE_TYPES if summary.items.get(t)]
    table = Table(title=f"FLUTE creator: {summary.out_dir}")
    table.add_column("count")
    for t in types:
        table.add_column(t, justify="right")
    table.add_column("all", justify="right")

    def row(label: str, values: list[int], style: str | None = None) -> None:
        table.add_row(label, *[f"{v:,}" for v in values], f"{sum(values):,}", style=style)

    row("inputs", [summary.items[t] for t in types])
    for status, label in (
        ("candidate", "pairs generated (candidates)"),
        ("awaiting_edit", "pairs awaiting a human edit"),
        ("failed", "pairs failed (see failed.jsonl)"),
        ("not_run", "pairs not run (interrupted)"),
    ):
        values = [summary.count(status, t) for t in types]
        if sum(values) or status in ("candidate", "failed"):
            row(label, values)
    row("outputs resampled (> 1 round)", [summary.resampled[t] for t in types])
    names = [n for n in CHECK_ORDER if summary.check_failures.get(n)] + sorted(n for n in summary.check_failures if n not in CHECK_ORDER)
    for n in names:
        row(f"  rejected by {n}", [summary.check_failures_by_type.get(t, {}).get(n, 0) for t in types], style="dim")
    console.print(table)
    console.print(
        f"{summary.resumed} input(s) resumed, {summary.ran} run; {summary.attempts} model outputs, "
        f"{summary.model_calls} model call(s) + {summary.cache_hits} from the cache; {summary.seconds:.0f} s"
        + (f"; {summary.reviewer_resampled} reviewer-rejected pair(s) resampled" if summary.reviewer_resampled else "")
    )
    for p in summary.failed[:5]:
        console.print(f"[yellow]failed[/yellow] {p['id']}: {p['reason']}")
    if len(summary.failed) > 5:
        console.print(f"… {len(summary.failed) - 5} more in {summary.out_dir / 'failed.jsonl'}")
    print_problems("notes", summary.notes)
    console.print(f"candidates: {summary.out_dir / 'candidates.jsonl'} → next: figlang build flute export {summary.out_dir} -o review.csv")


#: The run folder that the review commands (export-edits, report, export, import, finalize) read.
_RunArgument = Annotated[Path, typer.Argument(help="The run folder.")]


@app.command("export-edits")
def export_edits_cmd(
    run: _RunArgument,
    out: Annotated[Path, typer.Option("--out", "-o", help="Edit tasks: .csv or .jsonl.")],
) -> None:
    """Sarcasm: write the paraphrases that need a person's minimal-edit sarcastic contradiction."""
    n = export_edit_tasks(run, out)
    console.print(f"wrote {n} edit task(s) to {out} (fill sarcastic_contradiction; then import-edits and rerun generate)")


@app.command("import-edits")
def import_edits_cmd(
    run: _RunArgument,
    edits: Annotated[Path, typer.Argument(help="The filled edit tasks (CSV/JSONL).")],
) -> None:
    """Sarcasm: store people's sarcastic contradictions; rerun generate to check and explain them."""
    n, problems = import_edits(run, edits)
    console.print(f"stored {n} edit(s); rerun `figlang build flute generate` with the same options to explain them")
    print_problems("edits", problems)
    if problems:
        raise typer.Exit(1)


@app.command("export")
def export_cmd(
    run: _RunArgument,
    out: Annotated[Path, typer.Option("--out", "-o", help="Review queue: .csv (spreadsheets) or .jsonl.")],
    include_reviewed: Annotated[bool, typer.Option("--all", help="Also candidates that already have a verdict.")] = False,
    kind: Annotated[list[str] | None, typer.Option("--type", help="Only these figure types (repeatable).")] = None,
    limit: QueueLimitOption = None,
) -> None:
    """Write the verification queue: id, figure type, premise, hypothesis, label, explanation + empty verdict/edit columns."""
    from figlang.builders.flute_review import export_queue

    n = export_queue(run, out, include_reviewed=include_reviewed, figure_types=tuple(kind) if kind else None, limit=limit)
    console.print(f"wrote {n} candidate(s) to {out}: set verdict to accept / edit / reject (edit: fill the edited_* columns)")


@app.command("import")
def import_cmd(
    run: _RunArgument,
    verdicts: Annotated[Path, typer.Argument(help="The reviewed queue (CSV/JSONL).")],
    as_json: JsonReportOption = False,
) -> None:
    """Import verdicts and edits; print per-type accept/edit/reject rates."""
    from figlang.builders.flute_review import REVIEW

    show_import(verdicts, REVIEW, run, as_json, render_rates)


def show_import(queue: Path, review: ReviewQueue, folder: Path, as_json: bool, render: Callable[[dict], None]) -> None:
    """Import a reviewed queue file into ``folder``'s review; print the report (or its JSON) and the rates after it;
    exit 1 when rows were refused."""
    report = review.import_verdicts(folder, queue)
    rates = review.review_rates(folder)
    if as_json:
        typer.echo(json.dumps({"import": report.to_dict(), "rates": rates}, indent=2, ensure_ascii=False))
    else:
        console.print(
            f"{queue}: {report.rows} row(s); {report.stored} verdict(s) stored, {report.blank} without a verdict, "
            f"{len(report.errors)} rejected"
        )
        print_problems("rows not imported", report.errors, limit=20)
        print_problems("notes", report.notes)
        render(rates)
    if report.errors:
        raise typer.Exit(1)


def render_rates(
    rates: dict,
    group: str = "figure type",
    title: str = "verification (current candidates)",
    items: str = "candidates",
    todo: str = "unreviewed",
) -> None:
    """The accept / edit / reject table of a review (FLUTE creator per figure type, IMPLI generator per pair type)."""
    table = Table(title=title)
    for col in (group, items, "reviewed", "accept", "edit", "reject", todo):
        table.add_column(col, justify="left" if col == group else "right", overflow="fold")  # long pair types wrap, not cut
    for t, r in rates.items():
        shares = [_count_and_share(r, k) for k in ("accept", "edit", "reject")]
        table.add_row(t, str(r["candidates"]), str(r["reviewed"]), *shares, str(r["unreviewed"]))
    console.print(table)


def _count_and_share(rates: dict[str, int], verdict: str) -> str:
    """'12 (40%)': how many got the verdict, and their share of the reviewed ones."""
    return f"{rates[verdict]} ({rates[verdict] / rates['reviewed']:.0%})" if rates["reviewed"] else str(rates[verdict])


@app.command("verdict-stats")
def verdict_stats_cmd(
    verdicts: Annotated[Path, typer.Argument(help="A reviewed queue (CSV/JSONL, as `export --all` wrote it and a reviewer filled it).")],
    idioms: Annotated[
        str | None,
        typer.Option(
            "--idioms",
            help="The run's idiom inputs, drawn again as `generate` drew them "
            "('benchmark', 'pie' or a file): adds inputs, pairs possible, inputs without a candidate.",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="The run's --limit.")] = None,
    sample_seed: Annotated[int, typer.Option("--sample-seed", help="The run's --sample-seed.")] = 0,
    data_dir: DataDirOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Also write the result file OUT/review.json (counts, shares, edited fields, "
            "the file's checksum, figlang version and commit) and OUT/predictions.jsonl.gz (one record per row).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Accept / edit / reject counts of a reviewed queue file on its own, without the run folder (a committed verdict file)."""
    from figlang.builders.flute_review import drawn_inputs, verdict_file_results

    ctx = RunContext.create(data_dir)  # the run's context: built here, once; the idiom inputs are drawn from its folder
    inputs = files = None
    if idioms:
        inputs, files = drawn_inputs(idioms, limit=limit, sample_seed=sample_seed, ctx=ctx)
    command = f"figlang build flute verdict-stats {portable_path(verdicts)}"
    if idioms:
        command += (
            f" --idioms {idioms}"
            + (f" --limit {limit}" if limit else "")
            + f" --sample-seed {sample_seed} --data-dir {portable_path(ctx.data_dir)}"
        )
    if out:
        command += f" -o {portable_path(out)}"
    result, records = verdict_file_results(verdicts, inputs, command, input_files=files, ctx=ctx)
    if out:
        written = write_result_files(out, "review.json", result, records)
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_problems("rows not counted", result["problems"], limit=20)
        render_rates(result["rates"], title=f"verification ({verdicts.name})")
        for t, e in result["edited_fields"].items():
            console.print(f"{t}: edited " + ", ".join(f"{f} {n['all']} (E {n['E']}, C {n['C']})" for f, n in e.items()))
        for t, c in result["candidates"].items():
            extra = f" of {c['inputs']} inputs ({c['inputs_without_a_candidate']} without one)" if "inputs" in c else ""
            console.print(
                f"{t}: {c['candidates']} candidates ({c['entailment']} E, {c['contradiction']} C) from {c['inputs_with_a_candidate']}"
                f"{extra}; {c['inputs_with_both']} with both pairs, {c['inputs_with_one']} with one"
            )
        if out:
            console.print(f"[dim]wrote {written[0]} and {written[1]}[/dim]")
    if result["problems"]:
        raise typer.Exit(1)


@app.command("finalize")
def finalize_cmd(
    run: _RunArgument,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for the final files (default RUN/final).")] = None,
    split: Annotated[str, typer.Option("--split", help="Split name in the file names and the task spec (FLUTE: train).")] = "train",
    name: Annotated[str, typer.Option("--name", help="Task name in the spec.")] = "flute-created",
    include_unreviewed: Annotated[
        bool, typer.Option("--include-unreviewed", help="Also write candidates without a verdict (marked).")
    ] = False,
) -> None:
    """Write accepted and edited pairs in FLUTE's format, a combined file and a figlang task spec (task.yaml)."""
    from figlang.builders.flute_review import finalize

    result = finalize(run, out, split=split, name=name, include_unreviewed=include_unreviewed)
    render_rates(result["rates"])
    for t, n in result["written"].items():
        console.print(f"{t}: {n} pair(s) → {result['files'][t]}")
    console.print(f"not written: {result['left_out']}")
    console.print(f"task spec: {result['spec']} (check it: figlang data stats --task {result['spec']})")
