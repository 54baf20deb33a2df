"""`figlang build impli …`: generate IMPLI-style NLI pairs (paper section 3) and check the generator against IMPLI."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from figlang.builders.impli import (
    DEFAULT_MODEL,
    FILTER_REASONS,
    MISMATCH_CATEGORIES,
    SKIP_REASONS,
    TSVETKOV_XLSX,
    BuildResult,
    Generator,
    build_metaphor_pairs,
    compare_with_impli_metaphors,
    derive_lexicon,
    load_nlp,
    read_lexicon,
    read_metaphor_replacements,
    read_sentences,
    read_tsvetkov_xlsx,
    regenerate_impli,
    sentences_from_impli,
    write_lexicon,
    write_outputs,
    write_regeneration_results,
    write_sentences,
)
from figlang.core.errors import FiglangError, LoadOptions, LoadReport
from figlang.core.io import write_json, write_jsonl
from figlang.core.context import RunContext
from figlang.core.text import common_affix
from figlang.core.provenance import portable_path
from figlang.core.progress import rate_column
from figlang.cli.common import DataDirOption, JsonReportOption, QueueLimitOption, SpacyModelOption, console, err_console, print_problems
from figlang.lexicon.wordnet import load_wordnet

app = typer.Typer(
    help="Build IMPLI pairs (paper section 3): idioms replaced by definitions in figurative contexts "
    "(entailment) and literal contexts (non-entailment), adversarial definitions, WordNet antonyms, "
    "literal replacements of metaphors; and regenerate IMPLI itself to measure the generator.",
    no_args_is_help=True,
)

SentencesOption = Annotated[
    Path,
    typer.Option(
        "--sentences",
        "-s",
        help="Sentences: TSV 'sentence<TAB>idiom<TAB>label[<TAB>source]' (label figurative|literal, idiom may be empty) or JSONL.",
    ),
]
LexiconOption = Annotated[
    Path,
    typer.Option(
        "--lexicon", "-l", help="Lexicon: TSV 'idiom<TAB>definition' (base forms; one's/oneself/someone/something are slots) or JSONL."
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "--out", "-o", help="Output folder: <out>/impli/idioms/*.tsv (IMPLI format), <out>/jsonl/*.jsonl (provenance), <out>/report_*.json."
    ),
]
SourceOption = Annotated[
    str | None, typer.Option("--source", help="Corpus name used in the output file names (default: the sentence file's stem).")
]
LenientOption = Annotated[bool, typer.Option("--lenient", help="Skip and report malformed input lines instead of stopping at the first.")]
CapitaliseOption = Annotated[
    bool, typer.Option("--capitalise/--no-capitalise", help="Capitalise a definition that starts a sentence (IMPLI itself mostly did not).")
]
#: antonyms and metaphors both read WordNet through load_wordnet, so they share its default
WordnetDirOption = Annotated[
    Path | None,
    typer.Option("--wordnet-dir", help="WordNet 3.0 dict folder (default: $FIGLANG_WORDNET_DIR, then /usr/share/wordnet)."),
]
#: The generator's output folder that the review commands (review-export, review-import, review-stats) read.
_OutputFolderArgument = Annotated[Path, typer.Argument(help="The generator's output folder.")]


@contextlib.contextmanager
def _progress() -> Iterator:
    """A rich progress display; yields progress(stage, done, total) with one bar per stage."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        rate_column(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err_console, transient=False) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total or None)
            bar.update(tasks[stage], completed=done, total=total or None)

        yield update


def _options(lenient: bool) -> tuple[LoadOptions, LoadReport]:
    report = LoadReport()
    return LoadOptions(lenient=lenient, report=report), report


def _print_load_problems(what: str, report: LoadReport) -> list[str]:
    problems = [str(w) for w in report.warnings]
    print_problems(what, problems, counted="malformed line(s) skipped")
    return problems


