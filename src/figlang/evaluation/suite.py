"""The suite, figlang's main job (`figlang suite`, :func:`figlang.suite`): one offline model on the dev
sets of all three benchmarks, one table.

A fixed list of (task, split, method, options) runs through the evaluation harness
(:func:`figlang.evaluation.evaluate`), so every entry writes the usual ``predictions.jsonl``,
``results.json`` and ``results.md`` under ``<out>/<entry>/`` and goes through the request cache
(an interrupted suite resumes; a repeated one costs nothing). The model is loaded once and
shared by the entries. At the end one combined table is made (task, split, method, items,
accuracy with its 95% bootstrap CI, the majority-class rate of the same items, accuracy per gold
label and per figure / pair type) and written as ``<out>/suite.md`` and ``<out>/suite.json``.

Sizes: an entry runs on its full split unless it has a default cap (``SuiteEntry.limit``) or
``--limit N`` is given; a capped entry runs on a seeded sample stratified by gold label (not the
first N items, which for IMPLI would all come from one label's file). The default list and caps
are chosen so that the suite finishes in under 10 minutes with smollm2-135m on a 2-core CPU:
the built-in entries run their whole splits except IMPLI's 1,157 manual pairs (a 500-pair sample;
676 s for all of them in float32 on an idle AVX2-only 2-core machine, 362 s in bfloat16 on an AVX512-BF16 one).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shlex
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.errors import FiglangError
from ..data.io import atomic_write, write_json
from ..data.paths import resolve_data_dir
from ..data.registry import get_task
from .harness import evaluate

DEFAULT_MODEL = "smollm2-135m"
DEFAULT_DTYPE = "auto"  # bfloat16 where the CPU has AVX512-BF16/AMX (1.9x less CPU time for smollm2-135m), else float32 (bf16 is emulated there, several times slower)
DEFAULT_CAP = 75  # items per entry for a quick look (`--limit`); the default is the whole splits


@dataclass(frozen=True)
class SuiteEntry:
    """One line of the suite: a method on a task split."""

    name: str  # short id; also the entry's output folder
    task: str
    split: str | None
    method: str
    options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None  # default cap on items (a label-stratified sample); None = the whole split
    note: str = ""


# The best cheap zero-shot method per benchmark (docs/zero_shot_results.md): PMI-normalised LM
# scoring for the cloze sets; label-word scoring for NLI (explanations off: FLUTE Acc@0 is label
# accuracy, and generating explanations would dominate the run time). Content-free calibration
# was chosen on samples of FLUTE *train* (it helps: 42 -> 64%) and IMPLI *silver* pairs (it hurts:
# 70 -> 29%), never on the sets reported here: so FLUTE is calibrated and IMPLI is not
# (uncalibrated, smollm2-135m answers "Entails" to every pair).
DEFAULT_SUITE: tuple[SuiteEntry, ...] = (
    SuiteEntry("idiom-dev", "idiom-cloze", "dev", "lm-score", {"norm": "pmi"}),
    SuiteEntry("simile-dev", "simile-cloze", "dev", "lm-score", {"norm": "pmi"}),
    SuiteEntry("flute-val", "flute", "val", "nli-score", {"explain": False, "calibrate": "content-free"}, note="Acc@0 = label accuracy"),
    # IMPLI's 1,157 manual pairs took 280 of the suite's 676 s in float32 on an AVX2-only 2-core machine: a
    # 500-pair label-stratified sample keeps the whole suite under 10 minutes there (--full runs all of them).
    SuiteEntry("impli-idioms-manual", "impli-idioms-manual", "all", "nli-score", {}, limit=500),
)


def suite_entries(only: list[str] | None = None) -> list[SuiteEntry]:
    """The default entries, or those named in ``only`` (entry names or task names), in suite order."""
    entries = list(DEFAULT_SUITE)
    if not only:
        return entries
    wanted = [w.strip() for item in only for w in item.split(",") if w.strip()]
    known = {e.name for e in entries} | {e.task for e in entries}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise FiglangError(f"unknown suite entr{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
                           f"the suite has: {', '.join(e.name for e in entries)}")  # fmt: skip
    return [e for e in entries if e.name in wanted or e.task in wanted]


def _gold(record: Any) -> str:
    label = getattr(record, "label", None)
    return "unknown" if label is None else str(label)


def stratified_sample(records: list[Any], n: int, seed: int) -> list[Any]:
    """``n`` records (all when there are fewer), drawn per gold label in proportion to its share
    (largest remainders), seeded; returned in their original order."""
    if n >= len(records):
        return list(records)
    by_label: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        by_label[_gold(r)].append(i)
    labels = sorted(by_label)
    quotas = {lb: n * len(by_label[lb]) / len(records) for lb in labels}
    take = {lb: int(q) for lb, q in quotas.items()}
    for lb in sorted(labels, key=lambda lb: (-(quotas[lb] - take[lb]), lb))[: n - sum(take.values())]:
        take[lb] += 1
    chosen: list[int] = []
    for lb in labels:
        chosen += random.Random(f"{seed}:{lb}").sample(by_label[lb], take[lb])
    return [records[i] for i in sorted(chosen)]


def _sampled_task(task: Any, split: str, n: int, seed: int) -> Any:
    """The task with ``split`` replaced by a label-stratified sample of ``n`` records (other splits untouched)."""
    loader = task.loader

    def load(s: str, root: Path, options: Any) -> list:
        records = loader(s, root, options)
        return stratified_sample(records, n, seed) if s == split else records

    return dataclasses.replace(task, loader=load)


def _opt(value: Any) -> str:
    """An option value as it is written on the command line (-O key=value)."""
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _acc(a: dict[str, Any] | None) -> str:
    if not a:
        return "-"
    return f"{_pct(a['accuracy'])} [{_pct(a['ci_low'])}, {_pct(a['ci_high'])}]"


def _groups(groups: dict[str, Any] | None) -> str:
    if not groups:
        return ""
    return "; ".join(f"{k} {_pct(v['accuracy'])} (n={v['n']})" for k, v in groups.items())


@dataclass
class SuiteRow:
    entry: SuiteEntry
    split: str
    n: int
    n_split: int
    sampled: bool
    metrics: dict[str, Any]
    majority: float | None
    seconds: float
    out_dir: Path | None
    cache: dict[str, Any]

    @property
    def by_label(self) -> dict[str, Any]:
        return self.metrics.get("by_gold_label") or {}

    @property
    def by_type(self) -> tuple[str, dict[str, Any]]:
        for key in ("by_figure_type", "by_pair_type"):
            groups = self.metrics.get(key) or {}
            if len(groups) > 1:
                return key[3:], groups
        return "", {}

    def to_dict(self) -> dict[str, Any]:
        kind, groups = self.by_type
        return {
            "entry": self.entry.name, "task": self.entry.task, "split": self.split, "method": self.entry.method,
            "options": self.entry.options, "n": self.n, "n_split": self.n_split, "sampled": self.sampled,
            "accuracy": self.metrics.get("accuracy"), "majority": self.majority, "by_gold_label": self.by_label,
            "by_type": {"kind": kind, "groups": groups} if kind else None, "n_invalid": self.metrics.get("n_invalid", 0),
            "seconds": round(self.seconds, 1), "out_dir": str(self.out_dir) if self.out_dir else None, "cache": self.cache,
        }  # fmt: skip


@dataclass
class SuiteResult:
    model: str
    rows: list[SuiteRow]
    seconds: float
    load_average: tuple[float, float, float] | None
    threads: int | None
    out: Path | None
    dtype: str | None = None
    cpu_seconds: float | None = None
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "dtype": self.dtype, "seconds": round(self.seconds, 1),
                "cpu_seconds": round(self.cpu_seconds, 1) if self.cpu_seconds is not None else None,
                "load_average_end": self.load_average, "threads": self.threads, "rows": [r.to_dict() for r in self.rows]}  # fmt: skip


def entry_command(row: SuiteRow, model: str, dtype: str | None, seed: int = 0) -> str:
    """The command that reproduces one entry alone: `figlang eval` for a whole split; for an entry run on a
    sample, `figlang suite --only` with the same size and seed (`figlang eval` has no stratified samples)."""
    e = row.entry
    if row.sampled:
        parts = ["figlang", "suite", "--only", e.name, "--model", model]
        if e.limit is None or row.n != e.limit:
            parts += ["--limit", str(row.n)]
        if seed:
            parts += ["--seed", str(seed)]
        if dtype:
            parts += ["--dtype", dtype]
        return " ".join(shlex.quote(p) for p in parts)
    parts = ["figlang", "eval", "-t", e.task, "-s", row.split, "-m", e.method, "--model", model]
    for k, v in e.options.items():
        parts += ["-O", f"{k}={_opt(v)}"]
    if dtype:
        parts += ["-O", f"dtype={dtype}"]
    return " ".join(shlex.quote(p) for p in parts)


def run_suite(
    model: str = DEFAULT_MODEL,
    data_dir: str | Path | None = None,
    out: str | Path | None = None,
    limit: int | None = None,
    entries: list[SuiteEntry] | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    threads: int | None = None,
    seed: int = 0,
    progress: bool = True,
    full: bool = False,
    dtype: str | None = DEFAULT_DTYPE,
) -> SuiteResult:
    """Run the suite's entries with ``model`` through the harness; the rows of the combined table.

    Writes ``suite.md`` and ``suite.json`` (and each entry's run folder) under ``out`` when given.
    A sampled entry says so in its own results.json (``suite_sample``), written with the run.
    """
    if limit is not None and limit < 1:
        raise FiglangError(f"--limit must be at least 1, got {limit}")
    root = resolve_data_dir(data_dir)  # once, for every entry
    out_dir = Path(out) if out else None
    backend: dict[str, Any] = {"threads": threads} if threads else {}
    if dtype == "auto":  # resolved here so that the table, the results and the commands name the dtype that ran
        from ..models.devices import auto_cpu_dtype  # no torch: reads the CPU flags

        dtype = auto_cpu_dtype()
    if dtype:
        backend["dtype"] = dtype
    rows: list[SuiteRow] = []
    start, cpu_start = time.perf_counter(), time.process_time()
    for entry in entries if entries is not None else list(DEFAULT_SUITE):
        task = get_task(entry.task)
        split = task.check_split(entry.split)
        n_split = len(task.load(split, root))
        caps = [x for x in ((None if full else entry.limit), limit) if x is not None]
        cap = min(caps) if caps else None
        sampled = cap is not None and cap < n_split
        run_task = _sampled_task(task, split, cap, seed) if sampled else task
        t0 = time.perf_counter()
        sample = {"suite_sample": {"n": cap, "of": n_split, "how": "stratified by gold label", "seed": seed}} if sampled else None
        result = evaluate(
            run_task, entry.method, model=model, split=split, data_dir=root, out_dir=out_dir / entry.name if out_dir else None,
            cache_dir=cache_dir, use_cache=use_cache, seed=seed, method_options={**entry.options, **backend}, progress=progress,
            extra=sample,
        )  # fmt: skip
        counts = Counter(_gold(r) for r in result.records)
        majority = max(counts.values()) / len(result.records) if result.records else None
        rows.append(SuiteRow(entry, split, len(result.records), n_split, sampled, result.metrics, majority,
                             time.perf_counter() - t0, result.out_dir, result.results.get("run", {}).get("cache", {})))  # fmt: skip
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    result = SuiteResult(model, rows, time.perf_counter() - start, load, threads, out_dir, dtype,
                         time.process_time() - cpu_start, seed)  # fmt: skip
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        with atomic_write(out_dir / "suite.md") as f:
            f.write(suite_markdown(result))
        write_json(out_dir / "suite.json", result.to_dict())
    return result


def _n_cell(row: SuiteRow) -> str:
    return f"{row.n}" if not row.sampled else f"{row.n} of {row.n_split}*"


def suite_markdown(result: SuiteResult) -> str:
    lines = [
        f"# figlang suite: {result.model}",
        "",
        "| task | split | method | n | accuracy % [95% CI] | majority % | by gold label | by figure / pair type |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result.rows:
        kind, groups = r.by_type
        method = r.entry.method + "".join(f" {k}={_opt(v)}" for k, v in r.entry.options.items())
        lines.append(f"| {r.entry.task} | {r.split} | {method} | {_n_cell(r)} | {_acc(r.metrics.get('accuracy'))} | "
                     f"{_pct(r.majority)} | {_groups(r.by_label)} | {(kind + ': ' + _groups(groups)) if kind else ''} |")  # fmt: skip
    lines.append("")
    if any(r.sampled for r in result.rows):
        lines.append("\\* a seeded sample stratified by gold label (not the whole split).")
        lines.append("")
    load = ", ".join(f"{x:.2f}" for x in result.load_average) if result.load_average else "n/a"
    cpu = f", {result.cpu_seconds:.0f} CPU s" if result.cpu_seconds is not None else ""
    lines.append(f"Model weights in {result.dtype or 'the backend default dtype'}. Wall time {result.seconds:.0f} s{cpu} "
                 f"(load average at the end: {load}; torch threads: {result.threads or 'default'}). "
                 "Per-entry predictions and results (data checksums, method fingerprint, versions): the entry folders.")  # fmt: skip
    if result.rows:  # every entry, a sampled one too (as `figlang suite --only`, which draws the same sample)
        commands = [entry_command(r, result.model, result.dtype, result.seed) for r in result.rows]
        lines += ["", "The same runs one at a time:", "", "```bash"] + commands + ["```"]
    lines.append("")
    return "\n".join(lines)
