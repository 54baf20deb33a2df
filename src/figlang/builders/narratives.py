"""The narrative miner (narrative paper, section 3): corpus → candidate narratives for annotation.

A narrative is a sentence holding an idiom or a simile plus the ``context_sentences`` (4)
sentences before it in the same document, written in the benchmark's JSONL format with the
expression marked ``<b>…</b>`` (similes in their implicit form: "He feels <b>like a lake</b>.").
Options and continuations are left empty for writers (see :mod:`.annotation`).

Pipeline, per shard (a shard is one text file, or a run of ``docs_per_shard`` JSONL lines):

1. read and clean documents (:mod:`.corpus`);
2. segment every paragraph with the cheapest sentence splitter the pipeline has: spaCy's
   ``senter`` (its own 16-wide CNN, no shared ``tok2vec``, no tagger, no parser) by default;
   ``sentencizer`` (punctuation rules) or ``parser`` (full dependency parse, slow, for
   comparison) on request;
3. pre-filter each sentence on lower-case tokens only: the idiom index (every form of each
   idiom's rarest content word, then all its required words) and the simile string checks;
4. run the tagger + attribute ruler + lemmatizer on idiom candidates, and the parser too only
   on simile candidates, since the simile patterns need noun phrases and heads;
5. match idioms, extract similes, cut windows, filter by length, de-duplicate.

``ner`` is never loaded. Shards run in-process, in ``workers`` processes, or as Ray tasks; the
output is identical (merged in shard → document → sentence order). Shard outputs are written
atomically and a finished shard is not run again (resume), unless its input file changed.
A bad document is recorded and skipped; a shard whose worker crashed is reported with its
location and the rest still runs.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from figlang.core.errors import FiglangError
from figlang.core.io import atomic_write, read_jsonl, write_json
from figlang.core.text import normalise_idiom, normalise_text
from figlang.builders.corpus import DEFAULT_PATTERNS, CorpusFile, CorpusReport, Skip, discover, jsonl_line_count
from figlang.lexicon.idioms import Lexicon, LexiconEntry
from figlang.builders.narrative_shard import (
    CRASH_ENV,
    DEFAULT_MODEL,
    SEGMENTERS,
    MinerConfig,
    MinerPipeline,
    ShardFailure,
    ShardResult,
    ShardSpec,
    _versions,
    process_shard,
)

# ============================================================================================ driver


@dataclass
class MineSummary:
    out_dir: Path
    shards: int
    ran: int
    resumed: int
    failures: list[ShardFailure]
    totals: Counter
    skipped: list[Skip]
    notes: list[Skip]
    narratives_file: Path
    hits_file: Path
    duplicates_across_shards: int = 0
    workers: list[dict] = field(default_factory=list)  # per worker pid: shards, peak_rss_mb, seconds
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "out_dir": str(self.out_dir),
            "shards": self.shards,
            "ran": self.ran,
            "resumed": self.resumed,
            "failures": [f.to_dict() for f in self.failures],
            "totals": dict(sorted(self.totals.items())),
            "skipped": [s.to_dict() for s in self.skipped],
            "notes": [s.to_dict() for s in self.notes],
            "narratives_file": str(self.narratives_file),
            "hits_file": str(self.hits_file),
            "duplicates_across_shards": self.duplicates_across_shards,
            "workers": self.workers,
            "seconds": round(self.seconds, 2),
        }


def plan_shards(sources: list[CorpusFile], docs_per_shard: int = 1000) -> list[ShardSpec]:
    """One shard per text file; JSONL files cut into runs of ``docs_per_shard`` lines. Deterministic."""
    specs: list[ShardSpec] = []
    for src in sources:
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in src.display)[-80:]
        if src.kind == "jsonl":
            n = jsonl_line_count(src)
            if n == 0:
                specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}", src, None))
                continue
            for lo in range(1, n + 1, docs_per_shard):
                hi = min(n + 1, lo + docs_per_shard)
                specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}-L{lo}", src, (lo, hi)))
        else:
            specs.append(ShardSpec(len(specs), f"{len(specs):05d}-{stem}", src, None))
    return specs


def _source_stamp(src: CorpusFile) -> dict:
    try:
        st = os.stat(src.path)
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    except OSError:
        return {}


ProgressFn = Callable[[str, dict], None]


def mine_corpus(
    inputs: Iterable[str | Path],
    out_dir: str | Path,
    lexicon: Lexicon | None,
    config: MinerConfig = MinerConfig(),
    workers: int = 1,
    use_ray: bool = False,
    ray_address: str | None = None,
    docs_per_shard: int = 1000,
    restart: bool = False,
    progress: ProgressFn | None = None,
    patterns: tuple[str, ...] | None = None,
) -> MineSummary:
    """Mine a corpus into ``out_dir`` (resumable). Returns the summary also written to ``summary.json``."""
    t0 = time.time()
    inputs = [Path(i) for i in inputs]
    out = Path(out_dir)
    shard_dir = out / "shards"
    entries = list(lexicon.entries) if (lexicon is not None and config.idioms) else []
    if not config.idioms:
        entries = []
    lex_fp = lexicon.fingerprint if (lexicon is not None and config.idioms) else "none"
    fingerprint = config.fingerprint(lex_fp)
    report = CorpusReport()

    sources = discover(inputs, patterns or DEFAULT_PATTERNS, report)
    specs = plan_shards(sources, docs_per_shard)
    _prepare_out(out, fingerprint, restart)
    write_json(
        out / "manifest.json",
        {
            "fingerprint": fingerprint,
            "config": config.to_dict(),
            "lexicon": lexicon.name if lexicon else None,
            "lexicon_fingerprint": lex_fp,
            "lexicon_entries": len(entries),
            "inputs": [str(i) for i in inputs],
            "shards": [s.to_dict() for s in specs],
            "versions": _versions(config.model),
        },
    )
    pending = [spec for spec in specs if not _shard_done(shard_dir, spec, fingerprint)]
    resumed = len(specs) - len(pending)
    if progress:
        progress("plan", {"shards": len(specs), "pending": len(pending), "resumed": resumed})
    failures: list[ShardFailure] = []

    def on_result(res: ShardResult) -> None:
        _write_shard(shard_dir, res, fingerprint)
        (shard_dir / f"{res.shard.shard_id}.error.json").unlink(missing_ok=True)
        if progress:
            progress("shard_done", {"shard": res.shard.shard_id, "stats": res.stats})

    def on_failure(f: ShardFailure) -> None:
        failures.append(f)
        write_json(shard_dir / f"{f.shard.shard_id}.error.json", f.to_dict())
        if progress:
            progress("shard_failed", f.to_dict())

    if pending:
        if use_ray:
            _run_ray(pending, config, entries, fingerprint, workers, ray_address, on_result, on_failure)
        elif workers > 1:
            _run_processes(pending, config, entries, fingerprint, workers, on_result, on_failure)
        else:
            for spec in pending:
                try:
                    on_result(process_shard(spec, config, entries, fingerprint))
                except Exception as exc:  # noqa: BLE001
                    on_failure(ShardFailure(spec, "error", _describe(exc)))
    summary = _merge(out, specs, failures, report, resumed, len(pending))
    summary.seconds = time.time() - t0
    write_json(out / "summary.json", summary.to_dict())
    return summary


def _prepare_out(out: Path, fingerprint: str, restart: bool) -> None:
    """The output folder's shard folder, emptied on ``restart``; a run with other settings there is refused unless restarting."""
    shard_dir = out / "shards"
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        if old.get("fingerprint") != fingerprint and not restart:
            raise FiglangError(
                f"{out} holds a run with other settings (fingerprint {old.get('fingerprint')} ≠ {fingerprint}); "
                "use another --out, or --restart to discard it"
            )
    if restart and shard_dir.exists():
        shutil.rmtree(shard_dir)
    shard_dir.mkdir(parents=True, exist_ok=True)


