"""The tables space over two homes: regular feature tuples as rows (:mod:`.rows`), every
other tuple (meta items, legends, attachments, irregular features) in the generic n-tuple
stores. Each class here is the generic one with the rows added, so that every caller of the
space (commits, merges, diffs, sync, verify, gc) sees one set of tuples, the same as before.

A row tuple travels through the generic code as **inline key items**: the packed graph, path,
predicate and blob themselves (``pack_value``), never dictionary references; its predicate
item is :data:`~.rows.FEATURE_ITEM`, which no generic tuple has (a generic tuple's IRIs are
dictionary references), so either side tells a row tuple by it.
"""

from __future__ import annotations

from collections import Counter
from contextlib import ExitStack
from itertools import chain, compress, islice
from typing import Any, ContextManager, Iterator, Sequence

from nstore import Var
from nstore._blocks import sorted_bytes
from nstore._pack import unpack_scalars
from nstore.dictionary import Dictionary
from nstore.errors import CorruptStoreError
from nstore.okvs import Okvs, Transaction
from nstore.pack import BLOBREF_CODE, TERMREF_CODE, decode_item, pack_value, split
from nstore.terms import IRI, to_rdf

from .commits import CommitStore
from .heads import Heads, ItemChanges, Overlay, Reader, _EMPTY, repeated_vars
from .history import ALIVE, DEAD, History, Quad, rechunked, winner
from .layout import TABLES, Space
from .rows import FEATURE, FEATURE_ITEM, Row, RowStore, RowTable

__all__ = ["TablesHistory", "TablesHeads", "TablesReader", "TablesOverlay"]

_REF_CODES = range(TERMREF_CODE, TERMREF_CODE + 5)
_CHUNK = 1024  # rows whose bodies a scan reads in one batch


def _is_row(items: Sequence[bytes]) -> bool:
    return items[2] == FEATURE_ITEM


def _may_hold_rows(pattern: Sequence[Any]) -> bool:
    predicate = pattern[2]
    return type(predicate) is Var or predicate == FEATURE


class TablesOverlay(Overlay):
    """An overlay of the tables space: the generic tuples' as an :class:`Overlay`, the
    rows' made when first read (:meth:`rows_in`: a read of a table's schema at an old
    commit reads no row); the same in any transaction, as its commits' records are (gc,
    which drops commits, runs with no other handle on the store)."""

    __slots__ = ("_rows", "_history", "_before", "_after")

    def __init__(self, history: TablesHistory, before: frozenset[int], after: frozenset[int]) -> None:
        super().__init__()
        self._rows: Overlay | None = None
        self._history, self._before, self._after = history, before, after

    def rows_in(self, tx: Transaction) -> Overlay:
        """The rows whose state differs, read in ``tx`` the first time."""
        if self._rows is None:
            rows = Overlay()
            for ident, items, alive in self._history.row_state_changes(tx, self._before, self._after):
                if alive:
                    rows.born[ident] = items
                else:
                    rows.dead.add(ident)
            self._rows = rows
        return self._rows

    def __len__(self) -> int:
        if self._rows is None:
            raise RuntimeError("the rows of a tables overlay are counted once read (rows_in)")
        return len(self.born) + len(self.dead) + len(self._rows)


