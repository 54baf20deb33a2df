"""`figlang explain`: label and explain premise/hypothesis pairs, or score a run's explanations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write, decode_utf8, parse_jsonl, write_json, write_jsonl
from figlang.core.context import RunContext
from figlang.methods.prompted.explain_options import ExplainOptions
from figlang.core.options import default_of, option_help
from figlang.cli.common import (
    DataDirOption,
    NoRequestCacheOption,
    RequestCacheDirOption,
    console,
    err_console,
    merge_flag_options,
    parse_key_values as _parse_options,
)


def _help(name: str) -> str:
    """An explain option's line of help, from its dataclass (written once there)."""
    text = option_help(ExplainOptions, name)
    return text[:1].upper() + text[1:]


def _read_pairs(path: Path) -> list[dict]:
    """pairs.jsonl: one JSON object a line with premise, hypothesis (optional figure_type, idiom, id)."""
    if not path.is_file():
        raise FiglangError(f'no file at {path}: pass a JSON-lines file with one {{"premise", "hypothesis"}} object a line')
    data = path.read_bytes()
    text = decode_utf8(data, path)
    pairs = []
    for n, obj, problem in parse_jsonl(text):
        if obj is None:
            raise FiglangError(f"{path}:{n}: {problem}; each line must be one JSON object")
        if not isinstance(obj, dict):
            raise FiglangError(f"{path}:{n}: each line must be a JSON object with 'premise' and 'hypothesis'")
        missing = [k for k in ("premise", "hypothesis") if k not in obj]
        if missing:
            raise FiglangError(f"{path}:{n}: missing {', '.join(missing)}")
        pairs.append(obj)
    if not pairs:
        raise FiglangError(f"{path}: no pairs in the file")
    return pairs


def _score(run: Path, out: Path | None, bertscore_model: str, bertscore_layers: int | None, paper: bool, examples: int, seed: int) -> None:
    from figlang.evaluation.explanations import run_task, score_explanations, side_by_side, side_by_side_markdown

    result = score_explanations(run, bertscore_model=bertscore_model or None, bertscore_layers=bertscore_layers, paper=paper)
    target = out or (run / "explanations.json" if run.is_dir() else run.with_suffix(".explanations.json"))
    write_json(target, result)
    from rich.table import Table

    table = Table(title=f"explanations: {run} (n={result['n']})")
    for col in ("group", "n", "label acc", "ROUGE-L", "BLEU", "BERTScore"):
        table.add_column(col, justify="right" if col != "group" else "left")
    groups = {"overall": result["overall"], **result["by_figure_type"]}
    for name, g in groups.items():
        table.add_row(
            name, str(g["n"]), *(f"{g[k]:.2f}" if k in g else "—" for k in ("label_accuracy", "rougeL_f1", "bleu", "bertscore_f1"))
        )
    console.print(table)
    paper_acc = result["paper_acc"]
    console.print(f"paper Acc@0/50/60: {'computed' if paper_acc['computed'] else paper_acc['reason']}")
    console.print(f"[dim]wrote {target}[/dim]")
    if examples:
        md = target.with_name(target.stem + ".examples.md")
        with atomic_write(md) as f:
            f.write(side_by_side_markdown(side_by_side(run, examples, seed), *run_task(run)))  # ids, where the licence keeps texts out
        console.print(f"[dim]wrote {examples} examples per figure type (seed {seed}) to {md}[/dim]")


