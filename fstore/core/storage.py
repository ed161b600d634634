"""The storage of a repository: the one owner of its keys (``fstore.core.layout``, and
``docs/format.md``). It opens the LMDB environment, checks the format, and holds the parts
every other module reads and writes through: the commits, the refs, the term dictionary and
the two versioned spaces (quads and tables), each with its materialised heads.

Reads happen through a :class:`Snapshot` (``storage.read()``, one
read transaction) whose ``reader(seq)`` gives the quads (or table tuples) alive at a
commit; writes through the :class:`Writer` (``storage.write()``),
whose ``write_commit`` records a commit's changes in every space, its id, and the branch
move. The methods here that take an LMDB transaction are what the handles bind.

>>> import tempfile
>>> storage = Storage(tempfile.mkdtemp())
>>> with storage.write() as writer:
...     writer.create_branch("dev", None, None)
>>> with storage.read() as snapshot:
...     snapshot.resolve("dev"), snapshot.current_branch(), sorted(snapshot.branches())
(None, 'main', ['dev', 'main'])
>>> [space.space.name for space in storage.spaces]
['quads', 'tables']
>>> storage.close()
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections import Counter
from typing import Any, Iterable, Iterator, Protocol, Sequence, runtime_checkable

import msgpack

from nstore import Var
from nstore import okvs as _okvs
from nstore.dictionary import Dictionary
from nstore.blocks import Blocks
from nstore.errors import DataeError, FormatVersionError
from nstore.lmdbfile import DATA_FILE
from nstore.okvs import Transaction as OkvsTransaction, prefix_end
from nstore.pack import pack, unpack

from .commits import Commit, CommitHasher, CommitStore, commit_hash
from .digest import EMPTY, as_hex, from_hex, moved, moved_by_records
from ..errors import AmbiguousRefError, UnknownRefError
from .heads import ItemChanges, Reader
from .history import ALIVE, History, Quad, rechunked, winner
from .layout import (CURRENT_BRANCH_KEY, DICTIONARY, FORMAT_KEY, MERGE_CONFLICT, MERGE_PREFIX, MERGE_RESOLUTION,
                     MERGE_STATE_KEY, QUADS, REQUEST, REQUEST_MIRROR, TABLES)
from .refs import BRANCH, REMOTE, TAG, Refs, kind_name, qualified, qualify
from .tables_space import TablesHistory

__all__ = ["Storage", "Snapshot", "Writer", "Opened", "Changes", "ChangeStream", "FORMAT_VERSION", "DEFAULT_BRANCH"]

FORMAT_VERSION = 6
UPGRADABLE = frozenset({3, 4, 5})
"""The older formats ``datae upgrade`` rewrites into this one (``fstore.ops.upgrade``)."""
DEFAULT_BRANCH = "main"
_ANCESTRY_SUFFIX = re.compile(r"(?:[~^]\d*)*$")
_FULL_ID = re.compile(r"[0-9a-fA-F]{64}")
_SEVERAL_COMMITS = -1  # no commit's seq: a prefix of several ids
_TREE_ATTEMPTS = 5  # new read transactions tried when two writes already replaced a state's meta page
# Changes of a streamed commit written (History.write) and read back (_move_streamed) at a time:
# the bound of its memory (each index's keys go to sorted runs merged once, so the chunk's size
# costs nothing there; the dictionary's keys are merged a chunk at a time).
STREAM_CHUNK = 250_000


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class Storage:
    """A repository's keys, in the LMDB environment at ``path`` (created if missing)."""

    def __init__(self, path: str | os.PathLike, *, map_size: int | None = None, plugins: Any = None) -> None:
        self.path = os.fspath(path)
        # What the store's plug-ins registered (fstore.plugins.Plugins, given by whoever
        # opens it): the graph mergers that merges and reverts ask through a handle.
        self.plugins = plugins
        self.okvs = _okvs.open(self.path, map_size=map_size)
        self.commits = CommitStore()
        dictionary = Dictionary(DICTIONARY, blocks=True)
        self.quads = History(self.okvs, self.commits, dictionary, QUADS)
        self.tables = TablesHistory(self.okvs, self.commits, dictionary, TABLES)
        self.spaces = (self.quads, self.tables)
        self._by_name = {space.space.name: space for space in self.spaces}
        self.refs = Refs(self.commits)
        try:
            self._initialise()
        except BaseException:
            self.okvs.close()
            raise

    def _initialise(self) -> None:
        with self.okvs.transaction() as tx:
            version = tx.get(FORMAT_KEY)
        if version is None:
            with self.okvs.transaction(write=True) as tx:
                if tx.get(FORMAT_KEY) is None:
                    tx.set(FORMAT_KEY, str(FORMAT_VERSION).encode())
                    self.refs.set(tx, BRANCH, DEFAULT_BRANCH, None)
        elif version != str(FORMAT_VERSION).encode():
            hint = "; `datae upgrade` rewrites it in this format" if version in {str(v).encode() for v in UPGRADABLE} else ""
            raise FormatVersionError(
                f"{self.path} holds datae format {version.decode(errors='replace')}; this datae reads format {FORMAT_VERSION}{hint}"
            )

    def close(self) -> None:
        self.okvs.close()

    def read(self) -> Snapshot:
        """A read transaction: one consistent state for every read made through it."""
        return Snapshot(self, self.okvs.transaction())

    def write(self) -> Writer:
        """The write transaction (one at a time); nothing is visible until it commits."""
        return Writer(self, self.okvs.transaction(write=True))

    def reader(self, tx: OkvsTransaction, seq: int | None, space: str = QUADS.name) -> Reader:
        """What is alive at commit ``seq`` in ``space`` (see :class:`fstore.core.heads.Reader`)."""
        return self._by_name[space].reader(tx, seq)

    def deciding_record(self, tx: OkvsTransaction, seq: int | None, quad: Any,
                        space: str = QUADS.name) -> tuple[int, bool] | None:
        """``(commit seq, alive)`` of the record that gives ``quad`` its state at commit
        ``seq`` (the winner among ``seq``'s ancestors; None: never recorded there): one
        look-up of the tuple's records, where :meth:`reader` at a commit that is no branch
        head replays every commit since its nearest snapshot."""
        return winner(self._by_name[space].records(tx, quad), self.commits.ancestors(tx, seq))

    def was_alive(self, tx: OkvsTransaction, seq: int | None, space: str, quad: Any) -> bool:
        """Whether ``quad`` of ``space`` is alive at commit ``seq`` (:meth:`deciding_record`)."""
        best = None if seq is None else self.deciding_record(tx, seq, quad, space)
        return best is not None and best[1]

    def alive_many(self, tx: OkvsTransaction, seq: int | None, space: str, quads: Sequence[Any],
                   parts: Sequence[Sequence[bytes]]) -> list[bool]:
        """:meth:`was_alive` of many tuples of ``space``, each given with its packed parts
        (:meth:`fstore.core.history.History.alive_many`: one batch, one sorted walk)."""
        return self._by_name[space].alive_many(tx, self.commits.ancestors(tx, seq), quads, parts)

    def current_branch(self, tx: OkvsTransaction) -> str:
        """The branch commands work on when none is named (git's HEAD; ``main`` until
        another is switched to)."""
        name = tx.get(CURRENT_BRANCH_KEY)
        return DEFAULT_BRANCH if name is None else name.decode("utf-8")

    def set_current_branch(self, tx: OkvsTransaction, branch: str) -> None:
        self.refs.head(tx, branch)  # it must exist
        tx.set(CURRENT_BRANCH_KEY, branch.encode("utf-8"))

    # -- a merge in progress (optional keys under pack("merge"); see fstore.ops.merge_state) ----

    def merge_state(self, tx: OkvsTransaction) -> bytes | None:
        """The encoded state of the merge in progress (None: no merge is)."""
        return tx.get(MERGE_STATE_KEY)

    def start_merge(self, tx: OkvsTransaction, state: bytes, conflicts: dict[str, bytes]) -> None:
        """Record a merge stopped on ``conflicts`` (encoded, by key)."""
        self.clear_merge(tx)
        tx.set(MERGE_STATE_KEY, state)
        for key, record in conflicts.items():
            tx.set(MERGE_CONFLICT + pack(key), record)

    def merge_records(self, tx: OkvsTransaction, resolutions: bool = False) -> dict[str, bytes]:
        """The merge's conflicts (or, with ``resolutions``, its resolutions), by key."""
        start = MERGE_RESOLUTION if resolutions else MERGE_CONFLICT
        return {unpack(key[len(start):])[0]: value for key, value in tx.range(start, prefix_end(start))}

    def set_resolution(self, tx: OkvsTransaction, key: str, resolution: bytes) -> None:
        tx.set(MERGE_RESOLUTION + pack(key), resolution)

    def merge_roots(self, tx: OkvsTransaction) -> list[int]:
        """The commits the merge in progress names (ours, theirs, base), for gc to keep."""
        raw = self.merge_state(tx)
        if raw is None:
            return []
        fields = msgpack.unpackb(raw)
        seqs = (self.commits.seq_of(tx, fields.get(name)) for name in ("ours", "theirs", "base") if fields.get(name))
        return [seq for seq in seqs if seq is not None]

    def clear_merge(self, tx: OkvsTransaction) -> None:
        """Forget the merge in progress (every key under ``pack("merge")``)."""
        tx.remove_range(MERGE_PREFIX, prefix_end(MERGE_PREFIX))

    def resolve(self, tx: OkvsTransaction, ref: str) -> int | None:
        """The commit a branch, tag, remote-tracking branch, ``HEAD``, id or id prefix names,
        with git's ``~N`` and ``^N`` suffixes (None: a branch with no commits). A name that
        more than one of them answers to is an :class:`AmbiguousRefError` naming each and
        how to pick it: ``refs/heads/NAME``, ``refs/tags/NAME``, ``refs/remotes/NAME``, or
        the commit's full id (which is never taken for a name)."""
        if not isinstance(ref, str) or not ref:
            raise UnknownRefError(f"a ref is a branch, tag or commit id, not {ref!r}")
        match = _ANCESTRY_SUFFIX.search(ref)
        if match.group(0):
            return self._walk(tx, ref, self.resolve(tx, ref[: match.start()]), match.group(0))
        kind, name = qualified(ref)
        if kind is not None:
            exists, seq = self.refs.get(tx, kind, name)
            if not exists:
                raise UnknownRefError(f"unknown ref {ref!r}: no {kind_name(kind)} named {name!r}")
            return seq
        if ref == "HEAD":
            return self.refs.head(tx, self.current_branch(tx))
        if _FULL_ID.fullmatch(ref) and (seq := self.commits.seq_of(tx, ref.lower())) is not None:
            return seq
        named = [(kind, seq) for kind in (BRANCH, TAG, REMOTE) for exists, seq in [self.refs.get(tx, kind, ref)]
                 if exists]
        try:
            commit = self.commits.lookup_prefix(tx, ref)
        except AmbiguousRefError:
            if not named:
                raise
            commit = _SEVERAL_COMMITS  # and a name besides: say both
        if len(named) + (commit is not None) > 1:
            raise AmbiguousRefError(f"ref {ref!r} is ambiguous: it names " + self._candidates(tx, ref, named, commit))
        if named:
            return named[0][1]
        if commit is None:
            raise UnknownRefError(f"unknown ref {ref!r}: no branch, tag or commit (ids need >= 6 hex digits)")
        return commit

    def _candidates(self, tx: OkvsTransaction, ref: str, named: list[tuple[str, int | None]], commit: int | None) -> str:
        """Each ref ``ref`` names, and how to name it alone."""
        shown = []
        for kind, seq in named:
            at = "no commits" if seq is None else self.commits.get(tx, seq).id[:10]
            shown.append(f"{kind_name(kind)} {ref!r} (at {at}: name it {qualify(kind, ref)})")
        if commit == _SEVERAL_COMMITS:
            shown.append("several commits whose ids start with it (give more of the id)")
        elif commit is not None:
            full = self.commits.get(tx, commit).id
            shown.append(f"commit {full[:10]} (name it by its full id {full})")
        return " and ".join(shown)

    def _walk(self, tx: OkvsTransaction, ref: str, seq: int | None, steps: str) -> int:
        """Follow git's ``~N`` (N first parents) and ``^N`` (the N-th parent) suffixes."""
        for op, count in re.findall(r"([~^])(\d*)", steps):
            number = int(count) if count else 1
            hops, which = (number, 1) if op == "~" else (1, number)
            for _ in range(hops):
                parents = [] if seq is None else self.commits.parents(tx, seq)
                if which == 0:
                    break
                if len(parents) < which:
                    raise UnknownRefError(f"unknown ref {ref!r}: no such ancestor")
                seq = parents[which - 1]
        if seq is None:
            raise UnknownRefError(f"unknown ref {ref!r}: no commits")
        return seq

    def commit_id(self, tx: OkvsTransaction, seq: int | None) -> str | None:
        return None if seq is None else self.commits.get(tx, seq).id

    def write_commit(self, tx: OkvsTransaction, branch: str, parents: list[int], changes: Changes,
                     message: str, author: str, time: _dt.datetime | None, added: int | None,
                     removed: int | None) -> str:
        """Write change records (``changes`` by space name: a list, or a
        :class:`ChangeStream` for a commit too large to hold), the commit and the branch
        move; returns the new id."""
        seq, commit_id, encoded = self.record_commit(tx, parents, changes, message, author, time, added, removed)
        self.refs.set(tx, BRANCH, branch, seq)
        for space in self.spaces:
            found = encoded[space.space.name]
            if found is None:
                self._move_streamed(tx, space, branch, parents, seq)
            else:
                space.heads.moved(tx, branch, parents, seq, found)
        return commit_id

    def _move_streamed(self, tx: OkvsTransaction, space: History, branch: str, parents: list[int], seq: int) -> None:
        """Move ``branch``'s snapshot of ``space`` to commit ``seq`` whose records were
        streamed: they are read back from the commit's records a chunk at a time. The first
        chunk goes with the real parents; if :meth:`Heads.moved` applied that chunk to the
        branch's snapshot, each further chunk is applied to it as a move from ``seq`` to
        itself. Otherwise it read the commit's records (a fold into the snapshot, or an
        overlay of a shared one), every chunk's included: nothing is left to do."""
        heads = space.heads
        chunks = space.change_items(tx, seq, STREAM_CHUNK)
        if not heads.moved(tx, branch, parents, seq, next(chunks, ItemChanges([], []))):
            return
        with heads.store.deferred(tx):  # the snapshot's keys merged into each index once
            for chunk in chunks:
                heads.moved(tx, branch, [seq], seq, chunk)

    def record_commit(self, tx: OkvsTransaction, parents: list[int], changes: Changes,
                      message: str, author: str, time: _dt.datetime | None, added: int | None,
                      removed: int | None) -> tuple[int, str, dict[str, ItemChanges | None]]:
        """Write a commit's change records and its record, moving no ref (what a fetch
        receives); returns its seq, its id and its changes as key items by space (None for
        a space whose changes came as a :class:`ChangeStream`: its records hold them).
        Counts of None are those the state digest moves by (what a receiver stores of a
        merge: one pass gives both)."""
        seq = self.commits.next_seq(tx)
        time = (time or _now()).astimezone(_dt.timezone.utc)
        if any(isinstance(found, ChangeStream) for found in changes.values()):
            return self._record_streamed(tx, seq, parents, changes, message, author, time, added, removed)
        records: list[bytes] = []
        encoded = {}
        for space in self.spaces:
            packed, encoded[space.space.name] = space.write(tx, seq, changes.get(space.space.name, []))
            records += _marked(space, packed)
        records.sort()
        state_digest, moves = self._digest_after(tx, seq, parents, records)
        added = moves[0] if added is None else added
        removed = moves[1] if removed is None else removed
        parent_ids = [self.commits.get(tx, p).id for p in parents]
        commit_id = commit_hash(parent_ids, message, author, time, state_digest, records)
        self.commits.write(tx, seq, parents, commit_id, message, author, time, added, removed, state_digest)
        return seq, commit_id, encoded

    def _record_streamed(self, tx: OkvsTransaction, seq: int, parents: list[int], changes: Changes, message: str,
                         author: str, time: _dt.datetime, added: int | None,
                         removed: int | None) -> tuple[int, str, dict[str, ItemChanges | None]]:
        """:meth:`record_commit` of changes of which some come as a :class:`ChangeStream`,
        in memory bounded by a chunk, in two ordered passes over each stream: the first
        moves the state digest and the counts by its records; the second, the digest
        known (the id's header holds it), writes its changes a chunk at a time
        (:meth:`History.write`) and hashes the records each chunk makes. A commit of one
        parent at most (a merge's digest reads other commits' records: its changes come
        as lists)."""
        if len(parents) > 1:
            raise ValueError("a streamed commit has one parent at most")
        digest = from_hex(self.commits.get(tx, parents[0]).digest) if parents else EMPTY
        born = dead = 0
        encoded: dict[str, ItemChanges | None] = {}
        listed: dict[str, list[bytes]] = {}
        for space in self.spaces:
            name, mark = space.space.name, space.space.mark
            found = changes.get(name, [])
            if isinstance(found, ChangeStream):
                encoded[name] = None
                batches = rechunked(found.records(), STREAM_CHUNK)
            else:
                listed[name], encoded[name] = space.write(tx, seq, found)
                batches = iter([listed[name]])
            for records in batches:
                digest, alive, gone = moved_by_records(digest, list(records), mark)
                born += alive
                dead += gone
        state_digest = as_hex(digest)
        hasher = CommitHasher([self.commits.get(tx, p).id for p in parents], message, author, time, state_digest)
        # Spaces in the order of their marks (b"" then ff: no packed item starts with ff),
        # so the records come in ascending byte order, as the id hashes them.
        for space in sorted(self.spaces, key=lambda space: space.space.mark):
            name, mark = space.space.name, space.space.mark
            found = changes.get(name)
            if not isinstance(found, ChangeStream):
                hasher.update(listed[name], mark)
                continue
            with space.deferred(tx):  # its records' keys merged into each index once
                for chunk in rechunked(found.changes(), STREAM_CHUNK):
                    hasher.update(space.write(tx, seq, chunk)[0], mark)
        commit_id = hasher.hexdigest()
        added = born if added is None else added
        removed = dead if removed is None else removed
        self.commits.write(tx, seq, parents, commit_id, message, author, time, added, removed, state_digest)
        return seq, commit_id, encoded

    def _digest_after(self, tx: OkvsTransaction, seq: int, parents: list[int],
                      records: list[bytes]) -> tuple[str, tuple[int, int]]:
        """The state digest of commit ``seq``, which wrote ``records`` (as its id hashes
        them): its first parent's moved by the tuples whose state differs between the two.
        Those are exactly the records of a commit with one parent (a transaction records
        only what changes its head); a merge's records are relative to the union of its
        parents' histories, so its changes are read from the records of the commits it
        brings in (O(those changes)). With the digest: how many tuples it moves in and
        out (the commit's counts, :mod:`fstore.core.counts`)."""
        before = from_hex(self.commits.get(tx, parents[0]).digest) if parents else EMPTY
        if len(parents) < 2:
            after, alive, gone = moved_by_records(before, records)
            return as_hex(after), (alive, gone)
        ancestors = self.commits.ancestors
        first = ancestors(tx, parents[0])
        merged = first.union(*(ancestors(tx, parent) for parent in parents[1:]), (seq,))
        born, dead = [], []
        for space in self.spaces:
            mark, value = space.space.mark, space.value
            for _, items, alive in space.state_changes(tx, first, merged):
                identity = mark + space.identity([value(tx, item) for item in items])
                (born if alive else dead).append(identity)
        return as_hex(moved(before, born, dead)), (len(born), len(dead))

    def state_digest(self, tx: OkvsTransaction, seq: int | None, snapshot: tuple[str, int] | None = None) -> str:
        """The state digest of commit ``seq`` recomputed from every tuple alive at it, in
        both spaces (O(live tuples); what verify compares with the digest stored). Reads
        go through the nearest snapshot of each space, as every read does, or in the space
        ``snapshot[0]`` through snapshot ``snapshot[1]``."""
        everything = (Var("g"), Var("s"), Var("p"), Var("o"))
        total = EMPTY
        for space in self.spaces:
            mark, identity = space.space.mark, space.identity
            number = snapshot[1] if snapshot is not None and snapshot[0] == space.space.name else None
            found = space.reader(tx, seq, number).match(everything)
            total = moved(total, (mark + identity(quad) for quad in found), ())
        return as_hex(total)

    def snapshot_problems(self, tx: OkvsTransaction, checked: set[int]) -> list[str]:
        """Each snapshot whose tuples are not the state of its commit (the state digest
        that commit's id covers), and each contradiction in the snapshots' records
        (:meth:`fstore.core.heads.Heads.problems`). ``checked``: the commits whose state digest
        was recomputed already through the snapshots reads choose (so those are not read
        twice). O(the tuples of the other snapshots)."""
        problems: list[str] = []
        for space in self.spaces:
            heads = space.heads
            problems += heads.problems(tx, self.refs)
            try:
                metas = heads.metas(tx)
            except DataeError:
                continue  # a damaged snapshot record: named by heads.problems
            for number, (seq, _, _) in metas.items():
                where = f"{space.space.name} snapshot {number} (commit #{seq})"
                if not seq:  # a snapshot started from no commit holds nothing until its first
                    if heads.count_keys(tx, number):
                        problems.append(f"{where}: holds tuples but no commit")
                    continue
                try:
                    if seq in checked and heads.base(tx, seq)[0] == number:
                        continue
                    stored = self.commits.get(tx, seq).digest
                    held = self.state_digest(tx, seq, (space.space.name, number))
                except DataeError as exc:
                    problems.append(f"{where}: cannot be read: {exc}")
                    continue
                if held != stored:
                    problems.append(f"{where}: the tuples it holds sum to {held}, not to that commit's state digest {stored}")
        return problems

    def tree_problems(self, tx: OkvsTransaction) -> list[str] | None:
        """Each way the LMDB B-trees of the file break what a search relies on (keys out
        of order, a separator that misdirects lookups, a page of the wrong kind: see
        :mod:`nstore.btree`), checked first by verify: the reads after it trust the trees,
        and LMDB aborts the process on some damage. The state ``tx`` reads; if two writes
        had already replaced its meta page when the walk began, the state of a new read
        transaction (whose meta page is read as it begins, so only two writes in that
        instant replace it). None if even that kept losing the race: not checked.
        Writes during a walk never spoil it (see :meth:`OkvsTransaction.tree_problems`)."""
        found = tx.tree_problems()
        for _ in range(_TREE_ATTEMPTS):
            if found is not None:
                break
            with self.okvs.transaction() as newer:
                found = newer.tree_problems()
        return None if found is None else [f"{DATA_FILE}: {problem}" for problem in found]

    def index_problems(self, tx: OkvsTransaction) -> list[str]:
        """Each keyspace whose indices disagree (they must hold the same tuples), and each
        contradiction in the dictionary (O(keys); for verify)."""
        problems = [problem for keyspace in self.blocked_keyspaces() for problem in keyspace.problems(tx)]
        if problems:  # the checks below read through the blocks
            return problems
        problems = list(self.quads.dictionary.problems(tx))
        for space in self.spaces:
            # Records count their references to the blobs they share with the snapshots.
            counted: dict[str, Counter[bytes]] = {"records": Counter(), "snapshots": Counter()}
            for what, store in (("records", space.store), ("snapshots", space.heads.store)):
                sums = store.index_digests(tx, counted[what])
                name = f"{space.space.name} {what}"
                for number, found in enumerate(sums):
                    prefix = store.index_prefix(number).hex()
                    if isinstance(found, tuple):
                        problems.append(f"{name}: key {found[0].hex()} of index {number} is damaged: {found[1]}")
                    elif number and found != sums[0] and not isinstance(sums[0], tuple):
                        problems.append(f"{name}: index {number} (keys {prefix}...) does not hold the tuples index 0 "
                                        f"(keys {store.index_prefix(0).hex()}...) holds")
            problems += (f"{space.space.name}: {problem}" for problem in
                         space.store.blobs.reference_problems(tx, counted["records"], counted["snapshots"]))
        problems += self.tables.rows.problems(tx)
        return problems

    def blocked_keyspaces(self) -> list[Blocks]:
        """The keyspaces this store keeps in blocks (format 4: the dictionary, and the
        records and snapshots of each space; format 6: the rows' records and snapshots)."""
        stores = [store for space in self.spaces for store in (space.store, space.heads.store)]
        found = [self.quads.dictionary.space, *(store.space for store in stores), self.tables.rows.records,
                 self.tables.rows.snapshots]
        return [keyspace for keyspace in found if isinstance(keyspace, Blocks)]

    def packed_records(self, tx: OkvsTransaction, seq: int) -> list[bytes]:
        """Every record of commit ``seq`` as its id hashes them (see :meth:`write_commit`)."""
        return sorted(record for space in self.spaces for record in _marked(space, space.packed_changes_of(tx, seq)))

    # -- branches: a ref and, in every space, the snapshot it reads ---------------------

    def create_branch(self, tx: OkvsTransaction, name: str, seq: int | None, start_branch: str | None) -> None:
        """Branch ``name`` at commit ``seq``, sharing ``start_branch``'s snapshots if given."""
        self.refs.create(tx, BRANCH, name, seq)
        for space in self.spaces:
            space.heads.branch_created(tx, name, seq, start_branch)

    def delete_branch(self, tx: OkvsTransaction, name: str, *, log: bool = True) -> None:
        self.refs.delete(tx, BRANCH, name, log=log)
        for space in self.spaces:
            space.heads.branch_deleted(tx, name)

    def fast_forward(self, tx: OkvsTransaction, branch: str, ours: int | None, theirs: int) -> None:
        """Move ``branch`` from ``ours`` to its descendant ``theirs`` (no new commit)."""
        self.refs.set(tx, BRANCH, branch, theirs)
        for space in self.spaces:
            space.heads.moved(tx, branch, [] if ours is None else [ours], theirs, None)

    # -- merge requests (fstore.sync.merge_requests): metadata, in no commit ------------------------

    def request_record(self, tx: OkvsTransaction, number: int, remote: str | None = None) -> dict | None:
        """Request ``number`` of this store (or the copy of ``remote``'s), None if absent."""
        raw = tx.get(_request_key(number, remote))
        return None if raw is None else msgpack.unpackb(raw, raw=False)

    def put_request(self, tx: OkvsTransaction, number: int, record: dict, remote: str | None = None) -> None:
        tx.set(_request_key(number, remote), msgpack.packb(record, use_bin_type=True))

    def request_records(self, tx: OkvsTransaction, remote: str | None = None) -> Iterator[tuple[int, dict]]:
        """Every request (of this store, or the copies of ``remote``'s), by number."""
        start = pack(REQUEST) if remote is None else pack(REQUEST_MIRROR, remote)
        for key, value in tx.range(start, prefix_end(start)):
            yield unpack(key)[-1], msgpack.unpackb(value, raw=False)

    def next_request_number(self, tx: OkvsTransaction) -> int:
        """The greatest request number + 1 (requests are closed, never deleted, so a
        number is never given twice)."""
        start = pack(REQUEST)
        last = next(iter(tx.range(start, prefix_end(start), reverse=True, limit=1)), None)
        return 1 if last is None else unpack(last[0])[-1] + 1

    def drop_requests(self, tx: OkvsTransaction, remote: str | None = None) -> None:
        """Delete every request of this store (or every copy of ``remote``'s)."""
        start = pack(REQUEST) if remote is None else pack(REQUEST_MIRROR, remote)
        for key, _ in list(tx.range(start, prefix_end(start))):
            tx.delete(key)

    def drop_request_mirrors(self, tx: OkvsTransaction) -> None:
        """Delete the copies of every remote's requests."""
        start = pack(REQUEST_MIRROR)
        for key, _ in list(tx.range(start, prefix_end(start))):
            tx.delete(key)


