# The two commands of the README: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
EVALKIT := $(VENV)/bin/evalkit

.PHONY: setup venv engine base-image browser demo validate test test-unit lint bench clean

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

browser:
	@bash scripts/ensure-browser.sh

DEMO_RUN ?= demo-$(shell date +%Y%m%d-%H%M%S)
# expanded once: the run and the report must name the same folder
DEMO_RUN := $(DEMO_RUN)

demo: setup
	$(EVALKIT) run --suite tasks/demo --model oracle --model null --run-id $(DEMO_RUN)
	$(EVALKIT) report reports/runs/$(DEMO_RUN) --out reports/leaderboard

validate: setup
	$(EVALKIT) tasks validate tasks/demo

test: setup browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

test-unit: venv
	$(VENV)/bin/pytest tests/unit

lint: venv
	$(VENV)/bin/ruff check .

bench: setup
	$(VENV)/bin/python benchmarks/sandbox_exec.py
	$(VENV)/bin/python benchmarks/run_overhead.py
	$(VENV)/bin/python benchmarks/report_size.py

clean:
	-$(EVALKIT) sandbox prune
	rm -rf $(VENV)
