"""fstore.open finds the store the datae command finds (issue 16): a project folder's
``.datae``, never a second, empty store beside it."""

from __future__ import annotations

import pytest

import fstore
from fstore import IRI, Var

S, P = IRI("urn:s"), IRI("urn:p")


def make_project(folder) -> str:
    """A folder as `datae init` leaves it, holding one quad in .datae; its head commit."""
    repo = fstore.open(folder / fstore.STORE_DIR)
    with repo.transaction("main", message="first") as tx:
        fstore.add(tx, None, S, P, "one")
    head = repo.head("main")
    repo.close()
    return head


def test_open_finds_the_project_store(tmp_path):
    head = make_project(tmp_path)
    repo = fstore.open(tmp_path)
    try:
        assert repo.path == str(tmp_path / ".datae") and repo.head("main") == head
        assert fstore.count(repo.at("main"), None, Var("s"), Var("p"), Var("o")) == 1
    finally:
        repo.close()
    assert not (tmp_path / "data.mdb").exists()  # nothing created beside .datae


def test_open_of_the_store_directory_itself(tmp_path):
    head = make_project(tmp_path)
    with_dir = fstore.open(tmp_path / ".datae")
    try:
        assert with_dir.head("main") == head
    finally:
        with_dir.close()


def test_an_empty_datae_folder_gets_the_store(tmp_path):
    (tmp_path / ".datae").mkdir()
    fstore.open(tmp_path).close()
    assert (tmp_path / ".datae" / "data.mdb").exists() and not (tmp_path / "data.mdb").exists()


def test_an_empty_folder_becomes_a_store(tmp_path):
    fstore.open(tmp_path).close()  # the API's fstore.open(tempfile.mkdtemp()) idiom
    assert (tmp_path / "data.mdb").exists() and not (tmp_path / ".datae").exists()
    fstore.open(tmp_path).close()  # and opens again as itself


def test_two_stores_in_one_folder_are_refused(tmp_path):
    make_project(tmp_path)
    fstore.Repository(tmp_path).close()  # a store beside .datae, as the old open made
    with pytest.raises(fstore.AmbiguousStoreError, match=r"two stores.*\.datae"):
        fstore.open(tmp_path)
    other = fstore.open(tmp_path / "other")
    try:  # a remote path is found the same way, and refused the same way
        other.remote_add("both", str(tmp_path))
        with pytest.raises(fstore.AmbiguousStoreError, match=r"two stores.*\.datae"):
            other.fetch("both")
    finally:
        other.close()


def test_the_cli_and_the_api_agree(tmp_path):
    from datae.cli import main

    head = make_project(tmp_path)
    assert main(["--repo", str(tmp_path), "log"]) == 0
    repo = fstore.open(tmp_path)
    try:
        assert repo.head("main") == head
    finally:
        repo.close()
