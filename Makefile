# make notebooks  execute the chapters whose inputs changed into their .ipynb twins (tools/notebooks.py)
# make book       refresh the notebooks, then build the site from their stored outputs into _build/html
# make test       lint, then a strict site build from the stored outputs, then one pytest run: unit tests,
#                 nbval re-running and comparing every notebook cell, and the browser test of every page
# make check      lint and the unit tests without the slow ones (marked `slow`): under a minute
# make mutation   the mutation run of the five modules whose tests must catch a wrong formula
# make bench      speed figures against a peer (benchmarks/)
# Each target creates .venv with every pinned dependency when it is missing or out of date.
# Each chapter is executed once per command: by `make notebooks` in `make book`, by nbval in `make test`.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: notebooks book test check lint format bench mutation clean

# The browser test drives Debian's Chromium (installed here when missing; needs root, as in CI).
CHROMEDRIVER := /usr/bin/chromedriver

# MathJax is served from the site itself (npm's mathjax, pinned), so formulas render offline.
# Only the components the pages load are copied (_config.yml's mathjax3_config lists them), not
# the 24 MB of the whole distribution.
MATHJAX_VERSION := 3.2.2
MATHJAX := _vendor/mathjax/startup.js
MATHJAX_FILES := startup.js core.js input/tex.js input/tex-base.js input/tex/extensions \
                 output/chtml.js output/chtml/fonts/tex.js output/chtml/fonts/woff-v2 \
                 a11y/assistive-mml.js

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

$(MATHJAX): Makefile
	rm -rf _build/.mathjax-npm _vendor/mathjax && mkdir -p _build/.mathjax-npm _vendor/mathjax
	npm install --silent --no-audit --no-fund --prefix _build/.mathjax-npm mathjax@$(MATHJAX_VERSION)
	cd _build/.mathjax-npm/node_modules/mathjax/es5 && \
	    cp --parents -r $(MATHJAX_FILES) $(CURDIR)/_vendor/mathjax/
	rm -f _vendor/mathjax/input/tex/extensions/all-packages.js

$(CHROMEDRIVER):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver > /dev/null

notebooks: $(STAMP)
	$(BIN)/python tools/notebooks.py --jobs $(JOBS)

book: notebooks $(MATHJAX)
	$(BIN)/jupyter-book build --keep-going .
	@echo "site: $(CURDIR)/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools chapters intro.ipynb
	$(BIN)/lint-imports --no-cache

# ruff on the package and on the code cells of the MyST chapters (through jupytext)
format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks tools
	$(BIN)/ruff check --fix --quiet src tests benchmarks tools
	for f in chapters/*.md; do \
	    PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/jupytext --quiet --pipe "ruff format {}" $$f && \
	    PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/jupytext --quiet --pipe "ruff check --fix-only --quiet {}" $$f; \
	done
	sed -i '/^    format_version: /d; /^    jupytext_version: /d' chapters/*.md

test: lint $(MATHJAX) $(CHROMEDRIVER)
	$(BIN)/python tools/notebooks.py --check
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo "strict build passed: zero warnings"
	$(BIN)/python -m pytest -n $(JOBS) --dist loadscope tests chapters intro.ipynb \
	    --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg \
	    --doctest-modules src/replicaplan

# the unit tests a change is checked against while working: no notebook, browser or slow test
check: lint
	$(BIN)/python -m pytest -n $(JOBS) --dist loadscope -m "not slow" tests \
	    --ignore=tests/browser --ignore=tests/test_notebooks.py

# not part of `make test`: every mutant costs a test run (tools/mutation.py says how)
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-mutation.txt
	$(BIN)/python tools/mutation.py

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do [ -e "$$b" ] || continue; $(BIN)/python "$$b"; done

clean:
	rm -rf _build _vendor/mathjax
