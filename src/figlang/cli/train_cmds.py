"""`figlang train` (and the analyses of trained models: per-relation accuracy, simulatability).

``train_cmd`` is the typer command that ``figlang train`` runs; ``relations_cmd`` and
``simulatability_cmd`` are written the same way. Until they are registered on the main app,
``python -m figlang.cli.train_cmds train|relations|simulatability …`` runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.table import Table

from figlang.core.context import RunContext
from figlang.core.errors import FiglangError
from figlang.core.io import write_json
from figlang.data.records import ClozeRecord, NLIPair
from figlang.data.registry import get_task
from figlang.cli.common import DataDirOption, console


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _print_generation(metrics: dict, title: str) -> None:
    table = Table(title=title, title_justify="left")
    for col in ("split", "items", "ROUGE-L", "BLEU", "BERTScore F1", "empty"):
        table.add_column(col)
    for split, m in metrics.items():
        g = m.get("generation") or {}
        scores = [_pct(g.get(k)) for k in ("rougeL", "bleu", "bertscore_f1")]
        table.add_row(split, str(g.get("n_items", "")), *scores, str(g.get("n_empty_predictions", "")))
    console.print(table)


def _print_metrics(metrics: dict, title: str) -> None:
    if metrics and all("generation" in m for m in metrics.values()):
        _print_generation(metrics, title)
        return
    table = Table(title=title, title_justify="left")
    for col in ("split", "n", "accuracy %", "95% CI", "per gold label"):
        table.add_column(col, overflow="fold")
    for split, m in metrics.items():
        acc = m.get("accuracy") or {}
        labels = ", ".join(f"{k} {_pct(v.get('accuracy'))} (n={v.get('n')})" for k, v in (m.get("by_gold_label") or {}).items())
        ci = f"[{_pct(acc.get('ci_low'))}, {_pct(acc.get('ci_high'))}]" if acc.get("ci_low") is not None else ""
        table.add_row(split, str(acc.get("n", "")), _pct(acc.get("accuracy")), ci, labels)
    console.print(table)


def parse_limit(value: str | None) -> int | None:
    """``--limit``: a positive count, or ``all`` (0 to the trainer: every record, whatever the preset's limit)."""
    if value is None:
        return None
    if value.strip().lower() == "all":
        return 0
    try:
        n = int(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a number of records; give N (e.g. --limit 2000) or --limit all") from None
    if n < 1:
        raise typer.BadParameter(f"--limit {n}: give a positive number of records, or --limit all for every record")
    return n


# `train_cmd`'s options
_TrainTaskOption = Annotated[
    str, typer.Option("--task", "-t", help="Task: idiom-cloze, simile-cloze, flute, impli, impli-idioms … or a task spec file.")
]
_TrainMethodOption = Annotated[
    str,
    typer.Option(
        "--method",
        "-m",
        help="mc | mc-continuation | mc-meaning | mc-context | mc-literal | nli | nli-rationale | iro | generator | generator-context | generator-literal.",
    ),
]
_TrainModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="Base model: catalog name (minilm, mpnet; smollm2-135m for the generating methods), local model dir, hub id, or a figlang-trained dir to start from.",
    ),
]
_TrainOutOption = Annotated[Path, typer.Option("--out", "-o", help="Output folder; rerunning with the same folder resumes.")]
_TrainPresetOption = Annotated[
    str | None,
    typer.Option(
        help="Preset: cpu-cloze, cpu-knowledge, cpu-nli, cpu-probe, cpu-impli-folds, cpu-iro, cpu-generator, cpu-generator-knowledge, paper-mc, paper-knowledge, paper-nli (default: by method)."
    ),
]
_TrainEpochsOption = Annotated[int | None, typer.Option(help="Epochs.")]
_TrainLrOption = Annotated[float | None, typer.Option(help="Peak learning rate (linear warmup, then linear decay).")]
_TrainBatchSizeOption = Annotated[
    int | None, typer.Option("--batch-size", help="Items per micro-batch (an item of a knowledge model is 24 sequences).")
]
_TrainGradAccumOption = Annotated[int | None, typer.Option("--grad-accum", help="Micro-batches per optimizer step.")]
_TrainMaxLengthOption = Annotated[
    int | None, typer.Option("--max-length", help="Tokens per sequence (narrative cut first, from its start).")
]
_TrainSeedOption = Annotated[int | None, typer.Option(help="Seed (torch, random, numpy, data order).")]
_TrainLimitOption = Annotated[
    str | None,
    typer.Option(
        "--limit",
        "-n",
        help="Train on a seeded random subset of N records; 'all': every record (lifts a preset's own limit, e.g. cpu-iro's 2000).",
    ),
]
_TrainSampleBalanceOption = Annotated[
    str | None,
    typer.Option(
        "--sample-balance",
        help="With --limit: draw an equal share of each gold label (label) or pair type (pair-type, IMPLI) instead of a uniform sample; none (default).",
    ),
]
_TrainLossWeightsOption = Annotated[
    str | None,
    typer.Option(
        "--loss-weights",
        help="NLI classifiers: weight each record's loss by 1 / its gold label's (label) or pair type's (pair-type) frequency in the training records, mean 1; none (default).",
    ),
]
_TrainThresholdOption = Annotated[
    str | None,
    typer.Option(
        "--threshold",
        help="Two-label NLI classifiers: after training, choose the decision threshold on the score margin that maximises balanced-accuracy, accuracy or macro-f1 on the dev (selection) split, the split that chose the epoch, or (floor=R, e.g. floor=0.85) that keeps the first label's recall (IMPLI: entailment) at R with 95% confidence there and answers the second as often as that allows; the selection margins go to decision_margins.jsonl; saved in figlang.json and applied by `figlang eval --method trained` (-O threshold=none: argmax) and the fold pooling. none (default): argmax.",
    ),
]
_TrainDevLimitOption = Annotated[int | None, typer.Option("--dev-limit", help="Select on a seeded subset of N dev records.")]
_TrainReportLimitOption = Annotated[int | None, typer.Option("--report-limit", help="Report on the first N records of each report split.")]
_TrainMaxStepsOption = Annotated[int | None, typer.Option("--max-steps", help="Stop after N optimizer steps.")]
_TrainMaxMinutesOption = Annotated[float | None, typer.Option("--max-minutes", help="Stop after this wall time; rerun to continue.")]
_TrainEvalEveryOption = Annotated[int | None, typer.Option("--eval-every", help="Dev evaluation every N steps (default: each epoch).")]
_TrainSaveEveryOption = Annotated[int | None, typer.Option("--save-every", help="Resumable checkpoint every N steps.")]
_TrainLogEveryOption = Annotated[int | None, typer.Option("--log-every", help="Steps between log lines (train_log.jsonl, plain progress).")]
_TrainPatienceOption = Annotated[int | None, typer.Option(help="Early stopping: evaluations without improvement.")]
_TrainWarmupRatioOption = Annotated[float | None, typer.Option("--warmup-ratio", help="Share of steps for linear warmup.")]
_TrainWeightDecayOption = Annotated[float | None, typer.Option("--weight-decay")]
_TrainTrainSplitOption = Annotated[
    str | None,
    typer.Option("--train-split", help="Default: train-fit where the task has it (train-disjoint less the selection split), else train."),
]
_TrainDevSplitOption = Annotated[
    str | None,
    typer.Option(
        "--dev-split",
        help="Split that chooses the model (early stopping, kept checkpoint). Default: selection, else 'carve' (a disjoint slice of train).",
    ),
]
_TrainReportSplitOption = Annotated[
    list[str] | None,
    typer.Option(
        "--report-split",
        help="Splits to score the best model on (repeatable; default: dev-disjoint + official dev/val, never the dev split).",
    ),
]
_TrainSelectOnEvalSplitOption = Annotated[
    bool,
    typer.Option(
        "--select-on-eval-split",
        help="Allow the dev split to be a reported split too (the figure is then chosen on the items it reports); recorded in figlang.json and results.json.",
    ),
]
_TrainChosenOnOption = Annotated[
    list[str] | None,
    typer.Option(
        "--chosen-on",
        help="CHOICE=SPLIT for a choice made by hand before this run (layer=selection for --base-layers); repeatable; recorded as provenance.selection_split.",
    ),
]
_TrainEvalBatchSizeOption = Annotated[int | None, typer.Option("--eval-batch-size")]
_TrainMaxTargetLengthOption = Annotated[
    int | None,
    typer.Option("--max-target-length", help="Generating methods: tokens of the target (continuation, or label + explanation)."),
]
_TrainExamplesOption = Annotated[
    int | None,
    typer.Option(
        "--examples",
        help="iro: show K solved train pairs before each instruction (nearest under minilm, same figure type and label, the compact form of explain's shots); the model then needs a pool to retrieve from wherever it runs (explain gives its own). Raise --max-length by about 60 tokens an example.",
    ),
]
_TrainInferenceSamplingOption = Annotated[
    str | None,
    typer.Option(
        "--inference-sampling",
        help="Knowledge generators: all (every inference with every narrative each epoch, the paper's) or one-per-epoch (one inference per narrative, drawn anew each epoch: a narrative seen once an epoch, not 12 times).",
    ),
]
_TrainFreezeBaseOption = Annotated[
    bool | None,
    typer.Option(
        "--freeze-base/--fine-tune",
        help="Multiple-choice methods: train only the scoring head on the fixed base (a linear probe). Each sequence is encoded once and its features kept, so a 1.5B decoder fits a CPU; the saved model names the base instead of copying it. Preset cpu-probe.",
    ),
]
_TrainBaseLayersOption = Annotated[
    int | None,
    typer.Option(
        "--base-layers",
        help="With --freeze-base: read the base's first N layers (cut there; a decoder's middle layers probe better than its last, and cost half; qwen2.5-1.5b has 28).",
    ),
]
_TrainLoraRankOption = Annotated[
    int | None,
    typer.Option(
        "--lora-rank",
        help="NLI classifiers: train LoRA adapters of this rank on every linear layer, and the head, on the fixed base; the saved model is the adapter (a few MB, float16) and names its base.",
    ),
]
_TrainLoraAlphaOption = Annotated[
    float | None, typer.Option("--lora-alpha", help="With --lora-rank: the LoRA scale numerator (default 2 × rank).")
]
_TrainBf16Option = Annotated[
    bool | None,
    typer.Option(
        "--bf16/--fp32",
        help="bfloat16 autocast on CPU: about 2× faster for base-size encoders on CPUs with AMX, slower with Intel's AVX512-BF16 alone, several times slower without it (emulated). A preset's bf16 is kept only with AMX or on an AMD CPU with AVX512-BF16; --bf16 keeps it.",
    ),
]
_TrainThreadsOption = Annotated[int | None, typer.Option(help="torch threads (default 2).")]
_TrainDeviceOption = Annotated[
    str | None, typer.Option("--device", help="cpu (default), cuda, cuda:N or auto: where the weights and batches go.")
]
_TrainFoldsOption = Annotated[int | None, typer.Option("--folds", help="k-fold training disjoint by expression (IMPLI: 10).")]
_TrainFoldOption = Annotated[list[int] | None, typer.Option("--fold", help="With --folds: run only these folds (repeatable, 0-based).")]
_TrainRestartOption = Annotated[bool, typer.Option("--restart", help="Discard a checkpoint in --out and start over.")]
_TrainQuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]


