"""What a new user meets in the first hour of the ``datae`` command (issue 24, item 5):
each test failed before its fix."""

from __future__ import annotations

import csv
import json
import re
import sqlite3

import pytest

import fstore
from datae.cli import main
from tests.cli_fixtures import initialised_workdir, run_cli  # noqa: F401 (a fixture)

run = run_cli


@pytest.fixture
def workdir(initialised_workdir):
    return initialised_workdir


def update(capsys, text: str, message: str) -> None:
    code, _, err = run(capsys, "query", text, "-m", message)
    assert code == 0, err


def test_status_of_an_empty_store_is_a_whole_sentence(workdir, capsys):
    code, out, _ = run(capsys, "status")
    assert code == 0 and out == "On branch main, no commits yet\n"
    update(capsys, 'INSERT DATA { <urn:s> <urn:p> "o" }', "one")
    assert re.fullmatch(r"On branch main at [0-9a-f]{10}\n", run(capsys, "status")[1])


def test_log_oneline_prints_one_line_a_commit(workdir, capsys):
    update(capsys, 'INSERT DATA { <urn:s> <urn:p> "a" }', "first line\n\nthe body, which\nruns on")
    update(capsys, 'INSERT DATA { <urn:s> <urn:p> "b" }', "second")
    code, out, _ = run(capsys, "log", "--oneline")
    assert code == 0
    assert [line.split(" ", 1)[1] for line in out.splitlines()] == ["second", "first line"]
    code, out, _ = run(capsys, "log", "--oneline", "--graph")
    assert [line.split(" ", 2)[2] for line in out.splitlines()] == ["second", "first line"]
    # the full log keeps the whole message, every line indented
    assert "    first line\n\n    the body, which\n    runs on\n" in run(capsys, "log")[1]


def test_merge_abort_names_the_head_the_branch_is_at(workdir, capsys):
    update(capsys, 'INSERT DATA { <urn:s> <urn:p> "base" }', "base")
    run(capsys, "branch", "dev")
    update(capsys, 'DELETE DATA { <urn:s> <urn:p> "base" } ; INSERT DATA { <urn:s> <urn:p> "main" }', "main")
    run(capsys, "switch", "dev")
    update(capsys, 'DELETE DATA { <urn:s> <urn:p> "base" } ; INSERT DATA { <urn:s> <urn:p> "dev" }', "dev")
    run(capsys, "switch", "main")
    assert run(capsys, "merge", "dev")[0] == 1
    # a commit on the branch while the merge is stopped moves it past the merge's "ours"
    update(capsys, 'INSERT DATA { <urn:x> <urn:p> "x" }', "meanwhile")
    head = run(capsys, "log", "--oneline", "-n", "1")[1].split()[0]
    code, out, _ = run(capsys, "merge", "--abort")
    assert code == 0 and out.startswith("Merge of dev into main aborted; main is at ")
    assert out.split("main is at ")[1].split()[0] == head
    assert run(capsys, "log", "--oneline", "-n", "1")[1].split()[0] == head


def table_history(workdir, capsys) -> tuple[str, str]:
    """Two commits of table ``t`` (integer keys, written out of order); their ids."""
    (workdir / "t.csv").write_text("id,name\n10,ten\n2,two\n1,one\n100,hundred\n")
    assert run(capsys, "table", "import", "t.csv", "--pk", "id", "-m", "t one")[0] == 0
    first = run(capsys, "log", "--oneline", "-n", "1")[1].split()[0]
    (workdir / "t.csv").write_text("id,name\n10,TEN\n2,two\n3,three\n100,hundred\n")
    assert run(capsys, "table", "import", "t.csv", "--replace", "-m", "t two")[0] == 0
    return first, run(capsys, "log", "--oneline", "-n", "1")[1].split()[0]


TABLE_CHANGES = ["table t: 1 inserted, 1 updated, 1 deleted",
                 '- {"id": 1, "name": "one"}',
                 '+ {"id": 3, "name": "three"}',
                 '~ {"id": 10, "name": ["ten", "TEN"]}']


