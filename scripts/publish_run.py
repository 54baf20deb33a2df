"""Publish a finished run's result files into docs/results: small files only, predictions gzip'd, no machine paths.

    python scripts/publish_run.py runs/cpu/flute-nli-mpnet-sel docs/results/cpu/flute-nli-mpnet-sel

Copies, keeping the folder layout: results.json, results.md, figlang.json, train_result.json,
train_log.jsonl, loss_curve.png, explanations.json, *.examples.md, folds_summary.json, and every
predictions.jsonl as predictions.jsonl.gz (gzip without a timestamp, so a republished file is
byte-identical). Weights, checkpoints and caches are never copied. Absolute paths of this machine
(the home directory, the working directory, the data directory) become ``~/…`` or relative paths,
as ``figlang.evaluation.provenance.portable_path`` writes them: result files are read on other
machines, where this one's paths mean nothing (tests/test_docs_commands.py checks docs/).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from figlang.data.io import atomic_write, gzip_file

KEEP = {
    "results.json",
    "results.md",
    "figlang.json",
    "train_result.json",
    "train_log.jsonl",
    "loss_curve.png",
    "explanations.json",
    "folds_summary.json",
    "simulatability.json",
    "summary.json",
    "norms.json",
    "sweep.json",
    "sweep_entry.json",
    "grid.json",
    "mbr_subsets.json",
}
SKIP_DIRS = {"checkpoint", "cache", ".figlang-cache", "__pycache__"}


def portable_text(text: str, data_dir: Path | None) -> str:
    """``text`` with this machine's absolute paths made portable (home → ~, cwd → relative, data dir → as given)."""
    replacements: list[tuple[str, str]] = []
    if data_dir is not None:
        replacements.append((str(data_dir.resolve()), os.path.relpath(data_dir.resolve())))
    cwd = Path.cwd().resolve()
    replacements += [(str(cwd) + "/", ""), (str(cwd), "."), (str(Path.home()), "~")]
    for old, new in sorted(replacements, key=lambda x: -len(x[0])):
        text = text.replace(old, new)
    return re.sub(r"(?<![\w.~])\.\./\.\./shared/", "../shared/", text)


def publish(src: Path, dest: Path, data_dir: Path | None) -> list[Path]:
    written: list[Path] = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or any(part in SKIP_DIRS for part in rel.parts):
            continue
        name = path.name
        if name == "predictions.jsonl":
            target = dest / rel.parent / "predictions.jsonl.gz"
        elif name in KEEP or name.endswith(".examples.md"):
            target = dest / rel
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "loss_curve.png":
            with atomic_write(target, "wb") as f:
                f.write(path.read_bytes())
        else:
            plain = target.with_suffix("") if target.suffix == ".gz" else target
            with atomic_write(plain) as f:
                f.write(portable_text(path.read_text(encoding="utf-8"), data_dir))
            if plain != target:
                gzip_file(plain)  # reproducible bytes: no name or time in the gzip header
        written.append(target)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=Path, help="a finished run folder (figlang eval -o, figlang train -o)")
    ap.add_argument("dest", type=Path, help="where its result files go, under docs/results/")
    ap.add_argument("--data-dir", type=Path, default=Path("../shared/data"), help="the data directory the run read (made relative)")
    args = ap.parse_args()
    if not args.run.is_dir():
        sys.exit(f"error: {args.run} is not a folder: give a finished run's --out folder")
    written = publish(args.run, args.dest, args.data_dir)
    if not written:
        sys.exit(f"error: {args.run} holds no result files (results.json, figlang.json, predictions.jsonl …)")
    print(f"wrote {len(written)} files under {args.dest}")


if __name__ == "__main__":
    main()
