"""The REPL's pure parts (datae/repl_text.py) and its loop fed through prompt_toolkit's
pipe input: multi-line input, session prefixes, completion, pager, help."""

from __future__ import annotations

import io

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

import fstore
from fstore import IRI
from datae.repl import Repl, _Completer, build_prompt, loop, sample_iris
from datae.repl_text import (
    HELP, completion_candidates, declared, input_complete, needs_pager, scan, split_prologue,
    used_prefixes, with_session_prologue,
)

EX = "http://ex/"
RDF_TYPE = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="one") as tx:
        fstore.add(tx, None, IRI(EX + "a"), IRI(EX + "name"), "Alice")
        fstore.add(tx, None, IRI(EX + "b"), IRI(EX + "name"), "Bob")
        fstore.add(tx, None, IRI(EX + "a"), RDF_TYPE, IRI(EX + "Person"))
    repo.tag("v1")
    yield repo
    repo.close()


@pytest.fixture
def shell(repo):
    out = io.StringIO()
    return Repl(repo, None, Console(file=out, width=120, color_system=None), author="t"), out


def said(out: io.StringIO) -> str:
    text = out.getvalue()
    out.truncate(0)
    out.seek(0)
    return text


# -- when Enter runs the input ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "SELECT ?s WHERE { ?s ?p ?o };",
    "SELECT ?s WHERE { ?s ?p ?o } ;  ",
    "SELECT ?s WHERE { ?s ?p ?o }\n",
    "SELECT ?s WHERE { ?s ?p ?o }\n   ",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\nGROUP BY ?s;",
    ".at v1",
    "  .help",
    "",
    "SELECT * { ?s ?p '''a\nb''' };",
    "SELECT * { ?s ?p ?o } # a comment; still code\n",
    "SELECT * { ?s ?p ?o FILTER(?o < 3) };",
])
def test_complete(text: str) -> None:
    assert input_complete(text)


@pytest.mark.parametrize("text", [
    "SELECT ?s WHERE { ?s ?p ?o }",                 # GROUP BY may follow
    "SELECT * WHERE { ?s :a 1 ;",                   # a predicate-object list goes on
    "INSERT DATA { [ :p 1 ;",
    "SELECT (GROUP_CONCAT(?o ;",
    'SELECT * { ?s ?p "a;" ',
    "SELECT * { ?s ?p ?o } # ends here;",           # the ; is in a comment
    "SELECT * { ?s ?p '''a\n\n",                    # a blank line inside a long string
    "SELECT * { ?s ?p <urn:x;> ",
])
def test_incomplete(text: str) -> None:
    assert not input_complete(text)


def test_scan_masks_strings_comments_and_keeps_iris() -> None:
    s = scan('PREFIX a: <urn:a#> SELECT * { ?s ?p "PREFIX b: <urn:b>" } # PREFIX c: <urn:c>')
    assert "urn:a#" in s.masked and "urn:b" not in s.masked and "urn:c" not in s.masked
    assert s.depth == 0 and s.in_string is None and s.last == "}"
    assert len(s.masked) == len('PREFIX a: <urn:a#> SELECT * { ?s ?p "PREFIX b: <urn:b>" } # PREFIX c: <urn:c>')


# -- prologues ----------------------------------------------------------------------

def test_split_prologue() -> None:
    p = split_prologue("# hi\nPREFIX ex: <http://ex/>\nprefix : <urn:e:>\nBASE <http://b/>\nSELECT * { ?s ex:p :o }")
    assert p.prefixes == {"ex": "http://ex/", "": "urn:e:"} and p.base == "http://b/"
    assert p.rest.strip() == "SELECT * { ?s ex:p :o }"
    assert split_prologue("EXPLAIN PREFIX ex: <http://ex/> SELECT * {}").rest.strip() == "EXPLAIN SELECT * {}"
    assert split_prologue("PREFIX ex: <http://ex/>\n").rest.strip() == ""
    assert split_prologue("SELECT * {}").prefixes == {}