# -- the bound handles ----------------------------------------------------------------------
#
# A Snapshot reads one consistent state (one LMDB read transaction), a Writer (a Snapshot
# that also writes) is the one write transaction; every operation of fstore.ops is a
# function of one of them (as Oxigraph's Storage::snapshot() gives a StorageReader and
# transaction(|writer| ...) a StorageWriter). They live here, beside the Storage whose
# methods they bind, so neither module imports the other.

@runtime_checkable
class ChangeStream(Protocol):
    """One space's changes of a commit too large to hold in memory (a big transaction's
    spilled intents, resolved: :class:`fstore.transaction.Staged`), read twice by
    :meth:`Storage.write_commit`, in the same order: ascending bytes of the packed tuple."""

    def records(self) -> Iterator[list[bytes]]:
        """The changes as records (the packed tuple, then ``01`` alive or ``00`` dead), a
        list at a time."""
        ...

    def changes(self) -> Iterator[list[tuple[Quad | None, bool, list[bytes]]]]:
        """The changes ``(quad, alive, its packed values)``, a list at a time, once (it may
        free what it read).
        The quad may be None when no packed value is longer than a key holds:
        :meth:`History.write` reads the values of those alone (their blobs), the packed
        values give it the rest."""
        ...


Changes = dict[str, "list[tuple[Quad, bool, list[bytes] | None]] | ChangeStream"]  # by space name


