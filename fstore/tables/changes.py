"""What changed in a table: between two commits, for one row over history, and per cell.

* :func:`table_diff` — rows inserted, deleted and updated (with the changed cells) from
  commit ``a`` to commit ``b``. It reads only the change records of the commits between
  them, so it costs O(rows changed), not O(table size).
* :func:`table_log` — every commit that changed one row, newest first.
* :func:`table_blame` — the commit that gave one cell its current value.

Rows are compared by column id, so a renamed column is still the same cell, and a row that
was only re-encoded (same cells, newer legend) is not reported.

>>> import tempfile, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="v1") as tx:
...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
...                                 {"id": "v", "name": "v", "dataType": "text"}])
...     t.insert({"k": 1, "v": "a"}); t.insert({"k": 2, "v": "b"})
>>> with repo.transaction("main", message="v2") as tx:
...     tx.table("t").update({"k": 1, "v": "A"}); tx.table("t").delete(2)
>>> first = list(repo.log("main"))[-1].id
>>> d = table_diff(repo, first, "main", "t")
>>> d.inserted, d.deleted, [(u.pk, u.cells) for u in d.updated]
([], [{'k': 2, 'v': 'b'}], [((1,), {'v': ('a', 'A')})])
>>> [(e.commit.message, e.kind) for e in table_log(repo, "main", "t", 1)]
[('v2', 'update'), ('v1', 'insert')]
>>> table_blame(repo, "main", "t", 1, "v").message
'v2'
>>> repo.close()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from nstore import Var

from ..core.commits import Commit
from ..core.storage import Snapshot
from ..ops.diff import diff_seqs
from ..ops.history import history_of
from ..core.history import winner
from .access import legend_finder, seq_source
from .dataset import DatasetState, RowReader, find_dataset, key_order, pk_of_path, pk_tuple
from .errors import ColumnNotFoundError, TableNotFoundError
from .mapping import FEATURE, dataset_graph, dataset_name
from .packing import pack
from .schema import Legend, SchemaDiff
from .types import decode_value

if TYPE_CHECKING:
    from ..repository import Repository

__all__ = ["RowChange", "TableDiff", "LogEntry", "table_diff", "table_diffs", "tables_changed", "table_log", "table_blame",
           "raw_diff"]


def raw_diff(repo: Repository, a: str, b: str, name: str | None = None) -> Iterator[tuple[str, tuple]]:
    """``("+" | "-", (graph, path, kind, value))`` for each stored table tuple (a file of
    the Kart dataset trees: meta items, legends, feature blobs) whose state differs from
    ref ``a`` to ref ``b``; only table ``name``'s if given. The tables' own ``git diff``,
    below rows and cells (see :func:`table_diff`).

    >>> import tempfile, fstore, fstore.tables as tables
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="t") as tx:
    ...     _ = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
    >>> sorted(q[1] for op, q in raw_diff(repo, "main", "main"))
    []
    >>> repo.close()
    """
    pattern = None if name is None else (dataset_graph(name), Var("s"), Var("p"), Var("o"))
    with repo.storage.read() as snapshot:
        yield from diff_seqs(snapshot, snapshot.resolve(a), snapshot.resolve(b), pattern, snapshot.tables)


@dataclass
class RowChange:
    """One row's change: ``old`` / ``new`` rows (None where absent) and the changed
    ``cells`` as ``{column: (old, new)}``."""

    pk: tuple[Any, ...]
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    cells: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``"insert"``, ``"delete"`` or ``"update"``."""
        if self.old is None:
            return "insert"
        return "delete" if self.new is None else "update"