def train_cmd(
    task: _TrainTaskOption,
    method: _TrainMethodOption,
    model: _TrainModelOption,
    out: _TrainOutOption,
    preset: _TrainPresetOption = None,
    epochs: _TrainEpochsOption = None,
    lr: _TrainLrOption = None,
    batch_size: _TrainBatchSizeOption = None,
    grad_accum: _TrainGradAccumOption = None,
    max_length: _TrainMaxLengthOption = None,
    seed: _TrainSeedOption = None,
    limit: _TrainLimitOption = None,
    sample_balance: _TrainSampleBalanceOption = None,
    loss_weights: _TrainLossWeightsOption = None,
    threshold: _TrainThresholdOption = None,
    dev_limit: _TrainDevLimitOption = None,
    report_limit: _TrainReportLimitOption = None,
    max_steps: _TrainMaxStepsOption = None,
    max_minutes: _TrainMaxMinutesOption = None,
    eval_every: _TrainEvalEveryOption = None,
    save_every: _TrainSaveEveryOption = None,
    log_every: _TrainLogEveryOption = None,
    patience: _TrainPatienceOption = None,
    warmup_ratio: _TrainWarmupRatioOption = None,
    weight_decay: _TrainWeightDecayOption = None,
    train_split: _TrainTrainSplitOption = None,
    dev_split: _TrainDevSplitOption = None,
    report_split: _TrainReportSplitOption = None,
    select_on_eval_split: _TrainSelectOnEvalSplitOption = False,
    chosen_on: _TrainChosenOnOption = None,
    eval_batch_size: _TrainEvalBatchSizeOption = None,
    max_target_length: _TrainMaxTargetLengthOption = None,
    examples: _TrainExamplesOption = None,
    inference_sampling: _TrainInferenceSamplingOption = None,
    freeze_base: _TrainFreezeBaseOption = None,
    base_layers: _TrainBaseLayersOption = None,
    lora_rank: _TrainLoraRankOption = None,
    lora_alpha: _TrainLoraAlphaOption = None,
    bf16: _TrainBf16Option = None,
    threads: _TrainThreadsOption = None,
    device: _TrainDeviceOption = None,
    folds: _TrainFoldsOption = None,
    fold: _TrainFoldOption = None,
    restart: _TrainRestartOption = False,
    data_dir: DataDirOption = None,
    quiet: _TrainQuietOption = False,
) -> None:
    """Fine-tune a model on a task; the result answers `figlang eval --method trained --model OUT`.

    Examples:

      figlang train -t idiom-cloze -m mc --model minilm -o runs/idiom-mc

      figlang train -t flute -m nli --model minilm -o runs/flute-nli

      figlang train -t idiom-cloze -m mc --model qwen2.5-1.5b --preset cpu-probe -o runs/idiom-probe-qwen

      figlang train -t impli -m nli --model minilm -o runs/impli-folds --folds 10

      figlang train -t impli -m nli --model minilm -o runs/impli-folds-bal --folds 10 --sample-balance label --threshold balanced-accuracy

      figlang train -t flute -m iro --model smollm2-135m -o runs/flute-iro

      figlang train -t idiom-generation -m generator-context --model smollm2-135m -o runs/idiom-gen-context
    """
    given = dict(locals())  # the command's parameters, by name
    # the run's context: built here, once, and handed down (the trainer's defaults where an option is not given:
    # seed 0, like the context's; device and threads left to the trainer)
    ctx = RunContext.create(data_dir, seed=0 if seed is None else seed, device=device, threads=threads)
    if folds:
        _train_folds(given, ctx)
        return
    if fold:
        raise FiglangError("--fold needs --folds K")
    from figlang.training import train

    result = train(task, method, model, out, restart=restart, ctx=ctx, **_train_options(given))
    _print_train_result(result, task, method, model, out)


