"""What `datae` writes (issue 16): a table for a person at a terminal, TSV / N-Quads for a
program; a final newline on every result; compressed exports by suffix (and .csv.gz imports); an update's
commit message from -m; --version."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from importlib.metadata import version

import pytest

from tests.cli_fixtures import checkout_env
from datae.cli import main
from datae.commands.data import export_format, result_format
from tests.cli_fixtures import run_cli

P = "PREFIX : <http://ex/> "
NAMES = P + "SELECT ?who ?name WHERE { ?who :name ?name } ORDER BY ?name"


run = run_cli


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    assert main(["query", P + 'INSERT DATA { :ann :name "Anna" . :bob :name "Bob" }', "-m", "two people"]) == 0
    capsys.readouterr()
    return tmp_path


def as_terminal(monkeypatch) -> None:
    """Make stdout (pytest's capture) say it is a terminal."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)


def test_select_is_tsv_when_piped_and_a_table_at_a_terminal(store, capsys, monkeypatch):
    code, out, _ = run(capsys, "query", NAMES)
    assert code == 0 and out.splitlines() == ["?who\t?name", '<http://ex/ann>\t"Anna"', '<http://ex/bob>\t"Bob"']
    as_terminal(monkeypatch)
    code, out, _ = run(capsys, "query", NAMES)
    assert ":ann" in out and "2 rows" in out and "\t" not in out
    code, out, _ = run(capsys, "query", NAMES, "--format", "csv")  # --format wins at a terminal too
    assert out.splitlines()[0] == "who,name"


def test_a_real_pipe_gets_tsv(store):
    result = subprocess.run([sys.executable, "-m", "datae", "query", NAMES], capture_output=True, text=True,
                            cwd=store, env=checkout_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "?who\t?name"


def test_construct_is_nquads_when_piped(store, capsys):
    code, out, _ = run(capsys, "query", P + "CONSTRUCT { ?s :called ?n } WHERE { ?s :name ?n }")
    assert sorted(out.splitlines()) == ['<http://ex/ann> <http://ex/called> "Anna" .',
                                        '<http://ex/bob> <http://ex/called> "Bob" .']


@pytest.mark.parametrize("query, fmt", [
    (NAMES, "json"), (P + "ASK { :ann :name ?n }", "json"), (P + "ASK { :ann :name ?n }", None),
    (P + "ASK { :ann :name ?n }", "table"), (NAMES, "csv"), (NAMES, "tsv"), (NAMES, "table"),
    ("EXPLAIN " + NAMES, None), (P + 'INSERT DATA { :cy :name "Cy" }', "json"),
])
def test_every_result_ends_with_a_newline(store, capsys, query, fmt):
    code, out, _ = run(capsys, "query", query, *(["--format", fmt] if fmt else []))
    assert code == 0 and out.endswith("\n")
    if fmt == "json":
        json.loads(out)


def test_ask_prints_yes_or_no(store, capsys):
    assert run(capsys, "query", P + "ASK { :ann :name ?n }")[1] == "yes\n"
    assert run(capsys, "query", P + "ASK { :ann :knows ?n }")[1] == "no\n"


def test_a_format_the_result_cannot_take_is_an_error(store, capsys):
    code, out, err = run(capsys, "query", NAMES, "--format", "ttl")
    assert code == 128 and out == ""
    assert err == "datae: error: a SELECT result cannot be written as ttl: choose table, json, csv, tsv\n"
    code, _, err = run(capsys, "query", P + "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "--format", "csv")
    assert code == 128 and err == "datae: error: a CONSTRUCT result cannot be written as csv: choose table, nq, trig, jsonld, nt, ttl, rdf\n"


def test_result_format():
    assert result_format("SELECT", None, terminal=False) == "tsv"
    assert result_format("SELECT", None, terminal=True) == "table"
    assert result_format("DESCRIBE", None, terminal=False) == "nq"
    assert result_format("ASK", None, terminal=False) == "table"
    assert result_format("UPDATE", "json", terminal=False) == "json"
    assert result_format("EXPLAIN", "nq", terminal=False) == "nq"  # a plan is the same text in every format


def test_update_message(store, capsys):
    code, out, _ = run(capsys, "query", P + 'INSERT DATA { :cy :name "Cy" }', "-m", "add Cy")
    assert code == 0 and out.startswith("committed ")
    code, out, _ = run(capsys, "query", P + 'DELETE DATA { :cy :name "Cy" }')
    log = run(capsys, "log", "--oneline")[1].splitlines()
    assert [line.split(" ", 1)[1] for line in log] == [P + 'DELETE DATA { :cy :name "Cy" }', "add Cy", "two people"]


def test_export_compresses_by_suffix_and_import_reads_it_back(store, capsys):
    assert run(capsys, "export", "-o", "all.nq.gz")[0] == 0
    data = (store / "all.nq.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"  # gzip's magic
    assert sorted(gzip.decompress(data).decode().splitlines()) == ['<http://ex/ann> <http://ex/name> "Anna" .',
                                                                   '<http://ex/bob> <http://ex/name> "Bob" .']
    assert run(capsys, "init", "copy")[0] == 0
    code, out, _ = run(capsys, "--repo", "copy", "import", "all.nq.gz", "-m", "copy")
    assert code == 0 and "2 quads read, 2 added" in out
    assert run(capsys, "export", "-o", "all.nq")[0] == 0
    assert (store / "all.nq").read_bytes() == gzip.decompress(data)


def test_export_format_from_the_name(store, capsys):
    assert run(capsys, "export", "-o", "all.ttl.gz")[0] == 0
    text = gzip.decompress((store / "all.ttl.gz").read_bytes()).decode()
    assert "<http://ex/ann> <http://ex/name> \"Anna\" ." in text and "<http://ex/bob>" in text
    assert export_format("x.trig", None) == "trig" and export_format("x.nt.gz", None) == "nt"
    assert export_format("x.txt", None) == "nq" and export_format(None, None) == "nq"
    assert export_format("dir.v2/out", None) == "nq" and export_format("x.ttl", "nq") == "nq"
    # every name a syntax goes by, not only --format's six
    assert [export_format(f"x.{suffix}", None) for suffix in ("owl", "xml", "turtle", "nquads")] == \
        ["owl", "xml", "turtle", "nquads"]
    assert run(capsys, "export", "-o", "all.owl")[0] == 0
    assert (store / "all.owl").read_text().startswith("<?xml")


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"datae {version('datae')}\n"


def test_table_import_reads_gzip(store, capsys):
    (store / "towns.csv.gz").write_bytes(gzip.compress(b"code,name\nNZ-AUK,Auckland\nNZ-WGN,Wellington\n"))
    code, out, err = run(capsys, "table", "import", "towns.csv.gz", "--pk", "code")
    assert code == 0 and out.startswith("towns: 2 inserted, "), err
    assert run(capsys, "table", "list")[1] == "towns\n"
