"""``datae serve``: one store over HTTP (starlette on uvicorn).

It serves the sync transport of ``docs/sync.md`` (``/sync/v1/...``: what ``http://``
remotes fetch, push and clone through; its bytes are encoded and decoded by
:mod:`fstore.sync.wire`, which the client shares: only the routing is here), the SPARQL 1.1 Protocol at ``/sparql``
(:mod:`datae.sparql_http`; without a query, the service description of
:mod:`datae.service_description`), the Graph Store Protocol at ``/store``
(:mod:`datae.graph_store`), and merge requests as JSON (``/requests``). Writes (a push, a
SPARQL update, a graph store write, a merge request) need ``Authorization: Bearer TOKEN``
when the server has a token, and are refused on a read-only server. The token is
compared in constant time and never written anywhere: not to the store, not to a log
line (the access log drops query strings). A write's author is the client's, else the
server's ``DATAE_AUTHOR``, else ``anonymous <CLIENT ADDRESS>``: never empty.

Every request runs in a thread of a worker process on the repository that process
opened: LMDB readers never wait for the writer, so queries, fetches and clones are served
while a push lands. A push is spooled to a temporary file as it arrives (memory stays
flat) and written only once it is all there. Errors are JSON ``{"error": message, "kind":
class name}`` with a 4xx status (5xx only for a limit or a fault), never a traceback.

**Workers** (``--workers N``, default: the cores this process may run on,
:func:`default_workers`). One Python process answers queries on one core at a time (the
GIL), so ``datae serve`` runs N worker processes under a parent that serves nothing
itself. The parent binds the address (``--port 0`` picks the port there), checks that
the store opens, and starts the workers with multiprocessing's *spawn*: a fresh
interpreter, never a fork, since an LMDB environment must not cross one. Each worker
listens at once (a connection waits for it rather than being refused), opens the store
itself, and tells the parent it serves; the parent announces the URL once every worker
does. On Linux each worker has a listening socket of its own on the address
(``SO_REUSEPORT``), and the kernel spreads new connections over them; elsewhere they
share the parent's. Every socket names TCP, so Nagle's algorithm is off on every
connection (see :func:`_listen`).

Writes from any worker take turns on LMDB's one writer lock, and every check a write
depends on (a branch still where the pusher saw it, a merge request still open) is read
inside the write transaction that acts on it. Nothing a request reads is cached in a
process beyond what a commit id pins (a commit never changes), so a write answered by
one worker is seen by the next request on any other. The parent restarts a worker that
dies and logs it; one that ends before it serves (its store cannot be opened) stops the
server with an error. Ctrl-C or SIGTERM stops every worker (each finishes the requests
it has); a worker dies with the parent even when that is killed outright.
``--workers 1`` is today's one process: it serves the socket itself, no supervisor.

    datae serve --port 8000 --token-file ~/.datae-token      # on the shared machine
    datae remote add origin http://HOST:8000                  # on a laptop
    DATAE_TOKEN=... datae push origin main
    curl 'http://HOST:8000/sparql?query=ASK%7B%3Fs%20%3Fp%20%3Fo%7D'
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import hmac
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import socket
import sys
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from urllib.parse import urlencode, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import fstore
from fstore.errors import MergeConflict, MergeInProgressError, MergeStaleError, UnknownRefError
from fstore.sync import protocol
from fstore.sync import wire
from fstore.sync.merge_requests import RequestConflictError, RequestStateError, UnknownRequestError
from nstore.errors import DataeError
from query.errors import QueryError
from query.limits import Limits, QueryTimeoutError, ResultTooLargeError
from query.outcomes import UpdateResult

from . import graph_store, service_description
from .sparql_http import ProtocolError, answer, params_of, read_operation

__all__ = ["ServerConfig", "create_app", "serve", "default_workers", "ReadOnlyError", "CrossSiteError",
           "AddressInUseError", "WorkerStartError", "RedactQueryStrings"]

log = logging.getLogger("datae.server")
_STREAM_CHUNK = 1 << 20
_SPOOL_IN_MEMORY = 8 << 20
MAX_FETCH_BODY = 64 << 20  # wants and haves: about 900,000 commit ids


class ReadOnlyError(DataeError):
    """A write sent to a read-only server."""


class CrossSiteError(DataeError):
    """A write sent by a web page of another site (a browser's form post)."""


class AddressInUseError(DataeError):
    """``datae serve`` cannot listen on the address it was given."""


class WorkerStartError(DataeError):
    """A worker process of ``datae serve --workers N`` ended before it could serve."""


@dataclass(frozen=True)
class ServerConfig:
    """What ``datae serve`` serves and how: the store's directory, the bearer token
    writes need (None: none), whether writes are refused, the query limits, the largest
    query or update text accepted (bytes), the largest graph store upload (bytes), and
    the author of a write whose client names none (None: ``$DATAE_AUTHOR`` of the
    server, else ``anonymous <CLIENT ADDRESS>``)."""

    store: str
    token: str | None = None
    read_only: bool = False
    limits: Limits = field(default_factory=Limits)
    max_request_bytes: int = 1 << 20
    max_upload_bytes: int = 64 << 20
    author: str | None = None


_STATUS: list[tuple[type[BaseException], int]] = [
    (protocol.AuthenticationError, 401), (ReadOnlyError, 403), (CrossSiteError, 403),
    (protocol.NotFastForwardError, 409), (protocol.RefMovedError, 409), (MergeConflict, 409),
    (MergeInProgressError, 409), (MergeStaleError, 409),
    (UnknownRefError, 404), (UnknownRequestError, 404), (RequestStateError, 409), (RequestConflictError, 409),
    (QueryTimeoutError, 503), (ResultTooLargeError, 503), (DataeError, 400),
]


def _error(exc: BaseException) -> JSONResponse:
    status = getattr(exc, "status", None) or next(code for kind, code in _STATUS if isinstance(exc, kind))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else getattr(exc, "headers", None)
    return JSONResponse(wire.error_answer(exc), status_code=status, headers=headers)


def create_app(config: ServerConfig, *, started: Callable[[], None] | None = None) -> Starlette:
    """The ASGI application serving the store at ``config.store``; the store is opened when
    the application starts (in the process that serves it), and ``started()`` is called
    once it is."""
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette):
        state["repo"] = fstore.open(config.store)
        if started is not None:
            started()
        try:
            yield
        finally:
            state.pop("repo").close()

    def repo() -> fstore.Repository:
        return state["repo"]

    server_author = config.author or os.environ.get("DATAE_AUTHOR") or None

    def author_of(request: Request, given: Any) -> str:
        """The author of a write: what the client says, else the server's, else the
        client's address: never empty, so every commit says where it came from."""
        if given is not None and not isinstance(given, str):
            raise ProtocolError("author must be a string")
        if given and given.strip():
            return given
        client = request.client.host if request.client else "unknown"
        return server_author or f"anonymous <{client}>"

    def require_write(request: Request) -> None:
        _refuse_cross_site(request)
        if config.read_only:
            raise ReadOnlyError("this server is read-only (datae serve --read-only)")
        if config.token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), config.token.encode()):
            raise protocol.AuthenticationError("this write needs Authorization: Bearer TOKEN with the server's token"
                                           if not given else "the token is wrong")

    async def body_of(request: Request, limit: int) -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ProtocolError(f"the request body is larger than {limit} bytes", 413)
            chunks.append(chunk)
        return b"".join(chunks)

    # -- sync ---------------------------------------------------------------------------

    async def refs(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(protocol.advertise, repo().storage))

    async def ids(request: Request) -> Response:
        held = await run_in_threadpool(protocol.held_ids, repo().storage)
        return Response(wire.encode_ids(held), media_type=wire.IDS_TYPE)

    async def fetch(request: Request) -> Response:
        wants, haves = wire.decode_fetch(await body_of(request, MAX_FETCH_BODY))
        storage = repo().storage
        await run_in_threadpool(_check_held, storage, wants)
        return StreamingResponse(_from_thread(lambda put: _send_commits(storage, wants, haves, put)),
                                 media_type=wire.FRAMES_TYPE)

    async def push(request: Request) -> Response:
        require_write(request)
        _require_type(request, wire.FRAMES_TYPE)
        spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)
        try:
            async for chunk in request.stream():
                spool.write(chunk)
            spool.seek(0)
            await run_in_threadpool(_accept_push, repo().storage, spool)
        finally:
            spool.close()
        return JSONResponse({"ok": True})

    async def store_file(request: Request) -> Response:
        okvs = repo().storage.okvs
        return StreamingResponse(_copy_stream(okvs.copy_to_fd), media_type="application/octet-stream",
                                 headers={"X-Datae-Format": str(fstore.FORMAT_VERSION)})

    # -- SPARQL ---------------------------------------------------------------------------

    async def sparql(request: Request) -> Response:
        body = await body_of(request, config.max_request_bytes) if request.method == "POST" else b""
        endpoint = str(request.url.replace(query=""))
        if request.method in ("GET", "HEAD") and not {"query", "update"} & params_of(request.url.query).keys():
            return describe_service(request, endpoint)
        operation = read_operation(request.method, request.url.query, request.headers.get("content-type"), body,
                                   dict(request.headers), base=endpoint)
        if operation.kind == "update":
            require_write(request)
            operation = dataclasses.replace(operation, author=author_of(request, operation.author))
        outcome = await run_in_threadpool(answer, repo(), operation, config.limits, request.headers.get("accept"))
        if isinstance(outcome, UpdateResult):
            return JSONResponse({"branch": outcome.branch, "commit": outcome.commit_id, "added": outcome.added,
                                 "removed": outcome.removed})
        text, media = outcome
        if request.method == "HEAD":  # the headers a GET would get, without the body
            text = b""
        return Response(text, media_type=media if media.startswith("text/") else None,
                        headers=None if media.startswith("text/") else {"Content-Type": media})

    def describe_service(request: Request, endpoint: str) -> Response:
        fmt, media = service_description.output_format(request.headers.get("accept"))
        return _rdf_response(service_description.describe(endpoint, read_only=config.read_only, fmt=fmt), media,
                             request.method)

    # -- the graph store protocol (datae.graph_store) -------------------------------------

    async def store(request: Request) -> Response:
        params = params_of(request.url.query)
        target = graph_store.target_of(params)
        ref = _only(params, "ref")
        if request.method in ("GET", "HEAD"):
            return await store_read(request, target, ref)
        require_write(request)
        message = _only(params, "message") or request.headers.get("x-datae-message")
        author = author_of(request, _only(params, "author") or request.headers.get("x-datae-author"))
        if request.method == "DELETE":
            await run_in_threadpool(lambda: graph_store.delete(repo(), target, ref=ref, message=message, author=author))
            return Response(status_code=204)
        fmt = graph_store.body_format(request.headers.get("content-type"), target)
        body = await body_of(request, config.max_upload_bytes)
        base = str(request.url.replace(query=""))
        written = await run_in_threadpool(lambda: graph_store.write(
            repo(), target, body, fmt, replace=request.method == "PUT", ref=ref, base=base, message=message,
            author=author))
        if not written.created:
            return Response(status_code=204)
        graph = written.target.graph
        location = str(request.url.replace(query="default" if graph is None else urlencode({"graph": graph.value})))
        return Response(status_code=201, headers={"Location": location})

    async def store_read(request: Request, target: graph_store.Target, ref: str | None) -> Response:
        fmt, media = graph_store.output_format(request.headers.get("accept"), target)
        view = await run_in_threadpool(graph_store.readable, repo(), target, ref)
        if request.method == "HEAD":
            return _rdf_response(b"", media, "HEAD")
        # streamed: a whole store does not have to fit in the server's memory
        produce = _serialized(lambda output: graph_store.read(view, target, fmt, output))
        return StreamingResponse(_from_thread(produce, error_frames=False), headers={"Content-Type": media})

    # -- merge requests: the Repository methods of the same names, as JSON ----------------

    async def fields(request: Request, *names: str) -> list[Any]:
        _require_type(request, "application/json")
        given = _json(await body_of(request, config.max_request_bytes))
        if not isinstance(given, dict):
            raise ProtocolError(f"the request body is a JSON object with {', '.join(names)}")
        return [given.get(name) for name in names]

    def number(request: Request) -> int:
        return int(request.path_params["n"])

    async def requests_list(request: Request) -> Response:
        if request.method == "GET":
            state = request.query_params.get("state")
            return JSONResponse(await run_in_threadpool(repo().requests, state))
        require_write(request)
        source, target, title, author = await fields(request, "source", "target", "title", "author")
        opened = await run_in_threadpool(repo().request_open, _text(source, "source"), _text(target or "main", "target"),
                                         _text(title or "", "title"), author_of(request, author))
        return JSONResponse({"number": opened}, status_code=201)

    async def request_show(request: Request) -> Response:
        limit = request.query_params.get("limit", "20")
        if not limit.isdigit():
            raise ProtocolError(f"limit must be a number, not {limit!r}")
        return JSONResponse(await run_in_threadpool(lambda: repo().request(number(request), limit=int(limit))))

    async def request_action(request: Request) -> Response:
        require_write(request)
        action, n = request.path_params["action"], number(request)
        if action == "comments":
            text, author = await fields(request, "text", "author")
            await run_in_threadpool(repo().request_comment, n, _text(text, "text"), author_of(request, author))
        elif action == "approve":
            (author,) = await fields(request, "author")
            await run_in_threadpool(repo().request_approve, n, author_of(request, author))
        elif action == "merge":
            author, message = await fields(request, "author", "message")
            commit = await run_in_threadpool(repo().request_merge, n, author_of(request, author),
                                             None if message is None else _text(message, "message"))
            return JSONResponse({"commit": commit})
        elif action == "close":
            (author,) = await fields(request, "author")
            await run_in_threadpool(repo().request_close, n, author_of(request, author))
        else:
            raise HTTPException(404, f"no action {action!r} on a request (comments, approve, merge, close)")
        return JSONResponse({"ok": True})

    async def about(request: Request) -> Response:
        return JSONResponse({"datae": True, "sync_protocol": protocol.PROTOCOL_VERSION, "read_only": config.read_only,
                             "sparql": "/sparql", "store": "/store", "requests": "/requests"})

    async def on_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, (DataeError, QueryError)):
            return _error(exc)
        if isinstance(exc, HTTPException):
            # its headers kept: a 405 carries Allow (RFC 9110), the methods the route takes
            allow = (exc.headers or {}).get("Allow")
            detail = f"{request.method} is not served at {request.url.path}; use {allow}" if allow else exc.detail
            return JSONResponse({"error": detail, "kind": "HTTPError"}, status_code=exc.status_code,
                                headers=exc.headers)
        if isinstance(exc, ClientDisconnect):
            return Response(status_code=499)
        log.exception("unexpected error serving %s %s", request.method, request.url.path)
        return JSONResponse({"error": f"internal error ({type(exc).__name__}); the server's log has the details",
                             "kind": "InternalError"}, status_code=500)

    routes = [
        Route("/", about),
        Route(f"{wire.PATH}/refs", refs),
        Route(f"{wire.PATH}/ids", ids),
        Route(f"{wire.PATH}/fetch", fetch, methods=["POST"]),
        Route(f"{wire.PATH}/push", push, methods=["POST"]),
        Route(f"{wire.PATH}/store", store_file),
        Route("/sparql", sparql, methods=["GET", "POST"]),  # and HEAD, which starlette adds beside GET
        Route("/store", store, methods=["GET", "PUT", "POST", "DELETE"]),
        Route("/requests", requests_list, methods=["GET", "POST"]),
        Route("/requests/{n:int}", request_show),
        Route("/requests/{n:int}/{action}", request_action, methods=["POST"]),
    ]
    handlers = {DataeError: on_error, QueryError: on_error, HTTPException: on_error, ClientDisconnect: on_error,
                Exception: on_error}
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)


