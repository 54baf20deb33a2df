"""Paired significance between two runs on the same items (the narrative paper compared systems with a paired t-test)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from figlang.core.context import RunContext, run_context
from figlang.core.errors import FiglangError
from figlang.data.hygiene import normalise_text
from figlang.metrics.generation import NltkSentenceBleu, RougeL, SacreSentenceBleu
from figlang.metrics.significance import mcnemar, paired_t_test, wilcoxon_signed_rank
from figlang.evaluation.runs import Run, load_run
from figlang.evaluation.scoring import check_ci_cluster, cluster_key

#: Paired-bootstrap resamples of the mean difference (percentile CI).
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_CONFIDENCE = 0.95

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
            detail = "; ".join(
                ([f"other sha256 for {', '.join(differ[:5])}"] if differ else [])
                + ([f"files read by one run only: {', '.join(map(str, only[:5]))}"] if only else [])
            )
            out.append(
                f'the runs read different data files (results.json "data" sha256 values differ: {detail}); '
                "items with the same id may have different gold labels or inputs"
            )
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
    reason = (
        T_TEST_UNDEFINED if "t-test" in t["test"] else f"undefined: {(t.get('details') or {}).get('note', 'the test gives no value here')}"
    )
    return {**t, "statistic": None, "p_value": None, "undefined": reason}


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    *,
    seed: int | None = None,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    ci_cluster: str | None = None,
    data_dir: str | Path | None = None,
    ctx: RunContext | None = None,
) -> dict[str, Any]:
    """Paired tests on the items both runs scored; unpaired items are counted, and differing data is warned about.

    Runs published without their dataset texts (#35) get them back from the run context's data folder (or
    ``data_dir``; default: the default data folder); where they cannot, the comparison says so in its warnings, and
    refuses ``ci_cluster="context"``, whose clusters are the premises and narratives themselves. The bootstrap's seed
    is ``seed``, else the context's (0 without one).

    Generation runs (no per-item correctness) are compared on per-item metric scores instead: see
    :func:`compare_generation_runs`. ``seed`` and ``n_resamples`` are the paired bootstrap's (of the accuracy
    difference, or of each metric's); ``ci_cluster`` (context | expression) resamples clusters of items instead.
    """
    ctx = run_context(ctx, data_dir=data_dir, seed=seed)  # the data folder resolved once, for both runs
    seed = ctx.seed
    a, b = load_run(run_a, data_dir=ctx.data_dir), load_run(run_b, data_dir=ctx.data_dir)
    for run in (a, b):
        _refuse_unscored(run)
        if run.texts_note and ci_cluster == "context":
            raise FiglangError(f"--ci-cluster context needs the items' texts, and {run.path}'s {run.texts_note}")
    if a.task_split != b.task_split:
        raise FiglangError(f"runs are on different items: {a.task_split} vs {b.task_split}")
    ga, gb = _is_generation(a), _is_generation(b)
    if ga != gb:
        gen, other = (a, b) if ga else (b, a)
        raise FiglangError(
            f"cannot compare a generation run with a discriminative one: {gen.path} scored generated text against "
            f"references, {other.path} scored per-item correctness; compare runs of the same kind"
        )
    check_ci_cluster(ci_cluster)  # refuse an unknown unit before any work
    if ga:
        return compare_generation_runs(a, b, seed=seed, n_resamples=n_resamples, ci_cluster=ci_cluster)
    ca = {r["id"]: r for r in a.rows if r.get("correct") is not None}
    cb = {r["id"]: r for r in b.rows if r.get("correct") is not None}
    ids = [i for i in ca if i in cb]
    if not ids:
        raise FiglangError("the runs share no scored items (no item has per-item correctness in both runs)")
    xa = [float(ca[i]["correct"]) for i in ids]
    xb = [float(cb[i]["correct"]) for i in ids]
    tests = [_readable_test(paired_t_test(xa, xb).to_dict()), _readable_test(mcnemar(xa, xb).to_dict())]
    sa = [ca[i].get("explanation_score") for i in ids]
    sb = [cb[i].get("explanation_score") for i in ids]
    if all(v is not None for v in sa + sb):  # so the lists hold numbers (casts)
        tests.append(_readable_test(wilcoxon_signed_rank(cast(list[float], sa), cast(list[float], sb)).to_dict()))
    clusters = [row_cluster(ca[i], ci_cluster) for i in ids] if ci_cluster else None
    return {
        "task": a.task_split[0],
        "split": a.task_split[1],
        "n_paired": len(ids),
        "only_in_a": len(ca) - len(ids),
        "only_in_b": len(cb) - len(ids),
        "a": {"run": a.label, "accuracy": sum(xa) / len(xa)},
        "b": {"run": b.label, "accuracy": sum(xb) / len(xb)},
        "both_right": sum(1 for x, y in zip(xa, xb) if x and y),
        "only_a_right": sum(1 for x, y in zip(xa, xb) if x and not y),
        "only_b_right": sum(1 for x, y in zip(xa, xb) if y and not x),
        "both_wrong": sum(1 for x, y in zip(xa, xb) if not x and not y),
        "tests": tests,
        "bootstrap": paired_bootstrap(xa, xb, n_resamples=n_resamples, seed=seed, clusters=clusters),
        "ci_cluster": ci_cluster,
        "warnings": _data_warnings(a, b) + [f"{r.path}: {r.texts_note}" for r in (a, b) if r.texts_note],
    }


def print_comparison(c: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    if c.get("kind") == "generation":
        print_generation_comparison(c)
        return
    console = Console()
    _print_pairing(console, c, "")
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
    bs = c.get("bootstrap")
    if bs:
        unit = f"{bs['n_clusters']} {c.get('ci_cluster')} clusters" if "n_clusters" in bs else "items"
        console.print(
            f"  accuracy A - B: {100 * bs['mean_difference']:+.2f} points, {100 * bs['confidence']:.0f}% paired bootstrap CI "
            f"[{100 * bs['ci_low']:+.2f}, {100 * bs['ci_high']:+.2f}] ({unit} resampled, {bs['n_resamples']:,}, seed {bs['seed']})"
        )


# --- generation runs -------------------------------------------------------------------------------------------------
#
# A generation run has no per-item correctness: each item is scored against its references by the metrics in
# figlang.metrics.generation. The comparison recomputes those per-item scores for both runs with the metric class and the
# configuration each run's results.json records (metrics.generation.configs), so a run's mean over its items is the
# corpus figure the evaluation reported (checked, and warned about when not), then tests the paired differences.

#: The per-item metrics compare recomputes (results.json key → metric class name in figlang.metrics.generation), in
#: report order. BERTScore is not recomputed (it needs a model); it is compared only from per-item values in the rows.
GENERATION_METRICS: tuple[str, ...] = ("rougeL", "sacrebleu_sentence", "bleu")
BERTSCORE_KEY = "bertscore_f1"

WILCOXON_ALL_ZERO = "undefined: every paired difference is zero, so the signed-rank test has nothing to rank"


def _is_generation(run: Run) -> bool:
    shape = (run.results.get("task") or {}).get("shape")
    if shape:
        return shape == "generation"
    # a minimal results.json without task.shape: the rows tell (generation rows carry references, no gold label)
    return bool(run.rows) and all("references" in r and "gold" not in r for r in run.rows)


def _comparable_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """A metric config without what does not change the scoring's definition (library versions are checked apart)."""
    out = {k: v for k, v in cfg.items() if k != "library_version"}
    if isinstance(out.get("signature"), str):
        out["signature"] = "|".join(p for p in out["signature"].split("|") if not p.startswith("version:"))
    return out


