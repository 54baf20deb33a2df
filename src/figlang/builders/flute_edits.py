"""FLUTE creator, sarcasm's human step: the edit tasks a person answers with a minimal-edit sarcastic contradiction.

In the paper a person, not the model, writes the contradiction of a sarcastic pair: :func:`export_edit_tasks` writes the
paraphrases waiting for one (CSV or JSONL) and :func:`import_edits` stores the answers for the next ``create`` run.
"""

from __future__ import annotations

from pathlib import Path

from figlang.core.io import atomic_write, write_jsonl
from figlang.builders.flute_checks import PromptSet, load_prompts
from figlang.builders.flute_creator import EDITS_FILE, load_human_edits, load_records
from figlang.builders.review_queue import read_table


EDIT_COLUMNS = ("task_id", "emotion", "literal_sentence", "paraphrase", "sarcastic_contradiction", "instructions")


def export_edit_tasks(out_dir: str | Path, path: str | Path, fmt: str | None = None, prompts: PromptSet | None = None) -> int:
    """Write the sarcasm edit tasks (paraphrases waiting for a person's minimal-edit sarcastic contradiction)."""
    import csv

    prompts = prompts or load_prompts()
    instructions = prompts.get("sarcasm", "contradiction").instructions
    rows = []
    for rec in load_records(out_dir).values():
        if rec["item"]["figure_type"] != "sarcasm" or rec["slots"].get("C.text", {}).get("status") not in ("pending_human", "failed"):
            continue
        if rec["slots"].get("E.text", {}).get("status") != "ok":
            continue
        f = rec["item"]["fields"]
        rows.append(
            {
                "task_id": rec["uid"],
                "emotion": f["emotion"],
                "literal_sentence": f["sentence"],
                "paraphrase": rec["slots"]["E.text"]["text"],
                "sarcastic_contradiction": "",
                "instructions": instructions,
            }
        )
    path = Path(path)
    fmt = fmt or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    if fmt == "csv":
        with atomic_write(path, encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(EDIT_COLUMNS), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    else:
        write_jsonl(path, rows)
    return len(rows)


def import_edits(out_dir: str | Path, path: str | Path) -> tuple[int, list[str]]:
    """Read filled edit tasks; store them for the next ``create`` run. Returns (stored, problems with file:line)."""
    out = Path(out_dir)
    records = load_records(out)
    stored = load_human_edits(out)
    n = 0
    seen: dict[str, int] = {}
    rows, problems = read_table(path)
    for line, row in rows:
        uid = str(row.get("task_id") or "").strip()
        text = " ".join(str(row.get("sarcastic_contradiction") or "").split())
        where = f"{path}:{line}"
        if not uid:
            problems.append(f"{where}: no task_id")
            continue
        if uid in seen:
            problems.append(f"{where}: duplicate task_id {uid!r} (first at line {seen[uid]})")
            continue
        seen[uid] = line
        if uid not in records or records[uid]["item"]["figure_type"] != "sarcasm":
            problems.append(f"{where}: unknown task_id {uid!r} (not a sarcasm item of this run)")
            continue
        if not text:
            continue  # not done yet: stays waiting
        key = f"{uid}:{text}"
        stored[uid] = {"uid": uid, "text": text, "where": where, "key": key}
        n += 1
    write_jsonl(out / EDITS_FILE, list(stored.values()))
    return n, problems


__all__ = ["EDIT_COLUMNS", "export_edit_tasks", "import_edits"]