def _rdf_response(data: bytes, media: str, method: str) -> Response:
    """RDF as ``media``; a HEAD gets the headers alone."""
    return Response(b"" if method == "HEAD" else data, headers={"Content-Type": media})


def _only(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ProtocolError(f"parameter {name} is given {len(values)} times")
    return values[0] if values else None


def _refuse_cross_site(request: Request) -> None:
    """A write a web page in someone's browser sent (a form posted to localhost) is
    refused: browsers say where a request comes from, other clients do not."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if site in ("cross-site", "same-site") or (origin and origin != "null" and urlsplit(origin).netloc != host) \
            or origin == "null":
        raise CrossSiteError(f"a write from a web page of another site ({origin or site}) is refused")


def _require_type(request: Request, media: str) -> None:
    """Writes carry their own media type, which a web page cannot send to another site
    without the browser asking first."""
    given = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if given != media:
        raise ProtocolError(f"this request's body is {media}, not {given or 'untyped'}", 415)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise ProtocolError("the request body is not JSON") from None


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{name} must be a string")
    return value


def _check_held(storage: Any, wants: list[str]) -> None:
    """Refuse unknown wants with a 400 before the stream starts (its status is sent first)."""
    with storage.read() as snapshot:
        protocol.held_seqs(snapshot, wants)


def _send_commits(storage: Any, wants: list[str], haves: set[str], put: Callable[[bytes], None]) -> None:
    for frame in wire.commit_frames(protocol.send(storage, wants, haves)):
        put(frame)


def _accept_push(storage: Any, spool: Any) -> None:
    updates, force, commits = wire.read_push(wire.frames(iter(lambda: spool.read(_STREAM_CHUNK), b""), "the push"))
    protocol.accept_push(storage, updates, commits, force=force)


class _Stopped(Exception):
    """The client went away: the producing thread stops."""


def _from_thread(produce: Callable[[Callable[[bytes], None]], None], *, error_frames: bool = True) -> Iterator[bytes]:
    """The chunks ``produce`` puts, made in a thread of their own (one read transaction
    stays in one thread) and handed over through a small queue, so memory stays flat.
    A failure is sent as a last msgpack frame (``error_frames``, the sync transport) or
    raised here, which cuts the response: the client never sees a whole-looking one."""
    chunks: queue.Queue = queue.Queue(maxsize=16)
    stopped = threading.Event()
    done = object()

    def put(chunk: bytes) -> None:
        while not stopped.is_set():
            try:
                chunks.put(chunk, timeout=0.5)
                return
            except queue.Full:
                continue
        raise _Stopped

    def run() -> None:
        try:
            produce(put)
            put(done)  # type: ignore[arg-type]
        except _Stopped:
            pass
        except BaseException as exc:  # sent to the client as an error frame, or raised below
            try:
                put(wire.error_frame(exc) if error_frames else exc)  # type: ignore[arg-type]
                put(done)  # type: ignore[arg-type]
            except _Stopped:
                pass
            if not isinstance(exc, DataeError):
                log.exception("unexpected error while streaming")

    threading.Thread(target=run, daemon=True).start()
    try:
        while (chunk := chunks.get()) is not done:
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk
    finally:
        stopped.set()


class _Put:
    """A binary file whose writes go to ``put`` in chunks of about ``_STREAM_CHUNK``
    (a serializer writes a few bytes at a time); ``close`` sends the rest."""

    def __init__(self, put: Callable[[bytes], None]) -> None:
        self._put = put
        self._buffer = bytearray()

    def write(self, data: bytes) -> int:
        self._buffer += data
        if len(self._buffer) >= _STREAM_CHUNK:
            self.flush()
        return len(data)  # pyoxigraph's serializer wants the count

    def flush(self) -> None:
        if self._buffer:
            self._put(bytes(self._buffer))
            self._buffer.clear()

    def close(self) -> None:
        self.flush()


def _serialized(write: Callable[[Any], None]) -> Callable[[Callable[[bytes], None]], None]:
    """A producer for :func:`_from_thread` from a function that writes to a file."""

    def produce(put: Callable[[bytes], None]) -> None:
        output = _Put(put)
        write(output)
        output.close()

    return produce


def _copy_stream(copy_to_fd: Callable[[int], None]) -> Iterator[bytes]:
    """The bytes ``copy_to_fd`` writes, through a pipe from a thread of its own. If the
    copy fails the stream stops short (the client sees a cut transfer, never a whole-
    looking file)."""
    read_end, write_end = os.pipe()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            copy_to_fd(write_end)
        except BaseException as exc:
            failure.append(exc)
        finally:
            os.close(write_end)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        while chunk := os.read(read_end, _STREAM_CHUNK):
            yield chunk
        thread.join()
        if failure:
            raise failure[0]
    finally:
        os.close(read_end)


def default_workers() -> int:
    """The worker processes ``datae serve`` runs by default: the cores this process may
    run on (its CPU affinity where the system tells it, else every core), at least one."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13: the affinity's count where there is one
        return max(1, os.process_cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1,
          announce: Callable[[str], None] = print) -> None:
    """Serve until interrupted, in ``workers`` processes (see the module doc; 1: this
    process alone). ``announce`` is told the URL once the address is bound (port 0 picks
    a free one); with workers, once every one of them serves it."""
    import uvicorn

    if workers < 1:
        raise ValueError(f"datae serve needs at least one worker, not {workers}")
    shown = f"[{host}]" if ":" in host else host
    sock = _claim(host, port, shown) if workers > 1 and _REUSE_PORT else _listen(host, port, shown)
    try:
        if workers > 1:  # opened (made if missing) and checked once, here: a store no worker could open stops us now
            fstore.open(config.store).close()
    except BaseException:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    line = (f"datae serve: http://{shown}:{bound} (store {config.store}; "
            f"{'read-only' if config.read_only else 'writes need the token' if config.token else 'writes open to anyone'}"
            f"{f'; {workers} workers' if workers > 1 else ''})")
    logging_config = _logging_config(workers)
    if workers == 1:
        announce(line)
        server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="info", log_config=logging_config))
        server.run(sockets=[sock])
        return
    try:
        _Supervisor(config, sock, (host, bound, shown), workers, logging_config).run(lambda: announce(line))
    finally:
        sock.close()


