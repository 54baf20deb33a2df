"""Pilot: does the substitution test tell literal from figurative uses on everyday text? On the development set only.

    OMP_NUM_THREADS=2 python benchmarks/use_substitution_pilot.py --model smollm2-135m --out docs/results/interpret

For every idiom hit ``figlang interpret`` (a fresh install, no data folder) finds in the everyday DEVELOPMENT set
(``benchmarks/everyday_idioms/dev-sentences.tsv``) that is a figurative sentence's gold idiom or any hit on a literal
sentence, a causal LM scores the sentence as written and interpret's paraphrase (the idiom replaced by its meaning):
``delta`` is the paraphrase's mean log-probability per token minus the sentence's. A literal use's paraphrase should
read worse ("The boxer spent an hour going to bed in the gym") than a figurative one's. Reported: the area under the
ROC curve of the use model's P(figurative), of ``delta``, and of their sum in standard units (no weight is fitted: a
pilot, to decide whether the test is worth building). The test set is not read.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_everyday_idioms import lexicon_hits, read_set  # noqa: E402
from bench_interpret import _write, same_idiom  # noqa: E402
from everyday_dev import DEV  # noqa: E402

from figlang.interpret.api import Interpreter  # noqa: E402


def auc(scores: list[float], gold: list[bool]) -> float:
    """The probability that a random figurative use scores above a random literal one (ties count half)."""
    from scipy.stats import mannwhitneyu

    pos = [s for s, g in zip(scores, gold) if g]
    neg = [s for s, g in zip(scores, gold) if not g]
    return round(100 * float(mannwhitneyu(pos, neg).statistic) / (len(pos) * len(neg)), 2)  # U / (n1 n0) is the AUC


def mean_logprob(model, tokenizer, texts: list[str]) -> list[float]:
    import torch

    out = []
    with torch.no_grad():
        for t in texts:
            ids = tokenizer(t, return_tensors="pt").input_ids
            logits = model(ids).logits[0, :-1]
            lp = torch.log_softmax(logits.float(), -1).gather(1, ids[0, 1:, None])[:, 0]
            out.append(float(lp.mean()))
    return out


def _standard(xs: list[float]) -> list[float]:
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs)) or 1.0
    return [(x - m) / sd for x in xs]


def _alone(engine: Interpreter) -> Interpreter:
    """``engine`` labelling with the use model alone, as the pilots were published (before the sixth session's
    literal-cohesion stack joined the default labeller)."""
    from figlang.interpret.use_label import UseLabeller

    engine.use_labeller = UseLabeller(stack=False)
    return engine


def dev_use_hits(engine: Interpreter, paraphrase: bool) -> list[tuple]:
    """(expression, sentence kind, figurative?) of every idiom hit in the development set that is a figurative
    sentence's gold idiom or stands on a literal sentence, with a use label: the hits a use test is judged on."""
    out = []
    for row in read_set(DEV):
        if row["kind"] == "none":
            continue
        for e in lexicon_hits(engine.interpret(row["sentence"], paraphrase=paraphrase).expressions):
            gold = row["kind"] == "idiom" and same_idiom(e.canonical, row["idiom"])
            if (gold or row["kind"] == "literal") and e.p_figurative is not None:
                out.append((e, row["kind"], gold))
    return out


def auc_report(items: list[dict], key: str, name: str) -> dict:
    """The hits' counts and the AUCs of the use model's logit, of ``items[*][key]`` (as ``name``) and of their sum in
    standard units (nothing fitted)."""
    gold = [it["figurative"] for it in items]
    use = [math.log(max(it["p_figurative"], 1e-6) / max(1 - it["p_figurative"], 1e-6)) for it in items]
    other = [it[key] for it in items]
    both = [a + b for a, b in zip(_standard(use), _standard(other))]
    return {
        "hits": len(items),
        "figurative": sum(gold),
        "literal": len(gold) - sum(gold),
        "auc_pct": {"use_model": auc(use, gold), name: auc(other, gold), "sum_in_standard_units": auc(both, gold)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m", help="a catalog causal LM")
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    args = ap.parse_args()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from figlang.backends.loading import resolve

    os.environ.pop("FIGLANG_DATA_DIR", None)
    items = [
        {
            "idiom": e.canonical,
            "kind": kind,
            "figurative": gold,
            "sentence": e.sentence,
            "paraphrase": e.paraphrase,
            "p_figurative": e.p_figurative,
        }
        for e, kind, gold in dev_use_hits(_alone(Interpreter(None)), paraphrase=True)
        if e.paraphrase
    ]
    path = resolve(args.model).path
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path)
    written = mean_logprob(model, tokenizer, [it["sentence"] for it in items])
    para = mean_logprob(model, tokenizer, [it["paraphrase"] for it in items])
    for it, a, b in zip(items, written, para):
        it["delta"] = round(b - a, 4)
    report = {"set": str(DEV.relative_to(DEV.parents[2])), "model": args.model, **auc_report(items, "delta", "substitution_delta")}
    print(report)
    _write(args.out, f"use-substitution-pilot-{args.model}", report, items)


if __name__ == "__main__":
    main()