class RowChanges(ItemChanges):
    """Changes of a snapshot given as rows (``(row, alive, the alive record it reads)``),
    not as key items: a commit's own row records read back to move its snapshot."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[tuple[Row, bool, tuple[int, int] | None]]) -> None:
        super().__init__([[], [], [], []], [])
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)


class TablesHistory(History):
    """The tables space's records: rows in the row store, the rest as :class:`History`.

    The methods overridden here read and write both homes; those inherited read both
    through them (``changes_of``, ``quads_changed_by`` and ``packed_changes_of`` through
    :meth:`raw_change_chunks`). Work on the generic tuples alone (their state changes, gc)
    goes through :attr:`generic`, whose methods never reach the rows."""

    def __init__(self, okvs: Okvs, commits: CommitStore, dictionary: Dictionary, space: Space = TABLES) -> None:
        super().__init__(okvs, commits, dictionary, space)
        self.generic = History(okvs, commits, dictionary, space)
        """The generic tuples alone (meta items, legends, attachments, irregular features)."""
        self.rows = RowStore()
        self.heads: TablesHeads = TablesHeads(self, okvs)
        # The commit being written (its transaction and seq), the records it wrote of each
        # row and state so far, and the rows it wrote (by identity: the row and the record),
        # for the snapshot that moves to it; a commit written in chunks keeps the last row's
        # records and its last chunk's rows (its chunks come in identity order, so one row's
        # tuples are together).
        self.written: tuple[Any, int, dict[tuple[int, bytes, bool], int], dict[bytes, tuple[Row, tuple[int, int]]]] = \
            (None, 0, {}, {})

    def deferred(self, tx: Transaction) -> ContextManager[None]:
        stack = ExitStack()
        stack.enter_context(self.store.deferred(tx))
        stack.enter_context(self.rows.deferred(tx))
        return stack

    def row(self, tx: Transaction, quad: Sequence[Any], tables: dict[str, RowTable | None] | None = None,
            create: bool = False) -> Row | None:
        """The row of a tuple, or None when it is a generic tuple."""
        return self.rows.split(tx, quad, {} if tables is None else tables, create)

    # -- writes -----------------------------------------------------------------------------

    def write(self, tx: Transaction, seq: int, changes) -> tuple[list[bytes], ItemChanges]:
        generic: list[tuple[Quad, bool, Sequence[bytes] | None]] = []
        rows: list[tuple[Row, bool, list[bytes]]] = []
        tables: dict[str, RowTable | None] = {}
        graphs: dict[bytes, Any] = {}
        candidates: list[tuple[Quad, bool, Sequence[bytes] | None]] = []
        for quad, alive, parts in changes:
            if quad is None:  # a streamed change: its packed values only
                if parts[2] != FEATURE_ITEM:  # not a feature: the generic history takes it so
                    generic.append((quad, alive, parts))
                    continue
                quad = self._feature_of_parts(parts, graphs)
            candidates.append((quad, alive, parts))
        split_rows = self.rows.split_many(tx, [quad for quad, _, _ in candidates], tables, True)
        for (quad, alive, parts), row in zip(candidates, split_rows):
            if row is None:
                generic.append((quad, alive, parts))
            else:
                rows.append((row, alive, list(parts) if parts is not None else self.parts(quad)))
        records, encoded = super().write(tx, seq, generic)
        if not rows:
            return records, encoded
        same = self.written[0] is tx and self.written[1] == seq  # a further chunk of the commit
        slots = self.written[2] if same else {}
        made = self.rows.write(tx, seq, [(row, alive) for row, alive, _ in rows], slots)
        last = (rows[-1][0].table, rows[-1][0].key)
        self.written = (tx, seq, {slot: j for slot, j in slots.items() if slot[:2] == last},
                        {b"".join(parts): (row, pointer) for (row, alive, parts), pointer in zip(rows, made)})
        records = sorted_bytes(records + [b"".join(parts) + (ALIVE if alive else DEAD) for _, alive, parts in rows])
        columns = [list(column) for column in encoded.columns]
        for position in range(4):
            columns[position] += [parts[position] for _, _, parts in rows]
        return records, ItemChanges(columns, encoded.alive + [alive for _, alive, _ in rows])

    def needs_values(self, parts: Sequence[bytes]) -> bool:
        return parts[2] != FEATURE_ITEM  # a feature's path and blob are decoded in C by write()

    @staticmethod
    def _feature_of_parts(parts: Sequence[bytes], graphs: dict[bytes, Any]) -> Quad:
        """A feature tuple from its packed values: the path and blob decoded in C, the
        graph once a batch."""
        graph = graphs.get(parts[0])
        if graph is None:
            graph = graphs[parts[0]] = decode_item(parts[0])
        found = unpack_scalars([parts[1] + parts[3]], 0)
        if found is None or len(found[0]) != 2:
            return tuple(map(decode_item, parts))  # type: ignore[return-value]
        return graph, found[0][0], FEATURE, found[0][1]

    def drop_records(self, tx: Transaction, seq: int) -> int:
        # the snapshots branches read stay whole: gc drops the others after the records
        ancestors, used = self.commits.ancestors, self.heads.used(tx)
        snapshots = {number: ancestors(tx, at) if at else frozenset()
                     for number, (at, _, _) in self.heads.metas(tx).items() if number in used}
        return self.generic.drop_records(tx, seq) + self.rows.drop_records(tx, seq, snapshots)

    def adopt_rows(self, tx: Transaction) -> int:
        """Move every regular feature tuple the generic stores hold into the rows: its
        records commit by commit, its snapshot keys with the alive record each reads
        (``datae upgrade`` from format 5, whose tables space had no rows); returns how
        many tuples moved. The tuples, their records and every count stay the same."""
        feature = self.encode(tx, (FEATURE,))
        if feature is None:
            return 0
        tables: dict[str, RowTable | None] = {}
        moving: list[tuple[Row, list[bytes], list[tuple[int, bool]]]] = []
        for quad, records in History.match_records(self, tx, (Var("g"), Var("s"), FEATURE, Var("o"))):
            row = self.rows.split(tx, quad, tables, True)
            if row is not None:
                moving.append((row, [bytes(item) for item in self.item_bytes(self.encode(tx, quad))], records))
        if not moving:
            return 0
        by_seq: dict[int, list[tuple[int, bool]]] = {}
        for i, (_, _, records) in enumerate(moving):
            for seq, alive in records:
                by_seq.setdefault(seq, []).append((i, alive))
        alive_records: dict[int, list[tuple[int, int]]] = {}
        for seq in sorted(by_seq):
            changes = by_seq[seq]
            made = self.rows.write(tx, seq, [(moving[i][0], alive) for i, alive in changes])
            for (i, alive), pointer in zip(changes, made):
                if alive:
                    alive_records.setdefault(i, []).append(pointer)
        record_rows = [[*items, pack_value(seq)] for _, items, records in moving for seq, _ in records]
        self.store.bulk_delete_items(tx, [list(column) for column in zip(*record_rows)])
        by_ident = {b"".join(items): i for i, (_, items, _) in enumerate(moving)}
        ancestors = self.commits.ancestors
        for number, (seq, _, _) in self.heads.metas(tx).items():
            held = [items for items in Heads._quads_of(self.heads, tx, number) if b"".join(items) in by_ident]
            if not held:
                continue
            within = ancestors(tx, seq) if seq else frozenset()
            born = []
            for items in held:
                i = by_ident[b"".join(items)]
                pointer = max((p for p in alive_records.get(i, ()) if p[0] in within), default=None)
                if pointer is None:
                    raise CorruptStoreError(f"tables snapshot {number} holds a tuple none of whose alive records "
                                            f"is an ancestor of commit #{seq}")
                born.append((moving[i][0], pointer))
            self.heads.store.bulk_delete_items(tx, [[pack_value(number)] * len(held), *map(list, zip(*held))])
            self.rows.apply(tx, number, born, [])
        return len(moving)

    # -- records ----------------------------------------------------------------------------

    def _row_of_items(self, tx: Transaction, items: Sequence[bytes], tables: dict[str, RowTable | None] | None = None) -> Row:
        row = self.row(tx, [decode_item(bytes(item)) for item in items], tables)
        if row is None:
            raise CorruptStoreError(f"tables space: items {b''.join(items)[:60].hex()} name a row no table holds")
        return row

    def item_records(self, tx: Transaction, items: Sequence[bytes]) -> Iterator[tuple[bytes, bytes]]:
        if not _is_row(items):
            yield from super().item_records(tx, items)
            return
        row = self._row_of_items(tx, items)
        for record in self.rows.records_of(tx, row.table, row.n, row.key):
            if record.body == row.body:
                yield pack_value(record.seq), ALIVE if record.alive else DEAD

    def records(self, tx: Transaction, quad: Quad) -> list[tuple[int, bool]]:
        row = self.row(tx, quad)
        if row is None:
            return super().records(tx, quad)
        return [(r.seq, r.alive) for r in self.rows.records_of(tx, row.table, row.n, row.key) if r.body == row.body]

    def records_many(self, tx: Transaction, quads: Sequence[Quad]) -> list[list[tuple[int, bool]]]:
        tables: dict[str, RowTable | None] = {}
        rows = [self.row(tx, quad, tables) for quad in quads]
        found = self.rows._records_of_many(tx, {(row.table, row.n, row.key) for row in rows if row is not None})
        return [super(TablesHistory, self).records(tx, quad) if row is None else
                [(r.seq, r.alive) for r in found.get((row.table, row.key), ()) if r.body == row.body]
                for quad, row in zip(quads, rows)]

    def alive_many(self, tx: Transaction, ancestors: frozenset[int], quads: Sequence[Quad],
                   parts: Sequence[Sequence[bytes]]) -> list[bool]:
        tables: dict[str, RowTable | None] = {}
        rows = [self.row(tx, quad, tables) for quad in quads]
        generic = [i for i, row in enumerate(rows) if row is None]
        alive = [False] * len(quads)
        if generic:
            for i, state in zip(generic, super().alive_many(tx, ancestors, [quads[i] for i in generic],
                                                             [parts[i] for i in generic])):
                alive[i] = state
        found = self.rows._records_of_many(tx, {(row.table, row.n, row.key) for row in rows if row is not None})
        for i, row in enumerate(rows):
            if row is not None and ancestors:
                records = [(r.seq, r.alive) for r in found.get((row.table, row.key), ()) if r.body == row.body]
                best = winner(records, ancestors)
                alive[i] = best is not None and best[1]
        return alive

    def _tables_of(self, tx: Transaction, graph: Any) -> list[RowTable]:
        if type(graph) is Var:
            return self.rows.tables(tx)
        table = self.rows.table_of(tx, graph.value) if type(graph) is IRI else None
        return [] if table is None else [table]

    def match_records(self, tx: Transaction, pattern: Sequence[Any]) -> Iterator[tuple[Quad, list[tuple[int, bool]]]]:
        yield from super().match_records(tx, pattern)
        if not _may_hold_rows(pattern):
            return
        graph, path, _, blob = pattern
        repeats = repeated_vars(pattern)
        for table in self._tables_of(tx, graph):
            if type(path) is Var:
                groups = ((records, key) for _, _, key, records in self.rows.records_under(tx, table.number))
            else:
                found = self.rows.key_of_path(table, str(path)) if isinstance(path, str) else None
                groups = iter(()) if found is None else \
                    iter([(self.rows.records_of(tx, table.number, found[0], found[1]), found[1])])
            for records, key in groups:
                by_body: dict[bytes, list[tuple[int, bool]]] = {}
                for record in records:
                    by_body.setdefault(record.body, []).append((record.seq, record.alive))
                for body, states in by_body.items():
                    quad = self.rows.quad(table, key, body)
                    if type(blob) is not Var and quad[3] != blob:
                        continue
                    if repeats and any(quad[a] != quad[b] for a, b in repeats):
                        continue
                    yield quad, states

    def has_records(self, tx: Transaction) -> bool:
        return super().has_records(tx) or self.rows.has_records(tx)

    def state_changes(self, tx: Transaction, before: frozenset[int], after: frozenset[int]) -> Iterator[tuple[bytes, list[bytes], bool]]:
        yield from self.generic.state_changes(tx, before, after)
        yield from self.row_state_changes(tx, before, after)

    def row_state_changes(self, tx: Transaction, before: frozenset[int], after: frozenset[int]) -> Iterator[tuple[bytes, list[bytes], bool]]:
        """:meth:`state_changes` of the rows alone (``RowStore.state_changes``)."""
        tables: dict[int, RowTable] = {}
        for number, key, body, alive in self.rows.state_changes(tx, before, after):
            table = tables.get(number)
            if table is None:
                table = tables[number] = self.rows.table(tx, number)
            items = self.rows.items(table, key, body)
            yield b"".join(items), items, alive

    def feature_changes(self, tx: Transaction, before: frozenset[int], after: frozenset[int], graph: IRI
                        ) -> Iterator[tuple[str, bytes, bool]]:
        """``(path, blob, alive under after)`` of each row of the table of ``graph`` whose
        state under ``after`` differs from its state under ``before``, in key order: a
        table diff's rows (O(rows changed between the two); its generic features are the
        generic history's to diff)."""
        tables = self._tables_of(tx, graph)
        if not tables:
            return
        table = tables[0]
        for _, key, body, alive in self.rows.state_changes(tx, before, after, table.number):
            path, blob = table.join(key, body)
            yield path, blob, alive

    def raw_change_chunks(self, tx: Transaction, seq: int) -> Iterator[tuple[list[list[bytes]], list[bytes]]]:
        yield from super().raw_change_chunks(tx, seq)
        tables: dict[int, RowTable] = {}
        for changes in self.rows.change_chunks(tx, seq):
            rows, payloads = [], []
            for number, _, key, alive, _, body in changes:
                table = tables.get(number)
                if table is None:
                    table = tables[number] = self.rows.table(tx, number)
                rows.append(self.rows.items(table, key, body))
                payloads.append(ALIVE if alive else DEAD)
            yield rows, payloads

    def change_items(self, tx: Transaction, seq: int, size: int) -> Iterator[ItemChanges]:
        yield from self.generic.change_items(tx, seq, size)
        for chunk in rechunked(self.rows.change_chunks(tx, seq), size):
            yield RowChanges([(Row(number, n, key, body), alive, (seq, j) if alive else None)
                              for number, n, key, alive, j, body in chunk])

    def values(self, tx: Transaction, items: Sequence[bytes]) -> list[Any]:
        if all(item[0] in _REF_CODES for item in items):
            return super().values(tx, items)
        return [self.value(tx, item) if item[0] in _REF_CODES or item[0] == BLOBREF_CODE else decode_item(item)
                for item in items]