def _logging_config(workers: int) -> dict:
    """uvicorn's logging set-up, as ``datae serve`` wants it."""
    import uvicorn

    # Every log line to stderr (uvicorn's access log goes to stdout by default): stdout
    # carries only the announcement, so a parent that reads one line never blocks us.
    logging_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logging_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    # A query string can carry a token (?access_token=) or private data: never logged.
    logging_config.setdefault("filters", {})["redact"] = {"()": RedactQueryStrings}
    logging_config["handlers"]["access"]["filters"] = ["redact"]
    if workers > 1:  # the supervisor's lines (a worker started, died), as uvicorn's own
        logging_config["loggers"][log.name] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return logging_config


# Each worker listens on a socket of its own bound to the same address (SO_REUSEPORT),
# where the kernel spreads new connections over the listening sockets by a hash of their
# addresses. With one shared socket every worker's event loop wakes for a new connection
# and the first takes every connection waiting (asyncio accepts up to a backlog at a
# time): 8 kept-alive connections opened at once went 8/0 or 7/1 to two workers, against
# 3/5 or 2/6 with SO_REUSEPORT. (Linux only: BSD and macOS take the option without spreading.)
_REUSE_PORT = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


_BACKLOG = 2048  # uvicorn's: connections a listening socket holds until they are accepted