def _sacrebleu_settings(signature: str) -> dict[str, Any]:
    parts = dict(p.split(":", 1) for p in signature.split("|") if ":" in p)
    return {
        "tokenize": parts.get("tok", "13a"),
        "smooth_method": parts.get("smooth", "exp"),
        "lowercase": parts.get("case") == "lc",
        "effective_order": parts.get("eff", "yes") == "yes",
    }


def _build_metric(key: str, cfg: dict[str, Any]):
    """The metric the evaluation used for ``key``, built from its recorded config (figlang.metrics.generation)."""
    protocol = cfg.get("protocol", "max")
    if key == "rougeL":
        return RougeL(use_stemmer=bool(cfg.get("use_stemmer", False)), measure=cfg.get("measure", "fmeasure"), protocol=protocol)
    if key == "bleu":
        return NltkSentenceBleu(
            lowercase=bool(cfg.get("lowercase", False)), weights=tuple(cfg.get("weights", (0.25, 0.25, 0.25, 0.25))), protocol=protocol
        )
    if key == "sacrebleu_sentence":
        return SacreSentenceBleu(**_sacrebleu_settings(cfg.get("signature", "")), protocol=protocol)
    raise ValueError(f"no per-item metric for {key!r}")


def _generation_block(run: Run) -> dict[str, Any]:
    return (run.results.get("metrics") or {}).get("generation") or {}


