"""Write docs/results/INDEX.yaml: README.md's results-table and prose figures, each tied to its result file.

    python scripts/results_index.py               # from the repository root, after a rerun or a new quoted figure
    python scripts/results_index.py --mark-docs   # also mark the AUTO_TABLES (comment above, ⁿ on cells no file backs)

The printed texts are formatted from the files at the precision README prints them; the registry test
(tests/test_results_registry.py) then checks that README prints exactly these. Add a figure here (a
table row: group(...); prose: prose(...)) rather than editing INDEX.yaml by hand, so the two stay one.
"""

import glob
import json
import os
import re
import sys

R = "docs/results/"
groups = []


def acc():
    return [
        ["accuracy", None, "metrics.accuracy.accuracy", 100],
        ["ci_low", None, "metrics.accuracy.ci_low", 100],
        ["ci_high", None, "metrics.accuracy.ci_high", 100],
        ["n", None, "metrics.accuracy.n"],
    ]


def fmt(v, places):  # places: decimals, or "," for an integer with thousands separators
    return f"{int(round(v)):,}" if places == "," else f"{v:.{places}f}" if places else str(int(round(v)))


def val(d, key):
    for k in key.split("."):
        d = d[int(k)] if isinstance(d, list) else d[k]
    return d


def group(doc, table, row, file, figs):
    d = json.load(open(R + file))
    out = []
    for fid, places, key, *rest in figs:
        v = val(d, key)
        if len(rest) > 1 and rest[1] == "majority":  # as figlang.evaluation.registry.DERIVATIONS
            c = [x["n"] for x in v["by_gold_label"].values()]
            v = max(c) / sum(c)
        elif len(rest) > 1 and rest[1] in ("min_fold", "max_fold"):
            accs = [x["accuracy"]["accuracy"] if isinstance(x["accuracy"], dict) else x["accuracy"] for x in v.values()]
            v = min(accs) if rest[1] == "min_fold" else max(accs)
        elif len(rest) > 1 and rest[1] == "abs":  # a signed difference: the sign is printed outside the number
            v = abs(v)
        v = v * (rest[0] if rest else 1)
        out.append([fid, fmt(v, places), key] + rest)
    groups.append({"doc": doc, "table": table, "row": row, "file": file, "figures": out})


# the narrative paper's committed outputs
for kind, name, stem in [
    ("idiom", "RoBERTa-large (baseline)", "idiom_dev_predictions"),
    ("idiom", "+ context knowledge", "idiom_context_dev_predictions"),
    ("idiom", "+ literal knowledge", "idiom_literal_dev_predictions"),
    ("simile", "RoBERTa-large (baseline)", "dev_predictions"),
    ("simile", "+ context knowledge", "simile_context_dev_predictions"),
    ("simile", "+ literal knowledge", "simile_literal_dev_predictions"),
]:
    group(
        "docs/research/paper_outputs.md",
        "paper-discriminative",
        f"| {kind} | {name} |",
        f"paper-outputs/{kind}-{stem}/results.json",
        [
            ["accuracy", 2, "metrics.accuracy.accuracy", 100],
            ["ci_low", 1, "metrics.accuracy.ci_low", 100],
            ["ci_high", 1, "metrics.accuracy.ci_high", 100],
            ["n", 0, "metrics.accuracy.n"],
        ],
    )
for kind in ("idiom", "simile"):
    for path in sorted(glob.glob(f"../shared/data/fig_narrative/output/{kind}/generative/*dev*.jsonl")):
        stem = os.path.basename(path)[:-6]
        group(
            "docs/research/paper_outputs.md",
            "paper-generation",
            f"| {kind} | {stem}.jsonl |",
            f"paper-outputs/{kind}-{stem}/results.json",
            [
                ["items", 0, "metrics.generation.n_items"],
                ["empty", 0, "problems.empty_generations.count"],
                ["rougeL", 4, "metrics.generation.rougeL"],
                ["bleu", 4, "metrics.generation.bleu"],
                ["sacrebleu", 2, "metrics.generation.sacrebleu_sentence"],
            ],
        )
group(
    "docs/research/paper_outputs.md",
    "baselines",
    "| flute / val |",
    "baselines/flute-val-majority/results.json",
    [
        ["accuracy", 2, "metrics.accuracy.accuracy", 100],
        ["ci_low", 1, "metrics.accuracy.ci_low", 100],
        ["ci_high", 1, "metrics.accuracy.ci_high", 100],
    ],
)
group(
    "docs/research/paper_outputs.md",
    "baselines",
    "| idiom-cloze / dev |",
    "baselines/idiom-dev-longer-option/results.json",
    [
        ["accuracy", 2, "metrics.accuracy.accuracy", 100],
        ["ci_low", 1, "metrics.accuracy.ci_low", 100],
        ["ci_high", 1, "metrics.accuracy.ci_high", 100],
    ],
)


def suite(row, file, labels, types):
    figs = [
        ["n", 0, "metrics.accuracy.n"],
        ["accuracy", 1, "metrics.accuracy.accuracy", 100],
        ["ci_low", 1, "metrics.accuracy.ci_low", 100],
        ["ci_high", 1, "metrics.accuracy.ci_high", 100],
        ["majority", 1, "metrics", 100, "majority"],
    ]
    for lab in labels:
        figs += [[f"{lab}", 1, f"metrics.by_gold_label.{lab}.accuracy", 100], [f"{lab}_n", 0, f"metrics.by_gold_label.{lab}.n"]]
    for grp, t in types:
        figs += [[t, 1, f"metrics.{grp}.{t}.accuracy", 100]]
    group("README.md", "suite", row, file, figs)


if os.path.exists(R + "suite/suite.json"):  # README's suite table as `make run` printed it (scripts/publish_suite.py)
    import sys

    sys.path.insert(0, "src")
    from figlang.evaluation.suite import registry_rows

    for row, file, figs in registry_rows(json.load(open(R + "suite/suite.json"))):
        group("README.md", "suite", row, file, figs)
else:  # the table of the earlier suite (smollm2-135m alone), until the first published run of the current one
    suite(
        "| impli-idioms-manual |",
        "zs/impli-manual-nli-score-smollm2/results.json",
        ["entailment", "non-entailment"],
        [("by_pair_type", "manual"), ("by_pair_type", "manual_antonym")],
    )
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/idiom-dev/results.json"):
    suite("| idiom-cloze |", "suite-smollm2/idiom-dev/results.json", ["option1", "option2"], [])
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/simile-dev/results.json"):
    suite("| simile-cloze |", "suite-smollm2/simile-dev/results.json", ["option1", "option2"], [])
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/flute-val/results.json"):
    suite(
        "| flute |",
        "suite-smollm2/flute-val/results.json",
        ["contradiction", "entailment"],
        [("by_figure_type", t) for t in ("idiom", "metaphor", "sarcasm", "simile")],
    )
# docs/research/zero_shot_results.md, the zero-/few-shot cloze table: the cells with a result file
ZS = "docs/research/zero_shot_results.md"
CELL = [
    ["accuracy", 2, "metrics.accuracy.accuracy", 100],
    ["ci_low", 1, "metrics.accuracy.ci_low", 100],
    ["ci_high", 1, "metrics.accuracy.ci_high", 100],
]
for row, files in {
    "| smollm2-135m | lm-score pmi |": ["suite-smollm2/idiom-dev", "suite-smollm2/simile-dev"],
    "| smollm2-135m | few-shot |": ["zs/idiom-devdisjoint-fewshot-smollm2", "zs/simile-devdisjoint-fewshot-smollm2"],
    "| gemma3-270m | pet |": [
        f for f in ["zs/idiom-dev-pet-gemma", "zs/simile-dev-pet-gemma"] if os.path.exists(R + f + "/results.json")
    ]  # re-made 2026-11-26
    + ["zs/idiom-devdisjoint-pet-gemma", "zs/simile-devdisjoint-pet-gemma"],
    "| gemma3-270m | qa |": [f for f in ["zs/idiom-dev-qa-gemma", "zs/simile-dev-qa-gemma"] if os.path.exists(R + f + "/results.json")]
    + ["zs/idiom-devdisjoint-qa-gemma", "zs/simile-devdisjoint-qa-gemma"],
    "| gemma3-270m | few-shot |": [
        "zs/idiom-dev-fewshot-gemma-llamacpp",
        "zs/simile-dev-fewshot-gemma-llamacpp",
        "zs/idiom-devdisjoint-fewshot-gemma-llamacpp",
        "zs/simile-devdisjoint-fewshot-gemma-llamacpp",
    ],
    "| qwen2.5-1.5b (bf16) | pet |": [
        "zs/simile-dev-pet-qwen-llamacpp",
        "zs/idiom-devdisjoint-pet-qwen-llamacpp",
        "zs/simile-devdisjoint-pet-qwen-llamacpp",
    ],
    "| qwen2.5-1.5b (bf16) | qa |": ["zs/idiom-devdisjoint-qa-qwen-llamacpp", "zs/simile-devdisjoint-qa-qwen-llamacpp"],
    "| qwen2.5-1.5b (bf16) | few-shot |": [
        "zs/idiom-dev-fewshot-qwen-llamacpp",
        "zs/simile-dev-fewshot-qwen-llamacpp",
        "zs/idiom-devdisjoint-fewshot-qwen-llamacpp",
        "zs/simile-devdisjoint-fewshot-qwen-llamacpp",
    ],
}.items():
    for f in files:
        group(ZS, "zs-cloze", row, f + "/results.json", CELL)
# cells re-made on 2026-11-25 (one thread, float32) with the documented commands, predictions committed
for row, f in [
    ("| gemma3-270m | lm-score pmi |", "zs/idiom-dev-pmi-gemma"),
    ("| gemma3-270m | lm-score pmi |", "zs/simile-dev-pmi-gemma"),
    ("| gemma3-270m | lm-score pmi |", "zs/idiom-devdisjoint-pmi-gemma"),
    ("| gemma3-270m | lm-score pmi |", "zs/simile-devdisjoint-pmi-gemma"),
    ("| smollm2-135m | lm-score pmi |", "zs/idiom-devdisjoint-pmi-smollm2"),
    ("| smollm2-135m | lm-score pmi |", "zs/simile-devdisjoint-pmi-smollm2"),
    ("| smollm2-135m | pet |", "zs/idiom-dev-pet-smollm2"),
]:
    if os.path.exists(R + f + "/results.json"):
        group(ZS, "zs-cloze", row, f + "/results.json", CELL)
# cells re-made on 2026-11-26 (two threads; smollm2-135m in float32 as first made, qwen2.5-1.5b in bfloat16), predictions
# committed; in each row left to right, so that a figure is matched to its own cell
for method, runs in [
    ("pet", ["simile-dev", "idiom-devdisjoint", "simile-devdisjoint"]),
    ("qa", ["idiom-dev", "simile-dev", "idiom-devdisjoint", "simile-devdisjoint"]),
    ("few-shot", ["idiom-dev", "simile-dev"]),
]:
    for f in runs:
        f = f"zs/{f}-{method.replace('-', '')}-smollm2"
        if os.path.exists(R + f + "/results.json"):
            group(ZS, "zs-cloze", f"| smollm2-135m | {method} |", f + "/results.json", CELL)
for row, runs in [
    ("| qwen2.5-1.5b (bf16) | lm-score pmi |", ["idiom-dev-pmi", "simile-dev-pmi", "idiom-devdisjoint-pmi", "simile-devdisjoint-pmi"]),
    ("| qwen2.5-1.5b (bf16) | pet |", ["idiom-dev-pet"]),
    ("| qwen2.5-1.5b (bf16) | qa |", ["idiom-dev-qa", "simile-dev-qa"]),
]:
    for f in runs:
        if os.path.exists(f"{R}zs/{f}-qwen/results.json"):
            group(ZS, "zs-cloze", row, f"zs/{f}-qwen/results.json", CELL)


# docs/research/zero_shot_results.md, the NLI table: the cells with a result file
def nli(row, file, labels, invalid=None):
    figs = CELL + [[f"{lab}", 1, f"metrics.by_gold_label.{lab}.accuracy", 100] for lab in labels]
    if invalid:
        figs.insert(3, ["invalid", 0, "metrics.n_invalid"])
        if invalid == "of":
            figs.insert(4, ["n", ",", "metrics.accuracy.n"])
    group(ZS, "zs-nli", row, file + "/results.json", figs)


FL, IM = ["contradiction", "entailment"], ["entailment", "non-entailment"]
nli("| smollm2-135m | nli-score |", "zs/flute-val-nli-score-smollm2", FL)
nli("| smollm2-135m | nli-score |", "zs/impli-manual-nli-score-smollm2", IM)
nli("| smollm2-135m | nli-score question=meaning, content-free |", "zs/impli-manual-meaning-cf-smollm2", IM)
nli("| smollm2-135m | nli-generate |", "zs/impli-manual-nli-generate-smollm2", IM, invalid="count")
nli("| gemma3-270m | nli-score question=meaning, content-free |", "zs/impli-manual-meaning-cf-gemma", IM)
nli("| gemma3-270m | nli-generate |", "zs/flute-val-nli-generate-gemma", FL, invalid="of")
nli("| gemma3-270m | nli-generate |", "zs/impli-manual-nli-generate-gemma", IM, invalid="of")
nli("| qwen2.5-1.5b (bf16) | nli-score question=meaning, content-free |", "zs/impli-manual-meaning-cf-qwen-llamacpp", IM)
nli("| qwen2.5-1.5b (bf16) | nli-generate |", "zs/flute-val-nli-generate-qwen-llamacpp", FL, invalid="count")
nli("| qwen2.5-1.5b (bf16) | nli-generate |", "zs/impli-manual-nli-generate-qwen-llamacpp", IM, invalid="count")
# re-made 2026-11-26 (first quoted without files)
nli("| smollm2-135m | nli-score, content-free |", "zs/flute-val-nli-score-cf-smollm2-bf16", FL)
nli("| smollm2-135m | nli-score question=meaning, content-free |", "zs/flute-val-meaning-cf-smollm2", FL)
nli("| smollm2-135m | nli-generate |", "zs/flute-val-nli-generate-smollm2", FL, invalid="of")
nli("| gemma3-270m | nli-score |", "zs/flute-val-nli-score-gemma", FL)
nli("| gemma3-270m | nli-score |", "zs/impli-manual-nli-score-gemma", IM)
nli("| gemma3-270m | nli-score question=meaning, content-free |", "zs/flute-val-meaning-cf-gemma", FL)
nli("| qwen2.5-1.5b (bf16) | nli-score |", "zs/flute-val-nli-score-qwen-bf16", FL)
nli("| qwen2.5-1.5b (bf16) | nli-score |", "zs/impli-manual-nli-score-qwen-bf16", IM)
nli("| qwen2.5-1.5b (bf16) | nli-score question=meaning, content-free |", "zs/flute-val-meaning-cf-0shot-qwen", FL)
# docs/research/zero_shot_results.md, FLUTE's zero-shot configuration chosen on selection (benchmarks/flute_zero_shot_selection.py
# --tables prints these tables from the grid file; row labels are the configurations in words)
FZ = "zs/flute-selection-grid-qwen/grid.json"
FZ_TYPES = ("idiom", "metaphor", "sarcasm", "simile")


def fz_words(axis, v):
    if axis == "question":
        return f"question {v}"
    if axis == "calibrate":
        return "content-free calibration" if v == "content-free" else "no calibration"
    return {0: "zero-shot", 4: "four shots", 8: "eight shots"}[int(v)]


def fz_label(c):
    return ", ".join(fz_words(a, c[a]) for a in ("question", "calibrate", "shots"))


if os.path.exists(R + FZ):
    fz = json.load(open(R + FZ))
    for i, r in enumerate(fz["rows"]):
        mark = " (chosen)" if r["name"] == fz["chosen"] else ""
        group(
            ZS,
            "flute-zs-selection-grid",
            f"| {fz_label(r['config'])}{mark} |",
            FZ,
            [["accuracy", 2, f"rows.{i}.accuracy"], ["n_correct", 0, f"rows.{i}.n_correct"], ["n", 0, f"rows.{i}.n"]]
            + [[lb, 2, f"rows.{i}.by_gold_label.{lb}.accuracy"] for lb in ("contradiction", "entailment")]
            + [[t, 2, f"rows.{i}.by_figure_type.{t}.accuracy"] for t in FZ_TYPES],
        )
    names = {"question": "question", "calibrate": "calibration", "shots": "shots"}
    for axis in ("question", "calibrate", "shots"):
        for j, x in enumerate(fz["spread"][axis]["ranges"]):
            fixed = ", ".join(fz_words(a, v) for a, v in x["fixed"].items())
            group(ZS, "flute-zs-spread", f"| {names[axis]} | {fixed} |", FZ, [["range", 2, f"spread.{axis}.ranges.{j}.range"]])
    if "val" in fz:
        v = fz["val"]
        run = "zs/flute-val-" + fz["chosen"] + "-qwen/results.json"
        group(
            ZS,
            "flute-zs-val",
            f"| {fz_label(v['config'])}: chosen on selection, the reported figure |",
            run,
            [
                ["accuracy", 2, "metrics.accuracy.accuracy", 100],
                ["ci_low", 2, "metrics.accuracy.ci_low", 100],
                ["ci_high", 2, "metrics.accuracy.ci_high", 100],
            ]
            + [[lb, 2, f"metrics.by_gold_label.{lb}.accuracy", 100] for lb in ("contradiction", "entailment")]
            + [[t, 2, f"metrics.by_figure_type.{t}.accuracy", 100] for t in FZ_TYPES],
        )
        for name in fz.get("val_not_used_for_choosing", {}):
            c = next(r["config"] for r in fz["rows"] if r["name"] == name)
            group(
                ZS,
                "flute-zs-val",
                f"| {fz_label(c)}: not used for choosing |",
                FZ,
                [["accuracy", 2, f"val_not_used_for_choosing.{name}.accuracy"]]
                + [[lb, 2, f"val_not_used_for_choosing.{name}.by_gold_label.{lb}.accuracy"] for lb in ("contradiction", "entailment")]
                + [[ft, 2, f"val_not_used_for_choosing.{name}.by_figure_type.{ft}.accuracy"] for ft in FZ_TYPES],
            )
# docs/research/trained_models.md: the qwen probe table and the GPU qwen `mc` table (configuration, figures, time)
TM = "docs/research/trained_models.md"


def scores(table, row, run, options):
    dd = [
        ["accuracy", 2, "metrics.accuracy.accuracy", 100],
        ["ci_low", 2, "metrics.accuracy.ci_low", 100],
        ["ci_high", 2, "metrics.accuracy.ci_high", 100],
        ["n", 0, "metrics.accuracy.n"],
    ]
    group(
        TM, table, row, f"{run}/eval/dev-disjoint/results.json", dd + [[o, 2, f"metrics.by_gold_label.{o}.accuracy", 100] for o in options]
    )
    group(TM, table, row, f"{run}/eval/dev/results.json", dd)


