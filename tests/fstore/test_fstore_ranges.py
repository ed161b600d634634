"""fstore.quads(within=NumericRange): a span scan that keeps every number in the range,
checked against Python's own comparisons on random values, bounds and histories."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, Literal, NumericRange, Var
from nstore.errors import PatternError
from nstore.pack import pack_value

from tests.query_fixtures import fstore_repo
from tests.profiles import examples

P = IRI("urn:p")
XSD_INT = IRI("http://www.w3.org/2001/XMLSchema#int")

numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-50, max_value=50),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-1000, max_value=1000),
)
objects = st.one_of(
    numbers,
    st.booleans(),
    st.text(max_size=3),
    st.integers(-5, 5).map(lambda n: Literal(str(n), XSD_INT)),  # a number fstore keeps as a Literal
    st.just("9" * 700),  # a value too long for a key: stored as a blob
)
bounds = st.one_of(st.none(), numbers)


def in_range(value, r: NumericRange) -> bool:
    """Python's comparison: what the span scan must keep (numbers only; bool is not one)."""
    if type(value) not in (int, float, Decimal) or value != value:
        return False
    if any(bound is not None and bound != bound for bound in (r.low, r.high)):
        return False  # every comparison with NaN is false
    if r.low is not None and (value < r.low or (value == r.low and not r.include_low)):
        return False
    if r.high is not None and (value > r.high or (value == r.high and not r.include_high)):
        return False
    return True


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(objects, min_size=1, max_size=25), bounds, bounds, st.booleans(), st.booleans(), st.lists(st.integers(0, 24), max_size=5))
def test_span_scan_keeps_every_number_in_range(values, low, high, include_low, include_high, removed):
    r = NumericRange(low, high, include_low, include_high)
    with fstore_repo([(None, IRI(f"urn:s{i}"), P, value) for i, value in enumerate(values)]) as repo:
        with repo.transaction("main", message="fewer", allow_empty=True) as tx:
            for i in removed:
                if i < len(values):
                    fstore.rm(tx, None, IRI(f"urn:s{i}"), P, values[i])
        # Stored values (terms=False): the checks compare Python numbers.
        alive = {q for q in fstore.quads(repo.at("main"), None, Var("s"), P, Var("o"), terms=False)}
        for reader in (repo.at("main"), repo.at("main~1")):
            everything = list(fstore.quads(reader, None, Var("s"), P, Var("o"), terms=False))
            scanned = list(fstore.quads(reader, None, Var("s"), P, Var("o"), within=r, terms=False))
            # Exactly the quads whose packed object lies in the spans, in index order...
            spans = r.spans()
            assert scanned == [q for q in everything if spans is None or r.holds(fstore_identity(repo, q[3]))]
            # ...which keeps every number in range, whatever its type.
            assert {q for q in everything if in_range(q[3], r)} <= set(scanned)
        # A write transaction sees its pending quads through the same range.
        with repo.transaction("main", message="more") as tx:
            fstore.add(tx, None, IRI("urn:new"), P, 7)
            fstore.add(tx, None, IRI("urn:new"), P, 7.5)
            pending = set(fstore.quads(tx, None, Var("s"), P, Var("o"), within=r, terms=False))
            expected = {q for q in alive | {(None, IRI("urn:new"), P, 7), (None, IRI("urn:new"), P, 7.5)}
                        if r.spans() is None or r.holds(fstore_identity(repo, q[3]))}
            assert pending == expected


def fstore_identity(repo, value) -> bytes:
    """The object's item as keys hold it (a dictionary reference for a term, a blob
    reference for a long number)."""
    history = repo.storage.quads
    with repo.storage.read() as snapshot:
        return history.item_bytes(history.encode(snapshot.tx, [value]))[0]


def test_numeric_range_edges():
    assert NumericRange(math.nan, 3).spans() == []
    assert NumericRange(1, 0).spans() is not None
    two = NumericRange(2, 2)
    assert two.holds(pack_value(2)) and two.holds(pack_value(2.0)) and two.holds(pack_value(Decimal("2.000")))
    assert not two.holds(pack_value(3)) and not two.holds(pack_value("2")) and not two.holds(pack_value(True))
    open_low = NumericRange(2, None, include_low=False)
    assert not open_low.holds(pack_value(2)) and open_low.holds(pack_value(3)) and open_low.holds(pack_value(10**40))
    assert NumericRange(None, 0).holds(pack_value(-0.0)) and NumericRange(0, None).holds(pack_value(-0.0))


def test_bounds_must_be_numbers():
    for bad in ("3", True, IRI("urn:3")):
        with pytest.raises(PatternError, match="NumericRange low is a number"):
            NumericRange(bad, 5)
        with pytest.raises(PatternError, match="NumericRange high is a number"):
            NumericRange(None, bad)
