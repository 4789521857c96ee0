# LoopX: `make demo` tells the story, `make test` runs every check. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
CORE_STAMP := $(VENV)/.core-stamp

.PHONY: demo test test-pythons test-nocov fuzz coverage-report mutate lint bench docs hosts clean

# SETUP_PIP_FLAGS="--progress-bar on" shows pip's progress; `make demo` does, so its first run is never a silent minute.
SETUP_PIP_FLAGS ?= --quiet

# LoopX alone (what `make demo` needs), then its test toolchain on top (everything else).
$(CORE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(SETUP_PIP_FLAGS) --upgrade pip
	$(BIN)/python -m pip install $(SETUP_PIP_FLAGS) -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	$(BIN)/python -m pip install $(SETUP_PIP_FLAGS) -e '.[test]'
	touch $(STAMP)

demo:
	@[ -f $(CORE_STAMP) ] || echo "==> Setting up $(VENV) (first run only): a venv, then pip installs LoopX"
	@$(MAKE) --no-print-directory $(CORE_STAMP) SETUP_PIP_FLAGS="--progress-bar on"
	@echo "==> Running the demo (scripts/demo.py)"
	$(BIN)/python scripts/demo.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

# The real host CLIs (claude, codex, dsh) from the npm registry judge what we generate.
hosts:
	bash scripts/install-hosts.sh --quiet

# Coverage of every Python process the suite starts (pytest workers, `loopx` subprocesses, the
# MCP server over stdio, hooks run by the real hosts): each writes a data file into COV_PARTS,
# scripts/coverage_startup.py reaches the children started with a bare environment, and the
# combined figure must stay at or above `fail_under` in pyproject.toml. docs/testing.md.
COV_DIR := $(CURDIR)/build/coverage
COV_PARTS := $(COV_DIR)/parts
COV_ENV := COVERAGE_PROCESS_START=$(CURDIR)/pyproject.toml COVERAGE_FILE=$(COV_PARTS)/.coverage

test: $(STAMP) lint hosts
	bash scripts/postgres.sh --quiet
	bash scripts/chromium.sh --quiet
	rm -rf $(COV_PARTS) $(COV_DIR)/.coverage && mkdir -p $(COV_PARTS)
	$(BIN)/python scripts/coverage_startup.py $(COV_PARTS)
	$(BIN)/python -m compileall -q loopx_core plugins installer templates
	$(COV_ENV) $(BIN)/python -m pytest -n 2 -q; status=$$?; \
	echo "coverage: $$(ls -A $(COV_PARTS) | wc -l) processes measured"; \
	$(BIN)/coverage combine -q --data-file=$(COV_DIR)/.coverage $(COV_PARTS); rm -rf $(COV_PARTS); \
	$(BIN)/python scripts/coverage_report.py $(COV_DIR)/.coverage; floor=$$?; \
	if [ $$status -ne 0 ]; then exit $$status; fi; exit $$floor

# The suite on the other supported Pythons, CPython 3.12 and 3.13 from pyenv (each in a venv of its
# own, .venv-3.12 and .venv-3.13; the browser tests run on 3.11 under `make test`). CI runs both.
OTHER_PYTHONS ?= 3.12 3.13
test-pythons: hosts
	bash scripts/postgres.sh --quiet
	for version in $(OTHER_PYTHONS); do bash scripts/other-python.sh $$version || exit $$?; done

# The same suite without measuring, for timing and quick full runs.
test-nocov: $(STAMP)
	$(BIN)/python -m compileall -q loopx_core plugins installer templates
	$(BIN)/python -m pytest -n 2 -q

# The property tests with fresh random draws (`make test` draws the same ones every run, so CI
# cannot fail on a draw no one has seen). A failure prints the blob that reproduces it.
fuzz: $(STAMP)
	bash scripts/postgres.sh --quiet
	bash scripts/chromium.sh --quiet
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -n 2 -q

# Per-file detail of the last `make test`: missed lines on the terminal, HTML in build/coverage/html.
coverage-report: $(STAMP)
	$(BIN)/python scripts/coverage_report.py $(COV_DIR)/.coverage --files 25
	$(BIN)/coverage html -q --data-file=$(COV_DIR)/.coverage -d $(COV_DIR)/html --fail-under=0

# Mutation testing (mutmut) of the modules that carry the promises, each against the tests that
# exercise it, in a scratch copy under build/mutate: `make mutate MODULES="loopx_core/quota.py"`;
# MUTATE_ARGS=--sample=25 scores a seeded sample of each, MUTATE_ARGS=--resume goes on with a stopped run.
mutate: $(STAMP)
	$(BIN)/python scripts/mutate.py $(MUTATE_ARGS) $(MODULES)

# Every budget as a ratio measured in the same rounds (docs/benchmarks.md).
bench: $(STAMP)
	bash scripts/postgres.sh --quiet
	$(BIN)/python benchmarks/hot_path.py
	$(BIN)/python benchmarks/commands.py
	$(BIN)/python benchmarks/mcp_loop.py
	$(BIN)/python benchmarks/dashboard.py
	$(BIN)/python benchmarks/tracing.py

docs: $(STAMP)
	$(BIN)/python scripts/gen_cli_docs.py

clean:
	rm -rf $(VENV) .venv-3.12 .venv-3.13 .pytest_cache .ruff_cache dist build
