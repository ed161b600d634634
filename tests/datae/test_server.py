"""``datae serve`` over real HTTP, in a process of its own (issue 14): clone, fetch and
push through ``http://`` remotes between stores in separate directories; tokens and
read-only; tampered, truncated and malformed requests refused with a 4xx and nothing
changed; a connection dropped or a server killed in the middle of a clone or a push
leaves both sides as they were, and the retry completes."""

from __future__ import annotations

import os
import random
import threading

import msgpack
import pytest
import pyoxigraph as ox

import fstore
from fstore.sync.wire import FRAMES_TYPE, encode_payload
from fstore.sync.remotes import connect
from fstore.sync.protocol import AuthenticationError, NotFastForwardError, SyncError, commit_payloads
from tests.server_fixtures import CutProxy, Server, write_token
from tests.fstore.test_sync import EVERYTHING, commit, random_sync, state, store


def seeded(path, commits: int = 12, quads: int = 400) -> None:
    repo = store(path)
    rng = random.Random(7)
    for n in range(commits):
        with repo.transaction("main", message=f"seed {n}", author="t") as tx:
            for _ in range(quads):
                fstore.add(tx, fstore.IRI(f"urn:g{rng.randrange(3)}"), fstore.IRI(f"urn:s{rng.randrange(10**6)}"),
                           fstore.IRI("urn:p"), f"value {rng.random()}")
    repo.tag("v1", "main")
    repo.close()


@pytest.fixture(params=[1, 2], ids=["1 worker", "2 workers"])
def served(tmp_path, request):
    """The seeded store served with a token, by one process and by two workers: pushes,
    fetches, merge requests and their races go through either."""
    seeded(tmp_path / "origin")
    token_file, token = write_token(tmp_path)
    server = Server(tmp_path / "origin", "--token-file", str(token_file), workers=request.param)
    server.token = token
    yield server
    server.stop()


@pytest.mark.parametrize("local", [True, False], ids=["file stream", "commit by commit"])
def test_clone_fetch_and_push_over_http(tmp_path, served, local):
    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae", local=local)
    status, offer = served.json("GET", "/sync/v1/refs")
    assert status == 200 and copy.head("main") == offer["branches"]["main"] and copy.tags() == offer["tags"]
    assert copy.remotes() == {"origin": served.url} and copy.verify() == []
    added = [commit(copy, n) for n in range(3)]
    with pytest.raises(AuthenticationError, match="needs Authorization: Bearer"):
        copy.push("origin")
    assert served.json("GET", "/sync/v1/refs")[1] == offer  # refused: nothing changed
    with pytest.raises(AuthenticationError, match="the token is wrong"):
        copy.push("origin", token="not-it")
    assert copy.push("origin", token=served.token) == added[-1]
    assert served.json("GET", "/sync/v1/refs")[1]["branches"]["main"] == added[-1]
    other = fstore.clone(served.url, tmp_path / "other" / ".datae")
    assert state(other, "main") == state(copy, "main") and other.head("main") == added[-1]
    commit(other, 10)
    other.push(token=served.token)
    assert copy.fetch()["origin/main"] == other.head("main")
    with pytest.raises(NotFastForwardError):
        commit(copy, 11)
        copy.push(token=served.token)
    copy.tag("v2", "main")
    copy.push(token=served.token, force=True, tags=True)
    assert served.json("GET", "/sync/v1/refs")[1]["tags"]["v2"] == copy.head("main")
    assert other.fetch() and other.tags()["v2"] == copy.head("main")
    copy.close()
    other.close()


def test_the_token_never_lands_in_a_log_line_or_a_store(tmp_path, served):
    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae")
    commit(copy, 1)
    os.environ["DATAE_TOKEN"] = served.token
    try:
        copy.push()
    finally:
        del os.environ["DATAE_TOKEN"]
    copy.close()
    served.stop()
    secret = served.token.encode()
    for path in [served.log, *(tmp_path / "copy" / ".datae").iterdir(), *(tmp_path / "origin" / ".datae").iterdir()]:
        assert secret not in path.read_bytes(), path


