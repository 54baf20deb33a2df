"""benchmarks/bench_miner.py writes the result files behind docs/research/narrative_miner.md's recall tables: a rerun on real
data gives the committed figures, with provenance and one record per narrative."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from script_loader import load_script

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results" / "miner"


def _bench():
    return load_script("benchmarks/bench_miner.py")


def test_recall_rerun_on_dev_gives_the_committed_figures(data_dir: Path, tmp_path: Path) -> None:
    out, items = tmp_path / "results.json", tmp_path / "predictions.jsonl.gz"
    _bench().main(["recall", "--data-dir", str(data_dir), "--splits", "dev", "--items", str(items), "--json-out", str(out)])
    fresh = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((RESULTS / "recall-senter" / "results.json").read_text(encoding="utf-8"))
    drop = {"seconds", "shard_stats"}
    assert {k: v for k, v in fresh["splits"]["dev"].items() if k not in drop} == {
        k: v for k, v in committed["splits"]["dev"].items() if k not in drop
    }
    assert fresh["splits"]["dev"]["recovered_in_last_sentence"] == 292 and fresh["totals"]["exactly_5_sentences"] == 45
    prov = fresh["provenance"]
    assert prov["config"]["segmenter"] == "senter" and prov["versions"]["spacy"] and prov["code"]["figlang"]
    assert [f["path"] for f in prov["data"]["files"]] == ["fig_narrative/data/idiom/dev.jsonl"] and len(
        prov["data"]["files"][0]["sha256"]
    ) == 64
    records = [json.loads(line) for line in gzip.open(items, "rt", encoding="utf-8")]
    assert len(records) == 299 and sum(r["hit_in_last_sentence"] for r in records) == 292
    assert sum(r["category"] == "found_in_earlier_sentence" for r in records) == 4


def test_committed_miner_results_record_how_they_were_made() -> None:
    for folder in ("recall-senter", "recall-sentencizer", "recall-parser", "pie-similes", "gutenberg"):
        report = json.loads((RESULTS / folder / "results.json").read_text(encoding="utf-8"))
        provs = [report["provenance"]] if "provenance" in report else [v["provenance"] for v in report.values()]
        for prov in provs:
            assert prov["command"].startswith("python benchmarks/bench_miner.py ") and "/tmp" not in prov["command"]
            assert prov["code"]["git_commit"] and all(f["sha256"] for f in prov["data"]["files"])
        assert (RESULTS / folder / "predictions.jsonl.gz").is_file()
