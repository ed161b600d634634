"""SPARQL over tables (W3C Direct Mapping), checked against pyoxigraph.

pyoxigraph is loaded with Direct-Mapping triples that :func:`dm_quads` builds here, on its
own, from the rows the table API returns (``table.rows()``: Python values), so the mapping
in ``fstore.tables.direct_mapping`` is compared with an independent reading of the spec
(https://www.w3.org/TR/rdb-direct-mapping/) and of docs/query.md, "Tables in SPARQL".
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


from tests.conformance import _match_rows
from tests.query_fixtures import from_ox, ox_rows, to_ox

import fstore
import fstore.tables as tables
from fstore.tables import Geometry, Interval
from query import execute, explain
from query.errors import ReadOnlyGraphError, UnsupportedFeatureError, UpdateError
from query.parser import parse_update
from nstore.terms import IRI, Literal
from query.update_exec import apply_update
from tests.profiles import examples

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
BASE = "urn:datae:dataset:"

# ------------------------------------------------------------------ the oracle's mapping


# RFC 3987's ucschar, as the RFC lists it.
UCSCHAR = [(0xA0, 0xD7FF), (0xF900, 0xFDCF), (0xFDF0, 0xFFEF)] + [
    (plane << 16, (plane << 16) + 0xFFFD) for plane in range(1, 14)] + [(0xE1000, 0xEFFFD)]


def _pct(text: str) -> str:
    """Percent-encoding as the Direct Mapping spec words it: keep iunreserved (ASCII
    letters, digits, ``-._~`` and ucschar), %-encode the UTF-8 of the rest."""
    return "".join(c if (c.isascii() and (c.isalnum() or c in "-._~")) or any(a <= ord(c) <= b for a, b in UCSCHAR)
                   else quote(c, safe="") for c in text)


def _table_iri(name: str) -> str:
    return BASE + quote(name, safe="/")


def _duration(i: Interval) -> str:
    date = "".join(f"{v}{u}" for v, u in ((i.years, "Y"), (i.months, "M"), (i.days + 7 * i.weeks, "D")) if v)
    secs = "" if not i.seconds else (format(i.seconds.normalize(), "f"))
    time = "".join(f"{v}{u}" for v, u in ((i.hours, "H"), (i.minutes, "M")) if v) + (f"{secs}S" if secs else "")
    return "P" + date + ("T" + time if time else "") if (date or time) else "PT0S"


def _literal(value: Any, data_type: str) -> tuple[str, str | None]:
    """(lexical form, datatype IRI) of a cell's Python value."""
    if data_type == "boolean":
        return ("true" if value else "false"), XSD + "boolean"
    if data_type == "integer":
        return str(value), XSD + "integer"
    if data_type == "float":
        return repr(float(value)), XSD + "double"
    if data_type == "numeric":
        return str(value), XSD + "decimal"
    if data_type == "text":
        return value, None
    if data_type in ("date", "time", "timestamp"):
        text = value.isoformat()
        return text, XSD + {"date": "date", "time": "time", "timestamp": "dateTime"}[data_type]
    if data_type == "blob":
        return bytes(value).hex().upper(), XSD + "hexBinary"
    if data_type == "json":
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False), RDF + "JSON"
    if data_type == "interval":
        return _duration(value), XSD + "duration"
    raise AssertionError(data_type)


def _key_lexical(value: Any, data_type: str) -> str:
    return _literal(value, data_type)[0]


def dm_quads(table: Any) -> list[ox.Quad]:
    """The Direct Mapping of a table (``view.table(name)``) as pyoxigraph quads in the
    table's graph, from its rows."""
    iri = _table_iri(table.name)
    graph = ox.NamedNode(iri)
    columns = [(c.name, c.data_type) for c in table.schema.columns]
    key = [(c.name, c.data_type) for c in table.schema.pk_columns]
    out = []
    for row in table.rows():
        subject = ox.NamedNode(iri + "/" + ";".join(f"{_pct(n)}={_pct(_key_lexical(row[n], t))}" for n, t in key))
        out.append(ox.Quad(subject, ox.NamedNode(RDF + "type"), ox.NamedNode(iri), graph))
        for name, data_type in columns:
            if row[name] is None:
                continue
            lexical, datatype = _literal(row[name], data_type)
            obj = ox.Literal(lexical, datatype=ox.NamedNode(datatype)) if datatype else ox.Literal(lexical)
            out.append(ox.Quad(subject, ox.NamedNode(f"{iri}#{_pct(name)}"), obj, graph))
    return out


def oracle(view: Any, quads: list = (), names: list | None = None) -> ox.Store:
    """pyoxigraph holding a view's quads (given) and the mapping of its tables."""
    store = ox.Store()
    for g, s, p, o in quads:
        store.add(ox.Quad(to_ox(s), to_ox(p), to_ox(o), to_ox(g)))
    for name in names if names is not None else tables.list_tables(view):
        store.extend(dm_quads(view.table(name)))
    return store


