"""Readable tables of results: Markdown for files, rich for the terminal."""

from __future__ import annotations

from typing import Any


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def _acc_cell(acc: dict[str, Any]) -> str:
    return f"{_pct(acc['accuracy'])} [{_pct(acc['ci_low'])}, {_pct(acc['ci_high'])}] (n={acc['n']})"


def summary_rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    """(metric, value) rows for one run."""
    m = results["metrics"]
    rows: list[tuple[str, str]] = []
    cov = m.get("coverage", {})
    rows.append(("items scored", f"{m.get('n_scored', 0)} of {cov.get('gold_items', '?')}"))
    if m.get("n_invalid"):
        rows.append(("invalid predictions", str(m["n_invalid"])))
    if "accuracy" in m:
        unit = (results.get("metric_config") or {}).get("ci_cluster")
        label = "accuracy % [95% CI]" if not unit else f"accuracy % [95% CI, {m['accuracy'].get('n_clusters', '?')} {unit} clusters]"
        rows.append((label, _acc_cell(m["accuracy"])))
        for key, groups in m.items():
            if key.startswith("by_") and isinstance(groups, dict):
                for g, acc in groups.items():
                    rows.append((f"  {key[3:]}={g}", _acc_cell(acc)))
    if "prediction_balance" in m:
        rows.append(("predicted options", ", ".join(f"{k}: {v}" for k, v in m["prediction_balance"].items())))
    gen = m.get("generation")
    if gen:
        for k, v in gen.items():
            if isinstance(v, (int, float)):
                rows.append((k, f"{v:.4f}" if isinstance(v, float) else str(v)))
    exp = m.get("explanations")
    if exp:
        if not exp.get("computed", True):
            rows.append(("explanation score", exp.get("reason", "not computed")))
        else:
            for k, v in exp.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    rows.append((k, f"{v:.4f}" if isinstance(v, float) else str(v)))
    return rows


def results_markdown(results: dict[str, Any]) -> str:
    t = results["task"]
    meth = results["method"]
    lines = [
        f"# {t['name']} / {t['split']}: {meth['name']}" + (f" ({meth['model']})" if meth.get("model") else ""),
        "",
        "| metric | value |",
        "|---|---|",
    ]
    lines += [f"| {k.strip()} | {v} |" for k, v in summary_rows(results)]
    backend = (results.get("run") or {}).get("backend") or {}
    if backend.get("why"):
        lines += ["", f"**Note:** {backend['why']}."]
    lines += [
        "",
        f"figlang {results['versions'].get('figlang')}, finished {results['timing']['finished']}, "
        f"{results['timing']['seconds']} s. Data files and checksums, metric configuration and versions: results.json.",
        "",
    ]
    return "\n".join(lines)


def print_summary(results: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = results["task"]
    meth = results["method"]
    title = f"{t['name']} / {t['split']} — {meth['name']}" + (f" ({meth['model']})" if meth.get("model") else "")
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("value", overflow="fold")
    for k, v in summary_rows(results):
        table.add_row(k, v)
    Console().print(table)
