"""Choose the idioms whose everyday uses helper writers put into words for the use model's training data.

    python benchmarks/everyday_train_idioms.py --data-dir ../shared/data --take 1600 --parts 8 --out runs/use-everyday
    python benchmarks/everyday_train_idioms.py --data-dir ../shared/data --take 1200 --parts 8 --seed 1 \
        --taken benchmarks/everyday_idioms/use-train-sentences.tsv --out runs/use-everyday-pairs
    python benchmarks/everyday_train_idioms.py --data-dir ../shared/data --take 1000 --parts 8 --seed 2 --out runs/use-everyday-context \
        --taken benchmarks/everyday_idioms/use-train-sentences.tsv benchmarks/everyday_idioms/use-pairs-sentences.tsv

The rule, set before any sentence was written: from figlang's own idiom list (``curated``), keep an idiom only when
it cannot leak into a measured figure:

* its content-word key falls in the ``train`` part of the use model's idiom split (``train_use_model.split_of``),
  and it is not the same idiom (``bench_interpret.same_idiom``), nor shares two content words, with any idiom of the
  labelled uses' ``selection`` or test parts, so the held-out figure (b) stays on idioms never trained on;
* it is not the same idiom, nor shares two content words, with any of the everyday test set's 260 candidates
  (``candidates.txt``) or the development set's idioms, so the everyday figures stay idiom-disjoint;

then take a seeded sample of ``--take`` (leaving out the idioms of ``--taken``, a file already written) and cut it into ``--parts`` files (``idioms-K.tsv``: idiom, meaning) for the
writers. The writers' instruction is ``benchmarks/everyday_idioms/use-train-instruction.md``; the second call's writers
(minimal pairs: a figurative and a literal use in one setting) had ``use-pairs-instruction.md``, the third's
(pairs whose figurative use sits among what follows from the meaning) ``use-context-instruction.md``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_interpret import content, same_idiom  # noqa: E402
from train_use_model import labelled_uses, split_of  # noqa: E402

from figlang.lexicon.curated import curated_rows  # noqa: E402

HERE = Path(__file__).resolve().parent / "everyday_idioms"


def _near(a: str, others: list[tuple[str, frozenset[str]]]) -> bool:
    ca = content(a)
    return any(same_idiom(a, b) or len(ca & cb) >= 2 for b, cb in others)


def held_idioms(data_dir: Path) -> list[str]:
    """The idioms of the labelled uses' ``selection`` and test parts, and of the everyday test and development sets."""
    out = {r[2] for r in labelled_uses(data_dir) if split_of(r[2]) != "train"}
    cands = [ln.strip() for ln in (HERE / "candidates.txt").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    dev = [ln.split("\t")[1] for ln in (HERE / "dev-sentences.tsv").read_text().splitlines()[1:] if ln.split("\t")[1]]
    return sorted(out | set(cands) | set(dev))


def choose(data_dir: Path, take: int, seed: int = 0, taken: tuple[Path, ...] = ()) -> list[tuple[str, str]]:
    held = [(h, content(h)) for h in held_idioms(data_dir)]
    pool = sorted({(e, m) for _, e, m, _ in curated_rows() if split_of(e) == "train"})
    lines = [ln for path in taken for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("#")]
    done = {ln.split("\t")[0] for ln in lines}
    keep = [(i, m) for i, m in pool if not _near(i, held) and i not in done]
    print(f"{len(pool)} list idioms in the train part, {len(keep)} far from every held idiom", file=sys.stderr)
    return random.Random(seed).sample(keep, min(take, len(keep)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--take", type=int, default=1600)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--taken", type=Path, nargs="*", default=[], help="files of written uses (idiom first): their idioms are not chosen again"
    )
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    chosen = choose(args.data_dir, args.take, args.seed, tuple(args.taken))
    args.out.mkdir(parents=True, exist_ok=True)
    for k in range(args.parts):
        part = chosen[k :: args.parts]
        (args.out / f"idioms-{k + 1}.tsv").write_text("".join(f"{i}\t{m}\n" for i, m in part), encoding="utf-8")
    print(f"{len(chosen)} idioms in {args.parts} parts under {args.out}")


if __name__ == "__main__":
    main()
