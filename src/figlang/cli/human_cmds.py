"""`figlang human …`: the narrative paper's human evaluation of generated continuations and FLUTE's of explanations, as round trips."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer
from rich.table import Table

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.io import file_sha256
from figlang.cli.common import DataDirOption, console

app = typer.Typer(
    help="Human evaluation: generated continuations (narratives) and FLUTE explanations (flute-export, flute-import): export for judges, import answers, aggregate.",
    no_args_is_help=True,
)


@app.command("export")
def export_cmd(
    runs: Annotated[
        list[Path], typer.Argument(help="Generation run folders (`figlang eval -t idiom-generation … -o RUN`); each is one system.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the judges' items (CSV + JSONL) and the hidden key.")],
    human: Annotated[bool, typer.Option(help="Add the first gold reference as the system 'human'.")] = True,
    limit: Annotated[int | None, typer.Option(help="Only the first N items shared by all runs.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the per-item shuffle of candidates.")] = 13,
) -> None:
    """Write items for judges: narrative, meaning/property, shuffled candidates; system ids go to a separate key file."""
    from figlang.evaluation.runs import load_run
    from figlang.metrics.human_eval import EvalItem, export_for_judges

    loaded = [load_run(p) for p in runs]
    by_run = [{r["id"]: r for r in run.rows} for run in loaded]
    ids = [i for i in by_run[0] if all(i in rows for rows in by_run)]
    if not ids:
        raise FiglangError("the runs share no items; export runs of the same task and split")
    items = []
    for item_id in ids[:limit]:
        first = by_run[0][item_id]
        candidates = {}
        for run, rows in zip(loaded, by_run):
            samples = rows[item_id].get("prediction") or [""]
            candidates[run.path.name] = samples[0] if isinstance(samples, list) else str(samples)
        if human and first.get("references"):
            candidates["human"] = first["references"][0]
        items.append(EvalItem(item_id, first.get("source", ""), first.get("meaning"), candidates))
    paths = export_for_judges(items, out, seed=seed)
    console.print(f"{len(items)} items, {len(items[0].candidates)} candidates each → {paths.items_csv}, {paths.items_jsonl}")
    console.print(f"hidden key (do not show judges): {paths.key_jsonl}")


@app.command("import")
def import_cmd(
    answers: Annotated[Path, typer.Argument(help="Judges' answers (CSV or JSONL).")],
    key: Annotated[Path, typer.Option("--key", help="The key file written by `figlang human export`.")],
    kind: Annotated[
        str, typer.Option(help="absolute (plausible yes/no per candidate) or comparative (best candidate, all, neither).")
    ] = "absolute",
    judges: Annotated[int, typer.Option(help="Judges per item.")] = 3,
) -> None:
    """Aggregate answers by majority vote: shares per system and Krippendorff's alpha."""
    from figlang.metrics import human_eval as he

    table = Table(title=f"{kind} human evaluation ({answers.name})", title_justify="left")
    table.add_column("system")
    table.add_column("share %", justify="right")
    if kind == "absolute":
        s = he.summarize_absolute(he.import_absolute_answers(answers, key, judges_per_item=judges))
        for system in s.systems:
            table.add_row(system, f"{100 * s.share_plausible[system]:.1f}")
        console.print(table)
        console.print(f"{s.n_items} items, {s.n_judgements} judgements; Krippendorff's alpha (nominal) = {s.alpha:.3f}")
    elif kind == "comparative":
        c = he.summarize_comparative(he.import_comparative_answers(answers, key, judges_per_item=judges))
        for system, share in c.shares().items():
            table.add_row(system, f"{100 * share:.1f}")
        console.print(table)
        console.print(f"{c.n_items} items ({c.n_no_majority} without a majority); Krippendorff's alpha (nominal) = {c.alpha:.3f}")
    else:
        raise FiglangError(f"--kind must be absolute or comparative, got {kind!r}")


@app.command("table5")
def table5_cmd(
    data_dir: DataDirOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Also write the result file OUT/table5.json (every figure docs/research/human_eval_table5.md quotes, "
            "the published ones, data checksums, figlang version and commit) and OUT/predictions.jsonl.gz (the votes per unit).",
        ),
    ] = None,
) -> None:
    """Recompute the narrative paper's Table 5 from its raw crowd files, beside the published numbers."""
    from figlang.metrics.human_eval_table5 import render_table5_markdown, table5, write_table5_results

    ctx = RunContext.create(data_dir)  # the run's context: built here, once, and handed down
    typer.echo(render_table5_markdown(table5(ctx=ctx)))
    if out:
        from figlang.evaluation.provenance import portable_path

        command = "figlang human table5" + (f" --data-dir {portable_path(data_dir)}" if data_dir else "") + f" -o {portable_path(out)}"
        paths = write_table5_results(out, data_dir, command=command, ctx=ctx)  # data_dir: recorded as given
        console.print(f"[dim]wrote {paths[0]} and {paths[1]}[/dim]")