def render_build(result: BuildResult, out: Path | None, title: str) -> None:
    r = result.report
    table = Table(title=f"{title}: {r.kept:,} pairs from {r.inputs:,} inputs" + (f" -> {out}" if out else ""), title_justify="left")
    for col, just in (("pair type", "left"), ("source", "left"), ("label", "left"), ("pairs", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for key, n in sorted(r.counts.items()):
        pair_type, source, label = key.split("/")
        table.add_row(pair_type, source, label, f"{n:,}")
    if not r.counts:
        table.add_row("-", "-", "-", "0")
    console.print(table)
    if r.filtered or r.skipped:
        why = Table(title="filtered pairs and inputs without pairs", title_justify="left")
        for col in ("kind", "reason", "count", "meaning"):
            why.add_column(col, overflow="fold")
        for k, v in sorted(r.filtered.items(), key=lambda kv: -kv[1]):
            why.add_row("pair filtered", k, f"{v:,}", FILTER_REASONS.get(k, ""))
        for k, v in sorted(r.skipped.items(), key=lambda kv: -kv[1]):
            why.add_row("input skipped", k, f"{v:,}", SKIP_REASONS.get(k, ""))
        console.print(why)
    if r.ice:
        flexible = sorted(r.ice.items(), key=lambda kv: -kv[1])[:5]
        console.print(
            f"ICE per idiom for {len(r.ice):,} idioms (report file); most flexible: " + ", ".join(f"{k} {v:.2f}" for k, v in flexible)
        )


def _finish(result: BuildResult, out: Path, report_name: str, title: str, load_problems: list[str]) -> None:
    result.report.input_errors.extend(load_problems)
    written = write_outputs(result, out, report_name)
    render_build(result, out, title)
    console.print(f"[dim]wrote {len(written)} files; report: {out / report_name}[/dim]")


def _window(a: str, b: str, context: int = 30) -> tuple[str, str]:
    """The two strings cut to their differing middle with ``context`` characters either side."""
    i, j = common_affix(a, b)
    start = max(0, i - context)

    def cut(s: str) -> str:
        end = min(len(s), len(s) - j + context)
        return ("…" if start > 0 else "") + s[start:end] + ("…" if end < len(s) else "")

    return cut(a), cut(b)


@app.command("lexicon")
def lexicon_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Lexicon TSV to write (idiom<TAB>definition).")],
    data_dir: DataDirOption = None,
    pair_type: Annotated[
        str, typer.Option("--pair-type", help="IMPLI pairs to read: fig_context, lit_context or adversarial_definition.")
    ] = "fig_context",
    source: Annotated[
        list[str] | None, typer.Option("--source", help="Only these IMPLI sources (magpie, pie, semeval); repeatable.")
    ] = None,
    model: SpacyModelOption = DEFAULT_MODEL,
    details: Annotated[
        Path | None, typer.Option("--details", help="Also write one JSON line per IMPLI pair: its idiom, definition and origin.")
    ] = None,
) -> None:
    """Derive an idiom lexicon (base form -> base-form definition) from IMPLI's own pairs.

    The idiom is the premise span the hypothesis replaced, the definition what replaced it, both
    lemmatised to base forms with spaCy (head verb -> lemma, possessives -> one's).
    """
    if pair_type not in ("fig_context", "lit_context", "adversarial_definition"):
        raise FiglangError(f"--pair-type must be fig_context, lit_context or adversarial_definition, not {pair_type!r}")
    kind = "adversarial" if pair_type == "adversarial_definition" else "definition"
    ctx = RunContext.create(data_dir)  # the run's context: built here, once; IMPLI's pairs are in its folder
    with _progress() as progress:
        derivation = derive_lexicon(ctx.data_dir, (pair_type,), source, load_nlp(model), progress, kind=kind)
    n = write_lexicon(derivation.lexicon, out, kind)
    if details:
        write_jsonl(
            details,
            [
                {
                    "idiom": p.idiom,
                    "definition": p.definition,
                    "premise": p.premise,
                    "hypothesis": p.hypothesis,
                    "source": p.source,
                    "origin": f"{p.path}:{p.line}",
                }
                for p in derivation.pairs
            ],
        )
    table = Table(title=f"lexicon from IMPLI {pair_type} pairs -> {out}", title_justify="left")
    table.add_column("count")
    table.add_column("value", justify="right")
    table.add_row("IMPLI pairs read", f"{len(derivation.pairs) + sum(derivation.problems.values()):,}")
    table.add_row("pairs used", f"{len(derivation.pairs):,}")
    table.add_row("idioms (base forms)", f"{len(derivation.lexicon):,}")
    table.add_row(f"{kind}s written", f"{n:,}")
    for k, v in sorted(derivation.problems.items()):
        table.add_row(f"skipped: {k}", f"{v:,}")
    console.print(table)


@app.command("sentences")
def sentences_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Sentences TSV to write (sentence<TAB>idiom<TAB>label).")],
    data_dir: DataDirOption = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="Only these IMPLI sources; repeatable.")] = None,
) -> None:
    """Export IMPLI's idiom premises as a sentences file (fig_context figurative, lit_context literal; idiom left empty)."""
    ctx = RunContext.create(data_dir)  # the run's context: built here, once; IMPLI's pairs are in its folder
    sents = sentences_from_impli(ctx.data_dir, source)
    n = write_sentences(sents, out)
    console.print(f"wrote {n:,} sentences to {out}")


