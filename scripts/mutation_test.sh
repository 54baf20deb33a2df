#!/bin/sh
# Mutation testing (issue #35) of src/figlang/metrics/ (its plots aside) and the harness's scoring path,
# src/figlang/evaluation/scoring.py, with mutmut 3 (pip install -e '.[test]'). What is mutated and which tests run
# is configured in pyproject.toml's [tool.mutmut]; docs/testing.md has the last kill rate.
#
#   sh scripts/mutation_test.sh                       # all 2,614 mutants (hours on 2 busy cores), niced
#   SAMPLE=300 sh scripts/mutation_test.sh            # a seeded random sample of 300 (docs/testing.md quotes it)
#   sh scripts/mutation_test.sh 'figlang.metrics.significance*'   # only some (mutmut's name globs)
#   JOBS=4 sh scripts/mutation_test.sh                # more parallel children (default 2)
#
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# mutmut's console script, not `python -m mutmut` (mutmut 3.3 failed that way: its __main__ module, imported again by
# the mutants' trampolines, set the multiprocessing start method twice)
MUTMUT="$(dirname "$PY")/mutmut"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false  # one thread per worker: they run side by side
export FIGLANG_TEST_DATA="${FIGLANG_TEST_DATA:-$(cd .. && pwd)/shared/data}"
[ "${FRESH:-0}" = 1 ] && rm -rf mutants  # FRESH=1: start over (mutmut otherwise keeps the results of unchanged functions)
if [ -n "${SAMPLE:-}" ]; then
  # a seeded random sample of SAMPLE mutants: generate them all (and the test map) by checking one, then check the
  # sampled ones not yet killed; scripts/mutation_sample.py reports the kill rate over the sample
  [ -d mutants/src ] || nice -n 10 "$MUTMUT" run --max-children 1 'figlang.metrics.classification.x_correctness__mutmut_1' > mutants.log 2>&1 || true
  names=$("$PY" scripts/mutation_sample.py names "$SAMPLE" ${SEED:-})
  [ -z "$names" ] || nice -n 10 "$MUTMUT" run --max-children "${JOBS:-2}" $names > mutants.log 2>&1 || true
  "$PY" scripts/mutation_sample.py report "$SAMPLE" ${SEED:-}
else
  nice -n 10 "$MUTMUT" run --max-children "${JOBS:-2}" "$@" > mutants.log 2>&1 || true
  "$PY" scripts/mutation_sample.py report
fi
