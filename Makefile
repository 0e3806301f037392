# Everything the project needs goes into its own .venv (Python) and .npm-tools (Node);
# nothing depends on what happens to be installed on the machine.
PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
CR          := $(VENV)/bin/context-router
NPM_PREFIX  := .npm-tools
DB          ?= router.db
PY_STAMP    := $(VENV)/.installed
NPM_STAMP   := $(NPM_PREFIX)/.installed

# Real backend MCP servers and real third-party clients/validators used by the product
# and its tests, pinned. Installed with the system npm into the project's own prefix.
NPM_PACKAGES := \
	@modelcontextprotocol/server-filesystem@2026.8.31 \
	@modelcontextprotocol/server-memory@2026.8.31 \
	@modelcontextprotocol/server-everything@2026.8.31 \
	@modelcontextprotocol/inspector@2.12.0 \
	skills@1.7.4 \
	opencode-ai@1.18.33

.PHONY: install catalog run serve test test-fast lint bench clean

install: $(PY_STAMP) $(NPM_STAMP)

$(PY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

# stdin closed: a package's install script must never wait on (or eat) the MCP stdio stream.
$(NPM_STAMP): Makefile
	mkdir -p $(NPM_PREFIX)
	npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) $(NPM_PACKAGES) < /dev/null
	touch $@

catalog: install
	$(CR) catalog --db $(DB)

# stdout belongs to the MCP stdio stream once serve starts: everything before it (install,
# catalog summary, make's own echo) goes to stderr, so `make run` is itself a usable server command.
run:
	@$(MAKE) --no-print-directory catalog 1>&2
	@$(CR) serve --db $(DB)

# lint, format and types first: they take seconds and say more than a failing test would
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest -q

# the tests that start no real subprocess: a quick loop while working
test-fast: install
	$(PY) -m pytest -q -m "not slow"

bench: install
	$(PY) -m bench

clean:
	rm -rf $(VENV) $(NPM_PREFIX) *.egg-info
