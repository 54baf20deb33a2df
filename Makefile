# The two commands of the README: `make run` (set up, then the main job) and `make test` (set up, then the suite).
# Setup installs figlang into a project-local virtual environment (.venv) with the CPU build of PyTorch.

PYTHON ?= python3
VENV ?= .venv
DATA_DIR ?= $(if $(FIGLANG_DATA_DIR),$(FIGLANG_DATA_DIR),../shared/data)
BIN := $(VENV)/bin
STAMP := $(VENV)/.figlang-installed

.PHONY: setup run test clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/figlang data stats --data-dir $(DATA_DIR)

test: $(STAMP)
	FIGLANG_TEST_DATA=$(abspath $(DATA_DIR)) $(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
