# LoopX: `make demo` tells the story, `make test` runs every check. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench docs hosts clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The real host CLIs (claude, codex, dsh) from the npm registry judge what we generate.
hosts:
	bash scripts/install-hosts.sh --quiet

test: $(STAMP) lint hosts
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python benchmarks/should_run.py
	$(BIN)/python benchmarks/turn.py
	$(BIN)/python benchmarks/mcp_loop.py

docs: $(STAMP)
	$(BIN)/python scripts/gen_cli_docs.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache dist build
