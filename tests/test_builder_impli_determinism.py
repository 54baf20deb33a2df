"""The IMPLI regeneration check gives the same output in every process, whatever Python's string hashing.

It once did not: ImpliIdiomMatcher.find discovered matches by iterating each token's frozenset of keys (its text and
lemma), whose order follows PYTHONHASHSEED, and sorted them by position and length only. Two lexicon entries
matching the same words ("strike a chord" and "strikes a chord", derived from IMPLI's pairs with the same
definition) then came out in a run-dependent order, the first one won, and magpie's exact count moved from run to
run (12,193 / 12,195 / 12,188). Real data: every magpie fig_context line of that idiom (47), regenerated in two
subprocesses whose hash seeds iterate the token's keys {"strikes", "strike"} in opposite orders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_SCRIPT = """
import json, sys
from figlang.builders.impli import Generator, derive_lexicon, load_nlp, regenerate_impli
root = sys.argv[1]
nlp = load_nlp()
res = regenerate_impli(root, sources=("magpie",), nlp=nlp)
der = derive_lexicon(root, ("fig_context",), ("magpie",), nlp)
gen = Generator(der.lexicon, nlp)
found = {p: [[m.start_char, m.end_char, m.idiom] for m in gen.matcher.find(doc)] for p, doc in der.docs.items()}
print(json.dumps({"keys_order": list(frozenset({"strikes", "strike"})), "overall": res.overall.to_dict(),
                  "items": [[r["premise"], r["definition"], r["generated"], r["category"]] for r in res.items], "found": found}))
"""


def _env(hash_seed: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": path}


def _opposite_hash_seeds() -> tuple[str, str]:
    """Two PYTHONHASHSEED values under which the frozenset {"strikes", "strike"} iterates in opposite orders
    (the condition under which the old code gave different results), found by asking this interpreter."""
    first: dict[tuple[str, ...], str] = {}
    for seed in map(str, range(32)):
        done = subprocess.run(
            [sys.executable, "-c", 'print(*frozenset({"strikes", "strike"}))'], env=_env(seed), capture_output=True, text=True, check=True
        )
        first.setdefault(tuple(done.stdout.split()), seed)
        if len(first) == 2:
            return tuple(first.values())  # type: ignore[return-value]
    raise AssertionError("no two hash seeds in 0..31 order a two-string frozenset differently")


def test_regeneration_is_identical_under_different_hash_seeds(data_dir: Path, tmp_path: Path) -> None:
    lines = (data_dir / "impli" / "idioms" / "fig_context_magpie_e.tsv").read_text(encoding="utf-8").split("\n")
    chord = [line for line in lines if "significant reaction" in line.partition("\t")[2]]  # the hypothesis column
    assert len(chord) == 47
    (tmp_path / "impli" / "idioms").mkdir(parents=True)
    (tmp_path / "impli" / "idioms" / "fig_context_magpie_e.tsv").write_text("\n".join(chord) + "\n", encoding="utf-8")
    seeds = _opposite_hash_seeds()
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, str(tmp_path)], env=_env(s), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for s in seeds
    ]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-2000:]
        outputs.append(json.loads(out))
    a, b = outputs
    assert a["keys_order"] == b["keys_order"][::-1]  # the two processes did iterate the keys in opposite orders
    assert a["found"] == b["found"]
    assert a["items"] == b["items"]
    assert a["overall"] == b["overall"]
    # both "strike a chord" and "strikes a chord" are entries with this definition; the base form wins, so the
    # definition takes the sentence's inflection (IMPLI itself wrote "elicit" here)
    found = a["found"]["But the picking up strikes a chord and going through the motions always works."]
    assert [m[2] for m in found if m[:2] == found[0][:2]] == ["strike a chord", "strikes a chord"]
    generated = {(p, d): g for p, d, g, _ in a["items"]}
    assert generated[
        ("But the picking up strikes a chord and going through the motions always works.", "elicit a significant reaction")
    ] == ("But the picking up elicits a significant reaction and going through the motions always works.")
