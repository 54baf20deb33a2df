"""Which layer of a frozen decoder to probe: the pilot behind ``--base-layers 14`` for qwen2.5-1.5b.

Encodes every item of one split as the multiple-choice scorer does (``<eos> N <eos> C_i <eos>``,
last real token), keeps the states of several layers, and reports 5-fold cross-validated
accuracy of an L2 logistic regression on option1 − option2 per layer and C. The folds are not
expression-disjoint, and the split is small, so this ranks layers; it does not estimate accuracy
(the trained probe's figures in docs/research/trained_models.md do that).

    python benchmarks/probe_layer_pilot.py --model qwen2.5-1.5b --task idiom-cloze --split selection \
        --data-dir ../shared/data --threads 2

Needs scikit-learn (not a figlang dependency): ``pip install scikit-learn``. About 10 minutes for
idiom dev-disjoint (278 items) with qwen2.5-1.5b in bfloat16 on 2 cores.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--task", default="idiom-cloze")
    ap.add_argument("--split", default="selection", help="choose the layer on selection, never on a split you report")
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        default="float32",
        help="bfloat16 only pays on CPUs with AVX512-BF16/AMX; on AVX2 it is emulated and slower",
    )
    ap.add_argument("--out", help="write the table as JSON (with provenance) to this file")
    args = ap.parse_args()
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import StratifiedKFold
    except ImportError as err:
        raise SystemExit(f"this pilot needs scikit-learn ({err}): pip install scikit-learn") from err
    from transformers import AutoModel, AutoTokenizer

    from figlang.data.registry import get_task
    from figlang.backends.loading import resolve
    from figlang.methods.trained.multiple_choice import ChoiceScorer, ChoiceScorerModel

    torch.set_num_threads(args.threads)
    path = resolve(args.model).path
    encoder = AutoModel.from_pretrained(path, dtype=getattr(torch, args.dtype)).eval()
    model = ChoiceScorerModel(ChoiceScorer(encoder, 0.1), AutoTokenizer.from_pretrained(path), "mc", max_length=160)
    feats = model.features(get_task(args.task).load(args.split, args.data_dir))
    n_layers = encoder.config.num_hidden_layers
    layers = sorted({n_layers // 2, (2 * n_layers) // 3, (3 * n_layers) // 4, (5 * n_layers) // 6, n_layers})
    X = np.zeros((len(feats), 2, len(layers), encoder.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(feats)), key=lambda i: feats[i]["length"])
    with torch.no_grad():
        for start in range(0, len(order), args.batch_size):
            idx = order[start : start + args.batch_size]
            batch = model.collate([feats[i] for i in idx])
            out = encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], output_hidden_states=True)
            last = batch["attention_mask"].sum(-1) - 1
            rows = torch.arange(len(last))
            states = torch.stack([out.hidden_states[layer][rows, last] for layer in layers], 1).float().numpy()
            for j, i in enumerate(idx):
                X[i] = states[2 * j : 2 * j + 2]
    y = np.array([f["label"] for f in feats])
    print(f"{args.model} {args.task}/{args.split}: {len(feats)} items, 5-fold CV accuracy of a probe on option1 − option2")
    table = []
    for li, layer in enumerate(layers):
        diff = X[:, 0, li] - X[:, 1, li]
        for C in (0.01, 0.1, 1.0):
            accs = []
            for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(diff, y):
                xt = np.concatenate([diff[tr], -diff[tr]])  # both option orders
                yt = np.concatenate([y[tr] == 0, y[tr] != 0])
                sd = xt.std(0) + 1e-6
                clf = LogisticRegression(C=C, max_iter=2000).fit(xt / sd, yt)
                accs.append(np.mean((clf.decision_function(diff[te] / sd) > 0) == (y[te] == 0)))
            print(f"layer {layer:3d}  C {C:<5}  {100 * np.mean(accs):.1f}")
            table.append({"layer": layer, "C": C, "cv_accuracy": round(100 * float(np.mean(accs)), 2)})
    if args.out:
        write_result(args, get_task(args.task).load(args.split, args.data_dir), table)


def write_result(args: argparse.Namespace, records: list, table: list[dict]) -> None:
    """The pilot's table as a result file: which layer wins on the split it ran on, and the provenance that says which."""
    from figlang.core.io import write_json
    from figlang.evaluation.provenance import provenance

    best = max(table, key=lambda row: row["cv_accuracy"])
    write_json(
        args.out,
        {
            "model": args.model,
            "task": args.task,
            "split": args.split,
            "n": len(records),
            "dtype": args.dtype,
            "protocol": "5-fold stratified CV (random_state 0) of an L2 logistic regression on option1 - option2 features, "
            "both option orders, features standardised; last real token of <eos> N <eos> C_i <eos>",
            "table": table,
            "best": best,
            "provenance": provenance({args.split: records}, {"layer": args.split}),
        },
    )


if __name__ == "__main__":
    main()
