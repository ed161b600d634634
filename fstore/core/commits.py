"""Commits: their records, their content-addressed ids, and the DAG between them.

A commit is stored under its *significance* ``seq``: the order in which commits were made,
which is a topological order of the DAG (parents always come first). Its id is the sha256
of its parents' ids, message, author, time, the digest of its whole state
(:mod:`fstore.core.digest`) and every change record it wrote, so the ids form a Merkle DAG
that :meth:`fstore.Repository.verify` can recheck.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass
from itertools import islice
from typing import Iterable, Iterator

import msgpack

from nstore._pack import framed
from nstore.errors import CorruptStoreError
from nstore.okvs import Transaction, prefix_end
from nstore.pack import pack, unpack

from ..errors import AmbiguousRefError, UnknownRefError

__all__ = ["Commit", "CommitStore", "CommitHasher", "commit_hash", "MIN_PREFIX"]

MIN_PREFIX = 6
_HEX = re.compile(r"[0-9a-f]+")
_HASH_MAGIC = b"datae-commit/2"
_FRAMED = 1 << 16  # records framed into one buffer per hash update


@dataclass(frozen=True)
class Commit:
    """One commit: ``added`` / ``removed`` count quads relative to the first parent;
    ``digest`` is the state digest of everything it holds (:mod:`fstore.core.digest`, 64 hex
    digits): equal in any two stores holding the same quads and table rows."""

    id: str
    parents: tuple[str, ...]
    message: str
    author: str
    time: _dt.datetime
    added: int
    removed: int
    seq: int
    digest: str

    @property
    def short_id(self) -> str:
        return self.id[:10]


def commit_hash(parent_ids: Iterable[str], message: str, author: str, time: _dt.datetime, state_digest: str,
                records: Iterable[bytes]) -> str:
    """The id of a commit: sha256 over a msgpack header (its state digest included) and its
    change records in key order (``docs/format.md``, "Commit ids")."""
    hasher = CommitHasher(parent_ids, message, author, time, state_digest)
    hasher.update(records)
    return hasher.hexdigest()


class CommitHasher:
    """:func:`commit_hash` fed its records a batch at a time (a commit too large to hold
    them all writes and hashes them chunk by chunk), in key order across the batches.

    >>> when = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)
    >>> hasher = CommitHasher([], "m", "a", when, "00" * 32)
    >>> hasher.update([b"\\x40urn:a\\x00\\x01"]); hasher.update([b"\\x40urn:b\\x00\\x01"])
    >>> hasher.hexdigest() == commit_hash([], "m", "a", when, "00" * 32, [b"\\x40urn:a\\x00\\x01", b"\\x40urn:b\\x00\\x01"])
    True
    """

    def __init__(self, parent_ids: Iterable[str], message: str, author: str, time: _dt.datetime,
                 state_digest: str) -> None:
        header = msgpack.packb([_HASH_MAGIC, list(parent_ids), message, author, time.isoformat(), state_digest])
        self._sha = hashlib.sha256()
        self._sha.update(len(header).to_bytes(8, "big"))
        self._sha.update(header)

    def update(self, records: Iterable[bytes], mark: bytes = b"") -> None:
        """Hash the next records (each after every record hashed before it), each preceded
        by ``mark`` (its space's): framed in C a batch at a time, one update a batch."""
        source = iter(records)
        while batch := list(islice(source, _FRAMED)):
            self._sha.update(framed(batch, mark))

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


_FIELDS = {"id": str, "parents": list, "message": str, "author": str, "time": str, "added": int, "removed": int,
           "digest": str}


def _decoded(seq: int, raw: bytes) -> dict:
    """A stored commit record, checked: a damaged one is a CorruptStoreError naming it."""
    try:
        record = msgpack.unpackb(raw)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CorruptStoreError(f"commit #{seq}: its record (key {pack('c', seq).hex()}) is not msgpack: {exc}") from None
    if not isinstance(record, dict) or any(not isinstance(record.get(name), kind) for name, kind in _FIELDS.items()):
        raise CorruptStoreError(f"commit #{seq}: its record (key {pack('c', seq).hex()}) lacks a field or has one of "
                                f"the wrong type: {record!r:.200}")
    if not all(type(parent) is int for parent in record["parents"]) or not _is_time(record["time"]):
        raise CorruptStoreError(f"commit #{seq}: its record (key {pack('c', seq).hex()}) has parents that are not "
                                f"commit numbers or a time that is not ISO 8601: {record!r:.200}")
    return record


def _is_time(text: str) -> bool:
    try:
        _dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


_CACHED_ANCESTRIES = 32


class CommitStore:
    """Commit records: ``pack("c", seq) -> msgpack`` and ``pack("i", hex id) -> pack(seq)``."""

    def __init__(self) -> None:
        # LRU, bounded: an ancestry holds up to every commit, and a long-lived store (a
        # server receiving merges, verify over every merge) asks for one per merge
        self._ancestors: OrderedDict[tuple[int, str], frozenset[int]] = OrderedDict()

    def next_seq(self, tx: Transaction) -> int:
        start = pack("c")
        last = next(tx.range(start, prefix_end(start), reverse=True, limit=1), None)
        return 1 if last is None else unpack(last[0])[1] + 1

    def write(self, tx: Transaction, seq: int, parents: list[int], commit_id: str, message: str,
              author: str, time: _dt.datetime, added: int, removed: int, state_digest: str) -> None:
        record = {"id": commit_id, "parents": parents, "message": message, "author": author,
                  "time": time.isoformat(), "added": added, "removed": removed, "digest": state_digest}
        tx.set(pack("c", seq), msgpack.packb(record))
        tx.set(pack("i", commit_id), pack(seq))

    def delete(self, tx: Transaction, seq: int, commit_id: str) -> None:
        """Forget commit ``seq`` (for gc: nothing reaches it)."""
        tx.delete(pack("c", seq))
        tx.delete(pack("i", commit_id))
        self._ancestors.clear()

    def _record(self, tx: Transaction, seq: int) -> dict:
        raw = tx.get(pack("c", seq))
        if raw is None:
            raise UnknownRefError(f"no commit with sequence number {seq}")
        return _decoded(seq, raw)

    def get(self, tx: Transaction, seq: int) -> Commit:
        """The commit made ``seq``-th."""
        record = self._record(tx, seq)
        parents = tuple(self._record(tx, p)["id"] for p in record["parents"])
        return Commit(record["id"], parents, record["message"], record["author"],
                      _dt.datetime.fromisoformat(record["time"]), record["added"], record["removed"], seq,
                      record["digest"])

    def id_of(self, tx: Transaction, seq: int) -> str:
        """The id of commit ``seq`` (``UnknownRefError`` if there is none)."""
        return self._record(tx, seq)["id"]

    def parents(self, tx: Transaction, seq: int) -> list[int]:
        return self._record(tx, seq)["parents"]

    def seq_of(self, tx: Transaction, commit_id: str) -> int | None:
        raw = tx.get(pack("i", commit_id))
        return None if raw is None else unpack(raw)[0]

    def all(self, tx: Transaction) -> Iterator[tuple[int, dict]]:
        """Every commit record in significance order."""
        start = pack("c")
        for key, value in tx.range(start, prefix_end(start)):
            seq = unpack(key)[1]
            yield seq, _decoded(seq, value)

    def index_problems(self, tx: Transaction, commits: int) -> list[str]:
        """The id index must hold one entry per commit (verify checks that each commit's
        id leads to it; an extra entry would answer a prefix lookup with no commit)."""
        start = pack("i")
        entries = sum(1 for _ in tx.range(start, prefix_end(start)))
        if entries != commits:
            return [f"the commit id index holds {entries} ids for {commits} commits"]
        return []

    def lookup_prefix(self, tx: Transaction, text: str) -> int | None:
        """The commit whose id is ``text`` or starts with it (>= 6 hex digits), or None."""
        text = text.lower()
        if len(text) < MIN_PREFIX or not _HEX.fullmatch(text):
            return None
        if len(text) == 64:
            return self.seq_of(tx, text)
        start = pack("i") + b"\x02" + text.encode("ascii")
        matches = list(tx.range(start, prefix_end(start), limit=10))
        if len(matches) > 1:
            ids = ", ".join(unpack(k)[1][:12] for k, _ in matches)
            raise AmbiguousRefError(f"commit prefix {text!r} is ambiguous: {ids}")
        return unpack(matches[0][1])[0] if matches else None

    def ancestors(self, tx: Transaction, seq: int | None) -> frozenset[int]:
        """``seq`` and every commit it descends from (empty for None: no commits)."""
        if seq is None:
            return frozenset()
        commit_id = self._record(tx, seq)["id"]
        key = (seq, commit_id)
        cached = self._ancestors.get(key)
        if cached is not None:
            self._ancestors.move_to_end(key)
            return cached
        seen = {seq}
        stack = [seq]
        while stack:
            current = stack.pop()
            for parent in self._record(tx, current)["parents"]:
                if parent not in seen:
                    known = self._ancestors.get((parent, self._record(tx, parent)["id"]))
                    if known is not None:
                        seen |= known
                    else:
                        seen.add(parent)
                        stack.append(parent)
        result = frozenset(seen)
        self._ancestors[key] = result
        if len(self._ancestors) > _CACHED_ANCESTRIES:
            self._ancestors.popitem(last=False)
        return result

    def merge_base(self, tx: Transaction, a: int, b: int) -> int | None:
        """The most significant common ancestor of two commits (a lowest common ancestor)."""
        common = self.ancestors(tx, a) & self.ancestors(tx, b)
        return max(common) if common else None