def same(view: Any, store: ox.Store, text: str, at: str = "") -> list:
    """Run ``text`` on datae and pyoxigraph; assert equal answers; return datae's rows.
    ``at``: a version clause datae's query gets in place of ``{at}`` (pyoxigraph gets none)."""
    expected = ox_rows(store, text.replace("{at}", ""))
    text = text.replace("{at}", at)
    result = execute(view, text)
    if result.form == "ASK":
        assert result.ask == expected, text
        return []
    rows = [dict(r) for r in result]
    assert _match_rows(rows, expected), f"{text}\n datae:    {rows}\n oxigraph: {expected}"
    return rows


def _cols(*spec: tuple) -> list[dict]:
    out = []
    for i, (name, data_type, *pk) in enumerate(spec):
        col = {"id": f"c{i}", "name": name, "dataType": data_type}
        if pk:
            col["primaryKeyIndex"] = pk[0]
        out.append(col)
    return out


# ------------------------------------------------------------------ the spec's example


@pytest.fixture
def people(tmp_path):
    """The Direct Mapping spec's example (section 2): People and Addresses, plus a table
    with a compound key, a link from a quad to a row, and a commit that changes rows."""
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="spec example") as tx:
        a = tables.create(tx, "Addresses", _cols(("ID", "integer", 0), ("city", "text"), ("state", "text")))
        a.insert({"ID": 18, "city": "Cambridge", "state": "MA"})
        p = tables.create(tx, "People", _cols(("ID", "integer", 0), ("fname", "text"), ("addr", "integer")))
        p.insert({"ID": 7, "fname": "Bob", "addr": 18})
        p.insert({"ID": 8, "fname": "Sue", "addr": None})
        d = tables.create(tx, "Department", _cols(("name", "text", 0), ("city", "text", 1), ("manager", "integer")))
        d.insert({"name": "accounting", "city": "Cambridge", "manager": 8})
        d.insert({"name": "R&D / lab", "city": "São Paulo", "manager": 7})
        fstore.add(tx, None, IRI("urn:ex:bob"), IRI("urn:ex:row"), IRI(BASE + "People/ID=7"))
        fstore.add(tx, IRI("urn:ex:g"), IRI("urn:ex:sue"), IRI("urn:ex:row"), IRI(BASE + "People/ID=8"))
    yield repo
    repo.close()


QUADS = [(None, IRI("urn:ex:bob"), IRI("urn:ex:row"), IRI(BASE + "People/ID=7")),
         (IRI("urn:ex:g"), IRI("urn:ex:sue"), IRI("urn:ex:row"), IRI(BASE + "People/ID=8"))]


def test_spec_example_triples(people):
    """The triples of the spec's example, written out by hand (without the foreign-key
    ``#ref-addr`` triple: Kart tables have no foreign keys)."""
    P, A = BASE + "People", BASE + "Addresses"
    I = lambda n: Literal(str(n), XSD + "integer")  # noqa: E731
    T = IRI(RDF + "type")
    expected = {
        (IRI(P + "/ID=7"), T, IRI(P)), (IRI(P + "/ID=7"), IRI(P + "#ID"), I(7)),
        (IRI(P + "/ID=7"), IRI(P + "#fname"), Literal("Bob")), (IRI(P + "/ID=7"), IRI(P + "#addr"), I(18)),
        (IRI(P + "/ID=8"), T, IRI(P)), (IRI(P + "/ID=8"), IRI(P + "#ID"), I(8)),
        (IRI(P + "/ID=8"), IRI(P + "#fname"), Literal("Sue")),
        (IRI(A + "/ID=18"), T, IRI(A)), (IRI(A + "/ID=18"), IRI(A + "#ID"), I(18)),
        (IRI(A + "/ID=18"), IRI(A + "#city"), Literal("Cambridge")), (IRI(A + "/ID=18"), IRI(A + "#state"), Literal("MA")),
    }
    view = people.at("main")
    text = f"CONSTRUCT {{ ?s ?p ?o }} FROM <{P}> FROM <{A}> WHERE {{ ?s ?p ?o }}"
    assert set(execute(view, text).triples) == expected
    D = BASE + "Department"
    rows = execute(view, f"SELECT ?s WHERE {{ GRAPH <{D}> {{ ?s <{D}#manager> 7 }} }}")
    assert [r["s"] for r in rows] == [IRI(D + "/name=R%26D%20%2F%20lab;city=São%20Paulo")]


