# All set-up happens here: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,spark,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m bench.demo --store ./demo-store

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m bench.nstore_bench

clean:
	rm -rf $(VENV) demo-store .pytest_cache .hypothesis
