"""Write docs/results/INDEX.yaml: README.md's results-table and prose figures, each tied to its result file.

    python scripts/results_index.py      # from the repository root, after a rerun or a new quoted figure

The printed texts are formatted from the files at the precision README prints them; the registry test
(tests/test_results_registry.py) then checks that README prints exactly these. Add a figure here (a
table row: group(...); prose: prose(...)) rather than editing INDEX.yaml by hand, so the two stay one.
"""

import glob
import json
import os
R = "docs/results/"
groups = []
acc = lambda: [["accuracy", None, "metrics.accuracy.accuracy", 100], ["ci_low", None, "metrics.accuracy.ci_low", 100],
               ["ci_high", None, "metrics.accuracy.ci_high", 100], ["n", None, "metrics.accuracy.n"]]
def fmt(v, places):  # places: decimals, or "," for an integer with thousands separators
    return f"{int(round(v)):,}" if places == "," else f"{v:.{places}f}" if places else str(int(round(v)))
def val(d, key):
    for k in key.split("."): d = d[k]
    return d
def group(doc, table, row, file, figs):
    d = json.load(open(R + file))
    out = []
    for fid, places, key, *rest in figs:
        v = val(d, key)
        if len(rest) > 1 and rest[1] == "majority":  # as figlang.evaluation.registry.DERIVATIONS
            c = [x["n"] for x in v["by_gold_label"].values()]; v = max(c) / sum(c)
        elif len(rest) > 1 and rest[1] in ("min_fold", "max_fold"):
            accs = [x["accuracy"]["accuracy"] if isinstance(x["accuracy"], dict) else x["accuracy"] for x in v.values()]
            v = min(accs) if rest[1] == "min_fold" else max(accs)
        v = v * (rest[0] if rest else 1)
        out.append([fid, fmt(v, places), key] + rest)
    groups.append({"doc": doc, "table": table, "row": row, "file": file, "figures": out})
# the narrative paper's committed outputs
for kind, name, stem in [("idiom", "RoBERTa-large (baseline)", "idiom_dev_predictions"), ("idiom", "+ context knowledge", "idiom_context_dev_predictions"),
                         ("idiom", "+ literal knowledge", "idiom_literal_dev_predictions"), ("simile", "RoBERTa-large (baseline)", "dev_predictions"),
                         ("simile", "+ context knowledge", "simile_context_dev_predictions"), ("simile", "+ literal knowledge", "simile_literal_dev_predictions")]:
    group("README.md", "paper-discriminative", f"| {kind} | {name} |", f"paper-outputs/{kind}-{stem}/results.json",
          [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100],
           ["ci_high", 1, "metrics.accuracy.ci_high", 100], ["n", 0, "metrics.accuracy.n"]])
for kind in ("idiom", "simile"):
    for path in sorted(glob.glob(f"../shared/data/fig_narrative/output/{kind}/generative/*dev*.jsonl")):
        stem = os.path.basename(path)[:-6]
        group("README.md", "paper-generation", f"| {kind} | {stem}.jsonl |", f"paper-outputs/{kind}-{stem}/results.json",
              [["items", 0, "metrics.generation.n_items"], ["empty", 0, "problems.empty_generations.count"],
               ["rougeL", 4, "metrics.generation.rougeL"], ["bleu", 4, "metrics.generation.bleu"], ["sacrebleu", 2, "metrics.generation.sacrebleu_sentence"]])
group("README.md", "baselines", "| flute / val |", "baselines/flute-val-majority/results.json",
      [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100], ["ci_high", 1, "metrics.accuracy.ci_high", 100]])
group("README.md", "baselines", "| idiom-cloze / dev |", "baselines/idiom-dev-longer-option/results.json",
      [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100], ["ci_high", 1, "metrics.accuracy.ci_high", 100]])
def suite(row, file, labels, types):
    figs = [["n", 0, "metrics.accuracy.n"], ["accuracy", 1, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100],
            ["ci_high", 1, "metrics.accuracy.ci_high", 100], ["majority", 1, "metrics", 100, "majority"]]
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
    suite("| impli-idioms-manual |", "zs/impli-manual-nli-score-smollm2/results.json", ["entailment", "non-entailment"],
          [("by_pair_type", "manual"), ("by_pair_type", "manual_antonym")])
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/idiom-dev/results.json"):
    suite("| idiom-cloze |", "suite-smollm2/idiom-dev/results.json", ["option1", "option2"], [])
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/simile-dev/results.json"):
    suite("| simile-cloze |", "suite-smollm2/simile-dev/results.json", ["option1", "option2"], [])
