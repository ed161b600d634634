"""Write transactions: one transaction on a branch is one commit.

Changes are collected as intents (quad -> alive) and resolved against the branch head when
the transaction ends: a quad whose state does not change writes nothing, and a transaction
that changes nothing makes no commit. Everything happens in one LMDB write transaction, so
an exception (or a crash) leaves the store exactly as it was.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import tempfile
from contextlib import contextmanager
from itertools import compress, islice, repeat
from operator import itemgetter
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import msgpack

from nstore import Var
from nstore._blocks import sorted_bytes
from nstore._pack import split_rows
from nstore.bulk import gc_paused
from nstore.errors import TransactionClosedError
from nstore.okvs import MAX_KEY_SIZE, prefix_end
from nstore.pack import pack_value, unpack
from nstore.store import Param

from .core.history import ALIVE, DEAD, QUAD_ITEMS, Quad, matches
from .core.layout import QUADS, SCRATCH, TABLES
from .core.ranges import NumericRange
from .query_source import QuerySource
from nstore.terms import to_rdf

if TYPE_CHECKING:
    from nstore.okvs import Transaction as OkvsTransaction

    from .core.storage import Opened, Writer
    from .core.heads import Reader
    from .core.history import History

__all__ = ["Transaction", "Staged", "SPILL_LIMIT"]

_SEEN_LIMIT = 4_000_000
_BATCH = 1 << 16  # quads packed a column at a time by intend_many
SPILL_LIMIT = 1_000_000
"""Intents a space holds in memory; past it they spill into the store (:class:`Staged`).
A transaction of a million quads or fewer pays nothing for it; a larger one holds no more
(the commit then bounds its own memory by ``fstore.core.storage.STREAM_CHUNK``)."""
_HASH_SIZE = 32
_ITEMS = len(QUAD_ITEMS)  # the values of a tuple of either space
_FILE_BATCH = 1 << 16  # changes a record of resolve()'s file holds


class Staged:
    """One space's intents (quad -> alive) in a write transaction, over the head it
    started from: reads see the head overlaid with the intents.

    Intents are held in a dict until it holds more than :attr:`spill_limit`; then they **spill**
    into the LMDB write transaction's scratch table (a file of its own, :data:`nstore.okvs.SCRATCH_PREFIX`,
    keyed ``layout.SCRATCH`` + space + packed quad), so a transaction's memory stays bounded
    however many quads it stages. Reads overlay both (a newer intent in the dict wins); the
    commit resolves the spilled intents a chunk at a time in the packed quads' byte order
    (this object is then the :class:`~fstore.core.storage.ChangeStream` of its space), and the
    table is dropped whole as soon as the commit has resolved it (its file removed, no key
    deleted one at a time): an abort leaves nothing of it, and a crash a file the next
    writer removes.
    """

    spill_limit: int = SPILL_LIMIT

    def __init__(self, history: History, reader: Reader, head: int | None, tx: OkvsTransaction) -> None:
        self.history = history
        self.reader = reader
        self.head = head
        self.tx = tx
        self.pending: dict[bytes, tuple[Quad, bool, list[bytes]]] = {}  # identity -> intent
        # Quads seen alive at the head while reading: their state needs no second lookup
        # when the commit resolves intents (replacing a graph reads it all).
        self.seen_alive: set[bytes] = set()
        # Quads a writer told absent at the head (a table row it looked up): no lookup either.
        self.seen_absent: set[bytes] = set()
        self.spilled = False  # whether the scratch range may hold intents
        self.changed = 0  # the spilled intents that change the head (once resolve() ran)
        self._changes: IO[bytes] | None = None  # resolve()'s file of them
        self.scratch = SCRATCH + pack_value(history.space.name)
        self._end = prefix_end(self.scratch)
        # An identity longer than this is cut in its key (a key holds MAX_KEY_SIZE bytes)
        # and followed by its hash; the value then holds it whole (see _key).
        self._room = MAX_KEY_SIZE - len(self.scratch) - _HASH_SIZE

    def intend(self, quad: Quad, alive: bool) -> None:
        parts = self.history.parts(quad)
        self.pending[b"".join(parts)] = (quad, alive, parts)
        if len(self.pending) > self.spill_limit:
            self.spill()

    def intend_many(self, quads: Iterable[Quad], alive: bool, at_head: bool | None = None) -> None:
        """:meth:`intend` of many quads, packed a column at a time (a batch of quads at a
        time, so the columns never hold more than a batch). ``at_head``: whether the
        caller knows them all alive (True) or all absent (False) at the head, so that the
        commit need not look them up (while the hints stay within the spill limit)."""
        pending, packed = self.pending, self.history.store.packed_column
        source = iter(quads)
        while True:
            batch = list(islice(source, _BATCH))
            if not batch:
                return
            rows = list(zip(*[packed(list(column)) for column in zip(*batch)]))
            identities = list(map(b"".join, rows))
            pending.update(zip(identities, zip(batch, repeat(alive), rows)))
            if at_head is not None:
                seen = self.seen_alive if at_head else self.seen_absent
                if len(seen) < self.spill_limit:
                    seen.update(identities)
            if len(pending) > self.spill_limit:
                self.spill()

    # -- the scratch range ------------------------------------------------------------

    def _key(self, identity: bytes) -> bytes:
        """The scratch key of a packed quad. Keys sort as the identities do: identities
        are prefix-free (four self-delimiting values), so a cut one orders against any
        other as its whole would, except against another cut to the same bytes (which
        :meth:`_ordered` sorts among themselves)."""
        if len(identity) <= self._room:
            return self.scratch + identity
        return self.scratch + identity[:self._room] + hashlib.sha256(identity).digest()

    def _entry(self, key: bytes, value: bytes) -> tuple[bytes, bool]:
        """``(identity, alive)`` of a scratch entry (its value: the flag, then the identity
        if its key holds it cut)."""
        return (value[1:] if len(value) > 1 else key[len(self.scratch):]), value[:1] == ALIVE

    def spill(self) -> None:
        """Move the dict's intents into the scratch range (a newer intent for a quad
        replaces the older there as here)."""
        if not self.pending:
            return
        pending = self.pending
        identities = sorted_bytes(list(pending))  # a radix sort in C
        if max(map(len, identities)) > self._room:  # some keys hold their quad cut: sort by the keys
            key = self._key
            pairs = sorted((key(identity), (ALIVE if alive else DEAD) + (b"" if len(identity) <= self._room else identity))
                           for identity, (_, alive, _) in pending.items())
            self.tx.set_many(pairs, ascending=True, scratch=True)
        else:
            keys = list(map(self.scratch.__add__, identities))
            alive = list(map(_SECOND, map(pending.__getitem__, identities)))
            if all(alive) or not any(alive):  # the common case: one flag, no pair built per key
                self.tx.set_many(keys, ascending=True, value=ALIVE if alive[0] else DEAD, scratch=True)
            else:
                self.tx.set_many(list(zip(keys, map(_STATE.__getitem__, alive))), ascending=True, scratch=True)
        pending.clear()
        self.spilled = True

    def _spilled_intent(self, identity: bytes) -> bool | None:
        raw = self.tx.get(self._key(identity), scratch=True) if self.spilled else None
        return None if raw is None else raw[:1] == ALIVE

    def _scratch_entries(self) -> Iterator[tuple[bytes, bool]]:
        """Every spilled ``(identity, alive)`` in key order."""
        for batch in self._scratch_batches():
            for key, value in batch:
                yield self._entry(key, value)

    def _scratch_batches(self) -> Iterator[list[tuple[bytes, bytes]]]:
        """The scratch range's pairs in key order, as lists of up to :attr:`spill_limit`
        (so that writes between two batches, by a caller that stages or commits as it
        reads, never meet an open cursor)."""
        start: bytes | None = self.scratch
        while start is not None:
            batch = self.tx.batch(start, self._end, self.spill_limit, scratch=True)
            start = batch[-1][0] + b"\x00" if len(batch) == self.spill_limit else None
            if batch:
                yield batch

    def drop_scratch(self) -> None:
        """Drop the transaction's scratch table (whole, every space's range: called once
        every space is resolved; the LMDB transaction would drop it as it ends)."""
        if self.spilled:
            self.tx.drop_scratch()
            self.spilled = False

    def close(self) -> None:
        """Let go of the resolved changes' temporary file."""
        if self._changes is not None:
            self._changes.close()
            self._changes = None

    # -- reads ------------------------------------------------------------------------

    def match(self, pattern: Sequence[Any], within: NumericRange | None) -> Iterator[Quad]:
        pending = self.pending
        identity = self.history.identity
        spilled = self._spilled_intent
        if not any(type(item) is Var for item in pattern):  # a point lookup: no scan of intents
            quad = tuple(pattern)
            key = identity(quad)
            intent = pending.get(key)
            alive = intent[1] if intent is not None else spilled(key)
            if (alive if alive is not None else self.alive_at_head(key, quad)):
                yield quad  # type: ignore[misc]
            return
        seen = self.seen_alive
        remember = len(seen) < _SEEN_LIMIT
        for quad in self.reader.match(pattern, within):
            key = identity(quad)
            if remember:
                seen.add(key)
            intent = pending.get(key)
            if intent is None:
                if not self.spilled or spilled(key) is not False:
                    yield quad
            elif intent[1]:
                yield quad
        for key, (quad, alive, _) in list(pending.items()):
            if alive and matches(pattern, quad) and not self.alive_at_head(key, quad):
                if within is None or within.holds(identity(quad[3:])):
                    yield quad
        if self.spilled:
            for key, alive in self._scratch_entries():
                if alive and key not in pending:
                    quad = unpack(key)
                    if matches(pattern, quad) and not self.alive_at_head(key, quad):
                        if within is None or within.holds(identity(quad[3:])):
                            yield quad

    def count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        if not self.pending and not self.spilled:
            return self.reader.count(pattern, cap)
        total = 0
        for _ in self.match(pattern, None):
            total += 1
            if total == cap:
                break
        return total

    def known_count(self, pattern: Sequence[Any]) -> int | None:
        """The head's counts (:meth:`fstore.core.heads.Reader.known_count`) while no write
        is staged; None after (staged writes are not counted)."""
        if not self.pending and not self.spilled:
            return self.reader.known_count(pattern)
        return None

    def graphs(self) -> list[Any]:
        if not self.pending and not self.spilled:
            return self.reader.graphs()
        seen: dict[bytes, Any] = {}
        for quad in self.match((Var("g"), Var("s"), Var("p"), Var("o")), None):
            seen.setdefault(pack_value(quad[0]), quad[0])
        return [seen[key] for key in sorted(seen)]

    def alive_at_head(self, key: bytes, quad: Quad) -> bool:
        if self.head is None:
            return False
        if key in self.seen_alive:
            return True
        if key in self.seen_absent:
            return False
        return next(iter(self.reader.match(quad)), None) is not None

    # -- the commit -------------------------------------------------------------------

    def resolved(self) -> list[tuple[Quad, bool, list[bytes]]]:
        """The intents that change the head: ``(quad, alive, its packed values)`` (held
        in memory: for a transaction that never spilled)."""
        if self.head is None:  # nothing is alive: the additions change it, the removals nothing
            return list(filter(itemgetter(1), self.pending.values()))
        alive_at_head = self._alive_at_head(list(self.pending.items()))
        return [(quad, alive, parts) for (quad, alive, parts), was in zip(self.pending.values(), alive_at_head) if was != alive]

    def _alive_at_head(self, intents: list[tuple[bytes, tuple[Quad | None, bool, Any]]]) -> list[bool]:
        """:meth:`alive_at_head` of many intents (``(identity, (quad or None, ...))``), the
        quads the transaction has not seen alive read in one batch of the reader's."""
        seen_alive, seen_absent = self.seen_alive, self.seen_absent
        unseen = [(i, quad if quad is not None else unpack(key)) for i, (key, (quad, _, _)) in enumerate(intents)
                  if key not in seen_alive and key not in seen_absent]
        alive = [key not in seen_absent for key, _ in intents]
        for (i, _), found in zip(unseen, self.reader.contains_many([quad for _, quad in unseen])):
            alive[i] = found
        return alive

    def resolve(self) -> int:
        """Settle the spilled intents against the head (after moving the last ones into
        the scratch table), in the packed quads' byte order, a batch at a time: those that
        change it are written to a temporary file (msgpack, a list of identities and one
        of states per record) that :meth:`records` and :meth:`changes` read, so that the
        scratch table can be dropped before the commit writes. Returns how many (also in
        :attr:`changed`)."""
        self.spill()
        self.changed = 0
        self._changes = tempfile.TemporaryFile(prefix="datae-changes-")
        for identities, alive in self._ordered():
            if self.head is None:  # nothing is alive: the additions change it, the removals nothing
                changing = alive
            else:
                was = self._alive_at_head([(identity, (None, state, None)) for identity, state in zip(identities, alive)])
                changing = [before != state for before, state in zip(was, alive)]
            identities, alive = list(compress(identities, changing)), list(compress(alive, changing))
            for start in range(0, len(identities), _FILE_BATCH):
                self._changes.write(msgpack.packb((identities[start:start + _FILE_BATCH], alive[start:start + _FILE_BATCH])))
            self.changed += len(identities)
        return self.changed

    def _changed(self) -> Iterator[tuple[list[bytes], list[bool]]]:
        """After :meth:`resolve`: the changes, as lists of identities and of their states."""
        changes = self._changes
        if changes is None:
            raise RuntimeError("the intents are not resolved yet")
        changes.seek(0)
        yield from msgpack.Unpacker(changes, use_list=True)

    def records(self) -> Iterator[list[bytes]]:
        """After :meth:`resolve`: the changes as records (the packed quad, then ``01``
        alive or ``00`` dead), a list at a time, in ascending byte order (what the commit
        id hashes)."""
        for identities, alive in self._changed():
            yield list(map(bytes.__add__, identities, map(_STATE.__getitem__, alive)))

    def changes(self) -> Iterator[list[tuple[Quad | None, bool, list[bytes]]]]:
        """After :meth:`resolve`: the changes ``(quad, alive, its packed values)``, a list
        at a time, in the order of :meth:`records`.
        The quad is None where its packed values hold all the commit needs (see
        :class:`~fstore.core.storage.ChangeStream`)."""
        inline_limit = self.history.store.inline_limit
        for identities, alive in self._changed():
            rows = split_rows(list(zip(identities, alive)), 0, _ITEMS)  # in C
            quads: list[Quad | None] = [None] * len(rows)
            # Decoding a quad costs more than the rest of its way here: only a value too
            # long for a key (History.write stores its blob) needs the values.
            needs_values = self.history.needs_values
            for number, size in enumerate(map(len, identities)):
                if size > inline_limit and max(map(len, rows[number])) > inline_limit and needs_values(rows[number]):
                    quads[number] = unpack(identities[number])
            yield list(zip(quads, alive, rows))

    def _ordered(self) -> Iterator[tuple[list[bytes], list[bool]]]:
        """The spilled identities and their states in the byte order of the identities,
        a list of each per batch. Keys sort as identities do, but for identities cut to the
        same key bytes (see :meth:`_key`): each such run is sorted here (a handful at most)."""
        skip = _after(len(self.scratch))
        run: list[tuple[bytes, bool]] = []
        for batch in self._scratch_batches():
            values = list(map(_SECOND, batch))
            if not run and max(map(len, values)) == 1:  # no key holds its quad cut: each step a C loop
                yield list(map(skip, map(_FIRST, batch))), list(map(ALIVE.__eq__, values))
                continue
            identities: list[bytes] = []
            states: list[bool] = []
            for key, value in batch:
                identity, alive = self._entry(key, value)
                if run and (len(identity) <= self._room or identity[:self._room] != run[0][0][:self._room]):
                    run.sort()
                    identities += map(_FIRST, run)
                    states += map(_SECOND, run)
                    run = []
                if len(identity) > self._room:
                    run.append((identity, alive))
                else:
                    identities.append(identity)
                    states.append(alive)
            if identities:
                yield identities, states
        if run:
            run.sort()
            yield list(map(_FIRST, run)), list(map(_SECOND, run))