def explain_cmd(
    premise: Annotated[str | None, typer.Option("--premise", "-p", help="The literal sentence.")] = None,
    hypothesis: Annotated[str | None, typer.Option("--hypothesis", "-H", help="The figurative sentence.")] = None,
    figure_type: Annotated[
        str | None,
        typer.Option(
            "--figure-type",
            "-f",
            help="sarcasm, simile, metaphor or idiom: examples of that kind are shown to the model. Without it (and --idiom) the shipped figure-type model types the pair and an idiom is looked up with its meaning.",
        ),
    ] = None,
    idiom: Annotated[str | None, typer.Option("--idiom", help="The idiom in the hypothesis (its meaning is shown when known).")] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", help='Explain every pair of a JSON-lines file ({"premise", "hypothesis"[, "figure_type", "idiom", "id"]} a line).'
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the answers as JSON lines here (with --file), or the scores here (with --score)."),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Instruction model that writes the explanations (qwen2.5-1.5b: Transformers bfloat16 with AMX or on AMD's AVX-512, float32 on other AVX-512 CPUs, else llama.cpp: measured for each class of CPU).",
        ),
    ] = "qwen2.5-1.5b",
    mode: Annotated[
        str | None,
        typer.Option("--mode", help=f"{_help('mode')}. Default: {default_of(ExplainOptions, 'mode')}.", show_default=False),
    ] = None,
    label_method: Annotated[
        str | None,
        typer.Option(
            "--label-method",
            help="pipeline: the label method (default: 'trained' with the shipped FLUTE label model figlang:flute-lora-mpnet, LoRA adapters on mpnet; nli-score: zero-shot with the explaining model; 'trained' with --label-model DIR: a FLUTE classifier of yours).",
        ),
    ] = None,
    label_model: Annotated[
        str | None,
        typer.Option("--label-model", help="pipeline: the label method's model (a `figlang train -t flute -m nli` folder for 'trained')."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("--k", min=0, help=f"{_help('k')}. Default: {default_of(ExplainOptions, 'k')}.", show_default=False),
    ] = None,
    threads: Annotated[int | None, typer.Option("--threads", help="CPU threads for the model.")] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-O", help="More method/backend options KEY=VALUE (see `figlang methods`).")
    ] = None,
    score: Annotated[
        Path | None,
        typer.Option(
            "--score",
            help="Instead: score the explanations of a `figlang eval -t flute` run folder (ROUGE-L, BLEU, BERTScore, by figure type).",
        ),
    ] = None,
    bertscore_model: Annotated[
        str,
        typer.Option(
            help="With --score: BERTScore encoder ('' to skip). The offline minilm is NOT comparable to the paper's deberta-large-mnli."
        ),
    ] = "minilm",
    bertscore_layers: Annotated[int | None, typer.Option(help="With --score: the BERTScore layer (pinned and recorded).")] = 6,
    no_paper: Annotated[
        bool, typer.Option("--no-paper", help="With --score: skip the paper's Acc@50/60 (deberta-large-mnli + BLEURT-20).")
    ] = False,
    examples: Annotated[
        int, typer.Option("--examples", min=0, help="With --score: also write N side-by-side examples per figure type (markdown).")
    ] = 0,
    seed: Annotated[int, typer.Option("--seed", help="With --score --examples: the seed that draws the examples.")] = 0,
    data_dir: DataDirOption = None,
    cache_dir: RequestCacheDirOption = None,
    no_cache: NoRequestCacheOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Does the literal premise entail or contradict the figurative hypothesis, and why?

    Examples:

      figlang explain --premise "He was very angry." --hypothesis "He was as calm as a cucumber." -f simile --data-dir ../shared/data

      figlang explain --file pairs.jsonl -o answers.jsonl --threads 2

      figlang explain --label-method trained --label-model runs/flute-nli-mpnet -p "…" -H "…"

      figlang explain --score runs/flute-val-explain      (after figlang eval -t flute -m explain … -o runs/flute-val-explain)

    The first call loads the models (about a minute for qwen2.5-1.5b); every answer is cached, so
    asking again is instant.
    """
    if score is not None:
        _score(score, out, bertscore_model, bertscore_layers, not no_paper, examples, seed)
        return
    from figlang.explain import explain_pairs

    if file is not None:
        if premise or hypothesis:
            raise FiglangError("give either --file or --premise/--hypothesis, not both")
        pairs = _read_pairs(file)
    else:
        if premise is None or hypothesis is None:
            raise FiglangError("pass --premise and --hypothesis (or --file pairs.jsonl, or --score RUN)")
        pairs = [{"premise": premise, "hypothesis": hypothesis, "figure_type": figure_type, "idiom": idiom}]
    flags = {"mode": ("--mode", mode), "k": ("--k", k), "label_method": ("--label-method", label_method)}
    flags.update(label_model=("--label-model", label_model), threads=("--threads", threads))
    options = merge_flag_options(flags, _parse_options(option))  # a key given as a flag and as -O is refused
    ctx = RunContext.create(data_dir, cache_dir)  # the run's context: built here, once, and handed down
    answers = explain_pairs(pairs, model=model, ctx=ctx, use_cache=not no_cache, progress=len(pairs) > 1, **options)
    rows = []
    for pair, a in zip(pairs, answers):
        row = {"id": pair.get("id"), **a.to_dict()} if "id" in pair else a.to_dict()
        rows.append(row)
    if out is not None:
        write_jsonl(out, rows)
        err_console.print(f"[dim]wrote {len(rows)} answers to {out}[/dim]")
    if as_json:
        for row in rows:
            console.print_json(json.dumps(row, ensure_ascii=False))
        return
    if out is not None and len(rows) > 1:
        return
    for a in answers:
        if a.valid:
            console.print(f"[bold]{a.label}[/bold]: {a.explanation or '(no explanation)'}")
        else:
            console.print(f"[red]invalid answer[/red]: {a.error} (raw: {a.raw!r})")
        by = a.produced_by
        console.print(
            f"[dim]label by {by.get('label_method') or by.get('model')}, explanation by {by.get('writer') or by.get('model')} "
            f"({by.get('mode')}, {len(by.get('examples') or [])} examples){'; from the cache' if a.cached else ''}[/dim]"
        )