if not os.path.exists(R + "suite/suite.json") and os.path.exists(R + "suite-smollm2/flute-val/results.json"):
    suite("| flute |", "suite-smollm2/flute-val/results.json", ["contradiction", "entailment"],
          [("by_figure_type", t) for t in ("idiom", "metaphor", "sarcasm", "simile")])
# docs/zero_shot_results.md, the zero-/few-shot cloze table: the cells with a result file
ZS = "docs/zero_shot_results.md"
CELL = [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100],
        ["ci_high", 1, "metrics.accuracy.ci_high", 100]]
for row, files in {
    "| smollm2-135m | lm-score pmi |": ["suite-smollm2/idiom-dev", "suite-smollm2/simile-dev"],
    "| smollm2-135m | few-shot |": ["zs/idiom-devdisjoint-fewshot-smollm2", "zs/simile-devdisjoint-fewshot-smollm2"],
    "| gemma3-270m | pet |": ["zs/idiom-devdisjoint-pet-gemma", "zs/simile-devdisjoint-pet-gemma"],
    "| gemma3-270m | qa |": ["zs/idiom-devdisjoint-qa-gemma", "zs/simile-devdisjoint-qa-gemma"],
    "| gemma3-270m | few-shot |": ["zs/idiom-dev-fewshot-gemma-llamacpp", "zs/simile-dev-fewshot-gemma-llamacpp",
                                   "zs/idiom-devdisjoint-fewshot-gemma-llamacpp", "zs/simile-devdisjoint-fewshot-gemma-llamacpp"],
    "| qwen2.5-1.5b (bf16) | pet |": ["zs/simile-dev-pet-qwen-llamacpp", "zs/idiom-devdisjoint-pet-qwen-llamacpp",
                                      "zs/simile-devdisjoint-pet-qwen-llamacpp"],
    "| qwen2.5-1.5b (bf16) | qa |": ["zs/idiom-devdisjoint-qa-qwen-llamacpp", "zs/simile-devdisjoint-qa-qwen-llamacpp"],
    "| qwen2.5-1.5b (bf16) | few-shot |": ["zs/idiom-dev-fewshot-qwen-llamacpp", "zs/simile-dev-fewshot-qwen-llamacpp",
                                           "zs/idiom-devdisjoint-fewshot-qwen-llamacpp", "zs/simile-devdisjoint-fewshot-qwen-llamacpp"],
}.items():
    for f in files:
        group(ZS, "zs-cloze", row, f + "/results.json", CELL)
# docs/zero_shot_results.md, the NLI table: the cells with a result file
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
# docs/trained_models.md: the qwen probe table and the GPU qwen `mc` table (configuration, figures, time)
TM = "docs/trained_models.md"
def scores(table, row, run, options):
    dd = [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 2, "metrics.accuracy.ci_low", 100],
          ["ci_high", 2, "metrics.accuracy.ci_high", 100], ["n", 0, "metrics.accuracy.n"]]
    group(TM, table, row, f"{run}/eval/dev-disjoint/results.json",
          dd + [[o, 2, f"metrics.by_gold_label.{o}.accuracy", 100] for o in options])
    group(TM, table, row, f"{run}/eval/dev/results.json", dd)
for row, run, per_epoch in [("| idiom, `mc` probe |", "cpu/idiom-probe-qwen-l14", 153), ("| simile, `mc` probe |", "cpu/simile-probe-qwen-l14", 148)]:
    group(TM, "qwen-probe", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"], ["best_epoch", 0, "best.epoch"]])
    group(TM, "qwen-probe", row, f"{run}/train_result.json", [["epochs_run", 0, "steps", 1 / per_epoch]])
    scores("qwen-probe", row, run, ["option1", "option2"])
    group(TM, "qwen-probe", row, f"{run}/train_result.json", [["minutes", 0, "seconds", 1 / 60]])
row, run = "| idiom `mc`, qwen2.5-1.5b |", "gpu-qwen/idiom-mc-qwen"
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["steps", 0, "steps"]])
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["batch", 0, "training.batch_size"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["epochs_run", 0, "steps", 1 / 153]])
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["epochs", 0, "training.epochs"], ["max_minutes", 1, "training.max_minutes"],
                                                   ["best_epoch", 0, "best.epoch"]])