def _shard_done(shard_dir: Path, spec: ShardSpec, fingerprint: str) -> bool:
    """Whether an earlier run finished this shard with the same settings on the same input file."""
    stats_path = shard_dir / f"{spec.shard_id}.stats.json"
    if not stats_path.exists():
        return False
    try:
        done = json.loads(stats_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        done = {}
    return done.get("fingerprint") == fingerprint and done.get("source_stamp") == _source_stamp(spec.source)


def _describe(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _write_shard(shard_dir: Path, res: ShardResult, fingerprint: str) -> None:
    sid = res.shard.shard_id
    with atomic_write(shard_dir / f"{sid}.narratives.jsonl") as f:
        for r in res.narratives:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with atomic_write(shard_dir / f"{sid}.hits.jsonl") as f:
        for r in res.hits:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    # the stats file is the "done" marker: written last
    write_json(
        shard_dir / f"{sid}.stats.json",
        {
            "fingerprint": fingerprint,
            "shard": res.shard.to_dict(),
            "source_stamp": _source_stamp(res.shard.source),
            "stats": res.stats,
            "skipped": res.skipped,
            "notes": res.notes,
        },
    )


def _merge(out: Path, specs: list[ShardSpec], failures: list[ShardFailure], report: CorpusReport, resumed: int, ran: int) -> MineSummary:
    shard_dir = out / "shards"
    totals: Counter = Counter()
    skipped = list(report.skipped)
    notes = list(report.notes)
    for s in report.skipped:
        totals[f"skipped:{s.reason}"] += 1
    seen: set[tuple] = set()
    dups = 0
    workers: dict[int, dict] = {}
    failed_ids = {f.shard.shard_id for f in failures}
    narratives_path = out / "narratives.jsonl"
    hits_path = out / "hits.jsonl"
    with atomic_write(narratives_path) as nf, atomic_write(hits_path) as hf:
        for spec in specs:
            stats_path = shard_dir / f"{spec.shard_id}.stats.json"
            if spec.shard_id in failed_ids or not stats_path.exists():
                continue
            done = json.loads(stats_path.read_text(encoding="utf-8"))
            st = done["stats"]
            for k, v in st.items():
                if k in {"pid", "peak_rss_mb", "seconds", "load_seconds", "cpu_seconds"}:
                    continue
                totals[k] += v
            w = workers.setdefault(
                st.get("pid", 0),
                {
                    "pid": st.get("pid", 0),
                    "shards": 0,
                    "seconds": 0.0,
                    "cpu_seconds": 0.0,
                    "load_seconds": 0.0,
                    "peak_rss_mb": 0.0,
                    "sentences": 0,
                },
            )
            w["shards"] += 1
            w["seconds"] = round(w["seconds"] + st.get("seconds", 0.0), 2)
            w["load_seconds"] = round(w["load_seconds"] + st.get("load_seconds", 0.0), 2)
            w["cpu_seconds"] = round(w["cpu_seconds"] + st.get("cpu_seconds", 0.0), 2)
            w["sentences"] += st.get("sentences", 0)
            w["peak_rss_mb"] = max(w["peak_rss_mb"], st.get("peak_rss_mb", 0.0))
            skipped += [Skip.from_dict(x) for x in done.get("skipped", [])]
            notes += [Skip.from_dict(x) for x in done.get("notes", [])]
            for rec in read_jsonl(
                shard_dir / f"{spec.shard_id}.narratives.jsonl"
            ):  # a shard this run wrote (maybe empty); a bad line raises
                key = (normalise_text(rec["narrative"]), rec["type"], normalise_idiom(rec.get("idiom") or rec.get("simile") or ""))
                if key in seen:
                    dups += 1
                    continue
                seen.add(key)
                nf.write(json.dumps(rec, ensure_ascii=False) + "\n")
            with open(shard_dir / f"{spec.shard_id}.hits.jsonl", encoding="utf-8") as f:
                shutil.copyfileobj(f, hf)
    totals["narratives"] -= dups
    totals["skipped:duplicate"] += dups
    with atomic_write(out / "skipped.jsonl") as sf:
        for s in skipped:
            sf.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
    return MineSummary(
        out,
        len(specs),
        ran,
        resumed,
        failures,
        totals,
        skipped,
        notes,
        narratives_path,
        hits_path,
        dups,
        sorted(workers.values(), key=lambda w: w["pid"]),
    )


# ---------------------------------------------------------------------------------- executors


def _pool_worker(spec: ShardSpec, config: MinerConfig, fingerprint: str) -> ShardResult:
    return process_shard(spec, config, _POOL_ENTRIES, fingerprint)


_POOL_ENTRIES: list[LexiconEntry] = []


def _pool_init(entries: list[LexiconEntry]) -> None:
    global _POOL_ENTRIES
    _POOL_ENTRIES = entries


def _run_processes(pending, config, entries, fingerprint, workers, on_result, on_failure) -> None:
    """A spawn-based process pool with a bounded window; a crashed worker's shards are retried alone to find the culprit."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn")
    queue = list(pending)
    suspects: list[ShardSpec] = []
    window = max(1, workers)
    while queue:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_pool_init, initargs=(entries,))
        broken = False
        inflight: dict = {}
        try:
            while (queue or inflight) and not broken:
                while queue and len(inflight) < window:
                    spec = queue.pop(0)
                    inflight[pool.submit(_pool_worker, spec, config, fingerprint)] = spec
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    spec = inflight.pop(fut)
                    try:
                        on_result(fut.result())
                    except BrokenProcessPool:
                        broken = True
                        suspects.append(spec)
                    except Exception as exc:  # noqa: BLE001
                        on_failure(ShardFailure(spec, "error", _describe(exc)))
            if broken:
                suspects.extend(inflight.values())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        # retry each suspect alone: the one that crashes again is the culprit
        for spec in sorted(suspects, key=lambda s: s.index):
            solo = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_pool_init, initargs=(entries,))
            try:
                on_result(solo.submit(_pool_worker, spec, config, fingerprint).result())
            except BrokenProcessPool:
                on_failure(ShardFailure(spec, "crash", "the worker process died while mining this shard (crashed or was killed)"))
            except Exception as exc:  # noqa: BLE001
                on_failure(ShardFailure(spec, "error", _describe(exc)))
            finally:
                solo.shutdown(wait=True)
        suspects = []


def _ray_task(spec: ShardSpec, config: MinerConfig, entries: list[LexiconEntry], fingerprint: str) -> ShardResult:
    return process_shard(spec, config, entries, fingerprint)


def _run_ray(pending, config, entries, fingerprint, workers, address, on_result, on_failure) -> None:
    import ray

    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = max(1, workers)
        ray.init(**kwargs)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(_ray_task)
        entries_ref = ray.put(entries)
        cpus = int(ray.cluster_resources().get("CPU", workers)) or 1
        window = max(2, 2 * cpus)
        queue = list(pending)
        inflight: dict = {}
        while queue or inflight:
            while queue and len(inflight) < window:
                spec = queue.pop(0)
                inflight[remote.remote(spec, config, entries_ref, fingerprint)] = spec
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                spec = inflight.pop(ref)
                try:
                    on_result(ray.get(ref))
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                    on_failure(ShardFailure(spec, "error", f"{type(cause).__name__}: {cause}"))
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.RayError) as exc:
                    on_failure(ShardFailure(spec, "crash", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------- in-memory API


def mine_texts(
    texts: Iterable[tuple[str, str]],
    lexicon: Lexicon | None,
    config: MinerConfig = MinerConfig(),
) -> ShardResult:
    """Mine (doc_id, text) pairs in memory (one shard, this process): for evaluation and notebooks."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for doc_id, text in texts:
                f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
        src = CorpusFile(str(path), "docs.jsonl", "jsonl")
        cfg = replace(config, read=replace(config.read, id_field="id"))
        entries = list(lexicon.entries) if lexicon is not None else []
        fp = cfg.fingerprint(lexicon.fingerprint if lexicon is not None else "none")
        res = process_shard(ShardSpec(0, "memory", src, None), cfg, entries, fp)
    return res


__all__ = [
    "CRASH_ENV",
    "DEFAULT_MODEL",
    "SEGMENTERS",
    "MineSummary",
    "MinerConfig",
    "MinerPipeline",
    "ShardFailure",
    "ShardResult",
    "ShardSpec",
    "mine_corpus",
    "mine_texts",
    "plan_shards",
    "process_shard",
]