#: train_cmd's parameters that are not trainer options, or are given to the trainer under another name or form
#: (the data folder, seed, device and threads travel in the run context)
_NOT_TRAINER_OPTIONS = (
    *("task", "method", "model", "out", "folds", "fold", "restart", "quiet", "report_split", "limit"),
    *("data_dir", "seed", "device", "threads"),
)


def _train_options(given: dict[str, Any]) -> dict[str, Any]:
    """The trainer's options from train_cmd's parameters; an option not given (None) is left to the preset."""
    from figlang.cli.eval_cmds import parse_chosen_on

    options = {k: v for k, v in given.items() if k not in _NOT_TRAINER_OPTIONS}
    options.update(
        limit=parse_limit(given["limit"]),
        report_splits=tuple(given["report_split"]) if given["report_split"] else None,
        progress=not given["quiet"],
        select_on_eval_split=given["select_on_eval_split"] or None,
        chosen_on=parse_chosen_on(given["chosen_on"]) or None,
    )
    return {k: v for k, v in options.items() if v is not None}


def _train_folds(given: dict[str, Any], ctx: RunContext) -> None:
    """`figlang train --folds K`: train the folds, print the pooled figures."""
    from figlang.training import train_folds

    task, method, model, out, folds = given["task"], given["method"], given["model"], given["out"], given["folds"]
    options = _train_options(given)
    summary = train_folds(task, method, model, out, k=folds, folds=given["fold"], restart=given["restart"], ctx=ctx, **options)
    pooled = summary["pooled"]
    _print_metrics({"pooled test folds": pooled}, f"{task} · {method} · {folds} folds")
    means = ", ".join(f"{k} {_pct(v)}" for k, v in summary["mean_over_folds"].items())
    console.print(f"mean over folds: {means}")
    ci = summary["pooled_ci_by_expression"]["accuracy"]
    console.print(
        f"pooled accuracy with idioms resampled (the folds are idiom-disjoint): {_pct(ci['accuracy'])} "
        f"[{_pct(ci['ci_low'])}, {_pct(ci['ci_high'])}] over {ci['n_clusters']} expressions"
    )
    if summary.get("folds_from_earlier_runs"):
        console.print(f"pooled with folds an earlier run finished here: {', '.join(map(str, summary['folds_from_earlier_runs']))}")
    for f, why in (summary.get("folds_left_out") or {}).items():
        console.print(f"[yellow]fold {f} (finished earlier) left out: {why}[/yellow]")
    console.print(f"[dim]wrote {out}/folds_summary.json and {out}/fold_XX/[/dim]")


