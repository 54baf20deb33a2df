"""`figlang human …`: the narrative paper's human evaluation of generated continuations, as a round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..data.errors import FiglangError
from .common import DataDirOption, console

app = typer.Typer(help="Human evaluation of generated continuations: export for judges, import answers, aggregate.", no_args_is_help=True)


@app.command("export")
def export_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Generation run folders (`figlang eval -t idiom-generation … -o RUN`); each is one system.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the judges' items (CSV + JSONL) and the hidden key.")],
    human: Annotated[bool, typer.Option(help="Add the first gold reference as the system 'human'.")] = True,
    limit: Annotated[Optional[int], typer.Option(help="Only the first N items shared by all runs.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the per-item shuffle of candidates.")] = 13,
) -> None:
    """Write items for judges: narrative, meaning/property, shuffled candidates; system ids go to a separate key file."""
    from ..evaluation.runs import load_run
    from ..metrics.human_eval import EvalItem, export_for_judges

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
    kind: Annotated[str, typer.Option(help="absolute (plausible yes/no per candidate) or comparative (best candidate, all, neither).")] = "absolute",
    judges: Annotated[int, typer.Option(help="Judges per item.")] = 3,
) -> None:
    """Aggregate answers by majority vote: shares per system and Krippendorff's alpha."""
    from ..metrics import human_eval as he

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
def table5_cmd(data_dir: DataDirOption = None) -> None:
    """Recompute the narrative paper's Table 5 from its raw crowd files, beside the published numbers."""
    from ..metrics.human_eval import render_table5_markdown, table5

    typer.echo(render_table5_markdown(table5(data_dir)))
