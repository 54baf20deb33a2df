"""Paired significance between two runs on the same items (the narrative paper compared systems with a paired t-test)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..data.errors import FiglangError
from ..metrics.significance import mcnemar, paired_t_test, wilcoxon_signed_rank
from .runs import Run, load_run

#: What an undefined (NaN) paired t-test means: the differences have zero variance (all-zero ones are p = 1).
T_TEST_UNDEFINED = "undefined: every paired difference is the same"


def _refuse_unscored(run: Run) -> None:
    """A predict-only run has no real correctness: its gold labels may be hidden placeholders (narrative test sets)."""
    if run.results.get("scored") is False:
        raise FiglangError(
            f"{run.path} is a predict-only run (results.json says scored: false): it was not scored, and its gold labels may be "
            "hidden placeholders (the narrative test sets), so it has no per-item correctness to compare. Compare runs scored "
            "against real labels: rerun without --predict-only on a split with labels (e.g. dev), or score the predictions "
            "with `figlang eval -p FILE` against gold labels you have"
        )


def _data_warnings(a: Run, b: Run) -> list[str]:
    """Why the two runs may not have read the same gold data (the task and split names alone do not show it)."""

    def files(run: Run) -> dict[str, Any]:
        return {f.get("path"): f.get("sha256") for f in ((run.results.get("data") or {}).get("files") or [])}

    fa, fb = files(a), files(b)
    out: list[str] = []
    if fa and fb:
        if sorted(map(str, fa.values())) != sorted(map(str, fb.values())):
            differ = sorted(p for p in fa.keys() & fb.keys() if fa[p] != fb[p])
            only = sorted(fa.keys() ^ fb.keys())
            detail = "; ".join(([f"other sha256 for {', '.join(differ[:5])}"] if differ else [])
                               + ([f"files read by one run only: {', '.join(map(str, only[:5]))}"] if only else []))  # fmt: skip
            out.append(f"the runs read different data files (results.json \"data\" sha256 values differ: {detail}); "
                       "items with the same id may have different gold labels or inputs")  # fmt: skip
    ra, rb = (run.results.get("task", {}).get("records_sha256") for run in (a, b))
    if ra and rb and ra != rb:
        out.append("the runs scored different records (results.json task.records_sha256 differs)")
    if not (fa and fb) and not (ra and rb):
        out.append("cannot check that the runs read the same data: a results.json has no data checksums")
    return out


def _readable_test(t: dict[str, Any]) -> dict[str, Any]:
    """NaN statistic or p-value (not JSON, and no test's verdict) becomes None with the reason in ``undefined``."""
    if not any(isinstance(t.get(k), float) and math.isnan(t[k]) for k in ("statistic", "p_value")):
        return t
    reason = T_TEST_UNDEFINED if "t-test" in t["test"] else f"undefined: {(t.get('details') or {}).get('note', 'the test gives no value here')}"
    return {**t, "statistic": None, "p_value": None, "undefined": reason}


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    """Paired tests on the items both runs scored; unpaired items are counted, and differing data is warned about."""
    a, b = load_run(run_a), load_run(run_b)
    for run in (a, b):
        _refuse_unscored(run)
    if a.task_split != b.task_split:
        raise FiglangError(f"runs are on different items: {a.task_split} vs {b.task_split}")
    ca = {r["id"]: r for r in a.rows if r.get("correct") is not None}
    cb = {r["id"]: r for r in b.rows if r.get("correct") is not None}
    ids = [i for i in ca if i in cb]
    if not ids:
        raise FiglangError("the runs share no scored items (generation runs have no per-item correctness to compare)")
    xa = [float(ca[i]["correct"]) for i in ids]
    xb = [float(cb[i]["correct"]) for i in ids]
    tests = [_readable_test(paired_t_test(xa, xb).to_dict()), _readable_test(mcnemar(xa, xb).to_dict())]
    sa = [ca[i].get("explanation_score") for i in ids]
    sb = [cb[i].get("explanation_score") for i in ids]
    if all(v is not None for v in sa + sb):
        tests.append(_readable_test(wilcoxon_signed_rank(sa, sb).to_dict()))
    return {
        "task": a.task_split[0], "split": a.task_split[1], "n_paired": len(ids),
        "only_in_a": len(ca) - len(ids), "only_in_b": len(cb) - len(ids),
        "a": {"run": a.label, "accuracy": sum(xa) / len(xa)},
        "b": {"run": b.label, "accuracy": sum(xb) / len(xb)},
        "both_right": sum(1 for x, y in zip(xa, xb) if x and y),
        "only_a_right": sum(1 for x, y in zip(xa, xb) if x and not y),
        "only_b_right": sum(1 for x, y in zip(xa, xb) if y and not x),
        "both_wrong": sum(1 for x, y in zip(xa, xb) if not x and not y),
        "tests": tests,
        "warnings": _data_warnings(a, b),
    }  # fmt: skip


def print_comparison(c: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    for warning in c.get("warnings", []):
        console.print(f"[yellow]warning: {escape(warning)}[/yellow]")
    console.print(f"[bold]{c['task']} / {c['split']}[/bold]: {c['n_paired']} paired items")
    unpaired = f"  unpaired (scored in one run only, left out of the tests): {c['only_in_a']} only in A, {c['only_in_b']} only in B"
    console.print(f"[yellow]{unpaired}[/yellow]" if c["only_in_a"] or c["only_in_b"] else unpaired)
    console.print(f"  A = {escape(c['a']['run'])}: {100 * c['a']['accuracy']:.2f}%")
    console.print(f"  B = {escape(c['b']['run'])}: {100 * c['b']['accuracy']:.2f}%")
    console.print(f"  both right {c['both_right']}, only A {c['only_a_right']}, only B {c['only_b_right']}, both wrong {c['both_wrong']}")
    table = Table(title="paired tests (two-sided)", title_justify="left")
    for col in ("test", "statistic", "p-value", "n", "significant at 0.05"):
        table.add_column(col)
    for t in map(_readable_test, c["tests"]):
        if t.get("undefined"):
            table.add_row(t["test"], "undefined", "undefined", str(t["n"]), t["undefined"])
        else:
            table.add_row(t["test"], f"{t['statistic']:.4g}", f"{t['p_value']:.4g}", str(t["n"]), "yes" if t["p_value"] < 0.05 else "no")
    console.print(table)