def test_declared_and_used() -> None:
    text = 'PREFIX a: <urn:a:> INSERT DATA { a:x a:y "PREFIX z: <urn:z>" } ; PREFIX b: <urn:b:> CLEAR GRAPH b:g'
    assert declared(text).prefixes == {"a": "urn:a:", "b": "urn:b:"}
    assert used_prefixes("SELECT ?x { ?x ex:p <urn:q:r> ; foaf:name 'e:f' } # g:h") == {"ex", "foaf"}
    assert used_prefixes("SELECT * { ?s a :C ; ex:a:b ?o }") == {"", "ex"}


def test_with_session_prologue() -> None:
    session = {"ex": "http://ex/", "foaf": "http://xmlns.com/foaf/0.1/"}
    assert with_session_prologue("SELECT * { ?s ex:p ?o }", session, None) == "PREFIX ex: <http://ex/>\nSELECT * { ?s ex:p ?o }"
    own = "PREFIX ex: <urn:other:> SELECT * { ?s ex:p ?o }"
    assert with_session_prologue(own, session, None) == own  # a redeclaration wins
    assert with_session_prologue("SELECT * { ?s ?p ?o }", session, None) == "SELECT * { ?s ?p ?o }"
    assert with_session_prologue("EXPLAIN SELECT * { ?s foaf:name ?o }", session, None) == (
        "EXPLAIN\nPREFIX foaf: <http://xmlns.com/foaf/0.1/>\n        SELECT * { ?s foaf:name ?o }")


@pytest.mark.parametrize("session, text, where", [
    ({}, "SELECT * {\n ?s ?p ?o .\n ?s ?p }", "line 3, column 8"),
    ({"ex": EX}, "SELECT * {\n ?s ex:p ?o .\n ?s ?p }", "line 3, column 8"),
    ({"ex": EX}, "SELECT * { ?s ex:p ?o . ?s ?p }", "line 1, column 31"),
    ({}, "EXPLAIN SELECT * { ?s ?p ?o . ?s ?p }", "line 1, column 37"),
    ({"ex": EX}, "EXPLAIN SELECT * { ?s ex:p ?o . ?s ?p }", "line 1, column 39"),
    ({"ex": EX}, "# a comment\nEXPLAIN SELECT * {\n ?s ex:p ?o .\n ?s ?p }", "line 4, column 8"),
    ({"ex": EX}, "# a comment\nEXPLAIN SELECT ?s ?s ?p ?o {", "line 2, column 29"),
])
def test_errors_point_into_the_input_as_typed(shell, session: dict, text: str, where: str) -> None:
    repl, out = shell
    repl.prefixes = session
    repl.base = "http://base/" if session else None
    repl.handle(text)
    assert where + ":" in said(out)


# -- completion ---------------------------------------------------------------------

def test_completion_candidates() -> None:
    iris = ["http://ex/name", "http://ex/Person", "http://other/x", "http://ex/with/slash"]
    assert completion_candidates("sel") == ("sel", ["SELECT"])
    assert completion_candidates("SELECT * { ?s ex:", prefixes={"ex": EX}, iris=iris) == ("ex:", ["ex:Person", "ex:name"])
    assert completion_candidates("SELECT * { ?s <http://o", iris=iris) == ("<http://o", ["<http://other/x>"])
    assert completion_candidates("SELECT * WHERE { ?s e", prefixes={"ex": EX})[1] == ["EXISTS", "EXPLAIN", "ex:"]
    assert completion_candidates(".pa") == (".pa", [".pager"])
    assert completion_candidates(".diff v", refs=["main", "v1"]) == ("v", ["v1"])
    assert completion_candidates("SELECT * AT m", refs=["main", "v1"]) == ("m", ["main"])
    assert completion_candidates("SELECT ") == ("", [])
    assert completion_candidates(".at ", refs=["main", "v1"]) == ("", ["main", "v1"])
    assert completion_candidates(".pager o") == ("o", ["off", "on"])
    assert completion_candidates(".format ")[1] == ["csv", "json", "jsonld", "nq", "nt", "rdf", "table", "trig", "tsv", "ttl"]


