"""Terms the store refuses, met while a query or an update runs: ``IRI()`` / ``URI()`` give
an error (the variable stays unbound) for an IRI that breaks RFC 3987, and a CONSTRUCT or
INSERT template leaves out the quads such a value would make while the others land
(SPARQL 1.1 Query 16.2.1 and 17.4.2.8, Update 3.1.3); pyoxigraph is the oracle where it
can read the request."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest

from tests.query_fixtures import fstore_repo, from_ox, ox_rows

import fstore
from nstore.errors import InvalidTermError
from nstore.terms import valid_iri
from query import Session
from nstore.terms import IRI, Literal, XSD_INTEGER

V = fstore.Var


def one(n: int) -> Literal:
    return Literal(str(n), XSD_INTEGER)


@pytest.mark.parametrize("text", [
    'IRI("not an iri with spaces")', 'URI("http://a/%zz")', 'IRI("http://a/{x}")', 'IRI("http://a/\\u0000")',
    'IRI("")', 'IRI("relative")', 'URI("http://ex/a%20b")', 'IRI("http://a/\u00e9")', 'IRI("urn:x")',
    'STRDT("x", IRI("a b"))',
])
@pytest.mark.parametrize("base", ["", "BASE <http://ex/> "])
def test_iri_is_unbound_when_the_store_would_refuse_it(text: str, base: str) -> None:
    query = f"{base}SELECT ?x WHERE {{ BIND({text} AS ?x) }}"
    with fstore_repo([]) as repo:
        mine = [dict(row) for row in Session(repo).run(query)]
    assert mine == ox_rows(ox.Store(), query)
    # and unbound exactly when the store's own check refuses the IRI
    if text.startswith(("IRI", "URI")) and mine[0]:
        assert valid_iri(mine[0]["x"].value)


CONSTRUCTED = "CONSTRUCT { ?s <urn:p> 1 . <urn:a> <urn:q> 2 } WHERE { VALUES ?text { \"x y\" \"urn:b\" } BIND(IRI(?text) AS ?s) }"


def test_construct_leaves_out_the_triples_of_an_invalid_iri() -> None:
    with fstore_repo([]) as repo:
        mine = list(Session(repo).run(CONSTRUCTED))
    assert Counter(mine) == Counter(ox_rows(ox.Store(), CONSTRUCTED))
    assert set(mine) == {(IRI("urn:b"), IRI("urn:p"), one(1)), (IRI("urn:a"), IRI("urn:q"), one(2))}


# Relative IRIs written without a BASE are kept as written by the parser; bound to
# variables, they reach the template (pyoxigraph refuses to parse them, so no oracle).
RELATIVE = 'VALUES (?s ?o) { (<rel> "x"^^<rel>) (<urn:b> "y") }'


def test_construct_leaves_out_values_that_are_not_valid_rdf() -> None:
    with fstore_repo([]) as repo:
        mine = list(Session(repo).run(f"CONSTRUCT {{ ?s <urn:p> 1 . <urn:a> <urn:p> ?o . <urn:a> <urn:q> 2 }} "
                                      f"WHERE {{ {RELATIVE} }}"))
    assert set(mine) == {(IRI("urn:b"), IRI("urn:p"), one(1)), (IRI("urn:a"), IRI("urn:p"), Literal("y")),
                         (IRI("urn:a"), IRI("urn:q"), one(2))}


def _dataset(repo: fstore.Repository) -> Counter:
    return Counter(tuple(None if v is None else fstore.to_rdf(v) for v in quad)
                   for quad in fstore.quads(repo.at("main"), V("g"), V("s"), V("p"), V("o"), terms=False))


def test_insert_leaves_out_the_quads_of_an_invalid_iri_as_oxigraph_does() -> None:
    update = ('INSERT { ?s <urn:p> ?o . <urn:a> <urn:p> ?o . GRAPH ?s { <urn:a> <urn:r> ?o } } '
              'WHERE { BIND(IRI("not an iri with spaces") AS ?s) BIND(1 AS ?o) }')
    with fstore_repo([]) as repo:
        outcome = Session(repo, author="t").run(update)
        assert outcome.changed and outcome.added == 1
        store = ox.Store()
        store.update(update)
        oracle = Counter((None if isinstance(q.graph_name, ox.DefaultGraph) else from_ox(q.graph_name),
                          from_ox(q.subject), from_ox(q.predicate), from_ox(q.object)) for q in store)
        assert _dataset(repo) == oracle == Counter({(None, IRI("urn:a"), IRI("urn:p"), one(1)): 1})


def test_insert_leaves_out_values_the_store_refuses_and_reports_its_own_terms() -> None:
    with fstore_repo([]) as repo:
        session = Session(repo, author="t")
        session.run(f"INSERT {{ ?s <urn:p> 1 . <urn:a> <urn:p> ?o . GRAPH ?s {{ <urn:a> <urn:q> 2 }} }} "
                    f"WHERE {{ {RELATIVE} }}")
        assert _dataset(repo) == Counter({(None, IRI("urn:b"), IRI("urn:p"), one(1)): 1,
                                          (None, IRI("urn:a"), IRI("urn:p"), Literal("y")): 1,
                                          (IRI("urn:b"), IRI("urn:a"), IRI("urn:q"), one(2)): 1})
        # a term written in the template is the request's own mistake: an error, nothing committed
        with pytest.raises(InvalidTermError, match="needs a scheme"):
            session.run("INSERT { <rel> <urn:p> ?o } WHERE { BIND(3 AS ?o) }")
        assert len(list(repo.log("main"))) == 1