for row, run, per_epoch in [
    ("| idiom, `mc` probe |", "cpu/idiom-probe-qwen-l14", 153),
    ("| simile, `mc` probe |", "cpu/simile-probe-qwen-l14", 148),
]:
    group(TM, "qwen-probe", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"], ["best_epoch", 0, "best.epoch"]])
    group(TM, "qwen-probe", row, f"{run}/train_result.json", [["epochs_run", 0, "steps", 1 / per_epoch]])
    scores("qwen-probe", row, run, ["option1", "option2"])
    group(TM, "qwen-probe", row, f"{run}/train_result.json", [["minutes", 0, "seconds", 1 / 60]])
for row, run in [
    ("| idiom, `mc-continuation` probe (no narrative) |", "cpu/idiom-probe-continuation-qwen-l14"),
    ("| simile, `mc-continuation` probe (no narrative) |", "cpu/simile-probe-continuation-qwen-l14"),
]:
    group(TM, "qwen-probe", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"], ["best_epoch", 0, "best.epoch"]])
    for split in ("dev-disjoint", "dev"):  # these rows print no n
        group(
            TM,
            "qwen-probe",
            row,
            f"{run}/eval/{split}/results.json",
            [
                ["accuracy", 2, "metrics.accuracy.accuracy", 100],
                ["ci_low", 2, "metrics.accuracy.ci_low", 100],
                ["ci_high", 2, "metrics.accuracy.ci_high", 100],
            ],
        )
    group(TM, "qwen-probe", row, f"{run}/train_result.json", [["minutes", 0, "seconds", 1 / 60]])
row, run = "| idiom `mc`, qwen2.5-1.5b |", "gpu-qwen/idiom-mc-qwen"
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["steps", 0, "steps"]])
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["batch", 0, "training.batch_size"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["epochs_run", 0, "steps", 1 / 153]])
group(
    TM,
    "qwen-gpu",
    row,
    f"{run}/figlang.json",
    [["epochs", 0, "training.epochs"], ["max_minutes", 1, "training.max_minutes"], ["best_epoch", 0, "best.epoch"]],
)
scores("qwen-gpu", row, run, ["option1", "option2"])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["seconds", 0, "seconds"]])
row, run = "| simile `mc`, qwen2.5-1.5b |", "gpu-qwen/simile-mc-qwen"
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["steps", 0, "steps"]])
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["batch", 0, "training.batch_size"], ["epochs", 0, "training.epochs"]])
scores("qwen-gpu", row, run, ["option1", "option2"])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["seconds", 0, "seconds"]])
# docs/research/trained_models.md: the FLUTE NLI classifiers
for row, run in [("| **mpnet** (all-mpnet-base-v2)", "cpu/flute-nli-mpnet"), ("| minilm (all-MiniLM-L6-v2)", "cpu/flute-nli-minilm")]:
    group(TM, "flute-nli", row, f"{run}/figlang.json", [["best_epoch", 0, "best.epoch"]])
    group(TM, "flute-nli", row, f"{run}/train_result.json", [["seconds", "," if "mpnet" in run else 0, "seconds"]])
    group(TM, "flute-nli", row, f"{run}/eval/carved-dev/results.json", [["carved_dev", 2, "metrics.accuracy.accuracy", 100]])
    group(
        TM,
        "flute-nli",
        row,
        f"{run}/eval/val/results.json",
        [
            ["accuracy", 2, "metrics.accuracy.accuracy", 100],
            ["ci_low", 2, "metrics.accuracy.ci_low", 100],
            ["ci_high", 2, "metrics.accuracy.ci_high", 100],
        ]
        + [[lab, 2, f"metrics.by_gold_label.{lab}.accuracy", 100] for lab in ("contradiction", "entailment")]
        + [[ft, 2, f"metrics.by_figure_type.{ft}.accuracy", 100] for ft in ("sarcasm", "simile", "metaphor", "idiom")],
    )
# docs/research/trained_models.md: configuration figures printed in row labels (epochs of the minilm control and the GPU runs)
group(
    TM,
    "minilm-control",
    "| `mc` + 3 epochs of `mc` (the control) |",
    "cpu/control-idiom-mc-more-minilm/figlang.json",
    [["epochs", 0, "training.epochs"]],
)
group(TM, "minilm-control", "| GPU: `mc` + 3 epochs", "gpu-minilm/idiom-mc-context-minilm/figlang.json", [["epochs", 0, "training.epochs"]])
for _k in ("idiom", "simile"):
    group(TM, "generators-gpu", f"| {_k} `generator` (", f"gpu-minilm/{_k}-generator/figlang.json", [["epochs", 0, "training.epochs"]])
group(
    "docs/research/zero_shot_results.md",
    "shared-prefix-split",
    "| naive (per-pair loop) |",
    "bench/lm_scoring_idiom_dev.json",
    [["batch", 0, "rows.0.batch_size"]],
)
for _k, _table, _p in (
    ("literal", "mc-literal-cpu", {"dev-disjoint": 2, "dev": 3}),
    ("context", "mc-context-cpu", {"dev-disjoint": 2, "dev": 2}),
):
    for _s in ("dev-disjoint", "dev"):  # a re-made knowledge model vs its mc: figlang compare of the committed predictions
        group(
            TM,
            _table,
            "| difference [paired bootstrap CI], McNemar p (re-made runs) |",
            f"cpu/compare-idiom-mc-{_k}-vs-mc-sel-{_s}.json",
            [
                [f"{_s}-difference", 2, "bootstrap.mean_difference", 100, "abs"],
                [f"{_s}-ci_low", 2, "bootstrap.ci_low", 100, "abs"],
                [f"{_s}-ci_high", 2, "bootstrap.ci_high", 100, "abs"],
                [f"{_s}-mcnemar_p", _p[_s], "tests.1.p_value"],
            ],
        )
# docs/research/flute_explanations.md: the explaining system's k, chosen on a `selection` sample
for i, row in enumerate(("| k = 3 |", "| **k = 6** (chosen) |")):
    group(
        "docs/research/flute_explanations.md",
        "explain-selection-sweep",
        row,
        "explain/selection-sweep/sweep.json",
        [
            ["k", 0, f"results.{i}.options.k"],
            ["seconds_per_pair", 2, f"results.{i}.seconds_per_pair"],
            ["rougeL_f1_split_mix", 2, f"results.{i}.rougeL_f1_split_mix"],
        ]
        + [[ft, 2, f"results.{i}.by_figure_type.{ft}"] for ft in ("idiom", "metaphor", "sarcasm", "simile")],
    )
# the compact-examples sweep: the small example counts (below 10, so not found by key search) registered by hand
for i, row in ((0, "| (a) |"), (7, "| (h) |"), (8, "| **(i)** (chosen) |")):
    group(
        "docs/research/flute_explanations.md",
        "explain-selection-compact",
        row,
        "explain/selection-sweep-compact/sweep.json",
        [["examples_sarcasm", 0, f"results.{i}.examples_by_type.sarcasm"]]
        + ([["examples_other", 0, f"results.{i}.examples_by_type.idiom"]] if i == 0 else []),
    )
group(
    "docs/research/flute_explanations.md",
    "explain-speed-amx",
    "| loading (both models",
    "explain/bench-amx-2threads.json",
    [["load_seconds", 1, "load_seconds"]],
)
group(
    "docs/research/flute_explanations.md",
    "explain-speed-amx",
    "| one `explain()` call",
    "explain/bench-amx-2threads.json",
    [["one_pair_seconds", 2, "one_pair_seconds"]],
)
group(
    "docs/research/flute_explanations.md",
    "explain-speed-amx",
    "| 20 `selection` pairs",
    "explain/bench-amx-2threads.json",
    [["n", 0, "n"], ["seconds_per_pair", 2, "seconds_per_pair"], ["peak_rss_gib", 2, "peak_rss_mib", 1 / 1024]],
)
# docs/research/flute_explanations.md: prompt-lookup decoding of one pair, its draft rule chosen on `selection`'s greedy answers (replayed, no model run)
group(
    "docs/research/flute_explanations.md",
    "explain-prompt-lookup",
    "| prompt lookup as shipped",
    "explain/prompt-lookup-passes-selection.json",
    [
        ["answers", 0, "answers"],
        ["answer_tokens", 1, "mean_answer_tokens"],
        ["passes_per_token", 2, "rules.11.passes_per_token"],
        ["drafted_per_pass", 1, "rules.11.drafted_per_pass"],
    ],
)
F = "explain/bench-amx-2threads-lookup.json"
group(
    "docs/research/flute_explanations.md",
    "explain-speed-lookup",
    "| `explain()` as shipped",
    F,
    [["seconds", 2, "one_pair_seconds"], ["cpu", 2, "one_pair_cpu_seconds"], ["passes", 0, "one_pair_forward_passes"]],
)
for row, k in [("| the same pair again, token by token |", 0), ("| the same pair again, prompt lookup |", 1)]:
    group(
        "docs/research/flute_explanations.md",
        "explain-speed-lookup",
        row,
        F,
        [
            ["seconds", 2, f"one_pair_compare.{k}.seconds"],
            ["cpu", 2, f"one_pair_compare.{k}.cpu_seconds"],
            ["passes", 0, f"one_pair_compare.{k}.forward_passes"],
        ],
    )
# a probe's training record: training items, the layer it reads, the kept epoch and its `selection` accuracy
PROBE_RECORD = [
    ["train_items", ",", "data.train_items"],
    ["layer", 0, "training.base_layers"],
    ["best_epoch", 0, "best.epoch"],
    ["selection", 2, "best.dev_accuracy", 100],
]
# docs/research/trained_models.md: the idiom and simile probes remade with every choice on `selection`
for row, run, per_epoch, _kind in [
    ("| **idiom** |", "cpu/idiom-probe-qwen-sel", 135, "idiom"),
    ("| **simile** |", "cpu/simile-probe-qwen-sel", 132, "simile"),
]:
    group(TM, "qwen-probe-selection", row, f"{run}/figlang.json", PROBE_RECORD)
    group(TM, "qwen-probe-selection", row, f"{run}/train_result.json", [["epochs_run", 0, "steps", 1 / per_epoch]])
    scores("qwen-probe-selection", row, run, [])
    group(
        TM,
        "qwen-probe-selection",
        row,
        f"{run}/eval/dev-disjoint-ci-expression/results.json",
        [
            ["ci_low_expression", 2, "metrics.accuracy.ci_low", 100],
            ["ci_high_expression", 2, "metrics.accuracy.ci_high", 100],
            ["clusters", 0, "metrics.accuracy.n_clusters"],
        ],
    )
for row, kind in [("| idiom dev-disjoint |", "idiom"), ("| simile dev-disjoint |", "simile")]:
    group(
        TM,
        "probe-split-time",
        row,
        f"bench/split_time_{kind}_devdisjoint_probe.json",
        [["items", 0, "items"], ["wall", 1, "wall_seconds"], ["cpu", 1, "cpu_seconds"], ["accuracy", 2, "accuracy", 100]],
    )
for row, kind in [("| **idiom** |", "idiom"), ("| **simile** |", "simile")]:
    group(
        TM,
        "probe-vs-fewshot",
        row,
        f"zs/{kind}-devdisjoint-fewshot-qwen-bf16/vs-probe-item.json",
        [
            ["probe", 2, "a.accuracy", 100],
            ["fewshot", 2, "b.accuracy", 100],
            ["difference", 2, "bootstrap.mean_difference", 100, "abs"],
            ["ci_low", 2, "bootstrap.ci_low", 100, "abs"],
            ["ci_high", 2, "bootstrap.ci_high", 100, "abs"],
            ["only_probe", 0, "only_a_right"],
            ["only_fewshot", 0, "only_b_right"],
            ["mcnemar_p", 2, "tests.1.p_value"],
        ],
    )
    group(
        TM,
        "probe-vs-fewshot",
        row,
        f"zs/{kind}-devdisjoint-fewshot-qwen-bf16/vs-probe-expression.json",
        [["ci_low_expression", 2, "bootstrap.ci_low", 100, "abs"], ["ci_high_expression", 2, "bootstrap.ci_high", 100, "abs"]],
    )
# docs/research/trained_models.md: the mpnet FLUTE classifier chosen on `selection`, and beside it the shipped FLUTE label
# model (#36), LoRA rank 8 on mpnet
VAL_FIGS = (
    [
        ["accuracy", 2, "metrics.accuracy.accuracy", 100],
        ["ci_low", 2, "metrics.accuracy.ci_low", 100],
        ["ci_high", 2, "metrics.accuracy.ci_high", 100],
    ]
    + [[lab, 2, f"metrics.by_gold_label.{lab}.accuracy", 100] for lab in ("contradiction", "entailment")]
    + [[ft, 2, f"metrics.by_figure_type.{ft}.accuracy", 100] for ft in ("sarcasm", "simile", "metaphor", "idiom")]
)
EPOCHS = [["best_epoch", 0, "best.epoch"], ["epochs", 0, "training.epochs"]]
for row, run, config in [
    ("| **mpnet** (all-mpnet-base-v2), epoch 2 of 3, bf16 |", "cpu/flute-nli-mpnet-sel", EPOCHS),
    ("| **mpnet + LoRA rank 8** (shipped: `figlang:flute-lora-mpnet`)", "cpu/flute-nli-mpnet-lora8", [["rank", 0, "lora.rank"], *EPOCHS]),
]:
    group(TM, "flute-nli-mpnet-sel", row, f"{run}/figlang.json", config)
    group(TM, "flute-nli-mpnet-sel", row, f"{run}/train_result.json", [["selection", 2, "best_dev_accuracy", 100]])
    group(TM, "flute-nli-mpnet-sel", row, f"{run}/eval/val/results.json", VAL_FIGS)
# docs/research/trained_models.md: IMPLI's 10 folds pooled, leaky vs linked folds
FOLDS = ["cpu/impli-folds10-minilm", "gpu-minilm/impli-folds10-linked", "gpu-minilm/impli-folds10-linked-all"]
POOLED = [
    "cpu/impli-folds10-minilm/results.json",
    "gpu-minilm/impli-folds10-linked/pooled/results.json",
    "gpu-minilm/impli-folds10-linked-all/pooled/results.json",
]
for k, pooled in enumerate(POOLED):
    group(
        TM,
        "impli-folds",
        "| **all** |",
        pooled,
        [
            ["accuracy", 2, "metrics.accuracy.accuracy", 100],
            ["ci_low", 1, "metrics.accuracy.ci_low", 100],
            ["ci_high", 1, "metrics.accuracy.ci_high", 100],
        ],
    )
    if k:
        group(
            TM,
            "impli-folds",
            "| **all** |",
            FOLDS[k] + "/folds_summary.json",
            [["worst_fold", 1, "per_fold", 100, "min_fold"], ["best_fold", 1, "per_fold", 100, "max_fold"]],
        )
for row, label in [("| **entailment** (", "entailment"), ("| **non-entailment** (", "non-entailment")]:
    group(TM, "impli-folds", row, POOLED[0], [["n", ",", f"metrics.by_gold_label.{label}.n"]])
    for pooled in POOLED:
        group(TM, "impli-folds", row, pooled, [[label, 2, f"metrics.by_gold_label.{label}.accuracy", 100]])
for row, pair in [
    ("| fig_context (", "fig_context"),
    ("| metaphor_replacement |", "metaphor_replacement"),
    ("| manual (gold", "manual"),
    ("| adversarial_definition (", "adversarial_definition"),
    ("| lit_context (", "lit_context"),
    ("| manual_antonym (", "manual_antonym"),
]:
    for pooled in POOLED:
        group(TM, "impli-folds", row, pooled, [[pair, 2, f"metrics.by_pair_type.{pair}.accuracy", 100]])
# docs/research/trained_models.md: the pooled linked folds' 95% CIs, by pair, premise and idiom
CI = "gpu-minilm/impli-folds10-linked-ci/"


def ci(key):
    return [["ci_low", 2, f"{key}.ci_low", 100], ["ci_high", 2, f"{key}.ci_high", 100]]


group(TM, "impli-ci", "| by pair (the papers') |", CI + "item/results.json", ci("metrics.accuracy"))
group(
    TM,
    "impli-ci",
    "| by premise (",
    CI + "context/results.json",
    [["premises", ",", "metrics.accuracy.n_clusters"]] + ci("metrics.accuracy"),
)
group(TM, "impli-ci", "| **by idiom** (", CI + "expression/results.json", ci("metrics.accuracy"))
for row, key in [
    ("| non-entailment by pair", "metrics.by_gold_label.non-entailment"),
    ("| lit_context by pair", "metrics.by_pair_type.lit_context"),
]:
    group(TM, "impli-ci", row, CI + "item/results.json", ci(key))
    group(TM, "impli-ci", row, CI + "expression/results.json", ci(key))


def ensemble_scores(table, row, folder):
    """An ensemble's reported accuracy (results.json) with its 95% CIs by item and by expression."""
    group(
        TM,
        table,
        row,
        folder + "results.json",
        [
            ["accuracy", 2, "metrics.accuracy.accuracy", 100],
            ["ci_low", 2, "metrics.accuracy.ci_low", 100],
            ["ci_high", 2, "metrics.accuracy.ci_high", 100],
        ],
    )
    group(
        TM,
        table,
        row,
        folder + "results-by-expression.json",
        [["ci_low_expression", 2, "metrics.accuracy.ci_low", 100], ["ci_high_expression", 2, "metrics.accuracy.ci_high", 100]],
    )


# docs/research/trained_models.md: the calibrated ensemble of the probe and few-shot qwen2.5-1.5b, chosen on `selection`
for row, kind in [("| **idiom** |", "idiom"), ("| **simile** |", "simile")]:
    ens = f"ensemble/{kind}-probe-fewshot-qwen/"
    group(
        TM,
        "ensemble-probe-fewshot",
        row,
        ens + "ensemble.json",
        [
            ["sel_probe", 2, "members.0.selection_accuracy", 100],
            ["sel_fewshot", 2, "members.1.selection_accuracy", 100],
            ["sel_ensemble", 2, "selection_accuracy", 100],
            ["w_probe", 2, "weights.0"],
            ["w_fewshot", 2, "weights.1"],
        ],
    )
    ensemble_scores("ensemble-probe-fewshot", row, ens)
    for other in ("probe", "fewshot"):
        group(
            TM,
            "ensemble-probe-fewshot",
            row,
            ens + f"vs-{other}.json",
            [
                [f"minus_{other}", 2, "bootstrap.mean_difference", 100, "abs"],
                [f"ci_low_{other}", 2, "bootstrap.ci_low", 100, "abs"],
                [f"ci_high_{other}", 2, "bootstrap.ci_high", 100, "abs"],
                [f"mcnemar_p_{other}", 2, "tests.1.p_value"],
            ],
        )
