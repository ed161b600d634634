"""The W3C SPARQL 1.1 Protocol tests (``sparql11/protocol``), run over real HTTP
against ``datae serve``.

The suite's manifest lists the tests by name only; the requests and the responses they
expect are described in the W3C test pages (``protocol/index.html``). Each is written
here as data: the requests a test makes in order, the status class and media types its
last response must have, and, where the test implies it, the ASK answer. The test data
(``data1.rdf`` ... ``data3.rdf``) is loaded as graphs of the same names, each saying that
its document is a ``foaf:Document``, which is what the dataset tests ask. Every name in
the manifest must have a case here, and every case runs.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

import fstore
from tests.server_fixtures import Server
from tests import conformance

DATA = "http://kasei.us/2009/09/sparql/data/"
FOAF_DOCUMENT = "http://xmlns.com/foaf/0.1/Document"
RESULTS = ("application/sparql-results+xml", "application/sparql-results+json")
ALL_RESULTS = RESULTS + ("text/tab-separated-values", "text/csv")
GRAPHS = ("application/rdf+xml", "text/turtle", "application/n-triples", "text/html", "application/ld+json")
FORM = "application/x-www-form-urlencoded"
PREFIXES = "PREFIX dc: <http://purl.org/dc/terms/>\nPREFIX foaf: <http://xmlns.com/foaf/0.1/>\n"
THREE_DOCUMENTS = "\n".join(f"GRAPH <{DATA}data{n}.rdf> {{ <{DATA}data{n}.rdf> a foaf:Document }}" for n in (1, 2, 3))


def request(method: str, params: list | None = None, content: list | str | None = None, content_type: str | None = "form",
            accept: str | None = None) -> dict:
    """One request: URL ``params`` and a body (a list of pairs: a form; a string: as is)."""
    return {"method": method, "params": params or [], "content": content,
            "content_type": FORM if content_type == "form" and isinstance(content, list) else
            (None if content_type == "form" else content_type), "accept": accept}


def ask_dataset(query: str, *, default=(), named=(), method="POST") -> dict:
    params = [("default-graph-uri", DATA + g) for g in default] + [("named-graph-uri", DATA + g) for g in named]
    if method == "GET":
        return request("GET", [("query", query), *params])
    return request("POST", content=[("query", query), *params])


def update_then_ask(update: str, ask: str, using=(), in_url: bool = False) -> list[dict]:
    using_params = [("using-graph-uri", DATA + g) for g in using]
    if in_url:
        first = request("POST", [("update", update), *using_params], content_type=None)
    else:
        first = request("POST", using_params, content=[("update", update)])
    return [first, request("POST", content=ask, content_type="application/sparql-query",
                           accept="application/sparql-results+xml")]


A1_A2 = f"ASK {{ <{DATA}data1.rdf> a ?type . <{DATA}data2.rdf> a ?type . }}"
NAMED_1_2 = f"ASK {{ GRAPH ?g1 {{ <{DATA}data1.rdf> a ?type }} GRAPH ?g2 {{ <{DATA}data2.rdf> a ?type }} }}"
DATA0 = [("default-graph-uri", DATA + "data0.rdf")]
USING0 = [("using-graph-uri", DATA + "data0.rdf")]


def _update_dataset(name: str, where: str, template: str = "?s a dc:BibliographicResource") -> str:
    return (f"{PREFIXES}DROP ALL ;\nINSERT DATA {{ {THREE_DOCUMENTS} }} ;\n"
            f"INSERT {{ GRAPH <http://example.org/{name}/> {{ {template} }} }}\nWHERE {{ {where} }}")


# name -> (requests, expected status class, media types of the last response, ASK answer or None)
CASES: dict[str, tuple[list[dict], str, tuple, bool | None]] = {
    "query_get": ([request("GET", [("query", "ASK {}"), *DATA0])], "2", RESULTS, True),
    "query_post_form": ([request("POST", content=[("query", "ASK {}"), *DATA0])], "2", RESULTS, True),
    "query_post_direct": ([request("POST", DATA0, "ASK {}", "application/sparql-query")], "2", RESULTS, True),
    "query_dataset_default_graphs_get": ([ask_dataset(A1_A2, default=["data1.rdf", "data2.rdf"], method="GET")], "2",
                                         RESULTS, True),
    "query_dataset_default_graphs_post": ([ask_dataset(A1_A2, default=["data1.rdf", "data2.rdf"])], "2", RESULTS, True),
    "query_dataset_named_graphs_post": ([ask_dataset(NAMED_1_2, named=["data1.rdf", "data2.rdf"])], "2", RESULTS, True),
    "query_dataset_named_graphs_get": ([ask_dataset(NAMED_1_2, named=["data1.rdf", "data2.rdf"], method="GET")], "2",
                                       RESULTS, True),
    "query_dataset_full": ([ask_dataset(f"ASK {{ <{DATA}data3.rdf> a ?type "
                                        f"GRAPH ?g1 {{ <{DATA}data1.rdf> a ?type }} GRAPH ?g2 {{ <{DATA}data2.rdf> a ?type }} }}",
                                        default=["data3.rdf"], named=["data1.rdf", "data2.rdf"])], "2", RESULTS, True),
    "query_multiple_dataset": ([ask_dataset(NAMED_1_2.replace("ASK", f"ASK FROM <{DATA}data3.rdf>", 1),
                                            named=["data1.rdf", "data2.rdf"])], "2", RESULTS, True),
    "query_content_type_select": ([request("POST", content=[("query", "SELECT (1 AS ?value) {}"), *DATA0])], "2",
                                  ALL_RESULTS, None),
    "query_content_type_ask": ([request("POST", content=[("query", "ASK {}"), *DATA0])], "2", RESULTS, None),
    "query_content_type_describe": ([request("POST", content=[("query", "DESCRIBE <http://example.org/>"), *DATA0])],
                                    "2", GRAPHS, None),
    "query_content_type_construct": ([request("POST", content=[("query", "CONSTRUCT { <s> <p> 1 } WHERE {}"), *DATA0])],
                                     "2", GRAPHS, None),
    "update_dataset_default_graph": (update_then_ask(
        f"{PREFIXES}CLEAR ALL ;\nINSERT DATA {{ GRAPH <{DATA}data1.rdf> {{ <{DATA}data1.rdf> a foaf:Document }} }} ;\n"
        "INSERT { GRAPH <http://example.org/protocol-update-dataset-test/> { ?s a dc:BibliographicResource } }\n"
        "WHERE { ?s a foaf:Document }",
        f"ASK {{ GRAPH <http://example.org/protocol-update-dataset-test/> {{ <{DATA}data1.rdf> a "
        "<http://purl.org/dc/terms/BibliographicResource> } }", using=["data1.rdf"]),
        "2", ("application/sparql-results+xml",), True),
    "update_dataset_default_graphs": (update_then_ask(
        _update_dataset("protocol-update-dataset-graphs-test", "?s a foaf:Document"),
        f"ASK {{ GRAPH <http://example.org/protocol-update-dataset-graphs-test/> {{ <{DATA}data1.rdf> a "
        f"<http://purl.org/dc/terms/BibliographicResource> . <{DATA}data2.rdf> a "
        f"<http://purl.org/dc/terms/BibliographicResource> }} FILTER NOT EXISTS {{ GRAPH "
        f"<http://example.org/protocol-update-dataset-graphs-test/> {{ <{DATA}data3.rdf> a "
        "<http://purl.org/dc/terms/BibliographicResource> } } }", using=["data1.rdf", "data2.rdf"]),
        "2", ("application/sparql-results+xml",), True),
    # The suite's text gives using-graph-uri (not using-named-graph-uri) with a WHERE
    # that reads named graphs, and checks only statuses and media types; so do we.
    "update_dataset_named_graphs": (update_then_ask(
        _update_dataset("protocol-update-dataset-named-graphs-test", "GRAPH ?g { ?s a foaf:Document }"),
        "ASK { GRAPH <http://example.org/protocol-update-dataset-named-graphs-test/> { ?s ?p ?o } }",
        using=["data1.rdf", "data2.rdf"]), "2", ("application/sparql-results+xml",), None),
    "update_dataset_full": (update_then_ask(
        _update_dataset("protocol-update-dataset-full-test",
                        "{ GRAPH ?g { ?s a foaf:Document } BIND(?g AS ?in) } UNION { ?s a foaf:Document . "
                        'BIND("default" AS ?in) }', "?s <http://example.org/in> ?in"),
        f"ASK {{ GRAPH <http://example.org/protocol-update-dataset-full-test/> {{ <{DATA}data1.rdf> "
        '<http://example.org/in> "default" } }', using=["data1.rdf", "data2.rdf"], in_url=True),
        "2", ("application/sparql-results+xml",), True),
    "update_post_form": ([request("POST", content=[("update", "CLEAR ALL")])], "2", (), None),
    "update_post_direct": ([request("POST", content="CLEAR ALL", content_type="application/sparql-update")], "2", (),
                           None),
    "update_base_uri": ([request("POST", content=[("update", "CLEAR SILENT GRAPH <http://example.org/protocol-base-test/> ; "
                                                   "INSERT DATA { GRAPH <http://example.org/protocol-base-test/> { "
                                                   "<http://example.org/s> <http://example.org/p> <test> } }")]),
                         request("POST", content=[("query", "SELECT ?o WHERE { GRAPH <http://example.org/protocol-base-test/> "
                                                   "{ <http://example.org/s> <http://example.org/p> ?o } }")],
                                 accept="application/sparql-results+json")], "2", ("application/sparql-results+json",),
                        None),
    "bad_query_method": ([request("PUT", [("query", "ASK {}"), *DATA0])], "4", (), None),
    "bad_multiple_queries": ([request("GET", [("query", "ASK {}"), ("query", "SELECT * {}"), *DATA0])], "4", (), None),
    "bad_query_wrong_media_type": ([request("POST", DATA0, "ASK {}", "text/plain")], "4", (), None),
    "bad_query_missing_form_type": ([request("POST", content=urlencode([("query", "ASK {}"), *DATA0]), content_type=None)],
                                    "4", (), None),
    "bad_query_missing_direct_type": ([request("POST", DATA0, "ASK {}", None)], "4", (), None),
    "bad_query_non_utf8": ([request("POST", DATA0, "ASK {}".encode("utf-16"), "application/sparql-query; charset=UTF-16")],
                           "4", (), None),
    "bad_query_syntax": ([request("GET", [("query", "ASK {"), *DATA0])], "4", (), None),
    "bad_update_get": ([request("GET", [("update", "CLEAR ALL"), *USING0])], "4", (), None),
    "bad_multiple_updates": ([request("POST", USING0, [("update", "CLEAR ALL"), ("update", "CLEAR DEFAULT")])], "4", (),
                             None),
    "bad_update_wrong_media_type": ([request("POST", USING0, "CLEAR NAMED", "text/plain")], "4", (), None),
    "bad_update_missing_form_type": ([request("POST", USING0, "CLEAR NAMED", None)], "4", (), None),
    "bad_update_non_utf8": ([request("POST", USING0, "CLEAR NAMED".encode("utf-16"),
                                     "application/sparql-update; charset=UTF-16")], "4", (), None),
    "bad_update_syntax": ([request("POST", USING0, [("update", "CLEAR XYZ")])], "4", (), None),
    "bad_update_dataset_conflict": ([request("POST", content=[
        ("using-named-graph-uri", "http://example/people"),
        ("update", "PREFIX foaf: <http://xmlns.com/foaf/0.1/>\nWITH <http://example/addresses>\n"
                   "DELETE { ?person foaf:givenName 'Bill' }\nINSERT { ?person foaf:givenName 'William' }\n"
                   "WHERE { ?person foaf:givenName 'Bill' }")])], "4", (), None),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("protocol") / "store" / ".datae"
    fstore.open(path).close()
    server = Server(path)
    yield server
    server.stop()


def _seed(server: Server) -> None:
    update = f"{PREFIXES}DROP ALL ; INSERT DATA {{ {THREE_DOCUMENTS} }}"
    status, _, body = server.request("POST", "/sparql", urlencode([("update", update)]).encode(), {"Content-Type": FORM})
    assert status == 200, body


def test_every_test_of_the_suite_has_a_case():
    text = (conformance.require_suite() / "sparql11" / "protocol" / "manifest.ttl").read_text()
    listed = text[text.index("mf:entries"):text.index(")", text.index("mf:entries"))]
    names = {token.lstrip(":") for token in listed.split() if token.startswith(":")}
    assert len(names) == 34 and names <= set(CASES), names - set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_w3c_protocol(server, name):
    _seed(server)
    requests, status_class, media_types, answer = CASES[name]
    for position, spec in enumerate(requests):
        path = "/sparql" + ("?" + urlencode(spec["params"]) if spec["params"] else "")
        content = spec["content"]
        body = urlencode(content).encode() if isinstance(content, list) else (
            content.encode() if isinstance(content, str) else content)
        headers = {}
        if spec["content_type"]:
            headers["Content-Type"] = spec["content_type"]
        if spec["accept"]:
            headers["Accept"] = spec["accept"]
        status, response_headers, data = server.request(spec["method"], path, body, headers)
        last = position == len(requests) - 1
        expected = status_class if last else "2"
        assert str(status)[0] == expected, (name, position, status, data)
    if media_types:
        assert response_headers["content-type"].split(";")[0] in media_types, response_headers
    if status_class == "4":
        assert json.loads(data)["error"] and b"Traceback" not in data
    if answer is not None:
        word = b"true" if answer else b"false"
        expected = b"<boolean>" + word + b"</boolean>" if b"<sparql" in data else b'"boolean": ' + word
        assert expected in data, data
    if name == "update_base_uri":
        bound = json.loads(data)["results"]["bindings"]
        assert len(bound) == 1 and bound[0]["o"]["type"] == "uri" and bound[0]["o"]["value"] != "test"


def _methods(allow: str) -> set[str]:
    return {method.strip() for method in allow.split(",")}


def test_a_405_says_which_methods_are_allowed(server):
    """RFC 9110 (15.5.6): a 405 answer carries ``Allow``, for /sparql's own refusals and
    for the methods a route does not take, on /sparql and /store alike."""
    ask = "/sparql?" + urlencode({"query": "ASK {}"})
    cases = [
        ("PUT", ask, {"GET", "HEAD", "POST"}),
        ("DELETE", "/sparql", {"GET", "HEAD", "POST"}),
        ("GET", "/sparql?" + urlencode({"update": "CLEAR ALL"}), {"GET", "HEAD", "POST"}),
        ("PATCH", "/store?default", {"GET", "HEAD", "PUT", "POST", "DELETE"}),
        ("OPTIONS", "/sparql", {"GET", "HEAD", "POST"}),
    ]
    for method, path, allowed in cases:
        status, headers, body = server.request(method, path)
        assert status == 405, (method, path, status, body)
        assert _methods(headers.get("allow", "")) == allowed, (method, path, headers)
        assert "error" in json.loads(body)


def test_head_is_answered_wherever_get_is(server):
    path = "/sparql?" + urlencode({"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"})
    accept = {"Accept": "application/sparql-results+json"}
    get_status, get_headers, get_body = server.request("GET", path, None, accept)
    status, headers, body = server.request("HEAD", path, None, accept)
    assert (get_status, status) == (200, 200) and body == b"" and get_body
    assert headers["content-type"] == get_headers["content-type"]
    status, _, body = server.request("HEAD", "/sparql?" + urlencode({"update": "CLEAR ALL"}))
    assert status == 405 and body == b""  # an update is never sent by GET, nor by HEAD