class Opened(Protocol):
    """What views and transactions need of an open repository (``fstore.Repository`` is
    one): its storage, and what its plug-ins registered (``fstore.plugins.Plugins``, the
    same object as ``storage.plugins``). They name this rather than the facade, so none
    of them imports it."""

    storage: Storage
    plugins: Any


class Snapshot:
    """One consistent state of the store: every read made through it sees the same
    commits and refs. A context manager (the read transaction ends with the block);
    ``tx`` is the LMDB transaction, for code below the handles (``fstore.core``)."""

    __slots__ = ("storage", "tx")

    def __init__(self, storage: Storage, tx: OkvsTransaction) -> None:
        self.storage = storage
        self.tx = tx

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.tx.__exit__(exc_type, exc, tb)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.storage.path!r}>"

    # -- the parts (the storage's, for reads in self.tx) -------------------------------

    @property
    def spaces(self) -> tuple[History, ...]:
        """The versioned spaces (quads, tables), each a :class:`~fstore.core.history.History`."""
        return self.storage.spaces

    @property
    def quads(self) -> History:
        return self.storage.quads

    @property
    def tables(self) -> History:
        return self.storage.tables

    # -- commits ------------------------------------------------------------------------

    def commit(self, seq: int) -> Commit:
        """The commit numbered ``seq``."""
        return self.storage.commits.get(self.tx, seq)

    def commit_id(self, seq: int | None) -> str | None:
        return self.storage.commit_id(self.tx, seq)

    def seq_of(self, commit_id: str) -> int | None:
        """The number of the commit with id ``commit_id`` (None: not in the store)."""
        return self.storage.commits.seq_of(self.tx, commit_id)

    def parents(self, seq: int) -> list[int]:
        return self.storage.commits.parents(self.tx, seq)

    def ancestors(self, seq: int | None) -> frozenset[int]:
        """``seq`` and every commit it descends from (empty for None)."""
        return self.storage.commits.ancestors(self.tx, seq)

    def merge_base(self, ours: int, theirs: int) -> int | None:
        return self.storage.commits.merge_base(self.tx, ours, theirs)

    def all_commits(self) -> Iterator[tuple[int, dict]]:
        """Every commit record, by seq."""
        return self.storage.commits.all(self.tx)

    # -- refs ---------------------------------------------------------------------------

    def resolve(self, ref: str) -> int | None:
        """The commit ``ref`` names (see :meth:`fstore.core.storage.Storage.resolve`)."""
        return self.storage.resolve(self.tx, ref)

    def head(self, branch: str) -> int | None:
        """Branch ``branch``'s head (None: no commits; an unknown branch raises)."""
        return self.storage.refs.head(self.tx, branch)

    def ref(self, kind: str, name: str) -> tuple[bool, int | None]:
        """``(exists, seq)`` of ref ``name`` of ``kind`` (``fstore.core.refs``)."""
        return self.storage.refs.get(self.tx, kind, name)

    def refs(self, kind: str, *, skip_damaged: bool = False) -> Iterator[tuple[str, int | None]]:
        """Every ref of ``kind`` and its commit."""
        return self.storage.refs.items(self.tx, kind, skip_damaged=skip_damaged)

    def branches(self) -> dict[str, int | None]:
        return dict(self.refs(BRANCH))

    def tags(self) -> dict[str, int | None]:
        return dict(self.refs(TAG))

    def remote_branches(self) -> dict[str, int | None]:
        return dict(self.refs(REMOTE))

    def remotes(self) -> dict[str, str]:
        """Every remote and its URL."""
        return self.storage.refs.remotes(self.tx)

    def reflog(self) -> list[tuple[_dt.datetime, str, str, int]]:
        """The deleted branches and tags, oldest first: ``(when, kind, name, seq)``."""
        return self.storage.refs.reflog(self.tx)

    def current_branch(self) -> str:
        return self.storage.current_branch(self.tx)

    def ref_clash(self, kind: str, name: str) -> tuple[str | None, str | None]:
        """What a new ref ``name`` of ``kind`` would be ambiguous with
        (:meth:`fstore.core.refs.Refs.clash`)."""
        return self.storage.refs.clash(self.tx, kind, name)

    # -- states -------------------------------------------------------------------------

    def reader(self, seq: int | None, space: str = QUADS.name) -> Reader:
        """What is alive at commit ``seq`` in ``space`` (:class:`fstore.core.heads.Reader`)."""
        return self.storage.reader(self.tx, seq, space)

    def deciding_record(self, seq: int | None, quad: Any, space: str = QUADS.name) -> tuple[int, bool] | None:
        return self.storage.deciding_record(self.tx, seq, quad, space)

    def was_alive(self, seq: int | None, space: str, quad: Any) -> bool:
        return self.storage.was_alive(self.tx, seq, space, quad)

    def alive_many(self, seq: int | None, space: str, quads: Sequence[Any], parts: Sequence[Sequence[bytes]]) -> list[bool]:
        return self.storage.alive_many(self.tx, seq, space, quads, parts)

    def state_digest(self, seq: int | None) -> str:
        return self.storage.state_digest(self.tx, seq)

    def packed_records(self, seq: int) -> list[bytes]:
        return self.storage.packed_records(self.tx, seq)

    def tree_problems(self) -> list[str] | None:
        """What breaks the file's B-trees (:meth:`fstore.core.storage.Storage.tree_problems`)."""
        return self.storage.tree_problems(self.tx)

    # -- a merge in progress (fstore.ops.merge_state) -----------------------------------

    def merge_state(self) -> bytes | None:
        """The encoded state of the merge in progress (None: no merge is)."""
        return self.storage.merge_state(self.tx)

    def merge_records(self, resolutions: bool = False) -> dict[str, bytes]:
        return self.storage.merge_records(self.tx, resolutions)

    def merge_roots(self) -> list[int]:
        return self.storage.merge_roots(self.tx)

    # -- merge requests (fstore.sync.merge_requests) ------------------------------------

    def request_record(self, number: int, remote: str | None = None) -> dict | None:
        """Request ``number`` of this store (or the copy of ``remote``'s), None if absent."""
        return self.storage.request_record(self.tx, number, remote)

    def request_records(self, remote: str | None = None) -> Iterator[tuple[int, dict]]:
        """Every request (of this store, or the copies of ``remote``'s), by number."""
        return self.storage.request_records(self.tx, remote)

    def next_request_number(self) -> int:
        return self.storage.next_request_number(self.tx)