# docs/research/trained_models.md: #39 target 1, the meaning line for the idiom and simile probes (mc-meaning), chosen on
# `selection`, against the shipped probe on the same dev-disjoint items, and its ensemble with few-shot chosen on `selection`
for _kind in ("idiom", "simile"):
    p_dec = 2 if _kind == "idiom" else 3  # the similes' p-values are below 0.01
    MP, ROW_MP = f"cpu/{_kind}-probe-meaning-qwen-sel", f"| **{_kind}, meaning line** (`mc-meaning`) |"
    group(TM, "meaning-probe", ROW_MP, f"{MP}/figlang.json", PROBE_RECORD)
    scores("meaning-probe", ROW_MP, MP, [])
    group(
        TM,
        "meaning-probe",
        ROW_MP,
        f"{MP}/eval/dev-disjoint-ci-expression/results.json",
        [["ci_low_expression", 2, "metrics.accuracy.ci_low", 100], ["ci_high_expression", 2, "metrics.accuracy.ci_high", 100]],
    )
    for kind in ("item", "expression"):
        figs = [
            [f"ci_low_probe_{kind}", 2, "bootstrap.ci_low", 100, "abs"],
            [f"ci_high_probe_{kind}", 2, "bootstrap.ci_high", 100, "abs"],
        ]
        if kind == "item":  # the mean difference is the same by item and by expression: printed once
            figs += [
                ["minus_probe", 2, "bootstrap.mean_difference", 100, "abs"],
                ["only_meaning", 0, "only_a_right"],
                ["only_probe", 0, "only_b_right"],
                ["mcnemar_p", p_dec, "tests.1.p_value"],
            ]
        group(TM, "meaning-probe", ROW_MP, f"{MP}/vs-probe-{kind}.json", figs)
    ENS_MP, ROW_ENS = f"ensemble/{_kind}-meaning-probe-fewshot-qwen/", f"| **{_kind}, meaning probe + few-shot** (ensemble) |"
    group(
        TM,
        "meaning-probe",
        ROW_ENS,
        ENS_MP + "ensemble.json",
        [["sel_ensemble", 2, "selection_accuracy", 100], ["w_meaning", 2, "weights.0"], ["w_fewshot", 2, "weights.1"]],
    )
    ensemble_scores("meaning-probe", ROW_ENS, ENS_MP)
    group(
        TM,
        "meaning-probe",
        ROW_ENS,
        ENS_MP + "vs-probe.json",
        [
            ["minus_probe", 2, "bootstrap.mean_difference", 100, "abs"],
            ["ci_low_probe", 2, "bootstrap.ci_low", 100, "abs"],
            ["ci_high_probe", 2, "bootstrap.ci_high", 100, "abs"],
            ["mcnemar_p", p_dec, "tests.1.p_value"],
        ],
    )
# docs/research/trained_models.md: IMPLI's decision rule (issue #22, lent H200): two recipes chosen between on the folds'
# selection slices, then the chosen one with the floor=0.85 rule
IFL = ["gpu-minilm/impli-folds10-bal-thr/", "gpu-minilm/impli-folds10-all-lw-thr/", "gpu-minilm/impli-folds10-all-lw-floor85/"]
group(
    TM,
    "impli-floor",
    "| selection slices, mean balanced accuracy",
    IFL[2] + "recipe_choice.json",
    [["bal", 2, "recipes.impli-folds10-bal-thr.mean", 100], ["all", 2, "recipes.impli-folds10-all-lw-thr.mean", 100]],
)


def impli_pooled_table(table: str, runs: list[str], n_from: str, with_ci: list[str]) -> None:
    """An IMPLI table of pooled fold runs side by side: accuracy overall and by gold label (n from ``n_from``; the CI
    by idiom of the runs in ``with_ci``), then accuracy by pair type."""
    for row, key in [
        ("| **all** |", "metrics.accuracy"),
        ("| **entailment** (", "metrics.by_gold_label.entailment"),
        ("| **non-entailment** (", "metrics.by_gold_label.non-entailment"),
    ]:
        if "gold" in key:
            group(TM, table, row, n_from + "pooled/results.json", [["n", ",", key + ".n"]])
        for run in runs:
            group(TM, table, row, run + "pooled/results.json", [["accuracy", 2, key + ".accuracy", 100]])
            if run in with_ci:
                group(TM, table, row, run + "pooled/results-by-idiom.json", ci(key))
    for row, pair in [
        ("| fig_context (", "fig_context"),
        ("| metaphor_replacement |", "metaphor_replacement"),
        ("| manual (gold", "manual"),
        ("| adversarial_definition (", "adversarial_definition"),
        ("| lit_context (", "lit_context"),
        ("| manual_antonym (", "manual_antonym"),
    ]:
        for run in runs:
            group(TM, table, row, run + "pooled/results.json", [[pair, 2, f"metrics.by_pair_type.{pair}.accuracy", 100]])


impli_pooled_table("impli-floor", IFL, n_from=IFL[0], with_ci=IFL[1:])
# docs/research/trained_models.md: the shipped IMPLI fold heads (#36) on this CPU, beside the GPU-trained fine-tuned folds
# with the same folds, selection slices and floor=0.85 rule
impli_pooled_table(
    "impli-fold-heads",
    [IFL[2], "cpu/impli-folds-flute-mpnet/"],
    n_from="cpu/impli-folds-flute-mpnet/",
    with_ci=[IFL[2], "cpu/impli-folds-flute-mpnet/"],
)

# docs/research/trained_models.md: the shipped figure-type model (#36), its two heads on FLUTE selection and val
for head, row in [("pair", "| **pair** (hypothesis and premise) |"), ("sentence", "| sentence (the figurative sentence alone) |")]:
    group(
        "docs/research/trained_models.md",
        "figure-type-minilm",
        row,
        "cpu/figure-type-minilm/record.json",
        [["selection", 2, f"heads.{head}.selection_accuracy", 100], ["accuracy", 2, f"heads.{head}.val.accuracy", 100]]
        + [[t, 2, f"heads.{head}.val.{t}.accuracy", 100] for t in ("sarcasm", "simile", "metaphor", "idiom")],
    )


# ---- tables registered by key search: each row's numbers looked up in the files named for it -------------------
# (doc, table name, the header line's start, [(row text, [files])]). A number no file gives is marked ⁿ in its cell
# by `python scripts/results_index.py --mark-docs` (a row with no files: every cell with a number), with the legend
# below the table; the figures found are written to INDEX.yaml with their key paths (review them in the diff).
sys.path.insert(0, "src")
from figlang.evaluation.registry import NUMBER, suggest_keys  # noqa: E402

MARK = "ⁿ"
LEGEND = "ⁿ no result file; to be re-run."


def _e(run, *splits):  # a training run's report splits
    return [f"{run}/{s}/results.json" for s in splits]


