"""Bounded queries (issue 16, point 3): deep nesting and long chains are refused with a
typed error (never RecursionError), a time limit stops a running query (a backtracking
regular expression included), and operators that hold rows in memory are capped.
Through the API and through `datae query` (exit 128, one line `datae: error: ...`)."""

from __future__ import annotations

import re
import time

import pytest

from datae.cli import main
from query import IRI, Literal, MemorySource, execute, explain
from query.errors import (
    IntermediateTooLargeError,
    QueryError,
    QueryTimeoutError,
    QueryTooComplexError,
    ResultTooLargeError,
)
from nstore.terms import XSD_INTEGER

SHAPES = {
    "300 nested groups": "SELECT * WHERE " + "{" * 300 + " ?s ?p ?o " + "}" * 300,
    "1,000 UNIONs": "SELECT * WHERE { " + " UNION ".join("{ ?s ?p ?o }" for _ in range(1000)) + " }",
    "5,000-term ||": "SELECT * WHERE { ?s ?p ?o FILTER(" + " || ".join(f"?o = {i}" for i in range(5000)) + ") }",
    "5,000-term &&": "SELECT * WHERE { ?s ?p ?o FILTER(" + " && ".join(f"?o != {i}" for i in range(5000)) + ") }",
    "3,000-term +": "SELECT * WHERE { ?s ?p ?o BIND(" + " + ".join("1" for _ in range(3000)) + " AS ?x) }",
    "1,000 parentheses": "ASK { FILTER(" + "(" * 1000 + "true" + ")" * 1000 + ") }",
    "500 nested calls": "SELECT * WHERE { ?s ?p ?o BIND(" + "STR(" * 500 + "?o" + ")" * 500 + " AS ?x) }",
    "1,000-step path": "SELECT * WHERE { ?s " + "/".join("<urn:p>" for _ in range(1000)) + " ?o }",
    "500 nested path groups": "SELECT * WHERE { ?s " + "(" * 500 + "<urn:p>" + ")" * 500 + " ?o }",
    "300 nested OPTIONALs": "SELECT * WHERE " + "{ ?s ?p ?o OPTIONAL " * 300 + "{ ?s ?p ?o }" + "}" * 300,
    "200 nested sub-selects": "SELECT * WHERE " + "{ SELECT * WHERE " * 200 + "{ ?s ?p ?o }" + "}" * 200,
    "200 nested EXISTS": "SELECT * WHERE { ?s ?p ?o " + "FILTER EXISTS { ?s ?p ?o " * 200 + "}" * 200 + " }",
    "1,000 MINUS": "SELECT * WHERE { ?s ?p ?o " + " ".join(f"MINUS {{ ?s <urn:x{i}> ?o }}" for i in range(1000)) + " }",
    "1,000 FILTERs": "SELECT * WHERE { ?s ?p ?o " + " ".join(f"FILTER(?o != {i})" for i in range(1000)) + " }",
}


def _source() -> MemorySource:
    return MemorySource([(None, IRI("urn:s"), IRI("urn:p"), Literal("a" * 30 + "b"))])


@pytest.mark.parametrize("text", SHAPES.values(), ids=list(SHAPES))
def test_deep_or_long_queries_run_or_are_refused_with_a_typed_error(text: str) -> None:
    try:
        result = execute(_source(), text)
        list(result) if result.form == "SELECT" else result.ask
    except QueryTooComplexError as error:
        assert "too complex" in str(error)
    # anything else (RecursionError, a crash) fails the test


@pytest.mark.parametrize("name, rows", [("1,000 UNIONs", 1000), ("5,000-term ||", 0), ("5,000-term &&", 1),
                                        ("1,000 FILTERs", 1)])
def test_long_flat_chains_run(name: str, rows: int) -> None:
    """UNION, ||, && and a group's FILTERs become balanced trees: thousands of terms run."""
    assert len(list(execute(_source(), SHAPES[name]))) == rows


