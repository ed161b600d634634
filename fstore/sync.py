"""Sync between stores: clone, fetch, push and pull, commit by commit, each checked.

A commit travels as the inputs of its own id (``docs/sync.md``, protocol 1): its
parents' ids, message, author, time, state digest, counts, and its change records (the
terms themselves, never a store's term ids). So the receiver checks each commit before it
writes anything: the id must hash from what came, every parent must be known (sent
before, or held), and once its records are written the state digest it recomputes must
be the one sent. Commits are written in transactions of about ``BATCH_RECORDS`` records
(memory stays bounded however much travels) and the refs move in a last one, as git
writes objects before refs: an error, a dropped connection or a crash leaves every ref as
it was, the commits received so far unreachable (the next fetch does not send them
again; gc drops them if none does).
Only what the receiver lacks travels: the sender walks back from the wanted heads and
stops at commits the receiver has (git's have/want, with the whole set of haves).

The API is on :class:`fstore.Repository` (``remote_add``, ``fetch``, ``push``,
``pull``) and :func:`fstore.clone`.
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import msgpack

from nstore.errors import DataeError, PackError
from nstore.pack import decode_item, split

from .commits import commit_hash
from .layout import QUADS, TABLES
from .refs import BRANCH, REMOTE
from .requests import mirror_requests

if TYPE_CHECKING:
    from nstore.okvs import Transaction as OkvsTransaction

    from .repository import Repository
    from .storage import Storage

__all__ = ["PROTOCOL_VERSION", "SyncError", "TamperedError", "NotFastForwardError", "commit_payloads", "receive",
           "encode_payload", "decode_payload", "open_remote", "fetch", "push"]

PROTOCOL_VERSION = 1
BATCH_RECORDS = 100_000
_FIELDS = {"id": str, "parents": list, "message": str, "author": str, "time": str, "digest": str, "added": int,
           "removed": int, "records": list}
_TABLES_MARK = TABLES.mark


class SyncError(DataeError):
    """A sync could not happen (no store at the URL, histories that share nothing, a
    malformed payload); nothing changed on either side."""


class TamperedError(SyncError):
    """A received commit does not hash to its id, or its state to its digest."""


class NotFastForwardError(SyncError):
    """A push would drop the remote branch's commits (use ``force``)."""


# -- the payload of one commit ------------------------------------------------------------


def commit_payloads(storage: Storage, tx: OkvsTransaction, heads: Iterable[int], have: set[str]) -> Iterator[dict]:
    """The payload of every commit the ``heads`` reach whose id is not in ``have``, in
    significance order (parents first)."""
    commits = storage.commits
    wanted: set[int] = set()
    stack = list(heads)
    while stack:
        seq = stack.pop()
        if seq in wanted or commits.get(tx, seq).id in have:
            continue
        wanted.add(seq)
        stack.extend(commits.parents(tx, seq))
    for seq in sorted(wanted):
        commit = commits.get(tx, seq)
        yield {"id": commit.id, "parents": list(commit.parents), "message": commit.message, "author": commit.author,
               "time": commit.time.isoformat(), "digest": commit.digest, "added": commit.added,
               "removed": commit.removed, "records": storage.packed_records(tx, seq)}


def encode_payload(payload: dict) -> bytes:
    """One commit on the wire: a msgpack map (``docs/sync.md``)."""
    return msgpack.packb(payload, use_bin_type=True)


def decode_payload(data: bytes) -> dict:
    """The inverse of :func:`encode_payload`, checking the shape (SyncError otherwise)."""
    try:
        payload = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise SyncError(f"a received commit is not msgpack: {exc}") from None
    if not isinstance(payload, dict) or any(not isinstance(payload.get(name), kind) for name, kind in _FIELDS.items()):
        raise SyncError(f"a received commit lacks a field or has one of the wrong type: {str(payload)[:200]}")
    if not all(isinstance(record, bytes) and len(record) > 1 for record in payload["records"]):
        raise SyncError(f"commit {payload['id']}: a change record is not bytes")
    return payload


def receive(storage: Storage, tx: OkvsTransaction, payload: dict) -> int:
    """Check one commit and write it (parents first); returns its seq here. A commit held
    already is not written again."""
    claimed = payload["id"]
    try:
        time = _dt.datetime.fromisoformat(payload["time"])
    except ValueError:
        raise SyncError(f"commit {claimed}: time {payload['time']!r} is not ISO 8601") from None
    records = sorted(payload["records"])
    if commit_hash(payload["parents"], payload["message"], payload["author"], time, payload["digest"], records) != claimed:
        raise TamperedError(f"commit {claimed}: what was received does not hash to its id")
    known = storage.commits.seq_of(tx, claimed)
    if known is not None:
        return known
    parents = []
    for parent in payload["parents"]:
        seq = storage.commits.seq_of(tx, parent)
        if seq is None:
            raise SyncError(f"commit {claimed}: its parent {parent} was neither sent nor held")
        parents.append(seq)
    changes: dict[str, list] = {QUADS.name: [], TABLES.name: []}
    try:
        for record in records:
            space = TABLES.name if record[:1] == _TABLES_MARK else QUADS.name
            identity = record[len(_TABLES_MARK):-1] if space == TABLES.name else record[:-1]
            parts = split(identity, 0, 4)
            if len(parts) != 4 or record[-1:] not in (b"\x00", b"\x01"):
                raise SyncError(f"commit {claimed}: a change record is not a tuple of 4 and a state")
            changes[space].append((tuple(map(decode_item, parts)), record[-1:] == b"\x01", parts))
    except PackError as exc:
        raise SyncError(f"commit {claimed}: a change record is malformed: {exc}") from None
    seq, written, _ = storage.record_commit(tx, parents, changes, payload["message"], payload["author"], time,
                                            payload["added"], payload["removed"])
    if written != claimed:  # the records hashed to the id, so the state digest differs
        raise TamperedError(f"commit {claimed}: its records do not give the state digest it claims")
    return seq


