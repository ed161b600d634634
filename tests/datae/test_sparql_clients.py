"""SPARQL clients with their default settings against a real ``datae serve``:
SPARQLWrapper 2 (every return format it offers for each query form, GET and POST, both
ways of posting, updates with the token) and rdflib's ``SPARQLStore``,
``SPARQLUpdateStore`` and ``Dataset`` over the endpoint. What each answers is checked
against rdflib's own evaluation of the same query over the same data (the oracle)."""

from __future__ import annotations

import csv
import io
import json
import warnings
from urllib.parse import urlencode

import pytest
from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.compare import isomorphic
from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore
from SPARQLWrapper import (CSV, JSON, JSONLD, N3, POST, POSTDIRECTLY, RDF, RDFXML, TSV, TURTLE, XML,
                           SPARQLWrapper)
from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

import fstore
import fstore.rdf
from nstore.terms import IRI
from tests.server_fixtures import Server, serve_with_token

EX = "http://example.org/"
DATA = f"""
@prefix ex: <{EX}> .
ex:alice ex:name "Alice" ; ex:age 42 ; ex:knows ex:bob .
ex:bob ex:name "Bob" ; ex:age 7 .
"""
NAMED = f"<{EX}alice> <{EX}likes> <{EX}tea> <{EX}g1> .\n"
SELECT = f"SELECT ?s ?name WHERE {{ ?s <{EX}name> ?name }} ORDER BY ?name"
ASK = f"ASK {{ <{EX}alice> <{EX}knows> <{EX}bob> }}"
CONSTRUCT = f"CONSTRUCT {{ ?s <{EX}called> ?name }} WHERE {{ ?s <{EX}name> ?name }}"
DESCRIBE = f"DESCRIBE <{EX}bob>"


def store_with_data(directory):
    """A store in ``directory`` holding DATA (default graph) and NAMED (named graphs)."""
    store = directory / "store"
    repo = fstore.open(str(store))
    with repo.transaction("main", message="data", author="tests") as tx:
        fstore.add_many(tx, fstore.rdf.parse(DATA.encode(), "ttl"))
        fstore.add_many(tx, fstore.rdf.parse(NAMED.encode(), "nq"))
    repo.close()
    return store


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("clients")
    running = serve_with_token(store_with_data(directory), directory)
    yield running
    running.stop()


def oracle() -> Graph:
    graph = Graph()
    graph.parse(data=DATA, format="turtle")
    return graph


def wrapper(server: Server, query: str, fmt: str, method: str, request_method: str | None) -> SPARQLWrapper:
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setQuery(query)
    client.setReturnFormat(fmt)
    if method == "POST":
        client.setMethod(POST)
        if request_method:
            client.setRequestMethod(request_method)
    return client


WAYS = [("GET", None), ("POST", None), ("POST", POSTDIRECTLY)]


def expected_rows() -> list[tuple[str, str]]:
    return [(str(row.s), str(row.name)) for row in oracle().query(SELECT)]


@pytest.mark.parametrize("method,request_method", WAYS)
@pytest.mark.parametrize("fmt", [JSON, XML, CSV, TSV])
def test_select_in_every_result_format(server, fmt, method, request_method):
    result = wrapper(server, SELECT, fmt, method, request_method).query()
    converted = result.convert()
    if fmt == JSON:
        rows = [(b["s"]["value"], b["name"]["value"]) for b in converted["results"]["bindings"]]
    elif fmt == XML:
        rows = []
        for node in converted.getElementsByTagName("result"):
            values = {b.getAttribute("name"): b.firstChild.firstChild.nodeValue for b in node.getElementsByTagName("binding")}
            rows.append((values["s"], values["name"]))
    else:
        text = converted.decode()
        if fmt == CSV:
            rows = [tuple(r) for r in list(csv.reader(io.StringIO(text)))[1:]]
        else:
            rows = [tuple(v.strip("<>\"") for v in line.split("\t")) for line in text.splitlines()[1:]]
    assert rows == expected_rows()


@pytest.mark.parametrize("method,request_method", WAYS)
@pytest.mark.parametrize("fmt", [JSON, XML, CSV, TSV])
def test_ask_in_every_result_format(server, fmt, method, request_method):
    converted = wrapper(server, ASK, fmt, method, request_method).query().convert()
    if fmt == JSON:
        assert converted["boolean"] is True
    elif fmt == XML:
        assert converted.getElementsByTagName("boolean")[0].firstChild.nodeValue == "true"
    else:
        assert "true" in converted.decode().lower()
    assert oracle().query(ASK).askAnswer is True


