#!/usr/bin/env python3
"""Regenerate ``src/figlang/resources/sources.json`` from the datasets' PROVENANCE.md files.

The PROVENANCE files (one per dataset folder of the shared data directory) record where each
file came from: repository, pinned commit, license and a table of files with byte sizes and git
blob SHA-1s. This script turns them into the manifest ``figlang data download`` and
``figlang data verify`` use, so that the manifest is never edited by hand.

Usage::

    python scripts/make_sources.py [DATA_DIR] [-o OUTPUT] [--check]

DATA_DIR defaults to ``../shared/data`` beside the repository. ``--check`` compares with the
existing manifest instead of writing it (exit 1 when they differ).

Where a PROVENANCE file lacks something, the gap is filled below, in OVERRIDES / EXTRA_FILES,
with a comment saying why. Gutenberg's table lists sha256 prefixes instead of git blob SHA-1s;
those blob SHA-1s are computed from the local copies (which PROVENANCE says are byte-identical
to the repository) after checking size and sha256 prefix.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_OUTPUT = REPO / "src" / "figlang" / "resources" / "sources.json"

DATASETS = ("fig_narrative", "flute", "impli", "pie_english", "tsvetkov_metaphor", "gutenberg")

# Facts a PROVENANCE file leaves out or states in prose.
OVERRIDES: dict[str, dict[str, Any]] = {
    # FLUTE's PROVENANCE has no commit line; this is the commit that also holds testgolddata/.
    "flute": {"commit": "43a0616f9a6d92575182db17325608339b9ead51"},
    "gutenberg": {
        "title": "Project Gutenberg: 57 public-domain English novels and story collections (via rcdm-uga/Gutenberg_Text)",
        "license": "Public domain in the US (Project Gutenberg eBooks; the Project Gutenberg License and trademark terms "
        "are inside each file); every author died in or before 1951. The repository has no LICENSE file.",
    },
}

# Commits the lead pinned; a PROVENANCE that disagrees is an error, not a silent choice.
PINNED = {
    "fig_narrative": "9640095ed599d70d5a2e612d4731c2c27ef59015",
    "flute": "43a0616f9a6d92575182db17325608339b9ead51",
    "impli": "d43c272c895c773b311018d51ab65f592c6699bb",
}

# Files in the repository that are not in the shared copy (FLUTE's test gold was published later).
EXTRA_FILES: dict[str, list[dict[str, Any]]] = {
    "flute": [
        {"path": "testgolddata/idiom_test.jsonl", "size": None, "sha1": "076e8c3a14364a823f36fb28f4ef2bd1240ee63c"},
        {"path": "testgolddata/metaphor_test.jsonl", "size": None, "sha1": "4c4a97432a9712f9be6d44c4fc75d204cb294d7e"},
        {"path": "testgolddata/sarcasm_test.jsonl", "size": None, "sha1": "c745a9d4a82fd0d5b092d2377f5f8a4e125379c0"},
        {"path": "testgolddata/simile_test.jsonl", "size": None, "sha1": "b51ac578f4c1f73ee2ffd622d7a57396dbd8b4a9"},
    ],
}

# Archives that loaders read unpacked: download extracts them into this folder (beside the archive).
EXTRACT_TO = {("pie_english", "idiomscorpus.zip"): "_extracted_from_idiomscorpus.zip"}

# The shared copy deliberately differs from the original for these (see the data README).
KNOWN_MODIFICATION = (
    "expected in the shared data copy, which withholds ~15% of the narrative train records "
    "as an untouched evaluation set (see its README); a fresh download holds the original"
)

GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")
COMMIT = re.compile(r"^-\s*Commit\b[^`\n]*`([0-9a-f]{40})`", re.MULTILINE)
LICENSE = re.compile(r"^-\s*License[^:\n]*:\s*(.+)$", re.MULTILINE)
TITLE = re.compile(r"^#\s*PROVENANCE:\s*(.+)$", re.MULTILINE)
SHA1 = re.compile(r"^[0-9a-f]{40}$")


class ProvenanceError(Exception):
    pass


def blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|"):
        inner = inner[:-1]
    return [c.strip() for c in inner.split("|")]


def _unquote(cell: str) -> str:
    return cell.strip().strip("`").strip()


def parse_file_table(text: str, where: Path) -> list[dict[str, Any]]:
    """Rows of the PROVENANCE table that has a `bytes` column and a checksum column."""
    lines = text.splitlines()
    for i, line in enumerate(lines):  # noqa: B007  i: the table's header line, read after the loop
        if not line.lstrip().startswith("|"):
            continue
        header = [h.lower() for h in _cells(line)]
        if "bytes" in header and any("sha" in h for h in header):
            break
    else:
        raise ProvenanceError(f"{where}: no file table (a Markdown table with 'bytes' and a sha column)")

    def col(*names: str) -> int | None:
        for n, h in enumerate(header):
            if any(name in h for name in names):
                return n
        return None

    path_col = col("original path")
    local_col = col("file") if path_col is not None and col("file") != path_col else None
    if path_col is None:
        path_col = 0
    bytes_col = col("bytes")
    sha1_col = col("git blob sha1")
    sha256_col = col("sha256")
    rows = []
    for number, line in enumerate(lines[i + 2 :], start=i + 3):
        if not line.lstrip().startswith("|"):
            break
        cells = _cells(line)
        if len(cells) < len(header):
            raise ProvenanceError(f"{where}:{number}: expected {len(header)} cells, found {len(cells)}")
        repo_path = _unquote(cells[path_col])
        row: dict[str, Any] = {
            "path": _unquote(cells[local_col]) if local_col is not None else repo_path,
            "repo_path": repo_path,
            "size": int(cells[bytes_col].replace(",", "")) if bytes_col is not None and cells[bytes_col] else None,
        }
        if sha1_col is not None:
            row["sha1"] = _unquote(cells[sha1_col])
            if not SHA1.match(row["sha1"]):
                raise ProvenanceError(f"{where}:{number}: {row['sha1']!r} is not a git blob SHA-1")
        if sha256_col is not None:
            row["sha256_prefix"] = _unquote(cells[sha256_col])
        if len(cells) > len(header):  # a trailing, unheaded note (fig_narrative's train files)
            row["table_note"] = " | ".join(cells[len(header) :])
        rows.append(row)
    if not rows:
        raise ProvenanceError(f"{where}: the file table is empty")
    return rows


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_dataset(name: str, folder: Path) -> dict[str, Any]:
    where = folder / "PROVENANCE.md"
    if not where.is_file():
        raise ProvenanceError(f"{where}: missing (is {folder.parent} the shared data folder?)")
    text = where.read_text(encoding="utf-8")
    override = OVERRIDES.get(name, {})

    repo_match = GITHUB.search(text)
    if not repo_match:
        raise ProvenanceError(f"{where}: no https://github.com/<owner>/<repo> link")
    owner, repo = repo_match.group(1), repo_match.group(2).removesuffix(".git")

    commit_match = COMMIT.search(text)
    commit = override.get("commit") or (commit_match.group(1) if commit_match else None)
    if not commit:
        raise ProvenanceError(f"{where}: no `Commit ... <40 hex>` line; add the commit to OVERRIDES")
    if name in PINNED and commit != PINNED[name]:
        raise ProvenanceError(f"{where}: commit {commit} differs from the pinned {PINNED[name]}")

    title_match = TITLE.search(text)
    title = override.get("title") or (title_match.group(1).strip() if title_match else name)
    license_match = LICENSE.search(text)
    license_note = override.get("license") or (license_match.group(1).strip() if license_match else "not stated")

    files = []
    for row in parse_file_table(text, where):
        local = folder / row["path"]
        sha1 = row.get("sha1")
        if sha1 is None:  # only a sha256 prefix is listed: derive the blob SHA-1 from the verified local copy
            if not local.is_file():
                raise ProvenanceError(f"{where}: {row['path']} has no git blob SHA-1 and no local copy at {local} to compute it from")
            data = local.read_bytes()
            if row["size"] is not None and len(data) != row["size"]:
                raise ProvenanceError(f"{local}: {len(data)} bytes, PROVENANCE says {row['size']}")
            prefix = row.get("sha256_prefix", "")
            if prefix and not hashlib.sha256(data).hexdigest().startswith(prefix):
                raise ProvenanceError(f"{local}: sha256 does not start with {prefix} as PROVENANCE says")
            sha1 = blob_sha1(data)
        entry: dict[str, Any] = {"path": row["path"], "size": row["size"], "sha1": sha1}
        if row["repo_path"] != row["path"]:
            entry["repo_path"] = row["repo_path"]
        if (name, row["path"]) in EXTRACT_TO:
            entry["extract_to"] = EXTRACT_TO[(name, row["path"])]
        if "table_note" in row:
            entry["known_modification"] = KNOWN_MODIFICATION
        files.append(entry)
    files.extend(dict(extra) for extra in EXTRA_FILES.get(name, []))
    paths = [f["path"] for f in files]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise ProvenanceError(f"{where}: duplicate paths {duplicates}")
    files.sort(key=lambda f: f["path"])
    return {
        "title": title,
        "owner": owner,
        "repo": repo,
        "commit": commit,
        "license": license_note,
        "files": files,
    }


def build(data_dir: Path) -> dict[str, Any]:
    return {
        "schema": 1,
        "comment": "Generated by scripts/make_sources.py from the datasets' PROVENANCE.md files; do not edit by hand.",
        "datasets": {name: build_dataset(name, data_dir / name) for name in DATASETS},
    }


def render(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=DEFAULT_DATA, help="folder holding <dataset>/PROVENANCE.md")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if OUTPUT differs from what would be written")
    args = parser.parse_args(argv)
    try:
        text = render(build(args.data_dir))
    except ProvenanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; rerun scripts/make_sources.py", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.output)
    total = sum(len(d["files"]) for d in json.loads(text)["datasets"].values())
    print(f"wrote {args.output} ({total} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
