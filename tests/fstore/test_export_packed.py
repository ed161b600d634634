"""The export's packed path (columns straight from the store's bytes) against the value
path (``quad_columns`` of decoded quads): same columns for every kind of value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from nstore.errors import InvalidTermError
from nstore.terms import check_iri
from fstore import IRI, BNode, Literal

pa = pytest.importorskip("pyarrow")

from fstore.export.arrow import quad_batches, view_quad_batches, view_quads
from fstore.export.terms import packed_quad_columns, quad_columns

from tests.query_fixtures import fstore_view
from tests.profiles import examples

XSD = "http://www.w3.org/2001/XMLSchema#"


def _valid_iri(text: str) -> bool:
    """Whether the store takes ``text`` as an IRI (RFC 3987; it refuses the others)."""
    try:
        check_iri(text)
    except InvalidTermError:
        return False
    return True


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
nodes = st.one_of(
    texts.map(lambda t: "urn:" + t).filter(_valid_iri).map(IRI),
    texts.map(lambda t: BNode("b" + t)),
    st.just(IRI("urn:" + "long" * 200)),  # too long for a key: a blob
)
objects = st.one_of(
    nodes,
    texts,
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(),
    st.binary(max_size=5),
    st.tuples(texts, st.sampled_from(["en", "fr-be"])).map(lambda t: Literal(t[0], lang=t[1])),
    st.tuples(texts, st.sampled_from(["int", "integer", "double", "boolean", "date", "gYear"])).map(
        lambda t: Literal(t[0], IRI(XSD + t[1]))),
    st.just("x\x00y"),  # a NUL inside: escaped in the key
)
graphs = st.one_of(st.none(), nodes)
quads = st.lists(st.tuples(graphs, nodes, nodes.filter(lambda n: type(n) is IRI), objects), max_size=25)


@settings(max_examples=examples(80), deadline=None)
@given(quads, st.integers(1, 7))
def test_packed_batches_equal_value_batches(data, batch_size):
    with fstore_view(data) as view:
        packed = [b.to_pylist() for b in view_quad_batches(view, batch_size)]
        by_value = [b.to_pylist() for b in quad_batches(view_quads(view), batch_size)]
    assert packed == by_value


def test_packed_columns_of_each_kind(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    values = [IRI("urn:o"), "text", 7, 2.5, True, Decimal("1.50"), dt.date(2020, 1, 2),
              dt.datetime(2020, 1, 2, 3, 4, tzinfo=dt.timezone.utc), b"\x00\x01",
              Literal("chat", lang="FR"), Literal("042", IRI(XSD + "integer")), BNode("x")]
    with repo.transaction("main", message="kinds") as tx:
        for i, value in enumerate(values):
            fstore.add(tx, IRI("urn:g"), IRI(f"urn:s{i}"), IRI("urn:p"), value)
    view = repo.at("main")
    history = repo.storage.quads
    with view.reading() as pinned:
        _, rows = history.reader(pinned._snapshot.tx, view.seq).packed((fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o")))
        rows = list(rows)
        columns = packed_quad_columns(rows, history.decoder(pinned._snapshot.tx, False))
    assert columns == quad_columns(list(fstore.quads(view, fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))))
    row = {f"urn:s{i}": value for i, value in enumerate(values)}
    at = {value: columns["subject"].index(subject) for subject, value in row.items()}
    assert columns["language"][at[Literal("chat", lang="fr")]] == "fr"
    assert columns["object_int"][at[Literal("042", IRI(XSD + "integer"))]] == 42
    assert columns["object_kind"][at[BNode("x")]] == "bnode"
    repo.close()
