"""The SPARQL 1.1 Graph Store HTTP Protocol at ``/store`` and the service description at
``GET /sparql``, over real HTTP against ``datae serve``.

``W3C_CASES`` is the W3C test suite of the protocol (``sparql11/http-rdf-update/tests.txt``
in the suites ``get_sparql_suite.sh`` fetches), written as data: each request in order,
the status it must get, and for a GET the triples it must read (compared as graphs by
rdflib, the oracle). The suite names graphs directly by URL (``/person/1.ttl``); here
they are named indirectly (``/store?graph=http://$HOST$/person/1.ttl``), which the spec
allows. ``DEVIATIONS`` lists where the answers differ from the suite's, by design
(docs/server.md): a graph PUT empty holds no triples, so it reads and deletes as 404 (a
quad store has no empty graphs); and ``multipart/form-data`` POSTs are not served (415),
which the spec leaves optional. When the suite is at hand, every request of it must
have its case here, in order, with the suite's status unless listed.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote, urlencode

import pyoxigraph as ox
import pytest
from rdflib import Graph, URIRef
from rdflib.compare import isomorphic

import fstore
from nstore.terms import IRI
from tests import conformance
from tests.server_fixtures import Server, serve_with_token

PREFIXES = "@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n@prefix v: <http://www.w3.org/2006/vcard/ns#> .\n"
JOHN = PREFIXES + '<http://$HOST$/person/1> a foaf:Person; foaf:businessCard [ a v:VCard; v:fn "John Doe" ] .'
JANE = PREFIXES + '<http://$HOST$/person/1> a foaf:Person; foaf:businessCard [ a v:VCard; v:fn "Jane Doe" ] .'
ALICE = PREFIXES + '[] a foaf:Person; foaf:businessCard [ a v:VCard; v:given-name "Alice" ] .'
JANE_NAMED = PREFIXES + ('<http://$HOST$/person/1> a foaf:Person; foaf:name "Jane Doe"; '
                         'foaf:businessCard [ a v:VCard; v:fn "Jane Doe" ] .')
PERSON1, PERSON2 = "graph:http://$HOST$/person/1.ttl", "graph:http://$HOST$/person/2.ttl"

# (name, method, target, Content-Type, body, statuses accepted, expected graph for a GET)
# target: "graph:IRI", "default", "store" (the graph store itself) or "new" (the Location
# the POST that created a graph answered). Where the suite says 200 for a write, 204
# (which the spec allows: "200 OK or 204 No Content") is accepted too.
W3C_CASES = [
    ("PUT - Initial state", "PUT", PERSON1, "text/turtle", JOHN, {201}, None),
    ("GET of PUT - Initial state", "GET", PERSON1, None, None, {200}, JOHN),
    ("PUT - graph already in store", "PUT", PERSON1, "text/turtle", JANE, {200, 204}, None),
    ("GET of PUT - graph already in store", "GET", PERSON1, None, None, {200}, JANE),
    ("PUT - default graph", "PUT", "default", "text/turtle", ALICE, {201}, None),
    ("GET of PUT - default graph", "GET", "default", None, None, {200}, ALICE),
    ("PUT - mismatched payload", "PUT", PERSON1, "application/rdf+xml", JANE, {400}, None),
    ("PUT - empty graph", "PUT", PERSON2, "text/turtle", "", {200, 204}, None),
    ("GET of PUT - empty graph", "GET", PERSON2, None, None, {404}, None),
    ("DELETE - existing graph", "DELETE", PERSON2, None, None, {404}, None),
    ("GET of DELETE - existing graph", "GET", PERSON2, None, None, {404}, None),
    ("DELETE - non-existent graph", "DELETE", PERSON2, None, None, {404}, None),
    ("POST - existing graph", "POST", PERSON1, "text/turtle",
     PREFIXES + '<http://$HOST$/person/1> foaf:name "Jane Doe" .', {200, 204}, None),
    ("GET of POST - existing graph", "GET", PERSON1, None, None, {200}, JANE_NAMED),
    ("POST - multipart/form-data", "POST", PERSON1, "multipart/form-data; boundary=AaB03x", "--AaB03x--", {415}, None),
    ("GET of POST - multipart/form-data", "GET", PERSON1, None, None, {200}, JANE_NAMED),
    ("POST - create new graph", "POST", "store", "text/turtle", ALICE, {201}, None),
    ("GET of POST - create new graph", "GET", "new", None, None, {200}, ALICE),
    ("POST - empty graph to existing graph", "POST", "new", "text/turtle", "", {204}, None),
    ("GET of POST - after noop", "GET", "new", None, None, {200}, ALICE),
    ("HEAD on an existing graph", "HEAD", PERSON1, None, None, {200}, None),
    ("HEAD on a non-existing graph", "HEAD", PERSON2, None, None, {404}, None),
]
# Where datae answers otherwise than the suite, and why (docs/server.md): a graph holds
# triples or does not exist (no empty graphs in a quad store), and multipart/form-data
# POSTs, optional in the spec, are not served. Each: (the suite's status, datae's).
DEVIATIONS = {
    "GET of PUT - empty graph": (200, 404),
    "DELETE - existing graph": (200, 404),  # person/2 was PUT empty: it holds nothing to delete
    "POST - multipart/form-data": (200, 415),
}
def test_every_request_of_the_suite_has_a_case():
    tests = conformance.require_suite() / "sparql11" / "http-rdf-update" / "tests.txt"
    suite = re.findall(r"Request \((.+?)\s*\)[^\n]*\n.*?-+ Response -+\s*\n(\d{3}) ", tests.read_text(), re.S)
    assert len(suite) == len(W3C_CASES) == 22
    for (name, status), case in zip(suite, W3C_CASES):
        name = " ".join(name.split())  # the suite has "create  new graph"
        assert case[0] == name
        suite_status, ours = DEVIATIONS.get(name, (int(status), None))
        assert int(status) == suite_status, name
        assert (ours if ours is not None else int(status)) in case[5], name


@pytest.fixture()
def server(tmp_path, monkeypatch):
    monkeypatch.delenv("DATAE_AUTHOR", raising=False)  # the server's own author, tested in test_server_holes
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    running = serve_with_token(store, tmp_path)
    yield running
    running.stop()


def path_of(target: str, host: str) -> str:
    if target == "default":
        return "/store?default"
    if target == "store":
        return "/store"
    return "/store?" + urlencode({"graph": target.removeprefix("graph:").replace("$HOST$", host)})


def test_the_w3c_graph_store_protocol_suite(server):
    host = f"{server.host}:{server.port}"
    auth = {"Authorization": f"Bearer {server.token}"}
    new_graph = None
    for name, method, target, media, body, statuses, expected in W3C_CASES:
        path = new_graph if target == "new" else path_of(target, host)
        headers = {**auth, **({"Content-Type": media} if media else {}), "Accept": "text/turtle; charset=utf-8"}
        data = None if body is None else body.replace("$HOST$", host).encode()
        status, answer_headers, answer = server.request(method, path, data, headers)
        assert status in statuses, (name, status, answer)
        if name == "POST - create new graph":
            location = answer_headers["location"]
            assert location.startswith(server.url + "/store?graph=")
            new_graph = location.removeprefix(server.url)
        if method in ("GET", "HEAD") and status == 200:
            assert answer_headers["content-type"].startswith("text/turtle"), name
        if method == "HEAD":
            assert answer == b"", name
        if expected is not None:
            got = Graph().parse(data=answer, format="turtle")
            assert isomorphic(got, Graph().parse(data=expected.replace("$HOST$", host), format="turtle")), name


def commits(server: Server) -> list:
    repo = fstore.open(str(server.store))
    try:
        return list(repo.log("main"))
    finally:
        repo.close()


def test_each_write_is_one_commit_with_author_and_message(server):
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "text/turtle"}
    graph = "http://example.org/g"
    status, _, _ = server.request("PUT", "/store?" + urlencode({"graph": graph, "message": "load g"}),
                                  b"<urn:a> <urn:b> <urn:c> , <urn:d> .", {**auth, "X-Datae-Author": "Ann <ann@x>"})
    assert status == 201
    status, _, _ = server.request("PUT", "/store?" + urlencode({"graph": graph}), b"<urn:a> <urn:b> <urn:d> , <urn:c> .",
                                  auth)
    assert status == 204  # the same triples again: no commit
    status, _, _ = server.request("POST", "/store?" + urlencode({"graph": graph}), b"<urn:a> <urn:b> <urn:e> .", auth)
    assert status == 204
    status, _, _ = server.request("DELETE", "/store?" + urlencode({"graph": graph}), None, auth)
    assert status == 204
    log = commits(server)
    assert len(log) == 3
    put, post, delete = reversed(log)
    assert (put.message, put.author, put.added) == ("load g", "Ann <ann@x>", 2)
    assert post.author and post.added == 1 and "POST" in post.message and graph in post.message
    assert delete.removed == 3 and "DELETE" in delete.message
    # the server has no DATAE_AUTHOR here: a write without one is the client's address
    assert post.author == "anonymous <127.0.0.1>"


def test_reads_at_any_ref(server):
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/n-triples"}
    graph = urlencode({"graph": "http://example.org/g"})
    server.request("PUT", f"/store?{graph}", b"<urn:a> <urn:b> \"one\" .\n", auth)
    first = commits(server)[0].id
    server.request("PUT", f"/store?{graph}", b"<urn:a> <urn:b> \"two\" .\n", auth)
    for ref, value in ((first, b'"one"'), (first[:10], b'"one"'), ("main", b'"two"'), (None, b'"two"')):
        suffix = "" if ref is None else f"&ref={ref}"
        status, headers, body = server.request("GET", f"/store?{graph}{suffix}", None,
                                               {"Accept": "application/n-triples"})
        assert status == 200 and headers["content-type"] == "application/n-triples"
        assert body == b"<urn:a> <urn:b> " + value + b" .\n", ref
    status, _, body = server.request("GET", f"/store?{graph}&ref=nosuchref")
    assert status == 404 and json.loads(body)["kind"] == "UnknownRefError"
    repo = fstore.open(str(server.store))
    repo.tag("v1", first)
    repo.close()
    status, _, body = server.request("PUT", f"/store?{graph}&ref=v1", b"<urn:a> <urn:b> <urn:c> .", auth)
    assert status == 400 and b"not a branch" in body  # writes commit on a branch


@pytest.mark.parametrize("accept,media,parse_as", [
    ("text/turtle", "text/turtle", "turtle"), ("application/n-triples", "application/n-triples", "nt"),
    ("application/rdf+xml", "application/rdf+xml", "xml"), ("application/ld+json", "application/ld+json", "json-ld"),
    ("*/*", "text/turtle", "turtle"), ("text/html;q=0.9, application/rdf+xml;q=0.5", "application/rdf+xml", "xml"),
])
def test_content_negotiation_of_a_graph(server, accept, media, parse_as):
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "text/turtle"}
    server.request("PUT", "/store?graph=http://example.org/g", b'<urn:a> <urn:b> "x"@en , 7 .', auth)
    status, headers, body = server.request("GET", "/store?graph=http://example.org/g", None, {"Accept": accept})
    assert status == 200 and headers["content-type"].startswith(media)
    expected = Graph().parse(data='<urn:a> <urn:b> "x"@en , 7 .', format="turtle")
    assert isomorphic(Graph().parse(data=body, format=parse_as), expected)


def test_the_whole_store_and_bad_requests(server):
    auth = {"Authorization": f"Bearer {server.token}"}
    quads = b"<urn:a> <urn:b> <urn:c> <urn:g1> .\n<urn:a> <urn:b> <urn:d> .\n"
    status, _, _ = server.request("POST", "/store", quads, {**auth, "Content-Type": "application/n-quads"})
    assert status == 204
    status, headers, body = server.request("GET", "/store", None, {"Accept": "application/n-quads"})
    assert status == 200 and sorted(body.splitlines()) == sorted(quads.splitlines())
    cases = [
        ("GET", "/store", None, {"Accept": "text/turtle"}, 406),  # a whole store is not one graph
        ("GET", "/store?graph=urn:g1", None, {"Accept": "text/html"}, 406),
        ("GET", "/store?graph=urn:g1&default", None, {}, 400),
        ("GET", "/store?graph=urn:g1&graph=urn:g2", None, {}, 400),
        ("GET", "/store?graph=not%20an%20iri", None, {}, 400),
        ("PUT", "/store?graph=urn:g1", b"<urn:a> <urn:b> <urn:c> .", {**auth, "Content-Type": "text/html"}, 415),
        # a type a web page may post to another site without asking is no graph store body
        ("PUT", "/store?graph=urn:g1", b"<urn:a> <urn:b> <urn:c> .", {**auth, "Content-Type": "text/plain"}, 415),
        ("POST", "/store?graph=urn:g1", b"<urn:a> <urn:b> <urn:c> .",
         {**auth, "Content-Type": "application/x-www-form-urlencoded"}, 415),
        ("PUT", "/store?graph=urn:g1", b"<urn:a> <urn:b> <urn:c> .",
         {**auth, "Content-Type": "text/turtle", "Origin": "http://evil.example"}, 403),
        ("PUT", "/store?graph=urn:g1", b"<urn:a> <urn:b> .", {**auth, "Content-Type": "text/turtle"}, 400),
        ("PUT", "/store", b"<urn:a> <urn:b> <urn:c> .", {**auth, "Content-Type": "text/turtle"}, 400),
        ("DELETE", "/store", None, auth, 400),
        ("PUT", "/store?graph=urn:g1", b"<urn:a> <urn:b> <urn:c> .", {"Content-Type": "text/turtle"}, 401),
        ("DELETE", "/store?graph=urn:g1", None, {"Authorization": "Bearer wrong"}, 401),
    ]
    before = commits(server)
    for method, path, body, headers, expected in cases:
        status, _, answer = server.request(method, path, body, headers)
        assert status == expected, (method, path, status, answer)
        assert "error" in json.loads(answer)
    assert [c.id for c in commits(server)] == [c.id for c in before]  # refused writes changed nothing


def test_a_read_only_server_refuses_graph_store_writes(tmp_path):
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    running = Server(store, "--read-only")
    try:
        status, _, body = running.request("PUT", "/store?default", b"<urn:a> <urn:b> <urn:c> .",
                                          {"Content-Type": "text/turtle"})
        assert status == 403 and json.loads(body)["kind"] == "ReadOnlyError"
        status, _, _ = running.request("GET", "/store?default")
        assert status == 200
    finally:
        running.stop()


SD = "http://www.w3.org/ns/sparql-service-description#"


@pytest.mark.parametrize("accept,parse_as", [(None, "turtle"), ("text/turtle", "turtle"),
                                             ("application/rdf+xml", "xml"), ("application/ld+json", "json-ld")])
def test_service_description(server, accept, parse_as):
    status, headers, body = server.request("GET", "/sparql", None, {"Accept": accept} if accept else {})
    assert status == 200
    graph = Graph().parse(data=body, format=parse_as)
    results = graph.query(f"""PREFIX sd: <{SD}>
        SELECT ?endpoint ?language WHERE {{ ?s a sd:Service ; sd:endpoint ?endpoint ; sd:supportedLanguage ?language }}""")
    rows = {(str(r.endpoint), str(r.language)) for r in results}
    assert rows == {(f"{server.url}/sparql", SD + "SPARQL11Query"), (f"{server.url}/sparql", SD + "SPARQL11Update")}
    assert (None, URIRef(SD + "defaultDataset"), None) in graph


def test_service_description_of_a_read_only_server_has_no_update(tmp_path):
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    running = Server(store, "--read-only")
    try:
        status, _, body = running.request("GET", "/sparql", None, {"Accept": "text/turtle"})
        assert status == 200 and b"SPARQL11Query" in body and b"SPARQL11Update" not in body
        status, _, _ = running.request("GET", "/sparql", None, {"Accept": "text/csv"})
        assert status == 406
    finally:
        running.stop()


def test_graph_store_writes_are_read_by_sparql(server):
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "text/turtle"}
    server.request("PUT", "/store?graph=" + quote("http://example.org/g", safe=""), b"<urn:a> <urn:b> 42 .", auth)
    query = urlencode({"query": "SELECT ?o WHERE { GRAPH <http://example.org/g> { <urn:a> <urn:b> ?o } }"})
    status, _, body = server.request("GET", f"/sparql?{query}", None, {"Accept": "application/sparql-results+json"})
    assert status == 200
    assert json.loads(body)["results"]["bindings"][0]["o"]["value"] == "42"
    repo = fstore.open(str(server.store))
    try:
        assert fstore.ask(repo.at("main"), IRI("http://example.org/g"), IRI("urn:a"), IRI("urn:b"), 42)
    finally:
        repo.close()


@pytest.mark.parametrize("accept", ["application/n-triples", "text/turtle"])
def test_a_large_graph_is_streamed_whole(tmp_path, accept):
    store = tmp_path / "store"
    repo = fstore.open(str(store))
    graph = IRI("http://example.org/big")
    written = {(IRI(f"urn:s{n}"), IRI("urn:p"), f"value number {n} " + "x" * 40) for n in range(30_000)}
    with repo.transaction("main", message="big", author="tests") as tx:
        fstore.add_many(tx, [(graph, s, p, o) for s, p, o in written])
    repo.close()
    running = Server(store, "--read-only")
    try:
        status, headers, body = running.request("GET", "/store?graph=http://example.org/big", None, {"Accept": accept})
    finally:
        running.stop()
    assert status == 200 and len(body) > 2 << 20  # more than one chunk of the stream
    # pyoxigraph reads the 30,000 triples several times faster than rdflib
    read = ox.parse(body, ox.RdfFormat.N_TRIPLES if accept == "application/n-triples" else ox.RdfFormat.TURTLE)
    assert {(q.subject.value, q.predicate.value, q.object.value) for q in read} == {(s.value, p.value, o) for s, p, o in written}


TOWNS = "urn:datae:dataset:towns"


@pytest.fixture()
def towns_server(tmp_path):
    """A server over a store with a table (``towns``: fid, name) beside one quad."""
    from fstore import tables

    store = tmp_path / "store"
    repo = fstore.open(str(store))
    columns = [{"id": "c0", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
               {"id": "c1", "name": "name", "dataType": "text"}]
    with repo.transaction("main", message="towns", author="tests") as tx:
        towns = tables.create(tx, "towns", columns)
        towns.insert({"fid": 1, "name": "alpha"})
        towns.insert({"fid": 2, "name": "beta"})
        fstore.add(tx, None, IRI("urn:a"), IRI("urn:b"), IRI("urn:c"))
    repo.close()
    running = serve_with_token(store, tmp_path)
    yield running
    running.stop()


def test_a_table_graph_reads_as_its_direct_mapping(towns_server):
    status, headers, body = towns_server.request("GET", "/store?" + urlencode({"graph": TOWNS}), None,
                                                 {"Accept": "application/n-triples"})
    assert status == 200 and headers["content-type"] == "application/n-triples"
    # the W3C Direct Mapping of the two rows, written out by hand (the oracle)
    xsd = "http://www.w3.org/2001/XMLSchema#"
    expected = "".join(f"""<{TOWNS}/fid={fid}> a <{TOWNS}> ; <{TOWNS}#fid> "{fid}"^^<{xsd}integer> ;
                           <{TOWNS}#name> "{name}" .\n""" for fid, name in ((1, "alpha"), (2, "beta")))
    assert isomorphic(Graph().parse(data=body, format="nt"), Graph().parse(data=expected, format="turtle"))
    status, _, body = towns_server.request("HEAD", "/store?" + urlencode({"graph": TOWNS}))
    assert status == 200 and body == b""
    status, _, body = towns_server.request("GET", "/store?" + urlencode({"graph": "urn:datae:dataset:nosuch"}))
    assert status == 404 and json.loads(body)["kind"] == "UnknownGraphError"
    # the whole store is its quads, as SPARQL's dataset is: tables only where named
    status, _, body = towns_server.request("GET", "/store", None, {"Accept": "application/n-quads"})
    assert status == 200 and body == b"<urn:a> <urn:b> <urn:c> .\n"