def _load_inputs(sentences: Path, lexicon: Path | None, lenient: bool, source: str | None, adversarial: Path | None = None):
    opts, rep = _options(lenient)
    sents = read_sentences(sentences, opts, source)
    lex = read_lexicon(lexicon, opts) if lexicon else None
    if adversarial:
        lex = read_lexicon(adversarial, opts, kind="adversarial", lexicon=lex)
    problems = _print_load_problems("input", rep)
    if lex is None or not len(lex):
        raise FiglangError("the lexicon has no usable entries")
    console.print(
        f"{len(sents):,} sentences, {len(lex):,} idioms ({lex.count('definition'):,} definitions, {lex.count('adversarial'):,} adversarial)"
    )
    return sents, lex, problems


@app.command("substitute")
def substitute_cmd(
    sentences: SentencesOption,
    lexicon: LexiconOption,
    out: OutOption,
    source: SourceOption = None,
    lenient: LenientOption = False,
    model: SpacyModelOption = DEFAULT_MODEL,
    capitalise: CapitaliseOption = True,
) -> None:
    """Silver pairs: replace each idiom by its definitions (figurative -> entailment, literal -> non-entailment)."""
    _generate("substitute", "substitution", sentences, lexicon, out, source, lenient, model, capitalise)


def _generate(
    build: str,
    what: str,
    sentences: Path,
    lexicon: Path | None,
    out: Path,
    source: str | None,
    lenient: bool,
    model: str,
    capitalise: bool,
    adversarial: Path | None = None,
    **options: Any,
) -> None:
    """Load the inputs, run one of the generator's builds (substitute, adversarial, antonyms) and write its outputs."""
    sents, lex, problems = _load_inputs(sentences, lexicon, lenient, source, adversarial)
    gen = Generator(lex, load_nlp(model), capitalise=capitalise)
    with _progress() as progress:
        result = getattr(gen, build)(sents, progress=progress, **options)
    _finish(result, out, f"report_{build}.json", what, problems)


@app.command("adversarial")
def adversarial_cmd(
    sentences: SentencesOption,
    adversarial: Annotated[
        Path, typer.Option("--adversarial", "-a", help="Adversarial definitions: TSV 'idiom<TAB>wrong definition' or JSONL.")
    ],
    out: OutOption,
    lexicon: Annotated[
        Path | None, typer.Option("--lexicon", "-l", help="Optional lexicon of true definitions (only idioms are taken from it here).")
    ] = None,
    source: SourceOption = None,
    lenient: LenientOption = False,
    model: SpacyModelOption = DEFAULT_MODEL,
    capitalise: CapitaliseOption = True,
) -> None:
    """Adversarial pairs: wrong-but-plausible definitions in figurative contexts -> non-entailment."""
    _generate(
        "adversarial", "adversarial definitions", sentences, lexicon, out, source, lenient, model, capitalise, adversarial=adversarial
    )


@app.command("antonyms")
def antonyms_cmd(
    sentences: SentencesOption,
    lexicon: LexiconOption,
    out: OutOption,
    source: SourceOption = None,
    lenient: LenientOption = False,
    model: SpacyModelOption = DEFAULT_MODEL,
    wordnet_dir: WordnetDirOption = None,
    capitalise: CapitaliseOption = True,
) -> None:
    """Antonym pairs: a key word of the definition replaced by its WordNet antonym, in figurative contexts -> non-entailment."""
    wn = load_wordnet(wordnet_dir)  # before parsing anything: a missing WordNet fails fast
    _generate("antonyms", "antonym replacement", sentences, lexicon, out, source, lenient, model, capitalise, wordnet=wn)


