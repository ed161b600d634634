"""A query's memory budget (issue 24, item 6): the length of a value a function makes
(``max_value_length``) and the bytes of the values a query holds (``max_held_bytes``) are
capped, with a typed error, through execute, run_query/collect (the server's path), the
CLI and a real `datae serve` that keeps answering other queries meanwhile.

The attack this closes: an 808-byte query doubling a string 26 times with chained
``BIND(CONCAT(?x, ?x) AS ?y)`` made `datae serve` hold 2.1 GB and answer 200 after 9 s."""

from __future__ import annotations

import json
import threading
import urllib.parse

import pytest

from datae.cli import main
from query import IRI, Literal, MemorySource, execute, explain
from query.errors import IntermediateTooLargeError, MemoryLimitError, QueryError, ResultTooLargeError, ValueTooLongError
from query.limits import MAX_HELD_BYTES, MAX_VALUE_LENGTH, Limits, Memory, collect, row_size, value_size
from query.parser import parse_query
from query.engine import prepare, run_query
from query.source import as_source
from nstore.terms import XSD_INTEGER


def doubling(times: int, select: str = "*") -> str:
    """The attack: a one-character string doubled ``times`` times by a chain of BINDs."""
    binds = " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(times))
    return f'SELECT {select} WHERE {{ BIND("a" AS ?x0) {binds} }}'


def _rows(text: str, source: MemorySource | None = None, **limits) -> list:
    result = execute(source or MemorySource([]), text, **limits)
    return list(result) if result.form == "SELECT" else list(result.triples)


def _numbers(n: int, width: int = 1) -> MemorySource:
    return MemorySource([(None, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(str(i).zfill(width), XSD_INTEGER))
                         for i in range(n)])


# ---------------------------------------------------------------------------- the attack


def test_the_doubling_attack_is_refused_under_the_default_limits() -> None:
    text = doubling(26)
    assert len(text) < 900
    with pytest.raises(ValueTooLongError) as caught:
        collect(run_query(MemorySource([]), parse_query(text), limits=Limits()), Limits())
    error = caught.value
    assert (error.function, error.limit) == ("CONCAT", MAX_VALUE_LENGTH) and error.length == 2 * MAX_VALUE_LENGTH
    assert isinstance(error, ResultTooLargeError) and isinstance(error, QueryError)
    assert "max_value_length" in str(error) and "--max-value-length" in str(error)


def test_doubling_within_the_limit_runs_and_is_right() -> None:
    rows = _rows(doubling(10, "(STRLEN(?x10) AS ?n)"), max_value_length=1024, max_held_bytes=1 << 20)
    assert rows == [{"n": Literal("1024", XSD_INTEGER)}]
    with pytest.raises(ValueTooLongError, match="CONCAT would make a value of 2,048 characters, more than 1,024"):
        _rows(doubling(11), max_value_length=1024)


def test_many_long_binds_in_one_solution_are_held_bytes() -> None:
    """Each value under the length cap, but the solution holds them all: the budget counts."""
    long = "BIND(CONCAT(?x10, ?x10) AS ?y{i})"
    text = doubling(10)[:-1] + " ".join(long.format(i=i) for i in range(40)) + " }"
    assert len(_rows(text, max_value_length=1 << 20)) == 1  # no byte budget: it runs
    with pytest.raises(MemoryLimitError, match="BIND would hold more than 50,000 bytes") as caught:
        _rows(text, max_value_length=1 << 20, max_held_bytes=50_000)
    assert isinstance(caught.value, IntermediateTooLargeError) and caught.value.operator == "BIND"


# ---------------------------------------------------------------------------- every function that grows a value

GROWING = {
    "CONCAT": 'BIND(CONCAT(?s, ?s, ?s) AS ?y)',
    "REPLACE": 'BIND(REPLACE(?s, "a", "aaa") AS ?y)',
    "UCASE": 'BIND(UCASE(?t) AS ?y)',
    "LCASE": 'BIND(LCASE(?u) AS ?y)',
    "ENCODE_FOR_URI": 'BIND(ENCODE_FOR_URI(?e) AS ?y)',
    "GROUP_CONCAT": None,
}


def _growing_query(function: str) -> str:
    if function == "GROUP_CONCAT":
        return 'SELECT (GROUP_CONCAT(?o; SEPARATOR="--") AS ?y) WHERE { ?s ?p ?o }'
    return ('SELECT ?y WHERE { BIND("' + "a" * 40 + '" AS ?s) BIND("' + "ß" * 40 + '" AS ?t) BIND("' + "İ" * 40
            + '" AS ?u) BIND("' + "€" * 40 + '" AS ?e) ' + GROWING[function] + " }")