def test_a_read_only_server_refuses_every_write(tmp_path):
    seeded(tmp_path / "origin", commits=2, quads=10)
    server = Server(tmp_path / "origin", "--read-only")
    try:
        copy = fstore.clone(server.url, tmp_path / "copy" / ".datae")
        commit(copy, 1)
        with pytest.raises(SyncError, match="read-only"):
            copy.push()
        status, _, answer = server.request("POST", "/sparql", b"INSERT DATA { <urn:a> <urn:b> 1 }",
                                           {"Content-Type": "application/sparql-update"})
        assert status == 403 and b"ReadOnlyError" in answer
        copy.close()
    finally:
        server.stop()


def test_a_sparql_update_commits_with_the_message_it_names(tmp_path):
    # what /sparql runs for an update, without the process: the message parameter (or
    # X-Datae-Message) names the commit, and without one the update's text does
    from datae.sparql_http import read_operation, run_operation
    from query.limits import Limits

    repo = store(tmp_path / "repo")
    try:
        for n, (query_string, headers, expected) in enumerate((("message=first", {}, "first"),
                                                              ("", {"x-datae-message": "second"}, "second"),
                                                              ("", {}, "INSERT DATA { <urn:a> <urn:b> 2 }"))):
            text = f"INSERT DATA {{ <urn:a> <urn:b> {n} }}"
            operation = read_operation("POST", query_string, "application/sparql-update", text.encode(), headers)
            run_operation(repo, operation, Limits())
            assert repo.commit("main").message == expected
    finally:
        repo.close()


def _push_body(header: dict, frames: list[bytes], end: int | None) -> bytes:
    body = msgpack.packb(header) + b"".join(frames)
    return body if end is None else body + msgpack.packb({"end": end})


def test_tampered_truncated_and_malformed_requests_get_4xx_and_change_nothing(tmp_path, served):
    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae")
    base = copy.head("main")
    new = commit(copy, 1)
    with copy.storage.read() as snapshot:
        payload = next(commit_payloads(snapshot, [copy.commit(new).seq], {base}))
    auth = {"Authorization": f"Bearer {served.token}", "Content-Type": FRAMES_TYPE}
    header = {"updates": [["branch", "main", base, new]], "force": False}
    before = served.json("GET", "/sync/v1/refs")[1]
    tampered = dict(payload, message="not what was committed")
    cases = {
        "TamperedError": _push_body(header, [encode_payload(tampered)], 1),
        "cut after": _push_body(header, [encode_payload(payload)], None),
        "starts with": b"\x93not a header",
        "lacks a field": _push_body(header, [msgpack.packb({"id": new})], 1),
        "says 5": _push_body(header, [encode_payload(payload)], 5),
    }
    for expected, body in cases.items():
        status, _, answer = served.request("POST", "/sync/v1/push", body, auth)
        assert 400 <= status < 500 and expected.encode() in answer, (expected, status, answer)
        assert served.json("GET", "/sync/v1/refs")[1] == before
    for method, path, body in [("POST", "/sync/v1/fetch", b"{not json"), ("POST", "/sync/v1/fetch", b'{"wants": 3}'),
                               ("POST", "/sync/v1/fetch", b'{"wants": ["' + b"0" * 64 + b'"]}'),
                               ("GET", "/no/such/path", None), ("DELETE", "/sync/v1/refs", None),
                               ("PUT", "/sparql", b"x"), ("GET", "/sparql?query=SELECT%20WHERE", None)]:
        status, headers, answer = served.request(method, path, body, {"Content-Type": "application/json"})
        assert 400 <= status < 500 and b"Traceback" not in answer, (method, path, status, answer)
        assert headers["content-type"] == "application/json" and b'"error"' in answer
    assert b"Traceback" not in served.log.read_bytes()
    copy.close()