def _print_train_result(result: Any, task: str, method: str, model: str, out: Path) -> None:
    """How a training run ended, its best dev figure and its report splits' metrics."""
    from figlang.methods.trained import TRAINED_METHODS

    if result.best_step is None and result.stopped == "time-budget":
        best = "no dev evaluation yet (rerun the same command to continue)"
    elif TRAINED_METHODS[method][1] == "generator":
        loss = "–" if result.best_dev_loss is None else f"{result.best_dev_loss:.4f}"
        best = f"best dev loss {loss} at step {result.best_step} (epoch {result.best_epoch})"
    else:
        best = f"best dev accuracy {_pct(result.best_dev_accuracy)}% at step {result.best_step} (epoch {result.best_epoch})"
    console.print(
        f"{result.stopped}{' (resumed)' if result.resumed else ''} after {result.steps} steps, {result.seconds / 60:.1f} min; {best}"
    )
    _print_metrics(result.metrics, f"{task} · {method} · {model} → {out}")
    console.print(
        f"[dim]wrote {out} (figlang.json, model, train_log.jsonl, {Path(result.plot_path).name if result.plot_path else 'no plot'}, eval/)[/dim]"
    )


# relations and simulatability: the task split a trained model is analysed on
_AnalysisTaskOption = Annotated[str, typer.Option("--task", "-t")]
_AnalysisSplitOption = Annotated[str, typer.Option("--split", "-s")]
_AnalysisLimitOption = Annotated[int | None, typer.Option("--limit", "-n")]


