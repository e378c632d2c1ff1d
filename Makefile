# One virtualenv (.venv) for everything; each target creates it when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The core packages, the LLM layer, prompt compilation and the loop are typed strictly (ARCHITECTURE.md).
STRICT_CORE := memlet/config.py memlet/errors.py memlet/ids.py memlet/actor.py memlet/log.py memlet/db memlet/net \
	memlet/crypto.py memlet/metrics.py memlet/exposure.py memlet/hardening.py memlet/llm memlet/prompt memlet/loop

.PHONY: dev server test check lint format migrate bench fuzz clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

dev: $(STAMP)

## Start the server on the embedded Postgres (data in ~/.memlet unless MEMLET_DATA_DIR / MEMLET_PG_URI is set).
server: $(STAMP)
	$(BIN)/memlet server

## Run the whole test suite (real embedded Postgres + pgvector, real uvicorn, official letta-client).
test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy memlet
	$(BIN)/mypy --strict --follow-imports=silent $(STRICT_CORE)
	$(BIN)/lint-imports

check: lint test

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrate: $(STAMP)
	$(BIN)/memlet db upgrade

## Schemathesis (all phases) over every operation memlet serves from ../shared/letta/openapi.json; prints the counts.
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz --max-examples 40 --max-time 900

bench: $(STAMP)
	$(BIN)/python bench/bench_state_api.py

clean:
	rm -rf $(VENV) *.egg-info
