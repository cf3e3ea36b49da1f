# The two commands of the README: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
EVALKIT := $(VENV)/bin/evalkit

.PHONY: setup venv engine base-image browser llama ray registry demo demo-llm validate validate-real bench-real test test-unit lint bench clean

setup: venv engine base-image

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

# Ray for --executor ray (the optional extra evalkit[ray]): make test runs a real two-node cluster.
ray: $(VENV)/.ray-installed
$(VENV)/.ray-installed: $(VENV)/.installed
	$(VENV)/bin/pip install --quiet -e '.[dev,ray]'
	touch $@

# A real image registry (the CNCF distribution registry, Debian's docker-registry) for the test of
# --registry: the driver pushes a task's image, a cluster node with an empty engine pulls it.
registry:
	@command -v docker-registry >/dev/null || { apt-get install -y -qq docker-registry >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq docker-registry >/dev/null; }; }

engine: venv
	@VENV=$(VENV) bash scripts/ensure-docker.sh

base-image: engine
	@$(EVALKIT) sandbox build-base

browser:
	@bash scripts/ensure-browser.sh

# llama-cpp-python's OpenAI-compatible server and a 135M-parameter GGUF model (built once from
# source into ~/.cache/evalkit/wheels, 10-15 minutes on 2 cores; a check of a second afterwards)
llama: venv
	@VENV=$(VENV) bash scripts/ensure-llama.sh

DEMO_RUN ?= demo-$(shell date +%Y%m%d-%H%M%S)
# expanded once: the run and the report must name the same folder
DEMO_RUN := $(DEMO_RUN)

demo: setup
	$(EVALKIT) run --suite tasks/demo --model oracle --model null --run-id $(DEMO_RUN)
	$(EVALKIT) report reports/runs/$(DEMO_RUN) --out reports/leaderboard

# The demo suite with a real model: SmolLM2-135M behind llama.cpp's server on 127.0.0.1 (CPU),
# stopped when the run ends, failed, or interrupted. About 3 minutes. tool_choice = "auto" because
# llama.cpp's chatml-function-calling format shows the model the tools only when tool_choice is
# sent (LLM_TOOL_CHOICE= : plain-text turns only). In that mode llama-cpp-python 0.3.36 ignores
# max_tokens while writing a tool call's arguments: a runaway call ends at the attempt's wall time.
LLM_DIR := reports/llm-demo
LLM_RUN ?= llm-$(shell date +%Y%m%d-%H%M%S)
LLM_RUN := $(LLM_RUN)
LLM_TOOL_CHOICE ?= auto
LLM_LIMITS ?= --max-turns 6 --wall-time 90 --concurrency 1
LLM_SUITE ?= tasks/demo# the real suite's baseline: make demo-llm LLM_SUITE=tasks/python-libs

demo-llm: setup llama
	@url=$$(VENV=$(VENV) bash scripts/serve-llama.sh start $(LLM_DIR)) || exit 1; \
	trap 'VENV=$(VENV) bash scripts/serve-llama.sh stop $(LLM_DIR)' EXIT; trap 'exit 130' INT TERM; \
	{ echo '[models.smollm2]'; echo 'model = "smollm2"'; echo "base_url = \"$$url\""; \
	  echo 'request_timeout_s = 120'; echo 'max_retries = 1'; echo 'max_tokens = 256'; echo 'temperature = 0.0'; \
	  if [ -n "$(LLM_TOOL_CHOICE)" ]; then echo 'tool_choice = "$(LLM_TOOL_CHOICE)"'; fi; \
	} > $(LLM_DIR)/evalkit.toml; \
	$(EVALKIT) run --suite $(LLM_SUITE) --model smollm2 --config $(LLM_DIR)/evalkit.toml --run-id $(LLM_RUN) $(LLM_LIMITS) \
	  && $(EVALKIT) report reports/runs/$(LLM_RUN) --out reports/leaderboard-llm

validate: setup
	$(EVALKIT) tasks validate tasks/demo

# The shipped suite of real tasks (docs/suite-python-libs.md): every task's reference x3 and empty
# change; the first run builds each repository's environment image (PyPI through the host's CA bundle).
REAL_SUITE := tasks/python-libs
validate-real: setup
	$(EVALKIT) tasks validate $(REAL_SUITE) --concurrency 2

bench-real: setup
	$(VENV)/bin/python benchmarks/real_suite.py --suite $(REAL_SUITE)
	$(VENV)/bin/python benchmarks/guard_overhead.py --suite $(REAL_SUITE) --per-repository 1

test: setup browser llama ray registry
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest --durations=25

test-unit: venv
	$(VENV)/bin/pytest tests/unit

lint: venv
	$(VENV)/bin/ruff check .

bench: setup ray
	$(VENV)/bin/python benchmarks/sandbox_exec.py
	$(VENV)/bin/python benchmarks/sandbox_handover.py
	$(VENV)/bin/python benchmarks/run_overhead.py
	$(VENV)/bin/python benchmarks/report_size.py
	$(VENV)/bin/python benchmarks/score_run.py
	$(VENV)/bin/python benchmarks/cli_startup.py
	$(VENV)/bin/python benchmarks/proxy_overhead.py
	$(VENV)/bin/python benchmarks/agent_startup.py
	$(VENV)/bin/python benchmarks/ray_throughput.py
	$(VENV)/bin/python benchmarks/guard_overhead.py

clean:  # containers of dead evalkit processes only: runs in progress keep theirs
	-$(EVALKIT) sandbox prune
	rm -rf $(VENV)
