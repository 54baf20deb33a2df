"""How many forward passes prompt-lookup decoding needs for the explainer's greedy answers, by draft rule.

Replays committed greedy answers (no model run): for each answer, its prompt is rebuilt from the pair,
its label and the examples the run showed; the answer's tokens are then "decoded" by drafting from
prompt + answer so far (``prompt_lookup_draft`` with a given n-gram size and draft length), counting one
forward pass per draft checked and keeping the drafted tokens that equal the answer's next tokens (what
greedy verification keeps). Passes a token = the decoding steps prompt lookup leaves, against 1.0
token by token. The answer's tokens are its text re-tokenized (the generated ids are not stored).

The rule shipped in the Transformers backend (prompt_lookup=10, n-grams 3..1, the latest match) was
chosen here on FLUTE selection (the k=6 configuration of the explain sweep), never on val:

  PYTHONPATH=src python benchmarks/prompt_lookup_passes.py --data-dir ../shared/data \\
      --predictions docs/results/explain/selection-sweep/config-1/predictions.jsonl.gz \\
      --out docs/results/explain/prompt-lookup-passes-selection.json
"""

from __future__ import annotations

import argparse
import gzip
import json

from figlang.core.io import write_json
from figlang.data.registry import get_task
from figlang.backends.transformers_backend import prompt_lookup_draft
from figlang.methods.base import get_methods
from figlang.methods.prompted.explain import WORDS


def replay(cases: list[tuple[list[int], list[int]]], max_ngram: int, draft_tokens: int) -> dict[str, float]:
    passes = tokens = drafted = 0
    for prompt, answer in cases:
        seq, i = list(prompt), 0
        while i < len(answer):
            draft = prompt_lookup_draft(seq, draft_tokens, max_ngram)
            passes += 1
            drafted += len(draft)
            kept = 0
            while kept < len(draft) and i + kept < len(answer) and draft[kept] == answer[i + kept]:
                kept += 1
            seq += answer[i : i + kept + 1]
            i += kept + 1
        tokens += len(answer)
    return {
        "max_ngram": max_ngram,
        "draft_tokens": draft_tokens,
        "tokens": tokens,
        "forward_passes": passes,
        "passes_per_token": round(passes / tokens, 3),
        "drafted_per_pass": round(drafted / passes, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--predictions", required=True, help="an explain run's predictions.jsonl(.gz) (pipeline mode)")
    ap.add_argument("--split", default="selection")
    ap.add_argument("--pool", default="train-fit")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    task = get_task("flute")
    method = get_methods().create("explain", model=args.model, pool=args.pool)  # the prompt only: no weights are loaded
    method.task = task
    train = {r.id: r for r in task.load("train", args.data_dir)}
    items = {r.id: r for r in task.load(args.split, args.data_dir)}
    opener = gzip.open if args.predictions.endswith(".gz") else open
    with opener(args.predictions, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    cases = []
    for row in rows:
        if not row.get("valid") or row["id"] not in items:
            continue
        pair, word = items[row["id"]], WORDS[row["prediction"]] + "."
        prompt = method.prompt(pair, row["prediction"], [train[i] for i in row["meta"]["examples"]])
        answer = row["raw"][len(word) :]  # what the model wrote after the label word
        cases.append((method.lm._encode_prompt(prompt), method.lm.tokenizer(answer, add_special_tokens=False)["input_ids"]))
    rules = [replay(cases, n, d) for n in (1, 2, 3, 4) for d in (3, 5, 8, 10)]
    result = {
        "what": __doc__.split("\n")[0],
        "predictions": args.predictions,
        "split": args.split,
        "answers": len(cases),
        "mean_prompt_tokens": round(sum(len(p) for p, _ in cases) / len(cases), 1),
        "mean_answer_tokens": round(sum(len(a) for _, a in cases) / len(cases), 2),
        "rules": rules,
        "shipped": {"max_ngram": 3, "draft_tokens": 10},
    }
    print(json.dumps(result, indent=1))
    if args.out:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
