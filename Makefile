# The set-up contract: on a fresh Debian machine `make demo` and `make test` do everything.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    := out

SAMPLES := $(wildcard samples/*.pb samples/*.pbtxt samples/*.meta) samples/saved_model \
           $(wildcard samples/logs/*)

.PHONY: demo test check lint docs bench samples clean viewer gallery dist zoo

# The HTML viewer's JavaScript bundle and its layout worker (Graphviz WASM, gzipped), and the
# TensorBoard tab, built from npm packages pinned in package-lock.json; build products, never
# committed.
VIEWER     := graphviz_tb/draw/viewer/bundle.js graphviz_tb/draw/viewer/layout-worker.js.gz \
              graphviz_tb/tbplugin/tab.js
# The viewer's sources: its own code (less what the build generates), and graphviz_tb/style.py
# and graphviz_tb/group/aside.py, the palette, sizes and grouping rules it shares with Python.
VIEWER_SRC := $(filter-out %/style.gen.js,$(wildcard graphviz_tb/draw/viewer/src/*.js)) \
              $(wildcard graphviz_tb/tbplugin/src/*.js) graphviz_tb/style.py \
              graphviz_tb/group/aside.py scripts/build-viewer.mjs

node_modules/.package-lock.json: package.json package-lock.json
	@scripts/ensure-system.sh node:nodejs npm:npm
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(VIEWER) &: $(VIEWER_SRC) node_modules/.package-lock.json
	node scripts/build-viewer.mjs

viewer: $(VIEWER)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The package alone (what a user gets from pip).  Editable installs come after the viewer:
# the build hook (scripts/hatch_build.py) then finds it built and has nothing to do.
$(VENV)/.stamp-install: pyproject.toml | $(BIN)/python $(VIEWER)
	$(BIN)/python -m pip install -q -e .
	@touch $@

# Everything the tests need: the test tools (with `build`, for the packaging tests),
# TensorFlow, the profiler's reader, Sphinx/MkDocs (the docs build is a test), PyTorch (to
# write add_graph logdirs and export ONNX files), onnx (to read them), Graphviz and Chromium.
$(VENV)/.stamp-test: pyproject.toml | $(BIN)/python $(VIEWER)
	$(BIN)/python -m pip install -q -e '.[test,tf,profile,docs,torch,onnx]'
	@touch $@

# What lint and the quick tier need: the package and the test tools, none of the heavy extras.
$(VENV)/.stamp-check: pyproject.toml | $(BIN)/python $(VIEWER)
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

# What the documentation needs: Sphinx, MkDocs, TensorFlow (the shape-debugging page) and onnx
# (the ONNX page).
$(VENV)/.stamp-docs: pyproject.toml | $(BIN)/python $(VIEWER)
	$(BIN)/python -m pip install -q -e '.[docs,tf,onnx]'
	@touch $@

demo: $(VENV)/.stamp-install $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz
	@mkdir -p $(OUT)
	@for s in $(SAMPLES); do \
	  name=$$(echo "$$s" | sed -e 's|^samples/||' -e 's|[/.]|_|g'); \
	  colour=$$(case "$$s" in samples/logs/costs) echo "--color-by compute-time";; esac); \
	  $(BIN)/tbgraph render "$$s" $$colour -o "$(OUT)/$$name.svg" || exit 1; \
	  $(BIN)/tbgraph render "$$s" $$colour -o "$(OUT)/$$name.html" 2>"$(OUT)/.stderr" \
	    || { cat "$(OUT)/.stderr"; exit 1; }; \
	done; rm -f "$(OUT)/.stderr"  # the page's warnings are the picture's, said once above
	@$(BIN)/tbgraph diff samples/diff/cnn_v1.pb samples/diff/cnn_v2.pb -o "$(OUT)/diff.svg"; \
	  test $$? -eq 1 || exit 1
	@$(BIN)/tbgraph diff samples/diff/cnn_v1.pb samples/diff/cnn_v2.pb -o "$(OUT)/diff.html" \
	  >/dev/null; test $$? -eq 1 || exit 1  # its summary, said once above
	@echo "open $(OUT)/*.svg (static) or $(OUT)/*.html (interactive)"

# Every sample drawn as a person sees it: static PNG and a Chromium screenshot of the viewer,
# in out/gallery/.  Look at them before resolving anything that changes what is drawn.
gallery: $(VENV)/.stamp-test $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz chromium:chromium
	$(BIN)/python scripts/gallery.py

# The whole suite, the packaging tests included: they build the sdist and wheel, install the
# wheel into fresh virtualenvs and run it with and without Graphviz (never with Node.js).
# Each test file runs in a pytest process of its own (scripts/run_tests.py, which prints each
# file's time and peak memory): what TensorFlow and torch keep of every graph they traced is
# never freed, and in one process the suite passed 24 GB and was killed by the kernel.
test: $(VENV)/.stamp-test $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz chromium:chromium gcc:gcc
	$(BIN)/python scripts/run_tests.py

# The random zoo of training steps (tests/test_zoo.py) swept past the 40 seeds CI runs:
# `make zoo N=500`.  Fifty seeds a process, since TensorFlow never frees what it traced;
# every failing seed is reported, with its recipe.
N ?= 500
zoo: $(VENV)/.stamp-test
	@failed=0; for start in $$(seq 0 50 $$(($(N) - 1))); do \
	  stop=$$((start + 50 < $(N) ? start + 50 : $(N))); \
	  echo "seeds $$start to $$((stop - 1))"; \
	  TBGRAPH_ZOO_SEEDS=$$start:$$stop $(BIN)/python -m pytest tests/test_zoo.py -q \
	    -p no:cacheprovider -k test_a_zoo_step_opens_to_its_models || failed=1; \
	done; exit $$failed

# The release files, as a user's pip gets them: dist/*.tar.gz (the sources and the npm lock
# file) and dist/*.whl (the package with the viewer built in, so it installs without Node.js).
dist: $(VENV)/.stamp-test $(VIEWER)
	$(BIN)/python -m build --outdir dist

lint: $(VENV)/.stamp-check
	$(BIN)/ruff check graphviz_tb tests samples bench docs scripts
	$(BIN)/lint-imports
	$(BIN)/mypy

# The quick tier, for the edit-test loop: lint, then the tests that need neither TensorFlow,
# PyTorch, a browser nor a build (docs, packaging) and are not marked slow, less three repeats
# `make test` runs: mypy's test (lint has just run mypy), the picture tests' second Graphviz
# engine (graphviz-pure; each sample is still drawn and checked with `dot`), and tbgraph run
# on every hostile input and command in a fresh process (263 processes; the other hostile-input
# tests stay).  `make test` stays the whole suite and CI's command.
QUICK := not tensorflow and not torch and not browser and not docs and not packaging and not slow
check: lint $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz
	$(BIN)/python -m pytest -q -m "$(QUICK)" \
	  -k "not [pure and not test_every_command_draws_or_fails_in_one_line" \
	  --deselect tests/test_architecture.py::test_the_type_hints_agree_with_the_code

# The documentation site, every picture drawn by the tool itself; any warning fails it.
# Also regenerates the README's pictures (deterministic, so they change only with the graph).
docs: $(VENV)/.stamp-docs $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz
	$(BIN)/tbgraph render samples/mnist_tf1.pb -o docs/images/mnist_tf1.svg
	$(BIN)/tbgraph render docs/models/resnet18.onnx -o docs/images/resnet18_onnx.svg
	$(BIN)/tbgraph render docs/models/resnet18_add_graph -o docs/images/resnet18_add_graph.svg
	TF_CPP_MIN_LOG_LEVEL=3 $(BIN)/python -m sphinx -W --keep-going -j auto -b html \
	  docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# The benchmarks: what the tests need, plus the peers (Netron; TensorBoard is a dependency).
$(VENV)/.stamp-bench: pyproject.toml | $(BIN)/python $(VIEWER)
	$(BIN)/python -m pip install -q -e '.[test,tf,onnx,torch,bench]'
	@touch $@

# Speed and size against the baselines and peers, side by side in one run: builds the graphs
# in bench/graphs/ with TensorFlow when missing, then writes bench/RESULTS.md (takes a while);
# then the scaling bench: each graph shape at 1x, 2x and 4x, its section of RESULTS.md; then
# this checkout against an earlier commit (bench/versus.py); then TensorBoard against tbgraph
# from a cold start, two steps and 1.16 million ops (bench/cold.py); then
# the TensorBoard tab against the command line on NASNet-Large's step (bench/tbplugin.py);
# then ONNX models of 1k to 100k nodes against Netron (bench/onnx_sizes.py).
bench: $(VENV)/.stamp-bench $(VIEWER)
	@scripts/ensure-system.sh dot:graphviz chromium:chromium gcc:gcc
	$(BIN)/python bench/run.py --build-missing
	$(BIN)/python bench/floor.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/versus.py
	$(BIN)/python bench/cold.py
	$(BIN)/python bench/tbplugin.py
	$(BIN)/python bench/onnx_sizes.py

samples: $(VENV)/.stamp-test
	$(BIN)/python samples/make_samples.py

clean:
	rm -rf $(OUT) build dist *.egg-info .pytest_cache .mypy_cache docs/_build
