"""`figlang export lm-eval` and `figlang export hf`: figlang tasks in other tools' formats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from figlang.cli.common import DataDirOption, EvalSplitOption, console, err_console
from figlang.core.context import RunContext

app = typer.Typer(
    help="Write a figlang task in another tool's format: `lm-eval` (an lm-evaluation-harness 0.4.x task folder) "
    "or `hf` (Parquet + a dataset card that Hugging Face `datasets` loads).",
    no_args_is_help=True,
)


@app.command("lm-eval")
def lm_eval_cmd(
    task: Annotated[str, typer.Argument(help="Task name (`figlang data tasks`) or a task spec file (.yaml/.json); cloze or NLI.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for <name>.yaml and <name>.jsonl (lm_eval --include_path).")],
    split: EvalSplitOption = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="Only the first N items.")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Write one split of a task as an lm-evaluation-harness task that lm-eval 0.4.x runs unchanged.

    Cloze tasks: multiple_choice over the options, the narrative without markup as context, " " as target
    delimiter; `figlang eval -m lm-score -O input=lm-eval` scores exactly the same requests. NLI tasks
    (FLUTE, IMPLI, user NLI specs): multiple_choice over nli-score's answer words. Then:

      figlang export lm-eval idiom-cloze -s dev -o runs/lm_eval_tasks

      lm_eval --include_path runs/lm_eval_tasks --tasks figlang_idiom_cloze_dev --model hf
      --model_args pretrained=MODEL,dtype=float32 --output_path runs/lm_eval --log_samples

      figlang eval -t idiom-cloze -s dev -p runs/lm_eval/MODEL/samples_figlang_idiom_cloze_dev_DATE.jsonl --format lm-eval -o runs/lm_eval_scored
    """
    from figlang.interop.lm_eval_export import export_lm_eval

    ctx = RunContext.create(data_dir)  # the run's context: built here, once, and handed down
    result = export_lm_eval(task, out, split=split, limit=limit, ctx=ctx)
    console.print(f"wrote {result.yaml_path} and {result.data_path.name} ({result.docs} docs)")
    if result.placeholder_labels:
        err_console.print(
            f"[yellow]{result.placeholder_labels} of {result.docs} gold labels are placeholders (hidden test labels): "
            "lm-eval's accuracy on them is meaningless[/yellow]"
        )
    console.print(f"run: lm_eval --include_path {out} --tasks {result.name} --model hf --model_args pretrained=MODEL")


@app.command("hf")
def hf_cmd(
    task: Annotated[str, typer.Argument(help="Task name (`figlang data tasks`) or a task spec file (.yaml/.json).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for data/<split>-00000-of-00001.parquet and README.md.")],
    split: Annotated[
        list[str] | None, typer.Option("--split", "-s", help="Only these splits (repeatable; default: every published split).")
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Write every split of a task as Parquet with a dataset card (source, commit, license, fields, known quirks).

    Load it with `datasets.load_dataset("parquet", data_dir=OUT)`; `figlang.interop.hf_export.records_from_rows`
    turns the rows back into figlang records.

      figlang export hf idiom-cloze -o runs/hf/idiom-cloze
    """
    from figlang.interop.hf_export import export_hf

    ctx = RunContext.create(data_dir)  # the run's context: built here, once, and handed down
    result = export_hf(task, out, splits=split, ctx=ctx)
    shown = ", ".join(f"{s} {n}" for s, n in result.splits.items())
    console.print(f"wrote {out}/data/*.parquet ({shown} rows) and {result.card}")