def test_a_balanced_or_and_keeps_the_three_valued_logic() -> None:
    numbers = MemorySource([(None, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(str(i), XSD_INTEGER)) for i in range(5)])
    ors = " || ".join(f"?o = {i}" for i in (1, 3)) + " || ?nope || " + " || ".join(f"?o = {i}" for i in (4, 7, 8))
    rows = execute(numbers, f"SELECT ?o WHERE {{ ?s ?p ?o FILTER({ors}) }} ORDER BY ?o")
    assert [row["o"].lexical for row in rows] == ["1", "3", "4"]  # an error (unbound) absorbed by a true
    ands = " && ".join(f"?o != {i}" for i in (0, 2, 9, 11))
    rows = execute(numbers, f"SELECT ?o WHERE {{ ?s ?p ?o FILTER({ands}) FILTER(?o != 3) }} ORDER BY ?o")
    assert [row["o"].lexical for row in rows] == ["1", "4"]


def test_nesting_error_names_the_depth_and_the_place() -> None:
    with pytest.raises(QueryTooComplexError, match=r"nesting depth 101 exceeds 100 \(line 1, column 116\)"):
        execute(_source(), SHAPES["300 nested groups"])
    assert issubclass(QueryTooComplexError, QueryError)


def test_brackets_in_strings_iris_and_comments_do_not_count() -> None:
    text = 'ASK { # ' + "(" * 200 + '\n FILTER("' + "{" * 200 + '" != STR(<urn:' + "(" * 200 + '>)) }'
    assert execute(_source(), text).ask is True


def test_a_moderately_nested_query_still_runs() -> None:
    text = "SELECT * WHERE " + "{" * 60 + " ?s ?p ?o " + "}" * 60
    assert len(list(execute(_source(), text))) == 1


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    body = "\n".join(f"<urn:s{i}> <urn:p> <urn:o{i}> ." for i in range(200))
    (tmp_path / "data.nt").write_text(body + '\n<urn:s> <urn:name> "' + "a" * 60 + 'b" .\n')
    assert main(["import", "data.nt", "-m", "data"]) == 0
    capsys.readouterr()
    return tmp_path


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_refuses_deep_nesting_in_one_line(store, capsys) -> None:
    code, out, err = _cli(capsys, "query", SHAPES["300 nested groups"])
    assert code == 128 and out == ""
    assert err.startswith("datae: error: the query is too complex: nesting depth 101 exceeds 100")
    assert err.count("\n") == 1


# ---------------------------------------------------------------------------- time limit


def _numbers(n: int) -> MemorySource:
    return MemorySource([(None, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(str(i))) for i in range(n)])


CROSS = "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }"  # 300³ = 27 million rows


@pytest.mark.parametrize("text", [
    CROSS,
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }",  # nothing comes out until the end
    'SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f FILTER(STR(?f) = CONCAT(?b, ?d)) }',  # nothing comes out
    "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f } ORDER BY ?f",
    'ASK { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f FILTER(STR(?f) = CONCAT(?b, ?d, "x")) }',
])
def test_a_slow_query_is_stopped_by_its_timeout(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match=r"time limit of 0.5 s"):
        result = execute(_numbers(300), text, timeout=0.5)
        list(result) if result.form == "SELECT" else result.ask
    assert time.monotonic() - started < 10


def test_a_catastrophic_regex_is_stopped() -> None:
    source = MemorySource([(None, IRI("urn:s"), IRI("urn:p"), Literal("a" * 60 + "b"))])
    for text in ['SELECT * WHERE { ?s ?p ?o FILTER REGEX(?o, "^(a|aa)+$") }',
                 'SELECT * WHERE { ?s ?p ?o BIND(REPLACE(?o, "(a|aa)+$", "x") AS ?r) }']:
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError):
            list(execute(source, text, timeout=0.5))
        assert time.monotonic() - started < 10
    # The example: the engine sees through this one, or the deadline stops it.
    started = time.monotonic()
    try:
        assert list(execute(source, 'SELECT * WHERE { ?s ?p ?o FILTER REGEX(?o, "^(a+)+$") }', timeout=0.5)) == []
    except QueryTimeoutError:
        pass
    assert time.monotonic() - started < 10


