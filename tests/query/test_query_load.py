"""LOAD <file:...> reads only files under the directory the caller allows (issue 16.4), and
no error of a LOAD quotes the file it names."""

from __future__ import annotations

import pytest

import fstore
from fstore import IRI, Var
from query import Session
from query.errors import LoadError, UnsupportedFeatureError
from query.session import run_text

SECRET = "hunter2-secret-token"


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "store")
    run_text(repo, "INSERT DATA { <urn:s> <urn:p> 1 }")
    yield repo
    repo.close()


@pytest.fixture
def dirs(tmp_path):
    """An allowed directory holding data.ttl, and a private file outside it."""
    allowed, private = tmp_path / "allowed", tmp_path / "private"
    allowed.mkdir()
    private.mkdir()
    (allowed / "data.ttl").write_text("<urn:x> <urn:v> 5 .\n")
    (allowed / "bad.ttl").write_text(f"<urn:x> <urn:v> 5 .\n{SECRET} is not turtle\n")
    (private / "secret.ttl").write_text(f"<urn:x> <urn:v> \"{SECRET}\" .\n{SECRET}\n")
    (allowed / "link.ttl").symlink_to(private / "secret.ttl")
    return allowed, private


def state(repo) -> tuple:
    head = repo.head("main")
    return head, repo.commit(head).digest, fstore.count(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))


def test_load_from_the_allowed_directory(repo, dirs):
    allowed, _ = dirs
    result = Session(repo, load_dir=allowed).run(f"LOAD <{(allowed / 'data.ttl').as_uri()}> INTO GRAPH <urn:g>")
    assert str(result).startswith("committed")
    assert fstore.ask(repo.at("main"), IRI("urn:g"), IRI("urn:x"), IRI("urn:v"), 5)


REFUSED = [
    # (load_dir is the allowed dir?, IRI template, a piece of the message)
    (False, "{allowed}/data.ttl", "loading files is off"),
    (True, "{private}/secret.ttl", "is outside the directory LOAD may read"),
    (True, "{allowed}/../private/secret.ttl", "is outside the directory LOAD may read"),
    (True, "{allowed}/link.ttl", "is outside the directory LOAD may read"),  # a symlink out
    (True, "/etc/passwd", "is outside the directory LOAD may read"),
    (True, "{allowed}/missing.ttl", "cannot read"),
    (True, "{allowed}/bad.ttl", "not valid RDF at line 2, column 1"),
]


@pytest.mark.parametrize("allow, template, reason", REFUSED)
def test_refused_loads_name_the_iri_not_the_content(repo, dirs, allow, template, reason):
    allowed, private = dirs
    path = template.format(allowed=allowed, private=private)
    iri = "file://" + path
    before = state(repo)
    session = Session(repo, load_dir=allowed if allow else None)
    with pytest.raises(LoadError) as caught:
        session.run(f"LOAD <{iri}>")
    message = str(caught.value)
    assert message.startswith(f"LOAD <{iri}>: ") and reason in message, message
    assert SECRET not in message and "root:" not in message
    assert caught.value.iri == iri
    assert state(repo) == before
    assert str(session.run(f"LOAD SILENT <{iri}>")) == "no change on main"


def test_the_line_and_column_of_a_bad_file(repo, dirs):
    allowed, _ = dirs
    with pytest.raises(LoadError) as caught:
        Session(repo, load_dir=allowed).run(f"LOAD <{(allowed / 'bad.ttl').as_uri()}>")
    assert (caught.value.line, caught.value.column) == (2, 1)


def test_other_hosts_and_schemes(repo, dirs):
    allowed, _ = dirs
    session = Session(repo, load_dir=allowed)
    with pytest.raises(LoadError, match="another host"):
        session.run(f"LOAD <file://elsewhere{allowed}/data.ttl>")
    with pytest.raises(UnsupportedFeatureError, match="file: IRIs only"):
        session.run("LOAD <http://example.org/data.ttl>")


def test_the_cli_refuses_load_unless_a_directory_is_allowed(tmp_path, dirs, capsys, monkeypatch):
    from datae.cli import main

    allowed, _ = dirs
    store = tmp_path / "project"
    assert main(["init", str(store)]) == 0
    iri = (allowed / "data.ttl").as_uri()
    assert main(["--repo", str(store), "query", f"LOAD <{iri}>"]) != 0
    assert "loading files is off" in capsys.readouterr().err
    assert main(["--repo", str(store), "query", "--load-dir", str(allowed), f"LOAD <{iri}>"]) == 0
    assert "committed" in capsys.readouterr().out
    monkeypatch.chdir(allowed)  # the current directory is not allowed by default either
    assert main(["--repo", str(store), "query", "LOAD <file:data.ttl>"]) != 0
