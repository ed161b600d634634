"""The row store (format 6): the regular feature tuples of tables kept by table and primary
key, with no dictionary term, each row's body stored once (``docs/format.md``, "Rows").

A regular feature tuple (:func:`fstore.core.rowcodec.split_feature`) is kept as a **row**:
its table's number, its primary key packed order-preserving and its **body**, the legend's
ordinal (a LEB128 number from 1) followed by the blob's values verbatim. The tuple comes
back byte for byte from the table's registry entry (graph, path rule, legend headers), so
commit ids, state digests and sync see the same tuples as before.

Keys (``pv`` is ``nstore.pack_value``, ``key`` the packed primary key of ``n`` values):

- ``95 00 ‖ pack(table, n) ‖ key ‖ pack(seq, state) [‖ pack(j)]`` -> body: every record of a
  row, in commit order (``state`` 1 alive, 0 dead; ``j`` from 1 tells apart the records a
  commit writes of two tuples of one row and state). A dead record's body may instead be
  ``00 ‖ pack(seq', j')``: an earlier alive record of the same row holding the same body
  (the body kept once; gc gives the dead record the body before it drops that record).
- ``95 01 ‖ pack(seq, table, n) ‖ key ‖ pack(state) [‖ pack(j)]`` -> empty: what commit
  ``seq`` changed, table by table, in key order.
- ``96 ‖ pack(snapshot, table, n) ‖ key`` -> ``pack(seq)`` (the alive record ``(seq, 0)``) or
  ``pack(seq₁, j₁, seq₂, j₂, …)``: the rows a snapshot of the tables space holds, each read
  from an alive record holding its body (gc points an entry whose record it drops at
  another, of an ancestor of the snapshot's commit).
- ``pack("TN", graph)`` -> ``pack(table)`` and ``pack("TR", table)`` -> msgpack
  ``[graph, [scheme, branches, levels, encoding], [legend header, …]]`` (ordinal ``i``
  is header ``i - 1``); ``pack("TR")`` -> ``pack(last table number)``.

A graph is registered by the first feature tuple written to it that one of :data:`RULES`
places; its rule never changes, so whether a tuple is regular depends on the tuple alone
and every record of a tuple lives in one home (history significance reads them together).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from itertools import islice
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, NamedTuple, Sequence, overload

import msgpack

from nstore._pack import unpack_scalars
from nstore._blocks import changes as block_changes
from nstore.blocks import Blocks, Runs
from nstore.errors import CorruptStoreError
from nstore.okvs import Transaction, prefix_end
from nstore.pack import decode_item, pack, pack_value, split, unpack
from nstore.terms import IRI

from ._rows import Splitter, entry_records, join_blobs
from .layout import ROW_RECORDS, ROW_SNAPSHOTS
from .rowcodec import (DATASET_PREFIX, FEATURE_IRI, KEY_LIMIT, PathRule, feature_path, join_feature, key_of, keys_of,
                       legend_header, split_feature)

__all__ = ["RowStore", "RowTable", "Row", "RowRecord", "KeyedPaths", "FEATURE", "FEATURE_ITEM", "RULES", "body_of",
           "pointers_value", "pointers_of"]

FEATURE = IRI(FEATURE_IRI)
FEATURE_ITEM = pack_value(FEATURE)
"""The predicate of a row tuple as a key item: inline, where a generic tuple's IRIs are
dictionary references, so the two kinds never share an item."""
RULES = (PathRule("int", 64, 4, "base64"), PathRule("msgpack/hash", 64, 4, "base64"),
         PathRule("msgpack/hash", 256, 2, "hex"))
"""The path rules a graph may be registered with, tried in this order: Kart's for one integer
key, for any other key, and V2's. A table placed otherwise keeps generic tuples."""
BY_ROW = ROW_RECORDS + b"\x00"
BY_COMMIT = ROW_RECORDS + b"\x01"
_NUMBER_TAG, _TABLE_TAG = "TN", "TR"
_ALIVE, _DEAD = pack_value(1), pack_value(0)
COMPILED = True
"""Whether a scan takes the compiled loop (``fstore.core._rows``); tests turn it off to compare."""
REFERENCE = 0  # a dead record's body that starts so names an earlier alive record of its row and body
_REFERENCE = bytes([REFERENCE])


@dataclass
class RowTable:
    """A registered table: its number, graph, path rule and legend headers by ordinal."""

    number: int
    graph: str
    rule: PathRule
    headers: list[bytes]
    ordinals: dict[bytes, int] = field(init=False)  # header -> ordinal
    graph_item: bytes = field(init=False)  # the graph as an inline key item

    def __post_init__(self) -> None:
        self.ordinals = {header: i + 1 for i, header in enumerate(self.headers)}
        self.graph_item = pack_value(IRI(self.graph))

    def encoded(self) -> bytes:
        rule = self.rule
        return msgpack.packb([self.graph, [rule.scheme, rule.branches, rule.levels, rule.encoding], self.headers],
                             use_bin_type=True)

    def join(self, key: bytes, body: bytes) -> tuple[str, bytes]:
        """The path and blob of the row ``key`` whose alive body is ``body``."""
        ordinal, start = self._ordinal_of(body)
        return join_feature(self.rule, key, self.headers[ordinal - 1], body[start:])

    def blob(self, body: bytes) -> bytes:
        """The feature blob of an alive body (:meth:`join` without the path)."""
        ordinal, start = self._ordinal_of(body)
        return b"\x92" + self.headers[ordinal - 1] + body[start:]

    def _ordinal_of(self, body: bytes) -> tuple[int, int]:
        ordinal, start = _varint(body, 0)
        if not 1 <= ordinal <= len(self.headers):
            raise CorruptStoreError(f"table {self.number}: a row body names legend {ordinal}, which is not registered")
        return ordinal, start


