"""A remote served over HTTP by ``datae serve``: the client of ``docs/sync.md``'s HTTP
transport (``/sync/v1/...``), answering the calls of :class:`fstore.sync.remotes.Remote` and the merge-request methods of
:class:`fstore.Repository` (``/requests``), so a reviewer works on a server's requests
as on a local store's.

Everything streams: commits arrive as a sequence of msgpack frames, read as they come
and checked one by one (:func:`fstore.sync.protocol.check_payload`); a push sends its frames in a
chunked request body as the local store reads them; a clone writes the store file as it
arrives. A stream that ends without its closing ``{"end": N}`` frame was cut: a
:class:`~fstore.sync.protocol.SyncError`, and no ref has moved. Only the standard library's
``http.client`` is used.
"""

from __future__ import annotations

import http.client
import json
import os
from typing import Any, Iterable, Iterator
from urllib.parse import quote, urlsplit

import msgpack

from nstore.lmdbfile import DATA_FILE

from nstore.errors import DataeError

from . import merge_requests as _requests
from . import protocol as sync
from ..errors import MergeConflict, UnknownRefError
from .protocol import AuthenticationError, NotFastForwardError, RefMovedError, RefUpdate, SyncError, TamperedError

__all__ = ["HttpRemote", "FRAMES_TYPE", "ERROR_KINDS", "MAX_FRAME", "CHUNK"]

FRAMES_TYPE = "application/x-datae-commits"
MAX_FRAME = 1 << 30  # one commit's payload; msgpack's buffer for a frame never grows past it
CHUNK = 1 << 20
ERROR_KINDS: dict[str, type[DataeError]] = {cls.__name__: cls for cls in (
    SyncError, TamperedError, NotFastForwardError, AuthenticationError, RefMovedError, UnknownRefError, MergeConflict,
    _requests.RequestError, _requests.UnknownRequestError, _requests.RequestStateError, _requests.RequestRefusedError)}


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
        return self._json("GET", "/sync/v1/refs")

    def held_ids(self) -> set[str]:
        data = self._read_all(self._request("GET", "/sync/v1/ids"))
        if len(data) % 32:
            raise SyncError(f"{self.url}: the list of commit ids is cut ({len(data)} bytes)")
        return {data[i:i + 32].hex() for i in range(0, len(data), 32)}

    def send(self, wants: list[str], haves: set[str]) -> Iterator[dict]:
        body = json.dumps({"wants": wants, "haves": sorted(haves)}).encode()
        response = self._request("POST", "/sync/v1/fetch", body, {"Content-Type": "application/json"})
        return _frames(response, self.url)

    def accept_push(self, updates: list[RefUpdate], payloads: Iterable[dict], force: bool) -> None:
        header = {"updates": [[u.kind, u.name, u.old, u.new] for u in updates], "force": force}
        self._read_all(self._request("POST", "/sync/v1/push", _frame_stream(header, payloads),
                                     {"Content-Type": FRAMES_TYPE}))

    def copy_store(self, directory: str) -> None:
        response = self._request("GET", "/sync/v1/store")
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

    def request(self, n: int, *, limit: int = _requests.PREVIEW_LIMIT) -> dict:
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
        message, kind = answer["error"], answer.get("kind", "")
    except (ValueError, KeyError, TypeError):
        answer, kind = {}, ""
        message = data.decode("utf-8", "replace").strip()[:200] or response.reason
    if response.status == 401:
        kind = "AuthenticationError"
    if response.status == 404 and not kind:
        message = f"not a datae server ({path} is not found)"
    text = f"{url}: {message} (HTTP {response.status})"
    if kind == "RequestConflictError":
        return _requests.RequestConflictError(text, answer.get("conflicts", []))
    return ERROR_KINDS.get(kind, SyncError)(text)


def _frames(response: http.client.HTTPResponse, url: str) -> Iterator[dict]:
    """The commits of a fetch stream, each checked for shape; SyncError if the stream
    ends before its end frame or carries the server's error."""
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=MAX_FRAME)
    count = 0
    while chunk := _read(response, CHUNK, url):
        unpacker.feed(chunk)
        for frame in unpacker:
            if isinstance(frame, dict) and "end" in frame:
                if frame["end"] != count:
                    raise SyncError(f"{url}: the stream ended after {count} commits but says {frame['end']}")
                return
            if isinstance(frame, dict) and "error" in frame:
                raise ERROR_KINDS.get(frame.get("kind", ""), SyncError)(f"{url}: {frame['error']}")
            count += 1
            yield sync.check_payload(frame)
    raise SyncError(f"{url}: the stream was cut after {count} commits; nothing moved (fetch again to complete)")


def _frame_stream(header: dict, payloads: Iterable[dict]) -> Iterator[bytes]:
    """A push body: the header frame, one frame per commit, the end frame."""
    yield msgpack.packb(header, use_bin_type=True)
    count = 0
    for payload in payloads:
        yield sync.encode_payload(payload)
        count += 1
    yield msgpack.packb({"end": count})
