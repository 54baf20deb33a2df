"""The everyday-idioms DEVELOPMENT set: where choices about interpret on everyday text are made (never on the test set).

    OMP_NUM_THREADS=1 python benchmarks/everyday_dev.py --out docs/results/interpret

``benchmarks/everyday_idioms/dev-sentences.tsv`` (same columns as the test set ``sentences.tsv``) was written on
2026-12-07 by a writer (a helper agent) with no sight of the test set, the lexicon or figlang's own idiom list: 160
sentences each using one common idiom figuratively, 60 using an idiom's words literally, 80 with no idiom. This script
runs a fresh install's ``figlang interpret`` (no data folder) over it, scores every idiom hit as the test benchmark
does (``bench_everyday_idioms.score``), and for a range of thresholds on the use model's P(figurative) counts what
``--figurative-only`` would give: the operating point a choice about the use labels for everyday text is made from.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_everyday_idioms import _items, read_set, score  # noqa: E402
from bench_interpret import _write  # noqa: E402

from figlang.interpret.api import Interpreter  # noqa: E402
from figlang.interpret.use_label import USE_MODEL, UseLabeller  # noqa: E402

DEV = Path(__file__).resolve().parent / "everyday_idioms" / "dev-sentences.tsv"
THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.37, 0.45, 0.5, 0.6, 0.7)


def at_threshold(rows: list[dict], results: list, t: float) -> dict:
    """Recall and precision over the hits whose P(figurative) is at least ``t`` (what a use threshold of t reports)."""
    return {"threshold": t, **score(rows, results, False, keep=lambda e: e.p_figurative is None or e.p_figurative >= t)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, default=DEV)
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    ap.add_argument("--use-model", default=USE_MODEL, help=f"the use model that labels the hits (default: the shipped {USE_MODEL})")
    ap.add_argument("--name", default="everyday-dev", help="the result file's name in --out")
    args = ap.parse_args()
    os.environ.pop("FIGLANG_DATA_DIR", None)
    rows = read_set(args.set)
    engine = Interpreter(None)
    engine.use_labeller = UseLabeller(args.use_model)
    results = [engine.interpret(r["sentence"], paraphrase=False) for r in rows]
    report = {
        "set": str(args.set.relative_to(args.set.parents[2])),
        "sentences": {k: sum(r["kind"] == k for r in rows) for k in ("idiom", "none", "literal")},
        "use_model": args.use_model,
        "lexicon": engine.lexicon.describe() | {"checksums": None},
        "all_hits": score(rows, results, figurative_only=False),
        "figurative_labelled_hits": score(rows, results, figurative_only=True),
        "by_threshold": [at_threshold(rows, results, t) for t in THRESHOLDS],
    }
    for r in report["by_threshold"]:
        print(f"P(fig) >= {r['threshold']:.2f}: recall {r['recall_pct']} precision {r['precision_pct']} ({r['right_hits']}/{r['hits']})")
    _write(args.out, args.name, report, _items(rows, results, "all"))


if __name__ == "__main__":
    main()
