"""The bytes of ``docs/sync.md``'s HTTP transport (``/sync/v1``), for both ends: the HTTP
client (:mod:`fstore.sync.http_client`) and ``datae serve`` (:mod:`datae.server`, which
keeps only the routing) encode and decode through this module alone, so the two cannot
drift apart.

A **frame** is one msgpack object; frames follow each other with nothing between
(msgpack delimits itself). A commit stream (a fetch's answer, a push's body after its
header frame) is one frame per commit (:func:`encode_payload`), then the end frame
``{"end": N}``; a server that fails while streaming sends ``{"error", "kind"}`` as a
frame and stops. A stream without its end frame was cut: :func:`read_commits` raises
SyncError, and the caller moves no ref. Errors otherwise travel as the JSON body
``{"error": MESSAGE, "kind": CLASS}`` (:func:`error_answer`, :func:`error_of`).

>>> body = b"".join(push_frames([RefUpdate("branch", "main", None, "c1")], False, []))
>>> updates, force, commits = read_push(frames([body[:3], body[3:]], "the push"))
>>> updates, force, list(commits)
([RefUpdate(kind='branch', name='main', old=None, new='c1')], False, [])
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

import msgpack

from nstore.errors import DataeError

from ..errors import MergeConflict, UnknownRefError
from .merge_requests import (RequestConflictError, RequestError, RequestRefusedError, RequestStateError,
                             UnknownRequestError)
from .protocol import (PROTOCOL_VERSION, AuthenticationError, NotFastForwardError, RefMovedError, RefUpdate, SyncError,
                       TamperedError, check_payload)

__all__ = ["PATH", "FRAMES_TYPE", "IDS_TYPE", "MAX_FRAME", "ID_BYTES", "ERROR_KINDS", "encode_payload",
           "decode_payload", "commit_frames", "push_frames", "error_frame", "frames", "read_commits", "read_push",
           "encode_ids", "decode_ids", "encode_fetch", "decode_fetch", "error_answer", "error_of"]

PATH = f"/sync/v{PROTOCOL_VERSION}"
FRAMES_TYPE = "application/x-datae-commits"
IDS_TYPE = "application/octet-stream"
MAX_FRAME = 1 << 30  # one commit's payload; msgpack's buffer for a frame never grows past it
ID_BYTES = 32  # a commit id on the wire of GET /sync/v1/ids: its 64 hex digits as bytes
# The errors a client raises by the ``kind`` a server names (any other kind: SyncError).
ERROR_KINDS: dict[str, type[DataeError]] = {cls.__name__: cls for cls in (
    SyncError, TamperedError, NotFastForwardError, AuthenticationError, RefMovedError, UnknownRefError, MergeConflict,
    RequestError, UnknownRequestError, RequestStateError, RequestRefusedError)}


# -- one commit ---------------------------------------------------------------------------


def encode_payload(payload: dict) -> bytes:
    """One commit on the wire: a msgpack map, strings as *str*, records as *bin*
    (``docs/sync.md``, "One commit on the wire")."""
    return msgpack.packb(payload, use_bin_type=True)


def decode_payload(data: bytes) -> dict:
    """The inverse of :func:`encode_payload`, checking the shape (SyncError otherwise)."""
    try:
        payload = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise SyncError(f"a received commit is not msgpack: {exc}") from None
    return check_payload(payload)


# -- streams of frames --------------------------------------------------------------------


def commit_frames(payloads: Iterable[dict]) -> Iterator[bytes]:
    """A commit stream: one frame per commit, then the end frame counting them."""
    count = 0
    for payload in payloads:
        yield encode_payload(payload)
        count += 1
    yield msgpack.packb({"end": count})


def push_frames(updates: list[RefUpdate], force: bool, payloads: Iterable[dict]) -> Iterator[bytes]:
    """A push body: the header frame ``{"updates": [[KIND, NAME, OLD, NEW]...], "force"}``,
    then the commit stream."""
    yield msgpack.packb({"updates": [[u.kind, u.name, u.old, u.new] for u in updates], "force": force},
                       use_bin_type=True)
    yield from commit_frames(payloads)


def error_frame(exc: BaseException) -> bytes:
    """The last frame of a stream the server could not finish."""
    return msgpack.packb({"error": str(exc), "kind": type(exc).__name__})


def frames(chunks: Iterable[bytes], what: str) -> Iterator[Any]:
    """The frames in ``chunks`` (as they arrive: nothing waits for the whole body);
    SyncError naming ``what`` if one is not msgpack or grows past ``MAX_FRAME``."""
    unpacker = msgpack.Unpacker(raw=False, max_buffer_size=MAX_FRAME)
    count = 0
    try:
        for chunk in chunks:
            unpacker.feed(chunk)
            for frame in unpacker:
                count += 1
                yield frame
    except msgpack.BufferFull:
        raise SyncError(f"{what}: frame {count + 1} is larger than {MAX_FRAME} bytes") from None
    except (ValueError, msgpack.UnpackException) as exc:
        raise SyncError(f"{what}: frame {count + 1} is not msgpack: {exc}") from None


def read_commits(stream: Iterator[Any], what: str, *, from_server: bool = False) -> Iterator[dict]:
    """The commits of a commit stream, each checked for shape, up to its end frame;
    SyncError if the stream stops before it or its count differs. ``from_server``: an
    error frame raises the error it names (a client never sends one: from a client it is
    a malformed commit)."""
    count = 0
    for frame in stream:
        if isinstance(frame, dict) and "end" in frame:
            if frame["end"] != count:
                raise SyncError(f"{what} ended after {count} commits but says {frame['end']}")
            return
        if from_server and isinstance(frame, dict) and "error" in frame:
            raise error_of(frame, f"{what}: {frame['error']}")
        count += 1
        yield check_payload(frame)
    raise SyncError(f"{what} was cut after {count} commits; no ref moved")


def read_push(stream: Iterator[Any]) -> tuple[list[RefUpdate], bool, Iterator[dict]]:
    """A push body's header (the ref updates and ``force``) and its commits."""
    try:
        header = next(stream)
        updates = [RefUpdate(*update) for update in header["updates"]]
        force = bool(header.get("force", False))
    except (StopIteration, KeyError, TypeError, ValueError, AttributeError):
        raise SyncError("a push body starts with {updates, force}") from None
    return updates, force, read_commits(stream, "the push")