scores("qwen-gpu", row, run, ["option1", "option2"])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["seconds", 0, "seconds"]])
row, run = "| simile `mc`, qwen2.5-1.5b |", "gpu-qwen/simile-mc-qwen"
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["train_items", ",", "data.train_items"]])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["steps", 0, "steps"]])
group(TM, "qwen-gpu", row, f"{run}/figlang.json", [["batch", 0, "training.batch_size"], ["epochs", 0, "training.epochs"]])
scores("qwen-gpu", row, run, ["option1", "option2"])
group(TM, "qwen-gpu", row, f"{run}/train_result.json", [["seconds", 0, "seconds"]])
# docs/trained_models.md: the FLUTE NLI classifiers
for row, run in [("| **mpnet** (all-mpnet-base-v2)", "cpu/flute-nli-mpnet"), ("| minilm (all-MiniLM-L6-v2)", "cpu/flute-nli-minilm")]:
    group(TM, "flute-nli", row, f"{run}/figlang.json", [["best_epoch", 0, "best.epoch"]])
    group(TM, "flute-nli", row, f"{run}/eval/carved-dev/results.json", [["carved_dev", 2, "metrics.accuracy.accuracy", 100]])
    group(TM, "flute-nli", row, f"{run}/eval/val/results.json",
          [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 2, "metrics.accuracy.ci_low", 100], ["ci_high", 2, "metrics.accuracy.ci_high", 100]]
          + [[lab, 2, f"metrics.by_gold_label.{lab}.accuracy", 100] for lab in ("contradiction", "entailment")]
          + [[ft, 2, f"metrics.by_figure_type.{ft}.accuracy", 100] for ft in ("sarcasm", "simile", "metaphor", "idiom")])
# docs/trained_models.md: IMPLI's 10 folds pooled, leaky vs linked folds
FOLDS = ["cpu/impli-folds10-minilm", "gpu-minilm/impli-folds10-linked", "gpu-minilm/impli-folds10-linked-all"]
POOLED = ["cpu/impli-folds10-minilm/results.json", "gpu-minilm/impli-folds10-linked/pooled/results.json",
          "gpu-minilm/impli-folds10-linked-all/pooled/results.json"]
for k, pooled in enumerate(POOLED):
    group(TM, "impli-folds", "| **all** |", pooled, [["accuracy", 2, "metrics.accuracy.accuracy", 100], ["ci_low", 1, "metrics.accuracy.ci_low", 100],
                                                   ["ci_high", 1, "metrics.accuracy.ci_high", 100]])
    if k:
        group(TM, "impli-folds", "| **all** |", FOLDS[k] + "/folds_summary.json",
              [["worst_fold", 1, "per_fold", 100, "min_fold"], ["best_fold", 1, "per_fold", 100, "max_fold"]])
for row, label in [("| **entailment** (", "entailment"), ("| **non-entailment** (", "non-entailment")]:
    group(TM, "impli-folds", row, POOLED[0], [["n", ",", f"metrics.by_gold_label.{label}.n"]])
    for pooled in POOLED:
        group(TM, "impli-folds", row, pooled, [[label, 2, f"metrics.by_gold_label.{label}.accuracy", 100]])
for row, pair in [("| fig_context (", "fig_context"), ("| metaphor_replacement |", "metaphor_replacement"), ("| manual (gold", "manual"),
                  ("| adversarial_definition (", "adversarial_definition"), ("| lit_context (", "lit_context"), ("| manual_antonym (", "manual_antonym")]:
    for pooled in POOLED:
        group(TM, "impli-folds", row, pooled, [[pair, 2, f"metrics.by_pair_type.{pair}.accuracy", 100]])
# docs/trained_models.md: the pooled linked folds' 95% CIs, by pair, premise and idiom
CI = "gpu-minilm/impli-folds10-linked-ci/"
def ci(key):
    return [["ci_low", 2, f"{key}.ci_low", 100], ["ci_high", 2, f"{key}.ci_high", 100]]
group(TM, "impli-ci", "| by pair (the papers') |", CI + "item/results.json", ci("metrics.accuracy"))
group(TM, "impli-ci", "| by premise (", CI + "context/results.json", [["premises", ",", "metrics.accuracy.n_clusters"]] + ci("metrics.accuracy"))
group(TM, "impli-ci", "| **by idiom** (", CI + "expression/results.json", ci("metrics.accuracy"))
for row, key in [("| non-entailment by pair", "metrics.by_gold_label.non-entailment"), ("| lit_context by pair", "metrics.by_pair_type.lit_context")]:
    group(TM, "impli-ci", row, CI + "item/results.json", ci(key))
    group(TM, "impli-ci", row, CI + "expression/results.json", ci(key))
