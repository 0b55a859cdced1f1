# The two commands: `make demo` runs the main job, `make test` passes the tests.
# Each bootstraps .venv itself when it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo lint test test-fast bench bench-deps clean-notebooks venv course docs korean explorer

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/tfm demo

# The linter first (ruff, pinned in pyproject.toml's dev extra and configured there: pyflakes, pycodestyle,
# import order, bugbear, pyupgrade; notebooks' code at 100 characters), then every test, then every notebook top
# to bottom in fast mode (TFM_FAST=1); two workers on two cores. Notebooks are spread one per worker, the other
# tests one file per worker (shared fixtures). tests/test_site.py builds the website once and checks it (in
# Chromium too, when one is installed).
LINTED := tfm tests tools benchmarks conftest.py notebooks

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)

test: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(PY) -m pytest -q -n 2 --dist loadfile --ignore=tests/test_notebooks.py --durations=10
	TFM_FAST=1 $(PY) -m pytest -q -n 2 --dist load tests/test_notebooks.py --durations=12

# The suite without the slow tests.
test-fast: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not slow"

# Benchmarks (not tests): regenerate docs/results.md. Peers (keras-hub, torch, ctranslate2) live in
# benchmarks/.deps only, never in the package's environment.
bench: $(STAMP) bench-deps
	$(PY) benchmarks/run_all.py

BENCH_DEPS := benchmarks/.deps/.installed
bench-deps: $(BENCH_DEPS)
$(BENCH_DEPS): | $(STAMP)
	$(PY) -m pip install --quiet --target benchmarks/.deps --no-deps keras-hub==0.32.0 torch==2.13.0 ctranslate2==4.8.5 \
	    tokenizers regex kagglehub kagglesdk==0.1.28 sympy mpmath networkx jinja2 markupsafe fsspec filelock huggingface_hub
	touch $(BENCH_DEPS)

# Every notebook executed in the full setting (TFM_FAST unset), copies with outputs in docs/course/
# (hours on two CPU cores). Data: $TFM_DATA_DIR, else a temporary copy of ../shared/data.
# `make course NOTEBOOKS="05 09"` redoes some; tests/test_course.py checks the copies against notebooks/.
course: $(STAMP)
	$(PY) tools/make_course.py $(NOTEBOOKS)

# The Korean edition's executed copies (docs/course/ko/): the English copies' outputs with notebooks/ko/'s
# markdown, no execution; refused while a translation is stale (`python tools/korean.py check` says which).
korean: $(STAMP)
	$(PY) tools/korean.py build

# The documentation website -> site/ (open site/index.html, or `python -m http.server -d site`): the README,
# the executed course of docs/course/ as it is (never re-run), the guides, results and the API reference.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --site-dir site

# The attention explorer's data (docs/explorer/attention_data.js, the site's page docs/explorer.md) from a trained
# run of notebook 08: every attention weight for ten Multi30k test sentences ($TFM_DATA_DIR's data cache).
# `make course` writes it after running notebook 08; `make explorer RUN=...` from another run.
RUN ?= runs/08_multi30k_d256
explorer: $(STAMP)
	$(PY) tools/attention_explorer.py $(RUN)

clean-notebooks: $(STAMP)
	$(VENV)/bin/jupyter nbconvert --clear-output --inplace notebooks/*.ipynb