# -- ids and wants ------------------------------------------------------------------------


def encode_ids(ids: Iterable[str]) -> bytes:
    """``GET /sync/v1/ids``: the 32 bytes of every id, one after the other, sorted."""
    return b"".join(bytes.fromhex(i) for i in sorted(ids))


def decode_ids(data: bytes, what: str) -> set[str]:
    """The inverse of :func:`encode_ids`; SyncError if ``data`` is cut inside an id.

    >>> decode_ids(encode_ids(["ff" * 32, "00" * 32]), "x") == {"ff" * 32, "00" * 32}
    True
    """
    if len(data) % ID_BYTES:
        raise SyncError(f"{what}: the list of commit ids is cut ({len(data)} bytes)")
    return {data[i:i + ID_BYTES].hex() for i in range(0, len(data), ID_BYTES)}


def encode_fetch(wants: list[str], haves: set[str]) -> bytes:
    """``POST /sync/v1/fetch``'s body: JSON ``{"wants": [...], "haves": [...]}``."""
    return json.dumps({"wants": wants, "haves": sorted(haves)}).encode()


def decode_fetch(body: bytes) -> tuple[list[str], set[str]]:
    """The inverse of :func:`encode_fetch`; SyncError if it is not that shape.

    >>> decode_fetch(b'{"wants": ["a"]}')
    (['a'], set())
    """
    try:
        asked = json.loads(body)
    except ValueError:
        raise SyncError("the request body is not JSON") from None
    wants, haves = (asked.get("wants"), asked.get("haves", [])) if isinstance(asked, dict) else (None, None)
    if not _strings(wants) or not _strings(haves):
        raise SyncError('a fetch body is {"wants": [commit ids], "haves": [commit ids]}')
    return wants, set(haves)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# -- errors -------------------------------------------------------------------------------


def error_answer(exc: BaseException) -> dict:
    """The JSON body of a refusal: ``{"error": MESSAGE, "kind": CLASS}``, and a merge
    request's ``conflicts`` when merging it would conflict."""
    answer: dict[str, Any] = {"error": str(exc), "kind": type(exc).__name__}
    if isinstance(exc, RequestConflictError):
        answer["conflicts"] = exc.conflicts
    return answer


def error_of(answer: dict, message: str) -> DataeError:
    """The error a client raises for a server's refusal ``answer`` (its
    :func:`error_answer`), with ``message``.

    >>> error_of({"kind": "RefMovedError"}, "moved")
    RefMovedError('moved')
    """
    kind = answer.get("kind", "")
    if kind == "RequestConflictError":
        return RequestConflictError(message, answer.get("conflicts", []))
    cls = ERROR_KINDS.get(kind, SyncError)
    if issubclass(cls, MergeConflict):  # made from its conflicts, which stay on the server: the message names them
        error = cls([])
        error.args = (message,)
        return error
    return cls(message)