SPEC_QUERIES = [
    # a join across two tables, on a column and a key
    """SELECT ?fname ?city WHERE {
         GRAPH <urn:datae:dataset:People> { ?p <urn:datae:dataset:People#fname> ?fname ; <urn:datae:dataset:People#addr> ?a }
         GRAPH <urn:datae:dataset:Addresses> { ?addr <urn:datae:dataset:Addresses#ID> ?a ; <urn:datae:dataset:Addresses#city> ?city } }""",
    # a row IRI as subject: a key lookup, every predicate
    "SELECT ?p ?o WHERE { GRAPH <urn:datae:dataset:People> { <urn:datae:dataset:People/ID=7> ?p ?o } }",
    # not a row of the table, or a non-canonical key
    "SELECT ?p ?o WHERE { GRAPH <urn:datae:dataset:People> { <urn:datae:dataset:People/ID=07> ?p ?o } }",
    "SELECT ?p ?o WHERE { GRAPH <urn:datae:dataset:People> { <urn:datae:dataset:People/ID=9> ?p ?o } }",
    "SELECT ?p ?o WHERE { GRAPH <urn:datae:dataset:People> { <urn:datae:dataset:Addresses/ID=18> ?p ?o } }",
    # the key column with a bound object
    "SELECT ?s WHERE { GRAPH <urn:datae:dataset:People> { ?s <urn:datae:dataset:People#ID> 8 } }",
    "SELECT ?s WHERE { GRAPH <urn:datae:dataset:People> { ?s <urn:datae:dataset:People#ID> \"8\" } }",
    # rdf:type, a wrong class, an unknown predicate
    "SELECT ?s WHERE { GRAPH <urn:datae:dataset:People> { ?s a <urn:datae:dataset:People> } }",
    "SELECT ?s WHERE { GRAPH <urn:datae:dataset:People> { ?s a <urn:datae:dataset:Addresses> } }",
    "SELECT ?s WHERE { GRAPH <urn:datae:dataset:People> { ?s <urn:datae:dataset:People#nope> ?o } }",
    # the compound key: lookups by row IRI, and every triple
    "SELECT ?p ?o WHERE { GRAPH <urn:datae:dataset:Department> { <urn:datae:dataset:Department/name=accounting;city=Cambridge> ?p ?o } }",
    "SELECT ?s ?p ?o FROM <urn:datae:dataset:Department> WHERE { ?s ?p ?o }",
    "SELECT ?s ?o WHERE { GRAPH <urn:datae:dataset:Department> { ?s <urn:datae:dataset:Department#city> ?o } }",
    # joins with quads: from a quad to a row, from a row to a quad, in the default and a named graph
    """SELECT ?who ?fname ?city WHERE { ?who <urn:ex:row> ?r .
         GRAPH <urn:datae:dataset:People> { ?r <urn:datae:dataset:People#fname> ?fname ; <urn:datae:dataset:People#addr> ?a }
         GRAPH <urn:datae:dataset:Addresses> { ?ad <urn:datae:dataset:Addresses#ID> ?a ; <urn:datae:dataset:Addresses#city> ?city } }""",
    """SELECT ?fname ?who ?g WHERE { GRAPH <urn:datae:dataset:People> { ?r <urn:datae:dataset:People#fname> ?fname }
         GRAPH ?g { ?who <urn:ex:row> ?r } }""",
    """SELECT ?fname ?who WHERE { GRAPH <urn:datae:dataset:People> { ?r <urn:datae:dataset:People#fname> ?fname }
         OPTIONAL { ?who <urn:ex:row> ?r } }""",
    # FROM a table with the store's quads as named graphs
    "SELECT ?s ?fname ?g FROM <urn:datae:dataset:People> WHERE { ?s <urn:datae:dataset:People#fname> ?fname OPTIONAL { GRAPH ?g { ?x ?y ?s } } }",
    # FROM NAMED a table: GRAPH ?g binds it then
    "SELECT ?g ?s FROM NAMED <urn:datae:dataset:People> FROM NAMED <urn:ex:g> WHERE { GRAPH ?g { ?s ?p ?o } }",
    # aggregates and filters over a table
    "SELECT (COUNT(*) AS ?n) (SUM(?id) AS ?sum) WHERE { GRAPH <urn:datae:dataset:People> { ?s <urn:datae:dataset:People#ID> ?id FILTER(?id > 7) } }",
    "ASK { GRAPH <urn:datae:dataset:Addresses> { ?s <urn:datae:dataset:Addresses#state> \"MA\" } }",
]


@pytest.mark.parametrize("text", SPEC_QUERIES)
def test_spec_example_queries(people, text):
    view = people.at("main")
    same(view, oracle(view, QUADS), text)