def _recorded_config(run: Run, key: str, warnings: list[str]) -> dict[str, Any]:
    gen = _generation_block(run)
    cfg = (gen.get("configs") or {}).get(key)
    if cfg:
        return dict(cfg)
    protocol = gen.get("protocol") or (run.results.get("metric_config") or {}).get("generation_protocol") or "max"
    warnings.append(f"{run.path}: results.json records no configuration for {key}; using figlang's default one (protocol {protocol})")
    return {"protocol": protocol}


def _samples(row: dict[str, Any]) -> list[str]:
    """What the evaluation scored for a row: its samples, or none (scored as an empty prediction) when the prediction
    is missing or invalid (as figlang.metrics.generation_scores.generation_scores_from_records does)."""
    if row.get("missing") or row.get("valid", True) is False:
        return []
    value = row.get("prediction")
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return ["" if v is None else str(v) for v in value]


def _scored_rows(run: Run) -> dict[str, dict[str, Any]]:
    """The rows the evaluation scored: those with references (hidden test items have none)."""
    return {r["id"]: r for r in run.rows if r.get("references")}


def _per_item_bertscore(row: dict[str, Any]) -> float | None:
    for holder in (row, row.get("meta") or {}):
        value = holder.get(BERTSCORE_KEY)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def paired_bootstrap(
    scores_a: Any,
    scores_b: Any,
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = BOOTSTRAP_CONFIDENCE,
    seed: int = 0,
    clusters: list[str] | None = None,
) -> dict[str, Any]:
    """Percentile CI of mean(a - b) from resampling the paired items with replacement (seeded numpy Generator).

    With ``clusters`` (one key per item) whole clusters are resampled and the statistic is the pooled mean difference
    of the drawn clusters: an idiom's IMPLI pairs, or a narrative's, rise and fall together."""
    x, y = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    diff = x - y
    if clusters is not None:
        if len(clusters) != diff.size:
            raise ValueError(f"{len(clusters)} cluster keys for {diff.size} paired items")
        index: dict[str, int] = {}
        ids = np.asarray([index.setdefault(c, len(index)) for c in clusters])
        units, sizes = np.bincount(ids, weights=diff), np.bincount(ids).astype(float)
    else:
        units, sizes = diff, np.ones_like(diff)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    step = max(1, 2_000_000 // max(units.size, 1))  # resample in chunks: at most ~2M indices at once
    for start in range(0, n_resamples, step):
        k = min(step, n_resamples - start)
        drawn = rng.integers(0, units.size, size=(k, units.size))
        means[start : start + k] = units[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    unit = "items" if clusters is None else f"{units.size} clusters"
    return {
        "mean_difference": float(diff.mean()),
        "ci_low": float(low),
        "ci_high": float(high),
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        **({"n_clusters": int(units.size)} if clusters is not None else {}),
        "method": f"paired percentile bootstrap of the mean difference (A - B), {unit} resampled with replacement (numpy default_rng)",
    }


def row_cluster(row: dict[str, Any], unit: str) -> str:
    """The resampling cluster of a prediction row, keyed as scoring keys the records (``scoring.cluster_key``)."""
    text = row.get("premise") or row.get("narrative") or row.get("source")
    return cluster_key(unit, row["id"], normalise_text(text) if text else None, row.get("expression"))


def _generation_tests(metric: str, xa: list[float], xb: list[float]) -> list[dict[str, Any]]:
    t = _readable_test(paired_t_test(xa, xb).to_dict())
    if all(x == y for x, y in zip(xa, xb)):
        w = {
            "test": "Wilcoxon signed-rank (scipy.stats.wilcoxon)",
            "statistic": None,
            "p_value": None,
            "n": len(xa),
            "details": {"zero_method": "wilcox", "method": "auto", "median_difference": 0.0, "n_nonzero_differences": 0},
            "undefined": WILCOXON_ALL_ZERO,
        }
    else:
        w = _readable_test(wilcoxon_signed_rank(xa, xb).to_dict())
    return [{**t, "metric": metric}, {**w, "metric": metric}]


@dataclass
class _Paired:
    """Two generation runs' scored rows on the items both scored, and how their differences are resampled."""

    a: Run
    b: Run
    ra: dict[str, dict[str, Any]]
    rb: dict[str, dict[str, Any]]
    ids: list[str]
    clusters: list[str] | None
    seed: int
    n_resamples: int
    xa: list[float] = field(default_factory=list)  # the last compared metric's per-item scores, in ``ids`` order
    xb: list[float] = field(default_factory=list)

    def metric(self, key: str, warnings: list[str]) -> tuple[dict[str, Any] | None, str]:
        """One metric recomputed per item for both runs, as each run's evaluation configured it: (its entry, "") or
        (None, why it cannot be compared)."""
        a, b = self.a, self.b
        ca, cb = _recorded_config(a, key, warnings), _recorded_config(b, key, warnings)
        if _comparable_config(ca) != _comparable_config(cb):
            return None, "the runs computed it with different configurations (results.json metrics.generation.configs)"
        metric = _build_metric(key, ca)
        built = metric.config()
        if "metric" in ca and _comparable_config(built) != _comparable_config(ca):
            diff = sorted(k for k in set(built) | set(ca) if _comparable_config(built).get(k) != _comparable_config(ca).get(k))
            return None, f"its recorded configuration cannot be rebuilt here (differs in {', '.join(diff)})"
        for run, cfg in ((a, ca), (b, cb)):
            if cfg.get("library_version") and cfg["library_version"] != built.get("library_version"):
                warnings.append(
                    f"{run.path} computed {key} with {cfg.get('library')} {cfg['library_version']}, "
                    f"this environment has {built.get('library_version')}"
                )
        per_run: dict[str, dict[str, float]] = {}
        recomputed: dict[str, float] = {}
        for side, rows in (("a", self.ra), ("b", self.rb)):
            order = list(rows)
            result = metric.compute([_samples(rows[i]) for i in order], [list(rows[i]["references"]) for i in order])
            per_run[side] = dict(zip(order, result.per_item))
            recomputed[side] = result.score
        self.xa = [per_run["a"][i] for i in self.ids]
        self.xb = [per_run["b"][i] for i in self.ids]
        entry = self._entry(built.get("scale"), built)
        for side, run in (("a", a), ("b", b)):
            reported = _generation_block(run).get(key)
            entry[f"run_mean_{side}"] = recomputed[side]  # over every item the run scored, paired or not
            entry[f"results_json_{side}"] = reported
            if isinstance(reported, (int, float)) and not math.isclose(recomputed[side], reported, rel_tol=1e-9, abs_tol=1e-12):
                warnings.append(
                    f"{key} recomputed for {run.path} is {recomputed[side]:.6g}, its results.json says "
                    f"{reported:.6g}: the per-item scores may not be the evaluation's"
                )
        return entry, ""

    def bertscore(self) -> dict[str, Any] | None:
        """BERTScore from the per-item values both runs' rows carry (None when they do not: no model is loaded here)."""
        sa = [_per_item_bertscore(self.ra[i]) for i in self.ids]
        sb = [_per_item_bertscore(self.rb[i]) for i in self.ids]
        if not all(v is not None for v in sa + sb):
            return None
        self.xa, self.xb = [float(v) for v in sa], [float(v) for v in sb]  # type: ignore[arg-type]
        config = (_generation_block(self.a).get("configs") or {}).get(BERTSCORE_KEY)
        return {**self._entry("0-1", config), "source": "per-item values in predictions.jsonl"}

    def _entry(self, scale: Any, config: Any) -> dict[str, Any]:
        xa, xb = self.xa, self.xb
        return {
            "mean_a": sum(xa) / len(xa),
            "mean_b": sum(xb) / len(xb),
            "scale": scale,
            "config": config,
            "bootstrap": paired_bootstrap(xa, xb, n_resamples=self.n_resamples, seed=self.seed, clusters=self.clusters),
        }


def compare_generation_runs(
    a: Run,
    b: Run,
    *,
    seed: int = 0,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    ci_cluster: str | None = None,
) -> dict[str, Any]:
    """Paired tests of two generation runs on the items both scored, per metric (ROUGE-L, sentence sacreBLEU, NLTK BLEU).

    Each item is scored by the metric class and configuration the evaluation recorded (protocol over samples ×
    references as recorded, empty or invalid predictions scoring 0), for each run with its own rows. Reported per
    metric: each run's mean over the paired items, the paired t-test, the Wilcoxon signed-rank test (undefined when
    every difference is zero) and a seeded paired-bootstrap CI of the mean difference. BERTScore is compared only when
    both runs' rows carry per-item values (no model is loaded here).
    """
    warnings = _data_warnings(a, b)
    ra, rb = _scored_rows(a), _scored_rows(b)
    ids = [i for i in ra if i in rb]
    if not ids:
        raise FiglangError(
            "the generation runs share no items with references (hidden test references are not scored): "
            f"{len(ra)} scored items in {a.path}, {len(rb)} in {b.path}"
        )
    differing_refs = sum(1 for i in ids if list(ra[i]["references"]) != list(rb[i]["references"]))
    if differing_refs:
        warnings.append(f"{differing_refs} paired item(s) have different references in the two runs; each run is scored against its own")
    metrics: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    tests: list[dict[str, Any]] = []
    paired = _Paired(a, b, ra, rb, ids, [row_cluster(ra[i], ci_cluster) for i in ids] if ci_cluster else None, seed, n_resamples)
    for key in GENERATION_METRICS:
        entry, why = paired.metric(key, warnings)
        if entry is None:
            skipped[key] = why
            continue
        metrics[key] = entry
        tests += _generation_tests(key, paired.xa, paired.xb)
    if BERTSCORE_KEY in _generation_block(a) or BERTSCORE_KEY in _generation_block(b):
        entry = paired.bertscore()
        if entry is not None:
            metrics[BERTSCORE_KEY] = entry
            tests += _generation_tests(BERTSCORE_KEY, paired.xa, paired.xb)
        else:
            skipped[BERTSCORE_KEY] = (
                "predictions.jsonl has no per-item BERTScore in both runs, and compare loads no model; "
                "only the corpus figures in results.json exist"
            )
    if not metrics:
        raise FiglangError("no generation metric can be compared: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return {
        "kind": "generation",
        "task": a.task_split[0],
        "split": a.task_split[1],
        "n_paired": len(ids),
        "only_in_a": len(ra) - len(ids),
        "only_in_b": len(rb) - len(ids),
        "a": {"run": a.label, **{k: m["mean_a"] for k, m in metrics.items()}},
        "b": {"run": b.label, **{k: m["mean_b"] for k, m in metrics.items()}},
        "metrics": metrics,
        "skipped_metrics": skipped,
        "tests": tests,
        "ci_cluster": ci_cluster,
        "warnings": warnings,
    }


def print_generation_comparison(c: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    _print_pairing(console, c, " (generation)")
    console.print(f"  A = {escape(c['a']['run'])}")
    console.print(f"  B = {escape(c['b']['run'])}")
    tests = {(t["metric"], "t" if "t-test" in t["test"] else "w"): _readable_test(t) for t in c["tests"]}

    def p(t: dict[str, Any] | None) -> str:
        if t is None:
            return ""
        if t.get("undefined") or t.get("p_value") is None:
            return "undefined"
        return f"{t['p_value']:.4g}" + (" *" if t["p_value"] < 0.05 else "")

    first = next(iter(c["metrics"].values()))["bootstrap"]
    table = Table(
        title=f"per-item metrics, mean over the paired items; A - B with its {100 * first['confidence']:.0f}% paired bootstrap CI "
        f"({first['n_resamples']} resamples, seed {first['seed']}); two-sided p (* < 0.05)",
        title_justify="left",
    )
    for col in ("metric", "scale", "A", "B", "A - B", "bootstrap CI", "t-test p", "Wilcoxon p"):
        table.add_column(col)
    for key, m in c["metrics"].items():
        bs = m["bootstrap"]
        table.add_row(
            key,
            str(m.get("scale") or ""),
            f"{m['mean_a']:.4f}",
            f"{m['mean_b']:.4f}",
            f"{bs['mean_difference']:+.4f}",
            f"[{bs['ci_low']:+.4f}, {bs['ci_high']:+.4f}]",
            p(tests.get((key, "t"))),
            p(tests.get((key, "w"))),
        )
    console.print(table)
    for t in tests.values():
        if t.get("undefined"):
            console.print(f"  {t['metric']} {t['test']}: {escape(t['undefined'])}")
    for key, reason in c.get("skipped_metrics", {}).items():
        console.print(f"[dim]  {key} not compared: {escape(reason)}[/dim]")


def _print_pairing(console: Any, c: dict[str, Any], kind: str) -> None:
    """Warnings, the task/split line and the unpaired counts, shared by both kinds of comparison."""
    from rich.markup import escape

    for warning in c.get("warnings", []):
        console.print(f"[yellow]warning: {escape(warning)}[/yellow]")
    console.print(f"[bold]{c['task']} / {c['split']}[/bold]{kind}: {c['n_paired']} paired items")
    unpaired = f"  unpaired (scored in one run only, left out of the tests): {c['only_in_a']} only in A, {c['only_in_b']} only in B"
    console.print(f"[yellow]{unpaired}[/yellow]" if c["only_in_a"] or c["only_in_b"] else unpaired)
