"""The selection grid of the meaning-aware and knowledge-enhanced LM scorers (issue 22): every choice in one pass.

Each block scores one kind of request for every item of a split with the figlang method that owns it
and keeps the raw log-probabilities, so that every normalisation and aggregation is read off the same
scores without scoring twice:

* ``plain``: ``lm-score`` (log P(C | N)); ``neutral``: log P(C | neutral prompt) (PMI's baseline);
* ``meaning-before`` / ``meaning-after``: ``lm-score-meaning`` with ``position=before|after``;
* ``know-{context,literal}-{if,nf}``: ``lm-score-knowledge`` with that inference kind and
  ``order=inference-first|narrative-first`` (the 12 log-probabilities per option are kept).

Blocks are written to ``OUT/<task>-<split>-<block>.json`` as they finish (a rerun skips finished ones),
with the CPU seconds they took: the cost ratios against ``plain`` come from these. ``--analyse`` reads
them and writes ``OUT/grid.json`` and ``OUT/grid.md`` (accuracy of every configuration).

    PYTHONPATH=src OMP_NUM_THREADS=1 python scripts/meaning_grid.py --task idiom-cloze --split selection \
        --blocks plain,neutral,meaning-before,meaning-after,know-context-nf,know-literal-nf --out runs/grid
    python scripts/meaning_grid.py --analyse --out runs/grid
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

BLOCKS = ("plain", "neutral", "meaning-before", "meaning-after", "know-context-if", "know-context-nf", "know-literal-if", "know-literal-nf")


def run_block(task: str, split: str, block: str, model: str, threads: int, data_dir: str, out: Path, sample: int = 0) -> None:
    from figlang.data.registry import get_task
    from figlang.backends.base import ScoreRequest
    from figlang.methods.base import METHODS
    from figlang.methods.prompted import prompts as P

    path = out / f"{task}-{split}-{block}{f'-n{sample}' if sample else ''}.json"
    if path.exists():
        print(f"{path} exists: skipped")
        return
    records = get_task(task).load(split, data_dir)
    if sample:  # a seeded subset (by the hash of the id: the same items for every block of a sample)
        records = sorted(records, key=lambda r: hashlib.sha256(f"meaning-grid:{r.id}".encode()).hexdigest())[:sample]
    opts = {"threads": threads, "dtype": "float32"}
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    rows: list[dict] = []
    if block == "neutral":
        lm = METHODS.create("lm-score", model=model, **opts).lm
        reqs = [
            ScoreRequest(P.NEUTRAL_PROMPTS[P.DEFAULT_NEUTRAL], P.LM_SCORE_CONTINUATION.format(option=o)) for r in records for o in r.options
        ]
        t_cpu, t_wall = time.process_time(), time.perf_counter()
        res = lm.score(reqs)
        k = 0
        for r in records:
            rows.append({"id": r.id, "label": r.label, "neutral": [x.logprob for x in res[k : k + len(r.options)]]})
            k += len(r.options)
    else:
        if block == "plain":
            m = METHODS.create("lm-score", model=model, norm="sum", **opts)
        elif block.startswith("meaning-"):
            m = METHODS.create("lm-score-meaning", model=model, norm="sum", position=block.split("-")[1], **opts)
        else:
            _, kind, order = block.split("-")
            m = METHODS.create(
                "lm-score-knowledge",
                model=model,
                knowledge=kind,
                norm="sum",
                order="inference-first" if order == "if" else "narrative-first",
                **opts,
            )
        m.lm  # load before the clock starts  # noqa: B018
        t_cpu, t_wall = time.process_time(), time.perf_counter()
        preds = m.predict(records)
        for r, p in zip(records, preds):
            row = {"id": r.id, "label": r.label, "logprob": p.meta.get("logprob"), "n_tokens": p.meta.get("n_tokens")}
            for key in ("meaning", "meaning_source", "per_inference"):
                if key in p.meta:
                    row[key] = p.meta[key]
            rows.append(row)
    cpu, wall = time.process_time() - t_cpu, time.perf_counter() - t_wall
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(
            {
                "task": task,
                "split": split,
                "block": block,
                "model": model,
                "threads": threads,
                "sample": sample,
                "cpu_s": cpu,
                "wall_s": wall,
                "n": len(rows),
                "rows": rows,
            }
        )
    )
    os.replace(tmp, path)
    print(f"{task}/{split} {block}: {len(rows)} items, {cpu:.1f} CPU s, {wall:.1f} s wall")


def _lse(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values) / len(values))


AGG = {"lse": _lse, "mean": lambda v: sum(v) / len(v), "max": max}


def _acc(rows: list[dict], scores: dict[str, list[float]]) -> float:
    right = 0
    for r in rows:
        s = scores[r["id"]]
        best = max(range(len(s)), key=lambda i: (s[i], -i))
        right += best == r["label"]
    return 100.0 * right / len(rows)


@dataclass
class _Rows:
    """The grid rows of one task and split: each configuration's accuracy and cost beside plain scoring."""

    table: list[dict]
    task: str
    split: str
    got: dict[str, dict]  # block name → its scores file
    rows: list[dict]  # plain scoring's rows
    ntok: dict[str, list[int]]
    neutral: dict[str, list[float]] | None

    def add(self, config: str, block: str, scores: dict[str, list[float]]) -> None:
        b, rows, base_cpu = self.got[block], self.rows, self.got["plain"]["cpu_s"]
        these = [r for r in rows if r["id"] in scores]
        per_item = base_cpu / len(rows)  # plain scoring's CPU seconds per item: the cost ratio is per item
        cost = round(b["cpu_s"] / len(these) / per_item, 2) if base_cpu and block != "plain" else (1.0 if block == "plain" else None)
        self.table.append(
            {
                "task": self.task,
                "split": self.split,
                "config": config + (f" [sample of {len(these)}]" if len(these) < len(rows) else ""),
                "n": len(these),
                "accuracy": round(_acc(these, scores), 2),
                "cpu_s": round(b["cpu_s"], 1),
                "cost_vs_plain": cost,
            }
        )

    def norms(self, prefix: str, block: str, cond: dict[str, list[float]]) -> None:
        ntok, neutral = self.ntok, self.neutral
        self.add(f"{prefix} sum", block, cond)
        self.add(f"{prefix} token", block, {i: [v / max(n, 1) for v, n in zip(cond[i], ntok[i])] for i in cond})
        if neutral and all(i in neutral for i in cond):
            self.add(f"{prefix} pmi", block, {i: [v - u for v, u in zip(cond[i], neutral[i])] for i in cond})


