"""The query engine end to end over fstore: planning (join order, filter push-down,
EXPLAIN), streaming, datasets (FROM / FROM NAMED / GRAPH), time travel through views,
property-path cycles, and the result formats (checked by pyoxigraph's parsers)."""

from __future__ import annotations

import io
import json
import tempfile

import pyoxigraph as ox
import pytest


from tests.query_fixtures import fstore_view

import fstore
from fstore.rdf import FORMATS as RDF_FORMATS
from query import FORMATS, MemorySource, execute, explain
from nstore.terms import XSD_INTEGER, BNode, IRI, Literal
from tests.query_fixtures import from_ox

EX = "http://ex/"
P = "PREFIX : <http://ex/>\n"
TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def ex(name: str) -> IRI:
    return IRI(EX + name)


def people(n: int = 300) -> list:
    quads = []
    for i in range(n):
        person = ex(f"p{i}")
        quads.append((None, person, TYPE, ex("Person")))
        quads.append((None, person, ex("age"), Literal(str(i % 90), XSD_INTEGER)))
        quads.append((None, person, ex("knows"), ex(f"p{(i + 1) % n}")))
    quads.append((None, ex("p7"), ex("name"), Literal("Seven")))
    return quads


# ---------------------------------------------------------------------------- planning


def test_join_order_starts_with_the_selective_pattern() -> None:
    with fstore_view(people()) as view:
        text = P + 'SELECT ?p ?age WHERE { ?p a :Person . ?p :age ?age . ?p :name "Seven" }'
        plan = explain(view, text)
        scans = [line.strip() for line in plan.splitlines() if line.strip().startswith("scan")]
        assert scans[0].startswith('scan ?p <http://ex/name> "Seven"'), plan
        rows = list(execute(view, text))
    assert rows == [{"p": ex("p7"), "age": Literal("7", XSD_INTEGER)}]


def test_join_order_knows_sizes_past_the_estimate_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two predicates each past the planner's counting cap (1,000): the store's counts kept
    with its heads tell 5,000 from 1,500, so the scan starts with the smaller whatever the
    text's order (capped counts alone would tie them)."""
    quads = [(None, ex(f"s{i}"), ex("big"), i) for i in range(5000)]
    quads += [(None, ex(f"s{i}"), ex("small"), i) for i in range(0, 4500, 3)]
    text = P + "SELECT (COUNT(*) AS ?n) WHERE { ?x :big ?y . ?x :small ?z }"
    with fstore_view(quads) as view:
        scans = [line.strip() for line in explain(view, text).splitlines() if line.strip().startswith("scan")]
        assert scans[0].startswith("scan ?x <http://ex/small> ?z"), scans
        assert list(execute(view, text)) == [{"n": Literal("1500", XSD_INTEGER)}]
    monkeypatch.setattr(fstore.View, "_known_count", lambda self, pattern: None)  # counts unknown: a tie
    with fstore_view(quads) as view:
        scans = [line.strip() for line in explain(view, text).splitlines() if line.strip().startswith("scan")]
        assert scans[0].startswith("scan ?x <http://ex/big> ?y"), scans


def test_filter_is_pushed_to_the_scan_that_binds_its_variables() -> None:
    with fstore_view(people()) as view:
        text = P + "SELECT ?p ?q WHERE { ?p :age ?age . ?p :knows ?q . FILTER(?age > 85) }"
        plan = explain(view, text)
        lines = [line.strip() for line in plan.splitlines()]
        age_scan = next(i for i, line in enumerate(lines) if line.startswith("scan ?p <http://ex/age>"))
        assert lines[age_scan + 1].startswith("filter (?age >"), plan
        assert not any(line.startswith("Filter") for line in lines), plan
        assert len(list(execute(view, text))) == 12


def test_explain_shows_operators() -> None:
    text = P + """SELECT ?p (COUNT(?q) AS ?n) WHERE {
        ?p a :Person OPTIONAL { ?p :knows ?q } MINUS { ?p :name ?x }
        { ?p :age 1 } UNION { ?p :age 2 }
    } GROUP BY ?p ORDER BY DESC(?n) LIMIT 5"""
    with fstore_view(people()) as view:
        plan = explain(view, text)
    for word in ("Slice offset 0 limit 5", "Order by DESC(?n)  (top 5)", "Group by ?p", "Optional", "Minus", "Union", "Join"):
        assert word in plan, plan


def test_limit_streams_without_reading_everything() -> None:
    class Counting(MemorySource):
        read = 0

        def estimate(self, pattern, cap):  # keep planning out of the count
            return 100

        def match(self, pattern):
            for binding in super().match(pattern):
                Counting.read += 1
                yield binding

    source = Counting(people(200))
    rows = list(execute(source, P + "SELECT * WHERE { ?s :knows ?o . ?o :age ?a } LIMIT 3"))
    assert len(rows) == 3
    assert Counting.read < 20