@pytest.mark.parametrize("function", sorted(GROWING))
def test_a_function_refuses_to_make_a_value_past_the_length_cap(function: str) -> None:
    source = _numbers(40, width=2)
    unbounded = _rows(_growing_query(function), source)
    length = len(unbounded[0]["y"].lexical)
    assert length > 40  # each of them grows its argument
    assert _rows(_growing_query(function), source, max_value_length=length) == unbounded  # at the cap: the same
    with pytest.raises(ValueTooLongError) as caught:
        _rows(_growing_query(function), source, max_value_length=length - 1)
    assert (caught.value.function, caught.value.length, caught.value.limit) == (function, length, length - 1)


def test_replace_stops_at_the_match_that_makes_it_too_long() -> None:
    """REPLACE counts what it removes too: shrinking a long string is not refused."""
    text = 'SELECT ?y WHERE { BIND("' + "ab" * 50 + '" AS ?s) BIND(REPLACE(?s, "b", "") AS ?y) }'
    assert _rows(text, max_value_length=100)[0]["y"].lexical == "a" * 50
    grow = text.replace('"b", ""', '"b", "bbbb"')
    with pytest.raises(ValueTooLongError, match="REPLACE"):
        _rows(grow, max_value_length=100)


# ---------------------------------------------------------------------------- the bytes operators hold

HELD = {
    "ORDER BY": "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b ?d",
    "ORDER BY (top k)": "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY ?b ?d LIMIT 500",
    "ORDER BY (an expression)": "SELECT ?a WHERE { ?a ?p ?b } ORDER BY (CONCAT(STR(?b), STR(?a), STR(?a), STR(?a)))",
    "DISTINCT": "SELECT DISTINCT ?a ?c WHERE { ?a ?p ?b . ?c ?q ?d }",
    "GROUP BY": "SELECT ?a ?c (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d } GROUP BY ?a ?c",
    "COUNT(DISTINCT)": "SELECT (COUNT(DISTINCT ?k) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d BIND(CONCAT(STR(?a), STR(?c)) AS ?k) }",
    "GROUP_CONCAT": "SELECT (GROUP_CONCAT(?k) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d BIND(CONCAT(STR(?a), STR(?c)) AS ?k) }",
    "a hash join's table": "SELECT * WHERE { { ?a ?p ?b } UNION { ?a ?q ?b } { ?c ?p ?d } UNION { ?c ?q ?d } }",
    "MINUS": "SELECT * WHERE { ?a ?p ?b MINUS { ?c ?q ?d FILTER(?c != <urn:none>) } }",
    "CONSTRUCT": "CONSTRUCT { ?a <urn:x> ?c } WHERE { ?a ?p ?b . ?c ?q ?d }",
    "DESCRIBE": "DESCRIBE ?a WHERE { ?a ?p ?b }",
}


@pytest.mark.parametrize("case", sorted(HELD))
def test_operators_that_hold_rows_count_their_bytes(case: str) -> None:
    """Under a byte budget too small for what the operator holds (and a row cap far above
    it): a MemoryLimitError naming the operator; with room, the unbounded answer."""
    source = _numbers(60)
    if case.startswith("a hash join"):
        assert "(hash)" in explain(source, HELD[case])
    unbounded = _rows(HELD[case], source)
    assert _rows(HELD[case], source, max_held_bytes=1 << 30) == unbounded
    with pytest.raises(MemoryLimitError) as caught:
        _rows(HELD[case], source, max_held_bytes=2_000, max_held_rows=10**9)
    assert caught.value.operator == case.split(" (")[0] or caught.value.operator in case
    assert caught.value.limit == 2_000


def test_a_top_k_sort_holds_only_its_heap() -> None:
    """LIMIT 3 over 3,600 rows: the heap's three rows, not the input, count."""
    text = "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d } ORDER BY DESC(?b) ?d LIMIT 3"
    source = _numbers(60)
    assert _rows(text, source, max_held_bytes=2_000) == _rows(text, source)  # the input: 1.1 MB


