"""`figlang build narratives …`: mine candidate narratives, export annotation tasks, import the answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress
from rich.table import Table

from figlang.builders.annotation import export_tasks, import_answers, load_candidates
from figlang.builders.corpus import DEFAULT_PATTERNS, ReadOptions
from figlang.lexicon.idioms import Lexicon, load_lexicon
from figlang.builders.narratives import SEGMENTERS, MinerConfig, MineSummary, mine_corpus
from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.cli.build_flute import task_progress
from figlang.cli.common import DataDirOption, JsonReportOption, SpacyModelOption, console, err_console, print_problems

app = typer.Typer(
    help="Build figurative narratives (paper section 3): mine a corpus for idioms and similes, "
    "export annotation tasks for writers, import their continuations in the benchmark format.",
    no_args_is_help=True,
)

COUNT_ROWS = [
    ("documents", "documents"),
    ("paragraphs", "paragraphs"),
    ("sentences", "sentences"),
    ("prefiltered", "pre-filtered out (never tagged)"),
    ("tagged", "tagged only (idiom candidates)"),
    ("parsed", "parsed (simile candidates)"),
    ("idiom_hits", "idiom hits"),
    ("simile_hits", "simile hits"),
    ("narratives", "narratives written"),
]


# `mine_cmd`'s options; their defaults are the miner's own (MinerConfig, ReadOptions), written once there
_MINER = MinerConfig()
_MineCorpusOption = Annotated[list[Path], typer.Argument(help="Text files, folders, .gz files or JSONL files (one document per line).")]
_MineOutOption = Annotated[Path, typer.Option("--out", "-o", help="Output folder (resumable: rerun the same command to finish it).")]
_MineLexiconOption = Annotated[str, typer.Option("--lexicon", "-l", help="Idiom lexicon: 'benchmark', 'pie', or a TSV/JSONL file.")]
_MineWorkersOption = Annotated[int, typer.Option("--workers", "-w", min=1, help="Worker processes (or Ray CPUs with --ray).")]
_MineRayOption = Annotated[bool, typer.Option("--ray", help="Run shards as Ray tasks (a local cluster unless --ray-address).")]
_MineRayAddressOption = Annotated[str | None, typer.Option("--ray-address", help="Address of a running Ray cluster.")]
_MineSimilesOption = Annotated[bool, typer.Option("--similes/--no-similes", help="Mine explicit similes.")]
_MineIdiomsOption = Annotated[bool, typer.Option("--idioms/--no-idioms", help="Mine lexicon idioms.")]
_MineImplicitLikeOption = Annotated[
    bool, typer.Option("--verb-like/--no-verb-like", help="Also record 'VERB like NP' similes (no property).")
]
_MineBareAsOption = Annotated[bool, typer.Option("--bare-as/--no-bare-as", help="Also the 'ADJ as NP' pattern ('white as a sheet').")]
_MineSegmenterOption = Annotated[str, typer.Option("--segmenter", help=f"Sentence splitter: {', '.join(SEGMENTERS)}.")]
_MineTextFieldOption = Annotated[str, typer.Option("--text-field", help="JSONL field holding the document text.")]
_MineIdFieldOption = Annotated[str | None, typer.Option("--id-field", help="JSONL field holding a document id.")]
_MineEncodingOption = Annotated[str, typer.Option("--encoding", help="'auto' (UTF-8/BOM, else Windows-1252 with a note) or a codec name.")]
_MineGutenbergOption = Annotated[
    bool, typer.Option("--strip-gutenberg/--keep-gutenberg", help="Strip Project Gutenberg headers and footers.")
]
_MineContextOption = Annotated[int, typer.Option("--context", min=0, help="Sentences before the expression's sentence.")]
_MineMinWordsOption = Annotated[int, typer.Option("--min-words", help="Shortest narrative, in words.")]
_MineMaxWordsOption = Annotated[int, typer.Option("--max-words", help="Longest narrative, in words.")]
_MineMaxSentenceWordsOption = Annotated[int, typer.Option("--max-sentence-words", help="Longest sentence in a narrative (tokens).")]
_MineMaxGapOption = Annotated[int, typer.Option("--max-gap", min=0, help="Words an idiom may have inserted at one place.")]
_MineMaxParagraphCharsOption = Annotated[
    int, typer.Option("--max-paragraph-chars", help="Longer paragraphs/lines are skipped and reported.")
]
_MineDocsPerShardOption = Annotated[int, typer.Option("--docs-per-shard", min=1, help="JSONL lines per shard.")]
_MinePatternOption = Annotated[list[str] | None, typer.Option("--pattern", help="File name patterns read inside folders (repeatable).")]
_MineRestartOption = Annotated[bool, typer.Option("--restart", help="Discard finished shards in --out and start again.")]
_MineStrictLexiconOption = Annotated[bool, typer.Option("--strict-lexicon", help="Stop at the first malformed lexicon line.")]


@app.command("mine")
def mine_cmd(
    corpus: _MineCorpusOption,
    out: _MineOutOption,
    lexicon: _MineLexiconOption = "benchmark",
    workers: _MineWorkersOption = 1,
    ray: _MineRayOption = False,
    ray_address: _MineRayAddressOption = None,
    similes: _MineSimilesOption = _MINER.similes,
    idioms: _MineIdiomsOption = _MINER.idioms,
    implicit_like: _MineImplicitLikeOption = _MINER.implicit_like,
    bare_as: _MineBareAsOption = _MINER.bare_as,
    model: SpacyModelOption = _MINER.model,
    segmenter: _MineSegmenterOption = _MINER.segmenter,
    text_field: _MineTextFieldOption = _MINER.read.text_field,
    id_field: _MineIdFieldOption = _MINER.read.id_field,
    encoding: _MineEncodingOption = _MINER.read.encoding,
    gutenberg: _MineGutenbergOption = _MINER.read.strip_gutenberg,
    context: _MineContextOption = _MINER.context_sentences,
    min_words: _MineMinWordsOption = _MINER.min_words,
    max_words: _MineMaxWordsOption = _MINER.max_words,
    max_sentence_words: _MineMaxSentenceWordsOption = _MINER.max_sentence_words,
    max_gap: _MineMaxGapOption = _MINER.max_gap,
    max_paragraph_chars: _MineMaxParagraphCharsOption = _MINER.read.max_paragraph_chars,
    docs_per_shard: _MineDocsPerShardOption = 1000,
    pattern: _MinePatternOption = None,
    restart: _MineRestartOption = False,
    strict_lexicon: _MineStrictLexiconOption = False,
    data_dir: DataDirOption = None,
) -> None:
    """Mine CORPUS for idioms and similes and write candidate narratives to OUT/narratives.jsonl."""
    if segmenter not in SEGMENTERS:
        raise FiglangError(f"unknown --segmenter {segmenter!r}; choose one of {', '.join(SEGMENTERS)}")
    ctx = RunContext.create(data_dir)  # the run's context: built here, once; the benchmark and PIE lexicons are in its folder
    lex = _lexicon(lexicon, ctx, strict_lexicon) if idioms else None
    config = MinerConfig(
        model=model,
        segmenter=segmenter,
        idioms=idioms,
        similes=similes,
        bare_as=bare_as,
        implicit_like=implicit_like,
        context_sentences=context,
        min_words=min_words,
        max_words=max_words,
        max_sentence_words=max_sentence_words,
        max_gap=max_gap,
        read=ReadOptions(
            encoding=encoding, text_field=text_field, id_field=id_field, strip_gutenberg=gutenberg, max_paragraph_chars=max_paragraph_chars
        ),
    )
    with task_progress() as progress:
        summary = mine_corpus(
            corpus,
            out,
            lex,
            config,
            workers=workers,
            use_ray=ray,
            ray_address=ray_address,
            docs_per_shard=docs_per_shard,
            restart=restart,
            progress=_miner_events(progress),
            patterns=tuple(pattern) if pattern else DEFAULT_PATTERNS,
        )
    render_summary(summary)
    if summary.failures:
        raise typer.Exit(1)


def _lexicon(lexicon: str, ctx: RunContext, strict: bool) -> Lexicon:
    lex = load_lexicon(lexicon, strict=strict, ctx=ctx)
    console.print(f"lexicon [bold]{lex.name}[/bold]: {len(lex)} idioms ({lex.merged} duplicate lines merged)")
    print_problems("lexicon", [str(w) for w in lex.report.warnings])
    return lex


def _miner_events(progress: Progress) -> Callable[[str, dict], None]:
    """The miner's progress callback: shards done and failed, sentences read and narratives found so far."""
    task = progress.add_task("mining shards", total=None, info="")
    counts = {"sentences": 0, "narratives": 0}

    def on_event(event: str, payload: dict) -> None:
        if event == "plan":
            progress.update(task, total=payload["pending"], info=f"{payload['resumed']} resumed")
        elif event == "shard_done":
            counts["sentences"] += payload["stats"].get("sentences", 0)
            counts["narratives"] += payload["stats"].get("narratives", 0)
            progress.update(task, advance=1, info=f"{counts['sentences']:,} sentences, {counts['narratives']:,} narratives")
        elif event == "shard_failed":
            progress.update(task, advance=1)
            err_console.print(f"[red]shard failed[/red] {payload['location']}: {payload['message']}")

    return on_event