def test_regex_still_works_under_a_timeout() -> None:
    source = MemorySource([(None, IRI("urn:s"), IRI("urn:p"), Literal("Alice")), (None, IRI("urn:t"), IRI("urn:p"), Literal("bob"))])
    rows = execute(source, 'SELECT ?o WHERE { ?s ?p ?o FILTER REGEX(?o, "^a", "i") }', timeout=5)
    assert [row["o"].lexical for row in rows] == ["Alice"]
    rows = execute(source, r'SELECT (REPLACE(?o, "(\\w)(\\w*)", "$2$1") AS ?r) WHERE { ?s ?p ?o } ORDER BY ?r', timeout=5)
    assert [row["r"].lexical for row in rows] == ["liceA", "obb"]


def test_no_timeout_by_default_and_a_fast_query_finishes() -> None:
    assert len(list(execute(_numbers(10), CROSS, timeout=30))) == 1000
    assert len(list(execute(_numbers(10), CROSS))) == 1000


# ---------------------------------------------------------------------------- held rows


@pytest.mark.parametrize("text, operator", [
    ("SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b ?d", "ORDER BY"),
    ("SELECT DISTINCT ?a ?c WHERE { ?a ?p ?b . ?c ?q ?d }", "DISTINCT"),
    ("SELECT ?a ?c (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d } GROUP BY ?a ?c", "GROUP BY"),
    ("CONSTRUCT { ?a <urn:x> ?d } WHERE { ?a ?p ?b . ?c ?q ?d }", "CONSTRUCT"),
])
def test_operators_that_hold_rows_are_capped(text: str, operator: str) -> None:
    with pytest.raises(IntermediateTooLargeError, match=f"{operator} holds more than 1,000 rows") as caught:
        result = execute(_numbers(100), text, max_held_rows=1000)
        list(result) if result.form == "SELECT" else result.triples
    assert caught.value.limit == 1000 and caught.value.operator == operator
    assert isinstance(caught.value, ResultTooLargeError) and isinstance(caught.value, QueryError)


def test_under_the_cap_nothing_changes() -> None:
    assert len(list(execute(_numbers(30), "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b", max_held_rows=900))) == 900
    grouped = execute(_numbers(100), "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d }", max_held_rows=10)
    assert [row["n"].lexical for row in grouped] == ["10000"]  # one group: streams through
    top = execute(_numbers(100), "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b LIMIT 3", max_held_rows=10)
    assert len(list(top)) == 3  # a top-k sort holds only k rows


@pytest.mark.parametrize("text", [
    "SELECT * WHERE { ?a ?p ?b } ORDER BY ?b LIMIT 1000000000",
    "SELECT * WHERE { ?a ?p ?b } ORDER BY ?b OFFSET 1000000 LIMIT 1",
])
def test_a_top_k_sort_past_the_cap_is_capped(text: str) -> None:
    """ORDER BY with LIMIT keeps offset + limit rows: past the cap that is no bound."""
    with pytest.raises(IntermediateTooLargeError, match="ORDER BY holds more than 10 rows"):
        list(execute(_numbers(100), text, max_held_rows=10))
    assert len(list(execute(_numbers(100), text))) == (100 if "OFFSET" not in text else 0)
    first = execute(_numbers(8), "SELECT ?b WHERE { ?a ?p ?b } ORDER BY DESC(?b) LIMIT 1000000000", max_held_rows=10)
    assert [row["b"].lexical for row in first] == [str(i) for i in range(7, -1, -1)]  # under the cap: all of them


