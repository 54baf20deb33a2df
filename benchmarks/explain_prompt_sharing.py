"""How much of the explaining prompts a key/value cache could share: token counts of every FLUTE val prompt.

The explaining system's prompt is a header said once (the compact form's instruction, as a chat's system turn),
then the k retrieved examples, then the pair. What a cache of an earlier prompt can save is the tokens a prompt
shares with it from the start. This script builds every prompt of a split as `figlang explain` would (labels from
the default label method, examples retrieved for each pair) and counts:

* the tokens of each prompt, and the prefix every prompt shares (the header);
* the tokens left to encode when each prompt reuses the previous one's cache, in file order and sorted (sorted, each
  prompt's longest shared prefix is with its neighbour: the count is that of one token tree of all prompts, each
  distinct prefix encoded once, the most any prefix cache can save).

No generation runs. Run:

  python benchmarks/explain_prompt_sharing.py --split val --data-dir ../shared/data \
      --out docs/results/explain/prompt-sharing-val.json
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", default="val")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from figlang.backends.prefix import shared_prefix_length
    from figlang.core.io import write_json
    from figlang.core.provenance import code_provenance
    from figlang.data.registry import get_task
    from figlang.explain import explainer

    provenance = code_provenance()
    options = {"shots": "compact", "k_by_type": "idiom:10,metaphor:10,simile:10", "backend": "transformers", "dtype": "float32"}
    method = explainer("qwen2.5-1.5b", args.data_dir, **options)  # the tokenizer and chat template; no generation
    records = get_task("flute").load(args.split, args.data_dir)
    labels = {p.id: p.prediction for p in method.label_method.predict(records)}
    prompts = [method.lm._encode_prompt(method.fitted_prompt(r, labels[r.id])[0]) for r in records]
    total = sum(map(len, prompts))

    def after_previous(seq: list[list[int]]) -> int:
        return len(seq[0]) + sum(len(b) - shared_prefix_length([a, b], keep=1) for a, b in zip(seq, seq[1:]))

    ordered = sorted(prompts)
    result = {
        "split": args.split,
        "options": options,
        "prompts": len(prompts),
        "tokens": total,
        "mean_tokens": round(total / len(prompts), 1),
        "min_tokens": min(map(len, prompts)),
        "max_tokens": max(map(len, prompts)),
        "shared_by_all": shared_prefix_length(prompts, keep=1),
        "to_encode_reusing_previous_file_order": after_previous(prompts),
        "to_encode_reusing_previous_sorted": after_previous(ordered),
        "label_method": method.fingerprint().get("label_method", {}).get("model"),
        "provenance": provenance,
    }
    for key in ("to_encode_reusing_previous_file_order", "to_encode_reusing_previous_sorted"):
        result[key.replace("to_encode", "share_saved")] = round(1 - result[key] / total, 4)
    print({k: v for k, v in result.items() if k != "provenance"})
    if args.out:
        write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