def test_result_can_be_iterated_twice_and_serialised() -> None:
    with fstore_view(people(5)) as view:
        result = execute(view, P + "SELECT ?p WHERE { ?p a :Person }")
        first = list(result)
        second = list(result)
    assert first == second and len(first) == 5
    assert len(json.loads(result.serialize("json"))["results"]["bindings"]) == 5


# ---------------------------------------------------------------------------- datasets


def graphs() -> list:
    return [
        (None, ex("d"), ex("p"), Literal("default")),
        (ex("g1"), ex("a"), ex("p"), Literal("one")),
        (ex("g1"), ex("a"), ex("q"), ex("b")),
        (ex("g2"), ex("b"), ex("p"), Literal("two")),
        (ex("g2"), ex("a"), ex("p"), Literal("also")),
    ]


def test_graph_variable_and_default_graph() -> None:
    with fstore_view(graphs()) as view:
        default = list(execute(view, P + "SELECT ?o WHERE { ?s :p ?o }"))
        named = list(execute(view, P + "SELECT ?g ?o WHERE { GRAPH ?g { ?s :p ?o } } ORDER BY ?o"))
        each = list(execute(view, P + "SELECT ?g WHERE { GRAPH ?g { } } ORDER BY ?g"))
    assert default == [{"o": Literal("default")}]
    assert [(r["g"], r["o"].lexical) for r in named] == [(ex("g2"), "also"), (ex("g1"), "one"), (ex("g2"), "two")]
    assert each == [{"g": ex("g1")}, {"g": ex("g2")}]


def test_from_and_from_named() -> None:
    with fstore_view(graphs()) as view:
        merged = execute(view, P + "SELECT ?o FROM :g1 FROM :g2 WHERE { ?s :p ?o } ORDER BY ?o")
        assert [r["o"].lexical for r in merged] == ["also", "one", "two"]
        only = execute(view, P + "SELECT ?g ?o FROM NAMED :g2 WHERE { GRAPH ?g { ?s :p ?o } } ORDER BY ?o")
        assert [(r["g"], r["o"].lexical) for r in only] == [(ex("g2"), "also"), (ex("g2"), "two")]
        empty_default = execute(view, P + "SELECT ?o FROM NAMED :g2 WHERE { ?s :p ?o }")
        assert list(empty_default) == []


def test_filter_inside_graph_does_not_see_the_graph_variable() -> None:
    # SPARQL evaluates the inner pattern per graph; ?g is not bound inside it.
    with fstore_view(graphs()) as view:
        rows = list(execute(view, P + "SELECT * WHERE { GRAPH ?g { ?s :p ?o FILTER(bound(?g)) } }"))
    assert rows == []


# ---------------------------------------------------------------------------- versions


def test_queries_see_the_view_they_are_given() -> None:
    folder = tempfile.mkdtemp()
    repo = fstore.open(folder)
    try:
        with repo.transaction("main", message="one", author="t") as tx:
            fstore.add(tx, None, ex("a"), ex("p"), 1)
        first = repo.resolve("main")
        with repo.transaction("main", message="two", author="t") as tx:
            fstore.add(tx, None, ex("b"), ex("p"), 2)
            inside = [r["s"] for r in execute(tx, P + "SELECT ?s WHERE { ?s :p ?v } ORDER BY ?s")]
        assert inside == [ex("a"), ex("b")]
        now = [r["s"] for r in execute(repo.at("main"), P + "SELECT ?s WHERE { ?s :p ?v } ORDER BY ?s")]
        then = [r["s"] for r in execute(repo.at(first), P + "SELECT ?s WHERE { ?s :p ?v }")]
        assert now == [ex("a"), ex("b")] and then == [ex("a")]
        assert isinstance(repo.at("main").query_source().graphs(), list)
    finally:
        repo.close()


# ---------------------------------------------------------------------------- paths


def test_closure_terminates_on_cycles_and_counts_each_node_once() -> None:
    cycle = [(None, ex("a"), ex("next"), ex("b")), (None, ex("b"), ex("next"), ex("c")), (None, ex("c"), ex("next"), ex("a"))]
    with fstore_view(cycle) as view:
        plus = sorted(r["x"].value for r in execute(view, P + "SELECT ?x WHERE { :a :next+ ?x }"))
        star = list(execute(view, P + "SELECT * WHERE { ?x :next* ?y }"))
        back = sorted(r["x"].value for r in execute(view, P + "SELECT ?x WHERE { ?x :next+ :a }"))
        hops = list(execute(view, P + "SELECT ?x WHERE { :a :next/:next ?x }"))
    assert plus == [EX + "a", EX + "b", EX + "c"]
    assert len(star) == 9
    assert back == [EX + "a", EX + "b", EX + "c"]
    assert hops == [{"x": ex("c")}]


# ---------------------------------------------------------------------------- formats


def _solutions(text: str) -> list:
    data = [
        (None, ex("s"), ex("p"), Literal('say "hi",\nthen\tgo', lang="en")),
        (None, ex("s"), ex("p"), Literal("42", XSD_INTEGER)),
        (None, ex("s"), ex("p"), BNode("x1")),
        (None, ex("s"), ex("q"), ex("o")),
        (None, ex("t"), ex("p"), Literal("5.5", "http://www.w3.org/2001/XMLSchema#decimal")),
    ]
    with fstore_view(data) as view:
        result = execute(view, text)
        rows = [dict(r) for r in result]
        return result, rows