class Row(NamedTuple):
    """A regular feature tuple as a row: table number, count of key values, packed key, and
    body (None when the tuple's legend is not registered: no record can hold it)."""

    table: int
    n: int
    key: bytes
    body: bytes | None


class KeyedPaths(Sequence[str]):
    """The paths of rows read in key order, each made only when asked for: a table's
    readers take the primary keys (:meth:`pks`) the rows are stored by, not their paths."""

    __slots__ = ("rule", "keys", "_pks")

    def __init__(self, rule: PathRule, keys: list[bytes]) -> None:
        self.rule = rule
        self.keys = keys  # each row's packed primary key
        self._pks: list[list[Any]] | None = None

    def pks(self) -> list[list[Any]]:
        """Each row's primary-key values (decoded in C when they are plain scalars)."""
        if self._pks is None:
            found = unpack_scalars(self.keys, 0)
            self._pks = found if found is not None else [list(unpack(key)) for key in self.keys]
        return self._pks

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        path = feature_path(self.rule, self.pks()[index])
        if path is None:  # a row's key always has its path under its table's rule
            raise CorruptStoreError(f"row key {self.keys[index].hex()} has no path under {self.rule}")
        return path


class RowRecord(NamedTuple):
    """One record of a row: its commit, state, ``j`` and body (a dead record's reference
    resolved to the body it ends)."""

    seq: int
    alive: bool
    j: int
    body: bytes


def _is_reference(body: bytes) -> bool:
    """Whether a dead record's body refers to another record rather than holding one."""
    return body[:1] == _REFERENCE


def _record_suffixes(keys: list[bytes], skip: int) -> list[tuple[int, bool, int]]:
    """``(seq, alive, j)`` of records of one row (keys of ``skip`` bytes of row prefix, then
    ``pack(seq, state) [‖ pack(j)]``), decoded in one C call."""
    found = unpack_scalars(keys, skip)
    if found is None or any(len(numbers) not in (2, 3) for numbers in found):
        raise CorruptStoreError(f"a record key of row {keys[0][:60].hex()} is damaged")
    return [(numbers[0], numbers[1] == 1, numbers[2] if len(numbers) == 3 else 0) for numbers in found]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise CorruptStoreError(f"row body {data[:40].hex()} ends inside its legend ordinal")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def _leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def body_of(ordinal: int, values: bytes) -> bytes:
    """An alive record's body: the legend's ordinal, then the blob's values."""
    return _leb128(ordinal) + values


def pointers_value(pointers: Sequence[tuple[int, int]]) -> bytes:
    """A snapshot entry's value: the alive records it reads."""
    if len(pointers) == 1 and pointers[0][1] == 0:
        return _packed(pointers[0][0])  # a commit's entries share it
    return pack(*[number for pointer in sorted(pointers) for number in pointer])


def pointers_of(value: bytes) -> list[tuple[int, int]]:
    """The alive records a snapshot entry names (the inverse of :func:`pointers_value`)."""
    numbers = unpack(value)
    if len(numbers) == 1:
        return [(numbers[0], 0)]
    return list(zip(numbers[::2], numbers[1::2]))


@functools.lru_cache(maxsize=4096)
def _packed(*numbers: int) -> bytes:
    return pack(*numbers)  # the few numbers a batch's keys share, packed once


def _record_key(table: int, n: int, key: bytes, seq: int, alive: bool, j: int) -> bytes:
    return b"".join((BY_ROW, _packed(table, n), key, _packed(seq, 1 if alive else 0), _packed(j) if j else b""))


def _commit_key(table: int, n: int, key: bytes, seq: int, alive: bool, j: int) -> bytes:
    return b"".join((BY_COMMIT, _packed(seq, table, n), key, _ALIVE if alive else _DEAD, _packed(j) if j else b""))