def test_diff_show_and_table_diff_print_table_changes_alike(workdir, capsys):
    first, second = table_history(workdir, capsys)
    update(capsys, 'INSERT DATA { <urn:s> <urn:p> "o" }', "a quad")
    code, out, _ = run(capsys, "diff", first)
    assert code == 0 and out.splitlines() == ['+ <urn:s> <urn:p> "o" .', *TABLE_CHANGES]
    code, out, _ = run(capsys, "show", second)
    assert code == 0 and out.splitlines()[-4:] == TABLE_CHANGES
    code, out, _ = run(capsys, "table", "diff", first, second, "t")
    assert code == 0 and out.splitlines() == TABLE_CHANGES
    code, out, _ = run(capsys, "diff", first, "--stat")
    assert out.splitlines()[-2:] == [" table t | +1 -1 ~1", " 1 table changed, 1 row inserted, 1 deleted, 1 updated"]
    # rows a root commit inserted, in key order
    assert run(capsys, "show", first)[1].splitlines()[-5:] == [
        "table t: 4 inserted, 0 updated, 0 deleted", *(f'+ {json.dumps({"id": k, "name": n})}'
                                                      for k, n in ((1, "one"), (2, "two"), (10, "ten"), (100, "hundred")))]


def test_table_diff_takes_refs_as_diff_does(workdir, capsys):
    first, second = table_history(workdir, capsys)
    for argv in ([first, "t"], [first, second, "t"], ["t", first], ["t", first, second]):  # the old order still reads
        code, out, err = run(capsys, "table", "diff", *argv)
        assert code == 0 and out.splitlines() == TABLE_CHANGES, (argv, err)
    code, out, err = run(capsys, "table", "diff", first, second, "nope")
    assert code == 128 and out == "" and err == f"datae: error: no table named 'nope' at '{first}' or '{second}'\n"
    code, out, err = run(capsys, "table", "diff", "nope", first, second)  # the old order: the same error
    assert code == 128 and out == "" and err == f"datae: error: no table named 'nope' at '{first}' or '{second}'\n"
    code, out, err = run(capsys, "table", "diff", first, "nope-ref", "t")
    assert code == 128 and "unknown ref 'nope-ref'" in err
    run(capsys, "branch", "t", first)  # now "t" is a ref as well as a table: A B NAME still reads one way
    assert run(capsys, "table", "diff", first, second, "t")[1].splitlines() == TABLE_CHANGES
    code, out, err = run(capsys, "table", "diff", "t", "main", "t")  # from t to main, or from main to t?
    assert code == 128 and out == "" and "ambiguous" in err


def test_table_diff_refuses_an_ambiguous_reading(workdir, capsys):
    first, second = table_history(workdir, capsys)
    (workdir / "u.csv").write_text("id\n1\n")
    assert run(capsys, "table", "import", "u.csv", "--pk", "id", "-m", "u")[0] == 0
    run(capsys, "branch", "t", first)
    run(capsys, "branch", "u", first)
    # "u t": table t from u to main, or table u from t to main
    code, out, err = run(capsys, "table", "diff", "u", "t")
    assert code == 128 and out == "" and err.count("\n") == 1
    assert "ambiguous" in err and "table 't' from u to main" in err and "table 'u' from t to main" in err


def test_table_export_takes_the_name_as_every_table_command_does(workdir, capsys):
    table_history(workdir, capsys)
    (workdir / "u.csv").write_text("id\n1\n")
    assert run(capsys, "table", "import", "u.csv", "--pk", "id", "-m", "u")[0] == 0
    for argv in (["t", "a.csv"], ["t", "-o", "a.csv"], ["a.csv", "--name", "t"], ["--name", "t", "-o", "a.csv"]):
        code, out, err = run(capsys, "table", "export", *argv)
        assert code == 0 and out == "t: 4 rows written to a.csv\n", (argv, err)
        with open(workdir / "a.csv", newline="") as f:
            assert [row["id"] for row in csv.DictReader(f)] == ["2", "3", "10", "100"]  # key order
        (workdir / "a.csv").unlink()
    code, _, err = run(capsys, "table", "export", "t", "a.csv", "--name", "u")
    assert code == 128 and "give the table once" in err and not (workdir / "a.csv").exists()
    code, _, err = run(capsys, "table", "export", "a.csv")
    assert code == 128 and "name the table to export" in err
    assert run(capsys, "table", "export", "u", "u.sqlite")[0] == 0
    with sqlite3.connect(workdir / "u.sqlite") as con:
        assert con.execute('SELECT id FROM "u"').fetchall() == [(1,)]


