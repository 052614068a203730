# The set-up contract: on a fresh Debian machine `make demo` and `make test` do everything.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    := out

SAMPLES := $(wildcard samples/*.pb samples/*.pbtxt samples/*.meta) samples/saved_model \
           $(wildcard samples/logs/*)

.PHONY: demo test lint docs bench samples clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The package alone (what a user gets from pip).
$(VENV)/.stamp-install: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

# Everything the tests need: the test tools, TensorFlow, Graphviz and Chromium.
$(VENV)/.stamp-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,tf]'
	@touch $@

demo: $(VENV)/.stamp-install
	@scripts/ensure-system.sh dot:graphviz
	@mkdir -p $(OUT)
	@for s in $(SAMPLES); do \
	  name=$$(echo "$$s" | sed -e 's|^samples/||' -e 's|/|_|g' -e 's|\.[a-z]*$$||'); \
	  $(BIN)/tbgraph render "$$s" -o "$(OUT)/$$name.svg" || exit 1; \
	done
	@echo "open $(OUT)/*.svg"

test: $(VENV)/.stamp-test
	@scripts/ensure-system.sh dot:graphviz chromium:chromium
	$(BIN)/python -m pytest -q

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check graphviz_tb tests samples bench

samples: $(VENV)/.stamp-test
	$(BIN)/python samples/make_samples.py

clean:
	rm -rf $(OUT) build dist *.egg-info .pytest_cache
