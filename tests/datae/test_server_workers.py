"""``datae serve --workers N`` (issue 27.4): several processes serve one store. A write
answered by one worker is seen by the next request on another (each check below pairs
connections known to land on different workers); writes racing each other from two
workers take turns and lose nothing (SPARQL updates, pushes, a merge against a close of
one merge request); a dead worker is replaced, and the workers end with the server however
it ends; the address is the server's alone; connections keep Nagle's algorithm off."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from statistics import median
from urllib.parse import urlencode

import pytest

import fstore
from fstore.sync.protocol import NotFastForwardError, RefMovedError
from tests.fstore.test_sync import EVERYTHING, commit, state
from tests.server_fixtures import ROOT, Server, running, serve_with_token, wait_ended

ASK = "/sparql?" + urlencode({"query": "ASK { <urn:s> <urn:p> ?o }"})
JSON = "application/sparql-results+json"


@pytest.fixture
def served(tmp_path):
    """An empty store served with a token by two workers."""
    fstore.open(tmp_path / "origin").close()
    server = serve_with_token(tmp_path / "origin", tmp_path, workers=2)
    yield server
    server.stop()


def one_per_worker(server: Server) -> dict[int, http.client.HTTPConnection]:
    """A kept-alive connection to each worker, keyed by its process (the kernel spreads
    new connections over the workers: opened until each has one)."""
    found: dict[int, http.client.HTTPConnection] = {}
    extra = []
    for _ in range(200):
        connection = http.client.HTTPConnection(server.host, server.port, timeout=60)
        connection.request("GET", "/")
        connection.getresponse().read()
        pid = server.serving_pid(connection)
        if pid is not None and pid not in found:
            found[pid] = connection
            if len(found) == server.workers:
                break
        else:
            extra.append(connection)
    for connection in extra:
        connection.close()
    assert len(found) == server.workers, found
    return found


def call(connection: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None,
         headers: dict | None = None) -> tuple[int, bytes]:
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response.status, response.read()


def test_a_write_is_seen_by_the_next_request_on_the_other_worker(tmp_path, served):
    """Read-your-writes across processes: each write goes through one worker and the read
    right after it through the other, for updates, graph store writes and merge requests,
    in both directions. No worker may answer from what it read before."""
    first, second = one_per_worker(served).values()
    auth = {"Authorization": f"Bearer {served.token}"}
    with fstore.open(tmp_path / "origin") as repo:  # a branch for the requests, made beside the server
        repo.branch("topic", None)
        with repo.transaction("topic", message="topic", author="t") as tx:
            fstore.add(tx, None, fstore.IRI("urn:t"), fstore.IRI("urn:p"), 0)
    for n in range(30):
        writer, reader = (first, second) if n % 2 == 0 else (second, first)
        update = f"INSERT DATA {{ <urn:s> <urn:p> {n} }}".encode()
        status, answer = call(writer, "POST", "/sparql", update, {**auth, "Content-Type": "application/sparql-update"})
        assert status == 200, answer
        commit_id = json.loads(answer)["commit"]
        status, answer = call(reader, "GET", "/sparql?" + urlencode({"query": f"ASK {{ <urn:s> <urn:p> {n} }}"}),
                              headers={"Accept": JSON})
        assert status == 200 and json.loads(answer)["boolean"] is True, (n, answer)
        status, answer = call(reader, "GET", "/sync/v1/refs")
        assert json.loads(answer)["branches"]["main"] == commit_id, n
        graph = urlencode({"graph": f"urn:g{n}"})
        status, answer = call(writer, "PUT", f"/store?{graph}", f'<urn:s> <urn:p> "{n}" .'.encode(),
                              {**auth, "Content-Type": "application/n-triples"})
        assert status == 201, answer
        status, answer = call(reader, "GET", f"/store?{graph}", headers={"Accept": "application/n-triples"})
        assert status == 200 and answer.strip() == f'<urn:s> <urn:p> "{n}" .'.encode(), answer
        status, answer = call(writer, "POST", "/requests", json.dumps({"source": "topic", "title": f"t{n}"}).encode(),
                              {**auth, "Content-Type": "application/json"})
        assert status == 201, answer
        number = json.loads(answer)["number"]
        assert json.loads(call(reader, "GET", f"/requests/{number}")[1])["state"] == "open"
        status, _ = call(reader, "POST", f"/requests/{number}/comments", json.dumps({"text": f"c{n}"}).encode(),
                         {**auth, "Content-Type": "application/json"})
        assert status == 200
        shown = json.loads(call(writer, "GET", f"/requests/{number}")[1])
        assert [c["text"] for c in shown["comments"]] == [f"c{n}"]
        assert call(writer, "POST", f"/requests/{number}/close", b"{}", {**auth, "Content-Type": "application/json"})[0] == 200
        assert json.loads(call(reader, "GET", f"/requests/{number}")[1])["state"] == "closed"
    for connection in (first, second):
        connection.close()


def test_updates_racing_from_two_workers_lose_nothing(tmp_path, served):
    """Two clients, each on its own worker, commit 25 updates each at once: every one is a
    commit on main, on top of the one before (none lost, none forked), every quad there."""
    connections = list(one_per_worker(served).values())
    errors: list = []
    start = threading.Barrier(2)

    def updates(connection: http.client.HTTPConnection, side: int) -> None:
        start.wait()
        for n in range(25):
            status, answer = call(connection, "POST", "/sparql",
                                  f"INSERT DATA {{ <urn:w{side}> <urn:p> {n} }}".encode(),
                                  {"Authorization": f"Bearer {served.token}", "Content-Type": "application/sparql-update"})
            if status != 200:
                errors.append(answer)

    threads = [threading.Thread(target=updates, args=(connection, side)) for side, connection in enumerate(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with fstore.open(tmp_path / "origin") as repo:
        history = list(repo.log("main"))
        assert len(history) == 50 and all(len(c.parents) == 1 for c in history[:-1])
        assert len(set(fstore.quads(repo.at("main"), *EVERYTHING))) == 50 and repo.verify() == []


def test_pushes_racing_to_two_workers_take_turns(tmp_path, served):
    """Two clones push a commit on the same head at once (each push's connections land on
    either worker): one moves main, the other is refused (the ref moved, or no longer a
    fast-forward) and lands after a pull. Over ten rounds the server ends with every
    commit and a clean verify."""
    with fstore.open(tmp_path / "origin") as origin:
        commit(origin, 1000)
    clones = [fstore.clone(served.url, tmp_path / name / ".datae") for name in ("a", "b")]
    for n in range(10):
        for side, repo in enumerate(clones):
            commit(repo, 100 * side + n)
        outcome: dict[int, object] = {}
        start = threading.Barrier(2)

        def push(side: int) -> None:
            start.wait()
            try:
                outcome[side] = clones[side].push(token=served.token)
            except (RefMovedError, NotFastForwardError) as exc:
                outcome[side] = exc

        threads = [threading.Thread(target=push, args=(side,)) for side in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        refused = [side for side, result in outcome.items() if isinstance(result, Exception)]
        assert len(outcome) == 2 and len(refused) <= 1, outcome
        for side in refused:
            clones[side].pull(token=served.token, policy="theirs")
            clones[side].push(token=served.token)
        for repo in clones:
            repo.pull(token=served.token, policy="theirs")
        assert clones[0].head("main") == clones[1].head("main")
    check = fstore.clone(served.url, tmp_path / "check" / ".datae", local=False)
    assert state(check, "main") == state(clones[0], "main") and check.verify() == []
    assert len(set(fstore.quads(check.at("main"), *EVERYTHING))) > 0
    for repo in (*clones, check):
        repo.close()


def test_a_merge_and_a_close_of_one_request_racing_on_two_workers(tmp_path, served):
    """A merge and a close of the same request at once, each on its own worker, twelve
    times: one is answered 200, the other 409, and the store says the same (merged: main
    holds the merge; closed: main did not move)."""
    on = list(one_per_worker(served).values())
    json_auth = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}
    path = tmp_path / "origin"
    with fstore.open(path) as repo:
        with repo.transaction("main", message="base", author="t") as tx:
            fstore.add(tx, None, fstore.IRI("urn:base"), fstore.IRI("urn:p"), 0)
    for n in range(12):
        with fstore.open(path) as repo:
            repo.branch(f"f{n}", "main")
            with repo.transaction(f"f{n}", message=f"f{n}", author="t") as tx:
                fstore.add(tx, None, fstore.IRI(f"urn:f{n}"), fstore.IRI("urn:p"), n)
            before, proposed = repo.head("main"), repo.head(f"f{n}")
        status, answer = call(on[0], "POST", "/requests", json.dumps({"source": f"f{n}", "author": "ann"}).encode(),
                              json_auth)
        number = json.loads(answer)["number"]
        answers: dict[str, int] = {}
        start = threading.Barrier(2)

        def act(action: str, connection: http.client.HTTPConnection) -> None:
            start.wait()
            answers[action] = call(connection, "POST", f"/requests/{number}/{action}", b'{"author": "bob"}', json_auth)[0]

        # the merge and the close swap workers each round
        threads = [threading.Thread(target=act, args=(action, on[(n + side) % 2]))
                   for side, action in enumerate(("merge", "close"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(answers.values()) == [200, 409], answers
        with fstore.open(path) as repo:
            record = repo.request(number)
            if answers["merge"] == 200:
                assert record["state"] == "merged" and record["merge_commit"] == repo.head("main")
                assert fstore.ask(repo.at("main"), None, fstore.IRI(f"urn:f{n}"), fstore.IRI("urn:p"), n)
            else:
                assert record["state"] == "closed" and repo.head("main") == before != proposed


def test_a_dead_worker_is_replaced_and_said_so(tmp_path, served):
    """A worker killed outright: the server says so in its log and starts another; it
    answers all along from the one left, then from both. (Only connections that were
    waiting in the dead worker's queue are lost: see docs/server.md.)"""
    workers = served.worker_pids()
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    wait_ended(workers[:1])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert served.request("GET", ASK, headers={"Accept": JSON})[0] == 200
        now = served.worker_pids()
        if len(now) == 2 and workers[0] not in now and "Application startup complete" in served.log.read_text()[-400:]:
            break
        time.sleep(0.1)
    log = served.log.read_text()
    assert f"[{workers[0]}] died (killed by SIGKILL); starting another" in log, log
    assert len(served.worker_pids()) == 2 and workers[1] in served.worker_pids()
    connections = one_per_worker(served)
    assert set(connections) == set(served.worker_pids())
    for connection in connections.values():
        assert call(connection, "GET", ASK, headers={"Accept": JSON})[0] == 200
        connection.close()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_the_workers_end_with_the_server(tmp_path, how):
    """SIGTERM or SIGINT to the server stops every worker and it exits 0; SIGKILL (no
    time to stop them) ends them too. Either way the port is free again."""
    fstore.open(tmp_path / "store").close()
    server = Server(tmp_path / "store", workers=2)
    try:
        assert server.request("GET", "/")[0] == 200
        workers = server.worker_pids()
        assert len(workers) == 2 and all(map(running, workers))
        server.process.send_signal(how)
        code = server.process.wait(30)
        wait_ended(workers)
        assert code == (-signal.SIGKILL if how == signal.SIGKILL else 0)
        with socket.create_server(("127.0.0.1", server.port)):  # nothing holds the address
            pass
    finally:
        server.stop()


def test_a_served_address_is_refused_to_a_second_server(tmp_path):
    """The workers share their address (SO_REUSEPORT): a second server with workers must
    not join them there, splitting the connections between two stores."""
    for name in ("one", "two"):
        fstore.open(tmp_path / name).close()
    first = Server(tmp_path / "one", workers=2)
    try:
        for workers in ("2", "1"):
            run = subprocess.run([sys.executable, "-m", "datae", "--repo", str(tmp_path / "two"), "serve", "--port",
                                  str(first.port), "--workers", workers], capture_output=True, text=True, cwd=ROOT,
                                 timeout=60)
            assert run.returncode != 0 and run.stdout == "" and "already in use" in run.stderr, run
    finally:
        first.stop()


def test_a_store_that_cannot_be_opened_stops_the_server_before_it_announces(tmp_path):
    from fstore.core.layout import FORMAT_KEY
    from nstore import okvs

    fstore.open(tmp_path / "store").close()
    with okvs.open(tmp_path / "store") as db, db.transaction(write=True) as tx:
        tx.set(FORMAT_KEY, b"99")
    run = subprocess.run([sys.executable, "-m", "datae", "--repo", str(tmp_path / "store"), "serve", "--port", "0",
                          "--workers", "2"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.startswith("datae: error: ") and "format 99" in run.stderr and "Traceback" not in run.stderr


def test_a_worker_that_cannot_serve_stops_the_supervisor(tmp_path):
    """Past the parent's check, a worker that ends before it serves (its store went bad
    meanwhile) is not restarted over and over: the server stops with an error."""
    from datae.server import ServerConfig, WorkerStartError, _logging_config, _Supervisor, _claim
    from fstore.core.layout import FORMAT_KEY
    from nstore import okvs

    fstore.open(tmp_path / "store").close()
    with okvs.open(tmp_path / "store") as db, db.transaction(write=True) as tx:
        tx.set(FORMAT_KEY, b"99")
    sock = _claim("127.0.0.1", 0, "127.0.0.1")
    try:
        supervisor = _Supervisor(ServerConfig(str(tmp_path / "store")), sock, ("127.0.0.1", sock.getsockname()[1],
                                 "127.0.0.1"), 2, _logging_config(2))
        announced = []
        with pytest.raises(WorkerStartError, match="ended before it could serve"):
            supervisor.run(lambda: announced.append(True))
        assert announced == []
        assert all(worker.process.exitcode is not None for worker in supervisor.workers)
    finally:
        sock.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_kept_alive_connections_are_served_without_nagles_delay(tmp_path, workers):
    """Every worker's socket names TCP, so each connection has Nagle's algorithm off: the
    requests after the first on one kept-alive connection take about a millisecond, not
    the 40 ms of a delayed ACK."""
    fstore.open(tmp_path / "store").close()
    server = Server(tmp_path / "store", workers=workers)
    try:
        for connection in one_per_worker(server).values() if workers > 1 else [_connected(server)]:
            times = []
            for _ in range(15):
                start = time.perf_counter()
                assert call(connection, "GET", ASK, headers={"Accept": JSON})[0] == 200
                times.append(time.perf_counter() - start)
            connection.close()
            assert median(times[1:]) < 0.02, times
    finally:
        server.stop()


def _connected(server: Server) -> http.client.HTTPConnection:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=60)
    connection.request("GET", "/")
    connection.getresponse().read()
    return connection


def test_workers_default_to_the_cores_and_must_be_one_or_more(tmp_path):
    from datae.server import default_workers

    assert default_workers() == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    fstore.open(tmp_path / "store").close()
    run = subprocess.run([sys.executable, "-m", "datae", "--repo", str(tmp_path / "store"), "serve", "--workers", "0"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 128 and "--workers must be at least 1" in run.stderr