@pytest.mark.parametrize("text", SPEC_QUERIES)
def test_spec_example_queries_with_hash_steps(people, text, monkeypatch):
    """The same with every lookup step switched to a hash join at once (the executor's
    adaptive mode reads a table pattern whole, see query.executor)."""
    import query.executor as executor

    monkeypatch.setattr(executor, "LOOKUPS_BEFORE_SCAN", 0)
    monkeypatch.setattr(executor, "SCAN_ROWS_PER_LOOKUP", 10_000)
    monkeypatch.setattr(executor, "SCAN_CHUNK", 1)
    view = people.at("main")
    same(view, oracle(view, QUADS), text)


def test_graph_variable_never_binds_a_table(people):
    """Tables are not among the named graphs: ``GRAPH ?g`` and the default graph see the
    quads only, and nothing of the tables' storage shows."""
    view = people.at("main")
    store = oracle(view, QUADS, names=[])  # pyoxigraph without the tables
    for text in ["SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
                 "SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }",
                 "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
                 "SELECT ?g WHERE { GRAPH ?g { } }"]:
        same(view, store, text)
    assert len(list(execute(view, "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"))) == 1
    # ?g bound to a table graph from elsewhere: still not one of the named graphs
    for text in [f"SELECT * WHERE {{ VALUES ?g {{ <{BASE}People> }} GRAPH ?g {{ ?s ?p ?o }} }}",
                 f"SELECT * WHERE {{ BIND(<{BASE}People> AS ?g) GRAPH ?g {{ ?s ?p ?o }} }}",
                 "SELECT * WHERE { ?x <urn:ex:row> ?s . GRAPH ?g { ?s ?p ?o } }",
                 f"SELECT * WHERE {{ VALUES ?g {{ <{BASE}People> }} GRAPH ?g {{ ?s ?p ?o OPTIONAL {{ ?s ?p ?o }} }} }}"]:
        assert same(view, store, text) == []
    named = f"SELECT * FROM NAMED <{BASE}People> WHERE {{ VALUES ?g {{ <{BASE}People> }} GRAPH ?g {{ ?s ?p ?o }} }}"
    assert len(same(view, oracle(view, QUADS), named)) == 7


def test_a_missing_table_is_an_empty_graph(people):
    view = people.at("main")
    assert list(execute(view, "SELECT * WHERE { GRAPH <urn:datae:dataset:Nope> { ?s ?p ?o } }")) == []


def test_at_an_older_ref(people):
    """AT reads the tables as they were; joins with quads at that ref too."""
    first = people.resolve("main")
    with people.transaction("main", message="change rows") as tx:
        p = tx.table("People")
        p.update({"ID": 7, "fname": "Robert"})
        p.delete(8)
        p.insert({"ID": 9, "fname": "Ann", "addr": 18})
        tx.table("Addresses").update({"ID": 18, "city": "Boston"})
        fstore.rm(tx, *QUADS[0])
    old, new = people.at(first), people.at("main")
    query = """SELECT ?who ?fname ?city {at} WHERE { OPTIONAL { ?who <urn:ex:row> ?r }
         GRAPH <urn:datae:dataset:People> { ?r <urn:datae:dataset:People#fname> ?fname ; <urn:datae:dataset:People#addr> ?a }
         GRAPH <urn:datae:dataset:Addresses> { ?ad <urn:datae:dataset:Addresses#ID> ?a ; <urn:datae:dataset:Addresses#city> ?city } }"""
    then = same(new, oracle(old, QUADS), query, at=f"AT <{first}>")
    assert {(r["fname"].lexical, r["city"].lexical) for r in then} == {("Bob", "Cambridge")}
    now = same(new, oracle(new, QUADS[1:]), query)
    assert {r["fname"].lexical for r in now} == {"Robert", "Ann"}
    same(new, oracle(old, QUADS), f"SELECT ?p ?o {{at}} WHERE {{{{ GRAPH <{BASE}People> {{{{ <{BASE}People/ID=8> ?p ?o }}}} }}}}".replace("{{", "{").replace("}}", "}"), at='AT "main~1"')
    same(old, oracle(old, QUADS), f"SELECT ?s ?o WHERE {{ GRAPH <{BASE}People> {{ ?s <{BASE}People#fname> ?o }} }}")


def test_versions_over_tables_is_refused(people):
    """VERSIONS reads quads: naming a table graph in it is an error, not an empty answer."""
    for text in [f"SELECT * VERSIONS WHERE {{ GRAPH <{BASE}People> {{ ?s ?p ?o }} }}",
                 f"SELECT * VERSIONS FROM <{BASE}People> WHERE {{ ?s ?p ?o }}"]:
        with pytest.raises(UnsupportedFeatureError, match="table graph"):
            list(execute(people.at("main"), text))


