"""`datae log --graph`, `diff --stat` and `blame` across graphs (issue 16)."""

from __future__ import annotations

import re

import pytest

from datae.cli import main
from datae.commands.history import edges
from tests.cli_fixtures import initialised_workdir, run_cli  # noqa: F401 (a fixture)


run = run_cli


@pytest.fixture
def workdir(initialised_workdir):
    return initialised_workdir


def commit(capsys, name: str, graph: str | None = None) -> None:
    quad = f'<urn:{name}> <urn:p> "{name}"'
    text = f"INSERT DATA {{ GRAPH <{graph}> {{ {quad} }} }}" if graph else f"INSERT DATA {{ {quad} }}"
    assert run(capsys, "query", text, "-m", name)[0] == 0


def without_ids(text: str) -> list[str]:
    return [re.sub(r"\b[0-9a-f]{10}\b", "ID", line) for line in text.splitlines()]


def test_log_graph_draws_forks_and_merges(workdir, capsys):
    commit(capsys, "A")
    run(capsys, "branch", "dev")
    commit(capsys, "B")
    run(capsys, "switch", "dev")
    commit(capsys, "C")
    run(capsys, "branch", "dev2")
    commit(capsys, "D")
    run(capsys, "switch", "dev2")
    commit(capsys, "E")
    run(capsys, "switch", "main")
    commit(capsys, "F")
    assert run(capsys, "merge", "dev", "-m", "merge dev")[0] == 0
    assert run(capsys, "merge", "dev2", "-m", "merge dev2")[0] == 0
    commit(capsys, "G")
    code, out, _ = run(capsys, "log", "--graph", "--oneline")
    assert code == 0
    assert without_ids(out) == [
        "* ID G",
        "* ID merge dev2",
        "|\\",
        "* | ID merge dev",
        "|\\ \\",
        "* | | ID F",
        "| | * ID E",
        "| * | ID D",
        "| |/",
        "| * ID C",
        "* | ID B",
        "|/",
        "* ID A",
    ]
    # the long form keeps the lanes beside every line of a commit
    code, out, _ = run(capsys, "log", "--graph", "-n", "3")
    lines = out.splitlines()
    assert lines[0].startswith("* commit ") and lines[1] == "| Author: tester" and "|\\" in lines
    assert any(line.startswith("* | commit ") for line in lines)
    # without --graph: as before
    assert [line.split(" ", 1)[1] for line in run(capsys, "log", "--oneline", "-n", "2")[1].splitlines()] == \
        ["G", "merge dev2"]


def test_edges():
    assert edges([(0, 0), (1, 0)]) == "|/"
    assert edges([(0, 0), (0, 1), (1, 2)]) == "|\\ \\"
    assert edges([(0, 0), (1, 1), (2, 1)]) == "| |/"
    assert edges([]) == ""


def test_diff_stat(workdir, capsys):
    commit(capsys, "A")
    run(capsys, "tag", "v1")
    commit(capsys, "B", "urn:g1")
    commit(capsys, "C", "urn:g1")
    commit(capsys, "D", "urn:g2")
    assert run(capsys, "query", 'DELETE DATA { <urn:A> <urn:p> "A" }')[0] == 0
    code, out, _ = run(capsys, "diff", "v1", "--stat")
    assert code == 0 and out.splitlines() == [
        " (default graph) | +0 -1",
        " <urn:g1>        | +2 -0",
        " <urn:g2>        | +1 -0",
        " 3 graphs changed, 3 quads added, 1 removed",
    ]
    assert run(capsys, "diff", "HEAD", "--stat")[1] == " 0 graphs changed, 0 quads added, 0 removed\n"


def test_blame_reads_every_graph_by_default(workdir, capsys):
    commit(capsys, "A")  # <urn:A> <urn:p> "A" in the default graph
    assert run(capsys, "query", 'INSERT DATA { GRAPH <urn:g> { <urn:A> <urn:p> "A" } }', "-m", "copy to g")[0] == 0
    assert run(capsys, "query", 'DELETE DATA { <urn:A> <urn:p> "A" }', "-m", "drop default")[0] == 0
    code, out, _ = run(capsys, "blame", "urn:A", "urn:p", '"A"')
    assert code == 0
    assert without_ids(out) == [
        f"ID (tester {line_date(out)}) removed in the default graph: drop default",
        f"ID (tester {line_date(out)}) added in <urn:g>: copy to g",
    ]
    code, out, _ = run(capsys, "blame", "urn:A", "urn:p", '"A"', "--graph", "urn:g")
    assert out.endswith(") added: copy to g\n")
    assert run(capsys, "blame", "urn:A", "urn:p", '"B"')[1] == "no commit ever touched this quad\n"


def line_date(out: str) -> str:
    return re.search(r"\d{4}-\d\d-\d\d", out).group(0)