def test_a_connection_dropped_mid_clone_leaves_nothing_and_the_retry_completes(tmp_path, served):
    for local in (True, False):
        proxy = CutProxy(served.port, limit=60_000, way="down")
        target = tmp_path / f"copy-{local}" / ".datae"
        with pytest.raises(SyncError, match="cut|dropped|closed"):
            fstore.clone(proxy.url, target, local=local)
        proxy.close()
        assert not target.exists()
        copy = fstore.clone(served.url, target, local=local)
        assert copy.verify() == [] and copy.head("main") == served.json("GET", "/sync/v1/refs")[1]["branches"]["main"]
        copy.close()


def test_a_server_killed_mid_push_keeps_its_refs_and_the_retry_completes(tmp_path, served):
    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae")
    rng = random.Random(3)
    with copy.transaction("main", message="big", author="t") as tx:
        for n in range(3000):
            fstore.add(tx, None, fstore.IRI(f"urn:big{n}"), fstore.IRI("urn:p"), rng.random())
    pushed = copy.head("main")
    before = served.json("GET", "/sync/v1/refs")[1]
    local_before = copy.remote_branches()
    proxy = CutProxy(served.port, limit=40_000, way="up", stall=True)
    copy.remote_add("cut", proxy.url)
    failure: list[BaseException] = []

    def push() -> None:
        try:
            copy.push("cut", token=served.token)
        except BaseException as exc:
            failure.append(exc)

    pusher = threading.Thread(target=push)
    pusher.start()
    assert proxy.reached.wait(30), (failure, proxy.passed)
    served.kill()  # in the middle of receiving the push
    proxy.close()
    pusher.join(30)
    assert failure and isinstance(failure[0], SyncError)
    assert copy.remote_branches() == local_before and copy.head("main") == pushed
    served.start()
    assert served.json("GET", "/sync/v1/refs")[1] == before
    assert copy.push(token=served.token) == pushed
    assert served.json("GET", "/sync/v1/refs")[1]["branches"]["main"] == pushed
    check = fstore.clone(served.url, tmp_path / "check" / ".datae", local=False)
    assert state(check, "main") == state(copy, "main") and check.verify() == []
    copy.close()
    check.close()


def test_readers_are_served_while_pushes_land(tmp_path, served):
    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae")
    errors: list[BaseException] = []

    def pushes() -> None:
        try:
            for n in range(15):
                commit(copy, 100 + n)
                copy.push(token=served.token)
        except BaseException as exc:
            errors.append(exc)

    pusher = threading.Thread(target=pushes)
    pusher.start()
    answers = 0
    while pusher.is_alive():
        status, _, body = served.request("GET", "/sparql?query=ASK%7BGRAPH%20%3Fg%7B%3Fs%20%3Fp%20%3Fo%7D%7D",
                                         headers={"Accept": "application/sparql-results+json"})
        assert status == 200 and b'"boolean": true' in body
        answers += 1
    pusher.join()
    assert not errors and answers > 0
    fresh = fstore.clone(served.url, tmp_path / "fresh" / ".datae")
    assert state(fresh, "main") == state(copy, "main")
    assert len(list(fstore.quads(fresh.at("main"), *EVERYTHING))) > 0
    copy.close()
    fresh.close()


