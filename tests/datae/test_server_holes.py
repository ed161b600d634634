"""Holes a hostile or careless client found in ``datae serve`` (issue 24), each over real
HTTP against a server process: query strings (and a token in one) in the access log, a
busy port reported without the port, HTTP writes stored with an empty author."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from urllib.parse import urlencode

import pytest

import fstore
from tests.server_fixtures import ROOT, Server, write_token

SECRET = "s3cret-in-the-url-0123456789"


def test_query_strings_are_not_in_the_access_log(tmp_path):
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    token_file, token = write_token(tmp_path)
    server = Server(store, "--token-file", str(token_file))
    try:
        query = urlencode({"query": "ASK { <urn:private-subject> ?p ?o }", "access_token": SECRET})
        assert server.request("GET", f"/sparql?{query}")[0] == 200
        update = urlencode({"update": "INSERT DATA { <urn:a> <urn:b> <urn:c> }", "token": SECRET})
        assert server.request("POST", f"/sparql?{update}", headers={"Authorization": f"Bearer {token}"})[0] == 200
        assert server.request("GET", f"/store?default&token={SECRET}")[0] == 200
        deadline = time.monotonic() + 10
        while server.log.read_text().count("?[redacted]") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        server.stop()
    log = server.log.read_text()
    assert log.count("?[redacted]") == 3, log
    assert SECRET not in log and "private-subject" not in log and token not in log
    assert '"GET /sparql?[redacted] HTTP/1.1" 200' in log


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_is_named_in_one_error_line(tmp_path, workers):
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "datae", "--repo", str(store), "serve", "--port", str(port),
                              "--workers", workers], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode != 0
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("datae: error: ") and f"127.0.0.1:{port}" in lines[0] and "in use" in lines[0]


def log_of(store) -> list:
    repo = fstore.open(str(store))
    try:
        return list(repo.log("main"))
    finally:
        repo.close()


@pytest.mark.parametrize("server_author", [None, "Server Admin <admin@example.org>"])
def test_an_http_write_without_author_is_never_stored_without_one(tmp_path, monkeypatch, server_author):
    if server_author is None:
        monkeypatch.delenv("DATAE_AUTHOR", raising=False)
    else:
        monkeypatch.setenv("DATAE_AUTHOR", server_author)
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    server = Server(store)
    expected = server_author or "anonymous <127.0.0.1>"
    try:
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        for n, author in enumerate(["", None, "   "]):
            fields = {"update": f"INSERT DATA {{ <urn:s> <urn:p> {n} }}", **({} if author is None else {"author": author})}
            assert server.request("POST", "/sparql", urlencode(fields).encode(), form)[0] == 200
        assert server.request("POST", "/sparql", b"INSERT DATA { <urn:s> <urn:p> 9 }",
                              {"Content-Type": "application/sparql-update", "X-Datae-Author": "Named <n@x>"})[0] == 200
        assert server.request("PUT", "/store?default", b"<urn:s> <urn:p> 10 .", {"Content-Type": "text/turtle"})[0] == 204
        authors = [commit.author for commit in reversed(log_of(store))]
        assert authors == [expected, expected, expected, "Named <n@x>", expected]
        # merge requests: opened, commented, merged without an author
        repo = fstore.open(str(store))
        repo.branch("topic", "main")
        with repo.transaction("topic", message="topic work", author="t") as tx:
            fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 11)
        repo.close()
        status, opened = server.json("POST", "/requests", {"source": "topic", "target": "main", "title": "t"})
        assert status == 201
        number = opened["number"]
        assert server.json("POST", f"/requests/{number}/comments", {"text": "fine"})[0] == 200
        status, merged = server.json("POST", f"/requests/{number}/merge", {})
        assert status == 200 and merged["commit"]
        status, shown = server.json("GET", f"/requests/{number}")
        assert shown["author"] == expected
        assert all(comment["author"] == expected for comment in shown["comments"])
        assert all(commit.author for commit in log_of(store))
    finally:
        server.stop()


def test_an_author_that_is_not_a_string_is_refused(tmp_path):
    store = tmp_path / "store"
    fstore.open(str(store)).close()
    server = Server(store)
    try:
        repo = fstore.open(str(store))
        with repo.transaction("main", message="m", author="a") as tx:
            fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
        repo.branch("topic", "main")
        repo.close()
        status, answer = server.json("POST", "/requests", {"source": "topic", "target": "main", "title": "t",
                                                           "author": 7})
        assert status == 400 and "author" in answer["error"]
        assert server.json("GET", "/requests")[1] == []
    finally:
        server.stop()
    assert os.path.exists(store)
