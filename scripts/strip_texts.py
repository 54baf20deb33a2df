"""Rewrite the committed prediction files whose dataset texts no licence lets us redistribute, once (#35).

    python scripts/strip_texts.py            # rewrites docs/results in place, prints what it did

Each predictions file under docs/results of FLUTE, PIE-English or IMPLI (rows from its ``*_pie_*`` files) loses its
text fields (``figlang.evaluation.texts.strip_rows``, as scripts/publish_run.py now publishes) and is gzip'd again
without a timestamp; the result file beside it (results.json, else the summary that describes it) records what went,
why, and the sha256 of the predictions as they were (``texts_stripped.sha256_before``: summaries that cite the
unstripped file, as cpu/simulatability-*.json do, still name it). Files already stripped are left as they are.

Not touched: docs/results/suite/ (republished by `figlang suite --publish` in the same session) and the runs of
another session (SKIP below).

The side-by-side example tables of the explaining system (``*.examples.md`` under docs/results, written by `figlang
explain --score RUN --examples N`, and the tables copied from them into docs/research/flute_explanations.md) quoted FLUTE's
premises, hypotheses and explanations: each row is given its item's id instead (found by its premise and hypothesis
in the data folder's FLUTE val, so this part needs the data folder: ``--data-dir DATA``, else $FIGLANG_DATA_DIR), and
the page says how to see the texts (``figlang.evaluation.explanations.texts_note``). An examples file is written again
as the writer now writes it, after checking each row's answer and explanation against the run's predictions beside it.

    python scripts/strip_texts.py --data-dir ../shared/data
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from figlang.core.context import RunContext
from figlang.core.io import write_json, write_jsonl
from figlang.data.registry import get_task
from figlang.evaluation.explanations import side_by_side_markdown, texts_note
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


#: the side-by-side table's head while it quoted the texts
OLD_HEAD = "| premise | hypothesis | gold | FLUTE's explanation | figlang | figlang's explanation |"
BAR = "\\|"  # a "|" inside a cell, escaped
#: pages outside docs/results that copied those tables
PAGES = (Path("docs/research/flute_explanations.md"),)


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells, with the writer's escaped ``\\|`` read back."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _cell(text: Any) -> str:
    """A text as the side-by-side writer puts it in a cell (figlang.evaluation.explanations.side_by_side_markdown)."""
    return str(text or "").replace("\n", " ").strip()


def flute_ids(ctx: RunContext, split: str = "val") -> dict[tuple[str, str, str], list[str]]:
    """FLUTE ``split``'s ids by (premise, hypothesis, gold label) as the tables show them (a few pairs are there twice)."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for r in get_task("flute").load(split, ctx):
        out.setdefault((_cell(r.premise), _cell(r.hypothesis), str(r.label)), []).append(r.id)
    return out


def example_rows(lines: list[str], at: int, ids: dict[tuple[str, str, str], list[str]]) -> tuple[list[dict[str, Any]], int]:
    """(the rows of the old-format table whose head is ``lines[at]``, each with its id; the index after the table)."""
    rows, end = [], at + 2
    while end < len(lines) and lines[end].startswith("|"):
        premise, hypothesis, gold, _gold_explanation, prediction, explanation = _cells(lines[end])
        found = ids.get((premise, hypothesis, gold)) or []
        if len(found) != 1:
            raise SystemExit(f"{len(found)} FLUTE items show {premise!r} / {hypothesis!r} ({gold}): {found}")
        rows.append({"id": found[0], "gold": gold, "prediction": prediction, "explanation": explanation})
        end += 1
    return rows, end


def strip_examples_file(path: Path, ids: dict[tuple[str, str, str], list[str]]) -> int:
    """Write an ``*.examples.md`` again with ids for texts; its rows checked against the run's predictions. Rows done."""
    lines = path.read_text(encoding="utf-8").split("\n")
    examples, figure = [], None
    for i, line in enumerate(lines):
        if line.startswith("#### "):
            figure = line[5:].strip()
        elif line.startswith(OLD_HEAD):
            rows, _ = example_rows(lines, i, ids)
            examples += [{**r, "figure_type": figure} for r in rows]
    if not examples:
        return 0
    with gzip.open(path.parent / "predictions.jsonl.gz", "rt", encoding="utf-8") as f:
        run = {r["id"]: r for r in map(json.loads, f)}  # ids and answers (the texts were stripped)
    for e in examples:
        row = run[e["id"]]
        said = row.get("explanation") if row.get("valid", True) else row.get("raw")
        if (row.get("prediction") if row.get("valid", True) else "invalid", _cell(said)) != (e["prediction"], e["explanation"]):
            raise SystemExit(f"{path}: {e['id']}'s row is not the run's answer: the table is not from the predictions beside it")
    path.write_text(side_by_side_markdown(examples, "flute", "val"), encoding="utf-8")
    return len(examples)


def strip_page(path: Path, ids: dict[tuple[str, str, str], list[str]]) -> int:
    """A page's copied side-by-side tables with ids for texts, and the note on how to see them above the first. Rows done."""
    lines = path.read_text(encoding="utf-8").split("\n")
    done, first, i = 0, None, 0
    while i < len(lines):
        if not lines[i].startswith(OLD_HEAD):
            i += 1
            continue
        rows, end = example_rows(lines, i, ids)
        new = ["| id | gold | figlang | figlang's explanation |", "|---|---|---|---|"]
        new += [f"| {r['id']} | {r['gold']} | {r['prediction']} | {r['explanation'].replace('|', BAR)} |" for r in rows]
        lines[i:end] = new
        first = i if first is None else first
        done += len(rows)
        i += len(new)
    if first is not None:
        at = next((k for k in range(first - 1, max(first - 4, 0), -1) if lines[k].startswith("#")), first)  # above its heading
        lines[at:at] = [str(texts_note("flute", "val")), ""]
        path.write_text("\n".join(lines), encoding="utf-8")
    return done


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
    quoting = [p for p in (*sorted(ROOT.rglob("*.examples.md")), *PAGES) if OLD_HEAD in p.read_text(encoding="utf-8")]
    if not quoting:
        return
    data_dir = sys.argv[sys.argv.index("--data-dir") + 1] if "--data-dir" in sys.argv else None
    ids = flute_ids(RunContext.create(data_dir))
    for path in quoting:
        rows = strip_examples_file(path, ids) if path.name.endswith(".examples.md") else strip_page(path, ids)
        print(f"{path}: {rows} example rows give their FLUTE ids instead of the texts")


if __name__ == "__main__":
    main()