@dataclass
class TableDiff:
    """The changes of one table from commit ``a`` to ``b``. Inserted rows are in b's
    schema, deleted ones in a's; updates list the cells that changed (by column id, named
    as in b). ``schema`` is the schema diff (None if the table is missing on a side).
    ``changes`` holds every row's change (insert, delete, update) in one list; it and each
    of the three lists are in primary-key order. ``pk_columns``: the key's column names
    (as in b, else a)."""

    table: str
    inserted: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    updated: list[RowChange] = field(default_factory=list)
    schema: SchemaDiff | None = None
    changes: list[RowChange] = field(default_factory=list)
    pk_columns: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inserted or self.deleted or self.updated or self.schema)

    def __len__(self) -> int:
        return len(self.inserted) + len(self.deleted) + len(self.updated)


@dataclass
class LogEntry:
    """A commit that changed a row, and how (rows as they read at that commit)."""

    commit: Commit
    change: RowChange

    @property
    def kind(self) -> str:
        return self.change.kind


class _At:
    """A table's state at one commit, for reading rows (in ``snapshot``)."""

    def __init__(self, snapshot: Snapshot, seq: int | None, name: str) -> None:
        self.source = seq_source(snapshot, seq)
        self.state: DatasetState | None = find_dataset(self.source, name) if seq is not None else None
        self.reader = None
        if self.state is not None:
            self.reader = RowReader(self.state.schema, self.state.legends, _legends(snapshot, name), name)

    def blob(self, graph: Any, path: str) -> bytes | None:
        found = None
        for quad in self.source((graph, path, FEATURE, Var("o"))):
            found = quad[3]
        return found


def _legends(snapshot: Snapshot, name: str) -> Callable[[str], Legend]:
    """Table ``name``'s legends, looked up in ``snapshot``'s transaction."""
    return legend_finder(snapshot.storage, dataset_graph(name), lambda: snapshot.tx)


def _cells(old_reader: RowReader, new_reader: RowReader, path: str, old: bytes, new: bytes, python: bool) -> dict[str, tuple[Any, Any]]:
    raw_old = old_reader.raw(path, old)
    raw_new = new_reader.raw(path, new)
    cells = {}
    for col in new_reader.schema.columns:
        a, b = raw_old.get(col.id), raw_new.get(col.id)
        if not _same(a, b):
            if python:
                a = None if a is None else decode_value(col, a)
                b = None if b is None else decode_value(col, b)
            cells[col.name] = (a, b)
    return cells


_PLAIN = frozenset({int, str, bytes, bool, type(None)})


def _same(a: Any, b: Any) -> bool:
    """Whether two stored cells are the same value as Kart stores them (their msgpack
    bytes equal: ``1``, ``1.0`` and ``True`` differ, as ``0.0`` and ``-0.0`` do), compared
    without packing where the type tells."""
    if type(a) is not type(b):
        return False
    if type(a) in _PLAIN:
        return a == b
    return pack(a) == pack(b)


def table_diff(repo: Repository, a: str, b: str, name: str, *, python: bool = True) -> TableDiff:
    """Rows of table ``name`` inserted, deleted and updated from ref ``a`` to ref ``b``
    (rows in Python values, or stored values with ``python=False``), in primary-key
    order. :class:`TableNotFoundError` if the table is at neither."""
    with repo.storage.read() as snapshot:
        seq_a, seq_b = snapshot.resolve(a), snapshot.resolve(b)
        return _diff_at(snapshot, seq_a, seq_b, name, python, f"at {a!r} or {b!r}")


def table_diffs(repo: Repository, seq_a: int | None, seq_b: int | None, *, python: bool = True) -> dict[str, TableDiff]:
    """The diff of every table that changed from commit ``seq_a`` to ``seq_b`` (seqs;
    None: no commit), by name (what ``Repository.show`` gives)."""
    with repo.storage.read() as snapshot:
        return _diffs(snapshot, seq_a, seq_b, python)