GM, CM = "gpu-minilm/", "cpu/"
AUTO_TABLES = [
    (
        TM,
        "minilm-knowledge-gpu",
        "| minilm, selection on dev-disjoint |",
        [
            ("| `mc` |", _e(GM + "idiom-mc-minilm", "dev-disjoint", "dev") + _e(GM + "simile-mc-minilm", "dev-disjoint", "dev")),
            (
                "| `mc-context` (from `mc`) |",
                _e(GM + "idiom-mc-context-minilm", "dev-disjoint", "dev") + _e(GM + "simile-mc-context-minilm", "dev-disjoint", "dev"),
            ),
            (
                "| `mc-literal` (from `mc`) |",
                _e(GM + "idiom-mc-literal-minilm", "dev-disjoint", "dev") + _e(GM + "simile-mc-literal-minilm", "dev-disjoint", "dev"),
            ),
            (
                "| `mc-continuation` (CPU, below",
                _e(CM + "idiom-mc-continuation-minilm", "eval/dev-disjoint", "eval/dev")
                + _e(CM + "simile-mc-continuation-minilm", "eval/dev-disjoint", "eval/dev"),
            ),
        ],
    ),
    (
        TM,
        "minilm-control",
        "| idiom, minilm | dev-disjoint | official dev |",
        [
            (
                "| `mc` (CPU; the same command",
                _e(CM + "control-idiom-mc-minilm", "dev-disjoint", "dev") + [GM + "idiom-mc-minilm/dev-disjoint/results.json"],
            ),
            (
                "| `mc` + 3 epochs of `mc` (the control) |",
                _e(CM + "control-idiom-mc-more-minilm", "dev-disjoint", "dev") + [CM + "control-idiom-mc-more-minilm/figlang.json"],
            ),
            (
                "| GPU: `mc` + 3 epochs",
                _e(GM + "idiom-mc-context-minilm", "dev-disjoint", "dev")
                + _e(GM + "idiom-mc-literal-minilm", "dev-disjoint", "dev")
                + _e(GM + "idiom-mc-minilm", "dev-disjoint", "dev")
                + [GM + "idiom-mc-context-minilm/figlang.json"],
            ),
        ],
    ),
    (TM, "relations-context", "| idiom, context (167 items) |", [("| accuracy % |", [GM + "relations-idiom-context-dev.json"])]),
    (TM, "relations-literal", "| idiom, literal (167 items) |", [("| accuracy % |", [GM + "relations-idiom-literal-dev.json"])]),
    (
        TM,
        "relations-simile",
        "| simile (109 items) |",
        [("| accuracy % |", [GM + "relations-simile-context-dev.json", GM + "relations-simile-literal-dev.json"])],
    ),
    (
        TM,
        "generators-gpu",
        "| dev (all items) | ROUGE-L |",
        [
            (
                f"| {k} `generator{c}`{lr} ({n}) |",
                [
                    f"{GM}{k}-generator{d}/eval-dev-all/results.json",
                    f"{GM}{k}-generator{d}/figlang.json",
                    f"{GM}{k}-generator{d}/train_result.json",
                ],
            )
            for k, n in (("idiom", 299), ("simile", 39))
            for c, lr, d in (("", "", ""), ("-context", "", "-context"), ("-context", ", lr 3e-5", "-context-lr3e-5"))
        ],
    ),
    (
        TM,
        "mc-continuation-cpu",
        "| task | dev-disjoint | official dev |",
        [
            ("| idiom, `mc-continuation` |", _e(CM + "idiom-mc-continuation-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| idiom, `mc-continuation`, re-made", _e(CM + "idiom-mc-continuation-minilm-sel", "eval/dev-disjoint", "eval/dev")),
            ("| simile, `mc-continuation` |", _e(CM + "simile-mc-continuation-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| simile, `mc-continuation`, re-made", _e(CM + "simile-mc-continuation-minilm-sel", "eval/dev-disjoint", "eval/dev")),
            ("| idiom, `mc` (narrative + continuation)", _e(CM + "idiom-mc-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| idiom, `mc`, re-made", _e(CM + "idiom-mc-minilm-sel", "eval/dev-disjoint", "eval/dev")),
        ],
    ),
    (
        TM,
        "mc-context-cpu",
        "| idiom | dev-disjoint (unseen idioms) | official dev |\n|---|---|---|\n| `mc-context`",
        [
            ("| `mc-context` (minilm, from `mc`) |", _e(CM + "idiom-mc-context-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| `mc` (its starting point) |", _e(CM + "idiom-mc-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| `mc-continuation` (no narrative) |", _e(CM + "idiom-mc-continuation-minilm", "eval/dev-disjoint", "eval/dev")),
            ("| `mc-context`, re-made", _e(CM + "idiom-mc-context-minilm-sel", "eval/dev-disjoint", "eval/dev")),
            ("| its `mc` (re-made) |", _e(CM + "idiom-mc-minilm-sel", "eval/dev-disjoint", "eval/dev")),
        ],
    ),
    (
        TM,
        "mc-literal-cpu",
        "| idiom | dev-disjoint (unseen idioms) | official dev |\n|---|---|---|\n| `mc-literal`",
        [
            (
                "| `mc-literal` (minilm, from `mc`, CPU preset), re-made",
                _e(CM + "idiom-mc-literal-minilm-sel", "eval/dev-disjoint", "eval/dev"),
            ),
            ("| its `mc` (re-made", _e(CM + "idiom-mc-minilm-sel", "eval/dev-disjoint", "eval/dev")),
            ("| `mc-literal` (minilm, from `mc`, CPU preset) |", _e(CM + "idiom-mc-literal-minilm", "dev-disjoint", "dev")),
            ("| its `mc` |", _e(CM + "control-idiom-mc-minilm", "dev-disjoint", "dev")),
        ],
    ),
    (
        TM,
        "simulatability-val120",
        "| rationales | IR→O | I→O | simulatability | McNemar p |\n|---|---|---|---|---|\n| gold (FLUTE's explanations) | 98.33",
        [
            ("| gold (FLUTE's explanations) |", [CM + "simulatability-val120.json#gold"]),
            ("| predicted (the smollm2", [CM + "simulatability-val120.json#predicted"]),
        ],
    ),
    (
        TM,
        "simulatability-val",
        "| rationales | IR→O | I→O | simulatability | McNemar p |\n|---|---|---|---|---|\n| gold (FLUTE's explanations) | 95.19",
        [
            ("| gold (FLUTE's explanations) |", [CM + "simulatability-val-full.json#gold"]),
            ("| predicted", [CM + "simulatability-val-full.json#predicted"]),
        ],
    ),
]
ZSD = "docs/research/zero_shot_results.md"
# README's speed table (benchmarks/bench_lm_eval.py): items/s is items over wall seconds, which the file keeps apart
LM_EVAL_FILE, LM_EVAL_WHOLE = "bench/lm_eval_idiom_dev_first48.json", "bench/lm_eval_idiom_dev_whole.json"
LM_EVAL_AMX = "bench/lm_eval_idiom_dev_whole_amx.json"  # the same benchmark on a CPU with native bfloat16 (the README's table)
LM_EVAL_ROWS = [
    ("| lm-eval 0.4.13, `hf`, float32 |", "lm-eval", 2, LM_EVAL_AMX),
    ("| figlang `lm-score -O input=lm-eval`, float32 |", "figlang", 2, LM_EVAL_AMX),
    ("| the limit: the requests' token tree once", "limit", 2, LM_EVAL_AMX),
    ("| figlang, the CPU's fast dtype (bfloat16) |", "figlang-fast", 2, LM_EVAL_AMX),
    ("| qwen2.5-1.5b, figlang, Transformers float32 |", "qwen-transformers", 3, LM_EVAL_AMX),
    ("| qwen2.5-1.5b, figlang, Transformers bfloat16 |", "qwen-transformers-fast", 3, LM_EVAL_AMX),
    ("| qwen2.5-1.5b, figlang, llama.cpp (Q4 GGUF, AVX2 build) |", "qwen-llama.cpp", 3, LM_EVAL_AMX),
]
for r, m, places, f in LM_EVAL_ROWS:
    _bench = json.load(open(R + f))
    groups.append(
        {
            "doc": "docs/explanation/speed.md",
            "table": "lm-eval-speed",
            "row": r,
            "file": f,
            "figures": [
                [
                    "items_per_s",
                    f"{_bench['modes'][m]['items'] / _bench['modes'][m]['seconds']:.{places}f}",
                    f"modes.{m}",
                    1,
                    "items_per_second",
                ]
            ],
        }
    )
IP = "interpret/"


def _explanation_rows(run):  # a `figlang explain --score` table: overall, then one row per figure type
    return [
        (f"| {r} |", [f"explain/{run}/explanations.json#{k}"])
        for r, k in (
            ("**overall**", "overall"),
            ("idiom", "by_figure_type.idiom"),
            ("metaphor", "by_figure_type.metaphor"),
            ("sarcasm", "by_figure_type.sarcasm"),
            ("simile", "by_figure_type.simile"),
        )
    ]


def _simulatability_rows(name, predicted_row):  # a `figlang simulatability` table: gold rationales, then figlang's
    return [("| gold (FLUTE's explanations) |", [f"cpu/{name}.json#gold"]), (predicted_row, [f"cpu/{name}.json#predicted"])]


AUTO_TABLES += [
    (
        "docs/explanation/speed.md",
        "lm-eval-speed",
        "| run | items | items/s | CPU s | peak RSS MB | accuracy |",
        [(r, [f"{f}#modes.{m}.{k}" for k in ("items", "cpu_seconds", "peak_rss_mb", "accuracy")]) for r, m, _, f in LM_EVAL_ROWS],
    ),
    ("docs/research/flute_explanations.md", "explain-first60", "| FLUTE val, first 60 |", _explanation_rows("flute-val-first60")),
    ("docs/research/flute_explanations.md", "explain-val-k6", "| FLUTE val | n | label Acc@0 |", _explanation_rows("flute-val-k6")),
    (
        "docs/research/flute_explanations.md",
        "simulatability-explain-k6",
        "| rationales (FLUTE val, 499 pairs) |",
        _simulatability_rows("simulatability-val-explain-k6", "| figlang's explanations (mpnet labels) |"),
    ),
    (
        "docs/research/interpret.md",
        "interpret-pie-holdout",
        "| lexicon | entries | held-out idioms",
        [
            (f"| {r} |", [f"{IP}pie-holdout.json#conditions.{k}", f"{IP}pie-holdout.json#held_out_idioms"])
            for r, k in (
                ("all resources, held-out fifth removed from PIE", "holdout"),
                ("all resources but figlang's own list (the lexicon before it)", "without_curated"),
                ("the benchmarks' resources only (the lexicon before WordNet and Wiktionary)", "benchmark_resources_only"),
                ("other resources only (no PIE at all)", "other_resources_only"),
                ("all resources, idioms kept (the matcher's ceiling)", "in_lexicon"),
            )
        ],
    ),
    (
        "docs/research/interpret.md",
        "interpret-everyday",
        "| hits counted | recall % | found |",
        [
            ("| every idiom hit |", [f"{IP}everyday-idioms.json#all_hits"]),
            ("| hits the use model calls figurative", [f"{IP}everyday-idioms.json#figurative_labelled_hits"]),
            ("| every idiom hit, the lexicon without", [f"{IP}everyday-idioms.json#without_curated.all_hits"]),
            ("| hits called figurative, without", [f"{IP}everyday-idioms.json#without_curated.figurative_labelled_hits"]),
            ("| hits the everyday use model calls", [f"{IP}everyday-idioms-everyday-model.json#figurative_labelled_hits"]),
        ],
    ),
    (
        "docs/research/interpret.md",
        "interpret-use-model",
        "| test uses | n | figurative | literal |",
        [
            ("| all test idioms |", [f"{IP}use-model.json#test"]),
            ("| PIE-English |", [f"{IP}use-model.json#test_by_source.pie"]),
            ("| IMPLI (MAGPIE, PIE, SemEval premises) |", [f"{IP}use-model.json#test_by_source.impli"]),
            ("| all test idioms, the everyday use model |", [f"{IP}use-model-everyday.json#test"]),
            ("| PIE-English, the everyday use model |", [f"{IP}use-model-everyday.json#test_by_source.pie"]),
            ("| IMPLI, the everyday use model |", [f"{IP}use-model-everyday.json#test_by_source.impli"]),
        ],
    ),
    (
        "docs/research/interpret.md",
        "interpret-narratives",
        "| lexicon | gold idioms in the lexicon |",
        [
            ("| all resources |", [f"{IP}narratives-dev.json#conditions.all_resources"]),
            ("| without the narratives resource |", [f"{IP}narratives-dev.json#conditions.without_narratives"]),
        ],
    ),
    (
        "docs/research/interpret.md",
        "interpret-speed",
        "| what | amount | wall clock | CPU time (1 thread) |",
        [
            ("| detection (", [f"{IP}speed.json#detection"]),
            ("| full interpretation", [f"{IP}speed.json#full_interpretation"]),
            ("| loading (", [f"{IP}speed.json#load_seconds", f"{IP}speed.json#lexicon.entries"]),
        ],
    ),
    (
        "docs/how-to/web.md",
        "serve-times",
        "| what | first response (s) | ready (s) |",
        [
            ("| startup of `figlang serve`", ["serve/bench_serve.json#startup_s"]),
            ("| startup, CPU time used |", ["serve/bench_serve.json#startup_cpu_s"]),
            ("| startup again", ["serve/bench_serve.json#restart_startup_s", "serve/bench_serve.json#restart_startup_cpu_s"]),
        ]
        + [
            (r, [f"serve/bench_serve.json#pages.{i}", "serve/bench_serve.json#big_run_items"])
            for i, r in enumerate(
                (
                    "| start |",
                    "| tasks |",
                    "| task impli",
                    "| run (26,124 items) |",
                    "| run, filtered",
                    "| generation run |",
                    "| explaining NLI run |",
                    "| compare form |",
                    "| compare two",
                    "| compare, second page",
                    "| interpret |",
                    "| interpret two sentences",
                    "| human evaluation list |",
                    "| review list |",
                )
            )
        ],
    ),
    (
        "docs/research/trained_models.md",
        "impli-folds-leaky",
        "| IMPLI, 10 folds pooled | accuracy % [95% CI] | n |",
        [
            (f"| {r}", ["cpu/impli-folds10-minilm/results.json", "cpu/impli-folds10-minilm/folds_summary.json#mean_over_folds"])
            for r in (
                "**all**",
                "**entailment**",
                "**non-entailment**",
                "fig_context",
                "metaphor_replacement",
                "manual (gold",
                "adversarial_definition",
                "lit_context",
                "manual_antonym",
            )
        ],
    ),
    (
        "docs/research/trained_models.md",
        "flute-iro-val",
        "| FLUTE val (499 pairs) | value |",
        [
            (f"| {r}", ["cpu/flute-iro-smollm2/eval/val/results.json"])
            for r in ("**Acc@0**", "by figure type", "unparseable answers", "mean explanation score")
        ],
    ),
    (
        ZSD,
        "zs-cloze-detail",
        "| model | set | n | method | accuracy % [95% CI] | majority % | run |",
        [
            ("| smollm2-135m | idiom dev | 355 (all) | lm-score **pmi**", ["suite-smollm2/idiom-dev/results.json"]),
            ("| smollm2-135m | simile dev | 376 (all) | lm-score **pmi**", ["suite-smollm2/simile-dev/results.json"]),
            (
                "| smollm2-135m | idiom dev | 355 (all) | lm-score sum / token / char",
                ["suite-smollm2/idiom-dev/norms.json#norms", "suite-smollm2/idiom-dev/results.json"],
            ),
            (
                "| smollm2-135m | simile dev | 376 (all) | lm-score sum / token / char",
                ["suite-smollm2/simile-dev/norms.json#norms", "suite-smollm2/simile-dev/results.json"],
            ),
        ]
        + (
            [("| qwen2.5-1.5b (bf16) | simile dev | 376 (all) | lm-score **pmi**", ["zs/simile-dev-pmi-qwen/results.json"])]
            if os.path.exists(f"{R}zs/simile-dev-pmi-qwen/results.json")
            else []
        )
        + [
            (f"| gemma3-270m | {k} dev | {n} (all) | lm-score {m}", [f"zs/{k}-dev-pmi-gemma/{j}" for j in js])
            for k, n in (("idiom", 355), ("simile", 376))
            for m, js in (("**pmi**", ["results.json"]), ("sum / token / char", ["norms.json#norms", "results.json"]))
            if os.path.exists(f"{R}zs/{k}-dev-pmi-gemma/{js[0].split('#')[0]}")
        ],
    ),
    (
        ZSD,
        "zs-cloze-added",
        "| model | set | n | method | accuracy % [95% CI] | per gold label | majority % |",
        [
            (f"| smollm2-135m | {k} **dev-disjoint** |", [f"zs/{k}-devdisjoint-pmi-smollm2/results.json"])
            for k in ("idiom", "simile")
            if os.path.exists(f"{R}zs/{k}-devdisjoint-pmi-smollm2/results.json")
        ]
        + [
            (r, [f"zs/{f}/results.json"])
            for r, f in (
                ("| smollm2-135m | idiom dev | 355 (all) | pet", "idiom-dev-pet-smollm2"),
                ("| smollm2-135m | simile dev | 376 (all) | pet", "simile-dev-pet-smollm2"),
                ("| smollm2-135m | idiom dev | 355 (all) | qa", "idiom-dev-qa-smollm2"),
            )
            if os.path.exists(f"{R}zs/{f}/results.json")
        ],
    ),
    (
        ZSD,
        "zs-flute-detail",
        "| model | n | calibration | Acc@0 % [95% CI] |",
        [
            ("| qwen2.5-1.5b (bf16) | 499 (all) | none |", ["zs/flute-val-nli-score-qwen-bf16/results.json"]),
            ("| qwen2.5-1.5b (bf16), **`question=meaning`** |", ["zs/flute-val-meaning-cf-0shot-qwen/results.json"]),
        ],
    ),
    (
        ZSD,
        "shared-prefix-split",
        "| mode | batch | wall s | records/s | pairs/s |",
        [
            ("| naive (per-pair loop) |", ["bench/lm_scoring_idiom_dev.json#rows.0"]),
            ("| **shared prefix, batched** |", ["bench/lm_scoring_idiom_dev.json#rows.1"]),
        ],
    ),
    (
        ZSD,
        "prefix-tokens",
        "| idiom dev, 355 items, chunks of 32",
        [
            (
                "| every context in full",
                [
                    "bench/fewshot_prefix_idiom_dev.json#context_tokens.per-context",
                    "bench/fewshot_prefix_idiom_dev.json#ratio_per_context_over_runs",
                ],
            ),
            (
                "| one prefix per call",
                [
                    "bench/fewshot_prefix_idiom_dev.json#context_tokens.call-prefix",
                    "bench/fewshot_prefix_idiom_dev.json#ratio_call_prefix_over_runs",
                ],
            ),
            ("| **runs of shared examples**", ["bench/fewshot_prefix_idiom_dev.json#context_tokens.runs"]),
        ],
    ),
    ("docs/research/human_eval_table5.md", "table5", "| | Idiom (recomputed) | Idiom (paper) |", None),
    (
        "docs/research/human_eval_table5.md",
        "table5-majority",
        "| reading | idiom | simile |\n|---|---:|---:|\n| majority of all human votes",
        None,
    ),
    ("docs/research/human_eval_table5.md", "table5-column3", "| aggregation of column 3 | share |", None),
    ("docs/research/human_eval_table5.md", "table5-denominators", "| denominator | GPT2-XL |", None),
    (
        "docs/research/human_eval_table5.md",
        "table5-readings",
        "| reading | idiom | simile |\n|---|---:|---:|\n| absolute, all sentences",
        None,
    ),
    ("docs/research/human_eval_table5.md", "table5-agreement", "| statistic | idiom | simile |", None),
    ("docs/research/human_eval_table5.md", "table5-summary", "| part | recomputed vs paper |", None),
    ("docs/research/impli_generator.md", "impli-regenerate", "| source | items | exact | exact % |", None),
    ("docs/research/flute_creator.md", "flute-creator-counts", "| count (all 50 idioms) | idiom |", None),
    ("docs/research/flute_creator.md", "flute-creator-review", "| figure | candidates | accept | edit | reject |", None),
    ("docs/research/narrative_miner.md", "miner-recall", "| split | narratives | idiom in last sentence |", None),
    ("docs/research/narrative_miner.md", "miner-segmenters", "| segmenter | recall train / dev / test |", None),
    ("docs/research/narrative_miner.md", "miner-similes", "| PIE expression shape | sentences |", None),
    ("docs/research/narrative_miner.md", "miner-counts", "| count | n |", None),
]
# Tables of numbers that are not quoted results: marked <!-- not-results-table: WHY --> by --mark-docs
NOT_RESULTS = [
    (
        "docs/explanation/benchmarks.md",
        "| task | shape | splits | notes |",
        "the tasks and their splits' sizes: data facts the loaders' tests check",
    ),
    ("docs/how-to/models.md", "| name | hub id | kind | offline provider (PyPI) |", "the model catalog: parameter counts"),
    ("docs/how-to/models.md", "| task shape | `--method` | what it does |", "the methods and their options"),
    (
        "docs/research/flute_explanations.md",
        "| id | gold | figlang | figlang's explanation |",
        "examples: FLUTE item ids and figlang's answers",
    ),
    ("docs/research/impli_generator.md", "| pair type | made from | label | output file (IMPLI naming) |", "the pair types and file names"),
    ("docs/research/interpret.md", "| step | what does it | where |", "the pipeline's steps and the resources' sizes"),
    ("docs/research/interpret.md", "| input | message (abridged) |", "error messages and input limits"),
    ("docs/research/knowledge.md", "| provider | kinds | source | for new text |", "the knowledge providers"),
    ("docs/research/knowledge.md", "| # | shipped |", "examples: numbered inferences"),
    (
        "docs/research/trained_models.md",
        "| `--method` | shape | input (one sequence per option or pair) | notes |",
        "the trained methods' input formats",
    ),
    ("docs/research/trained_models.md", "| preset | settings | for |", "the training presets' settings"),
    ("docs/research/trained_models.md", "| method | trained on | decoded with |", "the generation methods' formats"),
    (ZSD, "| name | what it is | weights | how it was run here |", "the model catalog and how each model was run"),
]


def _find_table(text, head):
    """The line index of the header that ``head`` (one or more lines) starts."""
    lines = text.split("\n")
    want = head.split("\n")
    hits = [i for i in range(len(lines)) if all(i + k < len(lines) and lines[i + k].startswith(w) for k, w in enumerate(want))]
    if len(hits) != 1:
        raise SystemExit(f"table head {head!r}: {len(hits)} matches")
    return lines, hits[0]


def _cells(row):
    """(start, end) of each cell's text between pipes."""
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", row)]
    return list(zip(bars[:-1], bars[1:]))


def _bindings(row, files, registered=()):
    """For each number token of the row: (token, (file, key, scale) or None, cell index); ⁿ-marked cells skipped,
    tokens that a figure registered by hand above already backs (``registered``: their texts) taken as bound."""
    out = []
    registered = list(registered)
    cells = _cells(row)
    used = set()  # a key backs one number of a row (129 sentences/s is not the 129 similes)
    for m in NUMBER.finditer(row):
        c = next((k for k, (a, b) in enumerate(cells) if a < m.start() < b), None)
        if c is None or MARK in row[cells[c][0] : cells[c][1]]:
            continue
        if m.group(0) in registered:
            registered.remove(m.group(0))
            continue
        found = suggest_keys(m.group(0), files, R, exclude=used) if files else None
        if found:
            used.add(found[:2])
        out.append((m.group(0), found, c))
    return out


def _hand(doc, name, row):
    """The printed texts of the figures registered by hand (group(...) above) for this row."""
    return [f[1] for g in groups[:N_HAND] if g["doc"] == doc and g["table"] == name and g["row"] in row for f in g["figures"]]


def mark_docs():
    for doc in sorted({t[0] for t in AUTO_TABLES} | {t[0] for t in NOT_RESULTS}):
        text = open(doc, encoding="utf-8").read()
        for d, name, head, rows in AUTO_TABLES:
            if d != doc:
                continue
            lines, at = _find_table(text, head)
            end = at
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            marked = False
            for i in range(at + 2, end):
                spec = [] if rows is None else [f for r, f in rows if lines[i].replace(" " + MARK, "").startswith(r)]
                spec = spec or [[]]  # a row no file is named for: every number marked
                row = lines[i]
                if True:  # a row without files: every cell with a number is marked
                    found = _bindings(row, spec[0], _hand(doc, name, row))
                    if spec[0] and any(f is None for _, f, _ in found):
                        print(f"{doc} {name}: not in its files: {[t for t, f, _ in found if f is None]} in {row[:70]!r}")
                    unbound = sorted({c for _, f, c in found if f is None}, reverse=True)
                    for c in unbound:
                        a, b = _cells(row)[c]
                        row = row[:b].rstrip() + f" {MARK} " + row[b:]
                        marked = True
                lines[i] = row
            if marked and not any(LEGEND.split(";")[0] in line for line in lines[end : end + 4]):
                lines.insert(end, "")
                lines.insert(end + 1, lines[at][: len(lines[at]) - len(lines[at].lstrip())] + LEGEND)
            if at == 0 or f"results-table: {name}" not in lines[at - 1]:
                indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
                lines.insert(at, f"{indent}<!-- results-table: {name} no-file={MARK} -->")
            text = "\n".join(lines)
        for d, head, why in NOT_RESULTS:
            if d != doc:
                continue
            lines = text.split("\n")
            for at in [
                i for i, line in enumerate(lines) if line.startswith(head) and (i == 0 or not lines[i - 1].lstrip().startswith("|"))
            ][::-1]:
                if "not-results-table" not in lines[at - 1]:
                    lines.insert(at, f"<!-- not-results-table: {why} -->")
            text = "\n".join(lines)
        open(doc, "w", encoding="utf-8").write(text)


def auto_groups():
    for doc, name, head, rows in AUTO_TABLES:
        text = open(doc, encoding="utf-8").read()
        lines, at = _find_table(text, head)
        for rtext, files in rows or []:
            row = next(line for line in lines[at:] if line.replace(" " + MARK, "").startswith(rtext))
            tokens = [m.group(0) for m in NUMBER.finditer(row)]
            placed = []  # (token position, file, figure): the hand-registered figures of this row and the found ones
            taken = set()
            for g in [g for g in groups[:N_HAND] if g["doc"] == doc and g["table"] == name and g["row"] in row]:
                groups.remove(g)
                for fig in g["figures"]:
                    pos = next((t for t, tok in enumerate(tokens) if tok == fig[1] and t not in taken), None)
                    if pos is None:
                        raise SystemExit(
                            f"{doc}, table {name!r}, row {g['row']!r}: the figure {fig[0]} = {fig[1]} "
                            f"({g['file']}) is not printed in the row: {row}"
                        )
                    taken.add(pos)
                    placed.append((pos, g["file"], fig))
            for tok, found, _ in _bindings(row, files, [f[2][1] for f in placed]):
                if found:
                    file, key, scale, derive = found
                    fid = key.split(".")[-1] if not key.split(".")[-1].isdigit() else key.replace(".", "_")
                    extra = [int(scale) if scale == int(scale) else scale] if scale != 1 or derive else []
                    pos = next(t for t, tk in enumerate(tokens) if tk == tok and t not in taken)
                    taken.add(pos)
                    placed.append((pos, file, [fid, tok, key] + extra + ([derive] if derive else [])))
            # in row order, one group per run of figures from one file: figlang report reprints a fully registered
            # row by position
            for _pos, file, fig in sorted(placed, key=lambda p: p[0]):
                if groups and groups[-1].get("_auto") == (doc, name, rtext) and groups[-1]["file"] == file:
                    groups[-1]["figures"].append(fig)
                else:
                    groups.append({"doc": doc, "table": name, "row": rtext, "file": file, "figures": [fig], "_auto": (doc, name, rtext)})


group(
    TM,
    "impli-folds-leaky",
    "| **all** |",
    "cpu/impli-folds10-minilm/folds_summary.json",
    [["worst_fold", 1, "per_fold", 100, "min_fold"], ["best_fold", 1, "per_fold", 100, "max_fold"]],
)
for r, f in (
    ("| smollm2-135m | idiom dev | 355 (all) | lm-score **pmi**", "idiom-dev"),
    ("| smollm2-135m | simile dev | 376 (all) | lm-score **pmi**", "simile-dev"),
    ("| smollm2-135m | idiom dev | 355 (all) | lm-score sum / token / char", "idiom-dev"),
    ("| smollm2-135m | simile dev | 376 (all) | lm-score sum / token / char", "simile-dev"),
):
    group(ZSD, "zs-cloze-detail", r, f"suite-smollm2/{f}/results.json", [["majority", 1, "metrics", 100, "majority"]])
if os.path.exists(f"{R}zs/simile-dev-pmi-qwen/results.json"):
    group(
        ZSD,
        "zs-cloze-detail",
        "| qwen2.5-1.5b (bf16) | simile dev | 376 (all) | lm-score **pmi**",
        "zs/simile-dev-pmi-qwen/results.json",
        [["majority", 1, "metrics", 100, "majority"]],
    )
for k in ("idiom", "simile"):
    if os.path.exists(f"{R}zs/{k}-devdisjoint-pmi-smollm2/results.json"):
        group(
            ZSD,
            "zs-cloze-added",
            f"| smollm2-135m | {k} **dev-disjoint** |",
            f"zs/{k}-devdisjoint-pmi-smollm2/results.json",
            [["majority", 1, "metrics", 100, "majority"]],
        )
for r, f in (
    ("| smollm2-135m | idiom dev | 355 (all) | pet", "idiom-dev-pet-smollm2"),
    ("| smollm2-135m | simile dev | 376 (all) | pet", "simile-dev-pet-smollm2"),
    ("| smollm2-135m | idiom dev | 355 (all) | qa", "idiom-dev-qa-smollm2"),
):
    if os.path.exists(f"{R}zs/{f}/results.json"):
        group(ZSD, "zs-cloze-added", r, f"zs/{f}/results.json", [["majority", 1, "metrics", 100, "majority"]])
for k, n in (("idiom", 355), ("simile", 376)):
    if os.path.exists(f"{R}zs/{k}-dev-pmi-gemma/results.json"):
        for m in ("**pmi**",) + (("sum / token / char",) if os.path.exists(f"{R}zs/{k}-dev-pmi-gemma/norms.json") else ()):
            group(
                ZSD,
                "zs-cloze-detail",
                f"| gemma3-270m | {k} dev | {n} (all) | lm-score {m}",
                f"zs/{k}-dev-pmi-gemma/results.json",
                [["majority", 1, "metrics", 100, "majority"]],
            )
# docs/research/meaning_aware.md: the selection grid, the dev-disjoint report, the cost of the 12 inferences
MA, MD = "docs/research/meaning_aware.md", "meaning/dev-disjoint/"
AUTO_TABLES += [
    (
        MA,
        "meaning-selection",
        "| items | configuration | sum | token | pmi | meaning-pmi |",
        [
            (r, ["meaning/selection/grid.json"])
            for r in (
                "| all 281 | `lm-score` |",
                "| sample of 96 | `lm-score` |",
                "| sample of 96 | `lm-score-meaning position=before` |",
                "| sample of 48 | `lm-score` |",
                "| sample of 48 | `lm-score-knowledge knowledge=context order=narrative-first aggregate=lse` |",
                "| sample of 48 | … `aggregate=mean` |",
                "| sample of 48 | … `aggregate=max` |",
            )
        ],
    ),
    (
        MA,
        "meaning-dev-disjoint",
        "| task | run | accuracy % [95% CI by item] | [95% CI by expression] |",
        [
            (f"| {k} | `{run}", [f"{MD}{k}-dd-{f}/results.json"] + ([f"{MD}{k}-dd-{f}-byexpr/results.json"] if by else []))
            for k in ("idiom", "simile")
            for run, f, by in (
                ("lm-score-meaning norm=token position=before` (chosen", "lm-score-meaning-token", True),
                ("lm-score norm=token`", "lm-score-token", True),
                ("lm-score norm=pmi`", "lm-score-pmi", False),
            )
        ],
    ),
    (
        MA,
        "meaning-knowledge-cost",
        "| method | CPU s | × plain (CPU) | tokens run | × plain (tokens) |",
        [
            (r, ["meaning/bench/knowledge_prefix_cost.json"])
            for r in (
                "| `lm-score` |",
                "| `lm-score-meaning` |",
                "| `lm-score-knowledge order=narrative-first` |",
                "| `lm-score-knowledge order=inference-first` |",
            )
        ],
    ),
]
# docs/research/flute_explanations.md: compact examples (2026-11-26): the second selection sweep, val, the trivial baselines, simulatability, speed
EXC = "explain/selection-sweep-compact/sweep.json"
EXPLAIN_SWEEP_ROWS = ["| (a) ", "| (b) ", "| (c) ", "| (d) ", "| (e) ", "| (f) ", "| (g) ", "| (h) ", "| **(i)** "]
AUTO_TABLES += [
    (
        "docs/research/flute_explanations.md",
        "explain-selection-compact",
        "| `selection` sample (80 pairs) | pair form | style line | examples: sarcasm |",
        [(r, [f"{EXC}#results.{i}"]) for i, r in enumerate(EXPLAIN_SWEEP_ROWS)],
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-selection-writer",
        "| `selection` sample (80 pairs), mpnet labels | who writes the explanations |",
        [(r, [f"explain/selection-sweep-writer/sweep.json#results.{i}"]) for i, r in enumerate(("| **(i)** ", "| (j) ", "| (k) "))],
    ),
    (  # 2026-12-07, thirteenth session: the writer that sees the retrieved examples, beside one without, same budget
        "docs/research/flute_explanations.md",
        "explain-selection-writer-examples",
        "| `selection` sample (80 pairs), shipped mpnet labels, AMX Xeon | what the writer reads |",
        [
            (r, [f"explain/selection-sweep-writer-examples/sweep.json#results.{i}", f"explain/{run}/figlang.json"])
            for i, (r, run) in enumerate((("| **(w0)** ", "flute-iro-writer-2000"), ("| (w1) ", "flute-iro-writer-2000-examples3")))
        ],
    ),
    (  # 2026-11-29, tenth session: the levers #39 named that no session had tried
        "docs/research/flute_explanations.md",
        "explain-selection-levers",
        "| `selection` sample (80 pairs), shipped mpnet labels | lever |",
        [
            (r, [f"explain/selection-sweep-levers/sweep.json#results.{i}"])
            for i, r in enumerate(("| (l0) ", "| **(l1)** ", "| (l2) ", "| (l3) ", "| (l4) "))
        ],
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-val-compact",
        "| FLUTE val, compact examples | n | label Acc@0 |",
        _explanation_rows("flute-val-compact"),
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-val-writer",
        "| FLUTE val, configuration (k) | n | label Acc@0 |",
        _explanation_rows("flute-val-writer"),
    ),
    (
        "docs/research/flute_explanations.md",
        "simulatability-explain-writer",
        "| rationales (FLUTE val, 499 pairs), configuration (k) |",
        _simulatability_rows("simulatability-val-explain-writer", "| figlang's explanations (the writer for metaphors and similes) |"),
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-baselines-val",
        "| FLUTE val (499 pairs), the same labels | ROUGE-L F1 |",
        [
            (f"| {r}", [f"explain/baselines-val/summary.json#rows.{k}"])
            for r, k in (
                ("**figlang, compact examples", "system"),
                ("the hypothesis itself", "hypothesis"),
                ("the premise and the hypothesis", "premise-hypothesis"),
                ("the nearest example's gold explanation", "nearest-example"),
            )
        ],
    ),
    (
        "docs/research/flute_explanations.md",
        "simulatability-explain-compact",
        "| rationales (FLUTE val, 499 pairs), compact examples |",
        _simulatability_rows("simulatability-val-explain-compact", "| figlang's explanations (mpnet labels, compact examples) |"),
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-speed-compact",
        "| compact examples, 2 threads, idle machine | seconds |",
        [
            ("| loading (both models", ["explain/bench-amx-2threads-compact.json#load_seconds"]),
            (
                "| one `explain()` call on a new simile pair",
                [
                    "explain/bench-amx-2threads-compact.json#one_pair_seconds",
                    "explain/bench-amx-2threads-compact.json#one_pair_cpu_seconds",
                ],
            ),
            (
                "| 20 `selection` pairs in one call",
                [
                    "explain/bench-amx-2threads-compact.json#n",
                    "explain/bench-amx-2threads-compact.json#seconds_per_pair",
                    "explain/bench-amx-2threads-compact.json#peak_rss_mib",
                ],
            ),
        ],
    ),
]
# ---- #39 target 3: qwen's backend by CPU class (docs/research/flute_explanations.md, "Speed by CPU class") --------
_SEL40 = "explain/backends-selection40/agreement.json#runs."
# the explainer's speed by backend setting, one benchmark file a CPU: its table's rows are the file's configs in order
_SPEED_ROWS = {
    ("explain-speed-avx512", "| AVX-512 without AMX, 2 threads, idle |", "explain/bench-avx512-backends.json"): [
        "| Transformers bfloat16, batches of 16",
        "| **Transformers float32, one prompt at a time",
        "| Transformers float32, batches of 16",
        "| llama.cpp, dispatch build",
    ],
    ("explain-speed-amd", "| AMD EPYC, 2 threads |", "explain/bench-amd-epyc-backends.json"): [  # 2026-11-29
        "| Transformers bfloat16, batches of 16",
        "| **Transformers bfloat16, one prompt at a time",
        "| Transformers float32, one prompt at a time",
        "| llama.cpp, dispatch build",
    ],
}
AUTO_TABLES += [
    (
        "docs/research/flute_explanations.md",
        table,
        header + " one new pair, s |",
        [(row, [f"{file}#configs.{n}"]) for n, row in enumerate(rows)],
    )
    for (table, header, file), rows in _SPEED_ROWS.items()
]
AUTO_TABLES += [
    (  # 2026-11-29: the prompt's lower bound at the CPU's peak matrix-product rate (benchmarks/bench_explain_bound.py)
        "docs/research/flute_explanations.md",
        "explain-bound-amd",
        "| AMD EPYC, 2 threads, one 756-token prompt |",
        [
            (f"| {'**bfloat16**' if d == 'bfloat16' else d} |", [f"explain/bound-amd-epyc.json#by_dtype.{d}"])
            for d in ("bfloat16", "float32")
        ],
    ),
    (  # 2026-12-07: the same bound on the AMX Xeon, with the writing's bound (memory read rate, passes a pair)
        "docs/research/flute_explanations.md",
        "explain-bound-amx",
        "| AMX Xeon, 2 threads, one 756-token prompt |",
        [
            (
                f"| {'**bfloat16**' if d == 'bfloat16' else d} |",
                [f"explain/bound-amx.json#by_dtype.{d}", "explain/bound-amx.json#memory_read"],
            )
            for d in ("bfloat16", "float32")
        ],
    ),
    (
        "docs/research/flute_explanations.md",
        "explain-backends-selection40",
        "| 40 `selection` pairs, against bfloat16 |",
        [
            ("| Transformers float32 |", [_SEL40 + "0"]),
            ("| llama.cpp, dispatch build |", [_SEL40 + "1"]),
        ],
    ),
]
NOT_RESULTS += [(MA, "| method | what the LM scores | options |", "the methods and their options")]
# ---- docs/research/human_eval_table5.md and docs/research/narrative_miner.md (issue #19): figures computed from the public data, no model --
# Table 5 recomputed from the paper's crowd files (`figlang human table5 --data-dir ../shared/data -o docs/results/human/table5`);
# the "(paper)" cells from the same file's `published` block (the paper's Table 5 as printed, with its source)
HE, T5 = "docs/research/human_eval_table5.md", "human/table5/table5.json"


def t5(table, row, figs):
    group(HE, table, row, T5, [[fid, places, key] + rest for fid, places, key, *rest in figs])


for row, key in [
    ("| GPT2-XL | 56.0", "baseline"),
    ("| +context | 68.0", "context"),
    ("| +literal | 48.0", "literal"),
    ("| Human |", "human"),
]:
    t5(
        "table5",
        row,
        [
            [f"idiom_{key}", 1, f"recomputed.idiom.absolute.{key}"],
            [f"idiom_{key}_paper", 0, f"published.absolute.idiom.{key}"],
            [f"simile_{key}", 1, f"recomputed.simile.absolute.{key}"],
            [f"simile_{key}_paper", 0, f"published.absolute.simile.{key}"],
        ],
    )
for row, key in [
    ("| GPT2-XL | 15.8", "baseline"),
    ("| +context | 44.2", "context"),
    ("| +literal | 13.7", "literal"),
    ("| All |", "all"),
    ("| Neither |", "neither"),
]:
    paper_places = {"baseline": 1, "literal": 1, "neither": 1}.get(key, 0)  # the paper prints 18.6, 46.7, 6.7 for similes
    t5(
        "table5",
        row,
        [
            [f"idiom_{key}", 1, f"recomputed.idiom.comparative.{key}"],
            [f"idiom_{key}_paper", 0, f"published.comparative.idiom.{key}"],
            [f"simile_{key}", 1, f"recomputed.simile.comparative.{key}"],
            [f"simile_{key}_paper", paper_places, f"published.comparative.simile.{key}"],
        ],
    )
t5(
    "table5",
    "| as published |",
    [["idiom_alpha_paper", 2, "published.alpha.idiom.alpha"], ["simile_alpha_paper", 2, "published.alpha.simile.alpha"]],
)
for row, key in [
    ("| absolute (all sentences) |", "absolute"),
    ("| absolute (model sentences) |", "absolute_models"),
    ("| comparative |", "comparative"),
]:
    t5(
        "table5",
        row,
        [[f"idiom_alpha_{key}", 2, f"recomputed.idiom.alpha.{key}"], [f"simile_alpha_{key}", 2, f"recomputed.simile.alpha.{key}"]],
    )
t5(
    "table5",
    "| absolute HITs / assignments |",
    [[f"{k}_{n}", 0, f"recomputed.{k}.n_absolute_{n}"] for k in ("idiom", "simile") for n in ("items", "assignments")],
)
t5(
    "table5",
    "| comparative items (no majority) |",
    [[f"{k}_{n}", 0, f"recomputed.{k}.n_comparative_{n}"] for k in ("idiom", "simile") for n in ("items", "no_majority")],
)
t5(
    "table5-majority",
    "| majority of all human votes of a HIT",
    [
        ["idiom_votes", 0, "readings.idiom.human_votes_per_hit"],
        ["simile_votes", 0, "readings.simile.human_votes_per_hit"],
        ["idiom", 0, "readings.idiom.human_majority_of_all_votes"],
        ["simile", 0, "readings.simile.human_majority_of_all_votes"],
    ],
)
t5(
    "table5-majority",
    "| majority of the human columns' verdicts |",
    [["idiom", 0, "readings.idiom.human_majority_of_column_verdicts"], ["simile", 0, "readings.simile.human_majority_of_column_verdicts"]],
)
t5(
    "table5-majority",
    "| human1 only |",
    [["idiom", 0, "recomputed.idiom.absolute_human_columns.human1"], ["simile", 0, "recomputed.simile.absolute_human_columns.human1"]],
)
t5("table5-column3", "| share of all votes |", [["share", 1, "readings.simile.absolute_share_of_all_votes.literal"]])
t5("table5-column3", "| at least one plausible vote |", [["share", 0, "readings.simile.absolute_at_least_one_plausible.literal"]])
CK = ("baseline", "context", "literal", "all", "neither")
t5(
    "table5-denominators",
    "| all 116 items",
    [["items", 0, "recomputed.idiom.n_comparative_items"]] + [[k, 1, f"readings.idiom.comparative_shares_over_all_items.{k}"] for k in CK],
)
t5(
    "table5-denominators",
    "| first 100 items",
    [["items", 0, "readings.idiom.comparative_first_100_items.items"]]
    + [[k, 0, f"readings.idiom.comparative_first_100_items.shares_over_all_items.{k}"] for k in CK],
)
for row, key in [
    ("| absolute, all sentences |", "recomputed.{}.alpha.absolute"),
    ("| absolute, model sentences |", "recomputed.{}.alpha.absolute_models"),
    ("| comparative, all items |", "recomputed.{}.alpha.comparative"),
    ("| comparative, items with a majority |", "readings.{}.alpha_comparative_items_with_majority"),
]:
    t5("table5-readings", row, [["idiom", 3, key.format("idiom")], ["simile", 3, key.format("simile")]])
for row, key in [
    ("| raw pairwise agreement, absolute |", "pairwise_agreement_absolute"),
    ("| raw pairwise agreement, comparative |", "pairwise_agreement_comparative"),
]:
    t5("table5-agreement", row, [["idiom", 2, f"readings.idiom.{key}"], ["simile", 2, f"readings.simile.{key}"]])
t5("table5-summary", "| absolute simile, GPT2-XL |", [["stray_value", 0, "readings.simile.stray_answers.0.value"]])
t5("table5-summary", "| absolute, human |", [["max_gap", 1, "comparison.human_max_gap"]])
t5(
    "table5-summary",
    "| absolute simile, +literal |",
    [["recomputed", 0, "recomputed.simile.absolute.literal"], ["paper", 0, "published.absolute.simile.literal"]],
)
t5(
    "table5-summary",
    "| comparative idiom |",
    [
        ["equal_truncated", 0, "comparison.idiom_comparative_equal_to_truncated_share"],
        ["of", 0, "comparison.idiom_comparative_figures"],
        ["context", 1, "recomputed.idiom.comparative.context"],
        ["context_paper", 0, "published.comparative.idiom.context"],
    ],
)
group(
    HE,
    None,
    None,
    T5,
    [
        ["simile-comparative-baseline-2dp", 2, "recomputed.simile.comparative.baseline"],
        ["simile-comparative-literal-2dp", 2, "recomputed.simile.comparative.literal"],
        ["simile-comparative-neither-2dp", 2, "recomputed.simile.comparative.neither"],
        ["idiom-literal-column-alpha", 3, "readings.idiom.alpha_absolute_by_column.literal"],
        ["simile-human5-column-alpha", 3, "readings.simile.alpha_absolute_by_column.human5"],
    ],
)
# the miner's recall on the benchmark's own idiom narratives, one result folder per segmenter, and PIE-English's similes
# (`python benchmarks/bench_miner.py recall|pie-similes … --items … --json-out …`, the commands beside the tables)
NM = "docs/research/narrative_miner.md"
for split in ("train", "dev", "test"):
    group(
        NM,
        "miner-recall",
        f"| {split} |",
        "miner/recall-senter/results.json",
        [
            ["narratives", 0, f"splits.{split}.narratives"],
            ["in_last", 0, f"splits.{split}.recovered_in_last_sentence"],
            ["recall", 1, f"splits.{split}.recall_last_sentence", 100],
            ["in_any", 0, f"splits.{split}.recovered_in_any_sentence"],
            ["five_sentences", 0, f"splits.{split}.sentence_counts.5"],
            ["exact_five", 0, f"splits.{split}.exact_5_sentence_narrative"],
            ["span_identical", 0, f"splits.{split}.marked_span_identical_to_benchmark"],
        ],
    )
for row, seg in [("| senter (default) |", "senter"), ("| sentencizer |", "sentencizer"), ("| parser |", "parser")]:
    group(
        NM,
        "miner-segmenters",
        row,
        f"miner/recall-{seg}/results.json",
        [[f"recall_{s}", 1, f"splits.{s}.recall_last_sentence", 100] for s in ("train", "dev", "test")]
        + [["exactly_5_sentences", 0, "totals.exactly_5_sentences"]],
    )
for row, shape in [("| `as ADJ as NP`", "as_as"), ("| `ADJ as NP`", "x_as"), ("| `… like NP`", "like")]:
    group(
        NM,
        "miner-similes",
        row,
        "miner/pie-similes/results.json",
        [
            ["sentences", 0, f"explicit_patterns.by_expression_shape.{shape}.sentences"],
            ["recovered", 0, f"explicit_patterns.by_expression_shape.{shape}.recovered"],
            ["recall", 1, f"explicit_patterns.by_expression_shape.{shape}.recall", 100],
            ["recovered_verb_like", 0, f"explicit_plus_verb_like.by_expression_shape.{shape}.recovered"],
        ]
        + ([["recall_verb_like", 1, f"explicit_plus_verb_like.by_expression_shape.{shape}.recall", 100]] if shape == "like" else []),
    )
group(
    NM,
    "miner-similes",
    "| all |",
    "miner/pie-similes/results.json",
    [
        ["sentences", ",", "explicit_patterns.sentences"],
        ["recovered", 0, "explicit_patterns.recovered"],
        ["recall", 1, "explicit_patterns.recall", 100],
        ["recovered_verb_like", 0, "explicit_plus_verb_like.recovered"],
        ["recall_verb_like", 1, "explicit_plus_verb_like.recall", 100],
    ],
)
group(
    NM,
    None,
    None,
    "miner/recall-senter/results.json",
    [["recall-narratives", ",", "totals.narratives"], ["recall-exact-5-sentence-narratives", 0, "totals.exact_5_sentence_narrative"]],
)
GC, G0 = "miner/gutenberg/results.json", "runs.0."  # the whole Gutenberg folder re-counted (bench_miner.py throughput --workers 1)
for row, figs in [
    ("| documents |", [["documents", 0, "documents"]]),
    ("| sentences |", [["sentences", ",", "sentences"]]),
    ("| pre-filtered out", [["prefiltered", ",", "prefiltered_out"], ["prefiltered_share", 1, "shares_of_sentences.prefiltered", 100]]),
    ("| tagged only", [["tagged", ",", "tagged"], ["tagged_share", 1, "shares_of_sentences.tagged", 100]]),
    ("| parsed (simile", [["parsed", ",", "parsed"], ["parsed_share", 1, "shares_of_sentences.parsed", 100]]),
    ("| idiom hits |", [["idiom_hits", ",", "idiom_hits"], ["distinct_idioms", 0, "distinct_idioms"]]),
    ("| simile hits |", [["simile_hits", 0, "simile_hits"]]),
    ("| narratives |", [["narratives", ",", "narratives"], ["idiom", ",", "idiom_narratives"], ["simile", 0, "simile_narratives"]]),
    (
        "| skipped: sentence too long",
        [
            [k, 0, f"skipped.skipped:{k}"]
            for k in ("sentence_too_long", "too_few_preceding_sentences", "narrative_too_short", "final_sentence_too_short")
        ],
    ),
    ("| skipped: not matched", [["not_matched", 0, "skipped.skipped:not_matched"]]),
]:
    group(NM, "miner-counts", row, GC, [[fid, places, G0 + key] + rest for fid, places, key, *rest in figs])
# ---- end of docs/research/human_eval_table5.md and docs/research/narrative_miner.md -------------------------------------------------------
# ---- docs/research/flute_creator.md and docs/research/impli_generator.md (issue #19): figures computed without a model ----------------------
# the FLUTE creator's 50-idiom run: the review counts from the committed verdict file, the inputs drawn again with the run's
# seed (`figlang build flute verdict-stats docs/research/flute_run50_verdicts.csv --idioms benchmark --limit 50 --sample-seed 0 ...`);
# the run folder's own counts (failed, resampled, checks, model calls) have no file and keep their ⁿ
FC, FCR = "docs/research/flute_creator.md", "flute-creator/run50-review/review.json"
group(FC, "flute-creator-counts", "| inputs |", FCR, [["inputs", 0, "candidates.idiom.inputs"]])
group(FC, "flute-creator-counts", "| pairs possible (E + C per idiom) |", FCR, [["pairs_possible", 0, "candidates.idiom.pairs_possible"]])
group(
    FC,
    "flute-creator-counts",
    "| pairs generated (candidates) |",
    FCR,
    [
        ["candidates", 0, "candidates.idiom.candidates"],
        ["entailment", 0, "candidates.idiom.entailment"],
        ["contradiction", 0, "candidates.idiom.contradiction"],
        ["idioms", 0, "candidates.idiom.inputs_with_a_candidate"],
        ["both", 0, "candidates.idiom.inputs_with_both"],
        ["one", 0, "candidates.idiom.inputs_with_one"],
        ["none", 0, "candidates.idiom.inputs_without_a_candidate"],
    ],
)
group(
    FC,
    "flute-creator-review",
    "| idiom |",
    FCR,
    [
        ["candidates", 0, "rates.idiom.candidates"],
        ["accept", 0, "rates.idiom.accept"],
        ["accept_pct", 0, "shares_of_reviewed.idiom.accept"],
        ["edit", 0, "rates.idiom.edit"],
        ["edit_pct", 0, "shares_of_reviewed.idiom.edit"],
        ["reject", 0, "rates.idiom.reject"],
        ["reject_pct", 0, "shares_of_reviewed.idiom.reject"],
    ],
)
group(
    FC,
    None,
    None,
    FCR,
    [
        ["edited-premises", 0, "edited_fields.idiom.premise.all"],
        ["edited-contradiction-premises", 0, "edited_fields.idiom.premise.C"],
        ["edited-explanations", 0, "edited_fields.idiom.explanation.all"],
        ["edited-hypotheses", 0, "edited_fields.idiom.hypothesis.all"],
    ],
)  # prose
# the IMPLI regeneration check (`figlang build impli regenerate --data-dir ../shared/data [--no-capitalise] --results DIR`)
IG, IGR, IGN = (
    "docs/research/impli_generator.md",
    "impli-generator/regenerate/regeneration.json",
    "impli-generator/regenerate-no-capitalise/regeneration.json",
)
if os.path.exists(R + IGR):  # the runs take ~3 CPU minutes each; absent until made
    for row, key in [
        ("| magpie |", "per_source.magpie"),
        ("| pie |", "per_source.pie"),
        ("| semeval |", "per_source.semeval"),
        ("| overall |", "overall"),
    ]:
        group(
            IG,
            "impli-regenerate",
            row,
            IGR,
            [
                ["items", ",", f"{key}.items"],
                ["exact", ",", f"{key}.exact"],
                ["exact_pct", 1, f"{key}.exact_percent"],
                ["ignoring_case_pct", 1, f"{key}.exact_ignoring_case_percent"],
            ]
            + [[c, ",", f"{key}.mismatches.{c}"] for c in ("inflection", "slot_filling", "span_detection", "capitalisation", "other")]
            + [["exact_but_filtered", ",", f"{key}.exact_but_filtered"]],
        )
    group(
        IG,
        None,
        None,
        IGR,
        [
            ["derived-pairs", ",", "derivation.pairs"],
            ["deletion-only-lines", 0, "derivation.problems.deletion_only"],
            ["lexicon-idioms", ",", "lexicon.idioms"],
            ["lexicon-definitions", ",", "lexicon.definitions"],
            ["items", ",", "population_items"],
            ["idiom-not-found", 0, "overall.not_generated"],
            ["filtered-bad-ending", 0, "filter_reasons_on_exact_matches.bad_ending"],
            ["filtered-doubled-word", 0, "filter_reasons_on_exact_matches.doubled_word"],
            ["filtered-unfilled-slot", 0, "filter_reasons_on_exact_matches.unfilled_slot"],
        ],
    )  # prose
if os.path.exists(R + IGN):
    group(
        IG,
        None,
        None,
        IGN,
        [[f"no-capitalise-{s}-pct", 1, f"per_source.{s}.exact_percent"] for s in ("magpie", "pie", "semeval")]
        + [
            ["no-capitalise-overall-pct", 1, "overall.exact_percent"],
            ["no-capitalise-overall-exact", ",", "overall.exact"],
            ["no-capitalise-items", ",", "overall.items"],
        ],
    )  # prose
# ---- end of docs/research/flute_creator.md and docs/research/impli_generator.md ------------------------------------------------------------
N_HAND = len(groups)
if "--mark-docs" in sys.argv:
    mark_docs()
auto_groups()

head = """# Every figure README.md and docs/ quote, tied to its result file (paths relative to docs/results).
# Written by scripts/results_index.py. Format and checks: src/figlang/evaluation/registry.py; test: tests/test_results_registry.py.
# A group: the quoting document, the results table and a text that picks its row (table figures), the file,
# and figures as [id, printed text, key path, scale, derivation]. A table figure is matched to the first
# equal, not yet matched number of its row, in this order.
# Regenerate the tables from the files: figlang report docs/results --readme-tables README.md
# no-predictions: why a group's result folder keeps no per-item predictions (the registry test fails on a folder
# without them and without a reason, and counts these). Tables registered by key search (AUTO_TABLES in the
# script) were reviewed key by key; cells no file backs are marked ⁿ in the documents.
"""


# prose figures of README.md (no table): checked against their files; the document must print them
def prose(doc, file, figs):
    group(doc, None, None, file, figs)


A = "metrics.accuracy"
prose(
    "README.md",
    "gpu-minilm/impli-folds10-linked-ci/item/results.json",
    [
        ["pooled-accuracy", 2, f"{A}.accuracy", 100],
        ["ci-low-by-item", 2, f"{A}.ci_low", 100],
        ["ci-high-by-item", 2, f"{A}.ci_high", 100],
        ["nonent-ci-low-by-item", 2, "metrics.by_gold_label.non-entailment.ci_low", 100],
        ["nonent-ci-high-by-item", 2, "metrics.by_gold_label.non-entailment.ci_high", 100],
    ],
)
prose(
    "README.md",
    "gpu-minilm/impli-folds10-linked-ci/expression/results.json",
    [
        ["ci-low-by-idiom", 2, f"{A}.ci_low", 100],
        ["ci-high-by-idiom", 2, f"{A}.ci_high", 100],
        ["nonent-ci-low-by-idiom", 2, "metrics.by_gold_label.non-entailment.ci_low", 100],
        ["nonent-ci-high-by-idiom", 2, "metrics.by_gold_label.non-entailment.ci_high", 100],
    ],
)
prose("README.md", "gpu-qwen/idiom-mc-qwen/eval/dev-disjoint/results.json", [["gpu-qwen-mc-idiom", 1, f"{A}.accuracy", 100]])
prose("README.md", "gpu-qwen/simile-mc-qwen/eval/dev-disjoint/results.json", [["gpu-qwen-mc-simile", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/idiom-probe-qwen-l14/eval/dev-disjoint/results.json", [["probe-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/simile-probe-qwen-l14/eval/dev-disjoint/results.json", [["probe-simile-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/idiom-probe-qwen-l14/eval/dev/results.json", [["probe-idiom-dev", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/simile-probe-qwen-l14/eval/dev/results.json", [["probe-simile-dev", 1, f"{A}.accuracy", 100]])
prose(
    "README.md",
    "cpu/idiom-probe-qwen-sel/eval/dev-disjoint/results.json",
    [["probe-sel-idiom-dev-disjoint", 1, "metrics.accuracy.accuracy", 100]],
)
prose("README.md", "cpu/idiom-probe-qwen-sel/eval/dev/results.json", [["probe-sel-idiom-dev", 1, "metrics.accuracy.accuracy", 100]])
prose(
    "README.md",
    "cpu/simile-probe-qwen-sel/eval/dev-disjoint/results.json",
    [["probe-sel-simile-dev-disjoint", 1, "metrics.accuracy.accuracy", 100]],
)
prose(
    "README.md", "zs/flute-val-meaning-cf-0shot-qwen/results.json", [["flute-zs-selection-chosen-val", 1, "metrics.accuracy.accuracy", 100]]
)
# named, not found by _quoting_page: the speed page prints 72.9 too (a llama.cpp decode time, #39)
prose(
    "docs/how-to/train.md",
    "cpu/simile-probe-qwen-sel/eval/dev/results.json",
    [["probe-sel-simile-dev", 1, "metrics.accuracy.accuracy", 100]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/selection-sweep-writer/sweep-retime.json",
    [["retimed_k_seconds_per_pair", 2, "results.0.seconds_per_pair"]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/selection-sweep-compact/sweep-retime.json",
    [["retimed_f_seconds_per_pair", 2, "results.9.seconds_per_pair"]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/flute-iro-writer/figlang.json",
    [["writer_train_items", ",", "data.train_items"], ["writer_steps", 0, "training.total_steps"], ["writer_dev_loss", 3, "best.dev_loss"]],
)
for run, name in (
    ("flute-iro-writer-2000", "writer_2000_train_minutes"),
    ("flute-iro-writer-2000-examples3", "writer_examples_train_minutes"),
):
    prose("docs/research/flute_explanations.md", f"explain/{run}/train_result.json", [[name, 1, "seconds", 1 / 60]])
# the writer recipes tried on a lent H200 (scripts/gpu/writer_jobs.sh), beside the CPU writer, by dev loss
G = "explain/flute-iro-writer-gpu/grid.json"
group(
    "docs/research/flute_explanations.md",
    "explain-writer-gpu-grid",
    "| **CPU writer** (the one used) |",
    G,
    [
        ["cpu_epochs", 0, "cpu_writer.epochs"],
        ["cpu_lr", 4, "cpu_writer.lr"],
        ["cpu_steps_run", 0, "cpu_writer.best_step"],
        ["cpu_best_step", 0, "cpu_writer.best_step"],
        ["cpu_dev_loss", 3, "cpu_writer.best_dev_loss"],
    ],
)
for i, (tag, lr_places) in enumerate((("a", 4), ("b", 4), ("c", 4), ("d", 4), ("e", 4), ("f", 4), ("g", 5), ("h", 5))):
    group(
        "docs/research/flute_explanations.md",
        "explain-writer-gpu-grid",
        f"| ({tag}) |",
        G,
        [
            [f"{tag}_epochs", 0, f"rows.{i}.epochs"],
            [f"{tag}_lr", lr_places, f"rows.{i}.lr"],
            [f"{tag}_steps_run", ",", f"rows.{i}.stopped_at_step"],
            [f"{tag}_best_step", 0, f"rows.{i}.best_step"],
            [f"{tag}_dev_loss", 3, f"rows.{i}.best_dev_loss"],
        ],
    )
M = "explain/selection-sweep-mbr/mbr_subsets.json"  # the writer's minimum-Bayes-risk candidates and other choosing rules, on `selection`
for tag, row, key in (
    ("greedy", "| (j) the writer, greedy |", "rougeL_f1_by_candidates.n=0"),
    ("n2", "| the writer, 2 samples |", "rougeL_f1_by_candidates.n=2"),
    ("n4", "| the writer, 4 samples |", "rougeL_f1_by_candidates.n=4"),
    ("n8", "| **the writer, 8 samples** (the `writer_mbr` run) |", "rougeL_f1_by_candidates.n=8"),
    ("w_nb6", "| the writer, 8 samples | 9 | neighbours, K = 6 |", "rougeL_f1_by_rule.writer: neighbours k6"),
    ("w_mix6", "| the writer, 8 samples | 9 | minimum Bayes risk + neighbours, K = 6 |", "rougeL_f1_by_rule.writer: mbr+neighbours k6"),
    ("qwen", "| (i) qwen, compact examples |", "rougeL_f1_by_rule.prompted alone"),
    ("wq_mbr", "| the writer, 8 samples, and qwen's line | 10 | minimum Bayes risk |", "rougeL_f1_by_rule.writer+prompted: mbr"),
    ("wq_nb6", "| the writer, 8 samples, and qwen's line | 10 | neighbours, K = 6 |", "rougeL_f1_by_rule.writer+prompted: neighbours k6"),
    (
        "wq_mix6",
        "| the writer, 8 samples, and qwen's line | 10 | minimum Bayes risk + neighbours, K = 6 |",
        "rougeL_f1_by_rule.writer+prompted: mbr+neighbours k6",
    ),
):
    counts = [c for c in ("samples", "candidates", "neighbours_k") if c != "samples" or tag not in ("greedy", "qwen")]
    counts = [c for c in counts if c != "neighbours_k" or "nb" in tag or "mix" in tag]
    group(
        "docs/research/flute_explanations.md",
        "explain-mbr-selection",
        row,
        M,
        [[f"{tag}_{c}", 0, f"{key}.{c}"] for c in counts]
        + [[f"{tag}_{t}", 2, f"{key}.{t}"] for t in ("selection_mix", "idiom", "metaphor", "sarcasm", "simile")],
    )
QM = "explain/selection-sweep-qwen-mbr/mbr_subsets.json"  # 2026-12-07: qwen's own minimum-Bayes-risk candidates (mbr=8)
for tag, row, key in (
    ("qm_greedy", "| (m0) qwen, greedy: the base |", "rougeL_f1_by_candidates.n=0"),
    ("qm_n2", "| qwen, minimum Bayes risk | 2 |", "rougeL_f1_by_candidates.n=2"),
    ("qm_n4", "| qwen, minimum Bayes risk | 4 |", "rougeL_f1_by_candidates.n=4"),
    ("qm_n8", "| (m1) qwen, minimum Bayes risk (the `mbr` run) |", "rougeL_f1_by_candidates.n=8"),
):
    group(
        "docs/research/flute_explanations.md",
        "explain-selection-qwen-mbr",
        row,
        QM,
        [[f"{tag}_{c}", 0, f"{key}.{c}"] for c in ("samples", "candidates")]
        + [[f"{tag}_{t}", 2, f"{key}.{t}"] for t in ("selection_mix", "idiom", "metaphor", "sarcasm", "simile")],
    )
for i, name in ((0, "qwen_greedy_seconds_per_pair"), (1, "qwen_mbr_seconds_per_pair")):
    prose(
        "docs/research/flute_explanations.md", "explain/selection-sweep-qwen-mbr/sweep.json", [[name, 2, f"results.{i}.seconds_per_pair"]]
    )
prose(
    "docs/research/flute_explanations.md",
    "explain/bench-amx-2threads-whole-prompt.json",
    [
        ["amx_one_new_pair_seconds", 2, "one_pair_seconds"],
        ["amx_load_seconds", 1, "load_seconds"],
        ["amx_same_pair_again_seconds", 2, "one_pair_compare.1.seconds"],
        ["amx_six_pairs_seconds_per_pair", 2, "seconds_per_pair"],
        ["amx_val_minutes_at_this_rate", 1, "val_499_minutes_at_this_rate"],
    ],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/bound-amx.json",
    [
        ["amx_passes_per_pair", 2, "passes_per_pair"],
        ["amx_decoding_lower_bound_seconds", 2, "by_dtype.bfloat16.decoding_lower_bound_seconds"],
        ["amx_prefill_share_of_peak", 2, "by_dtype.bfloat16.model_share_of_peak"],
    ],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/selection-sweep-mbr/sweep.json",
    [["mbr_seconds_per_pair", 2, "results.0.seconds_per_pair"]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/bench-amx-2threads-compact-slow-host-2.json",
    [["today_one_pair_seconds", 2, "one_pair_seconds"]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/bench-amx-2threads-compact-slow-host.json",
    [["slow_host_one_pair_seconds", 1, "one_pair_seconds"]],
)
prose(
    "docs/research/flute_explanations.md",
    "explain/flute-val-compact/timing.json",
    [["val_seconds_per_pair", 2, "seconds_per_pair"], ["val_peak_rss_gib", 2, "max_rss_gib"]],
)
prose(
    "README.md",
    "bench/lm_scoring_idiom_dev.json",
    [["shared-prefix-wall-speedup", 2, "rows.1.speedup_vs_naive"], ["shared-prefix-cpu-speedup", 2, "rows.1.cpu_speedup_vs_naive"]],
)
prose("README.md", "zs/idiom-dev-qa-qwen/results.json", [["qa-qwen-idiom-dev", 1, f"{A}.accuracy", 100]])
# how far a score moves with the other requests of its call (benchmarks/call_dependence.py scoring; per-item scores
# both ways in NAME.predictions.jsonl beside each file)
for _dtype, _places in [("float32", 7), ("bfloat16", 3), ("llamacpp", 3)]:
    prose(
        "docs/how-to/models.md",
        f"bench/call_dependence/scoring-qwen-{_dtype}.json",
        [[f"call-dependence-gap-{_dtype}", _places, "largest_logprob_gap"]],
    )
# named, not found by _quoting_page: the speed page prints 66.2 too (llama.cpp's AVX2 prefill tokens/s, #39)
prose("docs/research/index.md", "zs/simile-dev-pmi-qwen/results.json", [["pmi-qwen-simile-dev", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/idiom-devdisjoint-pmi-qwen/results.json", [["pmi-qwen-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/simile-devdisjoint-pmi-qwen/results.json", [["pmi-qwen-simile-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/idiom-dev-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-idiom-dev", 1, f"{A}.accuracy", 100]])
prose(
    "README.md", "zs/idiom-devdisjoint-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]]
)
prose(
    "README.md", "zs/simile-devdisjoint-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-simile-dev-disjoint", 1, f"{A}.accuracy", 100]]
)
prose("README.md", "zs/impli-manual-meaning-cf-qwen-llamacpp/results.json", [["impli-manual-meaning-cf-qwen", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/flute-nli-mpnet-sel/eval/val/results.json", [["flute-nli-mpnet-sel-val", 1, f"{A}.accuracy", 100]])
if os.path.exists(R + "zs/idiom-dev-pmi-gemma/results.json"):
    prose("README.md", "zs/idiom-dev-pmi-gemma/results.json", [["gemma-pmi-idiom-dev", 1, f"{A}.accuracy", 100]])
prose(
    "README.md",
    "gpu-minilm/impli-folds10-linked/pooled/results.json",
    [
        ["impli-folds-pooled", 1, f"{A}.accuracy", 100],
        ["impli-folds-entailment", 1, "metrics.by_gold_label.entailment.accuracy", 100],
        ["impli-folds-non-entailment", 1, "metrics.by_gold_label.non-entailment.accuracy", 100],
    ],
)
prose(
    "README.md",
    "gpu-minilm/impli-folds10-linked-all/pooled/results.json",
    [
        ["impli-folds-all-pooled", 1, f"{A}.accuracy", 100],
        ["impli-folds-all-non-entailment", 1, "metrics.by_gold_label.non-entailment.accuracy", 100],
    ],
)
prose("README.md", "ensemble/idiom-probe-fewshot-qwen/results.json", [["ensemble-idiom", 1, "metrics.accuracy.accuracy", 100]])
prose("README.md", "ensemble/simile-probe-fewshot-qwen/results.json", [["ensemble-simile", 1, "metrics.accuracy.accuracy", 100]])
prose(
    "README.md",
    "gpu-minilm/impli-folds10-all-lw-floor85/pooled/results.json",
    [
        ["impli-floor-entailment", 1, "metrics.by_gold_label.entailment.accuracy", 100],
        ["impli-floor-non-entailment", 1, "metrics.by_gold_label.non-entailment.accuracy", 100],
    ],
)
prose(
    "docs/research/trained_models.md",
    "gpu-minilm/impli-folds10-all-lw-floor85/pooled/results.json",
    [
        ["impli-floor-pair-ci-nonent-low", 2, "metrics.by_gold_label.non-entailment.ci_low", 100],
        ["impli-floor-pair-ci-nonent-high", 2, "metrics.by_gold_label.non-entailment.ci_high", 100],
        ["impli-floor-pair-ci-ent-low", 2, "metrics.by_gold_label.entailment.ci_low", 100],
        ["impli-floor-pair-ci-ent-high", 2, "metrics.by_gold_label.entailment.ci_high", 100],
    ],
)
prose(
    "docs/research/trained_models.md",
    "cpu/impli-fold0-all-lw-thr-check/cpu-vs-h200.json",
    [["fold0-n", ",", "n_paired"], ["fold0-only-cpu", 0, "only_a_right"], ["fold0-only-h200", 0, "only_b_right"]],
)
prose(
    "docs/research/trained_models.md",
    "cpu/impli-fold0-all-lw-thr-check/test-fold/results.json",
    [
        ["fold0-cpu-ent", 2, "metrics.by_gold_label.entailment.accuracy", 100],
        ["fold0-cpu-nonent", 2, "metrics.by_gold_label.non-entailment.accuracy", 100],
    ],
)
prose(
    "docs/research/trained_models.md",
    "cpu/impli-fold0-all-lw-thr-check/h200-fold0-test/results.json",
    [
        ["fold0-h200-ent", 2, "metrics.by_gold_label.entailment.accuracy", 100],
        ["fold0-h200-nonent", 2, "metrics.by_gold_label.non-entailment.accuracy", 100],
    ],
)
prose(
    "docs/research/trained_models.md",
    "cpu/probe-layer-pilot-qwen/idiom-selection.json",
    [
        ["pilot-selection-best-layer", 0, "best.layer"],
        ["pilot-selection-best", 1, "best.cv_accuracy"],
        ["pilot-selection-layer14", 1, "table.0.cv_accuracy"],
    ],
)
# README's and docs/how-to/lm_eval.md's speed prose (benchmarks/bench_lm_eval.py): after and before the token-tree packing
prose(
    "README.md",
    LM_EVAL_AMX,
    [
        ["amx_figlang_vs_lm_eval_items_per_s", 1, "summary.figlang_vs_lm_eval_items_per_s"],
        ["amx_figlang_vs_lm_eval_cpu_seconds", 1, "summary.figlang_vs_lm_eval_cpu_seconds"],
        ["amx_figlang_time_over_limit", 2, "summary.figlang_time_over_limit"],
        ["amx_figlang_cpu_over_limit", 2, "summary.figlang_cpu_over_limit"],
        ["amx_fast_dtype_vs_lm_eval", 1, "summary.fast_dtype_vs_lm_eval_float32_items_per_s"],
        ["amx_fast_dtype_identical", 0, "summary.agreement_fast_dtype_figlang_float32.identical"],
        ["amx_qwen_llama_cpp_vs_transformers_items_per_s", 2, "summary.qwen_llama_cpp_vs_transformers_items_per_s"],
        ["amx_qwen_llama_cpp_vs_transformers_cpu_seconds", 2, "summary.qwen_llama_cpp_vs_transformers_cpu_seconds"],
        ["amx_qwen_transformers_fast_vs_float32", 1, "summary.qwen_transformers_fast_vs_float32_items_per_s"],
        ["amx_qwen_llama_cpp_vs_transformers_fast", 2, "summary.qwen_llama_cpp_vs_transformers_fast_items_per_s"],
    ],
)
prose(
    "README.md",
    LM_EVAL_WHOLE,
    [
        ["figlang_vs_lm_eval_items_per_s", 1, "summary.figlang_vs_lm_eval_items_per_s"],
        ["figlang_time_over_limit", 2, "summary.figlang_time_over_limit"],
    ],
)
prose("README.md", LM_EVAL_FILE, [["qwen_llama_cpp_vs_transformers_items_per_s", 2, "summary.qwen_llama_cpp_vs_transformers_items_per_s"]])
prose(
    "README.md",
    "bench/lm_eval_idiom_dev.json",
    [
        ["figlang_time_over_limit_before", 1, "summary.figlang_time_over_limit"],
        ["figlang_vs_lm_eval_items_per_s_before", 1, "summary.figlang_vs_lm_eval_items_per_s"],
    ],
)
prose(
    "docs/how-to/lm_eval.md",
    "bench/lm_eval_idiom_dev.json",
    [
        ["figlang_time_over_limit_before", 1, "summary.figlang_time_over_limit"],
        ["bf16_vs_lm_eval_float32_items_per_s", 2, "summary.bf16_vs_lm_eval_float32_items_per_s"],
    ],
)
if os.path.exists(R + FZ):  # docs/research/zero_shot_results.md, the FLUTE selection grid's prose
    prose(
        ZS,
        FZ,
        [
            ["grid_range", 0, "spread.grid.range"],
            # not the page's "97 uncached pairs in 119 s wall and 175 CPU seconds": the grid file was re-made from the
            # cache (cells.1: 0 computed, 1 s, 1 CPU s), and those three registered "0", "1", "1" matched elsewhere
        ],
    )
    prose(
        ZS,
        "zs/flute-selection-grid-qwen/selection-meaning-0shot/results.json",
        [["chosen_selection_ci_low", 0, "metrics.accuracy.ci_low", 100], ["chosen_selection_ci_high", 0, "metrics.accuracy.ci_high", 100]],
    )
# Headline prose figures that the pages printed unregistered until #35 (the prose scan found them): README's suite
# timing line, the tutorial's and the research index's headline accuracies, the speed page's agreement counts, the web
# page's server timings
if os.path.exists(R + "suite/suite.json"):
    prose(
        "README.md",
        "suite/suite.json",
        [["wall_seconds", 0, "seconds"], ["cpu_seconds", 0, "cpu_seconds"]]
        + [[f"load_average_end_{i}", 2, f"load_average_end.{i}"] for i in range(3)],
    )
# the suite's own timing (#39): `make test` and `make test-fast`, timed by benchmarks/bench_test_suite.py
if os.path.exists(R + "tests/suite_timing.json"):
    T = "targets"
    for doc, figs in [
        ("README.md", [["make-test-minutes", 1, f"{T}.test.minutes"], ["make-test-fast-seconds", 1, f"{T}.test-fast.wall_seconds"]]),
        (
            "docs/testing.md",
            [
                ["make-test-minutes", 1, f"{T}.test.minutes"],
                ["make-test-seconds", 1, f"{T}.test.wall_seconds"],
                ["make-test-fast-seconds", 1, f"{T}.test-fast.wall_seconds"],
            ],
        ),
    ]:
        prose(doc, "tests/suite_timing.json", figs)
for _doc in ("docs/how-to/lm_eval.md", "docs/explanation/speed.md"):  # dtype=auto on an AMD CPU with AVX512-BF16
    prose(_doc, "bench/cpu_forward_bf16_amd_epyc.json", [["bf16-vs-fp32-amd-epyc", 2, "speed_ratio_vs_float32"]])
FE = "docs/tutorials/first-evaluation.md"
for _kind in ("idiom", "simile"):
    prose(
        "docs/how-to/train.md",
        f"cpu/{_kind}-probe-meaning-qwen-sel/eval/dev-disjoint/results.json",
        [[f"meaning-probe-{_kind}-dev-disjoint", 1, f"{A}.accuracy", 100]],
    )
    prose(
        FE,
        f"cpu/{_kind}-probe-meaning-qwen-sel/eval/dev-disjoint/results.json",
        [[f"meaning-probe-{_kind}-dev-disjoint", 1, f"{A}.accuracy", 100]],
    )
prose(FE, "cpu/flute-nli-mpnet-lora8/eval/val/results.json", [["flute-lora-val", 1, f"{A}.accuracy", 100]])
prose(
    TM,
    "cpu/flute-lora-mpnet-selection/results.json",
    [
        ["flute-lora-selection", 2, f"{A}.accuracy", 100],
        ["flute-lora-selection-ci-low", 2, f"{A}.ci_low", 100],
        ["flute-lora-selection-ci-high", 2, f"{A}.ci_high", 100],
        ["flute-lora-selection-correct", 0, f"{A}.n_correct"],
        ["flute-lora-selection-n", 0, f"{A}.n"],
    ],
)
RI = "docs/research/index.md"
for run, fid in [
    ("zs/impli-manual-meaning-cf-qwen-llamacpp", "impli-manual-meaning-cf-qwen"),
    ("gpu-qwen/idiom-mc-qwen/eval/dev-disjoint", "gpu-qwen-mc-idiom"),
    ("gpu-qwen/simile-mc-qwen/eval/dev-disjoint", "gpu-qwen-mc-simile"),
    ("cpu/idiom-probe-qwen-l14/eval/dev-disjoint", "probe-l14-idiom-dev-disjoint"),
    ("cpu/simile-probe-qwen-l14/eval/dev-disjoint", "probe-l14-simile-dev-disjoint"),
    ("cpu/idiom-probe-qwen-sel/eval/dev-disjoint", "probe-idiom-dev-disjoint"),
    ("cpu/simile-probe-qwen-sel/eval/dev-disjoint", "probe-simile-dev-disjoint"),
    ("cpu/idiom-probe-qwen-sel/eval/dev", "probe-idiom-dev"),
    ("cpu/simile-probe-qwen-sel/eval/dev", "probe-simile-dev"),
]:
    prose(RI, f"{run}/results.json", [[fid, 1, f"{A}.accuracy", 100]])
prose(RI, "cpu/flute-nli-mpnet-sel/train_result.json", [["mpnet-train-minutes", 0, "seconds", 1 / 60]])
prose(
    RI, "cpu/idiom-probe-meaning-qwen-sel/eval/dev-disjoint/results.json", [["meaning-probe-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]]
)
prose(RI, "ensemble/idiom-meaning-probe-fewshot-qwen/results.json", [["meaning-ensemble-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose(
    RI, "cpu/simile-probe-meaning-qwen-sel/eval/dev-disjoint/results.json", [["meaning-probe-simile-dev-disjoint", 1, f"{A}.accuracy", 100]]
)
prose(RI, "ensemble/simile-meaning-probe-fewshot-qwen/results.json", [["meaning-ensemble-simile-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose(RI, "miner/recall-senter/results.json", [["miner-recall-train", 1, "splits.train.recall_last_sentence", 100]])
prose(RI, "impli-generator/regenerate/regeneration.json", [["regeneration-exact", 1, "overall.exact_percent"]])
SP = "docs/explanation/speed.md"
prose(
    SP,
    LM_EVAL_AMX,
    [
        ["identical", 0, "summary.agreement_figlang_lm_eval.identical"],
        ["items", 0, "summary.agreement_figlang_lm_eval.items"],
        ["fast_identical", 0, "summary.agreement_fast_dtype_figlang_float32.identical"],
        ["fast_items", 0, "summary.agreement_fast_dtype_figlang_float32.items"],
        ["qwen_llama_cpp_identical", 0, "summary.agreement_qwen_llama_cpp_transformers.identical"],
        ["qwen_llama_cpp_items", 0, "summary.agreement_qwen_llama_cpp_transformers.items"],
        ["qwen_fast_identical", 0, "summary.agreement_qwen_transformers_fast_float32.identical"],
        ["qwen_fast_items", 0, "summary.agreement_qwen_transformers_fast_float32.items"],
        ["max_abs_logprob_diff", 3, "summary.max_abs_logprob_diff_figlang_lm_eval"],
    ],
)
prose(
    SP,
    LM_EVAL_WHOLE,
    [["whole_identical", 0, "summary.agreement_figlang_lm_eval.identical"], ["whole_items", 0, "summary.agreement_figlang_lm_eval.items"]],
)
prose("docs/how-to/lm_eval.md", LM_EVAL_AMX, [["fast_dtype_vs_lm_eval", 1, "summary.fast_dtype_vs_lm_eval_float32_items_per_s"]])
# the llama.cpp build with run-time CPU dispatch against the former AVX2-only one (#39; benchmarks/bench_llama_build.py)
prose(
    SP,
    "bench/llama_build_dispatch.json",
    [
        ["prefill_dispatch_over_avx2", 2, "comparison.prefill_dispatch_over_avx2"],
        ["prefill_dispatch_tokens_per_s", 1, "summary.dispatch.prefill_tokens_per_s_median"],
        ["prefill_avx2_tokens_per_s", 1, "summary.avx2.prefill_tokens_per_s_median"],
        ["decode_dispatch_ms_per_token", 1, "summary.dispatch.decode_ms_per_token_median"],
        ["decode_avx2_ms_per_token", 1, "summary.avx2.decode_ms_per_token_median"],
        ["logits_mean_abs_diff", 3, "comparison.logits_mean_abs_diff"],
    ],
)
WEB = "docs/how-to/web.md"
prose(
    WEB,
    "serve/bench_serve.json",
    [
        ["big_run_predictions_mb", 1, "big_run_predictions_mb"],
        ["load_average_at_start", 1, "load_average_at_start"],
        ["fastest_page", 2, "pages.13.first_response_s"],
        ["slowest_page", 2, "pages.2.first_response_s"],
        ["restart_startup_cpu_s", 1, "restart_startup_cpu_s"],
        ["startup_cpu_s", 2, "startup_cpu_s"],
        ["restart_startup_s", 1, "restart_startup_s"],
        ["startup_s", 1, "startup_s"],
    ],
)
prose(
    WEB,
    "serve/bench_serve_start.json",
    [
        ["fastest_start_s", 2, "repeats.2.start_to_first_page_s"],
        ["worst_start_s", 2, "worst_start_s"],
        ["fastest_run_page_s", 2, "repeats.2.run_page_s"],
        ["slowest_run_page_s", 2, "repeats.1.run_page_s"],
        ["fastest_page_500_s", 2, "repeats.0.run_page_500_s"],
        ["slowest_page_500_s", 2, "repeats.2.run_page_500_s"],
    ],
)
# Why a registered figure's folder keeps no per-item predictions (the registry test fails on any other folder without
# them, and counts these). First matching prefix wins; re-made runs drop out of this list by having predictions.
KNOWN_GAP = "known gap (#35): "
NO_PREDICTIONS = [
    # summaries whose figures were counted as backed by a sibling run's predictions until #35; the run each figure
    # recomputes from is not named yet (a PREDICTIONS entry, when it is obvious, ends the gap)
    ("explain/selection-sweep", KNOWN_GAP + "a sweep's summary over its config-N/ runs; which run each figure comes from is not named yet"),
    (
        "explain/baselines-val/summary.json",
        KNOWN_GAP + "summary of the baseline runs beside it; which run each row comes from is not named yet",
    ),
    ("explain/bench-avx512-backends.json", "a benchmark of speed (seconds a pair per backend setting); it scores no items"),
    ("explain/bench-", "a benchmark of the explainer's speed (load, seconds a pair, memory); it scores no items"),
    (
        "explain/bound-",
        "a benchmark of the CPU's peak matrix-product and memory read rates and the model's passes on random tokens (benchmarks/bench_explain_bound.py); it scores no items",
    ),
    (
        "explain/flute-iro-writer-2000",
        "a training run's record (training items, steps, the kept step's mean dev loss over 150 selection pairs): the trainer keeps no per-item losses",
    ),
    (
        "explain/flute-iro-writer/figlang.json",
        "a training run's record (training items, steps, the kept step's mean dev loss over 150 selection pairs): the trainer keeps no per-item losses",
    ),
    (
        "zs/flute-selection-grid-qwen/grid.json",
        KNOWN_GAP + "the grid's summary over its selection-*/ runs; which run each cell comes from is not named yet",
    ),
    (
        "cpu/idiom-probe-qwen-sel/train_result.json",
        "the training run's record (epochs run); a count of the run, no items",
    ),
    (
        "cpu/simile-probe-qwen-sel/",
        "the training run's record (training items, layer, epochs, the kept epoch's selection accuracy): the trainer scores "
        "the selection split each epoch and keeps no per-item answers; the head's own selection run, made later on a CPU "
        "without AMX (ensemble/simile-sel-probe), gives 80.08, one item of 266 apart (bfloat16 kernels differ by CPU)",
    ),
    (
        "cpu/flute-nli-mpnet-lora8/figlang.json",
        "the shipped FLUTE model's training record (rank, kept epoch); a configuration, no items",
    ),
    (
        "cpu/flute-nli-mpnet-lora8/train_result.json",
        "the shipped FLUTE model's selection accuracy: the trainer scores the selection split each epoch and kept no per-item "
        "answers then; the shipped model's own selection run (cpu/flute-lora-mpnet-selection, clean commit 98b5957, a CPU "
        "without AMX) gives 86.39, 603 of 698, one pair apart (bfloat16 kernels differ by CPU)",
    ),
    (
        "cpu/flute-nli-mpnet-sel/",
        "the training run's record (kept epoch, epochs, selection accuracy, time): the trainer scores the selection split "
        "each epoch and keeps no per-item answers, and the model itself was not kept",
    ),
    (
        "gpu-minilm/impli-folds10-all-lw-floor85/recipe_choice.json",
        "the recipe choice's means over the 20 fold runs it compares (gpu-minilm/impli-folds10-{bal,all-lw}-thr/fold_NN/"
        "figlang.json, decision.at_threshold.value; GPU runs whose trainer kept no per-item selection answers): "
        "test_recipe_choice_recomputes_from_its_fold_runs checks each mean against them",
    ),
    ("gpu-minilm/relations-", "summary of figlang relations (per-relation accuracies), which writes no per-item file"),
    ("gpu-qwen/", "GPU run (H100, earlier train-disjoint split); predictions deleted before the registry, cannot be re-made without a GPU"),
    ("gpu-minilm/", "GPU run (H100); predictions deleted before the registry, cannot be re-made without a GPU"),
    (
        "cpu/idiom-probe-qwen-l14/",
        "probe on frozen qwen2.5-1.5b (hours on CPU); predictions deleted; the coordinator re-makes it on the selection split",
    ),
    (
        "cpu/simile-probe-qwen-l14/",
        "probe on frozen qwen2.5-1.5b (hours on CPU); predictions deleted; the coordinator re-makes it on the selection split",
    ),
    (
        "cpu/idiom-probe-continuation-qwen-l14/",
        "continuation-only probe on frozen qwen2.5-1.5b; predictions deleted before the registry, to be re-made",
    ),
    (
        "cpu/simile-probe-continuation-qwen-l14/",
        "continuation-only probe on frozen qwen2.5-1.5b; predictions deleted before the registry, to be re-made",
    ),
    ("cpu/flute-nli-mpnet/", "mpnet NLI training (31 min, bf16); predictions deleted, to be re-made"),
    ("cpu/flute-nli-minilm/", "minilm NLI training (6 min idle, far more on the loaded machine); predictions deleted, to be re-made"),
    ("cpu/impli-folds10-minilm/", "10-fold IMPLI training (hours on CPU); per-fold predictions deleted, to be re-made"),
    ("cpu/idiom-mc", "minilm scorer training (2-45 min a run); predictions deleted, to be re-made"),
    ("cpu/simile-mc", "minilm scorer training (2-45 min a run); predictions deleted, to be re-made"),
    ("cpu/control-idiom-mc", "minilm control training (44 min on one thread); predictions deleted, to be re-made"),
    (
        "cpu/flute-iro-smollm2/",
        "smollm2-135m I→OR run of 2026-11-23; its predictions were deleted; superseded by the `explain` method (docs/research/flute_explanations.md), so not re-made",
    ),
    ("cpu/relations-", "summary of figlang relations (per-relation accuracies), which writes no per-item file"),
    ("cpu/simulatability-", "summary of figlang simulatability (two classifiers' accuracies, McNemar b/c), which writes no per-item file"),
    ("cpu/probe-layer-pilot-qwen/", "a cross-validated layer pilot: its table of CV accuracies is the result; no per-item predictions"),
    (
        "meaning/selection/",
        "the selection grid keeps its per-item log-probabilities per block (meaning/selection/*.json.gz), from which every cell is computed",
    ),
    ("meaning/bench/", "a cost benchmark (CPU seconds and tokens run): no per-item predictions exist"),
    ("meaning/dev-disjoint/", "by-expression CIs of the run beside it (same predictions: its folder without -byexpr)"),
    ("bench/llama_build", "a speed benchmark of two llama.cpp builds (tokens/s, logits on random tokens): no items, no predictions"),
    (
        "bench/cpu_forward_",
        "a speed benchmark of forward passes (tokens/s, top-token agreement on random tokens): no items, no predictions",
    ),
    ("bench/", "a benchmark's summary: its per-item predictions are inside the file (modes.*.predictions)"),
    ("serve/", "page-load timings of figlang serve: no per-item predictions exist"),
    ("suite/suite.json", "the suite's timing line (wall and CPU seconds, load): no per-item predictions exist"),
    ("tests/", "the test suite's wall time per make target (benchmarks/bench_test_suite.py): no per-item predictions exist"),
    (
        "explain/flute-iro-writer-gpu/",
        "training recipes compared by their dev loss on `selection` (train_log.jsonl per recipe); no predictions are made",
    ),
    ("zs/", "zero-shot run whose predictions stayed in runs/ (git-ignored) when it was made; to be re-made with the documented command"),
]


# the per-item predictions a summary's figures recompute from, where they are not in its own run folder (#35): a
# comparison names its two runs (checked: their accuracies and n are the comparison's a and b)
PREDICTIONS = {
    "cpu/impli-fold0-all-lw-thr-check/cpu-vs-h200.json": [
        "cpu/impli-fold0-all-lw-thr-check/test-fold/predictions.jsonl.gz",
        "cpu/impli-fold0-all-lw-thr-check/h200-fold0-test/predictions.jsonl.gz",
    ],
}
# the backend comparison (#39 target 3): the three runs it compares, each with its predictions and explanations.json
# the idiom probe's training record: its selection accuracy is the shipped head's, scored again on selection as the
# ensemble's member (same kept checkpoint, 224 of 281); the prompt-lookup replay reads the answers of the run it names
PREDICTIONS["cpu/idiom-probe-qwen-sel/figlang.json"] = ["ensemble/idiom-sel-probe/predictions.jsonl.gz"]
PREDICTIONS["cpu/idiom-probe-meaning-qwen-sel/figlang.json"] = ["ensemble/idiom-sel-probe-meaning/predictions.jsonl.gz"]
# the simile meaning probe was trained after the trainer kept its answers on the choosing split (choice/selection/)
PREDICTIONS["cpu/simile-probe-meaning-qwen-sel/figlang.json"] = ["cpu/simile-probe-meaning-qwen-sel/choice/selection/predictions.jsonl.gz"]
for _fig in ("idiom", "simile"):
    for _kind in ("item", "expression"):  # the meaning probe against the shipped probe, both on dev-disjoint
        PREDICTIONS[f"cpu/{_fig}-probe-meaning-qwen-sel/vs-probe-{_kind}.json"] = [
            f"cpu/{_fig}-probe-meaning-qwen-sel/eval/dev-disjoint/predictions.jsonl.gz",
            f"cpu/{_fig}-probe-qwen-sel/eval/dev-disjoint/predictions.jsonl.gz",
        ]
PREDICTIONS["explain/prompt-lookup-passes-selection.json"] = ["explain/selection-sweep/config-1/predictions.jsonl.gz"]
PREDICTIONS["explain/backends-selection40/agreement.json"] = [
    f"explain/backends-selection40/{run}/predictions.jsonl.gz" for run in ("bfloat16", "float32", "llamacpp")
]
for kind in ("context", "literal"):
    for sp in ("dev", "dev-disjoint"):
        PREDICTIONS[f"cpu/compare-idiom-mc-{kind}-vs-mc-sel-{sp}.json"] = [
            f"cpu/idiom-mc-{kind}-minilm-sel/eval/{sp}/predictions.jsonl.gz",
            f"cpu/idiom-mc-minilm-sel/eval/{sp}/predictions.jsonl.gz",
        ]


# A summary over runs of its own folder names, row by row, the run each figure comes from (#35): a sweep's row
# (results.N) the config-N/ run it records (every number of its sweep_entry.json is the row's; the row adds the
# split-weighted mix and the example counts); the
# FLUTE zero-shot grid's row the selection-*/ run it names (its accuracies recompute from the run's predictions, the
# uncalibrated rows from the scores plus the recorded content-free offset), a spread both rows it spans, the val
# figure the val run; the trivial-explanation baselines' row its folder (the system row: the val run it names, its
# system_run); the writer's MBR subsets both runs it reads (its run and its `with`). tests/test_results_registry.py
# checks each against the run named.
def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node


def _sweep_run(file, i):
    """The config-N/ run (or its retime-config-N/ re-run) whose sweep_entry.json agrees with the sweep's row i."""
    folder, row = os.path.dirname(file), json.load(open(R + file))["results"][i]
    for run in (row["run"], "retime-" + row["run"]):
        entry_file = f"{R}{folder}/{run}/sweep_entry.json"
        if os.path.exists(entry_file) and dict(_leaves(json.load(open(entry_file)))).items() <= dict(_leaves(row)).items():
            return f"{folder}/{run}/predictions.jsonl.gz"
    sys.exit(f"{file} results.{i}: no run of its folder records the row ({row['run']})")


def _grid_runs(key):
    """The runs of the FLUTE zero-shot grid behind a figure's key (rows.N…, spread.AXIS…, val_not_used_for_choosing…)."""
    fz = json.load(open(R + FZ))
    folder = os.path.dirname(FZ)

    def local(row):
        return f"{folder}/{os.path.basename(row['run'])}/predictions.jsonl.gz"

    parts = key.split(".")
    if parts[0] == "rows":
        return [local(fz["rows"][int(parts[1])])]
    if parts[0] == "val_not_used_for_choosing":  # the val run, scored once: the configuration chosen on selection
        return [f"zs/flute-val-{fz['chosen']}-qwen/predictions.jsonl.gz"]
    if parts[:2] == ["spread", "grid"]:
        rows = fz["rows"]
    else:
        fixed = fz["spread"][parts[1]]["ranges"][int(parts[3])]["fixed"]
        rows = [r for r in fz["rows"] if all(r["config"][a] == v for a, v in fixed.items())]
    return sorted({local(r) for r in rows})


def _named_runs(g):
    file, keys = g["file"], [f[2] for f in g["figures"]]
    if re.fullmatch(r"explain/selection-sweep[\w-]*/sweep(-retime)?\.json", file):
        rows = {k.split(".")[1] for k in keys}
        if len(rows) != 1 or not all(k.startswith("results.") for k in keys):
            sys.exit(f"{file}: a group of figures from more than one row ({sorted(rows)})")
        return [_sweep_run(file, int(rows.pop()))]
    if file == FZ:
        return sorted({p for k in keys for p in _grid_runs(k)})
    if file == "explain/baselines-val/summary.json":
        rows = {k.split(".")[1] for k in keys}
        if len(rows) != 1:
            sys.exit(f"{file}: a group of figures from more than one row ({sorted(rows)})")
        row = rows.pop()
        system = json.load(open(R + file))["system_run"]  # runs/explain-val-compact: committed as explain/flute-val-compact
        run = "explain/flute-val-" + system.split("explain-val-")[1] if row == "system" else f"explain/baselines-val/{row}"
        return [f"{run}/predictions.jsonl.gz"]
    if file == "explain/selection-sweep-mbr/mbr_subsets.json":
        d = json.load(open(R + file))
        # run: runs/explain-sweep5/config-0, committed as the MBR sweep's config-0; with: the prompted run
        assert d["run"].endswith("/config-0") and d["with"].startswith("docs/results/")
        return ["explain/selection-sweep-mbr/config-0/predictions.jsonl.gz", d["with"][len("docs/results/") :] + "/predictions.jsonl.gz"]
    if file == QM:  # recomputed from the mbr=8 run's candidates (its greedy lines are the base run's)
        return ["explain/selection-sweep-qwen-mbr/config-1/predictions.jsonl.gz"]
    return PREDICTIONS.get(file, [])


for g in groups:
    g["predictions"] = _named_runs(g)


def no_predictions(g):
    """Why the group's own run keeps no predictions (NO_PREDICTIONS), or None where it does (the registry's rule)."""
    from figlang.evaluation.registry import Figure, has_predictions

    if has_predictions(Figure("", "", "", g["file"], (), predictions=tuple(g["predictions"])), R):
        return None
    return next((why for prefix, why in NO_PREDICTIONS if g["file"].startswith(prefix)), None)


def dump(g):
    lines = [f"- doc: {g['doc']}"]
    for k in ("table", "row"):
        if g.get(k):
            lines.append(f"  {k}: {json.dumps(g[k])}")
    lines.append(f"  file: {g['file']}")
    if g.get("at"):
        lines.append("  at:")
        lines += [f"    {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in g["at"].items()]
    if g["predictions"]:
        lines.append(f"  predictions: {json.dumps(g['predictions'])}")
    why = no_predictions(g)
    if why:
        lines.append(f"  no-predictions: {json.dumps(why)}")
    lines.append("  figures:")
    for f in g["figures"]:
        lines.append("    - " + json.dumps(f))
    return "\n".join(lines)


def _quoting_page(g):
    """README.md's sections moved to the documentation site (#38): the page that now quotes a group written above as
    README's: README itself while it prints the group, else the page with the group's results-table mark (a table)
    or the first page that prints every figure of it (prose), explanation and how-to pages before research notes."""
    pages = {"README.md": open("README.md", encoding="utf-8").read()}
    for path in sorted(glob.glob("docs/**/*.md", recursive=True)):
        if not path.startswith(("docs/results/", "docs/figures/")):
            pages[path] = open(path, encoding="utf-8").read()
    if g["table"]:
        mark = re.compile(r"<!--\s*results-table:\s*" + re.escape(g["table"]) + r"[\s>]")
        hits = [d for d, text in pages.items() if mark.search(text)]
    else:
        hits = [d for d, text in pages.items() if all(re.search(rf"(?<![\w.]){re.escape(f[1])}(?![\w]|\.\d)", text) for f in g["figures"])]
    if "README.md" in hits or not hits:
        return "README.md"
    first = [h for h in hits if "/research/" not in h or h.endswith(("index.md", "paper_outputs.md"))]
    return (first or hits)[0]


for g in groups:
    if g["doc"] == "README.md":
        g["doc"] = _quoting_page(g)

# A prose figure's place (#35): the words around it on its page, so a changed digit or sign, or the figure moved to
# another sentence, fails the registry test. Where the page prints the figure's text more than once, PLACES names the
# one it quotes (a text around it, as the page prints it, whitespace collapsed): (page, figure id) -> text.
PLACES = {
    ("docs/research/flute_explanations.md", "amx_val_minutes_at_this_rate"): "which is 38.5 minutes",
    ("docs/research/flute_explanations.md", "amx_one_new_pair_seconds"): "first of the process, took 5.17",
    ("docs/research/flute_explanations.md", "amx_prefill_share_of_peak"): "prefill runs at 0.57",
    ("docs/research/flute_explanations.md", "amx_passes_per_pair"): "answer needs 15.51 passes",
    ("docs/research/trained_models.md", "flute-lora-selection-n"): "answers 603 of 698 pairs",
    ("docs/research/trained_models.md", "flute-lora-selection"): "pairs right, **86.39%**",
    ("README.md", "make-test-fast-seconds"): "1,055 in 69.0 seconds",
    ("docs/how-to/web.md", "startup_cpu_s"): "1.6 to 1.75 s of CPU",
    ("docs/how-to/web.md", "restart_startup_cpu_s"): "Startup needed 1.6 to",
    ("docs/how-to/web.md", "restart_startup_s"): "took 4.4 to 6.9 s",
    ("docs/how-to/web.md", "startup_s"): "to 6.9 s of wall time",
    ("docs/how-to/web.md", "load_average_at_start"): "(load average 12.9",
    ("docs/how-to/web.md", "big_run_predictions_mb"): "predictions.jsonl 13.6 MB",
    ("docs/how-to/web.md", "worst_start_s"): "**0.75–0.91 s**",
    ("docs/how-to/web.md", "fastest_start_s"): "**0.75–0.91 s**",
    ("docs/how-to/web.md", "fastest_run_page_s"): "0.27–0.32 s for the run page",
    ("docs/how-to/web.md", "slowest_run_page_s"): "0.27–0.32 s for the run page",
    ("docs/how-to/web.md", "fastest_page_500_s"): "0.02–0.03 s for its page 500",
    ("docs/how-to/web.md", "slowest_page_500_s"): "0.02–0.03 s for its page 500",
    ("docs/how-to/web.md", "fastest_page"): "(0.08 to 0.79 s)",
    ("docs/how-to/web.md", "slowest_page"): "0.79 s), and every",
    ("README.md", "load_average_end_0"): "at the end: 2.14",
    ("docs/research/index.md", "probe-idiom-dev-disjoint"): "`selection`: 80.2% / 78.4%",
    ("docs/research/index.md", "probe-simile-dev-disjoint"): "78.4% (official dev 73.8%",
    ("docs/research/index.md", "meaning-probe-idiom-dev-disjoint"): "(`mc-meaning`, #39): 83.1%",
    ("docs/research/index.md", "meaning-ensemble-idiom-dev-disjoint"): "86.0% in an ensemble with few-shot",
    ("docs/research/index.md", "meaning-probe-simile-dev-disjoint"): "property (`mc-meaning`): 84.8%",
    ("docs/research/index.md", "meaning-ensemble-simile-dev-disjoint"): "85.2% in its ensemble with few-shot",
    ("docs/explanation/speed.md", "identical"): "against lm-eval: **355/355",
    ("docs/explanation/speed.md", "items"): "/355 identical predictions**",
    ("docs/explanation/speed.md", "fast_identical"): "**353/355",
    ("docs/explanation/speed.md", "fast_items"): "/355 predictions identical",
    ("docs/explanation/speed.md", "qwen_llama_cpp_identical"): "with 100/100 identical predictions",
    ("docs/explanation/speed.md", "qwen_llama_cpp_items"): "/100 identical predictions",
    ("docs/explanation/speed.md", "qwen_fast_identical"): "float32 (100/100 identical)",
    ("docs/explanation/speed.md", "qwen_fast_items"): "/100 identical),",
    ("docs/explanation/speed.md", "whole_identical"): "items/s, 355/355 identical, 0.98×",
    ("docs/explanation/speed.md", "whole_items"): "/355 identical, 0.98×",
    ("docs/research/human_eval_table5.md", "simile-comparative-baseline-2dp"): "items: 18.67, 16.0",
    ("docs/research/flute_creator.md", "edited-contradiction-premises"): "(4 of them contradiction",
    ("docs/research/flute_creator.md", "edited-explanations"): "8 explanations, 1 hypothesis",
    ("docs/research/flute_creator.md", "edited-hypotheses"): "1 hypothesis (a missing",
    ("docs/research/impli_generator.md", "lexicon-idioms"): "giving 1,279 idioms",
    ("docs/research/impli_generator.md", "items"): "the items are the 15,685 distinct",
    ("docs/research/impli_generator.md", "idiom-not-found"): "was not found (7 items)",
    ("docs/research/impli_generator.md", "filtered-unfilled-slot"): "2 `unfilled_slot`",
    ("docs/research/impli_generator.md", "no-capitalise-semeval-pct"): "semeval 96.8%, **overall",
    ("docs/research/impli_generator.md", "no-capitalise-overall-pct"): "**overall 90.0%** (14,119",
    ("docs/research/impli_generator.md", "no-capitalise-items"): "(14,119 / 15,685)",
    ("docs/research/flute_explanations.md", "retimed_k_seconds_per_pair"): "it took 4.71 s a pair with the same",
    ("docs/research/flute_explanations.md", "writer_train_items"): "and `train-fit` 6,337. The sha256",
    ("docs/research/flute_explanations.md", "writer_steps"): "1 epoch (793 steps of 8)",
    ("docs/research/flute_explanations.md", "writer_dev_loss"): "**1.391** (793, kept)",
    ("docs/research/flute_explanations.md", "val_seconds_per_pair"): "AMX CPU, 4.82 s a pair",
    ("docs/research/index.md", "impli-folds-pooled"): "with minilm: 80.6% pooled",
    ("docs/research/trained_models.md", "impli-floor-pair-ci-nonent-low"): "they are [73.31, 75.27]",
    ("docs/research/trained_models.md", "fold0-n"): "on 220 of its 2,612 test pairs",
    ("docs/research/trained_models.md", "fold0-only-cpu"): "only the CPU right on 109",
    ("docs/research/trained_models.md", "pilot-selection-best-layer"): "ranks **layer 18** first",
    ("docs/research/trained_models.md", "pilot-selection-layer14"): "and layer 14 at 71.2%",
    ("docs/research/zero_shot_results.md", "grid_range"): "the grid spans 4 points",
    ("docs/research/zero_shot_results.md", "chosen_selection_ci_low"): "the chosen row's is [58, 76]",
}


def _anchor(g, fig, flat):
    doc, fid, text = g["doc"], fig[0], fig[1]
    starts = [s for s in pf.tokens(flat.text, text)]
    hint = PLACES.get((doc, fid))
    if hint is not None:
        at = flat.text.find(hint)
        if at < 0 or flat.text.count(hint) != 1:
            sys.exit(f"{doc} {fid}: PLACES text {hint!r} occurs {flat.text.count(hint)} times in the page (once expected)")
        starts = [at + s for s in pf.tokens(hint, text)][:1]
    if len(starts) != 1:
        around = [flat.text[max(0, s - 40) : s + 30] for s in starts]
        sys.exit(f"{doc} {fid}: {text} is printed {len(starts)} times; name its place in PLACES: {around}")
    return pf.anchor_context(flat, starts[0], starts[0] + len(text))


sys.path.insert(0, "src")
from figlang.evaluation import prose_figures as pf  # noqa: E402

for g in groups:
    if g["table"] is None:
        flat = pf.flatten(open(g["doc"], encoding="utf-8").read())
        g["at"] = {f[0]: _anchor(g, f, flat) for f in g["figures"]}

open(R + "INDEX.yaml", "w").write(head + "\n".join(dump(g) for g in groups) + "\n")
