"""The sync protocol, both sides: what a store sends, and how a store receives.

A commit travels as the inputs of its own id (``docs/sync.md``, protocol 1): its
parents' ids, message, author, time, state digest and its change records (the terms
themselves, never a store's term ids), and its counts. So the receiver checks each
commit before it writes anything: the id must hash from what came, every parent must be
known (sent before, or held), and once its records are written the state digest it
recomputes must be the one sent. The counts (``added``, ``removed``) are the one thing
the id does not cover, so they must be what the records give (:mod:`fstore.core.counts`):
what a store keeps of a received commit is covered by its id or recomputed here. Commits
are written in transactions of about ``BATCH_RECORDS`` records (memory stays bounded
however much travels) and refs move in a last one, as git writes objects before refs: an
error, a dropped connection or a crash leaves every ref as it was, the commits received
so far unreachable (the next fetch does not send them again; gc drops them if none
does).
Only what the receiver lacks travels: the sender walks back from the wanted heads and
stops at commits the receiver has (git's have/want, with the whole set of haves).

The serving side is :func:`advertise`, :func:`held_ids`, :func:`send` and
:func:`accept_push`; a store on a path and ``datae serve`` both answer through them. The
fetching and pushing side is :mod:`fstore.sync.remotes`; the bytes a payload travels as
are :mod:`fstore.sync.wire`'s.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from nstore.errors import DataeError, PackError
from nstore.pack import decode_item, split

from ..core.commits import commit_hash
from ..core.counts import record_counts
from ..core.layout import QUADS, TABLES
from ..core.refs import BRANCH, TAG, check_ref_name

if TYPE_CHECKING:
    from ..core.storage import Snapshot, Storage, Writer

__all__ = ["PROTOCOL_VERSION", "SyncError", "TamperedError", "NotFastForwardError", "AuthenticationError",
           "RefMovedError",
           "commit_payloads", "receive", "check_payload", "advertise", "held_ids",
           "send", "held_seqs", "receive_all", "accept_push", "RefUpdate"]

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


class RefMovedError(SyncError):
    """A ref a push moves is no longer where the pusher saw it (fetch and try again)."""


class AuthenticationError(SyncError):
    """A server refused the request: no token, or a wrong one."""


# -- the payload of one commit ------------------------------------------------------------


def commit_payloads(snapshot: Snapshot, heads: Iterable[int], have: set[str]) -> Iterator[dict]:
    """The payload of every commit the ``heads`` reach whose id is not in ``have``, in
    significance order (parents first)."""
    wanted: set[int] = set()
    stack = list(heads)
    while stack:
        seq = stack.pop()
        if seq in wanted or snapshot.commit(seq).id in have:
            continue
        wanted.add(seq)
        stack.extend(snapshot.parents(seq))
    for seq in sorted(wanted):
        commit = snapshot.commit(seq)
        yield {"id": commit.id, "parents": list(commit.parents), "message": commit.message, "author": commit.author,
               "time": commit.time.isoformat(), "digest": commit.digest, "added": commit.added,
               "removed": commit.removed, "records": snapshot.packed_records(seq)}


def check_payload(payload: Any) -> dict:
    """``payload`` if it has every field of a commit with its type, else SyncError."""
    # type() not isinstance(): bool is an int subclass, and True stored as a count would pass verify (1 == True)
    if not isinstance(payload, dict):
        raise SyncError(f"a received commit is not a map of fields: {str(payload)[:200]}")
    wrong = next((name for name, kind in _FIELDS.items() if type(payload.get(name)) is not kind), None)
    if wrong is not None:
        raise SyncError(f"a received commit lacks a field or has one of the wrong type: field {wrong!r} must be "
                        f"{_FIELDS[wrong].__name__}: {str(payload)[:200]}")
    if payload["added"] < 0 or payload["removed"] < 0:
        raise SyncError(f"commit {payload['id']}: a negative count (added {payload['added']}, "
                        f"removed {payload['removed']})")
    if not all(isinstance(record, bytes) and len(record) > 1 for record in payload["records"]):
        raise SyncError(f"commit {payload['id']}: a change record is not bytes")
    return payload


def receive(writer: Writer, payload: dict) -> int:
    """Check one commit and write it (parents first); returns its seq here. A commit held
    already is not written again."""
    claimed = check_payload(payload)["id"]
    try:
        time = _dt.datetime.fromisoformat(payload["time"])
    except ValueError:
        raise SyncError(f"commit {claimed}: time {payload['time']!r} is not ISO 8601") from None
    records = sorted(payload["records"])
    if commit_hash(payload["parents"], payload["message"], payload["author"], time, payload["digest"], records) != claimed:
        raise TamperedError(f"commit {claimed}: what was received does not hash to its id")
    known = writer.seq_of(claimed)
    if known is not None:
        return known
    parents = []
    for parent in payload["parents"]:
        seq = writer.seq_of(parent)
        if seq is None:
            raise SyncError(f"commit {claimed}: its parent {parent} was neither sent nor held")
        parents.append(seq)
    changes: dict[str, list] = {QUADS.name: [], TABLES.name: []}
    values: dict[bytes, Any] = {}  # each distinct term decoded (and so checked) once

    def value(part: bytes) -> Any:
        found = values.get(part, values)
        if found is values:
            found = values[part] = decode_item(part)
        return found

    try:
        for record in records:
            space = TABLES.name if record[:1] == _TABLES_MARK else QUADS.name
            identity = record[len(_TABLES_MARK):-1] if space == TABLES.name else record[:-1]
            parts = split(identity, 0, 4)
            if len(parts) != 4 or record[-1:] not in (b"\x00", b"\x01"):
                raise SyncError(f"commit {claimed}: a change record is not a tuple of 4 and a state")
            changes[space].append((tuple(map(value, parts)), record[-1:] == b"\x01", parts))
    except PackError as exc:
        raise SyncError(f"commit {claimed}: a change record is malformed: {exc}") from None
    claimed_counts = (payload["added"], payload["removed"])
    if len(parents) < 2:  # a merge's counts need its records in place (see fstore.core.counts)
        _check_records_change(writer, claimed, parents[0] if parents else None, changes)
        _check_counts(claimed, claimed_counts, record_counts(records))
    merge = len(parents) >= 2  # its counts come from the pass that computes its digest
    seq, written, _ = writer.record_commit(parents, changes, payload["message"], payload["author"], time,
                                           *((None, None) if merge else claimed_counts))
    if written != claimed:  # the records hashed to the id, so the state digest or the time's form differs
        digest = writer.commit(seq).digest
        if digest != payload["digest"]:
            raise TamperedError(f"commit {claimed}: its records do not give the state digest it claims "
                                f"({payload['digest']}; they give {digest})")
        raise TamperedError(f"commit {claimed}: its time {payload['time']!r} is not in UTC as ids hash it")
    if merge:
        stored = writer.commit(seq)
        _check_counts(claimed, claimed_counts, (stored.added, stored.removed))
    return seq


def _check_records_change(snapshot: Snapshot, claimed: str, parent: int | None, changes: dict[str, list]) -> None:
    """Each record of a commit with at most one parent must change its tuple's state at
    the parent, as a transaction writes only such records: the state digest and the
    counts are computed from the records on that premise (the tuples' own records read
    in one batch per space: :meth:`Storage.alive_many`)."""
    for space, found in changes.items():
        if not found:
            continue
        quads, alive, parts = zip(*found)
        before = snapshot.alive_many(parent, space, quads, parts)
        for quad, now, was in zip(quads, alive, before):
            if was == now:
                state = "alive" if now else "absent"
                raise TamperedError(f"commit {claimed}: its record of {space} tuple {quad!r} changes nothing "
                                    f"(the tuple is {state} at its parent already)")


def _check_counts(claimed: str, sent: tuple[int, int], recomputed: tuple[int, int]) -> None:
    """The counts are not in the id, so a receiver stores only counts it recomputed
    (``check_payload`` has made sure they are non-negative ints)."""
    if sent != recomputed:
        raise TamperedError(f"commit {claimed}: it claims to add {sent[0]} and remove {sent[1]} tuples, but its "
                            f"records add {recomputed[0]} and remove {recomputed[1]}")


# -- the serving side -------------------------------------------------------------------


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push moves: ``kind`` ``"branch"`` or ``"tag"``, from ``old`` (the id the
    pusher saw there, None: absent) to ``new``."""

    kind: str
    name: str
    old: str | None
    new: str