def test_a_merge_made_by_pull_has_the_author(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DATAE_AUTHOR", "ann")
    a, b = tmp_path / "a", tmp_path / "b"
    assert run(capsys, "init", str(a))[0] == 0
    assert run(capsys, "--repo", str(a), "query", 'INSERT DATA { <urn:a> <urn:p> "1" }', "-m", "a")[0] == 0
    assert run(capsys, "clone", str(a), str(b))[0] == 0
    assert run(capsys, "--repo", str(a), "query", 'INSERT DATA { <urn:b> <urn:p> "2" }', "-m", "b")[0] == 0
    assert run(capsys, "--repo", str(b), "query", 'INSERT DATA { <urn:c> <urn:p> "3" }', "-m", "c")[0] == 0
    assert run(capsys, "--repo", str(b), "pull")[0] == 0
    log = run(capsys, "--repo", str(b), "log", "-n", "1")[1]
    assert "Merge: " in log and "Author: ann\n" in log
    assert run(capsys, "--repo", str(a), "query", 'INSERT DATA { <urn:d> <urn:p> "4" }', "-m", "d")[0] == 0
    assert run(capsys, "--repo", str(b), "query", 'INSERT DATA { <urn:e> <urn:p> "5" }', "-m", "e")[0] == 0
    assert run(capsys, "--repo", str(b), "pull", "--author", "bob")[0] == 0
    assert "Author: bob\n" in run(capsys, "--repo", str(b), "log", "-n", "1")[1]


def test_query_refuses_an_empty_or_twice_given_statement(workdir, capsys, monkeypatch):
    import io

    for argv, stdin, where in ((["query"], "", "stdin"), (["query", "-"], "  \n", "stdin"), (["query", " "], "", "QUERY")):
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code, out, err = run(capsys, *argv)
        assert code == 128 and out == "" and err == f"datae: error: no query in {where}: give one as QUERY, " \
                                                    "with -f FILE, or on stdin\n"
    (workdir / "q.rq").write_text('INSERT DATA { <urn:s> <urn:p> "from the file" }')
    code, out, err = run(capsys, "query", 'INSERT DATA { <urn:s> <urn:p> "given" }', "-f", "q.rq")
    assert code == 128 and "QUERY or -f FILE, not both" in err
    assert run(capsys, "log", "--oneline")[1] == ""  # nothing was committed


def test_repl_diff_and_log_print_as_the_command_does(tmp_path):
    import io

    from rich.console import Console

    import fstore.tables as tables
    from datae.repl import Repl
    from fstore import IRI

    with fstore.open(tmp_path / "repo") as repo:
        for graph in (None, IRI("urn:g")):  # one triple in two graphs: two changes
            with repo.transaction("main", message="quad\n\nwith a body") as tx:
                fstore.add(tx, graph, IRI("urn:s"), IRI("urn:p"), "o")
        with repo.transaction("main", message="table") as tx:
            tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}]).insert({"k": 1})
        first = repo.commit("main~2").id
        out = io.StringIO()
        shell = Repl(repo, None, Console(file=out, width=200, color_system=None), author="t")
        shell.handle(f".diff {first}")
        assert out.getvalue().splitlines() == ['+ <urn:s> <urn:p> "o" <urn:g> .',
                                               "table t: 1 inserted, 0 updated, 0 deleted", '+ {"k": 1}']
        out.truncate(0), out.seek(0)
        shell.handle(".log")
        assert [line.split(" ", 1)[1].rsplit(" (", 1)[0] for line in out.getvalue().splitlines()] == [
            "table", "quad", "quad"]


def test_table_show_of_a_missing_key_says_so(workdir, capsys):
    table_history(workdir, capsys)
    code, out, _ = run(capsys, "table", "show", "t", "--pk", "99")
    assert code == 0 and out == "(no row with key 99 in t: 4 rows)\n"
    assert run(capsys, "table", "show", "t", "--pk", "10")[1].splitlines()[2].split() == ["10", "TEN"]
