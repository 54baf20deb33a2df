"""Each use model's answers on the seven behaviour sentences (the gate) and on diagnostic sentences of the gate's family.

    OMP_NUM_THREADS=2 python benchmarks/use_behaviour_probe.py --models figlang:use-minilm-lora,runs/cpu/use-minilm-lora8-everyday,runs/cpu/use-minilm-lora8-pairs,runs/cpu/use-minilm-lora8-context

Through interpret's own labeller (float32), every sentence with the meaning a fresh install's interpret gives its
idiom. The behaviour sentences are the tests' (``use_model_ensemble.BEHAVIOUR``); the diagnostic sentences were
written after the everyday models failed the gate, to see whether the failure is the gate's sentence or the model's
(docs/research/interpret.md, section b): nothing is chosen on them. Writes ``use-behaviour-probe.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _write  # noqa: E402
from use_model_ensemble import BEHAVIOUR, behaviour_items  # noqa: E402

from figlang.interpret.use_label import UseItem, UseLabeller  # noqa: E402

DIAGNOSTIC = (
    "The old man kicked the bucket last winter and was buried on Sunday.",
    "The old farmer kicked the bucket last winter.",
    "The old man kicked the bucket last winter.",
    "My uncle kicked the bucket and was buried on Sunday.",
    "The old fisherman kicked the bucket last winter and the whole village mourned.",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True, help="comma-separated use models (figlang:NAME or a run folder)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    args = ap.parse_args()
    behaviour = behaviour_items()
    meaning = next(it.meaning for it in behaviour if it.idiom == "kick the bucket")
    items = behaviour + [UseItem(s, "kick the bucket", meaning) for s in DIAGNOSTIC]
    report: dict = {"models": {}}
    rows = [{"sentence": it.sentence, "idiom": it.idiom, "gate": i < len(BEHAVIOUR)} for i, it in enumerate(items)]
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        labeller = UseLabeller(name)
        got = labeller.label(items)
        if labeller.why:
            raise SystemExit(labeller.why)
        right = sum(g is not None and g.label == want for g, (_, _, want) in zip(got, BEHAVIOUR))
        report["models"][name] = {"behaviour_sentences_right": f"{right}/{len(BEHAVIOUR)}"}
        for row, g in zip(rows, got):
            row[name] = {"use": g.label, "p_figurative": round(g.probability, 3)} if g else None
        print(f"{name}: {right}/{len(BEHAVIOUR)}; " + ", ".join(f"{r[name]['p_figurative']}" for r in rows if r[name]))
    _write(args.out, "use-behaviour-probe", report, rows)


if __name__ == "__main__":
    main()