_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_STATE = {True: ALIVE, False: DEAD}


def _after(skip: int) -> Callable[[bytes], bytes]:
    """What follows the first ``skip`` bytes of a key (a C call per key, in ``map``)."""
    return itemgetter(slice(skip, None))


class Transaction:
    """A write transaction on one branch; use ``with repo.transaction(branch, ...)``.

    After the ``with`` block, ``commit_id`` holds the new commit's id, or None if nothing
    changed.
    """

    def __init__(self, repo: Opened, branch: str, message: str, author: str, time: _dt.datetime | None,
                 allow_empty: bool = False) -> None:
        self.repo = repo
        self.allow_empty = allow_empty
        self.branch = branch
        self.message = message
        self.author = author
        self.time = time
        self.commit_id: str | None = None
        self._writer: Writer | None = None
        self._head: int | None = None
        self._staged: dict[str, Staged] = {}  # by space name (fstore.core.layout)

    def __enter__(self) -> Transaction:
        writer = self.repo.storage.write()
        try:
            self._head = writer.head(self.branch)
            self._staged = {space.space.name: Staged(space, space.reader(writer.tx, self._head), self._head, writer.tx)
                            for space in writer.spaces}
        except BaseException:
            writer.tx.abort()
            raise
        self._writer = writer
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        tx = writer.tx
        if exc_type is not None:
            tx.abort()
            return
        try:
            with gc_paused():
                self.commit_id = self._commit(writer)
        except BaseException:
            if not tx.closed:
                tx.abort()
            raise
        if self.commit_id is None:
            tx.abort()
        else:
            tx.commit()

    # -- changes ----------------------------------------------------------------------

    def _require_open(self) -> OkvsTransaction:
        """The LMDB transaction of the open block (what table code reads legends in)."""
        if self._writer is None:
            raise TransactionClosedError("use the transaction inside its `with` block")
        return self._writer.tx

    def _space(self, name: str) -> Staged:
        self._require_open()
        return self._staged[name]

    def _intend(self, quad: Quad, alive: bool) -> None:
        self._space(QUADS.name).intend(quad, alive)

    def _intend_many(self, quads: Iterable[Quad], alive: bool) -> None:
        staged = self._space(QUADS.name)
        with gc_paused():
            staged.intend_many(quads, alive)

    def stage_table_tuple(self, row: Quad, alive: bool) -> None:
        """Stage a table tuple (see :mod:`fstore.tables.mapping`) in the tables space."""
        self._space(TABLES.name).intend(row, alive)

    def stage_table_tuples(self, rows: Iterable[Quad], alive: bool, at_head: bool | None = None) -> None:
        """Stage many table tuples at once (a bulk insert's rows); ``at_head``: whether
        they are all alive (True) or all absent (False) at the head, if the caller knows."""
        staged = self._space(TABLES.name)
        with gc_paused():
            staged.intend_many(rows, alive, at_head)

    @contextmanager
    def reading(self) -> Iterator[Transaction]:
        """This transaction: its reads already share its LMDB transaction (the same
        method as :meth:`View.reading`, for code that reads either)."""
        yield self

    def _match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        """The head's quads overlaid with this transaction's intents (``within`` and
        ``terms``: see :meth:`fstore.core.heads.Reader.match`)."""
        staged = self._space(QUADS.name)
        if terms:
            return (tuple(map(to_rdf, quad)) for quad in staged.match(pattern, within))  # type: ignore[misc]
        return staged.match(pattern, within)

    def table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at the head, overlaid with this transaction's."""
        return self._space(TABLES.name).match(pattern, None)

    def count_table_tuples(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        """How many tables-space tuples match, this transaction's writes included
        (counting stops at ``cap``)."""
        return self._space(TABLES.name).count(pattern, cap)

    def committed_table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at the head this transaction started from."""
        return self._space(TABLES.name).reader.match(pattern)

    def committed_table_blobs(self, graph: Any, paths: Sequence[str]) -> dict[str, list[bytes]]:
        """The feature blobs at each path of a table at the head this transaction started
        from, looked up in batches (``TablesReader.blobs_at``)."""
        return self._space(TABLES.name).reader.blobs_at(graph, paths)

    def _prepare(self, pattern: Sequence[Any], terms: bool) -> Callable[..., Iterator[Quad]]:
        """Reads of one pattern shape (see ``fstore.prepare``): each a :meth:`_match`, which
        overlays this transaction's intents."""
        params = [i for i, item in enumerate(pattern) if type(item) is Param]

        def read(*values: Any) -> Iterator[Quad]:
            filled = list(pattern)
            for position, value in zip(params, values):
                filled[position] = value
            return self._match(filled, None, terms)

        return read

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        return self._space(QUADS.name).count(pattern, cap)

    def _known_count(self, pattern: Sequence[Any]) -> int | None:
        return self._space(QUADS.name).known_count(pattern)

    def _graphs(self) -> list[Any]:
        return self._space(QUADS.name).graphs()

    # -- commit -----------------------------------------------------------------------

    def _commit(self, writer: Writer) -> str | None:
        parents = [] if self._head is None else [self._head]
        if any(staged.spilled for staged in self._staged.values()):
            return self._commit_streamed(writer, parents)
        changes = {name: staged.resolved() for name, staged in self._staged.items()}
        total = sum(map(len, changes.values()))
        if not total and not (self.allow_empty and self._head is not None):
            return None
        added = sum(sum(map(itemgetter(1), found)) for found in changes.values())
        return writer.write_commit(self.branch, parents, changes, self.message, self.author, self.time, added,
                                   total - added)

    def _commit_streamed(self, writer: Writer, parents: list[int]) -> str | None:
        """The commit of a transaction whose intents spilled: each spilled space, its
        intents resolved in the scratch range (:meth:`Staged.resolve`), is the
        :class:`~fstore.core.storage.ChangeStream` of its changes; the others go as lists.
        The counts are those the state digest moves by (the same, for a commit of one
        parent)."""
        changes: dict[str, Any] = {name: staged if staged.spilled else staged.resolved()
                                   for name, staged in self._staged.items()}
        total = sum(staged.resolve() if staged.spilled else len(changes[name]) for name, staged in self._staged.items())
        for staged in self._staged.values():
            # Resolved into files: dropped before the commit writes, which reuse the pages of
            # it that are still dirty (the rest are free for the next transactions).
            staged.drop_scratch()
        try:
            if not total and not (self.allow_empty and self._head is not None):
                return None
            return writer.write_commit(self.branch, parents, changes, self.message, self.author, self.time, None, None)
        finally:
            for staged in self._staged.values():
                staged.close()

    def table(self, name: str):
        """The writer of table (Kart dataset) ``name`` on this transaction's branch:
        ``insert`` / ``update`` / ``upsert`` / ``delete`` / ``alter``, and reads that see
        this transaction's writes. Create one with ``fstore.tables.create``."""
        return self.repo.plugins.provided("open_table")(self, name)

    def __repr__(self) -> str:
        state = "open" if self._writer is not None else "closed"
        pending = sum(len(staged.pending) for staged in self._staged.values())
        spilled = " (more spilled to the store)" if any(staged.spilled for staged in self._staged.values()) else ""
        return f"<fstore.Transaction on {self.branch!r} {state}, {pending} change(s) pending{spilled}>"

    def query_source(self) -> QuerySource:
        """What the query engine reads this transaction through (its own writes included):
        the store's adapter to the engine's source protocol, table graphs included
        (:class:`fstore.query_source.QuerySource`); ``query.as_source`` asks for it.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> with repo.transaction("main", message="m") as tx:
        ...     fstore.add(tx, fstore.IRI("urn:g"), fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
        ...     tx.query_source().graphs()
        [IRI('urn:g')]
        >>> repo.close()
        """
        return QuerySource(self)