def _dm_set(view: Any, name: str) -> set:
    """The test's mapping of a table as a set of triples, literals in pyoxigraph's
    normal form (a store normalises what it holds)."""
    store = ox.Store()
    store.extend(dm_quads(view.table(name)))
    return {(from_ox(q.subject), from_ox(q.predicate), from_ox(q.object)) for q in store}


def _changes(before: set, after: set) -> list[dict]:
    return [{"op": Literal("+"), "s": s, "p": p, "o": o} for s, p, o in after - before] + \
           [{"op": Literal("-"), "s": s, "p": p, "o": o} for s, p, o in before - after]


@pytest.mark.parametrize("alter", [False, True])
def test_changes_over_a_table(people, alter):
    """CHANGES over a table graph: the Direct-Mapping triples added and removed between two
    refs (rows inserted, deleted, updated; with a schema change too), as the difference of
    the two mappings built by the test; GRAPH ?g still binds quad graphs only."""
    first = people.resolve("main")
    with people.transaction("main", message="rows") as tx:
        p = tx.table("People")
        p.update({"ID": 7, "fname": "Robert", "addr": 18})
        p.delete(8)
        p.insert({"ID": 9, "fname": "Ann", "addr": None})
        if alter:
            p.alter(p.schema.rename_column("fname", "first"))
        fstore.add(tx, IRI("urn:ex:g"), IRI("urn:ex:ann"), IRI("urn:ex:row"), IRI(BASE + "People/ID=9"))
    old, new = people.at(first), people.at("main")
    was, now = _dm_set(old, "People"), _dm_set(new, "People")
    expected = _changes(was, now)
    text = f"SELECT ?op ?s ?p ?o CHANGES FROM <{first}> WHERE {{ GRAPH <{BASE}People> {{ ?s ?p ?o }} }}"
    rows = [dict(r) for r in execute(new, text)]
    assert _match_rows(rows, expected), f"{rows}\n{expected}"
    assert len(rows) == 8  # ID 7: -Bob +Robert; ID 8: three triples removed; ID 9: three added
    same_in_default = [dict(r) for r in execute(new, text.replace(f"WHERE {{ GRAPH <{BASE}People> {{ ?s ?p ?o }} }}",
                                                                  f"FROM <{BASE}People> WHERE {{ ?s ?p ?o }}"))]
    assert _match_rows(same_in_default, expected)
    # a changed row joined with a changed quad; GRAPH ?g binds the quad's graph only
    joined = list(execute(new, f"""SELECT ?op ?who ?n ?g CHANGES FROM <{first}> WHERE {{
        GRAPH ?g {{ ?who <urn:ex:row> ?r }} GRAPH <{BASE}People> {{ ?r ?name ?n FILTER(isLiteral(?n) && !isNumeric(?n)) }} }}"""))
    assert [(r["op"].lexical, r["who"], r["n"].lexical, r["g"]) for r in joined] == [("+", IRI("urn:ex:ann"), "Ann", IRI("urn:ex:g"))]
    graphs = {r["g"] for r in execute(new, f"SELECT DISTINCT ?g CHANGES FROM <{first}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} "
                                             f"GRAPH <{BASE}People> {{ ?x ?y ?z }} }}")}
    assert graphs == {IRI("urn:ex:g")}


def test_schema_changes_between_refs(people):
    """Each ref maps the schema it has: a renamed, a dropped and an added column."""
    first = people.resolve("main")
    with people.transaction("main", message="alter") as tx:
        p = tx.table("People")
        p.alter(p.schema.rename_column("fname", "first name").drop_column("addr").add_column("age", "integer", id="age"))
        p.update({"ID": 7, "age": 40})
    old, new = people.at(first), people.at("main")
    text = f"SELECT ?s ?p ?o {{at}} WHERE {{ GRAPH <{BASE}People> {{ ?s ?p ?o }} }}"
    rows = same(new, oracle(new), text)
    assert {r["p"].value.split("#")[-1] for r in rows} == {"type", "ID", "first%20name", "age"}
    same(new, oracle(old), text, at=f"AT <{first}>")
    same(new, oracle(new), f'SELECT ?s ?n WHERE {{ GRAPH <{BASE}People> {{ ?s <{BASE}People#first%20name> ?n }} }}')


def test_transaction_reads_its_own_rows(people):
    with people.transaction("main", message="pending") as tx:
        tx.table("People").insert({"ID": 10, "fname": "Zoe"})
        rows = list(execute(tx, f"SELECT ?n WHERE {{ GRAPH <{BASE}People> {{ <{BASE}People/ID=10> ?p ?n FILTER(isLiteral(?n)) }} }}"))
        assert {r["n"] for r in rows} == {Literal("10", XSD + "integer"), Literal("Zoe")}