_KINDS = {"branch": BRANCH, "tag": TAG}


def advertise(storage: Storage) -> dict:
    """What a store offers: its protocol, current branch, and branch and tag heads (ids)."""
    with storage.read() as snapshot:
        return {"protocol": PROTOCOL_VERSION, "current": snapshot.current_branch(),
                "branches": {name: snapshot.commit_id(seq) for name, seq in snapshot.refs(BRANCH)},
                "tags": {name: snapshot.commit_id(seq) for name, seq in snapshot.refs(TAG)}}


def held_ids(storage: Storage) -> set[str]:
    """The id of every commit a store holds: its haves."""
    with storage.read() as snapshot:
        return {record["id"] for _, record in snapshot.all_commits()}


def send(storage: Storage, wants: Iterable[str], haves: set[str]) -> Iterator[dict]:
    """The payloads of the commits ``wants`` reach that ``haves`` lacks, parents first,
    read in one read transaction (iterate to the end or close the iterator)."""
    with storage.read() as snapshot:
        yield from commit_payloads(snapshot, held_seqs(snapshot, wants), haves)


def held_seqs(snapshot: Snapshot, ids: Iterable[str]) -> list[int]:
    """The seq of each commit id here; SyncError naming the first one not held."""
    seqs = []
    for commit_id in ids:
        seq = snapshot.seq_of(commit_id)
        if seq is None:
            raise SyncError(f"commit {commit_id} is not in this store")
        seqs.append(seq)
    return seqs


