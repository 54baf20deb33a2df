"""Which committed prediction files under docs/results carry dataset texts, by dataset (issue #35).

    python scripts/text_inventory.py            # markdown, as in docs/data_licences.md

A file carries texts when its first row has a premise, hypothesis, narrative, options, source, references, text,
input or gold explanation field. The dataset is the task of the results.json beside the file (else the row id's
prefix); docs/data_licences.md says which datasets' licences do not grant redistribution of their texts.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

TEXT_FIELDS = ("premise", "hypothesis", "narrative", "options", "source", "references", "text", "input", "gold_explanation")
DATASET_OF_TASK = {"flute": "FLUTE", "impli": "IMPLI", "idiom": "Figurative Narrative", "simile": "Figurative Narrative"}


def dataset(task: str, first_id: str) -> str:
    if task == "?":
        return {"val": "FLUTE", "idiom": "FLUTE (figlang's own creator run)"}.get(
            first_id.split("-")[0], "PIE-English" if first_id.isdigit() else "?"
        )
    return next((d for prefix, d in DATASET_OF_TASK.items() if task.startswith(prefix)), task)


def inventory(root: Path = Path("docs/results")) -> dict[str, list[tuple[str, str, int, int]]]:
    out: dict[str, list[tuple[str, str, int, int]]] = defaultdict(list)
    for path in sorted(root.rglob("*")):
        if not path.is_file() or not path.name.endswith((".jsonl", ".jsonl.gz")):
            continue
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            first = f.readline()
            rows = 1 + sum(1 for _ in f)
        try:
            row = json.loads(first)
        except ValueError:
            continue
        fields = [k for k in TEXT_FIELDS if k in row]
        if not fields:
            continue
        results = path.parent / "results.json"
        task = "?"
        if results.is_file():
            task = (json.loads(results.read_text(encoding="utf-8")).get("task") or {}).get("name") or "?"
        name = "IMPLI" if task == "?" and "impli" in str(path) else dataset(task, str(row.get("id", "")))
        out[name].append((str(path), ", ".join(fields), rows, path.stat().st_size))
    return out


def main() -> None:
    for name, files in sorted(inventory().items()):
        print(f"\n### {name}: {len(files)} files, {sum(f[2] for f in files):,} rows, {sum(f[3] for f in files):,} bytes\n")
        print("| file | text fields | rows |\n|---|---|---:|")
        for path, fields, rows, _size in files:
            print(f"| `{path}` | {fields} | {rows:,} |")


if __name__ == "__main__":
    main()
