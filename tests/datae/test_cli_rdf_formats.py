"""`datae import` and `datae export` in every RDF syntax, and their progress lines (issue 16):
the files are written and read back by pyoxigraph (the oracle), a triples format refuses a
store of several graphs before writing anything, a failed export leaves no file, and the
progress a terminal sees counts quads with a rate (nothing when stderr is not a terminal).
"""

from __future__ import annotations

import gzip
import os
import re

import pyoxigraph as ox
import pytest

from datae.cli import main
from datae.progress import counting_progress, table_progress, transfer_progress
from fstore.rdf import FORMAT_NAMES, FORMATS
from tests.cli_fixtures import FakeClock, on_a_terminal, run_cli, terminal_stderr

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


def test_progress_counts_quads_with_a_rate_on_a_terminal(tmp_path, monkeypatch, capsys):
    """In this process, stderr a terminal: 20,000 quads are three progress calls a phase
    (fstore.progress.EVERY apart), enough for a rate."""
    lines = "".join(f"<urn:s{n}> <urn:p> \"{n}\" <urn:g> .\n" for n in range(20_000))
    (tmp_path / "big.nq").write_text(lines)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    terminal = terminal_stderr(monkeypatch)
    assert main(["import", "big.nq", "-m", "big"]) == 0
    seen = terminal.seen()
    assert re.search(r"reading big\.nq .*\b[\d,]+ quads [\d,]+ quads/s", seen)
    assert "staging" not in seen  # streamed: each quad is staged as it is read
    assert "committing 20,000 quads" in seen
    terminal = terminal_stderr(monkeypatch)
    assert main(["import", "big.nq", "--replace", "-m", "again"]) == 0  # replace reads it all first
    assert re.search(r"staging big\.nq .*\b[\d,]+/20,000 quads", terminal.seen())
    capsys.readouterr()
    terminal = terminal_stderr(monkeypatch)
    assert main(["export"]) == 0
    assert capsys.readouterr().out.count("\n") == 20_000
    assert re.search(r"writing .*\b20,000/20,000 quads [\d,]+ quads/s", terminal.seen())
    terminal = terminal_stderr(monkeypatch)
    assert main(["export", "spark", "--out", "parquet"]) == 0
    assert re.search(r"exporting quads .*\b20,000 rows", terminal.seen())


def test_progress_on_a_real_terminal(tmp_path, monkeypatch):
    """``datae import`` in a process of its own, stderr a pseudo-terminal: it draws."""
    (tmp_path / "small.nq").write_text("".join(f"<urn:s{n}> <urn:p> \"{n}\" .\n" for n in range(100)))
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    _, seen = on_a_terminal(["import", "small.nq", "-m", "small"], tmp_path)
    assert "committing 100 quads" in seen


def test_a_phase_shows_its_count_and_rate_by_the_clock(monkeypatch):
    """The counting line's numbers, exact under a fake clock: each phase its own count and
    rate, the last count of a phase drawn before the next replaces it."""
    clock, terminal = FakeClock(), terminal_stderr(monkeypatch)
    with counting_progress("quads", clock=clock) as progress:
        progress.file("big.nq")
        for done in (8192, 16384, 24576):  # told two seconds apart
            clock.advance(2.0)
            progress.phase("read", done, None)
        for done in (8192, 24576):  # told half a second apart
            clock.advance(0.5)
            progress.phase("stage", done, 24576)
        progress.phase("commit", 24576, None)
    seen = terminal.seen()
    # A phase's clock starts at its first report: 16,384 more quads in four seconds, then
    # 16,384 in half a second (and the final count drawn as the next phase begins).
    assert re.search(r"reading big\.nq .* 24,576 quads 4,096 quads/s 0:00:04", seen), seen
    assert re.search(r"staging big\.nq .* 24,576/24,576 quads 32,768 quads/s 0:00:00", seen), seen
    assert "committing 24,576 quads" in seen


def test_table_and_transfer_lines_by_the_clock(monkeypatch):
    clock, terminal = FakeClock(), terminal_stderr(monkeypatch)
    with table_progress("exporting", clock=clock) as told:
        clock.advance(4.0)
        told("quads", 10_000)
        clock.advance(4.0)
        told("quads", 30_000)
    assert re.search(r"exporting quads .* 30,000 rows 5,000 rows/s 0:00:04", terminal.seen())  # from the first report
    clock, terminal = FakeClock(), terminal_stderr(monkeypatch)
    with transfer_progress("receiving", clock=clock) as told:
        clock.advance(2.0)
        told(3, 5_000)
    assert "receiving 3 commits, 5,000 records (2,500 records/s) 0:00:02" in terminal.seen()


def test_no_progress_without_a_terminal():
    for progress in (counting_progress("quads"), table_progress("exporting"), transfer_progress("receiving")):
        with progress as told:
            assert told is None  # capsys's stderr is not a terminal


def test_no_progress_when_stderr_is_not_a_terminal(store, capsys):
    (store / "more.nq").write_text("<urn:s> <urn:p> <urn:o> .\n")
    for args in (["import", "more.nq"], ["export", "-o", "out.nq"], ["export", "spark", "--out", "parquet"]):
        code, _, stderr = run_cli(capsys, *args)  # capsys's stderr, like a pipe's, is no terminal
        assert (code, stderr) == (0, "")
