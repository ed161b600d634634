"""The REPL's handling of updates, EXPLAIN and version clauses (its loop driven directly,
with the output captured; the pseudo-terminal test is tests/test_repl.py)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import fstore
from fstore import IRI
from datae.repl import Repl, input_complete

P = "PREFIX : <http://ex/> "


@pytest.fixture
def repl(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="one") as tx:
        fstore.add(tx, None, IRI("http://ex/a"), IRI("http://ex/name"), "Alice")
    repo.tag("v1")
    out = io.StringIO()
    shell = Repl(repo, None, Console(file=out, width=120, color_system=None), author="repl-user")
    yield shell, out
    repo.close()


def said(out: io.StringIO) -> str:
    text = out.getvalue()
    out.truncate(0)
    out.seek(0)
    return text


def test_updates_commit_with_the_repl_author(repl) -> None:
    shell, out = repl
    shell.handle(P + 'DELETE DATA { :a :name "Alice" } ; INSERT DATA { :a :name "Alicia" };')
    text = said(out)
    assert "committed" in text and "on main: +1 -1" in text and "ms at main" in text
    commit = shell.repo.commit("main")
    assert commit.author == "repl-user" and commit.message.startswith(P + "DELETE DATA")
    shell.handle(P + "SELECT ?n WHERE { :a :name ?n }")
    assert "Alicia" in said(out)


def test_explain_version_clauses_and_read_only_refs(repl) -> None:
    shell, out = repl
    shell.handle("EXPLAIN " + P + "SELECT ?n WHERE { ?s :name ?n }")
    assert "scan ?s <http://ex/name> ?n" in said(out)
    shell.handle(P + 'INSERT DATA { :b :name "Bob" }')
    said(out)
    shell.handle(P + "SELECT ?op ?n CHANGES FROM <v1> WHERE { ?s :name ?n }")
    text = said(out)
    assert '"+"' in text and "Bob" in text
    shell.handle(".at main~1")
    assert "queries read main~1" in said(out)
    shell.handle(P + "SELECT ?n WHERE { ?s :name ?n }")
    text = said(out)
    assert "Alice" in text and "Bob" not in text
    shell.handle(P + 'INSERT DATA { :c :name "Cy" }')
    assert "cannot update 'main~1'" in said(out)
    shell.handle(".at nope")
    assert "unknown ref 'nope'" in said(out)


def test_statements_without_braces_run_on_semicolon_or_empty_line() -> None:
    assert input_complete("CLEAR ALL;")
    assert input_complete("PREFIX : <http://ex/>\nDROP GRAPH :g\n")
    assert input_complete("EXPLAIN SELECT * WHERE { ?s ?p ?o };")
    assert not input_complete("INSERT DATA {")
    assert not input_complete("INSERT DATA {\n  :a :p 1 ;")