@pytest.mark.parametrize("inner", [
    "SELECT (COUNT(*) AS ?n) WHERE { { SELECT DISTINCT ?c WHERE { ?c ?q ?d } } }",
    "SELECT ?c WHERE { ?c ?q ?d } ORDER BY ?d",
    "SELECT ?c WHERE { ?c ?q ?d } ORDER BY ?d LIMIT 30",
    "SELECT ?c (COUNT(*) AS ?n) WHERE { ?c ?q ?d } GROUP BY ?c",
])
def test_an_operator_gives_its_bytes_back_when_done(inner: str) -> None:
    """An EXISTS runs its sub-select once per outer solution: each run holds its rows, all
    runs together far more than the budget; nothing is refused, the answer unchanged."""
    text = f"SELECT ?a WHERE {{ ?a ?p ?b FILTER EXISTS {{ {inner} }} }}"
    source = _numbers(40)
    one_run = 40 * row_size({"c": IRI("urn:s10"), "q": IRI("urn:p"), "d": Literal("10", XSD_INTEGER)})
    assert len(_rows(text, source, max_held_bytes=3 * one_run)) == 40
    with pytest.raises(MemoryLimitError):  # and the budget is not so large that it could not bite
        _rows(text, source, max_held_bytes=one_run // 4)


def test_the_result_collected_counts_against_the_budget() -> None:
    source = _numbers(200)
    text = "SELECT ?a ?b WHERE { ?a ?p ?b }"
    limits = Limits(timeout=None, max_rows=None, max_held_rows=None, max_held_bytes=5_000)
    with pytest.raises(MemoryLimitError, match="the result would hold more than 5,000 bytes"):
        collect(run_query(source, parse_query(text), limits=limits), limits)
    roomy = Limits(timeout=None, max_rows=None, max_held_rows=None)
    assert len(list(collect(run_query(source, parse_query(text), limits=roomy), roomy))) == 200


def test_sizes_and_the_budget() -> None:
    assert value_size(Literal("abc")) == 35 and value_size(Literal("xyz", XSD_INTEGER)) == 35 + len(XSD_INTEGER.value)
    assert row_size({"a": IRI("urn:x"), "b": Literal("")}) == value_size(IRI("urn:x")) + value_size(Literal(""))
    memory = Memory(100, None)
    memory.take(100, "x")
    with pytest.raises(MemoryLimitError):
        memory.check(1, "BIND")
    memory.give(100)
    memory.check(100, "BIND")
    memory.check_length(10**9, "CONCAT")  # no length cap
    assert Limits().memory() is not None and Limits(max_held_bytes=None, max_value_length=None).memory() is None
    assert (Limits().max_held_bytes, Limits().max_value_length) == (MAX_HELD_BYTES, MAX_VALUE_LENGTH)


def test_no_limits_by_default_in_execute() -> None:
    """execute() without limits runs unbounded, as before: 2^20 characters are made."""
    assert _rows(doubling(20, "(STRLEN(?x20) AS ?n)")) == [{"n": Literal(str(1 << 20), XSD_INTEGER)}]


def test_an_update_where_runs_under_the_memory_budget(tmp_path) -> None:
    import fstore
    from query.session import Session

    repo = fstore.open(tmp_path / "store" / ".datae")
    try:
        session = Session(repo, None, "tester", Limits(max_value_length=1000))
        text = 'INSERT { <urn:s> <urn:p> ?x11 } WHERE { ' + doubling(11).split("WHERE {", 1)[1]
        with pytest.raises(ValueTooLongError):
            session.run(text)
        assert session.run("ASK { ?s ?p ?o }").ask is False  # nothing committed
    finally:
        repo.close()


# ---------------------------------------------------------------------------- what the review found uncounted


def _long_values(groups: int, per_group: int, length: int) -> MemorySource:
    """``groups`` subjects, each with ``per_group`` literals of ``length`` characters,
    increasing within a group (a MAX changes its kept value at each one)."""
    return MemorySource([(None, IRI(f"urn:s{g}"), IRI("urn:p"), Literal(f"{v:04d}" + "x" * length))
                         for g in range(groups) for v in range(per_group)])


@pytest.mark.parametrize("aggregate", ["MIN", "MAX", "SAMPLE"])
def test_the_value_min_max_and_sample_keep_per_group_counts(aggregate: str) -> None:
    """Each group keeps one value: 200 groups of a 5,000-character value hold 1 MB, which
    a 200,000-byte budget refuses, naming the aggregate (the review's t4.py, smaller)."""
    source = _long_values(200, 1, 5_000)
    text = f"SELECT (COUNT(*) AS ?n) WHERE {{ {{ SELECT ?s ({aggregate}(?o) AS ?m) WHERE {{ ?s ?p ?o }} GROUP BY ?s }} }}"
    assert _rows(text, source, max_held_bytes=1 << 30) == _rows(text, source) == [{"n": Literal("200", XSD_INTEGER)}]
    with pytest.raises(MemoryLimitError) as caught:
        _rows(text, source, max_held_bytes=200_000, max_held_rows=10**9)
    assert (caught.value.operator, caught.value.limit) == (aggregate, 200_000)


@pytest.mark.parametrize("aggregate", ["MIN", "MAX"])
def test_min_and_max_count_the_value_they_keep_not_every_one_they_saw(aggregate: str) -> None:
    """One group, 200 values of 5,000 characters, each a new MAX (and the first the MIN):
    while the group's row goes out the query holds the one value kept, which fits in 50,000
    bytes; and it is given back when done."""
    source = _long_values(1, 200, 5_000)
    text = f"SELECT ({aggregate}(?o) AS ?m) WHERE {{ ?s ?p ?o }}"
    expected = _rows(text, source)
    assert _rows(text, source, max_held_bytes=50_000, max_held_rows=10**9) == expected
    assert len(expected[0]["m"].lexical) == 5_004
    memory = Memory(50_000, None)
    executor, plan = prepare(source, parse_query(text), memory=memory)
    solutions = executor.solutions(plan)
    assert next(solutions) == expected[0] and memory.held == value_size(expected[0]["m"])
    assert list(solutions) == [] and memory.held == 0


def test_a_literal_counts_its_datatype_and_language_tag() -> None:
    long_type, long_tag = Literal("1", "urn:" + "t" * 10_000), Literal("1", lang="en-" + "a" * 10_000)
    assert value_size(long_type) == value_size(Literal("1")) + len("urn:" + "t" * 10_000)
    assert value_size(long_tag) == value_size(Literal("1")) + len("en-" + "a" * 10_000)
    values = {"t": long_type, "l": long_tag, "i": IRI("urn:x"), "n": 7, "s": "abc", "b": Literal("x", lang="fr")}
    assert row_size(values) == sum(map(value_size, values.values()))  # the inlined copy agrees


@pytest.mark.parametrize("make", ['STRDT("1", IRI(CONCAT("urn:", ?x10, ?x10)))', 'STRLANG("1", CONCAT("en-", ?x10, ?x10))'])
def test_a_long_datatype_or_language_tag_is_held_bytes(make: str) -> None:
    """The review's t4.py: an ORDER BY of 60 rows each holding a literal "1" whose datatype
    IRI (or language tag) is 2,000 characters long; and 40 such BINDs in one solution."""
    sort = (f'SELECT ?k WHERE {{ {{ SELECT ?k ?d WHERE {{ ?k ?p ?o {doubling(10).split("WHERE {")[1][:-1]}'
            f' BIND({make} AS ?d) }} }} }} ORDER BY ?k')
    source = _numbers(60)
    assert len(_rows(sort, source, max_held_bytes=1 << 30)) == 60
    with pytest.raises(MemoryLimitError, match="ORDER BY"):
        _rows(sort, source, max_held_bytes=100_000, max_held_rows=10**9)
    binds = doubling(10)[:-1] + " ".join(f"BIND({make} AS ?y{i})" for i in range(40)) + " }"
    assert len(_rows(binds, max_held_bytes=1 << 30)) == 1
    with pytest.raises(MemoryLimitError, match="BIND"):
        _rows(binds, max_held_bytes=50_000)


def _hub(n: int) -> MemorySource:
    """``n`` nodes linked to a hub and ``n`` linked from it: ``(p/p)`` joins each of the
    first to each of the second, n² pairs."""
    p, hub = IRI("urn:p"), IRI("urn:hub")
    return MemorySource([(None, IRI(f"urn:in{i}"), p, hub) for i in range(n)]
                        + [(None, hub, p, IRI(f"urn:out{i}")) for i in range(n)])


PATHS = {
    "zero or one, both ends free": "SELECT (COUNT(*) AS ?n) WHERE { ?s (<urn:p>/<urn:p>)? ?o }",
    "zero or one of an alternative": "SELECT (COUNT(*) AS ?n) WHERE { ?s (<urn:p>|^<urn:p>)? ?o }",
    "negated property set": "SELECT (COUNT(*) AS ?n) WHERE { ?s !<urn:x> ?o }",
    "negated, inverse": "SELECT (COUNT(*) AS ?n) WHERE { ?s !^<urn:x> ?o }",
}


@pytest.mark.parametrize("case", sorted(PATHS))
def test_the_pairs_a_path_holds_are_counted(case: str) -> None:
    """The review's t6.py: a path's set of pairs (``?`` and ``!``) is held rows and bytes;
    the answer with room is pyoxigraph's."""
    import pyoxigraph as ox

    source = _hub(60)
    store = ox.Store()
    store.extend(ox.Quad(ox.NamedNode(s.value), ox.NamedNode(p.value), ox.NamedNode(o.value)) for _, s, p, o in source.quads)
    expected = int(next(iter(store.query(PATHS[case])))["n"].value)
    assert _rows(PATHS[case], source, max_held_rows=10**9, max_held_bytes=1 << 30) == [
        {"n": Literal(str(expected), XSD_INTEGER)}]
    rows = 1000 if case.startswith("zero or one, both") else 100  # 3,721 pairs; 361, 120
    with pytest.raises(IntermediateTooLargeError) as caught:
        _rows(PATHS[case], source, max_held_rows=rows)
    assert caught.value.operator == "a property path" and caught.value.limit == rows
    if case.startswith("zero or one, both"):  # 3,721 pairs
        with pytest.raises(MemoryLimitError, match="a property path would hold"):
            _rows(PATHS[case], source, max_held_rows=10**9, max_held_bytes=100_000)
    memory = Memory(1 << 30, None)  # and the bytes go back once the pairs are read
    executor, plan = prepare(source, parse_query(PATHS[case]), memory=memory)
    assert list(executor.solutions(plan)) == [{"n": Literal(str(expected), XSD_INTEGER)}] and memory.held == 0


def test_a_path_with_one_end_bound_keeps_its_pairs_uncounted() -> None:
    """At most the graph's nodes, like the sets * and + keep: 121 pairs under a cap of 100."""
    text = "SELECT (COUNT(*) AS ?n) WHERE { <urn:hub> (<urn:p>|^<urn:p>)? ?o }"
    assert _rows(text, _hub(60), max_held_rows=100, max_held_bytes=1_000) == [{"n": Literal("121", XSD_INTEGER)}]


def _history(path, commits: int):
    """A store whose first commit adds 30 ``urn:q`` quads (MINUS's side), each later one an
    ``urn:p`` quad (the review's t7.py, smaller)."""
    import fstore

    repo = fstore.open(path)
    with repo.transaction("main", message="base", author="tester") as tx:
        for i in range(30):
            fstore.add(tx, None, IRI(f"urn:a{i}"), IRI("urn:q"), "x" * 100)
    for c in range(commits):
        with repo.transaction("main", message=f"c{c}", author="tester") as tx:
            fstore.add(tx, None, IRI(f"urn:s{c}"), IRI("urn:p"), c)
    return repo


def test_each_versions_part_gives_its_tables_bytes_back(tmp_path) -> None:
    """VERSIONS runs the pattern once per commit, each run with its own MINUS table of 30
    rows: one run's table fits the budget, all 31 together would not."""
    from query.versioning import VersionContext

    repo = _history(tmp_path / "store", 30)
    try:
        view = repo.at("main")
        text = "SELECT (COUNT(*) AS ?n) VERSIONS WHERE { ?s <urn:p> ?o MINUS { ?a <urn:q> ?b } }"
        one_table = 30 * row_size({"a": IRI("urn:a10"), "b": "x" * 100})
        expected = _rows(text, view)
        assert expected == [{"n": Literal(str(sum(range(1, 31))), XSD_INTEGER)}]
        assert _rows(text, view, max_held_bytes=3 * one_table) == expected
        memory = Memory(3 * one_table, None)
        executor, plan = prepare(as_source(view), parse_query(text), VersionContext.of(view), memory=memory)
        assert list(executor.solutions(plan)) == expected and memory.held == 0
        with pytest.raises(MemoryLimitError, match="MINUS"):  # and the budget can bite
            _rows(text, view, max_held_bytes=one_table // 2)
    finally:
        repo.close()



@pytest.mark.parametrize("case", ["a hash join's table", "an adaptive step's table"])
def test_an_executor_released_gives_its_tables_bytes_back(case: str) -> None:
    """What an executor keeps for its whole query (hash tables) stays taken after its rows
    are read; release gives it back (what each VERSIONS or CHANGES part does)."""
    if case == "a hash join's table":
        source, text = _numbers(60), HELD[case]
        assert "(hash)" in explain(source, text)
    else:  # 600 lookups of ?o ?pp ?x: the step reads that pattern whole and probes a table
        p, q = IRI("urn:p"), IRI("urn:q")
        source = MemorySource([(None, IRI(f"urn:s{i}"), p, IRI(f"urn:o{i % 20}")) for i in range(600)]
                              + [(None, IRI(f"urn:o{j}"), q, IRI(f"urn:x{j}")) for j in range(20)])
        text = "SELECT * WHERE { ?s <urn:p> ?o . ?o ?pp ?x }"
    memory = Memory(1 << 30, None)
    executor, plan = prepare(source, parse_query(text), memory=memory)
    assert len(list(executor.solutions(plan))) == len(_rows(text, source))
    assert memory.held > 0
    executor.release()
    assert memory.held == 0


# ---------------------------------------------------------------------------- the CLI


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    (tmp_path / "data.nt").write_text("".join(f"<urn:s{i}> <urn:p> <urn:o{i}> .\n" for i in range(50)))
    assert main(["import", "data.nt", "-m", "data"]) == 0
    capsys.readouterr()
    return tmp_path


def test_cli_refuses_the_attack_in_one_line(store, capsys) -> None:
    code = main(["query", doubling(26)])
    out, err = capsys.readouterr()
    assert (code, out) == (128, "") and err.count("\n") == 1
    assert err.startswith("datae: error: CONCAT would make a value of 33,554,432 characters")


def test_cli_takes_both_memory_limits(store, capsys) -> None:
    code = main(["query", "--max-value-length", "100", doubling(7)])
    _, err = capsys.readouterr()
    assert code == 128 and err.startswith("datae: error: CONCAT would make a value of 128 characters, more than 100")
    code = main(["query", "--max-held-bytes", "1000", "SELECT * WHERE { ?s ?p ?o } ORDER BY ?o"])
    _, err = capsys.readouterr()
    assert code == 128 and err.startswith("datae: error: ORDER BY would hold more than 1,000 bytes") and err.count("\n") == 1
    code = main(["query", "--format", "csv", "--max-held-bytes", "100000", "SELECT * WHERE { ?s ?p ?o } ORDER BY ?o"])
    out, _ = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 51
    code = main(["query", "--max-held-bytes", "0", "ASK {}"])
    _, err = capsys.readouterr()
    assert code == 128 and "must be positive" in err


# ---------------------------------------------------------------------------- a real server


def test_the_server_refuses_the_attack_and_keeps_answering(tmp_path) -> None:
    """Over HTTP: the attack (select its value, as the report did) and, at the same time,
    a trivial query. The attack gets the typed error's status (503) and message; the
    trivial query is answered (no timing asserted)."""
    from tests.server_fixtures import Server

    import fstore

    fstore.open(tmp_path / "store" / ".datae").close()
    server = Server(tmp_path / "store" / ".datae")
    try:
        attack_path = "/sparql?" + urllib.parse.urlencode({"query": doubling(26)})
        trivial_path = "/sparql?" + urllib.parse.urlencode({"query": "ASK { }"})
        accept = {"Accept": "application/sparql-results+json"}
        answers: dict = {}

        def attack() -> None:
            answers["attack"] = server.request("GET", attack_path, headers=accept)

        attackers = [threading.Thread(target=attack) for _ in range(2)]
        for thread in attackers:
            thread.start()
        answers["trivial"] = server.request("GET", trivial_path, headers=accept)
        for thread in attackers:
            thread.join(120)
        status, _, body = answers["trivial"]
        assert status == 200 and json.loads(body)["boolean"] is True
        status, _, body = answers["attack"]
        assert status == 503 and b"CONCAT would make a value of" in body
    finally:
        server.stop()


def test_serve_takes_both_memory_limits(tmp_path) -> None:
    import fstore
    from tests.server_fixtures import Server

    fstore.open(tmp_path / "store" / ".datae").close()
    server = Server(tmp_path / "store" / ".datae", "--max-value-length", "100", "--max-held-bytes", "100000")
    try:
        accept = {"Accept": "application/sparql-results+json"}
        status, _, body = server.request("GET", "/sparql?" + urllib.parse.urlencode({"query": doubling(7)}), headers=accept)
        assert status == 503 and b"CONCAT would make a value of 128 characters, more than 100" in body
        status, _, body = server.request("GET", "/sparql?" + urllib.parse.urlencode({"query": doubling(6)}), headers=accept)
        assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 1
    finally:
        server.stop()
    code = main(["--repo", str(tmp_path / "store" / ".datae"), "serve", "--max-held-bytes", "-1"])
    assert code == 128