def analyse(out: Path) -> None:
    blocks: dict[tuple[str, str], dict[str, dict]] = {}
    for f in sorted(out.glob("*.json")):
        if f.name == "grid.json":
            continue
        d = json.loads(f.read_text())
        key = d["block"] + (f"@{d['sample']}" if d.get("sample") else "")
        blocks.setdefault((d["task"], d["split"]), {})[key] = d
    table: list[dict] = []
    for (task, split), got in sorted(blocks.items()):
        if "plain" not in got:
            continue
        plain = {r["id"]: r for r in got["plain"]["rows"]}
        rows = got["plain"]["rows"]
        neutral = {r["id"]: r["neutral"] for k, b in got.items() if k.split("@")[0] == "neutral" for r in b["rows"]} or None
        grid = _Rows(table, task, split, got, rows, {i: r["n_tokens"] for i, r in plain.items()}, neutral)
        add, norms = grid.add, grid.norms

        norms("lm-score", "plain", {i: r["logprob"] for i, r in plain.items()})
        for pos, smp in [(p_, s_) for p_ in ("before", "after") for s_ in ["", *sorted({k.split("@")[1] for k in got if "@" in k})]]:
            block = f"meaning-{pos}" + (f"@{smp}" if smp else "")
            if block in got:
                cond = {r["id"]: r["logprob"] for r in got[block]["rows"]}
                norms(f"lm-score-meaning position={pos}", block, cond)
                add(
                    f"lm-score-meaning position={pos} meaning-pmi",
                    block,
                    {i: [v - p for v, p in zip(cond[i], plain[i]["logprob"])] for i in cond},
                )
                sources: dict[str, int] = {}
                for r in got[block]["rows"]:
                    sources[str(r.get("meaning_source"))] = sources.get(str(r.get("meaning_source")), 0) + 1
                table[-1]["meaning_sources"] = sources
        samples = sorted({k.split("@")[1] for k in got if "@" in k})
        for smp in samples:  # plain scoring on the same sampled items, for the knowledge rows beside it
            ids = {r["id"] for k, b in got.items() if k.endswith(f"@{smp}") for r in b["rows"]}
            cond = {i: r["logprob"] for i, r in plain.items() if i in ids}
            norms("lm-score", "plain", cond)
        for kind, order, smp in [(k, o, s_) for k in ("context", "literal") for o in ("if", "nf") for s_ in ["", *samples]]:
            block = f"know-{kind}-{order}" + (f"@{smp}" if smp else "")
            if block not in got:
                continue
            per = {r["id"]: r["per_inference"] for r in got[block]["rows"]}
            name = f"lm-score-knowledge knowledge={kind} order={'inference-first' if order == 'if' else 'narrative-first'}"
            for agg, f in AGG.items():
                cond = {i: [f([row[o] for row in per[i]]) for o in range(len(per[i][0]))] for i in per}
                norms(f"{name} aggregate={agg}", block, cond)
    (out / "grid.json").write_text(json.dumps(table, indent=1))
    lines = ["| task | split | configuration | n | accuracy % | CPU s | cost vs plain |", "|---|---|---|---|---|---|---|"]
    for t in table:
        lines.append(
            f"| {t['task']} | {t['split']} | {t['config']} | {t['n']} | {t['accuracy']:.2f} | {t['cpu_s']} | {t['cost_vs_plain']} |"
        )
    (out / "grid.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def derive_token(run: Path, out: Path) -> None:
    """A norm=pmi run's predictions re-read as norm=token: each option's score = logprob / n_tokens, both kept in the
    pmi run's meta, which is exactly what the same method with ``-O norm=token`` computes from the same requests."""
    from figlang.core.io import read_jsonl

    rows = read_jsonl(run / "predictions.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.jsonl", "w", encoding="utf-8") as f:
        for d in rows:
            meta = dict(d.get("meta") or {})
            scores = [lp / max(n, 1) for lp, n in zip(meta["logprob"], meta["n_tokens"])]
            best = max(scores)
            meta.update({"tie": scores.count(best) > 1, "derived": f"norm=token from {run.name} (logprob / n_tokens)"})
            meta.pop("neutral_logprob", None)
            f.write(json.dumps({**d, "prediction": scores.index(best), "scores": scores, "meta": meta}) + "\n")
    print(f"wrote {out / 'predictions.jsonl'} ({len(rows)} items)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", action="append", default=[])
    ap.add_argument("--split", default="selection")
    ap.add_argument("--blocks", default="plain,neutral,meaning-before,meaning-after")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data-dir", default=os.environ.get("FIGLANG_DATA_DIR", "../shared/data"))
    ap.add_argument("--out", type=Path, default=Path("runs/grid"))
    ap.add_argument("--sample", type=int, default=0, help="score a seeded subset of N items (0: all)")
    ap.add_argument("--analyse", action="store_true")
    ap.add_argument("--derive-token", nargs=2, type=Path, metavar=("PMI_RUN", "OUT"), help="re-read a norm=pmi run as norm=token")
    a = ap.parse_args()
    if a.analyse:
        analyse(a.out)
        return
    if a.derive_token:
        derive_token(*a.derive_token)
        return
    for block in a.blocks.split(","):
        if block not in BLOCKS:
            raise SystemExit(f"unknown block {block!r}: choose from {', '.join(BLOCKS)}")
        for task in a.task or ["idiom-cloze", "simile-cloze"]:
            run_block(task, a.split, block, a.model, a.threads, a.data_dir, a.out, a.sample)


if __name__ == "__main__":
    main()
