"""LIMIT and OFFSET of any size (issue 24, item 6): a LIMIT larger than any result is no
limit and an OFFSET past the results gives nothing, whatever the number (past 2^63, past
Python's 4,300-digit int conversion), at the top, over ORDER BY (a top-k sort) and in a
sub-select; through execute, `datae query` and the server. Never an untyped error (it was
a ValueError from islice, exit 70 / HTTP 500)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datae.cli import main
from query import IRI, Literal, MemorySource, execute, explain
from nstore.terms import XSD_INTEGER

ROWS = 7
SOURCE = MemorySource([(None, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(str(i), XSD_INTEGER)) for i in range(ROWS)])

SHAPES = {
    "plain": "SELECT ?o WHERE {{ ?s ?p ?o }} {slice}",
    "ordered": "SELECT ?o WHERE {{ ?s ?p ?o }} ORDER BY ?o {slice}",
    "descending": "SELECT ?o WHERE {{ ?s ?p ?o }} ORDER BY DESC(?o) {slice}",
    "distinct": "SELECT DISTINCT ?o WHERE {{ ?s ?p ?o }} {slice}",
    "sub-select": "SELECT ?o WHERE {{ {{ SELECT ?o WHERE {{ ?s ?p ?o }} ORDER BY ?o {slice} }} }}",
    "sub-select joined": "SELECT ?o ?s WHERE {{ ?s ?p ?o {{ SELECT ?o WHERE {{ ?x ?p ?o }} ORDER BY ?o {slice} }} }}",
    "grouped": "SELECT ?o (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o }} GROUP BY ?o ORDER BY ?o {slice}",
}

HUGE = ["99999999999999999999", "9223372036854775807", "9223372036854775808", str(2**64), str(10**30),
        "0" * 40 + "3", "9" * 5000]


def _expected(offset: int, limit: int | None, descending: bool = False) -> list[int]:
    """The naive model: the ordered values, sliced in exact integer arithmetic."""
    values = sorted(range(ROWS), reverse=descending)
    return values[offset:] if limit is None else values[offset:offset + limit]


def _slice(offset: int | str | None, limit: int | str | None) -> str:
    return (f"OFFSET {offset} " if offset is not None else "") + (f"LIMIT {limit}" if limit is not None else "")


def _check(shape: str, offset: int | str | None, limit: int | str | None) -> None:
    """The query's values against the model's, offset and limit written as given."""
    got = [int(row["o"].lexical) for row in execute(SOURCE, SHAPES[shape].format(slice=_slice(offset, limit)))]
    exact = [None if n is None else int(n) if len(str(n)) < 4000 else 10**5000 for n in (offset, limit)]
    model = _expected(exact[0] or 0, exact[1], descending=shape == "descending")
    if shape in ("plain", "distinct"):
        assert len(got) == len(model) and len(set(got)) == len(got) and set(got) <= set(range(ROWS))  # no order asked
    elif shape == "sub-select joined":
        assert sorted(got) == model  # the join's order is the plan's
    else:
        assert got == model


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_huge_limit_is_no_limit(shape: str, number: str) -> None:
    _check(shape, None, number)
    _check(shape, 2, number)


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_huge_offset_gives_nothing(shape: str, number: str) -> None:
    _check(shape, number, None)
    _check(shape, number, 2)
    _check(shape, number, number)


COUNTS = st.one_of(st.none(), st.integers(0, 10), st.integers(0, 10**30),
                   st.sampled_from([sys.maxsize - 1, sys.maxsize, sys.maxsize + 1, 2**64, 10**30]))


@settings(max_examples=200, deadline=None)
@given(offset=COUNTS, limit=COUNTS, shape=st.sampled_from(sorted(SHAPES)))
def test_any_limit_and_offset_are_served_as_the_model_slices(offset: int | None, limit: int | None, shape: str) -> None:
    _check(shape, offset, limit)


@pytest.mark.parametrize("number", ["99999999999999999999", "9" * 5000])
def test_explain_shows_a_huge_slice(number: str) -> None:
    plan = explain(SOURCE, f"SELECT * WHERE {{ ?s ?p ?o }} ORDER BY ?o OFFSET {number} LIMIT {number}")
    assert "Slice" in plan


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    (tmp_path / "data.nt").write_text("".join(f'<urn:s{i}> <urn:p> "{i}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
                                              for i in range(ROWS)))
    assert main(["import", "data.nt", "-m", "data"]) == 0
    capsys.readouterr()
    return tmp_path


@pytest.mark.parametrize("clause, rows", [("LIMIT 99999999999999999999", ROWS), ("OFFSET 9223372036854775807", 0),
                                          ("OFFSET 99999999999999999999 LIMIT 99999999999999999999", 0),
                                          ("OFFSET 5 LIMIT " + "9" * 5000, ROWS - 5)])
def test_cli_serves_a_huge_limit_or_offset(store, capsys, clause: str, rows: int) -> None:
    code = main(["query", "--format", "csv", f"SELECT ?o WHERE {{ ?s ?p ?o }} ORDER BY ?o {clause}"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == [str(i) for i in range(ROWS)][ROWS - rows:]


def test_the_servers_query_path_serves_a_huge_limit(store) -> None:
    import fstore
    from datae.sparql_http import Operation, run_operation
    from query.limits import Limits

    from fstore import STORE_DIR

    repo = fstore.open(str(store / STORE_DIR))
    try:
        for clause, rows in [("LIMIT 99999999999999999999", ROWS), ("OFFSET 9223372036854775808", 0)]:
            operation = Operation("query", f"SELECT ?o WHERE {{ ?s ?p ?o }} {clause}")
            assert len(list(run_operation(repo, operation, Limits()))) == rows
    finally:
        repo.close()


def test_an_integer_literal_too_long_to_read_is_a_sparql_error_not_a_crash(tmp_path):
    """An integer of more than 4,300 digits in a query (the store refuses to hold one) has
    no value: comparing it is a SPARQL error, so the FILTER drops the row."""
    import fstore
    from fstore import IRI
    from query import execute

    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m") as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 5)
    huge = "9" * 5000
    view = repo.at("main")
    assert list(execute(view, f"SELECT ?o WHERE {{ ?s <urn:p> ?o FILTER(?o < {huge}) }}")) == []
    assert len(list(execute(view, f"SELECT ?o WHERE {{ ?s <urn:p> ?o FILTER(!(?o < {huge}) || true) }}"))) == 1
    repo.close()
