"""Rewrite the committed prediction files whose dataset texts no licence lets us redistribute, once (#35).

    python scripts/strip_texts.py            # rewrites docs/results in place, prints what it did

Each predictions file under docs/results of FLUTE, PIE-English or IMPLI (rows from its ``*_pie_*`` files) loses its
text fields (``figlang.evaluation.texts.strip_rows``, as scripts/publish_run.py now publishes) and is gzip'd again
without a timestamp; the result file beside it (results.json, else the summary that describes it) records what went,
why, and the sha256 of the predictions as they were (``texts_stripped.sha256_before``: summaries that cite the
unstripped file, as cpu/simulatability-*.json do, still name it). Files already stripped are left as they are.

Not touched: docs/results/suite/ (republished by `figlang suite --publish` in the same session) and the runs of
another session (SKIP below).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from figlang.core.io import write_json, write_jsonl
from figlang.evaluation.texts import STRIP_KEY, strip_rows

ROOT = Path("docs/results")
SKIP = ("suite/", "cpu/flute-nli-mpnet-lora8/", "cpu/impli-folds-flute-mpnet/")
# predictions with no results.json: (the file that describes them, the task and split whose policy applies)
DESCRIBED = {
    "explain/baselines-val/hypothesis/predictions.jsonl.gz": ("explanations.json", "flute", "val"),
    "explain/baselines-val/nearest-example/predictions.jsonl.gz": ("explanations.json", "flute", "val"),
    "explain/baselines-val/premise-hypothesis/predictions.jsonl.gz": ("explanations.json", "flute", "val"),
    "interpret/pie-holdout.predictions.jsonl.gz": ("pie-holdout.json", "pie-english", None),
    "impli-generator/regenerate/predictions.jsonl.gz": ("regeneration.json", "impli-generator", None),
    "impli-generator/regenerate-no-capitalise/predictions.jsonl.gz": ("regeneration.json", "impli-generator", None),
}


def target(path: Path) -> tuple[Path, str | None, str | None] | None:
    """(the result file that records the stripping, task, split) of a predictions file; None when it has neither."""
    rel = path.relative_to(ROOT).as_posix()
    if rel in DESCRIBED:
        name, task, split = DESCRIBED[rel]
        return path.parent / name, task, split
    results = path.parent / "results.json"
    if not results.is_file():
        return None
    task = json.loads(results.read_text(encoding="utf-8")).get("task") or {}
    return results, task.get("name"), task.get("split")


def strip_file(path: Path) -> tuple[int, int] | None:
    """Rewrite one predictions file without its texts; (bytes of text removed, rows changed), None when untouched."""
    found = target(path)
    if found is None:
        return None
    described, task, split = found
    raw = gzip.decompress(path.read_bytes())
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    stripped, record = strip_rows(rows, task, split)
    if record is None:
        return None
    record["sha256_before"] = hashlib.sha256(raw).hexdigest()
    removed = sum(
        len(json.dumps(r[k], ensure_ascii=False).encode()) for r, s in zip(rows, stripped) if s is not r for k in record["fields"] if k in r
    )
    write_jsonl(path, stripped)  # .gz: gzip'd at level 9 with no name or time, as publish_run does
    write_json(described, {**json.loads(described.read_text(encoding="utf-8")), STRIP_KEY: record})
    return removed, record["rows"]


def main() -> None:
    total = files = 0
    for path in sorted(ROOT.rglob("*predictions.jsonl.gz")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(SKIP):
            continue
        done = strip_file(path)
        if done is not None:
            files += 1
            total += done[0]
            print(f"{path}: {done[1]:,} rows, {done[0]:,} bytes of text removed")
    print(f"{files} files rewritten, {total:,} bytes of dataset text removed")


if __name__ == "__main__":
    main()