class TablesHeads(Heads):
    """The tables space's snapshots: the generic tuples' keys and the rows' (one snapshot
    number for both; its count and its counts by graph and predicate cover both, a row's
    graph and predicate counted by their inline items)."""

    history: TablesHistory

    def __init__(self, history: TablesHistory, okvs: Okvs) -> None:
        super().__init__(history, okvs)
        self.rows = history.rows
        self._target: int | None = None  # the commit the snapshot being written moves to

    def moved(self, tx: Transaction, branch: str, parents: Sequence[int], seq: int, changes: ItemChanges | None) -> bool:
        self._target = seq
        try:
            return super().moved(tx, branch, parents, seq, changes)
        finally:
            self._target = None
            if self.history.written[0] is tx:  # the rows it wrote are in the snapshot now
                self.history.written = (None, 0, {}, {})

    def _fold(self, tx: Transaction, number: int, base: int, seq: int, owner: str, count: int) -> None:
        outer, self._target = self._target, seq
        try:
            super()._fold(tx, number, base, seq, owner, count)
        finally:
            self._target = outer

    def _apply(self, tx: Transaction, number: int, count: int, changes: ItemChanges) -> int:
        if isinstance(changes, RowChanges):
            return count + self._apply_changes(tx, number, changes.rows)
        mask = [item == FEATURE_ITEM for item in changes.columns[2]]
        if not any(mask):
            return super()._apply(tx, number, count, changes)
        keep = [not m for m in mask]
        generic = ItemChanges([list(compress(column, keep)) for column in changes.columns], list(compress(changes.alive, keep)))
        if len(generic):
            count = super()._apply(tx, number, count, generic)
        return count + self._apply_rows(tx, number, list(zip(*[compress(column, mask) for column in changes.columns])),
                                        list(compress(changes.alive, mask)))

    def _apply_rows(self, tx: Transaction, number: int, items: list[tuple[bytes, ...]], alive: list[bool]) -> int:
        # The rows the write of the commit this snapshot moves to made are known with the
        # record each reads; the others (a commit written in chunks, an overlay folded in)
        # are made from their items and read their commit's record, else one found among
        # their records.
        target = self._target
        written_tx, written_seq, _, written = self.history.written
        known = written if written_tx is tx and written_seq == target else {}
        tables: dict[bytes, RowTable] = {}
        changes: list[tuple[Row, bool, tuple[int, int] | None]] = []
        for row_items, state in zip(items, alive):
            found = known.get(b"".join(row_items))
            if found is not None:
                changes.append((found[0], state, found[1]))
                continue
            table = tables.get(row_items[0])
            if table is None:
                table = tables[row_items[0]] = self._table_of_item(tx, row_items[0])
            row = self.rows.stored_row(table, decode_item(row_items[1]), decode_item(row_items[3]))
            changes.append((row, state, None))
        return self._apply_changes(tx, number, changes)

    def _apply_changes(self, tx: Transaction, number: int, changes: list[tuple[Row, bool, tuple[int, int] | None]]) -> int:
        """Apply rows born and dead (each with the alive record it reads, if known) to
        snapshot ``number`` and its counts; returns the change in its tuples."""
        target = self._target
        changes = list(changes)
        unknown = [i for i, (_, state, pointer) in enumerate(changes) if state and pointer is None]
        if unknown and target is not None:
            for i, pointer in zip(unknown, self.rows.alive_records(tx, [changes[i][0] for i in unknown], target)):
                changes[i] = (changes[i][0], True, pointer)
        ancestors = None
        born: list[tuple[Row, tuple[int, int]]] = []
        dead: list[Row] = []
        for row, state, pointer in changes:
            if not state:
                dead.append(row)
                continue
            if pointer is None:
                if ancestors is None and target is not None:
                    ancestors = self.history.commits.ancestors(tx, target)
                pointer = self.rows.pointer_for(tx, row, target, ancestors)
            born.append((row, pointer))
        deltas = self.rows.apply(tx, number, born, dead)
        counts: Counter[tuple[bytes, bytes]] = Counter()
        for table_number, delta in deltas.items():
            counts[(self.rows.table(tx, table_number).graph_item, FEATURE_ITEM)] += delta
        self._add_counts(tx, number, counts)
        return sum(deltas.values())

    def _table_of_item(self, tx: Transaction, graph_item: bytes) -> RowTable:
        graph = decode_item(graph_item)
        table = self.rows.table_of(tx, graph.value) if type(graph) is IRI else None
        if table is None:
            raise CorruptStoreError(f"tables space: a row change names graph {graph!r}, which no table registered")
        return table

    def _apply_overlay(self, tx: Transaction, number: int, count: int, overlay: Overlay) -> int:
        if not isinstance(overlay, TablesOverlay):
            return super()._apply_overlay(tx, number, count, overlay)
        rows = overlay.rows_in(tx)
        changes = [(items, True) for items in chain(overlay.born.values(), rows.born.values())]
        changes += [(split(ident, 0, 4), False) for ident in chain(overlay.dead, rows.dead)]
        return self._apply(tx, number, count, ItemChanges.of(changes))

    def overlay(self, tx: Transaction, base: int | None, seq: int) -> Overlay:
        found = super().overlay(tx, base, seq)
        if tx.write and isinstance(found, TablesOverlay):  # a write counts and applies its rows
            found.rows_in(tx)
        return found

    def _overlay(self, tx: Transaction, before: frozenset[int], after: frozenset[int]) -> Overlay:
        overlay = TablesOverlay(self.history, before, after)
        for ident, items, alive in self.history.generic.state_changes(tx, before, after):
            if alive:
                overlay.born[ident] = items
            else:
                overlay.dead.add(ident)
        if tx.write:  # a snapshot that moves counts and applies them
            overlay.rows_in(tx)
        return overlay

    def _copy(self, tx: Transaction, source: int, target: int) -> None:
        super()._copy(tx, source, target)
        self.rows.copy_snapshot(tx, source, target)

    def _drop(self, tx: Transaction, number: int) -> None:
        super()._drop(tx, number)
        self.rows.drop_snapshot(tx, number)

    def tally(self, tx: Transaction, number: int) -> Counter[tuple[bytes, bytes]]:
        found = super().tally(tx, number)
        for table in self.rows.tables(tx):
            held = self.rows.snapshot_count(tx, number, table.number)
            if held:
                found[(table.graph_item, FEATURE_ITEM)] = held
        return found

    def count_keys(self, tx: Transaction, number: int) -> int:
        return super().count_keys(tx, number) + self.rows.snapshot_count(tx, number)

    def reader(self, tx: Transaction, seq: int | None, snapshot: int | None = None) -> TablesReader:
        return TablesReader(self, tx, seq, snapshot)