def receive_all(storage: Storage, payloads: Iterable[dict]) -> int:
    """Check and write every payload, in transactions of about ``BATCH_RECORDS`` records;
    returns how many commits came. No ref moves."""
    payloads = iter(payloads)
    count, done = 0, False
    while not done:
        with storage.write() as writer:
            written = 0
            for payload in payloads:
                receive(writer, payload)
                count += 1
                written += len(payload["records"]) + 1
                if written >= BATCH_RECORDS:
                    break
            else:
                done = True
    return count


def accept_push(storage: Storage, updates: list[RefUpdate], payloads: Iterable[dict], *, force: bool = False) -> None:
    """The receiving end of a push: write the commits, then move every ref in one
    transaction. Each ref must still be at the ``old`` the pusher saw, and a branch must
    move forward (or ``force``: the commit it leaves goes to the reflog); a tag is never
    moved without ``force``. Nothing moves if one update is refused."""
    _check_new_names(storage, updates)
    receive_all(storage, payloads)
    with storage.write() as writer:
        for update in updates:
            _move_ref(writer, update, force)


def _check_new_names(storage: Storage, updates: list[RefUpdate]) -> None:
    """Refuse a push that would create a ref of an invalid name before anything is
    received, so that it stores nothing (a ref already here moves whatever its name)."""
    with storage.read() as snapshot:
        for update in updates:
            kind = _KINDS.get(update.kind)
            if kind is not None and not snapshot.ref(kind, update.name)[0]:
                check_ref_name(update.name, what=f"a pushed {update.kind}")


def _move_ref(writer: Writer, update: RefUpdate, force: bool) -> None:
    kind = _KINDS.get(update.kind)
    if kind is None:
        raise SyncError(f"a push names ref kind {update.kind!r} (branch or tag)")
    new = writer.seq_of(update.new)
    if new is None:
        raise SyncError(f"push of {update.kind} {update.name!r}: commit {update.new} was not sent")
    exists, now = writer.ref(kind, update.name)
    if writer.commit_id(now) != update.old:  # absent and empty (a new store's main) both have no commit
        raise RefMovedError(f"push of {update.kind} {update.name!r}: it moved here meanwhile "
                            f"(now {(writer.commit_id(now) or 'absent')[:10]}); fetch and try again")
    if not exists:
        if kind == BRANCH:
            writer.create_branch(update.name, new, None)
        else:
            writer.create_ref(TAG, update.name, new)
        return
    if now == new:
        return
    forward = kind == BRANCH and (now is None or now in writer.ancestors(new))
    if not forward and not force:
        why = (f"the branch here ({update.old[:10]}) has commits the pushed one lacks; fetch and merge, or force"
               if kind == BRANCH else f"the tag is at {update.old[:10]} here, and a tag moves only by force")
        raise NotFastForwardError(f"push of {update.kind} {update.name!r} refused: {why}")
    if not forward and now is not None:  # forced: the commits it drops stay in the reflog
        writer.log_ref(kind, update.name, now)
    if kind == BRANCH:
        writer.fast_forward(update.name, now if forward else None, new)
    else:
        writer.set_ref(TAG, update.name, new)