@pytest.mark.parametrize("text", [
    "INSERT DATA { GRAPH <urn:datae:dataset:People> { <urn:a> <urn:b> 1 } }",
    "DELETE DATA { GRAPH <urn:datae:dataset:People> { <urn:datae:dataset:People/ID=7> <urn:datae:dataset:People#fname> \"Bob\" } }",
    "DELETE WHERE { GRAPH <urn:datae:dataset:People> { ?s ?p ?o } }",
    "WITH <urn:datae:dataset:People> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "INSERT { GRAPH <urn:datae:dataset:Addresses> { ?s ?p ?o } } WHERE { ?s ?p ?o }",
    "CLEAR GRAPH <urn:datae:dataset:People>",
    "DROP GRAPH <urn:datae:dataset:People>",
    "CREATE GRAPH <urn:datae:dataset:New>",
    "COPY <urn:ex:g> TO <urn:datae:dataset:People>",
    "MOVE <urn:datae:dataset:People> TO <urn:ex:h>",
    "INSERT DATA { <urn:a> <urn:b> 1 } ; INSERT DATA { GRAPH <urn:datae:dataset:X> { <urn:a> <urn:b> 1 } }",
    "WITH <urn:datae:dataset:People> INSERT { ?s <urn:b> 1 } WHERE { FILTER(false) }",  # no solution: still refused
    "INSERT { GRAPH <urn:datae:dataset:People> { ?s <urn:b> 1 } } WHERE { FILTER(false) }",
])
def test_updates_naming_a_table_graph_are_refused(people, text):
    head = people.resolve("main")
    with pytest.raises(ReadOnlyGraphError) as info:
        with people.transaction("main", message=text) as tx:
            apply_update(tx, parse_update(text))
    assert isinstance(info.value, UpdateError) and "table graph" in str(info.value)
    assert people.resolve("main") == head  # nothing committed
    assert len(people.at("main").table("People")) == 2


def test_updates_may_read_a_table(people):
    """An update's WHERE may read a table graph, and COPY a table's triples into quads."""
    with people.transaction("main", message="copy") as tx:
        apply_update(tx, parse_update(f"""INSERT {{ ?s <urn:ex:name> ?n }} WHERE {{
            GRAPH <{BASE}People> {{ ?s <{BASE}People#fname> ?n }} }} ; COPY <{BASE}Addresses> TO <urn:ex:copy> ;
            WITH <{BASE}People> INSERT {{ GRAPH <urn:ex:ids> {{ ?s <urn:ex:id> ?i }} }} WHERE {{ ?s <{BASE}People#ID> ?i }}"""))
    view = people.at("main")
    assert len(list(execute(view, "SELECT * WHERE { GRAPH <urn:ex:ids> { ?s ?p ?o } }"))) == 2
    names = {r["n"].lexical for r in execute(view, "SELECT ?n WHERE { ?s <urn:ex:name> ?n }")}
    assert names == {"Bob", "Sue"}
    assert len(list(execute(view, "SELECT * WHERE { GRAPH <urn:ex:copy> { ?s ?p ?o } }"))) == 4


def test_every_type_has_its_literal(tmp_path):
    """One column of each type, including geometry (ISO WKT, EPSG prefix), json, interval."""
    repo = fstore.open(tmp_path / "r")
    schema = _cols(("k", "integer", 0), ("b", "boolean"), ("blob", "blob"), ("d", "date"), ("f", "float"),
                   ("i", "interval"), ("j", "json"), ("n", "numeric"), ("t", "text"), ("tm", "time"),
                   ("ts", "timestamp"), ("g", "geometry"))
    schema[-1]["geometryType"] = "POINT"
    schema[-1]["geometryCRS"] = "EPSG:4326"
    utc = _cols(("k", "integer", 0), ("ts", "timestamp"))
    utc[1]["timezone"] = "UTC"
    with repo.transaction("main", message="types") as tx:
        t = tables.create(tx, "all types", schema)
        t.insert({"k": 1, "b": True, "blob": b"\x00\xff", "d": dt.date(2020, 2, 29), "f": 1.5,
                  "i": Interval(weeks=1, days=2, hours=3, seconds=Decimal("4.50")), "j": {"b": [1, None], "a": "x"},
                  "n": Decimal("12.50"), "t": "tēxt \"q\"", "tm": dt.time(10, 0, 0, 250000),
                  "ts": dt.datetime(2020, 1, 1, 12, 30), "g": Geometry.from_wkt("POINT (174.7 -41.3)")})
        t.insert({"k": 2})
        tables.create(tx, "utc", utc).insert({"k": 1, "ts": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)})
    view = repo.at("main")
    g = BASE + "all%20types"
    cells = {r["p"].value.split("#")[1]: r["o"] for r in execute(view, f"SELECT ?p ?o WHERE {{ GRAPH <{g}> {{ <{g}/k=1> ?p ?o }} }}")}
    assert cells == {
        "k": Literal("1", XSD + "integer"), "b": Literal("true", XSD + "boolean"),
        "blob": Literal("00FF", XSD + "hexBinary"), "d": Literal("2020-02-29", XSD + "date"),
        "f": Literal("1.5E0", XSD + "double"), "i": Literal("P9DT3H4.5S", XSD + "duration"),
        "j": Literal('{"a":"x","b":[1,null]}', RDF + "JSON"), "n": Literal("12.5", XSD + "decimal"),
        "t": Literal("tēxt \"q\""), "tm": Literal("10:00:00.25", XSD + "time"),
        "ts": Literal("2020-01-01T12:30:00", XSD + "dateTime"),
        "g": Literal("<http://www.opengis.net/def/crs/EPSG/0/4326> POINT (174.7 -41.3)",
                     "http://www.opengis.net/ont/geosparql#wktLiteral"),
        "type": IRI(g),  # rdf:type's IRI ends "#type"
    }
    same(view, _without_geometry(view), f"SELECT ?s ?p ?o WHERE {{ GRAPH <{g}> {{ ?s ?p ?o FILTER(?p != <{g}#g>) }} }}")
    same(view, oracle(view, names=["utc"]), f"SELECT ?s ?o WHERE {{ GRAPH <{BASE}utc> {{ ?s <{BASE}utc#ts> ?o }} }}")
    repo.close()


