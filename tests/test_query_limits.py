"""Bounded queries (issue 16, point 3): deep nesting and long chains are refused with a
typed error (never RecursionError), a time limit stops a running query (a backtracking
regular expression included), and operators that hold rows in memory are capped.
Through the API and through `datae query` (exit 128, one line)."""

from __future__ import annotations

import time

import pytest

from datae.cli import main
from query import IRI, Literal, MemorySource, execute
from query.errors import QueryError, QueryTooComplexError

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
    (tmp_path / "data.nt").write_text(body + '\n<urn:s> <urn:name> "' + "a" * 30 + 'b" .\n')
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
    assert err.startswith("fatal: the query is too complex: nesting depth 101 exceeds 100")
    assert err.count("\n") == 1