class RowStore:
    """The rows of every table: registry, records and snapshots (see the module docstring)."""

    def __init__(self) -> None:
        self.records = Blocks.under(ROW_RECORDS)
        self.snapshots = Blocks.under(ROW_SNAPSHOTS)
        self._runs: tuple[Transaction, Runs] | None = None

    @contextmanager
    def deferred(self, tx: Transaction) -> Iterator[None]:
        """Within it, :meth:`write` keeps the records' keys as sorted runs, merged into the
        blocks once when it ends (a commit written a chunk at a time, whose chunks' keys
        fall all over the keyspace); nothing may read the records meanwhile."""
        if self._runs is not None:
            raise RuntimeError("the row store defers the writes of a transaction already")
        with Runs() as runs:
            self._runs = (tx, runs)
            try:
                yield
            finally:
                self._runs = None
            runs.merge_into(tx, self.records, keep=False)

    def _apply_records(self, tx: Transaction, keys: list[bytes], values: list[bytes | None]) -> None:
        """Write sorted keys of the records (at once, or into the runs being deferred)."""
        if self._runs is not None and self._runs[0] is tx:
            self._runs[1].add(block_changes(keys, values))
        else:
            self.records.apply(tx, keys, values)

    # -- the registry -----------------------------------------------------------------------

    def table(self, tx: Transaction, number: int) -> RowTable:
        value = tx.get(pack(_TABLE_TAG, number))
        if value is None:
            raise CorruptStoreError(f"rows name table {number}, which is not registered")
        try:
            graph, (scheme, branches, levels, encoding), headers = msgpack.unpackb(value)
            return RowTable(number, graph, PathRule(scheme, branches, levels, encoding), list(headers))
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            raise CorruptStoreError(f"the registry entry of table {number} is damaged: {exc}") from None

    def table_of(self, tx: Transaction, graph: str) -> RowTable | None:
        """The registered table of dataset graph ``graph`` (its IRI's text), or None."""
        value = tx.get(pack(_NUMBER_TAG, graph))
        return None if value is None else self.table(tx, unpack(value)[0])

    def tables(self, tx: Transaction) -> list[RowTable]:
        """Every registered table, by number."""
        start = pack(_TABLE_TAG)  # the counter; the tables' keys come after it
        return [self.table(tx, unpack(key)[1]) for key, _ in tx.range(start + b"\x00", prefix_end(start))]

    def _register(self, tx: Transaction, graph: str, rule: PathRule) -> RowTable:
        counter = pack(_TABLE_TAG)
        last = tx.get(counter)
        number = (unpack(last)[0] if last is not None else 0) + 1
        tx.set(counter, pack(number))
        tx.set(pack(_NUMBER_TAG, graph), pack(number))
        table = RowTable(number, graph, rule, [])
        tx.set(pack(_TABLE_TAG, number), table.encoded())
        return table

    def _ordinal(self, tx: Transaction, table: RowTable, header: bytes, create: bool) -> int | None:
        ordinal = table.ordinals.get(header)
        if ordinal is None and create:
            table.headers.append(header)
            ordinal = table.ordinals[header] = len(table.headers)
            tx.set(pack(_TABLE_TAG, table.number), table.encoded())
        return ordinal

    # -- tuples <-> rows --------------------------------------------------------------------

    def split(self, tx: Transaction, quad: Sequence, tables: dict[str, RowTable | None], create: bool) -> Row | None:
        """The row of a feature tuple, or None when it is not regular (a generic tuple).
        ``tables`` caches the registry by graph for a batch; ``create`` registers the
        graph and the legend as needed (a write)."""
        graph, path, predicate, blob = quad
        if type(predicate) is not IRI or predicate.value != FEATURE_IRI or type(graph) is not IRI or \
                not isinstance(path, str) or not isinstance(blob, bytes) or not graph.value.startswith(DATASET_PREFIX):
            return None
        path, blob = str(path), bytes(blob)  # a subclass's value (numpy.str_...) packs as these do
        name = graph.value
        if name in tables:
            table = tables[name]
        else:
            table = tables[name] = self.table_of(tx, name)
        if table is None:
            if not create:
                return None
            for rule in RULES:
                parts = split_feature(rule, path, blob)
                if parts is not None:
                    table = tables[name] = self._register(tx, name, rule)
                    break
            else:
                return None
        else:
            parts = split_feature(table.rule, path, blob)
            if parts is None:
                return None
        ordinal = self._ordinal(tx, table, parts.header, create)
        n = parts.count
        return Row(table.number, n, parts.key, None if ordinal is None else body_of(ordinal, parts.values))

    def split_many(self, tx: Transaction, quads: Sequence[Sequence[Any]], tables: dict[str, RowTable | None],
                   create: bool) -> list[Row | None]:
        """:meth:`split` of many tuples: those of a registered table split in C a table at a
        time (:class:`~._rows.Splitter`), the others (and any the C splitter leaves) by
        :meth:`split`, which gives the same answers."""
        found: list[Row | None] = [None] * len(quads)
        by_table: dict[str, list[int]] = {}
        for i, quad in enumerate(quads):
            graph, predicate = quad[0], quad[2]
            if type(predicate) is IRI and predicate.value == FEATURE_IRI and type(graph) is IRI:
                by_table.setdefault(graph.value, []).append(i)
        for name, positions in by_table.items():
            if COMPILED and name.startswith(DATASET_PREFIX):
                table = tables[name] if name in tables else tables.setdefault(name, self.table_of(tx, name))
                if table is None and create:  # the first tuple a rule places registers the table
                    for at, i in enumerate(positions):
                        found[i] = self.split(tx, quads[i], tables, create)
                        if found[i] is not None:
                            table, positions = tables[name], positions[at + 1:]
                            break
                if table is not None:
                    splitter = self._splitter(tx, table, create)
                    for i, row in zip(positions, splitter.split([quads[i][1] for i in positions],
                                                                [quads[i][3] for i in positions])):
                        found[i] = row
            for i in positions:
                if found[i] is None:
                    found[i] = self.split(tx, quads[i], tables, create)
        return found

    def _splitter(self, tx: Transaction, table: RowTable, create: bool) -> Splitter:
        rule = table.rule
        return Splitter(table.number, rule.scheme, rule.branches, rule.levels, rule.alphabet, rule.group_length,
                        KEY_LIMIT, table.ordinals, lambda header: self._ordinal(tx, table, header, create), Row)

    def stored_row(self, table: RowTable, path: str, blob: bytes) -> Row:
        """The row of a tuple read back from the row store (a row by construction)."""
        found = key_of(table.rule, path)
        head = legend_header(blob)
        ordinal = table.ordinals.get(blob[1:head]) if head else None
        if found is None or ordinal is None:
            raise CorruptStoreError(f"table {table.number}: the tuple at {path} read back from the rows is not a row")
        return Row(table.number, found[0], found[1], body_of(ordinal, blob[head:]))

    def alive_records(self, tx: Transaction, rows: Sequence[Row], seq: int) -> list[tuple[int, int] | None]:
        """For each row, commit ``seq``'s first alive record of it if that record holds the
        row's body (what a snapshot moving to ``seq`` reads), else None; one sorted lookup."""
        keys = [_record_key(row.table, row.n, row.key, seq, True, 0) for row in rows]
        return [(seq, 0) if body == row.body else None for row, body in zip(rows, self.records.get_many(tx, keys))]

    def key_of_path(self, table: RowTable, path: str) -> tuple[int, bytes] | None:
        """``(n, key)`` of the row at ``path`` in ``table``, or None when no row can be
        there (:func:`~.rowcodec.key_of`)."""
        return key_of(table.rule, path)

    def keys_of_paths(self, table: RowTable, paths: list[str]) -> list[tuple[int, bytes] | None]:
        """:meth:`key_of_path` of many paths (in C, :func:`~.rowcodec.keys_of`)."""
        return keys_of(table.rule, paths)

    def quad(self, table: RowTable, key: bytes, body: bytes) -> tuple:
        """The feature tuple of a row (values)."""
        path, blob = table.join(key, body)
        return IRI(table.graph), path, FEATURE, blob

    def items(self, table: RowTable, key: bytes, body: bytes) -> list[bytes]:
        """The feature tuple of a row as inline key items (what its identity joins)."""
        path, blob = table.join(key, body)
        return [table.graph_item, pack_value(path), FEATURE_ITEM, pack_value(blob)]

    # -- records ----------------------------------------------------------------------------

    def write(self, tx: Transaction, seq: int, changes: Sequence[tuple[Row, bool]],
              slots: dict[tuple[int, bytes, bool], int] | None = None) -> list[tuple[int, int]]:
        """Write commit ``seq``'s records of rows (each ``(row, alive)``, the row's body
        set); returns each change's ``(seq, j)``. ``slots``: the records of each row and
        state the commit wrote already (a commit written in chunks). A dead record refers
        to the alive record of its row and body it ends when one is stored (the row's
        latest), else keeps the body."""
        slots = defaultdict(int) if slots is None else slots
        made: list[tuple[int, int]] = []
        keys0: list[bytes] = []
        values0: list[bytes] = []
        keys1: list[bytes] = []
        dead = {BY_ROW + _packed(row.table, row.n) + row.key: row for row, alive in changes if not alive}
        stored = self.records.under_many(tx, list(dead)) if dead else {}
        for row, alive in changes:
            j = slots.get((row.table, row.key, alive), 0)
            slots[(row.table, row.key, alive)] = j + 1
            body = row.body
            assert body is not None, "a written row has a registered legend"
            if not alive:
                prefix = BY_ROW + _packed(row.table, row.n) + row.key
                ended = self._latest_alive(stored.get(prefix, ()), len(prefix), body, seq)
                if ended is not None:
                    body = _REFERENCE + pack(*ended)
            keys0.append(_record_key(row.table, row.n, row.key, seq, alive, j))
            values0.append(body)
            keys1.append(_commit_key(row.table, row.n, row.key, seq, alive, j))
            made.append((seq, j))
        order = sorted(range(len(keys0)), key=keys0.__getitem__)
        self._apply_records(tx, [keys0[i] for i in order], [values0[i] for i in order])
        self._apply_records(tx, sorted(keys1), [b""] * len(keys1))
        return made

    def _latest_alive(self, pairs: Sequence[tuple[bytes, bytes]], skip: int, body: bytes,
                      before: int) -> tuple[int, int] | None:
        """``(seq, j)`` of the latest alive record among one row's ``pairs`` (keys of
        ``skip`` bytes of row prefix, then commit, state and ``j``) that holds ``body`` and
        precedes commit ``before`` (a record's key is parsed only when its value is that
        body, in C)."""
        for key, value in reversed(pairs):
            if value == body:
                seq, alive, j = _record_suffixes([key], skip)[0]
                if alive and seq < before:
                    return seq, j
        return None

    @classmethod
    def _parse_commit_keys(cls, keys: list[bytes]) -> list[tuple[int, int, int, bytes, bool, int]]:
        """:meth:`_parse_commit_key` of many keys, their numbers decoded in one C call (a
        row's key is a slice of its record's: the numbers around it give its bounds)."""
        found = unpack_scalars(keys, len(BY_COMMIT))
        if found is None:
            return [cls._parse_commit_key(key) for key in keys]
        parsed = []
        for key, values in zip(keys, found):
            seq, table, n = values[0], values[1], values[2]
            state, j = values[3 + n], (values[4 + n] if len(values) > 4 + n else 0)
            start = len(BY_COMMIT) + len(_packed(seq, table, n))
            end = len(key) - len(_packed(state)) - (len(_packed(j)) if j else 0)
            parsed.append((seq, table, n, key[start:end], state == 1, j))
        return parsed

    @staticmethod
    def _parse_commit_key(key: bytes) -> tuple[int, int, int, bytes, bool, int]:
        """``(seq, table, n, key, alive, j)`` of a key of the by-commit index."""
        items = split(key, len(BY_COMMIT))
        seq, table, n = decode_item(items[0]), decode_item(items[1]), decode_item(items[2])
        rest = items[3 + n:]
        return seq, table, n, b"".join(items[3:3 + n]), rest[0] == _ALIVE, decode_item(rest[1]) if len(rest) > 1 else 0

    def _parse_record(self, key: bytes) -> tuple[int, int, bytes, int, bool, int]:
        items = split(key, len(BY_ROW))
        table, n = decode_item(items[0]), decode_item(items[1])
        rest = items[2 + n:]
        return (table, n, b"".join(items[2:2 + n]), decode_item(rest[0]), rest[1] == _ALIVE,
                decode_item(rest[2]) if len(rest) > 2 else 0)

    def _resolved(self, pairs: Sequence[tuple[bytes, bytes]], skip: int) -> list[RowRecord]:
        """The records of one row (its keys in order, each ``skip`` bytes of row prefix
        before its commit, state and ``j``) with references resolved."""
        records: list[RowRecord] = []
        alive_bodies: dict[tuple[int, int], bytes] = {}
        for (key, body), (seq, alive, j) in zip(pairs, _record_suffixes([key for key, _ in pairs], skip)):
            if _is_reference(body):
                target = unpack(body[1:])
                found = alive_bodies.get((target[0], target[1]))
                if found is None or alive:
                    raise CorruptStoreError(f"row record {key.hex()} refers to record {target}, which its row lacks")
                body = found
            if alive:
                alive_bodies[(seq, j)] = body
            records.append(RowRecord(seq, alive, j, body))
        return records

    def records_of(self, tx: Transaction, table: int, n: int, key: bytes) -> list[RowRecord]:
        """Every record of one row, in commit order (significance order)."""
        prefix = BY_ROW + _packed(table, n) + key
        return self._resolved(list(self.records.range(tx, prefix, prefix_end(prefix))), len(prefix))

    def _records_of_many(self, tx: Transaction, rows: Iterable[tuple[int, int, bytes]]) -> dict[tuple[int, bytes], list[RowRecord]]:
        prefixes = {BY_ROW + _packed(table, n) + key: (table, key) for table, n, key in rows}
        found = self.records.under_many(tx, list(prefixes))
        return {prefixes[prefix]: self._resolved(pairs, len(prefix)) for prefix, pairs in found.items() if pairs}

    def records_under(self, tx: Transaction, table: int | None) -> Iterator[tuple[int, int, bytes, list[RowRecord]]]:
        """``(table, n, key, records)`` of every row with records (of one table, or all)."""
        prefix = BY_ROW + (pack(table) if table is not None else b"")
        group: tuple[int, int, bytes] | None = None
        pairs: list[tuple[bytes, bytes]] = []
        for key, value in self.records.range(tx, prefix, prefix_end(prefix)):
            table_number, n, row_key, *_ = self._parse_record(key)
            if (table_number, n, row_key) != group:
                if group is not None:
                    yield (*group, self._resolved(pairs, len(BY_ROW + _packed(*group[:2]) + group[2])))
                group, pairs = (table_number, n, row_key), []
            pairs.append((key, value))
        if group is not None:
            yield (*group, self._resolved(pairs, len(BY_ROW + _packed(*group[:2]) + group[2])))

    def touched(self, tx: Transaction, seqs: Iterable[int], table: int | None = None) -> set[tuple[int, int, bytes]]:
        """``(table, n, key)`` of every row commits ``seqs`` wrote a record of (of one table,
        or all): the by-commit index's prefixes, no body read."""
        found: set[tuple[int, int, bytes]] = set()
        for seq in seqs:
            prefix = BY_COMMIT + (_packed(seq, table) if table is not None else _packed(seq))
            keys = [key for key, _ in self.records.range(tx, prefix, prefix_end(prefix))]
            found.update(parsed[1:4] for parsed in self._parse_commit_keys(keys))
        return found

    def state_changes(self, tx: Transaction, before: frozenset[int], after: frozenset[int], table: int | None = None
                      ) -> Iterator[tuple[int, bytes, bytes, bool]]:
        """``(table, key, body, alive under after)`` of each row tuple whose state under the
        ancestry ``after`` differs from its state under ``before`` (of one table, or all), in
        key order: only the records of commits in one ancestry and not the other can differ,
        so the rows they touched are read, each row's records in one sorted batch."""
        rows = sorted(self.touched(tx, before ^ after, table))
        found = self._records_of_many(tx, rows)
        for number, _, key in rows:
            was: dict[bytes, bool] = {}
            now: dict[bytes, bool] = {}
            for record in found.get((number, key), ()):
                if record.seq in before:
                    was[record.body] = record.alive
                if record.seq in after:
                    now[record.body] = record.alive
            for body in was.keys() | now.keys():
                if was.get(body, False) != now.get(body, False):
                    yield number, key, body, now.get(body, False)

    def has_records(self, tx: Transaction) -> bool:
        return next(self.records.range(tx, BY_ROW, prefix_end(BY_ROW), limit=1), None) is not None

    def change_chunks(self, tx: Transaction, seq: int, size: int = 4096
                      ) -> Iterator[list[tuple[int, int, bytes, bool, int, bytes]]]:
        """``(table, n, key, alive, j, body)`` of each record commit ``seq`` wrote, by table
        and key (dead records' bodies resolved), ``size`` at a time."""
        prefix = BY_COMMIT + _packed(seq)
        keys = (key for key, _ in self.records.range(tx, prefix, prefix_end(prefix)))
        while chunk := list(islice(keys, size)):
            entries = [parsed[1:] for parsed in self._parse_commit_keys(chunk)]
            bodies = self.records.get_many(tx, [_record_key(t, n, k, seq, a, j) for t, n, k, a, j in entries])
            references = {i: unpack(body[1:]) for i, body in enumerate(bodies)
                          if body is not None and _is_reference(body)}
            if references:
                targets = self.records.get_many(tx, [_record_key(entries[i][0], entries[i][1], entries[i][2], s, True, j)
                                                     for i, (s, j) in references.items()])
                for i, target in zip(references, targets):
                    bodies[i] = target
            found = []
            for entry, body in zip(entries, bodies):
                if body is None:
                    raise CorruptStoreError(f"commit #{seq} lists a change of row {entry[2].hex()} of table {entry[0]} "
                                            "whose record is missing")
                found.append((*entry, body))
            yield found

    def drop_records(self, tx: Transaction, seq: int, snapshots: dict[int, frozenset[int]]) -> int:
        """Delete the records commit ``seq`` wrote (gc: no ref reaches it). A dead record of
        another commit that refers to one of them takes its body first, and an entry of a
        snapshot in ``snapshots`` (number -> its commit's ancestors) that reads one of them
        reads instead the latest alive record of the same body among those ancestors."""
        changes = [change for chunk in self.change_chunks(tx, seq) for change in chunk]
        ended = {(t, k): n for t, n, k, alive, _, _ in changes if alive}
        if ended:
            rows = self._records_of_many(tx, [(t, n, k) for (t, k), n in ended.items()])
            for (table, key), records in rows.items():
                n = ended[(table, key)]
                mine = {(r.seq, r.j): r.body for r in records if r.alive and r.seq == seq}
                prefix = BY_ROW + _packed(table, n) + key
                for stored_key, body in list(self.records.range(tx, prefix, prefix_end(prefix))):
                    target = tuple(unpack(body[1:])) if _is_reference(body) else None
                    if target in mine:
                        self.records.set(tx, stored_key, mine[target])  # type: ignore[index]
            for number, ancestors in snapshots.items():
                self._repoint(tx, number, ancestors, seq, ended, rows)
        keys0 = sorted(_record_key(t, n, k, seq, a, j) for t, n, k, a, j, _ in changes)
        keys1 = sorted(_commit_key(t, n, k, seq, a, j) for t, n, k, a, j, _ in changes)
        self.records.apply(tx, keys0, [None] * len(keys0))
        self.records.apply(tx, keys1, [None] * len(keys1))
        return len(changes)

    def _repoint(self, tx: Transaction, number: int, ancestors: frozenset[int], seq: int,
                 rows: dict[tuple[int, bytes], int], records: dict[tuple[int, bytes], list[RowRecord]]) -> None:
        """Point snapshot ``number``'s entries that read a record of commit ``seq`` (being
        dropped) at another alive record of the same body among ``ancestors``."""
        order = sorted(rows)
        entries = self.snapshots.get_many(tx, [self.snapshot_prefix(number, table) + _packed(rows[(table, key)]) + key
                                               for table, key in order])
        changed: dict[bytes, bytes] = {}
        for (table, key), value in zip(order, entries):
            if value is None:
                continue
            pointers = pointers_of(value)
            if not any(pointer[0] == seq for pointer in pointers):
                continue
            held = records.get((table, key), [])
            bodies = {(r.seq, r.j): r.body for r in held if r.alive}
            moved = []
            for pointer in pointers:
                if pointer[0] == seq:
                    body = bodies.get(pointer)
                    others = [(r.seq, r.j) for r in held if r.alive and r.body == body and r.seq != seq and r.seq in ancestors]
                    if not others:
                        raise CorruptStoreError(f"snapshot {number} reads row {key.hex()} of table {table} from commit "
                                                f"#{seq}, and no ancestor of its commit wrote that row's body")
                    pointer = others[-1]
                moved.append(pointer)
            changed[self.snapshot_prefix(number, table) + _packed(rows[(table, key)]) + key] = pointers_value(moved)
        if changed:
            keys = sorted(changed)
            self.snapshots.apply(tx, keys, [changed[key] for key in keys])

    # -- snapshots --------------------------------------------------------------------------

    @staticmethod
    def snapshot_prefix(number: int, table: int | None = None) -> bytes:
        return ROW_SNAPSHOTS + (pack(number) if table is None else pack(number, table))

    def snapshot_entries(self, tx: Transaction, number: int, table: int | None = None
                         ) -> Iterator[tuple[int, int, bytes, list[tuple[int, int]]]]:
        """``(table, n, key, pointers)`` of every row snapshot ``number`` holds (of one table
        or all), in key order."""
        prefix = self.snapshot_prefix(number, table)
        skip = len(self.snapshot_prefix(number))
        for key, value in self.snapshots.range(tx, prefix, prefix_end(prefix)):
            items = split(key, skip)
            yield decode_item(items[0]), decode_item(items[1]), b"".join(items[2:]), pointers_of(value)

    def scan(self, tx: Transaction, number: int, table: RowTable, size: int,
             dead: dict[bytes, set[bytes]]) -> Iterator[tuple[KeyedPaths, list[bytes]]]:
        """The features of ``table`` in snapshot ``number``, in key order, ``size`` at a
        time as ``(paths, blobs)``, less those in ``dead`` (blobs by packed key): the
        snapshot's entries a block at a time, their records' bodies looked up in one
        sorted batch per block, no key parsed (a record's key is the entry's with the
        commit it names; the rare entry naming several records is resolved apart)."""
        prefix = self.snapshot_prefix(number, table.number)
        skip = len(self.snapshot_prefix(number))
        heads = [b"\x92" + header for header in table.headers]
        keys: list[bytes] = []
        blobs: list[bytes] = []
        for entry_keys, values in self.snapshots.batches(tx, prefix, prefix_end(prefix)):
            records, row_keys, several = entry_records(entry_keys, values, skip, len(prefix), BY_ROW, _ALIVE)
            joined = join_blobs(self.records.get_many(tx, records), heads) if COMPILED and not several else None
            if joined is not None and not dead:
                keys += row_keys
                blobs += joined
            elif joined is not None:  # a read at another commit: less the rows dead there
                for key, blob in zip(row_keys, joined):
                    if key not in dead or blob not in dead[key]:
                        keys.append(key)
                        blobs.append(blob)
            else:
                self._scan_block(tx, number, table, heads, row_keys, values, dead, keys, blobs)
            while len(keys) >= size:
                yield KeyedPaths(table.rule, keys[:size]), blobs[:size]
                del keys[:size], blobs[:size]
        if keys:
            yield KeyedPaths(table.rule, keys), blobs

    def _scan_block(self, tx: Transaction, number: int, table: RowTable, heads: list[bytes], row_keys: list[bytes],
                    values: list[bytes], dead: dict[bytes, set[bytes]], keys: list[bytes], blobs: list[bytes]) -> None:
        """:meth:`scan` of one block of entries, row by row (the reference of the compiled
        loop, and the way of entries naming several records, a dead row or a damaged body)."""
        n = len(split(row_keys[0])) if row_keys else 0
        rows = [(len(split(key)) if i else n, key, pointers_of(value)) for i, (key, value) in enumerate(zip(row_keys, values))]
        for (_, row_key, _), found in zip(rows, self.bodies(tx, table.number, rows)):
            for body in found:
                if body[:1] and body[0] < 0x80 and 0 < body[0] <= len(heads):
                    blob = heads[body[0] - 1] + body[1:]
                else:
                    blob = table.blob(body)  # a long ordinal, or a damaged one named
                if dead and blob in dead.get(row_key, ()):
                    continue
                keys.append(row_key)
                blobs.append(blob)

    def snapshot_entries_many(self, tx: Transaction, number: int, table: int, rows: Sequence[tuple[int, bytes]]
                              ) -> list[list[tuple[int, int]]]:
        """The alive records snapshot ``number`` names for each ``(n, key)`` of ``table``
        (empty: the row is not there), in one sorted lookup."""
        prefix = self.snapshot_prefix(number, table)
        values = self.snapshots.get_many(tx, [prefix + _packed(n) + key for n, key in rows])
        return [[] if value is None else pointers_of(value) for value in values]

    def snapshot_entry(self, tx: Transaction, number: int, table: int, n: int, key: bytes) -> list[tuple[int, int]]:
        """:meth:`snapshot_entries_many` of one row."""
        return self.snapshot_entries_many(tx, number, table, [(n, key)])[0]

    def bodies(self, tx: Transaction, table: int, rows: Sequence[tuple[int, bytes, list[tuple[int, int]]]]) -> list[list[bytes]]:
        """The alive bodies the pointers of each ``(n, key, pointers)`` name."""
        keys = [_record_key(table, n, key, seq, True, j) for n, key, pointers in rows for seq, j in pointers]
        found = iter(self.records.get_many(tx, keys))
        bodies = []
        for n, key, pointers in rows:
            row = []
            for _ in pointers:
                body = next(found)
                if body is None:
                    raise CorruptStoreError(f"a snapshot names a record of row {key.hex()} of table {table} that is missing")
                row.append(body)
            bodies.append(row)
        return bodies

    def snapshot_count(self, tx: Transaction, number: int, table: int | None = None) -> int:
        """The row tuples snapshot ``number`` holds (of one table, or all): its entries, and
        the second and later records of an entry naming several (O(entries); for verify)."""
        prefix = self.snapshot_prefix(number, table)
        total = 0
        for keys, values in self.snapshots.batches(tx, prefix, prefix_end(prefix)):
            total += len(keys)
            for value in values:
                if not (0x15 <= value[0] <= 0x1C and len(value) == value[0] - 0x13):
                    total += len(pointers_of(value)) - 1
        return total

    def apply(self, tx: Transaction, number: int, born: Sequence[tuple[Row, tuple[int, int]]],
              dead: Sequence[Row]) -> dict[int, int]:
        """Add the rows ``born`` (each with the alive record it reads) to snapshot
        ``number`` and remove ``dead``; returns the change in rows by table."""
        prefix = self.snapshot_prefix(number)
        keys: dict[bytes, tuple[int, int, bytes]] = {}
        for row in [r for r, _ in born] + list(dead):
            keys[prefix + _packed(row.table, row.n) + row.key] = (row.table, row.n, row.key)
        order = sorted(keys)
        current = dict(zip(order, self.snapshots.get_many(tx, order)))
        pointers = {key: (pointers_of(value) if value is not None else []) for key, value in current.items()}
        deltas: dict[int, int] = defaultdict(int)
        for row in dead:
            key = prefix + _packed(row.table, row.n) + row.key
            held = pointers[key]
            if not held:
                continue
            if len(held) == 1:
                held.clear()
            else:
                bodies = self.bodies(tx, row.table, [(row.n, row.key, held)])[0]
                pointers[key] = [p for p, body in zip(held, bodies) if body != row.body]
            deltas[row.table] -= 1
        for row, pointer in born:
            key = prefix + _packed(row.table, row.n) + row.key
            held = pointers[key]
            if held:
                bodies = self.bodies(tx, row.table, [(row.n, row.key, held)])[0]
                if row.body in bodies:
                    continue
            held.append(pointer)
            deltas[row.table] += 1
        values = [pointers_value(pointers[key]) if pointers[key] else None for key in order]
        changed = [(key, value) for key, value in zip(order, values) if value != current[key]]
        self.snapshots.apply(tx, [key for key, _ in changed], [value for _, value in changed])
        return dict(deltas)

    def copy_snapshot(self, tx: Transaction, source: int, target: int) -> None:
        start, into = self.snapshot_prefix(source), self.snapshot_prefix(target)
        pairs = [(into + key[len(start):], value) for key, value in self.snapshots.range(tx, start, prefix_end(start))]
        if pairs:
            self.snapshots.apply(tx, [key for key, _ in pairs], [value for _, value in pairs])

    def drop_snapshot(self, tx: Transaction, number: int) -> None:
        self.snapshots.remove_range(tx, self.snapshot_prefix(number), prefix_end(self.snapshot_prefix(number)))

    # -- verify -----------------------------------------------------------------------------

    def problems(self, tx: Transaction) -> Iterator[str]:
        """Where the two record indices disagree, a record refers to a record its row lacks
        or a snapshot entry names one, or the registry contradicts itself (O(keys))."""
        tables: dict[int, RowTable] = {}
        try:
            for table in self.tables(tx):
                tables[table.number] = table
                number = tx.get(pack(_NUMBER_TAG, table.graph))
                if number is None or unpack(number)[0] != table.number:
                    yield f"rows: table {table.number} ({table.graph}) is not the graph's registered table"
        except CorruptStoreError as exc:
            yield f"rows: {exc}"
            return
        by_row: set[tuple] = set()
        alive: set[tuple] = set()
        for key, body in self.records.range(tx, BY_ROW, prefix_end(BY_ROW)):
            try:
                table, n, row_key, seq, state, j = self._parse_record(key)
                if table not in tables:
                    raise CorruptStoreError(f"table {table} is not registered")
                if state:
                    tables[table].join(row_key, body)
            except (CorruptStoreError, ValueError, IndexError) as exc:
                yield f"rows: record {key[:60].hex()} is damaged: {exc}"
                continue
            by_row.add((table, n, row_key, seq, state, j))
            if state:
                alive.add((table, row_key, seq, j))
                continue
            try:
                target = unpack(body[1:]) if _is_reference(body) else None
                if target is None:
                    tables[table].join(row_key, body)
            except (CorruptStoreError, ValueError, IndexError) as exc:
                yield f"rows: dead record {key[:60].hex()} is damaged: {exc}"
                continue
            if target is not None and (table, row_key, *target[:2]) not in alive:
                yield f"rows: dead record {key[:60].hex()} refers to record {target}, which its row lacks"
        by_commit: set[tuple] = set()
        for key, _ in self.records.range(tx, BY_COMMIT, prefix_end(BY_COMMIT)):
            try:
                seq, table, n, row_key, state, j = self._parse_commit_key(key)
                by_commit.add((table, n, row_key, seq, state, j))
            except (ValueError, IndexError, TypeError) as exc:
                yield f"rows: record {key[:60].hex()} of the by-commit index is damaged: {exc}"
        if by_row != by_commit:
            differ = min(by_row ^ by_commit)
            yield (f"rows: the two record indices disagree on {len(by_row ^ by_commit)} record(s) "
                   f"(first: table {differ[0]}, key {differ[2].hex()}, commit #{differ[3]})")
        for key, value in self.snapshots.range(tx, ROW_SNAPSHOTS, prefix_end(ROW_SNAPSHOTS)):
            try:
                items = split(key, 1)
                table, row_key, pointers = decode_item(items[1]), b"".join(items[3:]), pointers_of(value)
            except (ValueError, IndexError, TypeError) as exc:
                yield f"rows: snapshot entry {key[:60].hex()} is damaged: {exc}"
                continue
            for seq, j in pointers:
                if (table, row_key, seq, j) not in alive:
                    yield f"rows: snapshot entry {key[:60].hex()} names record ({seq}, {j}), which is not an alive record of its row"

    def pointer_for(self, tx: Transaction, row: Row, hint: int | None, ancestors: frozenset[int] | None) -> tuple[int, int]:
        """The alive record a snapshot gaining ``row`` reads: commit ``hint``'s record of
        it when there is one, else the latest alive record of the row with its body among
        ``ancestors``."""
        records = self.records_of(tx, row.table, row.n, row.key)
        candidates = [r for r in records if r.alive and r.body == row.body]
        for record in reversed(candidates):
            if record.seq == hint:
                return record.seq, record.j
        for record in reversed(candidates):
            if ancestors is None or record.seq in ancestors:
                return record.seq, record.j
        raise CorruptStoreError(f"row {row.key.hex()} of table {row.table} has no alive record to read")