def relations_cmd(
    model: Annotated[Path, typer.Option("--model", help="A knowledge-enhanced model (mc-context / mc-literal) made by figlang train.")],
    task: _AnalysisTaskOption,
    split: _AnalysisSplitOption = "dev",
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="predictions.jsonl of the baseline (figlang eval --out): analyse only the items it got wrong."),
    ] = None,
    by: Annotated[str, typer.Option(help="relation (inferences of one relation, summed) or inference (one slot).")] = "relation",
    limit: _AnalysisLimitOption = None,
    batch_size: Annotated[int, typer.Option("--batch-size")] = 8,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the analysis as JSON here.")] = None,
    device: Annotated[str, typer.Option("--device", help="cpu (default), cuda, cuda:N or auto: where the model runs.")] = "cpu",
    threads: Annotated[int, typer.Option("--threads", help="torch threads on CPU.")] = 2,
    data_dir: DataDirOption = None,
) -> None:
    """The paper's Table 3: accuracy of a knowledge-enhanced model fed one relation at a time."""
    import torch

    from figlang.methods.trained import load_trained
    from figlang.methods.trained.multiple_choice import baseline_correctness, relation_analysis

    torch.set_num_threads(threads)
    ctx = RunContext.create(data_dir, device=device, threads=threads)  # the run's context: built here, once
    records = get_task(task).load(split, ctx)
    if limit:
        records = records[:limit]
    correct = baseline_correctness(baseline) if baseline else None
    items = cast("list[ClozeRecord]", records)  # the multiple-choice model's task: a cloze task
    result = relation_analysis(load_trained(model, device=device), items, correct, by=by, batch_size=batch_size)
    table = Table(
        title=f"{task}/{split}: {result['knowledge']} {by}s ({result['items']} items{', baseline errors only' if correct else ''})",
        title_justify="left",
    )
    for col in (by, "n", "accuracy %"):
        table.add_column(col)
    for name, m in result["per_group"].items():
        table.add_row(name, str(m["n"]), _pct(m["accuracy"]))
    table.add_row("all inferences", str(result["all_inferences"]["n"]), _pct(result["all_inferences"]["accuracy"]))
    console.print(table)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2), encoding="utf-8")


