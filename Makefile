# Everything a contributor or CI needs; each target creates the venv it uses.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
ACCEPTANCE ?= ../shared/tools/real-langbot/acceptance.sh
ACC_WORKDIR ?= $(CURDIR)/.acceptance

DIST ?= dist

.PHONY: install demo test test-under-load lint typecheck check bench bench-soak fuzz dist acceptance \
	acceptance-box acceptance-mcp acceptance-skills langbot-tests clean

# Counted steps, and pip's own "Collecting"/"Installing"/"Successfully" lines in step 3, so
# a first `make install` (about a minute) never sits silent. pipefail keeps pip's exit code.
$(STAMP): SHELL := /bin/bash
$(STAMP): .SHELLFLAGS := -o pipefail -c
$(STAMP): pyproject.toml
	@echo "[1/3] creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV)
	@echo "[2/3] upgrading pip in $(VENV)"
	@$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	@echo "[3/3] installing langbot-plugin (editable) with its dev tools"
	@$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -e '.[dev]' \
		| awk '/^(Collecting|Installing|Successfully)/ { print "      " $$0; fflush() }'
	@touch $(STAMP)
	@echo "ready: $(VENV) (activate with '. $(VENV)/bin/activate'; run 'lbp --help')"

install: $(STAMP)

$(BIN)/python:
	$(MAKE) install

# A wheel of this checkout, to install elsewhere: pip install dist/langbot_plugin-*.whl
# (built offline by the venv's own hatchling; BIN=... uses another environment's).
dist: | $(BIN)/python
	$(BIN)/python -m pip wheel --disable-pip-version-check --no-deps --no-build-isolation \
		--no-index -q -w $(DIST) .
	@ls $(DIST)/langbot_plugin-*.whl

demo: install
	$(BIN)/lbp demo

test: install
	$(BIN)/python -m pytest

# The suite three times beside a CPU hog per core, as a busy CI machine runs it.
test-under-load: install
	.ci/under-load.sh

lint: install
	$(BIN)/ruff check langbot_plugin box_runtime tests bench examples
	$(BIN)/ruff format --check langbot_plugin box_runtime tests bench examples

typecheck: install
	$(BIN)/pyright

check: lint typecheck test

bench: install
	$(BIN)/python -m bench $(BENCH_ARGS)

# Memory, descriptors and threads of lbp rt and lbp box under mixed work (bench/soak.py);
# an hour unless SOAK_SECONDS says otherwise (SOAK_SECONDS=120 for a short run).
SOAK_SECONDS ?= 3600
bench-soak: install
	$(BIN)/python -m bench.soak --seconds $(SOAK_SECONDS)

# The wire fuzzer for minutes against each daemon (not in `make test`, which runs a
# bounded campaign): FUZZ_ARGS="--minutes 10 --daemon rt --seed 7" (docs/testing.md).
fuzz: install
	$(BIN)/python -m tests.fuzz $(FUZZ_ARGS)

acceptance: install
	$(ACCEPTANCE) $(ACC_WORKDIR) "$(CURDIR)/$(BIN)/lbp rt --data-dir $(ACC_WORKDIR)/rt/data" "$(CURDIR)/$(BIN)/lbp" \
		$(CURDIR)/tests/acceptance/echo_plugin

acceptance-box: install
	$(ACCEPTANCE) $(ACC_WORKDIR) "$(CURDIR)/$(BIN)/lbp rt --data-dir $(ACC_WORKDIR)/rt/data" "$(CURDIR)/$(BIN)/lbp" \
		$(CURDIR)/tests/acceptance/echo_plugin \
		"$(CURDIR)/$(BIN)/lbp box --host 127.0.0.1 --ws-control-port 5410"

# MCP in the Box with the real host: two stdio MCP servers, a tool call to each.
acceptance-mcp: install
	NS=$${NS-lbacc-boxmcp} tests/acceptance/mcp_box/run.sh $(CURDIR)/.acceptance-mcp

# Skills in the Box with the real host: uploaded, activated by the model, used by exec,
# a second skill, a new revision; BACKEND=docker (default) or nsjail.
acceptance-skills: install
	NS=$${NS-lbacc-skills} BACKEND=$${BACKEND-docker} tests/acceptance/skills_box/run.sh $(CURDIR)/.acceptance-skills

# LangBot's own tests (a checkout's tests/) in the released host's venv: first with the SDK
# it pins, then with this package in its place. Skipped without LANGBOT_SRC.
langbot-tests:
	$(PYTHON) -m tests.langbot_suite.run $(LANGBOT_SRC) $(LANGBOT_TESTS_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache $(ACC_WORKDIR) .acceptance-mcp .acceptance-skills .langbot-tests dist
