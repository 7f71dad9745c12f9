# make book   execute every chapter and build the site into _build/html
# make test   unit tests, nbval over every chapter notebook, strict site build
# make bench  speed figures against a peer (benchmarks/)
# Each target creates .venv with every pinned dependency when it is missing or out of date.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test unit nbval strict bench clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build --keep-going .
	@echo "site: $(CURDIR)/_build/html/index.html"

test: $(STAMP)
	$(BIN)/python -m pytest tests chapters --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
	$(BIN)/jupyter-book build -W -n --keep-going .
	@echo "strict build passed: zero warnings"

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do [ -e "$$b" ] || continue; $(BIN)/python "$$b"; done

clean:
	rm -rf _build
