"""A remote served over HTTP by ``datae serve``: the client of ``docs/sync.md``'s HTTP
transport (``/sync/v1/...``), answering the calls of :class:`fstore.sync.remotes.Remote` and the merge-request methods of
:class:`fstore.Repository` (``/requests``), so a reviewer works on a server's requests
as on a local store's.

Everything streams: commits arrive as a sequence of msgpack frames, read as they come
and checked one by one; a push sends its frames in a chunked request body as the local
store reads them; a clone writes the store file as it arrives. The bytes are
:mod:`fstore.sync.wire`'s, which ``datae serve`` shares: a stream that ends without its
closing ``{"end": N}`` frame was cut, a :class:`~fstore.sync.protocol.SyncError`, and no
ref has moved. Only the standard library's ``http.client`` is used.
"""

from __future__ import annotations

import http.client
import json
import os
from typing import Any, Iterable, Iterator
from urllib.parse import quote, urlsplit

from nstore.errors import DataeError
from nstore.lmdbfile import DATA_FILE

from . import wire
from .merge_requests import PREVIEW_LIMIT
from .protocol import RefUpdate, SyncError

__all__ = ["HttpRemote", "CHUNK"]

CHUNK = 1 << 20  # what one read of a response asks for


class HttpRemote:
    """``datae serve`` at ``url`` (``http://HOST:PORT[/PREFIX]``), sending ``token`` as
    ``Authorization: Bearer`` when given."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 300.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SyncError(f"remote {url!r}: not an http:// URL with a host")
        self.url = url
        self._parts = parts
        self._prefix = parts.path.rstrip("/")
        self._token = token
        self._timeout = timeout

    # -- the calls of a Remote ---------------------------------------------------------------

    def advertise(self) -> dict:
        return self._json("GET", f"{wire.PATH}/refs")

    def held_ids(self) -> set[str]:
        return wire.decode_ids(self._read_all(self._request("GET", f"{wire.PATH}/ids")), self.url)

    def send(self, wants: list[str], haves: set[str]) -> Iterator[dict]:
        response = self._request("POST", f"{wire.PATH}/fetch", wire.encode_fetch(wants, haves),
                                 {"Content-Type": "application/json"})
        chunks = iter(lambda: _read(response, CHUNK, self.url), b"")
        return wire.read_commits(wire.frames(chunks, self.url), f"{self.url}: the stream", from_server=True)

    def accept_push(self, updates: list[RefUpdate], payloads: Iterable[dict], force: bool) -> None:
        self._read_all(self._request("POST", f"{wire.PATH}/push", wire.push_frames(updates, force, payloads),
                                     {"Content-Type": wire.FRAMES_TYPE}))

    def copy_store(self, directory: str) -> None:
        response = self._request("GET", f"{wire.PATH}/store")
        expected = response.getheader("Content-Length")
        written = 0
        with open(os.path.join(directory, DATA_FILE), "wb") as out:
            while chunk := _read(response, CHUNK, self.url):
                out.write(chunk)
                written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if expected is not None and written != int(expected):
            raise SyncError(f"{self.url}: the store's file was cut at {written} of {expected} bytes")

    def close(self) -> None:
        """Nothing to release: each call opens and closes a connection of its own."""

    # -- merge requests, as the Repository methods of the same names ----------------------------

    def requests(self, state: str | None = None) -> list[dict]:
        return self._call("GET", "/requests" + ("" if state is None else f"?state={quote(state)}"))

    def request(self, n: int, *, limit: int = PREVIEW_LIMIT) -> dict:
        return self._call("GET", f"/requests/{int(n)}?limit={int(limit)}")

    def request_open(self, source: str, target: str = "main", title: str = "", author: str = "") -> int:
        return self._call("POST", "/requests", {"source": source, "target": target, "title": title,
                                                "author": author})["number"]

    def request_comment(self, n: int, text: str, author: str = "") -> None:
        self._call("POST", f"/requests/{int(n)}/comments", {"text": text, "author": author})

    def request_approve(self, n: int, author: str) -> None:
        self._call("POST", f"/requests/{int(n)}/approve", {"author": author})

    def request_merge(self, n: int, author: str = "", message: str | None = None) -> str:
        return self._call("POST", f"/requests/{int(n)}/merge", {"author": author, "message": message})["commit"]

    def request_close(self, n: int, author: str = "") -> None:
        self._call("POST", f"/requests/{int(n)}/close", {"author": author})

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        return self._json(method, path, body)

    # -- HTTP --------------------------------------------------------------------------------

    def _json(self, method: str, path: str, body: bytes | None = None) -> Any:
        response = self._request(method, path, body, {"Content-Type": "application/json"} if body else {})
        data = self._read_all(response)
        try:
            return json.loads(data)
        except ValueError:
            raise SyncError(f"{self.url}: not a datae server (its answer to {path} is not JSON)") from None

    def _request(self, method: str, path: str, body: Any = None, headers: dict | None = None) -> http.client.HTTPResponse:
        parts = self._parts
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname, parts.port, timeout=self._timeout)
        headers = dict(headers or {})
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        chunked = body is not None and not isinstance(body, bytes)
        try:
            connection.request(method, self._prefix + path, body=body, headers=headers, encode_chunked=chunked)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, BrokenPipeError | ConnectionResetError):
                refused = _early_answer(connection)  # a server may refuse a body before reading it all
                connection.close()
                if refused is not None and refused.status >= 400:
                    raise _error(refused, self.url, path) from None
                raise SyncError(f"{self.url}: the server closed the connection during {method} {path} ({exc})") from None
            connection.close()
            raise SyncError(f"cannot reach the datae server at {self.url}: {exc}") from None
        if response.status >= 400:
            raise _error(response, self.url, path)
        return response

    def _read_all(self, response: http.client.HTTPResponse) -> bytes:
        chunks = []
        while chunk := _read(response, CHUNK, self.url):
            chunks.append(chunk)
        return b"".join(chunks)


def _early_answer(connection: http.client.HTTPConnection) -> http.client.HTTPResponse | None:
    """The answer a server sent before it stopped reading the request, if any."""
    try:
        return connection.getresponse()
    except (OSError, http.client.HTTPException):
        return None


def _read(response: http.client.HTTPResponse, size: int, url: str) -> bytes:
    try:
        return response.read1(size)
    except (OSError, http.client.HTTPException) as exc:
        raise SyncError(f"{url}: the connection dropped ({type(exc).__name__}: {exc}); nothing moved") from None


def _error(response: http.client.HTTPResponse, url: str, path: str) -> DataeError:
    """The typed error a refusing server sent (its JSON ``{"error", "kind"}``)."""
    data = response.read(1 << 16)
    try:
        answer = json.loads(data)
        if not isinstance(answer, dict):
            raise TypeError
        message = answer["error"]
    except (ValueError, KeyError, TypeError):
        answer = {}
        message = data.decode("utf-8", "replace").strip()[:200] or response.reason
    if response.status == 401:
        answer = {**answer, "kind": "AuthenticationError"}
    if response.status == 404 and not answer.get("kind"):
        message = f"not a datae server ({path} is not found)"
    return wire.error_of(answer, f"{url}: {message} (HTTP {response.status})")
