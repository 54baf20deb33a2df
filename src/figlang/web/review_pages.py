"""The review pages: the verification queues of FLUTE creator runs and IMPLI generator outputs under the runs folder,
one verdict at a time, stored through the queue's own ``record_verdict`` (the checks an imported queue row gets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, redirect, render_template, request, url_for

from figlang.builders import flute_review
from figlang.builders.impli import review as impli_review
from figlang.builders.review_queue import ReviewQueue
from figlang.core.errors import FiglangError
from figlang.web.serving import check_post, config, queue_page, run_folder, state

#: Where `figlang serve` records itself as the origin of a verdict (the CLI records the queue file:line).
VERDICT_ORIGIN = "figlang serve"
#: The queues the review pages serve, by the kind their URLs name (a folder is of the first kind that holds it).
REVIEW_KINDS: dict[str, ReviewQueue] = {"flute": flute_review.REVIEW, "impli": impli_review.REVIEW}

pages = Blueprint("review", __name__)


def review_folders(root: Path, max_depth: int = 5) -> list[tuple[str, Path, str]]:
    """Folders with a verification queue under ``root``, with their kind: FLUTE creator runs (items.jsonl +
    candidates.jsonl) and IMPLI generator outputs (jsonl/*.jsonl)."""
    found: list[tuple[str, Path, str]] = []

    def walk(folder: Path, depth: int) -> None:
        kind = next((k for k, review in REVIEW_KINDS.items() if review.holds_queue(folder)), None)
        if kind is not None:
            found.append((folder.relative_to(root).as_posix(), folder, kind))
        if depth >= max_depth:
            return
        try:
            subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))
        except OSError:
            return
        for p in subs:
            walk(p, depth + 1)

    walk(root, 0)
    return found


@pages.get("/review")
def review_list() -> str:
    rows: list[tuple[str, str, dict[str, dict[str, int]], str | None]] = []
    for rel, path, kind in review_folders(config().runs_dir):
        try:
            rows.append((rel, kind, REVIEW_KINDS[kind].review_rates(path), None))
        except FiglangError as exc:
            rows.append((rel, kind, {}, str(exc)))
    return render_template("review_list.html", rows=rows)


@pages.get("/review/<any(flute, impli):kind>/<path:rel>")
def review_page(kind: str, rel: str) -> Any:
    review = REVIEW_KINDS[kind]
    folder = run_folder(rel)
    items = review.queue_items(folder)
    chunk, view = queue_page(items, lambda i: i["review"] is None)
    return render_template(
        "review.html", rel=rel, kind=kind, review=review, rates=review.review_rates(folder), items=chunk, total=len(items), **view
    )


def _verdict_row(review: ReviewQueue) -> dict[str, Any]:
    """The posted verdict as a queue row (id, revision, verdict, note; edits and reason where they apply)."""
    form = request.form
    verdict = form.get("verdict", "").strip().lower()
    row = {"id": form.get("id", ""), "revision": form.get("revision", ""), "verdict": verdict, "note": form.get("note", "")}
    if verdict == "edit":
        row.update({f"edited_{f}": form.get(f"edited_{f}", "") for f in review.editable})
    if verdict == "reject" and review.reject_reasons:
        row["reason"] = form.get("reason", "")
    return row


@pages.post("/review/<any(flute, impli):kind>/<path:rel>")
def review_post(kind: str, rel: str) -> Any:
    review = REVIEW_KINDS[kind]
    check_post()
    folder = run_folder(rel)
    row = _verdict_row(review)
    verdict = row["verdict"]
    back: dict[str, Any] = {"kind": kind, "rel": rel, "show": request.form.get("show", "todo"), "page": request.form.get("page", "1")}
    if verdict == "reject" and not review.reject_reasons and not row["note"].strip():
        return redirect(url_for(".review_page", err=f"{row['id']}: say why you reject it (the reason is kept with the verdict)", **back))
    with state().file_lock:  # one read-modify-write of verdicts.jsonl at a time
        report = review.record_verdict(folder, row, VERDICT_ORIGIN)
    if report.errors:
        return redirect(url_for(".review_page", err="; ".join(e.removeprefix(f"{VERDICT_ORIGIN}: ") for e in report.errors), **back))
    if report.blank:
        return redirect(url_for(".review_page", err=f"{row['id']}: choose accept, edit or reject", **back))
    return redirect(url_for(".review_page", msg=f"{row['id']}: {verdict} stored", **back))