@app.command("flute-export")
def flute_export_cmd(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="FLUTE run folders with explanations (`figlang eval -t flute … -o RUN`, or a scored prediction file); each is one system, named by its folder."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the judges' items (JSONL + CSV), the hidden key and the manifest.")],
    per_type: Annotated[int, typer.Option("--per-type", help="Pairs per figure type (FLUTE: 50, so 200 in all).")] = 50,
    seed: Annotated[int, typer.Option(help="Seed of the sample, the item order and the per-item order of the systems.")] = 13,
    any_label: Annotated[
        bool,
        typer.Option(
            "--any-label", help="Sample pairs whatever the systems predicted (default: only pairs every system labelled correctly)."
        ),
    ] = False,
) -> None:
    """FLUTE's human evaluation, step 1: draw pairs and write both systems' explanations side by side for judges.

    Judges answer Yes / Weak Yes / Weak No / No per explanation, with shortcomings; the answer file format is in docs/research/flute_explanations.md ("Human evaluation"). Then run `figlang human flute-import`.
    """
    from figlang.evaluation.runs import load_run, predictions_file
    from figlang.metrics.flute_human_eval import export_flute_for_judges, sample_flute_items

    loaded = [load_run(p) for p in runs]
    names = [run.path.resolve().name for run in loaded]
    if len(set(names)) != len(names):
        raise FiglangError(f"two runs have the same folder name ({', '.join(names)}): systems are named by their folders")
    tasks = {run.task_split for run in loaded}
    if len(tasks) != 1:
        raise FiglangError(f"the runs are of different tasks or splits ({', '.join('/'.join(t) for t in sorted(tasks))})")
    sample = sample_flute_items({n: run.rows for n, run in zip(names, loaded)}, per_type=per_type, seed=seed, require_correct=not any_label)
    provenance = {
        "task": loaded[0].task_split[0],
        "split": loaded[0].task_split[1],
        "runs": {
            n: {
                "folder": str(run.path),
                "predictions_sha256": file_sha256(cast(Path, predictions_file(run.path))),  # load_run found them
                "method": run.results.get("method", {}).get("name"),
                "model": run.results.get("method", {}).get("model"),
            }
            for n, run in zip(names, loaded)
        },
    }
    paths = export_flute_for_judges(sample, out, provenance=provenance)
    console.print(
        f"{len(sample.items)} pairs ({per_type} per figure type), {len(names)} explanations each → {paths.items_jsonl}, {paths.items_csv}"
    )
    console.print(f"hidden key (do not show judges): {paths.key_jsonl}")


@app.command("flute-import")
def flute_import_cmd(
    answers: Annotated[
        Path,
        typer.Argument(help="Judges' answers: JSON lines, a JSON array or CSV (item_id, judge, rating_1, shortcomings_1, rating_2, …)."),
    ],
    key: Annotated[Path, typer.Option("--key", help="The key file written by `figlang human flute-export`.")],
    judges: Annotated[int, typer.Option(help="Judges per item (0: any number).")] = 3,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the summary as JSON here.")] = None,
) -> None:
    """FLUTE's human evaluation, step 2: H score, Yes %, No %, shortcomings, alpha, Wilcoxon between systems."""
    from figlang.metrics.flute_human_eval import SHORTCOMINGS, import_flute_judgements, summarize_flute_human, write_flute_human_results

    summary = summarize_flute_human(import_flute_judgements(answers, key, judges_per_item=judges or None))
    table = Table(title=f"FLUTE human evaluation ({answers.name})", title_justify="left")
    for col in ("system", "items", "H", "Yes %", "W.Yes %", "W.No %", "No %"):
        table.add_column(col, justify="left" if col == "system" else "right", overflow="fold")
    for name in summary.systems:
        s = summary.scores[name]
        r = s.rating_pct
        table.add_row(
            name, str(s.n_items), f"{s.h_score:.1f}", f"{r['Yes']:.1f}", f"{r['Weak Yes']:.1f}", f"{r['Weak No']:.1f}", f"{r['No']:.1f}"
        )
    console.print(table)
    detail = Table(title="shortcomings (% of judgements) and H by figure type", title_justify="left")
    detail.add_column("")
    for name in summary.systems:
        detail.add_column(name, justify="right", overflow="fold")
    for label in SHORTCOMINGS.values():
        detail.add_row(label, *(f"{summary.scores[n].shortcoming_pct[label]:.1f}" for n in summary.systems))
    figures = sorted({f for n in summary.systems for f in summary.scores[n].by_figure_type})
    for figure in figures:
        detail.add_row(
            f"H {figure}",
            *(
                f"{summary.scores[n].by_figure_type[figure]['h_score']:.1f}" if figure in summary.scores[n].by_figure_type else "-"
                for n in summary.systems
            ),
        )
    console.print(detail)
    console.print(
        f"{summary.n_items} items, {len(summary.judges)} judges; Krippendorff's alpha: ordinal {summary.alpha_ordinal:.3f}, "
        f"nominal {summary.alpha_nominal:.3f}"
    )
    for c in summary.comparisons:
        w = c["wilcoxon"]
        console.print(
            f"{c['a']} vs {c['b']}: H {c['h_difference']:+.1f}; Wilcoxon signed-rank p = {w['p_value']:.4g} "
            f"(n={w['n']}, W={w['statistic']:.4g})"
        )
    if out:
        write_flute_human_results(
            out, summary, {"answers": str(answers), "answers_sha256": file_sha256(answers), "key": str(key), "key_sha256": file_sha256(key)}
        )
        console.print(f"[dim]wrote {out}[/dim]")