def render_summary(summary: MineSummary) -> None:
    t = summary.totals
    table = Table(title=f"narrative mining: {summary.out_dir}")
    table.add_column("count")
    table.add_column("n", justify="right")
    table.add_row("shards (run / resumed / failed)", f"{summary.ran - len(summary.failures)} / {summary.resumed} / {len(summary.failures)}")
    for key, label in COUNT_ROWS:
        table.add_row(label, f"{t.get(key, 0):,}")
    for key in sorted(k for k in t if k.startswith("skipped:")):
        table.add_row(f"skipped: {key.split(':', 1)[1].replace('_', ' ')}", f"{t[key]:,}")
    for key in sorted(k for k in t if k.startswith("simile_rejected:")):
        table.add_row(f"simile rejected: {key.split(':', 1)[1].replace('_', ' ')}", f"{t[key]:,}", style="dim")
    console.print(table)
    print_problems("skipped input", [f"{s.location}: {s.reason} ({s.detail})" for s in summary.skipped if s.reason != "not_matched"])
    not_matched = [s for s in summary.skipped if s.reason == "not_matched"]
    if not_matched:
        console.print(
            f"[dim]{len(not_matched)} file(s) in the folders did not match the name patterns and were not read "
            f"(e.g. {not_matched[0].path}); see {summary.out_dir / 'skipped.jsonl'}[/dim]"
        )
    print_problems("notes", [f"{s.location}: {s.reason} ({s.detail})" for s in summary.notes])
    if summary.failures:
        print_problems(
            "failed shards (rerun the command to retry them)", [f"{f.shard.location}: {f.kind}: {f.message}" for f in summary.failures]
        )
    console.print(
        f"narratives: {summary.narratives_file}\nall hits (with why a hit gave no narrative): {summary.hits_file}", soft_wrap=True
    )


