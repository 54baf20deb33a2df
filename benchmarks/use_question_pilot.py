"""Pilot: does asking an instruction-tuned LM "literally or figuratively?" tell the uses apart? On the development set.

    OMP_NUM_THREADS=2 python benchmarks/use_question_pilot.py --model qwen2.5-1.5b --out docs/results/interpret

The same hits as the substitution pilot (``use_substitution_pilot.py``: every idiom hit a fresh install's interpret
finds in the everyday DEVELOPMENT set that is a figurative sentence's gold idiom or any hit on a literal sentence).
The LM reads the sentence, the words as written and the idiom's meaning, and is asked whether the words are used
figuratively or literally; ``margin`` is the log-probability of the answer "figuratively" minus that of "literally"
(the first answer token, after the chat template's assistant turn). Reported: the area under the ROC curve of the use
model's P(figurative), of ``margin``, and of their sum in standard units (nothing fitted). The test set is not read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _write  # noqa: E402
from everyday_dev import DEV  # noqa: E402
from use_substitution_pilot import _alone, auc_report, dev_use_hits  # noqa: E402

from figlang.interpret.api import Interpreter  # noqa: E402

QUESTION = (
    'Sentence: "{sentence}"\n'
    'In this sentence, are the words "{words}" used figuratively (as the idiom "{idiom}", meaning: {meaning}) '
    "or literally (their plain, physical sense)? Answer with one word: figuratively or literally."
)


def margins(model, tokenizer, prompts: list[str]) -> list[float]:
    """log P("figuratively") - log P("literally") as the first token of the assistant's answer."""
    import torch

    fig = tokenizer.encode("figuratively", add_special_tokens=False)[0]
    lit = tokenizer.encode("literally", add_special_tokens=False)[0]
    out = []
    with torch.no_grad():
        for p in prompts:
            text = tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
            ids = tokenizer(text, return_tensors="pt").input_ids
            lp = torch.log_softmax(model(ids).logits[0, -1].float(), -1)
            out.append(float(lp[fig] - lp[lit]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-1.5b", help="a catalog instruction-tuned causal LM")
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    args = ap.parse_args()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from figlang.backends.loading import resolve

    os.environ.pop("FIGLANG_DATA_DIR", None)
    items = [
        {
            "idiom": e.canonical,
            "words": e.text,
            "meaning": e.meaning or "",
            "kind": kind,
            "figurative": gold,
            "sentence": e.sentence,
            "p_figurative": e.p_figurative,
        }
        for e, kind, gold in dev_use_hits(_alone(Interpreter(None)), paraphrase=False)
    ]
    path = resolve(args.model).path
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path)
    prompts = [QUESTION.format(sentence=it["sentence"], words=it["words"], idiom=it["idiom"], meaning=it["meaning"]) for it in items]
    for it, m in zip(items, margins(model, tokenizer, prompts)):
        it["margin"] = round(m, 4)
    report = {
        "set": str(DEV.relative_to(DEV.parents[2])),
        "model": args.model,
        "question": QUESTION,
        **auc_report(items, "margin", "question_margin"),
    }
    print(report)
    _write(args.out, f"use-question-pilot-{args.model}", report, items)


if __name__ == "__main__":
    main()
