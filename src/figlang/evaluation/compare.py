"""Paired significance between two runs on the same items (the narrative paper compared systems with a paired t-test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.errors import FiglangError
from ..metrics.significance import mcnemar, paired_t_test, wilcoxon_signed_rank
from .runs import load_run


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    a, b = load_run(run_a), load_run(run_b)
    if a.task_split != b.task_split:
        raise FiglangError(f"runs are on different items: {a.task_split} vs {b.task_split}")
    ca = {r["id"]: r for r in a.rows if "correct" in r}
    cb = {r["id"]: r for r in b.rows if "correct" in r}
    ids = [i for i in ca if i in cb]
    if not ids:
        raise FiglangError("the runs share no scored items (generation runs have no per-item correctness to compare)")
    xa = [float(ca[i]["correct"]) for i in ids]
    xb = [float(cb[i]["correct"]) for i in ids]
    tests = [paired_t_test(xa, xb).to_dict(), mcnemar(xa, xb).to_dict()]
    sa = [ca[i].get("explanation_score") for i in ids]
    sb = [cb[i].get("explanation_score") for i in ids]
    if all(v is not None for v in sa + sb):
        tests.append(wilcoxon_signed_rank(sa, sb).to_dict())
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
    }  # fmt: skip


def print_comparison(c: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{c['task']} / {c['split']}[/bold]: {c['n_paired']} paired items")
    console.print(f"  A = {escape(c['a']['run'])}: {100 * c['a']['accuracy']:.2f}%")
    console.print(f"  B = {escape(c['b']['run'])}: {100 * c['b']['accuracy']:.2f}%")
    console.print(f"  both right {c['both_right']}, only A {c['only_a_right']}, only B {c['only_b_right']}, both wrong {c['both_wrong']}")
    table = Table(title="paired tests (two-sided)", title_justify="left")
    for col in ("test", "statistic", "p-value", "n", "significant at 0.05"):
        table.add_column(col)
    for t in c["tests"]:
        table.add_row(t["test"], f"{t['statistic']:.4g}", f"{t['p_value']:.4g}", str(t["n"]), "yes" if t["p_value"] < 0.05 else "no")
    console.print(table)