def tables_changed(repo: Repository, a: str | None, b: str, *, python: bool = True) -> dict[str, TableDiff]:
    """:func:`table_diffs` between refs: every table that changed from ref ``a`` (None:
    before the first commit, as for a root commit's ``show``) to ref ``b``, by name."""
    with repo.storage.read() as snapshot:  # the refs and the diffs read in one state
        return _diffs(snapshot, None if a is None else snapshot.resolve(a), snapshot.resolve(b), python)


def _diffs(snapshot: Snapshot, seq_a: int | None, seq_b: int | None, python: bool) -> dict[str, TableDiff]:
    """:func:`table_diffs`, read in ``snapshot``."""
    names = sorted({dataset_name(quad[0]) for _, quad in diff_seqs(snapshot, seq_a, seq_b, None, snapshot.tables)}
                   - {None})
    return {name: _diff_at(snapshot, seq_a, seq_b, name, python, "at either commit") for name in names}


def _diff_at(snapshot: Snapshot, seq_a: int | None, seq_b: int | None, name: str, python: bool,
             where: str) -> TableDiff:
    graph = dataset_graph(name)
    at_a, at_b = _At(snapshot, seq_a, name), _At(snapshot, seq_b, name)
    if at_a.state is None and at_b.state is None:
        raise TableNotFoundError(name, where)
    result = TableDiff(name)
    if at_a.state is not None and at_b.state is not None:
        result.schema = at_a.state.schema.diff(at_b.state.schema) or None
    result.pk_columns = [c.name for c in (at_b.state or at_a.state).schema.pk_columns]
    changes: dict[str, list[Any]] = {}
    # the table's rows read by the commits between the two (O(rows changed)), its generic
    # features (irregular ones, usually none) by the generic diff
    tables = snapshot.tables
    for path, blob, alive in tables.feature_changes(snapshot.tx, snapshot.ancestors(seq_a), snapshot.ancestors(seq_b), graph):
        changes.setdefault(path, [None, None])[1 if alive else 0] = blob
    for op, quad in diff_seqs(snapshot, seq_a, seq_b, (graph, Var("s"), FEATURE, Var("o")), tables.generic):
        changes.setdefault(quad[1], [None, None])[0 if op == "-" else 1] = quad[3]
    for path, (old, new) in sorted(changes.items(), key=lambda change: key_order(change[0])):
        if old is None and new is not None:
            read = at_b.reader.python if python else at_b.reader.stored
            row = read(path, new)
            result.inserted.append(row)
            result.changes.append(RowChange(pk_of_path(path), None, row))
        elif new is None and old is not None:
            read = at_a.reader.python if python else at_a.reader.stored
            row = read(path, old)
            result.deleted.append(row)
            result.changes.append(RowChange(pk_of_path(path), row, None))
        elif old is not None and new is not None:
            cells = _cells(at_a.reader, at_b.reader, path, old, new, python)
            if cells:
                read_a = at_a.reader.python if python else at_a.reader.stored
                read_b = at_b.reader.python if python else at_b.reader.stored
                change = RowChange(pk_of_path(path), read_a(path, old), read_b(path, new), cells)
                result.updated.append(change)
                result.changes.append(change)
    return result


def _path(snapshot: Snapshot, seq: int | None, name: str, pk: Any) -> tuple[DatasetState, tuple, str]:
    at = _At(snapshot, seq, name)
    if at.state is None:
        raise TableNotFoundError(name)
    key = pk_tuple(at.state.schema, pk, name)
    return at.state, key, at.state.path_structure.encode_path(key)


