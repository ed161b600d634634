"""`datae query` end to end: result formats, --at, version clauses, updates that commit,
EXPLAIN, queries from a file and from stdin, and exit code 128 with line and column for a
syntax error."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

from tests.cli_fixtures import run_cli

P = "PREFIX : <http://ex/> "


run = run_cli


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    """A store with two commits: v1 (Ann, Bob) and then Ann renamed to Anna."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert run(capsys, "init")[0] == 0
    (tmp_path / "people.ttl").write_text(
        '@prefix : <http://ex/> .\n:ann :name "Ann" ; :age 31 .\n:bob :name "Bob" ; :age 25 ; :knows :ann .\n'
    )
    assert run(capsys, "import", "people.ttl", "-m", "people")[0] == 0
    assert run(capsys, "tag", "v1")[0] == 0
    code, out, _ = run(capsys, "query", P + 'DELETE DATA { :ann :name "Ann" } ; INSERT DATA { :ann :name "Anna" }')
    assert code == 0 and out.startswith("committed ") and out.rstrip().endswith("on main: +1 -1")
    return tmp_path


NAMES = P + "SELECT ?who ?name WHERE { ?who :name ?name } ORDER BY ?name"


def test_formats(store, capsys) -> None:
    code, out, _ = run(capsys, "query", NAMES, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["head"]["vars"] == ["who", "name"]
    assert [b["name"]["value"] for b in doc["results"]["bindings"]] == ["Anna", "Bob"]
    code, out, _ = run(capsys, "query", NAMES, "--format", "csv")
    assert list(csv.reader(io.StringIO(out))) == [["who", "name"], ["http://ex/ann", "Anna"], ["http://ex/bob", "Bob"]]
    code, out, _ = run(capsys, "query", NAMES, "--format", "tsv")
    assert out.splitlines() == ["?who\t?name", '<http://ex/ann>\t"Anna"', '<http://ex/bob>\t"Bob"']
    code, out, _ = run(capsys, "query", NAMES, "--format", "table")  # IRIs shortened with the query's prefixes
    assert ":ann" in out and '"Anna"' in out and "2 rows" in out
    code, out, _ = run(capsys, "query", P + "CONSTRUCT { ?s :called ?n } WHERE { ?s :name ?n }", "--format", "nq")
    assert sorted(out.splitlines()) == ['<http://ex/ann> <http://ex/called> "Anna" .', '<http://ex/bob> <http://ex/called> "Bob" .']
    code, out, _ = run(capsys, "query", P + "ASK { :bob :knows :ann }", "--format", "json")
    assert json.loads(out)["boolean"] is True


def test_at_and_version_clauses(store, capsys) -> None:
    code, out, _ = run(capsys, "query", NAMES, "--at", "v1", "--format", "csv")
    assert out.splitlines()[1:] == ["http://ex/ann,Ann", "http://ex/bob,Bob"]
    code, out, _ = run(capsys, "query", P + 'SELECT ?name AT "main~1" WHERE { ?who :name ?name } ORDER BY ?name', "--format", "csv")
    assert out.splitlines()[1:] == ["Ann", "Bob"]
    code, out, _ = run(capsys, "query", P + "SELECT ?op ?name CHANGES FROM <v1> WHERE { ?who :name ?name } ORDER BY ?op", "--format", "csv")
    assert out.splitlines()[1:] == ["+,Anna", "-,Ann"]
    code, out, _ = run(capsys, "query", P + "SELECT ?name (COUNT(?commit) AS ?n) VERSIONS WHERE { :ann :name ?name } GROUP BY ?name ORDER BY ?name", "--format", "csv")
    assert out.splitlines()[1:] == ["Ann,1", "Anna,1"]
    code, _, err = run(capsys, "query", NAMES, "--at", "nope")
    assert code == 128 and err.startswith("datae: error: ") and "unknown ref 'nope'" in err


def test_updates_commit_with_message_and_author(store, capsys) -> None:
    text = P + "INSERT { ?b :friendOf ?a } WHERE { ?a :knows ?b }"
    code, out, _ = run(capsys, "query", text, "--author", "ann <ann@example.org>", "--format", "json")
    outcome = json.loads(out)
    assert code == 0 and outcome["branch"] == "main" and (outcome["added"], outcome["removed"]) == (1, 0)
    code, out, _ = run(capsys, "log", "-n", "1")
    assert outcome["commit"] in out and "Author: ann <ann@example.org>" in out and "INSERT { ?b :friendOf ?a }" in out
    code, out, _ = run(capsys, "query", text)
    assert out == "no change on main\n"
    # updates need a branch: a tag is read-only
    code, _, err = run(capsys, "query", P + "INSERT DATA { :x :y :z }", "--at", "v1")
    assert code == 128 and "cannot update 'v1'" in err
    run(capsys, "branch", "dev")
    code, out, _ = run(capsys, "query", P + "AT <dev> INSERT DATA { :x :y :z }")
    assert "on dev: +1 -0" in out
    code, out, _ = run(capsys, "query", P + "ASK { :x :y :z }", "--at", "dev", "--format", "json")
    assert json.loads(out)["boolean"] is True
    code, out, _ = run(capsys, "query", P + "ASK { :x :y :z }", "--format", "json")
    assert json.loads(out)["boolean"] is False


def test_explain(store, capsys) -> None:
    code, out, _ = run(capsys, "query", "EXPLAIN " + P + "SELECT ?n WHERE { ?p :knows ?q . ?q :name ?n }")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "SELECT query" and any("scan ?p <http://ex/knows> ?q" in line for line in lines)
    code, out, _ = run(capsys, "query", "explain " + P + "DELETE WHERE { ?s :age ?a }")
    assert out.startswith("UPDATE on branch main (one commit)")
    assert run(capsys, "log", "--oneline")[1].count("\n") == 2  # EXPLAIN committed nothing


def test_syntax_error_exit_code_and_position(store, capsys) -> None:
    code, out, err = run(capsys, "query", "SELECT ?x WHERE {\n  ?x :name ?n }")
    assert code == 128 and out == ""
    assert err.startswith("datae: error: line 2, column 6: unknown prefix ':'")
    code, out, err = run(capsys, "query", P + "SELECT ?x WHERE {\n  ?x :name ?n .\n  FILTER(?n > ) }")
    assert code == 128 and err.startswith("datae: error: line 3, column 15: unexpected ')'")
    code, _, err = run(capsys, "query", P + "INSERT DATA { ?s :p 1 }")
    assert code == 128 and "variables are not allowed in INSERT DATA" in err


def test_query_from_file_and_stdin(store, capsys, monkeypatch) -> None:
    (store / "q.rq").write_text(NAMES)
    code, out, _ = run(capsys, "query", "-f", "q.rq", "--format", "csv")
    assert out.splitlines()[1:] == ["http://ex/ann,Anna", "http://ex/bob,Bob"]
    # stdin in this process (the console script's own exit codes: test_cli.py)
    monkeypatch.setattr(sys, "stdin", io.StringIO(P + "SELECT ?a WHERE { :bob :age ?a }"))
    code, out, _ = run(capsys, "query", "--format", "tsv")
    assert code == 0 and out.splitlines() == ["?a", "25"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT * WHERE { ?s ?p }"))
    code, _, err = run(capsys, "query")
    assert code == 128 and err.startswith("datae: error: line 1, column 24: unexpected '}'")
