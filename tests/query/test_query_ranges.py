"""Range scans for numeric FILTERs (query.ranges): the same queries give the same answers
over fstore, which scans only the range, and over an in-memory source, which reads every
object; numbers of every stored form are mixed in, canonical or not."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from query import execute, explain
from query.source import MemorySource
from nstore.terms import IRI, Literal

from tests.query_fixtures import fstore_view
from tests.profiles import examples

EX = "http://ex/"
XSD = "http://www.w3.org/2001/XMLSchema#"
P = IRI(EX + "p")


def literal(value: object, datatype: str) -> Literal:
    return Literal(str(value), IRI(XSD + datatype))


objects = st.one_of(
    st.integers(-5, 5).map(lambda n: literal(n, "integer")),
    st.integers(-5, 5).map(lambda n: literal(f"0{n}" if n >= 0 else n, "integer")),  # "03": not canonical
    st.integers(-5, 5).map(lambda n: literal(n, "int")),
    st.decimals(-5, 5, places=2, allow_nan=False).map(lambda d: literal(d, "decimal")),
    st.floats(-5, 5, allow_nan=False).map(lambda f: literal(repr(f).replace("e", "E"), "double")),
    st.sampled_from([literal("NaN", "double"), literal("INF", "double"), literal("-INF", "double")]),
    st.sampled_from([Literal("3"), Literal("x", lang="en"), literal("true", "boolean"), IRI(EX + "o")]),
)
bounds = st.one_of(st.integers(-6, 6).map(str), st.decimals(-6, 6, places=1, allow_nan=False).map(str),
                   st.sampled_from(["2.5e0", "-0.0e0", '"3"^^xsd:int', "1.0"]))
operators = st.sampled_from(["<", "<=", ">", ">=", "="])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(objects, min_size=1, max_size=20), st.lists(st.tuples(operators, bounds, st.booleans()), min_size=1, max_size=3))
def test_range_scans_match_reading_everything(values, comparisons):
    quads = [(None, IRI(f"{EX}s{i}"), P, value) for i, value in enumerate(values)]
    conjuncts = [f"?o {op} {bound}" if flipped else f"{bound} {_FLIP[op]} ?o" for op, bound, flipped in comparisons]
    text = f"PREFIX xsd: <{XSD}> SELECT ?s ?o WHERE {{ ?s <{P.value}> ?o FILTER({' && '.join(conjuncts)}) }}"
    with fstore_view(quads) as view:
        assert "range scan of ?o" in explain(view, text)
        scanned = Counter(tuple(sorted(row.items())) for row in execute(view, text))
    everything = Counter(tuple(sorted(row.items())) for row in execute(MemorySource(quads), text))
    assert scanned == everything, text


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def test_explain_shows_the_range(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    text = f"SELECT ?s WHERE {{ ?s <{P.value}> ?o FILTER(?o >= 30 && ?o < 32.5 && ?o > 29) }}"
    assert "range scan of ?o in [30, 32.5)" in explain(repo.at("main"), text)
    assert "range scan" not in explain(repo.at("main"), f"SELECT ?s WHERE {{ ?s <{P.value}> ?o FILTER(?o != 3) }}")
    repo.close()

