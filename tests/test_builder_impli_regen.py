"""Regenerating IMPLI's figurative-context pairs on a real slice: derived lexicon, exact-match rate, categories, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlang.builders.impli import (
    MISMATCH_CATEGORIES,
    categorize_mismatch,
    derive_lexicon,
    diff_offsets,
    load_nlp,
    regenerate_impli,
)
from figlang.cli.build_impli import app
from figlang.data.impli import figurative_span
from figlang.core.io import iter_tsv

# The first lines of two real IMPLI files: 150 PIE pairs and 120 SemEval pairs (269 distinct items).
SLICE = {"fig_context_pie_e.tsv": 150, "fig_context_semeval_e.tsv": 120}
# Measured on this slice when the test was written: 223/269 = 82.9% overall (PIE 72.5%, SemEval 95.8%).
FLOOR = 0.80


@pytest.fixture(scope="module")
def slice_dir(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("impli_slice")
    (root / "impli" / "idioms").mkdir(parents=True)
    for name, n in SLICE.items():
        lines = (data_dir / "impli" / "idioms" / name).read_text(encoding="utf-8").split("\n")[:n]
        (root / "impli" / "idioms" / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def result(slice_dir: Path):
    return regenerate_impli(slice_dir, sources=("pie", "semeval"), nlp=load_nlp())


def test_diff_offsets_agree_with_the_loader(slice_dir: Path) -> None:
    for _, cols in iter_tsv(slice_dir / "impli" / "idioms" / "fig_context_pie_e.tsv"):
        premise, hypothesis = cols[0].strip(), cols[1].strip()
        (ps, pe), (hs, he) = diff_offsets(premise, hypothesis)
        assert (premise[ps:pe], hypothesis[hs:he]) == figurative_span(premise, hypothesis)


def test_derived_lexicon_has_base_forms(slice_dir: Path) -> None:
    derivation = derive_lexicon(slice_dir, ("fig_context",), ("pie",), load_nlp())
    lex = derivation.lexicon
    assert len(derivation.pairs) == 150 and not derivation.problems
    assert [d.text for d in lex.get("all along").definitions] == ["for the entire time", "the entire time", "from the very beginning"]
    # "has a big heart" -> "is merciful": verb and definition lemmatised
    assert [d.text for d in lex.get("have a big heart").definitions] == ["be merciful"]
    assert "fly in the face of" in lex and "contradict" in [d.text for d in lex.get("fly in the face of").definitions]
    assert all(d.kind == "definition" and d.origin for e in lex.entries.values() for d in e.definitions)


def test_exact_match_rate_on_the_slice(result) -> None:
    o = result.overall
    assert (o.items, result.population, result.lines) == (269, 269, 270)
    assert o.generated >= 265
    assert o.rate >= FLOOR, result.to_dict()["per_source"]
    assert result.per_source["semeval"].rate >= 0.9
    assert o.exact + sum(o.categories.values()) == o.items
    assert set(o.categories) <= set(MISMATCH_CATEGORIES)
    assert o.exact_ignoring_case == o.exact + o.categories["capitalisation"]
    # IMPLI mostly left sentence-initial definitions in lower case; we capitalise them (brief), so:
    assert o.categories["capitalisation"] > 0
    rows = {r["category"] for r in result.items}
    assert "exact" in rows
    ex = result.examples["capitalisation"][0]
    assert ex["generated"][:1].isupper() and ex["impli"][:1].islower()


def test_sample_is_fixed_by_the_seed(slice_dir: Path) -> None:
    a = regenerate_impli(slice_dir, sources=("semeval",), sample=40, seed=7, nlp=load_nlp())
    b = regenerate_impli(slice_dir, sources=("semeval",), sample=40, seed=7, nlp=load_nlp())
    assert a.overall.items == 40 and a.population == 120
    assert [r["premise"] for r in a.items] == [r["premise"] for r in b.items]


def test_mismatch_categories() -> None:
    p = "She flies in the face of reason."
    assert categorize_mismatch(p, None, ["She defies reason."], False)[0] == "span_detection"
    assert categorize_mismatch(p, "She defies reason.", ["She defy reason."], False)[0] == "inflection"
    assert categorize_mismatch(p, "She losed reason.", ["She lost reason."], False)[0] == "inflection"  # IMPLI's own "losed"
    assert categorize_mismatch("Out of the blue it came.", "Suddenly it came.", ["suddenly it came."], False)[0] == "capitalisation"
    assert categorize_mismatch("She lost her temper.", "She lost her composure.", ["She lost one's composure."], True)[0] == "slot_filling"
    assert categorize_mismatch(p, "She defies reason .", ["She defies reason."], False)[0] == "other"
    assert categorize_mismatch(p, "She flies in defiance of reason.", ["She defies reason."], False)[0] == "span_detection"


def test_cli_regenerate_and_lexicon(slice_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "regen"
    res = runner.invoke(
        app, ["regenerate", "--data-dir", str(slice_dir), "--source", "semeval", "--sample", "30", "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{") :])
    assert data["overall"]["items"] == 30 and data["sample"] == 30 and data["population_items"] == 120
    assert (out / "items.jsonl").exists() and (out / "lexicon.tsv").exists()
    lex = tmp_path / "lex.tsv"
    res = runner.invoke(app, ["lexicon", "--data-dir", str(slice_dir), "--source", "semeval", "--out", str(lex)])
    assert res.exit_code == 0, res.output
    lines = [line for line in lex.read_text().splitlines() if not line.startswith("#")]
    assert "a piece of cake\teasy" in lines


def test_cli_regenerate_table_fits_80_columns(slice_dir: Path) -> None:
    # the table used to cut its numbers to "14,…" on an 80-column log; every figure must show in full
    res = CliRunner().invoke(
        app, ["regenerate", "--data-dir", str(slice_dir), "--source", "semeval", "--sample", "30"], env={"COLUMNS": "80"}
    )
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if "│" in line]  # the tables (examples below them are cut on purpose)
    assert rows and not any("…" in line for line in rows)
    assert "mismatches by category" in res.output and "overall" in res.output


def test_cli_regenerate_writes_a_result_file(slice_dir: Path, tmp_path: Path) -> None:
    """--results: regeneration.json (figures, command, data checksums, code) and one compact record per item whose
    categories add up to the file's counts."""
    from collections import Counter

    from figlang.core.io import file_sha256, read_jsonl

    out = tmp_path / "results"
    res = CliRunner().invoke(
        app,
        [
            "regenerate",
            "--data-dir",
            str(slice_dir),
            "--source",
            "semeval",
            "--sample",
            "40",
            "--seed",
            "3",
            "--no-capitalise",
            "--results",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads((out / "regeneration.json").read_text(encoding="utf-8"))
    assert data["format"] == "figlang.impli.regeneration/1"
    assert data["command"].startswith("figlang build impli regenerate --data-dir ") and data["command"].endswith(
        f"--no-capitalise --results {out}"
    )
    assert "--source semeval --sample 40 --seed 3" in data["command"]
    assert data["options"]["capitalise"] is False and data["options"]["sources"] == ["semeval"]
    semeval = slice_dir / "impli" / "idioms" / "fig_context_semeval_e.tsv"
    assert data["data"]["files"] == [
        {"path": "impli/idioms/fig_context_semeval_e.tsv", "sha256": file_sha256(semeval), "bytes": semeval.stat().st_size}
    ]
    assert data["derivation"]["files"] == ["impli/idioms/fig_context_semeval_e.tsv"]
    rest = {k: v for k, v in data.items() if k not in ("command", "data")}  # these name the --data-dir as given
    assert str(slice_dir) not in json.dumps(rest, ensure_ascii=False)  # no machine paths (the derivation examples' origins)
    assert data["code"]["figlang"] and "git_commit" in data["code"]
    o = data["overall"]
    assert o["items"] == 40 and o["exact_percent"] == pytest.approx(100 * o["exact"] / 40)
    assert o["exact_ignoring_case_percent"] == pytest.approx(100 * (o["exact"] + o["mismatches"]["capitalisation"]) / 40)
    records = list(read_jsonl(out / "predictions.jsonl.gz"))
    assert len(records) == 40
    counts = Counter(r["category"] for r in records)
    assert counts["exact"] == o["exact"] and all(counts[c] == n for c, n in o["mismatches"].items())
    assert sum(bool(r.get("filter_reasons")) for r in records) == o["exact_but_filtered"]
    assert sum(r["generated"] is None for r in records) == o["not_generated"]
    for r in records:  # a mismatch keeps IMPLI's hypotheses; every record names its IMPLI lines
        assert ("gold" in r) == (r["category"] != "exact")
        assert r["origins"] and all(x.startswith("impli/idioms/fig_context_semeval_e.tsv:") for x in r["origins"])
        line = int(r["origins"][0].rsplit(":", 1)[1])
        assert semeval.read_text(encoding="utf-8").split("\n")[line - 1].split("\t")[0].strip() == r["premise"]


def test_record_paths_start_at_the_dataset_folder(data_dir: Path) -> None:
    from figlang.builders.impli.regenerate import _impli_relative

    path = data_dir / "impli" / "idioms" / "fig_context_pie_e.tsv"
    assert _impli_relative(path) == "impli/idioms/fig_context_pie_e.tsv" and _impli_relative(str(path.resolve())) == _impli_relative(path)
