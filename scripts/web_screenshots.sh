#!/bin/sh
# Screenshots of every `figlang serve` page (docs/images/web-*.png) and the serve benchmark
# (docs/results/serve/bench_serve.json): the browser tests' own run, with both outputs switched on.
# Usage: sh scripts/web_screenshots.sh [DATA_DIR]   (default ../shared/data; needs make setup: Playwright + chromium)
set -eu
DATA=${1:-${FIGLANG_DATA_DIR:-../shared/data}}
PY=${PYTHON:-.venv/bin/python}
mkdir -p docs/images docs/results/serve
FIGLANG_TEST_DATA=$(cd "$DATA" && pwd) FIGLANG_WEB_SCREENSHOTS=docs/images FIGLANG_SERVE_BENCH=docs/results/serve/bench_serve.json \
    OMP_NUM_THREADS=1 "$PY" -m pytest -q tests/test_web_browser.py