class Writer(Snapshot):
    """The write transaction (one at a time): a :class:`Snapshot` that also writes.
    Nothing is visible to others until the block ends without an exception (an exception
    aborts it, so the store stays as it was); ``commit(seq)``, as on any snapshot, reads a
    commit record and commits nothing."""

    __slots__ = ()

    def write_commit(self, branch: str, parents: list[int], changes: Changes, message: str, author: str,
                     time: _dt.datetime | None, added: int | None, removed: int | None) -> str:
        """Record a commit of ``changes`` on ``branch``; returns its id
        (:meth:`fstore.core.storage.Storage.write_commit`; counts of None: those the
        state digest moves by)."""
        return self.storage.write_commit(self.tx, branch, parents, changes, message, author, time, added, removed)

    def record_commit(self, parents: list[int], changes: Changes, message: str, author: str,
                      time: _dt.datetime | None, added: int | None,
                      removed: int | None) -> tuple[int, str, dict[str, ItemChanges | None]]:
        """Record a commit moving no ref (what a fetch receives): its seq, id and encoded
        changes (:meth:`fstore.core.storage.Storage.record_commit`)."""
        return self.storage.record_commit(self.tx, parents, changes, message, author, time, added, removed)

    def fast_forward(self, branch: str, ours: int | None, theirs: int) -> None:
        """Move ``branch`` from ``ours`` to its descendant ``theirs`` (no new commit)."""
        self.storage.fast_forward(self.tx, branch, ours, theirs)

    def create_branch(self, name: str, seq: int | None, start_branch: str | None) -> None:
        self.storage.create_branch(self.tx, name, seq, start_branch)

    def delete_branch(self, name: str, *, log: bool = True) -> None:
        self.storage.delete_branch(self.tx, name, log=log)

    def set_current_branch(self, branch: str) -> None:
        self.storage.set_current_branch(self.tx, branch)

    def create_ref(self, kind: str, name: str, seq: int | None) -> None:
        """A new ref (refused if one of that kind and name exists)."""
        self.storage.refs.create(self.tx, kind, name, seq)

    def set_ref(self, kind: str, name: str, seq: int | None) -> None:
        """Point ref ``name`` of ``kind`` at ``seq``, creating it if new (no branch
        snapshot moves: for tags and remote-tracking branches)."""
        self.storage.refs.set(self.tx, kind, name, seq)

    def delete_ref(self, kind: str, name: str, *, log: bool = True) -> None:
        """Delete a ref (its commit goes to the reflog unless ``log`` is False)."""
        self.storage.refs.delete(self.tx, kind, name, log=log)

    def set_remote(self, name: str, url: str | None) -> None:
        """Add (or change) remote ``name``; None removes it and its remote-tracking refs."""
        self.storage.refs.set_remote(self.tx, name, url)

    def forget_remote_state(self) -> None:
        """Drop every remote, remote-tracking branch and reflog entry (a copied store's)."""
        self.storage.refs.forget_remote_state(self.tx)

    def log_ref(self, kind: str, name: str, seq: int | None) -> None:
        """Put ``seq`` in the reflog under ``name`` (gc keeps it until the entry expires)."""
        self.storage.refs.log(self.tx, kind, name, seq)

    def start_merge(self, state: bytes, conflicts: dict[str, bytes]) -> None:
        self.storage.start_merge(self.tx, state, conflicts)

    def set_resolution(self, key: str, resolution: bytes) -> None:
        self.storage.set_resolution(self.tx, key, resolution)

    def clear_merge(self) -> None:
        self.storage.clear_merge(self.tx)

    def put_request(self, number: int, record: dict, remote: str | None = None) -> None:
        self.storage.put_request(self.tx, number, record, remote)

    def drop_requests(self, remote: str | None = None) -> None:
        """Delete every request of this store (or every copy of ``remote``'s)."""
        self.storage.drop_requests(self.tx, remote)

    def drop_request_mirrors(self) -> None:
        """Delete the copies of every remote's requests."""
        self.storage.drop_request_mirrors(self.tx)


def _request_key(number: int, remote: str | None) -> bytes:
    return pack(REQUEST, number) if remote is None else pack(REQUEST_MIRROR, remote, number)


def _marked(space: History, records: list[bytes]) -> list[bytes]:
    """A space's records as the commit id hashes them: each behind the space's mark."""
    mark = space.space.mark
    return [mark + record for record in records] if mark else records