def simulatability_cmd(
    io_model: Annotated[Path, typer.Option("--io", help="I→O classifier (figlang train -m nli).")],
    iro_model: Annotated[Path, typer.Option("--iro", help="IR→O classifier (figlang train -m nli-rationale).")],
    task: _AnalysisTaskOption = "flute",
    split: _AnalysisSplitOption = "val",
    rationales: Annotated[
        Path | None, typer.Option("--rationales", help="Predicted rationales: a JSONL file with id and an explanation column.")
    ] = None,
    rationale_field: Annotated[str, typer.Option("--rationale-field")] = "explanation",
    no_gold: Annotated[bool, typer.Option("--no-gold", help="Skip the gold-rationale number.")] = False,
    limit: _AnalysisLimitOption = None,
    out: Annotated[Path | None, typer.Option("--out", "-o")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Simulatability = accuracy(IR→O) − accuracy(I→O), with gold and/or predicted rationales."""
    import torch

    from figlang.methods.trained.nli_classifier import simulatability_from_models

    torch.set_num_threads(2)
    records = get_task(task).load(split, RunContext.create(data_dir, threads=2))  # the run's context: built here, once
    if limit:
        records = records[:limit]
    if no_gold and rationales is None:
        raise FiglangError("nothing to measure: pass --rationales FILE or drop --no-gold")
    pairs = cast("list[NLIPair]", records)  # the NLI models' task: an NLI task
    result = simulatability_from_models(
        pairs, io_model, iro_model, predicted_rationales=rationales, rationale_field=rationale_field, gold=not no_gold
    )
    for name, r in result.items():
        console.print(f"{name}: {r['summary']}")
    if out:
        from figlang.evaluation.provenance import simulatability_inputs

        result["inputs"] = simulatability_inputs(task, split, records, io_model, iro_model, rationales, rationale_field)
        write_json(out, result)


def _standalone() -> typer.Typer:
    app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, help="figlang training commands.")
    app.command("train")(train_cmd)
    app.command("relations")(relations_cmd)
    app.command("simulatability")(simulatability_cmd)
    return app


if __name__ == "__main__":
    import sys

    from figlang.cli.common import err_console

    try:
        _standalone()(standalone_mode=False)
    except FiglangError as err:
        err_console.print(f"[bold red]error:[/bold red] {err}")
        sys.exit(2)


def figure_type_cmd(
    sentence: Annotated[str | None, typer.Argument(help="A sentence to type (the figurative one of a pair).")] = None,
    premise: Annotated[str | None, typer.Option("--premise", help="The pair's literal premise: the pair head answers.")] = None,
    train_out: Annotated[
        Path | None, typer.Option("--train", help="Train the two heads into this folder (FLUTE train-fit; penalty chosen on selection).")
    ] = None,
    ship: Annotated[
        Path | None, typer.Option("--ship", help="Copy a finished --train folder into the package (figure-type-minilm).")
    ] = None,
    threads: Annotated[int, typer.Option(help="torch threads.")] = 2,
    data_dir: DataDirOption = None,
) -> None:
    """The figure type (idiom, metaphor, sarcasm, simile) of a sentence or pair, from the shipped figure-type model.

    Examples:

      figlang figure-type "He was dead on his feet after the long walk."

      figlang figure-type --train runs/cpu/figure-type-minilm --data-dir ../shared/data
    """
    from figlang.methods.trained.figure_type import FigureTypeModel, ship_figure_type, train_figure_type

    if train_out is not None:
        record = train_figure_type(train_out, threads=threads, ctx=RunContext.create(data_dir, threads=threads))
        for kind, head in record["heads"].items():
            val = head["val"]
            types = ", ".join(f"{t} {100 * val[t]['accuracy']:.1f} (n={val[t]['n']})" for t in ("sarcasm", "simile", "metaphor", "idiom"))
            console.print(
                f"{kind}: penalty {head['penalty']:g} (selection {100 * head['selection_accuracy']:.2f}); val {100 * val['accuracy']:.2f}: {types}"
            )
        console.print(f"wrote {train_out}")
        return
    if ship is not None:
        console.print(f"shipped {ship} → {ship_figure_type(ship)}")
        return
    if not sentence:
        raise FiglangError("give a sentence (or --train OUT / --ship RUN)")
    kind, probs = FigureTypeModel().predict(sentence, premise)
    console.print(f"{kind}  " + "  ".join(f"{t} {p:.3f}" for t, p in sorted(probs.items(), key=lambda kv: -kv[1])))
