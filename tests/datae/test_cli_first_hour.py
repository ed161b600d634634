"""What a new user meets in the first hour of the ``datae`` command (issue 24, item 5):
each test failed before its fix."""

from __future__ import annotations

import csv
import json
import re
import sqlite3

import pytest

from datae.cli import main
from tests.cli_fixtures import run_cli

run = run_cli


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    return tmp_path


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
