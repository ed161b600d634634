# All set-up happens here: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# `make bench` runs every benchmark (each side by side with its peer); choose some with
# e.g. `make bench BENCHES=query BENCH_ARGS="--quads 100000"`.
BENCHES ?= nstore versioning query tables tables_sparql kart spark history schemaorg load integrity server
BENCH_ARGS ?=

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml setup.py nstore/_keysort.pyx
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,spark,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m bench.demo --store ./demo-store

test: $(STAMP)
	$(PY) -m pytest -q tests --doctest-modules nstore fstore query datae

bench: $(STAMP)
	for name in $(BENCHES); do $(PY) -m bench.$${name}_bench $(BENCH_ARGS) || exit 1; done

clean:
	rm -rf $(VENV) demo-store demo-store-spark .pytest_cache .hypothesis