class _Worker:
    """One worker process, the end of the pipe it says "serving" on, and whether it has."""

    __slots__ = ("slot", "process", "pipe", "serving", "silent")

    def __init__(self, slot: int, process: Any, pipe: Any) -> None:
        self.slot, self.process, self.pipe = slot, process, pipe
        self.serving = False
        self.silent = False  # its pipe closed without a word: it is ending before it served

    def __str__(self) -> str:
        return f"worker {self.slot + 1} [{self.process.pid}]"


class _Supervisor:
    """The parent process of ``datae serve --workers N``: starts the workers, announces
    the server once each of them serves, restarts one that dies (saying so in the log),
    stops them all on SIGINT or SIGTERM (a second signal kills them), and raises
    :class:`WorkerStartError` if one ends before it could serve."""

    def __init__(self, config: ServerConfig, sock: socket.socket, address: tuple[str, int, str], count: int,
                 logging_config: dict) -> None:
        self.config, self.address, self.count, self.logging_config = config, address, count, logging_config
        # The parent's socket keeps the address for the workers' whole life; they serve it
        # through sockets of their own (_REUSE_PORT) or, elsewhere, this one inherited,
        # which then listens from now on, so no connection is refused while they start.
        self.inherited = None if _REUSE_PORT else sock
        if self.inherited is not None:
            sock.listen(_BACKLOG)
        self.context = multiprocessing.get_context("spawn")  # never fork: see the module doc
        self.workers: list[_Worker] = []
        self.signals: list[int] = []

    def run(self, announce: Callable[[], None]) -> None:
        import logging.config

        logging.config.dictConfig(self.logging_config)
        caught = {sig: signal.signal(sig, lambda number, frame: self.signals.append(number))
                  for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.workers = [self._start(slot) for slot in range(self.count)]
            failed = self._watch(announce)
        finally:
            self._stop()
            for sig, handler in caught.items():
                signal.signal(sig, handler)
        if failed:
            raise WorkerStartError(f"{failed}; the server stopped (its log above says why)")

    def _start(self, slot: int) -> _Worker:
        pipe, told = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_work, name=f"datae serve worker {slot + 1}", daemon=True,
                                       args=(self.config, self.address, self.inherited, self.logging_config,
                                             os.getpid(), told))
        process.start()
        told.close()  # the worker's end: the parent only reads
        worker = _Worker(slot, process, pipe)
        log.info("Started %s", worker)
        return worker

    def _watch(self, announce: Callable[[], None]) -> str | None:
        """Until a signal: announce once every worker serves, restart each worker that
        dies; a description of the failure if one ended before it served."""
        announced = False
        while not self.signals:
            heard = [worker.pipe for worker in self.workers if not (worker.serving or worker.silent)]
            ready = multiprocessing.connection.wait([worker.process.sentinel for worker in self.workers] + heard,
                                                    timeout=0.25)
            for worker in self.workers:
                if worker.pipe in ready and not worker.serving:
                    worker.serving = _said_serving(worker.pipe)
                    worker.silent = not worker.serving
                if worker.process.sentinel not in ready:
                    continue
                worker.process.join()
                worker.serving = worker.serving or (not worker.silent and _said_serving(worker.pipe))
                worker.pipe.close()
                how = _ending(worker.process.exitcode)
                if not worker.serving:
                    log.error("%s ended before it could serve (%s)", str(worker).capitalize(), how)
                    return f"{worker} of datae serve ended before it could serve ({how})"
                log.error("%s died (%s); starting another", str(worker).capitalize(), how)
                self.workers[worker.slot] = self._start(worker.slot)
            if not announced and all(worker.serving for worker in self.workers):
                announce()
                announced = True
        return None

    def _stop(self) -> None:
        """SIGTERM to every worker (each finishes the requests it has), then wait for
        them; a signal more kills them."""
        signals = len(self.signals)
        for worker in self.workers:
            worker.process.terminate()
        while True:
            running = [worker.process for worker in self.workers if worker.process.exitcode is None]
            if not running:
                break
            if len(self.signals) > max(signals, 1):
                for process in running:
                    process.kill()
            multiprocessing.connection.wait([process.sentinel for process in running], timeout=0.25)
        for worker in self.workers:
            worker.process.join()
            worker.pipe.close()


