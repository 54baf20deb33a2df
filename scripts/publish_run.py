"""Publish a finished run's result files into docs/results: small files only, predictions gzip'd, no machine paths.

    python scripts/publish_run.py runs/cpu/flute-nli-mpnet-sel docs/results/cpu/flute-nli-mpnet-sel

Copies, keeping the folder layout: results.json, results.md, figlang.json, train_result.json,
train_log.jsonl, loss_curve.png, explanations.json, *.examples.md, folds_summary.json, and every
predictions.jsonl as predictions.jsonl.gz (gzip without a timestamp, so a republished file is
byte-identical). Weights, checkpoints and caches are never copied. Absolute paths of this machine
(the home directory, the working directory, the data directory) become ``~/…`` or relative paths,
as ``figlang.evaluation.provenance.portable_path`` writes them: result files are read on other
machines, where this one's paths mean nothing (tests/test_docs_commands.py checks docs/).

Rows of a dataset whose licence does not let its texts be redistributed (FLUTE, PIE-English, IMPLI's PIE-English
premises: docs/data_licences.md) are published without those texts (``figlang.evaluation.texts.strip_rows``), and the
folder's results.json records which fields went and why (``texts_stripped``); readers re-join them by id from the data
folder, whose files' sha256 results.json's ``data`` already records.

A run made from a modified working tree (``git_dirty`` in any provenance ``code`` block of its result files)
is published only with its patch: figlang writes ``code.patch`` beside such results (its sha256 is the code
block's ``git_patch.sha256``), and that file is published with them, byte for byte, so that anyone can check out
``git_commit``, ``git apply code.patch`` and re-make the run. A dirty run without its patch (made before figlang
recorded patches, or with the file lost) is refused: re-make it from a clean commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

from figlang.core.io import atomic_write, gzip_file
from figlang.evaluation.texts import STRIP_KEY, strip_rows

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
PATCH_FILE = "code.patch"  # figlang.core.provenance.PATCH_FILE: the diff a dirty run's code carries


def _code_blocks(obj: object) -> list[dict]:
    """Every provenance ``code`` block in a result file (a dict with ``git_dirty``), however deep."""
    if isinstance(obj, dict):
        found = [obj] if "git_dirty" in obj and "git_commit" in obj else []
        return found + [b for v in obj.values() for b in _code_blocks(v)]
    if isinstance(obj, list):
        return [b for v in obj for b in _code_blocks(v)]
    return []


def unpatched_dirty_results(src: Path) -> list[str]:
    """Why the run cannot be published as it is: each result file whose code was a modified working tree and whose
    patch is not beside it (in its folder or one above it, up to the run folder) with the recorded sha256."""
    problems = []
    for path in sorted(src.rglob("*.json")):
        rel = path.relative_to(src)
        if any(part in SKIP_DIRS for part in rel.parts) or path.name not in KEEP:
            continue
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for code in _code_blocks(obj):
            patch = code.get("git_patch")
            if isinstance(patch, dict):
                folders = [path.parent, *[p for p in path.parent.parents if p.is_relative_to(src)]]
                have = [f / PATCH_FILE for f in folders if (f / PATCH_FILE).is_file()]
                if not any(hashlib.sha256(f.read_bytes()).hexdigest() == patch.get("sha256") for f in have):
                    found = ", ".join(str(f.relative_to(src)) for f in have) or "none"
                    problems.append(f"{rel}: its code patch (sha256 {str(patch.get('sha256'))[:12]}…) is not beside it (found: {found})")
            elif code.get("git_dirty") is True and not ("git_patch" in code and patch is None and "git_patch_error" not in code):
                # git_patch None with no error: the only changes were in the excluded paths (docs/results/)
                problems.append(
                    f"{rel}: made from a modified working tree (git_dirty) at {code.get('git_commit')} and records no patch of it"
                )
    return sorted(set(problems))


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


def stripped_predictions(path: Path) -> tuple[str, dict | None]:
    """The text of a run's predictions.jsonl as published: without the dataset texts its task's licence keeps out
    (its task is the results.json beside it), and the record of what went (None: nothing did, the text as it is)."""
    text = path.read_text(encoding="utf-8")
    results = path.parent / "results.json"
    task = json.loads(results.read_text(encoding="utf-8")).get("task") or {} if results.is_file() else {}
    lines = [line for line in text.splitlines() if line.strip()]
    rows, record = strip_rows((json.loads(line) for line in lines), task.get("name"), task.get("split"))
    if record is None:
        return text, None
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), record


def with_strip_record(text: str, record: dict | None) -> str:
    """results.json's text with ``texts_stripped`` added (as figlang writes JSON: 2-space indent, UTF-8)."""
    if record is None:
        return text
    return json.dumps({**json.loads(text), STRIP_KEY: record}, ensure_ascii=False, indent=2) + "\n"


def publish(src: Path, dest: Path, data_dir: Path | None) -> list[Path]:
    unpatched = unpatched_dirty_results(src)
    if unpatched:
        raise SystemExit(
            f"error: {src} was made from a modified working tree and cannot be re-made without its patch:\n  "
            + "\n  ".join(unpatched)
            + "\nre-make the run from a clean commit (or with a figlang that writes code.patch beside its results)"
        )
    written: list[Path] = []
    published = {p.parent: stripped_predictions(p) for p in src.rglob("predictions.jsonl") if p.is_file()}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or any(part in SKIP_DIRS for part in rel.parts):
            continue
        name = path.name
        if name == "predictions.jsonl":
            target = dest / rel.parent / "predictions.jsonl.gz"
        elif name in KEEP or name == PATCH_FILE or name.endswith(".examples.md"):
            target = dest / rel
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "loss_curve.png" or name == PATCH_FILE:  # bytes as they are: the patch's sha256 is recorded
            with atomic_write(target, "wb") as f:
                f.write(path.read_bytes())
        else:
            plain = target.with_suffix("") if target.suffix == ".gz" else target
            text, record = published.get(path.parent, (None, None))
            if name == "predictions.jsonl" and text is not None:
                content = text
            else:
                content = path.read_text(encoding="utf-8")
                content = with_strip_record(content, record) if name == "results.json" else content
            with atomic_write(plain) as f:
                f.write(portable_text(content, data_dir))
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
