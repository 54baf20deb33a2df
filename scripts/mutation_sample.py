"""The mutants scripts/mutation_test.sh checks when SAMPLE=N: a seeded random sample of N of all mutants, and the
kill rate over that sample with its 95% confidence interval (issue #35).

    python scripts/mutation_sample.py names N [SEED]   # the sampled mutants not yet killed, one a line
    python scripts/mutation_sample.py report [N [SEED]] # kill rate per file and overall (the sample, or all)

Reads mutmut's results in mutants/**/*.py.meta. A killed mutant stays killed (tests are only added), so a rerun
checks again only the sampled mutants that survived, had no tests or were not checked yet.
"""

from __future__ import annotations

import json
import math
import random
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

SEED = 35


def results() -> dict[str, tuple[str, str]]:
    """mutant name → (source file, status)."""
    out = {}
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        source = str(meta.relative_to("mutants"))[: -len(".meta")]
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            out[name] = (source, status_by_exit_code[code])
    return out


def sample(names: list[str], n: int | None, seed: int) -> list[str]:
    return sorted(names) if n is None or n >= len(names) else sorted(random.Random(seed).sample(sorted(names), n))


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    command = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else SEED
    everything = results()
    picked = sample(list(everything), n, seed)
    if command == "names":
        print("\n".join(name for name in picked if everything[name][1] != "killed"))
        return
    by_file: dict[str, Counter[str]] = {}
    for name in picked:
        source, status = everything[name]
        by_file.setdefault(source, Counter())[status] += 1
    total: Counter[str] = sum(by_file.values(), Counter())
    for source, counts in sorted(by_file.items()):
        checked = sum(v for k, v in counts.items() if k != "not checked")
        print(f"{source}: {counts['killed']}/{checked} killed  {dict(sorted(counts.items()))}")
    checked = sum(v for k, v in total.items() if k != "not checked")
    low, high = wilson(total["killed"], checked)
    what = f"a seeded sample (seed {seed}) of {len(picked)} of the {len(everything)} mutants" if n else f"all {len(everything)} mutants"
    print(f"{what}: {dict(sorted(total.items()))}")
    print(
        f"kill rate: {total['killed']}/{checked} = {100 * total['killed'] / max(checked, 1):.1f}% "
        f"(95% CI {100 * low:.1f}-{100 * high:.1f}%; survived, no tests, timeout and suspicious count against it)"
    )


if __name__ == "__main__":
    main()
