#!/bin/sh
# Mutation testing (issue #35) of src/figlang/metrics/ (its plots aside) and the harness's scoring path,
# src/figlang/evaluation/scoring.py, with mutmut 3 (pip install -e '.[test]'). What is mutated and which tests run
# is configured in pyproject.toml's [tool.mutmut]; docs/testing.md has the last kill rate.
#
#   sh scripts/mutation_test.sh                       # all mutants (about an hour on 2 busy cores), niced
#   sh scripts/mutation_test.sh 'figlang.metrics.significance*'   # only some (mutmut's name globs)
#   JOBS=4 sh scripts/mutation_test.sh                # more parallel children (default 2)
#
# Tests that load real metric models (BERTScore, BLEURT: tens of seconds each) are deselected here: a mutant only they reach counts as
# "no tests", i.e. as a survivor in the kill rate, never as killed.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export FIGLANG_TEST_DATA="${FIGLANG_TEST_DATA:-$(cd .. && pwd)/shared/data}"
export PYTEST_ADDOPTS="-p no:cacheprovider -W ignore::DeprecationWarning -k 'not bertscore and not bleurt' \
 --deselect tests/test_metrics_flute.py::test_evaluate_flute_with_real_metric_objects \
 --deselect tests/test_metrics_flute.py::test_flute_scores_from_records_for_the_harness"
[ "${FRESH:-0}" = 1 ] && rm -rf mutants  # FRESH=1: start over (mutmut otherwise keeps the results of unchanged functions)
nice -n 10 "$PY" -m mutmut run --max-children "${JOBS:-2}" "$@" > mutants.log 2>&1 || true
"$PY" - <<'PY'
import json
from collections import Counter
from pathlib import Path

from mutmut.__main__ import status_by_exit_code

counts: Counter[str] = Counter()
by_file: dict[str, Counter[str]] = {}
for meta in sorted(Path("mutants").rglob("*.py.meta")):
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    name = str(meta.relative_to("mutants"))[: -len(".meta")]
    by_file[name] = Counter(status_by_exit_code.get(code, str(code)) for code in codes.values())
    counts.update(by_file[name])
scored = sum(n for status, n in counts.items() if status not in ("skipped", "not checked"))


def rate(c: Counter) -> str:
    n = sum(v for k, v in c.items() if k not in ("skipped", "not checked"))
    return f"{c['killed']}/{n} = {100 * c['killed'] / max(n, 1):.1f}%"


for name, c in by_file.items():
    print(f"{name}: {rate(c)}  {dict(sorted(c.items()))}")
print(f"all: {dict(sorted(counts.items()))}")
print(f"kill rate: {rate(counts)} (killed over every checked mutant: survived, no tests, timeout and suspicious count against it)")
PY
