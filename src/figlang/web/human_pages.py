"""The FLUTE human-evaluation form: judges rate the explanations of a `figlang human flute-export` folder, and every
answer is checked by `figlang human flute-import`'s own reader before it is stored."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for

from figlang.core.errors import FiglangError
from figlang.core.io import iter_json_objects, write_jsonl
from figlang.metrics.flute_human_eval import RATING_NAMES, SHORTCOMINGS, import_flute_judgements, load_flute_key
from figlang.web.serving import check_post, config, queue_page, run_folder, state

#: `figlang human flute-export`'s file stem, and the judgement file the form writes beside them (one row per item and
#: judge, the format `figlang human flute-import` reads).
HUMAN_STEM = "flute_human_eval"
HUMAN_ANSWERS = "answers.jsonl"
PER_PAGE = 5

pages = Blueprint("human", __name__)


def human_exports(root: Path, max_depth: int = 5) -> list[str]:
    """Folders written by `figlang human flute-export` under ``root``."""
    return sorted(
        p.parent.relative_to(root).as_posix()
        for p in root.rglob(f"{HUMAN_STEM}_manifest.json")
        if len(p.relative_to(root).parts) <= max_depth + 1
    )


def human_export(rel: str) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    """An export folder under the runs folder: (folder, its items, its key)."""
    folder = run_folder(rel)
    items_file, key_file = folder / f"{HUMAN_STEM}_items.jsonl", folder / f"{HUMAN_STEM}_key.jsonl"
    if not items_file.is_file() or not key_file.is_file():
        raise FiglangError(f"{rel} is not a `figlang human flute-export` folder (it needs {items_file.name} and {key_file.name})")
    items = [obj for _line, obj in iter_json_objects(items_file)]
    return folder, items, load_flute_key(key_file)


def human_answers(folder: Path) -> list[dict[str, Any]]:
    path = folder / HUMAN_ANSWERS
    return [obj for _line, obj in iter_json_objects(path)] if path.is_file() and path.stat().st_size else []


@pages.get("/human")
def human_list() -> str:
    return render_template("human_list.html", exports=human_exports(config().runs_dir))


@pages.get("/human/flute/<path:rel>")
def human_page(rel: str) -> Any:
    folder, items, _key = human_export(rel)
    judge = request.args.get("judge", "").strip()
    mine = {a["item_id"]: a for a in human_answers(folder) if judge and a.get("judge") == judge}
    chunk, view = queue_page(items, lambda i: i["item_id"] not in mine, PER_PAGE)
    return render_template(
        "human.html",
        rel=rel,
        judge=judge,
        items=chunk,
        mine=mine,
        n_items=len(items),
        n_done=len(mine),
        ratings=list(RATING_NAMES.values()),
        shortcomings=SHORTCOMINGS,
        answers_file=HUMAN_ANSWERS,
        **view,
    )


def _answer_row(item: dict[str, Any], judge: str) -> dict[str, Any]:
    """The posted ratings and shortcomings of one item, as a row of the answers file."""
    form = request.form
    row: dict[str, Any] = {"item_id": item["item_id"], "judge": judge}
    for k in range(1, len(item["explanations"]) + 1):
        row[f"rating_{k}"] = form.get(f"rating_{k}", "")
        row[f"shortcomings_{k}"] = form.getlist(f"shortcomings_{k}")
    return row


def _check_answers(rows: list[dict[str, Any]], key: dict[str, Any]) -> None:
    """The importer itself reads the answers so far (only the items answered yet are asked for); FiglangError if it refuses them."""
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / HUMAN_ANSWERS
        write_jsonl(trial, rows)
        import_flute_judgements(trial, {i: key[i] for i in {r["item_id"] for r in rows} if i in key}, judges_per_item=None)


@pages.post("/human/flute/<path:rel>")
def human_post(rel: str) -> Any:
    check_post()
    folder, items, key = human_export(rel)
    form = request.form
    judge, item_id = form.get("judge", "").strip(), form.get("item_id", "")
    back: dict[str, Any] = {"judge": judge, "show": form.get("show", "todo"), "page": form.get("page", "1")}
    if not judge:
        return redirect(url_for(".human_page", rel=rel, err="write your judge name first", **back))
    item = next((i for i in items if i["item_id"] == item_id), None)
    if item is None:
        return redirect(url_for(".human_page", rel=rel, err=f"unknown item {item_id!r}", **back))
    row = _answer_row(item, judge)
    with state().file_lock:
        rows = [a for a in human_answers(folder) if (a.get("item_id"), a.get("judge")) != (item_id, judge)] + [row]
        try:
            _check_answers(rows, key)
        except FiglangError as exc:
            return redirect(url_for(".human_page", rel=rel, err=str(getattr(exc, "message", exc)), **back))
        write_jsonl(folder / HUMAN_ANSWERS, rows)
    return redirect(url_for(".human_page", rel=rel, msg=f"item {item['position']} stored for {judge}", **back))