@app.command("metaphors")
def metaphors_cmd(
    out: OutOption,
    data_dir: DataDirOption = None,
    xlsx: Annotated[
        Path | None, typer.Option("--xlsx", help=f"Tsvetkov et al.'s Datasets_ACL2014.xlsx (default: <data-dir>/{TSVETKOV_XLSX}).")
    ] = None,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="SVO (subject-verb-object) and/or AN (adjective-noun); repeatable. Default both.")
    ] = None,
    replacements: Annotated[
        Path | None, typer.Option("--replacements", help="TSV 'metaphor<TAB>literal word' taking precedence over WordNet.")
    ] = None,
    source: Annotated[str, typer.Option("--source", help="Corpus name in the output file name.")] = "tsvetkov",
    model: SpacyModelOption = DEFAULT_MODEL,
    wordnet_dir: WordnetDirOption = None,
    compare: Annotated[
        bool, typer.Option("--compare/--no-compare", help="Compare with IMPLI's replacement_tsvetkov_e.tsv when the data dir has it.")
    ] = True,
) -> None:
    """Metaphor replacement: the metaphorical verb (SVO) or adjective (AN) replaced by a literal word -> entailment."""
    base = RunContext.create(data_dir).data_dir  # the run's context (its data folder), built here, once
    path = xlsx or base / TSVETKOV_XLSX
    items = read_tsvetkov_xlsx(path, tuple(k.upper() for k in kind) if kind else ("SVO", "AN"))
    reps = read_metaphor_replacements(replacements) if replacements else None
    wn = load_wordnet(wordnet_dir)
    with _progress() as progress:
        result = build_metaphor_pairs(items, load_nlp(model), wn, reps, source, progress)
    _finish(result, out, "report_metaphors.json", "metaphor replacement", [])
    impli_file = base / "impli" / "metaphors" / "replacement_tsvetkov_e.tsv"
    if compare and source == "tsvetkov" and impli_file.exists():
        cmp = compare_with_impli_metaphors(result.pairs, base)
        write_json(out / "compare_impli_metaphors.json", cmp)
        console.print(
            f"against IMPLI's {cmp['impli_pairs']} tsvetkov replacements: {cmp['shared_premises']} shared premises, "
            f"{cmp['exact']} identical hypotheses, {cmp['same_replacement_word']} with the same replacement word "
            f"(details: {out / 'compare_impli_metaphors.json'})"
        )


@app.command("regenerate")
def regenerate_cmd(
    data_dir: DataDirOption = None,
    source: Annotated[
        list[str] | None, typer.Option("--source", help="IMPLI sources (magpie, pie, semeval); repeatable. Default all three.")
    ] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="Score a fixed random sample of this many (premise, definition) items.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 13,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder for regeneration.json, items.jsonl and the derived lexicon.tsv.")
    ] = None,
    model: SpacyModelOption = DEFAULT_MODEL,
    capitalise: CapitaliseOption = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON instead of tables.")] = False,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            help="Also write a result file: RESULTS/regeneration.json (the figures, "
            "the command, the IMPLI files' checksums, figlang version and commit) and "
            "RESULTS/predictions.jsonl.gz (one compact record per item).",
        ),
    ] = None,
) -> None:
    """Regenerate IMPLI's figurative-context entailment pairs from their premises and a lexicon derived from them.

    Reports the exact-match rate of the generated hypotheses against IMPLI's, per source and
    overall, with mismatches counted by category (inflection, slot filling, span detection,
    capitalisation, other). The lexicon comes from the same pairs: this measures finding the
    idiom, inflecting and filling slots, not how well a lexicon carries to unseen idioms.
    """
    sources = tuple(source) if source else ("magpie", "pie", "semeval")
    ctx = RunContext.create(data_dir, seed=seed)  # the run's context: built here, once; reading and checksums share its folder
    with _progress() as progress:
        res = regenerate_impli(ctx.data_dir, sources, sample, seed, load_nlp(model), progress, capitalise=capitalise)
    if out:
        write_json(out / "regeneration.json", res.to_dict())
        write_jsonl(out / "items.jsonl", res.items)
        write_lexicon(res.lexicon, out / "lexicon.tsv")
    if results:
        command = "figlang build impli regenerate" + (f" --data-dir {portable_path(data_dir)}" if data_dir else "")
        command += "".join(f" --source {s}" for s in source or [])
        command += (f" --sample {sample} --seed {seed}" if sample else "") + (f" --model {model}" if model != DEFAULT_MODEL else "")
        command += ("" if capitalise else " --no-capitalise") + f" --results {portable_path(results)}"
        write_regeneration_results(res, results, ctx.data_dir, command=command)
    if as_json:
        typer.echo(json.dumps(res.to_dict(), indent=2, ensure_ascii=False))
        return
    title = f"IMPLI fig_context regeneration: {res.overall.items:,} (premise, definition) items"
    title += f" (sample of {res.population:,}, seed {res.seed})" if res.sample and res.sample < res.population else " (all)"
    # two narrow tables rather than one wide one: an 80-column terminal or log truncated the wide one's numbers
    table = Table(title=title, title_justify="left")
    for col in ("source", "items", "exact", "exact %", "ignoring case %", "exact but filtered"):
        table.add_column(col, justify="left" if col == "source" else "right", overflow="fold")
    why = Table(title="mismatches by category", title_justify="left")
    for col in ("source", *MISMATCH_CATEGORIES):
        why.add_column(col, justify="left" if col == "source" else "right", overflow="fold")
    rows = [*res.per_source.items(), ("overall", res.overall)]
    for name, s in rows:
        table.add_row(
            name,
            f"{s.items:,}",
            f"{s.exact:,}",
            f"{100 * s.rate:.1f}",
            f"{100 * s.exact_ignoring_case / max(s.items, 1):.1f}",
            f"{s.filtered:,}",
        )
        why.add_row(name, *(f"{s.categories.get(c, 0):,}" for c in MISMATCH_CATEGORIES))
    console.print(table)
    console.print(why)
    for cat in MISMATCH_CATEGORIES:
        for ex in res.examples.get(cat, [])[:2]:
            gold, gen = _window(ex["impli"], ex["generated"] or "")
            console.print(f"[bold]{cat}[/bold] ({ex['source']}, definition {ex['definition']!r})", markup=True, highlight=False)
            console.print(
                f"  IMPLI:     {gold}\n  generated: {gen if ex['generated'] else '(idiom not found)'}", markup=False, highlight=False
            )
    if out:
        console.print(f"[dim]details in {out}[/dim]")