def test_a_merge_request_round_trip_through_a_server_between_two_clones(tmp_path, served, capsys):
    from datae.cli import main

    def datae(repo: str, *argv: str) -> str:
        capsys.readouterr()
        code = main(["--repo", str(tmp_path / repo), *argv])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        return captured.out

    bea = fstore.clone(served.url, tmp_path / "bea" / ".datae")
    cy = fstore.clone(served.url, tmp_path / "cy" / ".datae")
    bea.branch("feature")
    proposed = [commit(bea, n, "feature") for n in (20, 21)]
    bea.close()
    token = ("--token", served.token)
    datae("bea", "request", "open", "--remote", "origin", "--from", "feature", "-m", "two more", "--author", "bea", *token)
    assert "#1 [open] feature -> main: two more" in datae("cy", "request", "list", "--remote", "origin")
    shown = datae("cy", "request", "show", "1", "--remote", "origin")
    assert "conflict" not in shown.lower() or "no conflicts" in shown.lower()
    with pytest.raises(AuthenticationError):  # no token: refused, nothing changed
        connect(served.url, fstore.Repository).request_approve(1, "cy")
    assert main(["--repo", str(tmp_path / "cy"), "request", "approve", "1", "--remote", "origin", "--author", "cy"]) != 0
    status, record = served.json("GET", "/requests/1")
    assert status == 200 and record["approvals"] == [] and record["state"] == "open"
    datae("cy", "request", "comment", "1", "-m", "looks right", "--remote", "origin", "--author", "cy", *token)
    datae("cy", "request", "approve", "1", "--remote", "origin", "--author", "cy", *token)
    datae("cy", "request", "merge", "1", "--remote", "origin", "--author", "cy", *token)
    status, record = served.json("GET", "/requests/1")
    assert record["state"] == "merged" and [a["author"] for a in record["approvals"]] == ["cy"]
    assert cy.fetch()["origin/main"] == record["merge_commit"] == proposed[-1]
    [mirrored] = cy.request_mirror("origin").requests()
    assert mirrored["state"] == "merged" and mirrored["comments"][0]["text"] == "looks right"
    status, answer = served.json("POST", "/requests/1/merge", {"author": "cy"},
                                 {"Authorization": f"Bearer {served.token}"})
    assert status == 409 and answer["kind"] == "RequestStateError"
    assert served.json("GET", "/requests/99")[0] == 404
    cy.close()


def test_queries_run_under_the_time_and_size_limits_and_results_follow_accept(tmp_path):
    seeded(tmp_path / "origin", commits=1, quads=400)
    server = Server(tmp_path / "origin", "--timeout", "0.5", "--max-results", "50")
    try:
        def sparql(query: str, accept: str | None = None, *extra: tuple[str, str]) -> tuple[int, dict, bytes]:
            from urllib.parse import urlencode
            return server.request("GET", "/sparql?" + urlencode([("query", query), *extra]),
                                  headers={"Accept": accept} if accept else {})

        status, _, body = sparql("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } GRAPH ?h { ?t ?q ?r } "
                                 "GRAPH ?i { ?u ?v ?w } }")
        assert status == 503 and b"QueryTimeoutError" in body and b"0.5 s" in body
        status, _, body = sparql("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }")
        assert status == 503 and b"ResultTooLargeError" in body and b"50 rows" in body
        query = "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?s LIMIT 3"
        status, headers, body = sparql(query, "text/csv;q=0.9, application/sparql-results+xml;q=0.5")
        assert status == 200 and headers["content-type"].startswith("text/csv") and body.count(b"\r\n") == 4
        status, headers, body = sparql(query, "application/sparql-results+xml")
        assert headers["content-type"] == "application/sparql-results+xml" and body.count(b"<result>") == 3
        assert sparql(query, "image/png")[0] == 406
        status, headers, body = sparql(query, None, ("format", "tsv"))
        assert status == 200 and headers["content-type"].startswith("text/tab-separated-values")
        status, headers, body = sparql("CONSTRUCT { ?s <urn:q> 1 } WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 2",
                                       "application/n-triples")
        assert status == 200 and headers["content-type"] == "application/n-triples" and body.count(b" .\n") == 2
        for media, ox_format in (("application/ld+json", ox.RdfFormat.JSON_LD),
                                 ("application/rdf+xml", ox.RdfFormat.RDF_XML), ("application/trig", ox.RdfFormat.TRIG)):
            status, headers, body = sparql("CONSTRUCT { ?s <urn:q> 1 } WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 2", media)
            assert status == 200 and headers["content-type"] == media and len(list(ox.parse(body, ox_format))) == 2
        assert sparql("SELECT * WHERE { ?s ?p ?o }", None, ("ref", "no-such-ref"))[0] == 404
    finally:
        server.stop()