def test_completer_offers_store_and_result_iris(shell) -> None:
    repl, out = shell
    assert set(sample_iris(repl.repo, "main")) == {EX + "name", RDF_TYPE.value, EX + "Person"}
    completer = _Completer(repl)

    def offers(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), None)]

    assert offers("PREFIX ex: <http://ex/> SELECT * { ?s ex:") == ["ex:Person", "ex:name"]
    repl.handle("SELECT ?s WHERE { ?s ?p ?o };")
    assert "<http://ex/b>" in offers("SELECT * { <http://ex/")
    assert offers(".at v") == ["v1"]


# -- the session: prefixes, pager, help ---------------------------------------------

def test_prefixes_are_kept_for_the_session(shell) -> None:
    repl, out = shell
    repl.handle(f"PREFIX ex: <{EX}>\n")
    assert f"PREFIX ex: <{EX}>" in said(out)
    repl.handle("SELECT ?n WHERE { ex:a ex:name ?n };")
    text = said(out)
    assert "Alice" in text and "error" not in text
    repl.handle(f"PREFIX p: <{EX}> SELECT ?c WHERE {{ p:a a ?c }}")
    assert "p:Person" in said(out)  # the table shortens by the query's prefixes
    repl.handle("# only a comment\n")
    assert said(out) == ""
    repl.handle(".prefixes")
    assert said(out).splitlines() == [f"PREFIX ex: <{EX}>", f"PREFIX p: <{EX}>"]
    repl.handle('INSERT DATA { ex:c ex:name "Cy" };')
    assert "committed" in said(out)
    assert repl.repo.commit("main").message == 'PREFIX ex: <http://ex/>\nINSERT DATA { ex:c ex:name "Cy" }'
    repl.handle("SELECT ?n WHERE { ex:a ex:nope ?n };")
    said(out)
    repl.handle("PREFIX ex: <urn:broken> SELECT WHERE {};")  # a syntax error records nothing
    assert "error" in said(out) and repl.prefixes["ex"] == EX


def test_rows_and_graphs_keep_their_own_format(shell) -> None:
    repl, out = shell
    repl.handle(".format ttl")
    repl.handle(f"CONSTRUCT {{ ?s <{EX}name> ?n }} WHERE {{ ?s <{EX}name> ?n }};")
    text = said(out)
    assert f'<{EX}a> <{EX}name> "Alice" .' in text and "error" not in text
    repl.handle(f"SELECT ?n WHERE {{ ?s <{EX}name> ?n }};")
    assert "│" in said(out)  # SELECT is still a table
    repl.handle(".format csv")
    repl.handle(f"SELECT ?n WHERE {{ <{EX}a> <{EX}name> ?n }};")
    assert said(out).startswith("n\nAlice\n")
    repl.handle(f"DESCRIBE <{EX}a>;")
    assert f"<{EX}a>" in said(out)  # CONSTRUCT and DESCRIBE still Turtle
    repl.handle(".format xml")
    assert ".format table|json|csv|tsv (SELECT) or table|nq|trig|jsonld|nt|ttl|rdf (CONSTRUCT)" in said(out)


def test_pager_only_when_taller_than_the_terminal(repo, monkeypatch) -> None:
    assert needs_pager("x\n" * 10, 40, is_terminal=True) is False
    assert needs_pager("x\n" * 50, 40, is_terminal=True, enabled=False) is False
    paged: list[str] = []
    monkeypatch.setattr("pydoc.pager", paged.append)  # what rich's SystemPager calls
    out = io.StringIO()
    repl = Repl(repo, None, Console(file=out, width=120, height=5, force_terminal=True, color_system=None))
    repl.handle("SELECT ?s WHERE { ?s ?p ?o };")
    assert paged and "http://ex/a" in paged[0] and "http://ex/a" not in out.getvalue()
    repl.handle(".pager off")
    assert "pager off" in said(out)
    paged.clear()
    repl.handle("SELECT ?s WHERE { ?s ?p ?o };")
    assert not paged and "http://ex/a" in said(out)
    repl.handle(".pager maybe")
    assert ".pager on|off" in said(out)