def _without_geometry(view: Any) -> ox.Store:
    """The oracle for table "all types" without its geometry column (whose WKT the test
    cannot write on its own)."""
    store = ox.Store()
    table = view.table("all types")
    geometry = tables.Schema.from_dicts([c.to_dict() for c in table.schema.columns if c.data_type != "geometry"])
    rows = [{k: v for k, v in r.items() if k != "g"} for r in table.rows()]

    class Plain:
        name = table.name
        schema = geometry

        def rows(self):
            return iter(rows)

    store.extend(dm_quads(Plain()))
    return store


def test_planner_uses_row_counts(tmp_path):
    """A big table's column scan is not the first step of a join with a selective quad
    pattern, and the estimate of a table pattern is its row count."""
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="rows") as tx:
        t = tables.create(tx, "big", _cols(("id", "integer", 0), ("v", "text")))
        t.insert_many({"id": i, "v": f"v{i % 7}"} for i in range(3000))
        fstore.add(tx, None, IRI("urn:ex:x"), IRI("urn:ex:likes"), IRI(BASE + "big/id=42"))
    view = repo.at("main")
    text = f"SELECT ?x ?v WHERE {{ GRAPH <{BASE}big> {{ ?r <{BASE}big#v> ?v }} ?x <urn:ex:likes> ?r }}"
    plan = explain(view, text)
    assert plan.index("urn:ex:likes") < plan.index("big#v"), plan
    assert "est. 3000" in explain(view, f"SELECT * WHERE {{ GRAPH <{BASE}big> {{ ?r a ?c }} }}")
    assert [(r["x"], r["v"]) for r in execute(view, text)] == [(IRI("urn:ex:x"), Literal("v0"))]
    repo.close()


# ------------------------------------------------------------------ random tables

JSON_SCALARS = st.none() | st.booleans() | st.integers(-100, 100) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=3)
TYPES = {
    "integer": st.integers(-(2**63), 2**63 - 1),
    "text": st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    "float": st.floats(allow_nan=False, width=64),
    "boolean": st.booleans(),
    "numeric": st.decimals(min_value=-10**6, max_value=10**6, places=2, allow_nan=False, allow_infinity=False),
    "date": st.dates(),
    "time": st.times(),
    "timestamp": st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    "blob": st.binary(max_size=6),
    "json": st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=2),
                      st.dictionaries(st.text(max_size=2), JSON_SCALARS | st.lists(JSON_SCALARS, max_size=2), max_size=2)),
}
KEY_TYPES = ["integer", "text", "date"]


@st.composite
def random_table(draw: st.DrawFn) -> tuple[list[dict], list[dict]]:
    n_key = draw(st.integers(1, 2))
    key_types = [draw(st.sampled_from(KEY_TYPES)) for _ in range(n_key)]
    other_types = draw(st.lists(st.sampled_from(sorted(TYPES)), max_size=4))
    names = draw(st.lists(st.text(st.sampled_from("ab c;=/#%é"), min_size=1, max_size=3),
                          min_size=n_key + len(other_types), max_size=n_key + len(other_types), unique=True))
    schema = _cols(*[(names[i], t, i) for i, t in enumerate(key_types)],
                   *[(names[n_key + i], t) for i, t in enumerate(other_types)])
    keys = draw(st.lists(st.tuples(*[TYPES[t] for t in key_types]), max_size=8, unique=True))
    rows = []
    for key in keys:
        row = dict(zip(names, key))
        for col in schema[n_key:]:
            row[col["name"]] = draw(st.none() | TYPES[col["dataType"]])
        rows.append(row)
    return schema, rows


