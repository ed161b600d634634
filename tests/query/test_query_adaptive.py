"""Adaptive BGP steps (query.executor): a lookup step switches to a hash join once reading
its whole pattern has cost no more than its lookups, with the same answers either way; and
it does not switch when its input is small next to the pattern."""

from __future__ import annotations

from collections import Counter


from tests.query_fixtures import fstore_view

import query.executor as executor
from query.engine import prepare
from query.parser import parse_query
from query.source import as_source
from nstore.terms import XSD_INTEGER, IRI, Literal

EX = "http://ex/"
P = "PREFIX : <http://ex/>\n"


def people(n: int) -> list:
    quads = []
    for i in range(n):
        person = IRI(f"{EX}p{i}")
        quads.append((None, person, IRI(EX + "age"), Literal(str(i % 50), XSD_INTEGER)))
        quads.append((None, person, IRI(EX + "name"), Literal(f"P{i}")))
        if i % 3 == 0:
            quads.append((None, person, IRI(EX + "likes"), IRI(f"{EX}p{(i * 7) % n}")))
    return quads


def run(view, text: str) -> tuple[Counter, list]:
    """The answer as a multiset, and the executor's step states afterwards."""
    executor_, plan = prepare(as_source(view), parse_query(text))
    rows = Counter(frozenset(sol.items()) for sol in executor_.solutions(plan))
    return rows, list(executor_._steps.values())


def test_a_big_input_switches_to_a_hash_join_with_the_same_answer() -> None:
    text = P + "SELECT ?p ?a ?n WHERE { ?p :age ?a . ?p :name ?n OPTIONAL { ?p :likes ?q . ?q :age ?qa } }"
    with fstore_view(people(3000)) as view:
        # a scan much cheaper than today's, so that 3,000 people are enough to switch
        saved = executor.SCAN_ROWS_PER_LOOKUP
        executor.SCAN_ROWS_PER_LOOKUP = 50
        try:
            adaptive, states = run(view, text)
        finally:
            executor.SCAN_ROWS_PER_LOOKUP = saved
        assert any(state.table is not None for state in states), "no step switched to a hash join"
        executor.ADAPTIVE_STEPS = False
        try:
            nested, states = run(view, text)
        finally:
            executor.ADAPTIVE_STEPS = True
        assert states == []
    assert adaptive == nested and sum(adaptive.values()) == 3000


def test_a_small_input_keeps_looking_up() -> None:
    text = P + 'SELECT ?p ?a WHERE { ?p :name "P7" . ?p :age ?a }'
    with fstore_view(people(3000)) as view:
        rows, states = run(view, text)
    assert list(rows) == [frozenset({("p", IRI(EX + "p7")), ("a", Literal("7", XSD_INTEGER))})]
    assert all(state.table is None and not state.rows for state in states)


def test_a_step_stops_its_scan_at_the_held_rows_cap() -> None:
    """The scan for a hash join is an optimisation: past max_held_rows it is dropped and the
    step keeps looking up, with the same answer and no IntermediateTooLargeError."""
    text = P + "SELECT ?p ?a ?n WHERE { ?p :age ?a . ?p :name ?n }"
    with fstore_view(people(300)) as view:
        saved = executor.SCAN_ROWS_PER_LOOKUP, executor.LOOKUPS_BEFORE_SCAN
        executor.SCAN_ROWS_PER_LOOKUP, executor.LOOKUPS_BEFORE_SCAN = 50, 0
        try:
            expected, states = run(view, text)
            assert any(state.table is not None for state in states)  # unlimited: it switches
            executor_, plan = prepare(as_source(view), parse_query(text), max_held_rows=10)
            capped = Counter(frozenset(sol.items()) for sol in executor_.solutions(plan))
        finally:
            executor.SCAN_ROWS_PER_LOOKUP, executor.LOOKUPS_BEFORE_SCAN = saved
        states = list(executor_._steps.values())
    assert states and all(state.table is None and state.scan is None and not state.rows for state in states)
    assert capped == expected and sum(capped.values()) == 300