@pytest.mark.parametrize("fmt, ox_format", [("json", ox.QueryResultsFormat.JSON), ("xml", ox.QueryResultsFormat.XML), ("tsv", ox.QueryResultsFormat.TSV)])
def test_result_formats_round_trip_through_pyoxigraph(fmt: str, ox_format) -> None:
    result, rows = _solutions(P + "SELECT ?s ?o ?missing WHERE { ?s ?p ?o OPTIONAL { ?s :none ?missing } }")
    text = result.serialize(fmt)
    parsed = ox.parse_query_results(io.BytesIO(text.encode("utf-8")), format=ox_format)
    assert [v.value for v in parsed.variables] == ["s", "o", "missing"]
    back = [{name: from_ox(sol[name]) for name in ("s", "o", "missing") if sol[name] is not None} for sol in parsed]
    assert sorted(map(repr, back)) == sorted(map(repr, rows))


def test_csv_format() -> None:
    result, _ = _solutions(P + "SELECT ?s ?o WHERE { ?s :p ?o } ORDER BY ?o")
    lines = result.serialize("csv").split("\r\n")
    assert lines[0] == "s,o"
    assert "http://ex/s,_:x1" in lines
    assert 'http://ex/s,"say ""hi"",\nthen\tgo"' in result.serialize("csv")


def test_ask_formats() -> None:
    with fstore_view(graphs()) as view:
        yes = execute(view, P + "ASK { ?s :p 'default' }")
        no = execute(view, P + "ASK { ?s :p 'nothing' }")
    assert yes.ask is True and no.ask is False
    assert json.loads(yes.serialize("json")) == {"head": {}, "boolean": True}
    assert "<boolean>false</boolean>" in no.serialize("xml")
    assert yes.serialize("csv") == "_askResult\r\ntrue\r\n"


def test_construct_serialisations_parse_back() -> None:
    with fstore_view(people(4)) as view:
        result = execute(view, P + "CONSTRUCT { ?p :friendOf ?q . ?p :tag [ :age ?a ] } WHERE { ?p :knows ?q ; :age ?a }")
        triples = result.triples
    assert len(triples) == 12

    def ground(quads):  # blank node labels are each file's own
        return sorted((tuple("_" if isinstance(t, ox.BlankNode) else t for t in (q.subject, q.predicate, q.object))
                       for q in quads), key=str)

    expected = ground(ox.parse(result.serialize("ntriples").encode("utf-8"), format=ox.RdfFormat.N_TRIPLES))
    for fmt in ("ntriples", "turtle", "nquads", "trig", "jsonld", "rdf", "xml"):
        text = result.serialize(fmt)
        parsed = list(ox.parse(text.encode("utf-8"), format=RDF_FORMATS[fmt]))
        assert len(parsed) == 12 and ground(parsed) == expected and text.endswith("\n"), fmt
    with pytest.raises(ValueError, match="choose one of nq, trig, jsonld, nt, ttl, rdf, not 'csv'"):
        result.serialize("csv")


def test_table_uses_prefixes() -> None:
    with fstore_view(people(3)) as view:
        table = execute(view, P + "SELECT ?p ?a WHERE { ?p :age ?a } ORDER BY ?a").serialize("table")
    assert ":p0" in table and "3 rows" in table
    assert set(FORMATS) >= {"json", "xml", "csv", "tsv", "table", "ntriples", "nquads", "turtle", "trig", "jsonld", "rdf"}


def test_describe() -> None:
    with fstore_view(people(3)) as view:
        result = execute(view, P + "DESCRIBE :p1")
    assert {t[1] for t in result.triples} == {TYPE, ex("age"), ex("knows")}


def test_sub_select_is_hash_joined_and_keeps_its_groups() -> None:
    from tests.query_fixtures import ox_rows, oxigraph_store

    data = [
        (None, ex("a"), ex("p"), ex("b")),
        (None, ex("c"), ex("p"), ex("d")),
        (None, ex("a"), ex("q"), Literal("1", XSD_INTEGER)),
    ]
    # ?x is unbound for ?s = :c, so the sub-select has a group with no ?x: the outer
    # VALUES must join with it, not be pushed into its grouping.
    text = P + """SELECT ?x ?n WHERE {
        VALUES ?x { 1 }
        { SELECT ?x (COUNT(*) AS ?n) WHERE { ?s :p ?o OPTIONAL { ?s :q ?x } } GROUP BY ?x }
    }"""
    with fstore_view(data) as view:
        plan = explain(view, text)
        rows = [dict(r) for r in execute(view, text)]
    assert "Join (hash)" in plan, plan
    assert sorted(map(repr, rows)) == sorted(map(repr, ox_rows(oxigraph_store(data), text)))
    assert len(rows) == 2
