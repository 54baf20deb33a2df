"""Which of the lexicon's meanings should the use model read? Measured on ``selection`` uses only.

    OMP_NUM_THREADS=2 python benchmarks/use_meaning_choice.py --data-dir ../shared/data

The use model was trained on PIE's and IMPLI's own meanings ("to die"), but in ``figlang interpret`` it reads the
lexicon's first meaning, often a long WordNet or Wiktionary gloss ("pass from physical life and lose all bodily
attributes and functions necessary to sustain life"). For each ``selection`` use whose idiom a fresh install's
lexicon lists (no data folder), the shipped model labels the masked sentence beside each candidate meaning:

* ``first``: the lexicon's first meaning, as interpret gives it today;
* ``shortest``: its shortest meaning (in words);
* ``curated``: figlang's own list's meaning where it has one, else the first;
* ``none``: no meaning (the idiom's words, which the mask hides from the sentence).

Accuracy at the shipped model's own threshold. The rule, set before the run: interpret gives the use model the best
policy's meaning if it beats ``first`` by more than one point on these uses. The test split is not read. Writes ``use-meaning-selection.json`` and
its per-item labels (ids, no sentences).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import _write  # noqa: E402
from train_use_model import selection_uses  # noqa: E402

from figlang.interpret.lexicon_all import assemble, idiom_key  # noqa: E402
from figlang.interpret.use_label import USE_MODEL, UseItem, UseLabeller  # noqa: E402

POLICIES = ("first", "shortest", "curated", "none")


def meaning_for(policy: str, meanings: list[tuple[str, str]]) -> str | None:
    """The meaning the policy picks from an idiom's (definition, resource) list, preferred first."""
    if policy == "none" or not meanings:
        return None
    if policy == "shortest":
        return min(meanings, key=lambda m: (len(m[0].split()), meanings.index(m)))[0]
    if policy == "curated":
        return next((d for d, r in meanings if r == "curated"), meanings[0][0])
    return meanings[0][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out", type=Path, default=Path("docs/results/interpret"))
    args = ap.parse_args()
    sel = selection_uses(args.data_dir)
    lex = assemble(None)  # a fresh install's lexicon: no data folder
    listed = [(rec, u, lex.meanings.get(lex.canonical_key(idiom_key(u.idiom)))) for rec, u in sel]
    listed = [(rec, u, ms) for rec, u, ms in listed if ms]
    labeller = UseLabeller(USE_MODEL, stack=False)  # the adapter alone, as published (before the cohesion stack)
    report: dict = {"selection_uses": len(sel), "listed_uses": len(listed), "policies": {}}
    labels: dict[str, list[str]] = {}
    for policy in POLICIES:
        got = labeller.label([UseItem(u.sentence, u.idiom, meaning_for(policy, ms)) for _, u, ms in listed])
        if labeller.why:
            raise SystemExit(labeller.why)
        labels[policy] = [g.label if g else "none" for g in got]
        right = sum(lab == rec["label"] for lab, (rec, _, _) in zip(labels[policy], listed))
        report["policies"][policy] = {"accuracy_pct": round(100 * right / len(listed), 2), "right": right}
        print(f"{policy}: {right}/{len(listed)} = {100 * right / len(listed):.2f}%")
    items = [
        {"id": rec["id"], "idiom": rec["idiom"], "gold": rec["label"], **{p: labels[p][i] for p in POLICIES}}
        for i, (rec, _, _) in enumerate(listed)
    ]
    _write(args.out, "use-meaning-selection", report, items)


if __name__ == "__main__":
    main()