def _said_serving(pipe: Any) -> bool:
    """Whether a worker said it serves (False: its end of the pipe closed first)."""
    try:
        return bool(pipe.poll() and pipe.recv() is True)
    except (EOFError, OSError):
        return False


def _ending(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"killed by {signal.Signals(-exitcode).name}"
    return f"exit status {exitcode}"


def _work(config: ServerConfig, address: tuple[str, int, str], inherited: socket.socket | None, logging_config: dict,
          parent: int, told: Any) -> None:
    """One worker process of ``datae serve --workers N`` (spawned: nothing of the parent's
    store comes with it): it listens at once (connections wait for it rather than being
    refused), opens the store itself, tells the parent it serves, and serves."""
    import uvicorn

    _end_with(parent)
    host, port, shown = address
    sock = inherited
    if sock is None:
        sock = _listen(host, port, shown, shared=True)
        sock.listen(_BACKLOG)

    def serving() -> None:
        told.send(True)
        told.close()

    server = uvicorn.Server(uvicorn.Config(create_app(config, started=serving), log_level="info",
                                           log_config=logging_config, backlog=_BACKLOG))
    server.run(sockets=[sock])


def _end_with(parent: int) -> None:
    """Have this process killed when process ``parent`` ends, however it ends: a parent
    killed outright (SIGKILL) cannot stop its workers, and one left behind would keep
    serving the address."""
    if sys.platform.startswith("linux"):
        import ctypes  # the C library's prctl: Linux only

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGKILL)