def test_a_table_graph_is_no_graph_store_write_target(towns_server):
    auth = {"Authorization": f"Bearer {towns_server.token}"}
    table = "/store?" + urlencode({"graph": TOWNS})
    turtle = {**auth, "Content-Type": "text/turtle"}
    quads = {**auth, "Content-Type": "application/n-quads"}
    # SPARQL Update refuses to write a table graph: the graph store answers the same
    update = f"INSERT DATA {{ GRAPH <{TOWNS}> {{ <urn:x> <urn:y> 1 }} }}"
    sparql_status, _, sparql_body = towns_server.request("POST", "/sparql", update.encode(),
                                                         {**auth, "Content-Type": "application/sparql-update"})
    assert sparql_status == 400 and json.loads(sparql_body)["kind"] == "ReadOnlyGraphError"
    cases = [
        ("PUT", table, b"<urn:x> <urn:y> 1 .", turtle),
        ("POST", table, b"<urn:x> <urn:y> 1 .", turtle),
        ("PUT", table, b"", turtle),  # even a PUT that would only empty it
        ("DELETE", table, None, auth),
        ("POST", "/store", f"<urn:x> <urn:y> <urn:z> .\n<urn:x> <urn:y> \"1\" <{TOWNS}> .\n".encode(), quads),
        ("POST", "/store", f"<{TOWNS}> {{ <urn:x> <urn:y> 1 }}".encode(), {**auth, "Content-Type": "application/trig"}),
    ]
    before = [c.id for c in commits(towns_server)]
    for method, path, body, headers in cases:
        status, _, answer = towns_server.request(method, path, body, headers)
        assert status == sparql_status, (method, path, body, status, answer)
        error = json.loads(answer)
        assert error["kind"] == "ReadOnlyGraphError" and TOWNS in error["error"], (method, path, body)
    assert [c.id for c in commits(towns_server)] == before  # nothing was committed
    status, _, body = towns_server.request("GET", "/store?" + urlencode({"graph": TOWNS}), None,
                                           {"Accept": "application/n-triples"})
    assert status == 200 and len(Graph().parse(data=body, format="nt")) == 6  # the rows as they were
