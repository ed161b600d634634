# All set-up happens here: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# `make bench` runs every benchmark (each side by side with its peer) at its default size;
# choose some with e.g. `make bench BENCHES=query BENCH_ARGS="--quads 100000"`.
# `python -m bench.run_all [--quick]` runs them all at the sizes docs/performance.md cites
# (or small ones) and prints one line per figure.
BENCHES ?= nstore versioning query query_shapes tables tables_sparql kart spark history schemaorg load integrity server sync rdf_formats read_terms term_check clone_check merge_history scale bsbm
BENCH_ARGS ?=

.PHONY: demo test test-workers test-deep fuzz bench install clean

$(STAMP): pyproject.toml setup.py $(wildcard */*.pyx */*/*.pyx)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,spark,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m bench.demo --store ./demo-store

# Two pytest-xdist workers (the machine's two cores; TEST_WORKERS=0 runs in one process):
# the tests of a module-scoped fixture, and those of the one Spark session, each on one
# worker (tests/conftest.py names the groups).
TEST_WORKERS ?= 2
TEST_ARGS := -q tests --doctest-modules nstore fstore query datae -n $(TEST_WORKERS) --dist loadgroup
# Byte-code compiled once first: the tests start many `python -m datae` processes, which would
# each compile every module again where PYTHONDONTWRITEBYTECODE is set.
test: $(STAMP)
	$(PY) -m compileall -q nstore fstore query datae tests bench
	$(PY) -m pytest $(TEST_ARGS)

# The suites that talk to a real `datae serve` with every server running two worker processes
# (tests/server_fixtures.py: DATAE_TEST_SERVE_WORKERS): pushes, updates, graph store writes
# and merge requests landing on either process, racing each other. (make test runs
# tests/datae/test_server.py both ways, and tests/datae/test_server_workers.py.)
SERVER_SUITES := tests/datae/test_server.py tests/datae/test_server_holes.py tests/datae/test_server_workers.py \
	tests/datae/test_requests.py tests/datae/test_sparql_protocol.py tests/datae/test_sparql_clients.py \
	tests/datae/test_graph_store.py tests/fstore/test_sync_received.py tests/query/test_query_memory.py
test-workers: $(STAMP)
	DATAE_TEST_SERVE_WORKERS=2 $(PY) -m pytest -q $(SERVER_SUITES) -n $(TEST_WORKERS) --dist loadgroup

# The whole suite with every property test and state machine under the deep profile (a
# hundred times the examples of make test, no deadline): hours, not for CI.
test-deep: $(STAMP)
	HYPOTHESIS_PROFILE=deep $(PY) -m pytest $(TEST_ARGS)

# The parsers' fuzz tests (RDF in every syntax, CSV, SPARQL) for about ten minutes under the
# deep profile: no exception but datae's own, and a refused file changes nothing.
FUZZ_EXAMPLES ?= 80000
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=deep DATAE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q tests/datae/test_fuzz_inputs.py --durations=0

bench: $(STAMP)
	for name in $(BENCHES); do $(PY) -m bench.$${name}_bench $(BENCH_ARGS) || exit 1; done

clean:
	rm -rf $(VENV) demo-store demo-store-spark .pytest_cache .hypothesis
