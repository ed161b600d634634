"""One RDF term, one stored key: canonical() and to_rdf() are inverse on every value, and
every literal's lexical form survives a round trip through the store."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

import fstore
from fstore import IRI, Literal, Var
from nstore.terms import XSD, canonical, to_rdf

values = st.one_of(
    st.text(), st.integers(), st.booleans(), st.binary(),
    st.floats(allow_nan=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=4).map(lambda d: d.normalize()),
    st.dates(), st.datetimes(), st.datetimes(timezones=st.just(dt.timezone.utc)),
)
datatypes = st.sampled_from([XSD + t for t in ("integer", "boolean", "double", "decimal", "date", "dateTime",
                                               "base64Binary", "string", "token")])
lexicals = st.one_of(st.text(max_size=12), st.integers().map(str), st.floats().map(repr),
                     st.sampled_from(["true", "false", "1", "0", "01", "1.50", "1.5E0", "INF", "NaN", "2024-02-29",
                                      "2024-02-29T10:00:00", "2024-02-29T10:00:00Z", "AGFi", " 1", "+1", "-0"]))


@given(values)
def test_canonical_inverts_to_rdf(value):
    back = canonical(to_rdf(value))
    assert type(back) is type(value)
    assert back == value or (isinstance(value, float) and math.isnan(value))


@given(lexicals, datatypes)
def test_every_literal_round_trips(lexical, datatype):
    literal = Literal(lexical, datatype)
    assert to_rdf(canonical(literal)) == literal


def test_literals_round_trip_through_the_store(tmp_path):
    repo = fstore.open(tmp_path / "r")
    samples = [Literal(lex, XSD + t) for lex, t in [("1.50", "decimal"), ("1.5", "decimal"), ("01", "integer"),
                                                    ("1.5E0", "double"), ("1.50E0", "double"), ("2024-01-01", "date"),
                                                    ("2024-01-01T00:00:00Z", "dateTime"), ("x", "string")]]
    with repo.transaction("main", message="m") as tx:
        for i, literal in enumerate(samples):
            fstore.add(tx, None, IRI(f"urn:s{i}"), IRI("urn:p"), literal)
    view = repo.at("main")
    for i, literal in enumerate(samples):
        (binding,) = fstore.from_(view, None, IRI(f"urn:s{i}"), IRI("urn:p"), Var("o"))
        assert binding["o"] == literal  # the term read back is the term written
        assert fstore.ask(view, None, IRI(f"urn:s{i}"), IRI("urn:p"), literal)
    assert isinstance(next(fstore.from_(view, None, IRI("urn:s1"), IRI("urn:p"), Var("o")))["o"].value, Decimal)
    # stored values on request: the literal's Python value where one stands for it exactly
    (quad,) = fstore.quads(view, None, IRI("urn:s1"), IRI("urn:p"), Var("o"), terms=False)
    assert type(quad[3]) is Decimal
    repo.close()