def _term(value: Any, data_type: str) -> str:
    """A cell's value as a SPARQL term in canonical form (a constant matches terms, and
    ``"0.00"^^xsd:decimal`` is another term than ``"0.0"``, though pyoxigraph, which
    stores values, matches both)."""
    lexical, datatype = _literal(value, data_type)
    if data_type == "numeric":
        whole, _, fraction = format(value, "f").partition(".")
        lexical = f"{whole}.{fraction.rstrip('0') or '0'}" if value else "0.0"  # no "-0.0"
    if data_type in ("time", "timestamp") and "." in lexical:
        lexical = lexical.rstrip("0").rstrip(".")
    return str(Literal(lexical, datatype))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(random_table(), st.data())
def test_random_tables_match_oxigraph(tmp_path_factory, table, data):
    schema, rows = table
    repo = fstore.open(tmp_path_factory.mktemp("r"))
    try:
        with repo.transaction("main", message="rows") as tx:
            t = tables.create(tx, "t/x y", schema)
            for row in rows:
                t.insert(row)
        view = repo.at("main")
        store = oracle(view)
        g = f"<{BASE}t/x%20y>"
        same(view, store, f"SELECT ?s ?p ?o WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}")
        for col in schema:
            predicate = f"<{BASE}t/x%20y#{_pct(col['name'])}>"
            same(view, store, f"SELECT ?s ?o WHERE {{ GRAPH {g} {{ ?s {predicate} ?o }} }}")
        if rows:
            row = data.draw(st.sampled_from(list(view.table("t/x y").rows())))
            key = ";".join(f"{_pct(c['name'])}={_pct(_key_lexical(row[c['name']], c['dataType']))}"
                           for c in schema if "primaryKeyIndex" in c)
            subject = f"<{BASE}t/x%20y/{key}>"
            found = same(view, store, f"SELECT ?p ?o WHERE {{ GRAPH {g} {{ {subject} ?p ?o }} }}")
            assert found  # at least its type and key cells
            col = data.draw(st.sampled_from(schema))
            if row[col["name"]] is not None and col["dataType"] not in ("float",):
                value = _term(row[col["name"]], col["dataType"])
                predicate = f"<{BASE}t/x%20y#{_pct(col['name'])}>"
                same(view, store, f"SELECT ?s WHERE {{ GRAPH {g} {{ ?s {predicate} {value} }} }}")
            # joins of the table with itself and with quads that name its rows
            quads = [(None, IRI("urn:ex:a"), IRI("urn:ex:row"), IRI(subject[1:-1])),
                     (IRI("urn:ex:g"), IRI("urn:ex:b"), IRI("urn:ex:row"), IRI(BASE + "t/x%20y/nothing"))]
            with repo.transaction("main", message="links") as tx:
                for quad in quads:
                    fstore.add(tx, *quad)
            view = repo.at("main")
            store = oracle(view, quads)
            same(view, store, f"SELECT ?a ?s ?n WHERE {{ ?a <urn:ex:row> ?s . GRAPH {g} {{ ?s a {g} . OPTIONAL {{ ?s ?q ?n }} }} }}")
            same(view, store, f"SELECT ?a ?s ?p ?o WHERE {{ GRAPH ?h {{ ?a <urn:ex:row> ?s }} GRAPH {g} {{ ?s ?p ?o }} }}")
            same(view, store, f"SELECT ?s ?a WHERE {{ GRAPH {g} {{ ?s a ?c }} OPTIONAL {{ GRAPH ?h {{ ?a ?x ?s }} }} }}")
            # CHANGES after deleting the drawn row and clearing a cell of another
            first = repo.resolve("main")
            key_names = [c["name"] for c in schema if "primaryKeyIndex" in c]
            others = [c["name"] for c in schema if "primaryKeyIndex" not in c]
            with repo.transaction("main", message="change") as tx:
                t = tx.table("t/x y")
                t.delete(tuple(row[n] for n in key_names))
                for other in t.rows():
                    if others and other[others[0]] is not None:
                        t.update({**other, others[0]: None})
                        break
            before, after = repo.at(first), repo.at("main")
            rows = [dict(r) for r in execute(after, f"SELECT ?op ?s ?p ?o CHANGES FROM <{first}> WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}")]
            expected = _changes(_dm_set(before, "t/x y"), _dm_set(after, "t/x y"))
            assert _match_rows(rows, expected), f"{rows}\n{expected}"
    finally:
        repo.close()