@app.command("export")
def export_cmd(
    mined: Annotated[Path, typer.Argument(help="A mined folder or its narratives.jsonl.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Tasks file: .csv (spreadsheets) or .jsonl.")],
    fmt: Annotated[str | None, typer.Option("--format", help="csv or jsonl (default: from --out's suffix).")] = None,
    kind: Annotated[list[str] | None, typer.Option("--type", help="Only idiom or simile narratives (repeatable).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many tasks.")] = None,
) -> None:
    """Write annotation tasks: narrative, expression, definition/property, and empty fields for writers."""
    if fmt is not None and fmt not in {"csv", "jsonl"}:
        raise FiglangError(f"unknown --format {fmt!r}; use csv or jsonl")
    candidates = load_candidates(mined)
    n = export_tasks(candidates, out, fmt, tuple(kind) if kind else None, limit)
    console.print(f"wrote {n} task(s) to {out} (fill plausible_continuation, implausible_continuation, literal_use)")


@app.command("import")
def import_cmd(
    answers: Annotated[Path, typer.Argument(help="The writers' answers (the exported CSV/JSONL, filled in).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for idiom.jsonl / simile.jsonl in the benchmark format.")],
    tasks: Annotated[Path | None, typer.Option("--tasks", help="The exported tasks file, to detect edited narratives.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the option1/option2 placement.")] = 0,
    as_json: JsonReportOption = False,
) -> None:
    """Validate answers and write the accepted ones as benchmark records; list what was rejected and why."""
    report = import_answers(answers, out, tasks, seed)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    table = Table(title=f"import of {answers}")
    table.add_column("result")
    table.add_column("rows", justify="right")
    table.add_row("answers read", str(report.rows))
    for kind in ("idiom", "simile"):
        n = sum(1 for r in report.accepted if r["_kind"] == kind)
        if n:
            table.add_row(f"accepted {kind}", str(n))
    table.add_row("dropped: literal use", str(len(report.literal)))
    table.add_row("rejected", str(len(report.rejected)))
    for reason, n in sorted(report.reasons().items()):
        table.add_row(f"  {reason}", str(n), style="dim")
    console.print(table)
    for r in report.rejected[:20]:
        console.print(f"[red]rejected[/red] {answers}:{r['line']} ({r['task_id'] or 'no task_id'}): {'; '.join(r['reasons'])}")
    if len(report.rejected) > 20:
        console.print(f"… {len(report.rejected) - 20} more in {out / 'rejected.jsonl'}")
    for note in report.notes:
        console.print(f"[yellow]note[/yellow] {note}")
    for kind, path in report.files.items():
        console.print(f"{kind}: {path}")


@app.command("check-lexicon")
def check_lexicon_cmd(
    lexicon: Annotated[str, typer.Argument(help="'benchmark', 'pie', or a TSV/JSONL lexicon file.")],
    data_dir: DataDirOption = None,
) -> None:
    """Validate a lexicon: malformed lines and duplicates, with file and line."""
    lex = load_lexicon(lexicon, ctx=RunContext.create(data_dir))  # the run's context: built here, once
    console.print(f"{lex.name}: {len(lex)} idioms, {lex.merged} duplicate line(s) merged, {len(lex.report.warnings)} problem(s)")
    for w in lex.report.warnings:
        console.print(f"  {w}", soft_wrap=True)  # a path:line, whole
    if lex.report.skipped:
        raise typer.Exit(1)