def test_three_stores_with_random_histories_agree_over_http(tmp_path, served):
    """Random commits, pushes, fetches and pulls between two clones of a served store,
    against a model: the state each commit id had where it was made. Every store that
    holds an id gives that state, and all end at one head."""
    rng = random.Random(14)
    clones = [fstore.clone(served.url, tmp_path / name / ".datae", local=name == "a") for name in ("a", "b")]
    model: dict[str, list[str]] = {}

    def remember(repo: fstore.Repository) -> None:
        head = repo.head("main")
        model.setdefault(head, state(repo, head))

    random_sync(clones, rng, 30, token=served.token, seen=remember)
    heads = {repo.head("main") for repo in clones} | {served.json("GET", "/sync/v1/refs")[1]["branches"]["main"]}
    assert len(heads) == 1
    check = fstore.clone(served.url, tmp_path / "check" / ".datae", local=False)
    for repo in (*clones, check):
        for commit_id, expected in model.items():
            if _holds(repo, commit_id):
                assert state(repo, commit_id) == expected, commit_id
        assert repo.verify() == []
        repo.close()


def _holds(repo: fstore.Repository, commit_id: str) -> bool:
    with repo.storage.read() as snapshot:
        return snapshot.seq_of(commit_id) is not None


def test_pushing_into_a_new_store_and_refusing_what_a_server_must_not_do(tmp_path):
    fstore.open(tmp_path / "shared" / ".datae").close()  # datae init: an empty main
    token_file, token = write_token(tmp_path)
    server = Server(tmp_path / "shared" / ".datae", "--token-file", str(token_file))
    try:
        laptop = store(tmp_path / "laptop")
        first = commit(laptop, 1)
        laptop.remote_add("origin", server.url)
        assert laptop.push(token=token) == first  # into the new store's empty main
        assert server.json("GET", "/sync/v1/refs")[1]["branches"]["main"] == first
        laptop.close()
        auth = {"Authorization": f"Bearer {token}"}
        form = {**auth, "Content-Type": "application/x-www-form-urlencoded"}
        status, _, body = server.request("POST", "/sparql", b"update=LOAD%20%3Cfile%3A%2F%2F%2Fetc%2Fpasswd%3E", form)
        assert status == 403 and b"LOAD is not served" in body and b"root" not in body
        update = b"update=DROP%20ALL"
        for header in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
            status, _, body = server.request("POST", "/sparql", update, {**form, **header})
            assert status == 403 and b"CrossSiteError" in body
        status, _, body = server.request("POST", "/requests/1/close", b'{"author": "x"}',
                                         {**auth, "Content-Type": "text/plain"})
        assert status == 415
        status, _, body = server.request("POST", "/sync/v1/fetch", b"[]", {"Content-Type": "application/json"})
        assert status == 400 and b"wants" in body
        assert server.json("GET", "/sync/v1/refs")[1]["branches"]["main"] == first
        status, _, body = server.request("POST", "/sparql", update,
                                         {**form, "Origin": server.url, "Sec-Fetch-Site": "same-origin"})
        assert status == 200  # the server's own origin may write
    finally:
        server.stop()


def test_gc_keeps_what_remote_tracking_branches_reach(tmp_path, served):
    import datetime as dt

    copy = fstore.clone(served.url, tmp_path / "copy" / ".datae")
    tracked = copy.resolve("origin/main")
    copy.delete_tag("v1")  # the seeded tag is at that commit too
    copy.reset(copy.commit(tracked).parents[0], hard=True)
    commit(copy, 1)  # main leaves origin/main's head: only origin/main reaches it now
    expected = state(copy, tracked)
    copy.gc(expire=dt.timedelta(0))
    copy = store(tmp_path / "copy")
    assert copy.resolve("origin/main") == tracked and state(copy, tracked) == expected and copy.verify() == []
    copy.close()


def test_connections_are_served_without_nagles_delay() -> None:
    """The listening socket names TCP, so the event loop turns Nagle's algorithm off on
    every connection it accepts (uvicorn serves through the same loop call): with it on,
    each response after the first on a kept-alive connection waited 40 ms for the client's
    delayed ACK."""
    import asyncio
    import socket

    from datae.server import _listen

    sock = _listen("127.0.0.1", 0, "127.0.0.1")

    async def accepted_nodelay() -> list[int]:
        seen: list[int] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        reader, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
        await reader.read()  # the handler closes it
        writer.close()
        server.close()
        await server.wait_closed()
        return seen

    assert asyncio.run(accepted_nodelay()) == [1]
