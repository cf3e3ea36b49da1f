# The two commands of the README: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
EVALKIT := $(VENV)/bin/evalkit

.PHONY: setup venv engine base-image demo validate test test-unit lint bench clean

setup: venv engine base-image

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

engine: venv
	@VENV=$(VENV) bash scripts/ensure-docker.sh

base-image: engine
	@$(EVALKIT) sandbox build-base

demo: setup
	$(EVALKIT) run --suite tasks/demo --model oracle --model null

validate: setup
	$(EVALKIT) tasks validate tasks/demo

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

test-unit: venv
	$(VENV)/bin/pytest tests/unit

lint: venv
	$(VENV)/bin/ruff check .

bench: setup
	$(VENV)/bin/python benchmarks/sandbox_exec.py
	$(VENV)/bin/python benchmarks/run_overhead.py

clean:
	-$(EVALKIT) sandbox prune
	rm -rf $(VENV)
