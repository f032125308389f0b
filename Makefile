# The two front-door commands: `make demo` and `make test`. Each bootstraps .venv from nothing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit bench clean docs

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,local,report]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/acceval demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	@tools/ensure-browser.sh
	$(BIN)/pytest -q -p no:cacheprovider

test: lint typecheck unit

docs: $(STAMP)
	$(BIN)/python -m acceval.docs .

bench: $(STAMP)
	$(BIN)/python benchmarks/loadgen.py

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