# --- review: IMPLI's manual verification step ----------------------------------------------------------------------


def _render_impli_rates(rates: dict) -> None:
    from figlang.cli.build_flute import render_rates

    render_rates(rates, group="pair type", title="verification (generated pairs)", items="pairs", todo="todo")  # 80 columns


@app.command("review-export")
def review_export_cmd(
    out: Annotated[Path, typer.Argument(help="The generator's output folder (the --out of substitute / adversarial / …).")],
    queue: Annotated[Path, typer.Option("--queue", "-q", help="Review queue to write: .csv / .tsv (spreadsheets) or .jsonl.")],
    include_reviewed: Annotated[bool, typer.Option("--all", help="Also pairs that already have a verdict.")] = False,
    pair_type: Annotated[list[str] | None, typer.Option("--pair-type", help="Only these pair types (repeatable).")] = None,
    limit: QueueLimitOption = None,
) -> None:
    """Write the verification queue: each pair with empty verdict / reason / edited_* / note columns to fill."""
    from figlang.builders.impli.review import REJECT_REASONS, export_queue

    n = export_queue(out, queue, include_reviewed=include_reviewed, pair_types=tuple(pair_type) if pair_type else None, limit=limit)
    console.print(
        f"wrote {n} pair(s) to {queue}: set verdict to accept / edit / reject; edit: fill edited_premise / "
        f"edited_hypothesis / edited_label; reject: reason = {' | '.join(REJECT_REASONS)}"
    )
    console.print(f"then: figlang build impli review-import {out} {queue}")


@app.command("review-import")
def review_import_cmd(
    out: _OutputFolderArgument,
    queue: Annotated[Path, typer.Argument(help="The reviewed queue (CSV / TSV / JSONL).")],
    as_json: JsonReportOption = False,
) -> None:
    """Check and store verdicts in OUT/review/verdicts.jsonl (bad rows are listed with file:line and left out)."""
    from figlang.builders.impli.review import REVIEW
    from figlang.cli.build_flute import show_import

    show_import(queue, REVIEW, out, as_json, _render_impli_rates)


@app.command("review-stats")
def review_stats_cmd(
    out: _OutputFolderArgument,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rates as JSON.")] = False,
) -> None:
    """Accept / edit / reject counts per pair type, and why pairs were rejected."""
    from figlang.builders.impli.review import reject_reasons, review_rates

    rates, reasons = review_rates(out), reject_reasons(out)
    if as_json:
        typer.echo(json.dumps({"rates": rates, "reject_reasons": reasons}, indent=2, ensure_ascii=False))
        return
    _render_impli_rates(rates)
    if reasons:
        console.print("rejected because: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))


@app.command("finalize")
def finalize_cmd(
    out: _OutputFolderArgument,
    dest: Annotated[Path | None, typer.Option("--dest", "-d", help="Folder for the verified files (default OUT/final).")] = None,
    include_unreviewed: Annotated[bool, typer.Option("--include-unreviewed", help="Also write pairs without a verdict.")] = False,
) -> None:
    """Write accepted and edited pairs in IMPLI's TSV layout (rejected ones left out) with manifest.json."""
    from figlang.builders.impli.review import finalize

    result = finalize(out, dest, include_unreviewed=include_unreviewed)
    _render_impli_rates(result["rates"])
    for rel, n in result["files"].items():
        console.print(f"{n} pair(s) → {Path(result['out_dir']) / rel}")
    console.print(f"not written: {result['left_out'] or 'nothing'}; manifest: {Path(result['out_dir']) / 'manifest.json'}")