@pytest.mark.parametrize("aggregate, operator", [
    ("COUNT(DISTINCT ?b)", "COUNT(DISTINCT)"),
    ("SUM(DISTINCT ?b)", "SUM(DISTINCT)"),
    ("COUNT(DISTINCT *)", "COUNT(DISTINCT)"),
    ("GROUP_CONCAT(?b)", "GROUP_CONCAT"),
    ("GROUP_CONCAT(DISTINCT ?b)", "GROUP_CONCAT(DISTINCT)"),
])
def test_the_values_an_aggregate_keeps_are_capped(aggregate: str, operator: str) -> None:
    """One group, so GROUP BY's cap on groups never bites: DISTINCT's set of values and
    GROUP_CONCAT's parts grow with the input and count against max_held_rows."""
    text = f"SELECT ({aggregate} AS ?x) WHERE {{ ?a ?p ?b }}"
    with pytest.raises(IntermediateTooLargeError, match=re.escape(operator) + " holds more than 10 rows"):
        list(execute(_numbers(100), text, max_held_rows=10))
    assert len(list(execute(_numbers(100), text))) == 1
    assert len(list(execute(_numbers(10), text, max_held_rows=10))) == 1  # up to the cap: unchanged


def test_a_hash_join_table_is_capped() -> None:
    from query.engine import run_query
    from query.limits import Limits
    from query.parser import parse_query

    text = "SELECT * WHERE { ?a ?p ?b MINUS { ?c ?q ?d . ?e ?r ?f } }"
    with pytest.raises(IntermediateTooLargeError, match="MINUS"):
        list(run_query(_numbers(40), parse_query(text), limits=Limits(None, None, 1000)))


# ---------------------------------------------------------------------------- the command line


def test_cli_timeout_stops_the_query_in_one_line(store, capsys) -> None:
    started = time.monotonic()
    code, out, err = _cli(capsys, "query", "--timeout", "0.5", "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f }")
    assert code == 128 and out == "" and err.count("\n") == 1
    assert err.startswith("datae: error: the query ran past its time limit of 0.5 s and was stopped")
    assert time.monotonic() - started < 10


def test_cli_catastrophic_regex_is_stopped(store, capsys) -> None:
    code, _, err = _cli(capsys, "query", "--timeout", "0.5",
                        'SELECT * WHERE { ?s <urn:name> ?o FILTER REGEX(?o, "^(a|aa)+$") }')
    assert code == 128 and err.startswith("datae: error: the query ran past its time limit")


