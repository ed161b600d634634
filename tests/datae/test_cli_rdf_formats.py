"""`datae import` and `datae export` in every RDF syntax, and their progress lines (issue 16):
the files are written and read back by pyoxigraph (the oracle), a triples format refuses a
store of several graphs before writing anything, a failed export leaves no file, and the
progress a terminal sees counts quads with a rate (nothing when stderr is not a terminal).
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys

import pyoxigraph as ox
import pytest

from datae.cli import main
from fstore.rdf import FORMAT_NAMES, FORMATS
from tests.cli_fixtures import checkout_env, on_a_terminal, run_cli

TRIG = b"""@prefix ex: <http://example.org/> .
ex:a ex:name "Anna"@en ; ex:age 42 ; ex:knows ex:b .
GRAPH ex:g { ex:b ex:name "Bob" ; ex:score 1.5 }"""


@pytest.fixture
def store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    (tmp_path / "seed.trig").write_bytes(TRIG)
    assert main(["import", "seed.trig", "-m", "seed"]) == 0
    capsys.readouterr()
    return tmp_path


def oxigraph_quads(data: bytes, name: str) -> set:
    return set(ox.parse(data, FORMATS[name]))


def seed(default_graph_only: bool) -> set:
    quads = set(ox.parse(TRIG, ox.RdfFormat.TRIG))
    return {q for q in quads if q.graph_name == ox.DefaultGraph()} if default_graph_only else quads


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_export_in_each_format_is_what_pyoxigraph_reads(store, capsys, name):
    one_graph = not FORMATS[name].supports_datasets
    code, stdout, stderr = run_cli(capsys, "export", "--format", name,
                                   *(["--graph", "http://example.org/g"] if one_graph else []))
    assert (code, stderr) == (0, "")
    expected = seed(False)
    if one_graph:
        expected = {ox.Quad(q.subject, q.predicate, q.object) for q in expected
                    if q.graph_name == ox.NamedNode("http://example.org/g")}
    assert oxigraph_quads(stdout.encode(), name) == expected
    assert stdout.endswith("\n")


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_import_of_each_format_written_by_pyoxigraph(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    quads = seed(not FORMATS[name].supports_datasets)
    data = ox.serialize(quads if FORMATS[name].supports_datasets else [q.triple for q in quads], format=FORMATS[name])
    path = tmp_path / f"data.{name}.gz"
    path.write_bytes(gzip.compress(data))
    code, stdout, _ = run_cli(capsys, "import", str(path), "-m", "m")
    assert code == 0 and f" {len(quads)} quads read, {len(quads)} added" in stdout
    code, stdout, _ = run_cli(capsys, "export", "--format", "nq")
    assert oxigraph_quads(stdout.encode(), "nq") == quads


def test_a_triples_format_of_a_store_with_graphs_is_refused_before_writing(store, capsys):
    code, stdout, stderr = run_cli(capsys, "export", "-o", "all.ttl")
    assert code == 128 and stdout == ""
    assert stderr == "datae: error: Turtle holds one graph, and main has 2: choose one with --graph, or write nq, trig, jsonld\n"
    assert not any(name.startswith((".all", "all")) for name in os.listdir(store))


def test_progress_counts_quads_with_a_rate_on_a_terminal(tmp_path):
    lines = "".join(f"<urn:s{n}> <urn:p> \"{n}\" <urn:g> .\n" for n in range(60_000))
    (tmp_path / "big.nq").write_text(lines)
    subprocess.run([sys.executable, "-m", "datae", "init"], cwd=tmp_path, env=checkout_env(), check=True,
                   capture_output=True)
    _, seen = on_a_terminal(["import", "big.nq", "-m", "big"], tmp_path)
    assert re.search(r"reading big\.nq .*\b[\d,]+ quads [\d,]+ quads/s", seen)
    assert re.search(r"staging big\.nq .*\b[\d,]+/60,000 quads", seen)
    assert "committing 60,000 quads" in seen
    stdout, seen = on_a_terminal(["export"], tmp_path)
    assert stdout.count(b"\n") == 60_000
    assert re.search(r"writing .*\b60,000/60,000 quads [\d,]+ quads/s", seen)
    _, seen = on_a_terminal(["export", "spark", "--out", "parquet"], tmp_path)
    assert re.search(r"exporting quads .*\b60,000 rows", seen)


def test_no_progress_when_stderr_is_not_a_terminal(store):
    (store / "more.nq").write_text("<urn:s> <urn:p> <urn:o> .\n")
    for args in (["import", "more.nq"], ["export", "-o", "out.nq"], ["export", "spark", "--out", "parquet"]):
        done = subprocess.run([sys.executable, "-m", "datae", *args], cwd=store, env=checkout_env(),
                              capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, "")