def test_help_is_formatted(shell) -> None:
    repl, out = shell
    repl.handle(".help")
    text = said(out)
    assert ".prefixes" in text and "``" not in text and "| command" not in text  # rendered, not raw markup
    assert "`.at REF`" in HELP


# -- the loop, fed through a pipe -------------------------------------------------------

def test_loop_runs_multi_line_input(shell) -> None:
    repl, out = shell
    with create_pipe_input() as pipe:
        pipe.send_text("PREFIX ex: <http://ex/>\r\r")                       # only declares
        pipe.send_text("SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\r")  # balanced, yet goes on
        pipe.send_text("GROUP BY ?s\r")
        pipe.send_text("ORDER BY ?s;\r")
        pipe.send_text(".at v1\r")
        pipe.send_text("SELECT ?n WHERE {\r  ex:b ex:name ?n ;\r")          # a ; inside braces goes on
        pipe.send_text("}\r\r")
        pipe.send_text(".quit\r")
        assert loop(repl, build_prompt(repl, input=pipe, output=DummyOutput())) == 0
    text = said(out)
    assert f"PREFIX ex: <{EX}>" in text
    assert "ex:a" in text and "ex:b" in text and " 2 " in text  # grouped, shortened by the session's prefix
    assert "queries read v1" in text and "Bob" in text and "ms at v1" in text
    assert "error" not in text


def test_loop_leaves_on_end_of_input(shell) -> None:
    repl, out = shell
    with create_pipe_input() as pipe:
        pipe.send_text("SELECT * WHERE { ?s ?p ?o }")
        pipe.close()
        assert loop(repl, build_prompt(repl, input=pipe, output=DummyOutput())) == 0


def test_loop_chains_update_operations_over_lines(shell) -> None:
    repl, out = shell
    with create_pipe_input() as pipe:
        pipe.send_text('PREFIX ex: <http://ex/> DELETE DATA { ex:a ex:name "Alice" }\r')
        pipe.send_text('; INSERT DATA { ex:a ex:name "Alicia" };\r')
        pipe.close()
        assert loop(repl, build_prompt(repl, input=pipe, output=DummyOutput())) == 0
    assert "on main: +1 -1" in said(out)  # one commit


def test_the_repl_runs_statements_under_the_limits_and_load_dir_it_was_given(repo, tmp_path):
    """`datae repl --timeout/--max-held-rows/--load-dir` reach every statement's Session."""
    from query.limits import Limits

    data = tmp_path / "allowed" / "more.nt"
    data.parent.mkdir()
    data.write_text(f"<{EX}c> <{EX}name> \"Carol\" .\n")
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    bounded = Repl(repo, None, console, author="t", limits=Limits(timeout=30, max_rows=None, max_held_rows=1))
    bounded.handle(f"SELECT ?n WHERE {{ ?s <{EX}name> ?n }} ORDER BY ?n")
    assert "holds more than 1 rows" in said(out)  # the cap, as `datae query` has it
    plain = Repl(repo, None, console, author="t")
    plain.handle(f"LOAD <{data.as_uri()}>")
    assert "LOAD" in said(out) and not carol(repo)
    loading = Repl(repo, None, console, author="t", load_dir=str(data.parent))
    loading.handle(f"LOAD <{data.as_uri()}>")
    said(out)
    assert carol(repo)


def carol(repo) -> bool:
    return fstore.ask(repo.at("main"), None, IRI(EX + "c"), IRI(EX + "name"), "Carol")