def test_cli_held_rows_cap_in_one_line(store, capsys) -> None:
    code, out, err = _cli(capsys, "query", "--max-held-rows", "100", "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b")
    assert code == 128 and err.count("\n") == 1
    assert err.startswith("datae: error: ORDER BY holds more than 100 rows")
    code, out, _ = _cli(capsys, "query", "--timeout", "30", "--format", "csv", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert code == 0 and out.split() == ["n", "201"]


def test_cli_refuses_a_nonpositive_limit(store, capsys) -> None:
    code, _, err = _cli(capsys, "query", "--timeout", "0", "ASK {}")
    assert code == 128 and "must be positive" in err


# ---------------------------------------------------------------------------- the server's query path


def test_the_servers_query_path_applies_every_limit(store) -> None:
    import fstore
    from datae.sparql_http import Operation, run_operation
    from query.limits import Limits

    from fstore import STORE_DIR

    repo = fstore.open(str(store / STORE_DIR))
    try:
        limits = Limits(timeout=0.5, max_rows=10_000, max_held_rows=100)
        regex = 'SELECT * WHERE { ?s <urn:name> ?o FILTER REGEX(?o, "^(a|aa)+$") }'
        with pytest.raises(QueryTimeoutError):
            run_operation(repo, Operation("query", regex), limits)
        with pytest.raises(IntermediateTooLargeError, match="ORDER BY"):
            run_operation(repo, Operation("query", "SELECT * WHERE { ?s ?p ?o } ORDER BY ?o"), limits)
        with pytest.raises(QueryTooComplexError):
            run_operation(repo, Operation("query", SHAPES["300 nested groups"]), limits)
        result = run_operation(repo, Operation("query", "SELECT * WHERE { ?s ?p ?o } LIMIT 5"), limits)
        assert len(list(result)) == 5
    finally:
        repo.close()


def test_a_hash_join_and_a_hash_optional_are_capped() -> None:
    data = [(None, IRI(f"urn:s{i}"), IRI(p), Literal(str(i))) for i in range(100) for p in ("urn:p", "urn:q")]
    cross = "SELECT * WHERE { { ?a <urn:p> ?b } UNION { ?a <urn:q> ?b } { ?c <urn:p> ?d } UNION { ?c <urn:q> ?d } }"
    optional = "SELECT * WHERE { ?a <urn:p> ?b OPTIONAL { { ?a <urn:q> ?c } UNION { ?x <urn:q> ?c } } }"
    for text in (cross, optional):
        assert "(hash)" in explain(MemorySource(data), text)
        with pytest.raises(IntermediateTooLargeError, match="a hash join's table holds more than 50 rows"):
            list(execute(MemorySource(data), text, max_held_rows=50))


def test_an_update_where_runs_under_the_limits_and_commits_nothing(store, capsys) -> None:
    slow = "DELETE { ?a <urn:p> ?b } WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f FILTER(STR(?f) = CONCAT(?b, ?d)) }"
    started = time.monotonic()
    code, out, err = _cli(capsys, "query", "--timeout", "0.5", slow)
    assert code == 128 and out == "" and err.startswith("datae: error: the query ran past its time limit of 0.5 s")
    assert time.monotonic() - started < 10
    code, out, err = _cli(capsys, "query", "--timeout", "0.5", "--max-held-rows", "100",
                          "DELETE WHERE { ?a <urn:p> ?b }")
    assert code == 128 and err.startswith("datae: error: the WHERE of DELETE WHERE holds more than 100 rows")
    code, out, _ = _cli(capsys, "query", "--format", "csv", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert out.split() == ["n", "201"]  # nothing was committed
    code, out, _ = _cli(capsys, "query", "--timeout", "30", "DELETE WHERE { <urn:s1> <urn:p> ?o }")
    assert code == 0 and out.rstrip().endswith("+0 -1")


# ---------------------------------------------------------------------------- every entry point


def _update_repo(tmp_path):
    import fstore

    repo = fstore.open(str(tmp_path / "repo"))
    with repo.transaction("main", message="data") as tx:
        fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "a")
    return repo


@pytest.mark.parametrize("text", SHAPES.values(), ids=list(SHAPES))
def test_explain_and_updates_refuse_long_chains_with_a_typed_error(text: str, tmp_path) -> None:
    """EXPLAIN, an update's WHERE and EXPLAIN of an update plan through query.engine.prepare
    too: a chain too long for the stack is a QueryTooComplexError there as well."""
    from query.parser import parse_update
    from query.source import as_source
    from query.update_exec import explain_update

    try:
        explain(_source(), text)
    except QueryTooComplexError:
        pass
    where = text.split("WHERE", 1)[1] if "WHERE" in text else text.removeprefix("ASK")
    update = "DELETE { <urn:a> <urn:b> <urn:c> } WHERE " + where
    repo = _update_repo(tmp_path)
    try:
        for run in (lambda request: explain_update(as_source(repo.at("main")), request, "main"),
                    lambda request: _apply(repo, request)):
            try:
                run(parse_update(update))
            except QueryTooComplexError:
                pass
    finally:
        repo.close()


def _apply(repo, request) -> None:
    from query.update_exec import apply_update

    with repo.transaction("main", message="update") as tx:
        apply_update(tx, request)


# ---------------------------------------------------------------------------- table graphs

BIG = "urn:datae:dataset:big"


@pytest.fixture
def tabled(tmp_path):
    """A commit with one quad, then one adding a 2,500-row table "big" and a 1-row "small"."""
    import fstore
    import fstore.tables as tables

    columns = [{"id": "k", "name": "id", "dataType": "integer", "primaryKeyIndex": 0},
               {"id": "v", "name": "v", "dataType": "text"}]
    repo = fstore.open(str(tmp_path / "repo"))
    with repo.transaction("main", message="before") as tx:
        fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "a")
    before = repo.at("main").commit_id
    with repo.transaction("main", message="tables") as tx:
        tables.create(tx, "big", columns).insert_many({"id": i, "v": f"v{i}"} for i in range(2500))
        tables.create(tx, "small", columns).insert({"id": 1, "v": "v1"})
    yield repo, before
    repo.close()