def _claim(host: str, port: int, shown: str) -> socket.socket:
    """The parent's socket under ``_REUSE_PORT``, which the workers' sockets join. It is
    bound once without SO_REUSEPORT first, so an address that any other socket holds
    (another ``datae serve --workers N`` too, whose sockets would take it) is refused as
    it is for one process; the port that bind gave is then bound again, shared."""
    probe = _listen(host, port, shown)
    port = probe.getsockname()[1]
    probe.close()  # never listened: the port is free again at once, for the shared bind
    return _listen(host, port, shown, shared=True)


def _listen(host: str, port: int, shown: str, *, shared: bool = False) -> socket.socket:
    """A socket bound to ``host:port``; AddressInUseError names the address when it is
    taken (the operating system's words alone do not say which). ``shared``: several
    processes of this user serve the address (the workers, when ``_REUSE_PORT``)."""
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # sockets whose protocol says TCP, and accepted ones inherit ours. With it on, each
    # response after the first on a kept-alive connection waited for the client's delayed
    # ACK: 44 ms a request.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if shared and _REUSE_PORT:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except socket.gaierror as exc:
        sock.close()
        raise AddressInUseError(f"cannot listen on {shown}:{port}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise AddressInUseError(f"cannot listen on {shown}:{port}: the address is already in use (another server? "
                                    "give another --port, or --port 0 for a free one)") from None
        raise AddressInUseError(f"cannot listen on {shown}:{port}: {exc.strerror or exc}") from None
    return sock


class RedactQueryStrings(logging.Filter):
    """Drops the query string from uvicorn's access log lines: a token sent as
    ``?access_token=`` or the text of a query must not end up in a log file.

    >>> record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
    ...                            ("127.0.0.1:5", "GET", "/sparql?token=x", "1.1", 200), None)
    >>> RedactQueryStrings().filter(record) and record.getMessage()
    '127.0.0.1:5 - "GET /sparql?[redacted] HTTP/1.1" 200'
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], args[2].split("?", 1)[0] + "?[redacted]", *args[3:])
        return True
