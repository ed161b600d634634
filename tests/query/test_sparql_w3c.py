"""The W3C SPARQL 1.0 and 1.1 query test suites, run against a datae store.

Each manifest test is one pytest case (id: its directory and name). Data is loaded through
fstore, the query runs through ``query.execute``, results are compared as the suite says
(see ``tests/conformance.py``). Tests needing features outside the query engine are skipped
with the feature's name; ``python -m tests.conformance_report`` writes the counts to
``docs/conformance.md``.
"""

from __future__ import annotations


import pytest


from tests import conformance

_SUITE = conformance.require_suite()
_CASES = conformance.collect(_SUITE)


def test_suite_is_present() -> None:
    assert len(_CASES) > 900


@pytest.mark.parametrize("case", _CASES, ids=[c.id for c in _CASES])
def test_w3c(case: conformance.Case) -> None:
    outcome = conformance.run_case(case)
    if outcome.status == "skip":
        pytest.skip(outcome.reason)
    assert outcome.status == "pass", f"{case.name}: {outcome.reason}"
