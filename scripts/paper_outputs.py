"""Score the narrative paper's committed dev outputs with figlang and print Markdown tables.

    .venv/bin/python scripts/paper_outputs.py --data-dir ../shared/data --out docs/results/paper-outputs

``--out DIR`` keeps each scored file as a harness run folder (results.json, predictions.jsonl,
results.md) under DIR/<set>-<file stem>/, the result files that README.md's tables quote.

Discriminative: accuracy of the committed dev predictions (the paper's Table 2 dev numbers).
Generative: ROUGE-L and BLEU of the committed dev generations against the dev references
(the plausible continuations of each narrative), max over samples × references as in the paper.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from figlang.evaluation import score_predictions_file

DISCRIMINATIVE = [
    ("idiom", "RoBERTa-large (baseline)", "idiom/discriminative/idiom_dev_predictions.jsonl"),
    ("idiom", "+ context knowledge", "idiom/discriminative/idiom_context_dev_predictions.jsonl"),
    ("idiom", "+ literal knowledge", "idiom/discriminative/idiom_literal_dev_predictions.jsonl"),
    ("simile", "RoBERTa-large (baseline)", "simile/discriminative/dev_predictions.jsonl"),
    ("simile", "+ context knowledge", "simile/discriminative/simile_context_dev_predictions.jsonl"),
    ("simile", "+ literal knowledge", "simile/discriminative/simile_literal_dev_predictions.jsonl"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--out", default=None, help="write each scored file's run folder under this folder")
    args = parser.parse_args()
    keep = (lambda kind, path: Path(args.out) / f"{kind}-{Path(path).stem}") if args.out else (lambda kind, path: None)
    out = Path(args.data_dir) / "fig_narrative" / "output"
    print("| set | system | dev accuracy % [95% CI] | n |")
    print("|---|---|---|---|")
    for kind, name, rel in DISCRIMINATIVE:
        r = score_predictions_file(out / rel, f"{kind}-cloze", "dev", args.data_dir, out_dir=keep(kind, rel))
        a = r.metrics["accuracy"]
        print(f"| {kind} | {name} | {100 * a['accuracy']:.2f} [{100 * a['ci_low']:.1f}, {100 * a['ci_high']:.1f}] | {a['n']} |")
    print()
    print("| set | file | items | empty | ROUGE-L | BLEU (NLTK, smoothing 1) | sentence BLEU (sacrebleu) |")
    print("|---|---|---|---|---|---|---|")
    for kind in ("idiom", "simile"):
        for path in sorted((out / kind / "generative").glob("*dev*.jsonl")):
            r = score_predictions_file(path, f"{kind}-generation", "dev", args.data_dir, out_dir=keep(kind, path))
            g = r.metrics["generation"]
            print(
                f"| {kind} | {path.name} | {g['n_items']} | {len(r.problems.empty_generations)} | {g['rougeL']:.4f} | "
                f"{g['bleu']:.4f} | {g['sacrebleu_sentence']:.2f} |"
            )


if __name__ == "__main__":
    main()