GRAPH_FORMATS = [XML, RDFXML, TURTLE, N3, JSONLD, RDF, JSON]


def parsed(server: Server, query: str, fmt: str, method: str, request_method: str | None) -> Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # SPARQLWrapper warns that it sends Accept: */* for RDF, JSON
        result = wrapper(server, query, fmt, method, request_method).query()
    media = result.response.headers["Content-Type"].split(";")[0]
    data = result.response.read()
    graph = Graph()
    graph.parse(data=data, format={"application/rdf+xml": "xml", "text/turtle": "turtle",
                                   "application/ld+json": "json-ld"}[media])
    return graph


@pytest.mark.parametrize("method,request_method", WAYS)
@pytest.mark.parametrize("fmt", GRAPH_FORMATS)
def test_construct_in_every_graph_format(server, fmt, method, request_method):
    assert isomorphic(parsed(server, CONSTRUCT, fmt, method, request_method), oracle().query(CONSTRUCT).graph)


@pytest.mark.parametrize("method,request_method", WAYS)
@pytest.mark.parametrize("fmt", GRAPH_FORMATS)
def test_describe_in_every_graph_format(server, fmt, method, request_method):
    graph = parsed(server, DESCRIBE, fmt, method, request_method)
    assert (URIRef(EX + "bob"), URIRef(EX + "name"), Literal("Bob")) in graph
    assert all(s == URIRef(EX + "bob") for s in graph.subjects())


@pytest.mark.parametrize("fmt", [XML, RDFXML])
def test_construct_as_xml_is_rdf_xml(server, fmt):
    result = wrapper(server, CONSTRUCT, fmt, "GET", None).query()
    assert result.response.headers["Content-Type"].startswith("application/rdf+xml")
    assert isinstance(result.convert(), Graph)  # SPARQLWrapper's own parse of it


def test_convert_gives_graphs_for_turtle_and_json_ld(server):
    for fmt in (TURTLE, N3, JSONLD):
        converted = wrapper(server, CONSTRUCT, fmt, "GET", None).query().convert()
        graph = converted if isinstance(converted, Graph) else Graph().parse(data=converted, format="turtle")
        assert isomorphic(graph, oracle().query(CONSTRUCT).graph), fmt


def test_format_parameters_that_conflict_with_accept_are_refused(server):
    status, _, body = server.request("GET", "/sparql?" + _q(ASK, format="csv"),
                                     headers={"Accept": "application/sparql-results+json"})
    assert status == 406 and b"format" in body
    status, _, body = server.request("GET", "/sparql?" + _q(ASK, format="csv", output="json"))
    assert status == 400 and b"disagree" in body
    status, headers, _ = server.request("GET", "/sparql?" + _q(ASK, output="csv"))  # no Accept: the parameter decides
    assert status == 200 and headers["content-type"].startswith("text/csv")


def _q(query: str, **extra: str) -> str:
    return urlencode({"query": query, **extra})


@pytest.mark.parametrize("request_method", [None, POSTDIRECTLY])
def test_updates_with_the_token(server, request_method):
    subject = f"{EX}update-{request_method or 'form'}"
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setMethod(POST)
    if request_method:
        client.setRequestMethod(request_method)
    client.setQuery(f"INSERT DATA {{ <{subject}> <{EX}name> \"new\" }}")
    with pytest.raises(SPARQLWrapperException):  # 401 without the token
        client.query()
    client.addCustomHttpHeader("Authorization", f"Bearer {server.token}")
    assert client.query().response.status == 200
    check = SPARQLWrapper(f"{server.url}/sparql")
    check.setQuery(f"ASK {{ <{subject}> <{EX}name> \"new\" }}")
    check.setReturnFormat(JSON)
    assert check.query().convert()["boolean"] is True
    client.setQuery(f"DELETE DATA {{ <{subject}> <{EX}name> \"new\" }}")
    client.query()
    assert check.query().convert()["boolean"] is False


# -- rdflib over the endpoint -------------------------------------------------------------


@pytest.fixture()
def rdflib_server(tmp_path):
    running = Server(store_with_data(tmp_path))
    yield running
    running.stop()