# -- remotes --------------------------------------------------------------------------------


def open_remote(url: str, opener: Callable[[str], Repository]) -> Repository:
    """The store a remote URL names, opened with ``opener`` (the Repository class): a
    directory holding a store (``DIR/.datae`` or ``DIR`` itself). ``http://`` remotes need
    ``datae serve`` (not in this version)."""
    if "://" in url and not url.startswith("file://"):
        raise SyncError(f"remote {url!r}: only stores on a path are supported in this version")
    path = url.removeprefix("file://")
    for candidate in (os.path.join(path, ".datae"), path):
        if os.path.isfile(os.path.join(candidate, "data.mdb")):
            return opener(candidate)
    raise SyncError(f"remote {url!r}: no datae store there")


def _transfer(source: Storage, target: Storage, heads: list[int]) -> dict[str, int]:
    """Send what ``target`` lacks of the commits ``heads`` reach in ``source`` (see the
    module doc); returns the target's seq of each head's id."""
    with target.read() as tx:
        have = {record["id"] for _, record in target.commits.all(tx)}
    with source.read() as source_tx:
        payloads = commit_payloads(source, source_tx, heads, have)
        head_ids = [source.commits.get(source_tx, seq).id for seq in heads]
        done = False
        while not done:
            with target.write() as tx:
                written = 0
                for payload in payloads:
                    # Through the wire format, as over HTTP: the receiver checks what it parses.
                    receive(target, tx, decode_payload(encode_payload(payload)))
                    written += len(payload["records"]) + 1
                    if written >= BATCH_RECORDS:
                        break
                else:
                    done = True
    with target.read() as tx:
        return {commit_id: target.commits.seq_of(tx, commit_id) for commit_id in head_ids}


def fetch(repo: Repository, remote: str) -> dict[str, str | None]:
    """Bring ``remote``'s commits here and set the remote-tracking branches
    ``remote/BRANCH`` to its heads; returns them (name -> id)."""
    other = open_remote(repo.remote_url(remote), type(repo))
    try:
        with other.storage.read() as tx:
            branches = dict(other.storage.refs.items(tx, BRANCH))
            ids = {name: other.storage.commit_id(tx, seq) for name, seq in branches.items()}
        sent = _transfer(other.storage, repo.storage, [seq for seq in branches.values() if seq is not None])
        with repo.storage.write() as tx:
            for name, _ in list(repo.storage.refs.items(tx, REMOTE)):
                if name.startswith(remote + "/") and name[len(remote) + 1:] not in branches:
                    repo.storage.refs.delete(tx, REMOTE, name, log=False)  # pruned: the remote deleted it
            for name, commit_id in ids.items():
                repo.storage.refs.set(tx, REMOTE, f"{remote}/{name}", None if commit_id is None else sent[commit_id])
        mirror_requests(repo, other, remote)  # "fetched with branches": read-only copies
    finally:
        other.close()
    return {f"{remote}/{name}": commit_id for name, commit_id in ids.items()}


def push(repo: Repository, remote: str, branch: str, *, force: bool = False) -> str | None:
    """Send ``branch`` to ``remote`` and move the remote's branch of that name to it (a
    fast-forward unless ``force``); returns the id pushed."""
    other = open_remote(repo.remote_url(remote), type(repo))
    try:
        with repo.storage.read() as tx:
            local = repo.storage.refs.head(tx, branch)
            local_id = repo.storage.commit_id(tx, local)
        if local is None:
            raise SyncError(f"branch {branch!r} has no commits to push")
        with other.storage.read() as tx:
            exists, theirs = other.storage.refs.get(tx, BRANCH, branch)
            their_id = other.storage.commit_id(tx, theirs)
        if their_id is not None and not force:  # refused before anything travels
            with repo.storage.read() as tx:
                known = repo.storage.commits.seq_of(tx, their_id)
                forward = known is not None and known in repo.storage.commits.ancestors(tx, local)
            if not forward:
                raise NotFastForwardError(f"push of {branch!r} to {remote!r} refused: the remote's {branch} "
                                          f"({their_id[:10]}) has commits {branch} here lacks; fetch and merge, or force")
        ours_there = _transfer(repo.storage, other.storage, [local])[local_id]
        with other.storage.write() as tx:
            exists, now = other.storage.refs.get(tx, BRANCH, branch)
            if now != theirs:
                raise SyncError(f"push of {branch!r} to {remote!r}: the remote's {branch} moved meanwhile; try again")
            if not exists:
                other.storage.create_branch(tx, branch, ours_there, None)
            elif theirs != ours_there:
                forward = theirs is None or theirs in other.storage.commits.ancestors(tx, ours_there)
                if not forward:  # forced: the commits it drops stay in the remote's reflog
                    other.storage.refs.log(tx, BRANCH, branch, theirs)
                other.storage.fast_forward(tx, branch, theirs if forward else None, ours_there)
        with repo.storage.write() as tx:
            repo.storage.refs.set(tx, REMOTE, f"{remote}/{branch}", repo.storage.commits.seq_of(tx, local_id))
    finally:
        other.close()
    return local_id