class _Tripwire:
    """A check that counts its calls and, once armed, stops the query as a deadline would."""

    def __init__(self, armed: bool) -> None:
        self.armed = armed
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.armed:
            raise QueryTimeoutError(1.0)


def test_a_table_scan_checks_on_rows_that_do_not_match(tabled) -> None:
    """A bound object is filtered inside the table's scan: no row comes out to be checked."""
    from query.algebra import Var
    from fstore.tables.sparql_graphs import TableGraphs

    repo, _ = tabled
    view = repo.at("main")
    nothing = (IRI(BIG), Var("s"), Var("p"), Literal("nope"))
    counting = _Tripwire(armed=False)
    assert list(TableGraphs(lambda: view, counting).match(nothing)) == []
    assert counting.calls == 2  # every 1,024 rows read
    with pytest.raises(QueryTimeoutError):
        list(TableGraphs(lambda: view, _Tripwire(armed=True)).match(nothing))


def test_a_query_deadline_reaches_a_table_scan(tabled, monkeypatch) -> None:
    """Through engine.prepare: GRAPH <table> { ?s ?p "nope" } checks the deadline as the
    table is read, so a big table checks more often than a small one (same plan, no rows)."""
    from query.limits import Deadline

    repo, before = tabled
    calls = []
    monkeypatch.setattr(Deadline, "check", lambda self: calls.append(1))

    def checks(table: str, changes: str = "") -> int:
        calls.clear()
        text = f'SELECT * {changes} WHERE {{ GRAPH <urn:datae:dataset:{table}> {{ ?s ?p "nope" }} }}'
        assert list(execute(repo.at("main"), text, timeout=60)) == []
        return len(calls)

    assert checks("big") >= checks("small") + 2
    changes = f"CHANGES FROM <{before}> TO <main>"  # a new table: read whole by graph_changes
    assert checks("big", changes) >= checks("small", changes) + 2


def test_changes_across_a_new_table_check_as_they_read(tabled) -> None:
    """graph_changes reads a table whole when it is on one side only (or the schema
    changed): its check runs as it reads."""
    from fstore.tables.sparql_graphs import graph_changes

    repo, before = tabled
    counting = _Tripwire(armed=False)
    added, removed = graph_changes(repo.at(before), repo.at("main"), IRI(BIG), counting)
    assert len(added) == 2500 * 3 and removed == [] and counting.calls >= 2
    with pytest.raises(QueryTimeoutError):
        graph_changes(repo.at(before), repo.at("main"), IRI(BIG), _Tripwire(armed=True))


def test_a_bound_subject_is_estimated_without_reading(tabled, monkeypatch) -> None:
    """A row IRI is a primary key: one row at most, so the planner's estimates (several
    per pattern, before any deadline) read nothing, even for a key type without a parser."""
    from fstore import Var  # TableGraph reads store patterns (TableGraphs.match takes the engine's)
    from fstore.tables.sparql_graphs import TableGraph, TableGraphs

    repo, _ = tabled
    graph = TableGraphs(lambda: repo.at("main")).graph(IRI(BIG))

    def no_reading(*args):
        raise AssertionError("estimate read rows")

    monkeypatch.setattr(TableGraph, "_row", no_reading)
    monkeypatch.setattr(TableGraph, "_scan", no_reading)
    row, v = IRI(BIG + "/id=7"), IRI(BIG + "#v")
    assert graph.estimate(row, Var("p"), Var("o"), 1000) == 3  # rdf:type, id, v
    assert graph.estimate(row, v, Var("o"), 1000) == 1
    assert graph.estimate(IRI("urn:elsewhere"), v, Var("o"), 1000) == 0
    assert graph.estimate(Var("s"), IRI(BIG + "#id"), Literal("7", "http://www.w3.org/2001/XMLSchema#integer"), 1000) == 1