def test_rdflib_sparql_store_reads(rdflib_server):
    graph = Graph(store=SPARQLStore(f"{rdflib_server.url}/sparql"))
    alice, bob = URIRef(EX + "alice"), URIRef(EX + "bob")
    assert (alice, URIRef(EX + "knows"), bob) in graph
    assert set(graph.objects(bob, URIRef(EX + "name"))) == {Literal("Bob")}
    assert set(graph.objects(alice, URIRef(EX + "age"))) == {Literal(42)}
    rows = {(str(r.s), str(r.name)) for r in graph.query(SELECT)}
    assert rows == set(expected_rows())
    assert graph.query(ASK).askAnswer is True
    assert isomorphic(graph.query(CONSTRUCT).graph, oracle().query(CONSTRUCT).graph)


def test_rdflib_dataset_over_the_endpoint(rdflib_server):
    """Read, add, remove and list graphs through rdflib's ``Dataset`` over the endpoint.
    (``Dataset.quads`` and iterating the dataset fail inside rdflib for any SPARQL
    server: its SPARQLStore yields no contexts, RDFLib/rdflib#3556; a graph's triples
    are read through ``dataset.graph(IRI)``, which names the graph to the server.)"""
    url = f"{rdflib_server.url}/sparql"
    dataset = Dataset(store=SPARQLUpdateStore(url, url))
    g1 = URIRef(EX + "g1")
    alice, bob, likes = URIRef(EX + "alice"), URIRef(EX + "bob"), URIRef(EX + "likes")
    assert {g.identifier for g in dataset.graphs()} >= {g1}
    # dataset.graph(IRI) sends CREATE GRAPH, which an existing graph refuses (SPARQL 1.1
    # Update, 3.2.1); an existing graph is read through a Graph on the same store
    named = Graph(store=dataset.store, identifier=g1)
    assert set(named) == {(alice, likes, URIRef(EX + "tea"))}
    dataset.add((bob, likes, URIRef(EX + "coffee"), g1))  # a quad
    named.add((bob, likes, URIRef(EX + "milk")))  # a triple into a named graph
    assert set(named.objects(bob, likes)) == {URIRef(EX + "coffee"), URIRef(EX + "milk")}
    dataset.remove((alice, None, None, g1))
    assert set(named) == {(bob, likes, URIRef(EX + "coffee")), (bob, likes, URIRef(EX + "milk"))}
    g2 = URIRef(EX + "g2")
    dataset.graph(g2).add((alice, likes, URIRef(EX + "water")))  # a new graph
    assert {g.identifier for g in dataset.graphs()} >= {g1, g2}
    # the default graph: the dataset's own triples
    carol = URIRef(EX + "carol")
    dataset.add((carol, URIRef(EX + "name"), Literal("Carol")))
    assert (carol, URIRef(EX + "name"), Literal("Carol")) in dataset
    assert set(dataset.objects(bob, URIRef(EX + "age"))) == {Literal(7)}
    dataset.remove((carol, None, None))
    assert (carol, None, None) not in dataset
    repo = fstore.open(str(rdflib_server.store))
    try:
        view = repo.at("main")
        stored = {(b["s"], b["o"]) for b in fstore.from_(view, IRI(EX + "g1"), fstore.Var("s"), IRI(EX + "likes"),
                                                             fstore.Var("o"))}
        assert stored == {(IRI(EX + "bob"), IRI(EX + "coffee")), (IRI(EX + "bob"), IRI(EX + "milk"))}
        assert all(commit.author for commit in repo.log("main"))  # the HTTP writes have an author
    finally:
        repo.close()


def test_rdflib_sparql_update_store_graph(rdflib_server):
    """A plain ``Graph`` over ``SPARQLUpdateStore``, named as the store's default graph."""
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    url = f"{rdflib_server.url}/sparql"
    graph = Graph(store=SPARQLUpdateStore(url, url), identifier=DATASET_DEFAULT_GRAPH_ID)
    carol = URIRef(EX + "carol")
    graph.add((carol, URIRef(EX + "name"), Literal("Carol")))
    assert (carol, URIRef(EX + "name"), Literal("Carol")) in graph
    graph.remove((carol, None, None))
    assert (carol, None, None) not in graph
    assert set(graph.objects(URIRef(EX + "bob"), URIRef(EX + "age"))) == {Literal(7)}


def test_sparql_wrapper_results_as_json_are_the_w3c_form(server):
    result = wrapper(server, SELECT, JSON, "GET", None).query()
    data = json.loads(result.response.read())
    assert data["head"]["vars"] == ["s", "name"]