head = """# Every figure README.md and docs/ quote, tied to its result file (paths relative to docs/results).
# Written by scripts/results_index.py. Format and checks: src/figlang/evaluation/registry.py; test: tests/test_results_registry.py.
# A group: the quoting document, the results table and a text that picks its row (table figures), the file,
# and figures as [id, printed text, key path, scale, derivation]. A table figure is matched to the first
# equal, not yet matched number of its row, in this order.
# Regenerate the tables from the files: figlang report docs/results --readme-tables README.md
"""
# prose figures of README.md (no table): checked against their files; the document must print them
def prose(doc, file, figs):
    group(doc, None, None, file, figs)
A = "metrics.accuracy"
prose("README.md", "gpu-minilm/impli-folds10-linked-ci/item/results.json",
      [["pooled-accuracy", 2, f"{A}.accuracy", 100], ["ci-low-by-item", 2, f"{A}.ci_low", 100], ["ci-high-by-item", 2, f"{A}.ci_high", 100],
       ["nonent-ci-low-by-item", 2, "metrics.by_gold_label.non-entailment.ci_low", 100], ["nonent-ci-high-by-item", 2, "metrics.by_gold_label.non-entailment.ci_high", 100]])
prose("README.md", "gpu-minilm/impli-folds10-linked-ci/expression/results.json",
      [["ci-low-by-idiom", 2, f"{A}.ci_low", 100], ["ci-high-by-idiom", 2, f"{A}.ci_high", 100],
       ["nonent-ci-low-by-idiom", 2, "metrics.by_gold_label.non-entailment.ci_low", 100], ["nonent-ci-high-by-idiom", 2, "metrics.by_gold_label.non-entailment.ci_high", 100]])
prose("README.md", "gpu-qwen/idiom-mc-qwen/eval/dev-disjoint/results.json", [["gpu-qwen-mc-idiom", 1, f"{A}.accuracy", 100]])
prose("README.md", "gpu-qwen/simile-mc-qwen/eval/dev-disjoint/results.json", [["gpu-qwen-mc-simile", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/idiom-probe-qwen-l14/eval/dev-disjoint/results.json", [["probe-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/simile-probe-qwen-l14/eval/dev-disjoint/results.json", [["probe-simile-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/idiom-probe-qwen-l14/eval/dev/results.json", [["probe-idiom-dev", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/simile-probe-qwen-l14/eval/dev/results.json", [["probe-simile-dev", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/idiom-dev-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-idiom-dev", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/idiom-devdisjoint-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-idiom-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/simile-devdisjoint-fewshot-qwen-llamacpp/results.json", [["fewshot-qwen-simile-dev-disjoint", 1, f"{A}.accuracy", 100]])
prose("README.md", "zs/impli-manual-meaning-cf-qwen-llamacpp/results.json", [["impli-manual-meaning-cf-qwen", 1, f"{A}.accuracy", 100]])
prose("README.md", "cpu/flute-nli-mpnet/eval/val/results.json", [["flute-nli-mpnet-val", 1, f"{A}.accuracy", 100]])
prose("README.md", "gpu-minilm/impli-folds10-linked/pooled/results.json",
      [["impli-folds-pooled", 1, f"{A}.accuracy", 100], ["impli-folds-entailment", 1, "metrics.by_gold_label.entailment.accuracy", 100],
       ["impli-folds-non-entailment", 1, "metrics.by_gold_label.non-entailment.accuracy", 100]])
prose("README.md", "gpu-minilm/impli-folds10-linked-all/pooled/results.json",
      [["impli-folds-all-pooled", 1, f"{A}.accuracy", 100], ["impli-folds-all-non-entailment", 1, "metrics.by_gold_label.non-entailment.accuracy", 100]])
def dump(g):
    lines = [f"- doc: {g['doc']}"]
    for k in ("table", "row"):
        if g.get(k): lines.append(f"  {k}: {json.dumps(g[k])}")
    lines.append(f"  file: {g['file']}")
    lines.append("  figures:")
    for f in g["figures"]:
        lines.append("    - " + json.dumps(f))
    return "\n".join(lines)
open(R + "INDEX.yaml", "w").write(head + "\n".join(dump(g) for g in groups) + "\n")