class TablesReader(Reader):
    """What the tables space holds at a commit: the generic reader's tuples and the rows of
    the snapshot, less the overlay's dead rows, plus its born ones."""

    heads: TablesHeads
    history: TablesHistory

    def __init__(self, heads: TablesHeads, tx: Transaction, seq: int | None, snapshot: int | None = None) -> None:
        super().__init__(heads, tx, seq, snapshot)
        self._row_overlay: Overlay | None = None if isinstance(self.overlay, TablesOverlay) else _EMPTY
        # the tables of graphs read: the registry changes only when a commit writes, after
        # every read of its transaction
        self._registry: dict[Any, list[RowTable]] = {}

    @property
    def row_overlay(self) -> Overlay:
        """The overlay's rows, read when a read first needs them."""
        if self._row_overlay is None:
            self._row_overlay = self.overlay.rows_in(self.tx)  # type: ignore[attr-defined]
        return self._row_overlay

    def match(self, pattern: Sequence[Any], within: Any = None, terms: bool = False) -> Iterator[Quad]:
        found = super().match(pattern, within, terms)
        if self.empty or within is not None or not _may_hold_rows(pattern):
            return found
        rows = self.row_quads(pattern)
        return chain(found, (tuple(map(to_rdf, quad)) for quad in rows) if terms else rows)

    def blobs_at(self, graph: Any, paths: Sequence[str]) -> dict[str, list[bytes]]:
        """The blobs alive here at each of ``paths`` in the table of ``graph``: its rows'
        in sorted lookups of the snapshot's entries and of their records, and, if the table
        has any generic feature (an irregular one, rare), those read one by one."""
        found: dict[str, list[bytes]] = {path: [] for path in paths}
        tables = self._tables(graph)
        if tables and not self.empty:
            table, rows = tables[0], self.history.rows
            keyed = [(path, *key) for path, key in zip(found, rows.keys_of_paths(table, list(found))) if key is not None]
            if self.snapshot is not None and keyed:
                entries = rows.snapshot_entries_many(self.tx, self.snapshot, table.number, [(n, key) for _, n, key in keyed])
                held = [(n, key, pointers) for (_, n, key), pointers in zip(keyed, entries)]
                for (path, _, key), bodies in zip(keyed, rows.bodies(self.tx, table.number, held)):
                    found[path] = [table.blob(body) for body in bodies]
            overlay = self.row_overlay
            if overlay.dead:
                for path, blobs in found.items():
                    found[path] = [blob for blob in blobs
                                   if table.graph_item + pack_value(path) + FEATURE_ITEM + pack_value(blob) not in overlay.dead]
            if overlay.born:
                for path in found:
                    found[path] += [decode_item(items[3]) for items in overlay.find([(0, table.graph_item), (1, pack_value(path))])]
        if not self.empty and Reader.count(self, (graph, Var("s"), FEATURE, Var("o")), 1):
            for path, blobs in found.items():
                blobs += [quad[3] for quad in Reader.match(self, (graph, path, FEATURE, Var("o")))]
        return found

    def _blobs_by_path(self, items: Sequence[Sequence[Any]], blob_kind: Any) -> list[list[bytes] | None]:
        """The blobs alive here at the path of each item (a pattern or a quad) that names a
        feature by its path and whose object is a ``blob_kind``, read in batches by
        :meth:`blobs_at`; None for the other items."""
        by_graph: dict[Any, list[int]] = {}
        for i, item in enumerate(items):
            if item[2] == FEATURE and isinstance(item[1], str) and isinstance(item[3], blob_kind):
                by_graph.setdefault(item[0], []).append(i)
        found: list[list[bytes] | None] = [None] * len(items)
        for graph, positions in by_graph.items():
            blobs = self.blobs_at(graph, [items[i][1] for i in positions])
            for i in positions:
                found[i] = blobs[items[i][1]]
        return found

    def match_many(self, patterns: Sequence[Sequence[Any]]) -> list[list[Quad]]:
        """:meth:`match` of many patterns, those naming a feature by its path read in
        batches by :meth:`blobs_at`."""
        found = [None] * len(patterns) if self.empty else self._blobs_by_path(patterns, Var)
        return [list(self.match(pattern)) if blobs is None else [(pattern[0], pattern[1], FEATURE, blob) for blob in blobs]
                for blobs, pattern in zip(found, patterns)]

    def contains_many(self, quads: Sequence[Quad]) -> list[bool]:
        """Whether each quad is alive here (:meth:`match` of each, the rows among them
        read in batches by :meth:`blobs_at`)."""
        if self.empty:
            return [False] * len(quads)
        return [next(iter(self.match(quad)), None) is not None if blobs is None else quad[3] in blobs
                for blobs, quad in zip(self._blobs_by_path(quads, bytes), quads)]

    def _tables(self, graph: Any) -> list[RowTable]:
        found = self._registry.get(graph)
        if found is None:
            found = self._registry[graph] = self.history._tables_of(self.tx, graph)
        return found

    def row_quads(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The row tuples alive here that match ``pattern``."""
        graph, path, _, blob = pattern
        repeats = repeated_vars(pattern)
        dead = self.row_overlay.dead
        rows = self.history.rows
        if self.snapshot is not None:
            for table in self._tables(graph):
                if type(path) is Var:
                    entries: Iterator = ((n, key, pointers) for _, n, key, pointers in
                                         rows.snapshot_entries(self.tx, self.snapshot, table.number))
                else:
                    found = rows.key_of_path(table, str(path)) if isinstance(path, str) else None
                    pointers = [] if found is None else rows.snapshot_entry(self.tx, self.snapshot, table.number, *found)
                    entries = iter([(found[0], found[1], pointers)] if pointers else [])
                graph_iri = IRI(table.graph)
                while chunk := list(islice(entries, _CHUNK)):
                    for (_, key, _), bodies in zip(chunk, rows.bodies(self.tx, table.number, chunk)):
                        for body in bodies:
                            if type(path) is Var:
                                row_path, row_blob = table.join(key, body)
                            else:  # the path is the one asked for: the key was made from it
                                row_path, row_blob = str(path), table.blob(body)
                            if type(blob) is not Var and row_blob != blob:
                                continue
                            if dead and table.graph_item + pack_value(row_path) + FEATURE_ITEM + pack_value(row_blob) in dead:
                                continue
                            quad = (graph_iri, row_path, FEATURE, row_blob)
                            if repeats and any(quad[a] != quad[b] for a, b in repeats):
                                continue
                            yield quad
        if self.row_overlay.born:
            bound = [(i, pack_value(value)) for i, value in enumerate(pattern) if type(value) is not Var]
            for items in self.row_overlay.find(bound):
                quad = tuple(map(decode_item, items))
                if repeats and any(quad[a] != quad[b] for a, b in repeats):
                    continue
                yield quad  # type: ignore[misc]

    def feature_chunks(self, graph: IRI, size: int) -> Iterator[tuple[Sequence[str], list[bytes]]]:
        """The features of the table of ``graph`` alive here, ``size`` at a time as
        ``(paths, blobs)``: the snapshot's rows in key order (paths made only if asked
        for, :class:`~.rows.KeyedPaths`), then the overlay's born rows and the generic
        (irregular) features."""
        if self.empty:
            return
        tables = self._tables(graph)
        if tables and self.snapshot is not None:
            yield from self.history.rows.scan(self.tx, self.snapshot, tables[0], size, self._dead_rows(tables[0]))
        rest = chain(super().match((graph, Var("s"), FEATURE, Var("o"))),
                     (tuple(map(decode_item, items)) for items in
                      self.row_overlay.find([(0, pack_value(graph)), (2, FEATURE_ITEM)])))
        while chunk := list(islice(rest, size)):
            yield [quad[1] for quad in chunk], [quad[3] for quad in chunk]

    def _dead_rows(self, table: RowTable) -> dict[bytes, set[bytes]]:
        """The overlay's dead rows of ``table``: their blobs by packed key."""
        found: dict[bytes, set[bytes]] = {}
        for ident in self.row_overlay.dead:
            if not ident.startswith(table.graph_item):
                continue
            _, path, _, blob = map(decode_item, split(ident, 0, 4))
            key = self.history.rows.key_of_path(table, path)
            if key is not None:
                found.setdefault(key[1], set()).add(blob)
        return found

    def count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        if self.empty or cap == 0:
            return 0
        if type(pattern[2]) is Var:  # a row has no key of its own in the generic counts' graphs
            return sum(1 for _ in islice(self.match(pattern), cap))
        total = super().count(pattern, cap)
        if pattern[2] != FEATURE or (cap is not None and total >= cap):
            return total
        graph, path, _, blob = pattern
        if type(path) is Var and type(blob) is Var and not repeated_vars(pattern):
            if type(graph) is Var:
                graph_item = None
            else:
                tables = self._tables(graph)
                if not tables:
                    return total
                graph_item = tables[0].graph_item
            stored = 0 if self.snapshot is None else self.heads.stored_count(self.tx, self.snapshot, graph_item, FEATURE_ITEM)
            total += stored + self.row_overlay.count_delta(graph_item, FEATURE_ITEM)
        else:
            total += sum(1 for _ in self.row_quads(pattern))
        return total if cap is None else min(total, cap)

    def packed(self, pattern: Sequence[Any]) -> tuple[tuple[int, ...], Iterator[list[bytes]]]:
        positions, rows = super().packed(pattern)
        if self.empty or not _may_hold_rows(pattern):
            return positions, rows
        row_items = ([pack_value(quad[i]) for i in positions] for quad in self.row_quads(pattern))
        return positions, chain(rows, row_items)