def table_log(repo: Repository, ref: str, name: str, pk: Any, *, python: bool = True) -> list[LogEntry]:
    """Every commit in ``ref``'s history that changed the row with this primary key,
    newest first, with the row before and after (each read at its commit; a merge shows
    its change against its first parent)."""
    graph = dataset_graph(name)
    entries: list[LogEntry] = []
    with repo.storage.read() as snapshot:
        seq = snapshot.resolve(ref)
        _state, key, path = _path(snapshot, seq, name, pk)
        for commit_seq, changes in history_of(snapshot, seq, (graph, path, FEATURE, Var("o")), snapshot.tables):
            old = next((q[3] for op, q in changes if op == "-"), None)
            new = next((q[3] for op, q in changes if op == "+"), None)
            commit = snapshot.commit(commit_seq)
            parents = snapshot.parents(commit_seq)
            after = _At(snapshot, commit_seq, name)
            before = _At(snapshot, parents[0] if parents else None, name)
            if old is None and new is None:
                continue
            if old is not None and new is not None and before.reader is not None:
                cells = _cells(before.reader, after.reader, path, old, new, python)
                if not cells:
                    continue
            else:
                cells = {}

            def read(at: _At, blob: bytes | None) -> dict[str, Any] | None:
                if blob is None or at.reader is None:
                    return None
                return at.reader.row(path, blob, key, python=python)

            entries.append(LogEntry(commit, RowChange(key, read(before, old), read(after, new), cells)))
    return entries


_NO_COLUMN = b""  # a packed value is never empty: the cell of a commit whose schema lacks the column


def table_blame(repo: Repository, ref: str, name: str, pk: Any, column: str) -> Commit | None:
    """The commit that gave the cell (row ``pk``, ``column`` as named at ``ref``) its
    value at ``ref``: following the row back through history (through the parent that
    has the same value at a merge) to where the value first appeared, and no further back
    than the commit that added the column (a column renamed since is followed by its
    id). None if the row is not there; :class:`ColumnNotFoundError`, listing the columns
    at ``ref``, if the column is not there."""
    graph = dataset_graph(name)
    with repo.storage.read() as snapshot:
        seq = snapshot.resolve(ref)
        state, key, path = _path(snapshot, seq, name, pk)
        if column not in state.schema.column_names:
            raise ColumnNotFoundError(name, column, state.schema.column_names, f"at {ref!r}")
        column_id = state.schema.by_name(column).id
        reader = RowReader(state.schema, state.legends, _legends(snapshot, name), name)
        history, otx = snapshot.tables, snapshot.tx  # the space's records are read in the raw transaction
        has_column = _column_presence(snapshot, name, column_id)

        def cell_at(at_seq: int | None) -> tuple[bytes | None, bytes | None]:
            """(blob, packed cell value) at a commit; (None, None) without the row;
            (blob, _NO_COLUMN) where the schema has no such column."""
            blob = None
            for quad in history.match(otx, (graph, path, FEATURE, Var("o")), at_seq):
                blob = quad[3]
            if blob is None:
                return None, None
            if not has_column(at_seq):
                return blob, _NO_COLUMN
            return blob, pack(reader.raw(path, blob, key).get(column_id))

        blob, value = cell_at(seq)
        if blob is None:
            return None
        current = seq
        while True:
            # Jump to the commit whose record put this blob in place: the row (and so the
            # cell) is the same at every commit between it and `current` — unless the
            # column is younger than the blob, then step back one commit at a time.
            best = winner(history.records(otx, (graph, path, FEATURE, blob)), snapshot.ancestors(current))
            if best is not None and has_column(best[0]):
                current = best[0]
            same = None
            for parent in snapshot.parents(current):
                parent_blob, parent_value = cell_at(parent)
                if parent_blob is not None and parent_value == value:
                    same = (parent, parent_blob)
                    break
            if same is None:
                return snapshot.commit(current)
            current, blob = same


def _column_presence(snapshot: Snapshot, name: str, column_id: str) -> Callable[[int | None], bool]:
    """A cached ``has_column(seq)``: whether table ``name``'s schema at commit ``seq``
    has the column with this id."""
    cache: dict[int | None, bool] = {}

    def has_column(seq: int | None) -> bool:
        if seq not in cache:
            state = _At(snapshot, seq, name).state
            cache[seq] = state is not None and any(c.id == column_id for c in state.schema.columns)
        return cache[seq]

    return has_column
