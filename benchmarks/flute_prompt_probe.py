"""Choose a zero-/few-shot FLUTE question on FLUTE *train* pairs, never on val.

The record of how ``nli-score -O question=meaning -O calibrate=content-free`` was chosen
(docs/research/zero_shot_results.md): each variant's label-word scores on a seeded sample of FLUTE
train (40% entailment, 60% contradiction, like val), reported as accuracy at margin 0,
with content-free calibration (premise = hypothesis = "N/A"), and the best threshold on
the sample itself (an oracle: how separable the margins are, not a method).

Variants (chat template of the model):
  zs       FLUTE's own instruction, "Entails" / "Contradicts"
  fs4 fs8  the same after 4 / 8 solved train pairs (label + gold explanation) as chat turns
  same     "Do the two sentences mean the same thing? Figurative language ... intended meaning." Yes / No
  mean     "Sentence 2 may use sarcasm, ... Does Sentence 2 say the same thing as Sentence 1?" Yes / No
           (this is figlang's question=meaning)
  fsame8 fmean8   same / mean after 8 solved train pairs

    python benchmarks/flute_prompt_probe.py zs,same,mean,fsame8,fmean8 --n 120 --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from types import SimpleNamespace

from figlang.data.flute import INSTRUCTION
from figlang.data.registry import get_task
from figlang.backends.base import ChatMessage, ScoreRequest
from figlang.methods.prompted import backend_for
from figlang.methods.prompted import prompts as P

SAME = (
    'Sentence 1: "{p}"\nSentence 2: "{h}"\nDo the two sentences mean the same thing? Figurative language '
    '(sarcasm, similes, metaphors, idioms) should be read for its intended meaning. Answer "Yes" or "No".'
)
MEAN = P.NLI_INSTRUCTIONS["meaning"].replace("{premise}", "{p}").replace("{hypothesis}", "{h}")
FLUTE_WORDS = {"entailment": "Entails", "contradiction": "Contradicts"}
YES_NO = {"entailment": "Yes", "contradiction": "No"}


def _accuracy_at(margins: list[float], gold: list[bool], threshold: float) -> float:
    """Accuracy (%) of calling entailment where the margin is above ``threshold``."""
    return round(100 * sum((m > threshold) == g for m, g in zip(margins, gold)) / len(gold), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", help="comma-separated: zs, fs4, fs8, same, mean, fsame8, fmean8")
    ap.add_argument("--n", type=int, default=120, help="train pairs to score")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-dir", default="../shared/data")
    args = ap.parse_args()

    lm = backend_for(args.model, dtype=args.dtype, threads=args.threads)
    train = get_task("flute").load("train", data_dir=args.data_dir)
    random.Random(0).shuffle(train)
    shots, seen = [], Counter()  # one per (label, figure type): 8 examples
    for r in train:
        if seen[(r.label, r.figure_type)] < 1 and len(shots) < 8:
            shots.append(r)
            seen[(r.label, r.figure_type)] += 1
    rest = [r for r in train if r.id not in {s.id for s in shots}]
    ent = [r for r in rest if r.label == "entailment"][: args.n * 4 // 10]
    items = ent + [r for r in rest if r.label == "contradiction"][: args.n - len(ent)]

    def chat(messages):
        return lm.chat_prompt([ChatMessage(role, text) for role, text in messages])

    def build(variant: str, r) -> tuple[str, dict[str, str]]:
        if variant == "zs":
            return chat([("user", INSTRUCTION.format(premise=r.premise, hypothesis=r.hypothesis))]), FLUTE_WORDS
        if variant in ("same", "mean"):
            question = SAME if variant == "same" else MEAN
            return chat([("user", question.format(p=r.premise, h=r.hypothesis))]), YES_NO
        if variant.startswith(("fsame", "fmean")):
            question, k = (SAME if variant.startswith("fsame") else MEAN), int(variant[5:])
            turns = []
            for s in shots[:k]:
                turns += [("user", question.format(p=s.premise, h=s.hypothesis)), ("assistant", YES_NO[s.label])]
            return chat([*turns, ("user", question.format(p=r.premise, h=r.hypothesis))]), YES_NO
        if variant.startswith("fs"):
            turns = []
            for s in shots[: int(variant[2:])]:
                turns += [
                    ("user", INSTRUCTION.format(premise=s.premise, hypothesis=s.hypothesis)),
                    ("assistant", FLUTE_WORDS[s.label] + ". " + (s.explanation or "")),
                ]
            return chat([*turns, ("user", INSTRUCTION.format(premise=r.premise, hypothesis=r.hypothesis))]), FLUTE_WORDS
        raise SystemExit(f"unknown variant {variant!r}")

    print("shots", [(s.label, s.figure_type) for s in shots], flush=True)
    for variant in args.variants.split(","):
        started = time.time()
        requests = []
        for r in items:
            prompt, words = build(variant, r)
            requests += [ScoreRequest(prompt, words["entailment"]), ScoreRequest(prompt, words["contradiction"])]
        free, words = build(variant, SimpleNamespace(premise="N/A", hypothesis="N/A", id="free"))
        requests += [ScoreRequest(free, words["entailment"]), ScoreRequest(free, words["contradiction"])]
        res = lm.score(requests)
        offset = res[-2].logprob - res[-1].logprob
        margins = [res[2 * i].logprob - res[2 * i + 1].logprob for i in range(len(items))]
        gold = [r.label == "entailment" for r in items]

        oracle = max((_accuracy_at(margins, gold, t), t) for t in [*margins, 0.0])
        print(
            json.dumps(
                {
                    "variant": variant,
                    "n": len(items),
                    "acc": _accuracy_at(margins, gold, 0.0),
                    "acc_content_free": _accuracy_at(margins, gold, offset),
                    "content_free_offset": round(offset, 2),
                    "entailment_recall": round(100 * sum(m > 0 for m, g in zip(margins, gold) if g) / sum(gold), 1),
                    "contradiction_recall": round(100 * sum(m <= 0 for m, g in zip(margins, gold) if not g) / (len(gold) - sum(gold)), 1),
                    "oracle_threshold_acc": oracle[0],
                    "oracle_threshold": round(oracle[1], 2),
                    "seconds": round(time.time() - started),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
