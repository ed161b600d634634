"""Writing tables inside a transaction: create, insert / update / upsert / delete, alter.

Every write is a handful of quads in the dataset's graph (see :mod:`.mapping`): a row is
one quad ``(graph, feature path, FEATURE, blob)``, so an update removes the old blob quad
and adds the new one; :meth:`TableWriter.alter` writes ``schema.json`` and (when the legend
changes) one legend quad, and never touches a row. Bad input raises before anything is
staged, so the transaction is as it was.

>>> import tempfile, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="create") as tx:
...     t = tables.create(tx, "towns", [
...         {"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
...         {"id": "n", "name": "name", "dataType": "text"}], title="Towns")
...     t.insert({"fid": 1, "name": "Otaki"})
>>> with repo.transaction("main", message="edit") as tx:
...     t = tx.table("towns")
...     t.update({"fid": 1, "name": "Ōtaki"})
...     changed = t.alter(t.schema.add_column("pop", "integer", id="p", size=32))
>>> repo.at("main").table("towns").get(1)
{'fid': 1, 'name': 'Ōtaki', 'pop': None}
>>> repo.close()
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from nstore import Var
from nstore.bulk import gc_paused

from ..transaction import Transaction
from .access import committed_source, legend_finder, put, put_many, remove, remove_many
from .dataset import DatasetState, RowReader, Table, find_dataset, in_key_order, list_datasets, pk_tuple, row_by_key
from .errors import (
    ColumnNotFoundError,
    ColumnValueError,
    PrimaryKeyError,
    RowExistsError,
    RowNotFoundError,
    RowValueError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)
from .features import encode_feature
from .frames import arrow_frame, dataframe_columns, dataframe_rows, integers_held_as_floats, to_dataframe
from .ingest import ColumnSpec, check_pk, evolve_schema, load_mode, make_schema
from .mapping import (
    ATTACHMENT,
    DESCRIPTION_ITEM,
    FEATURE,
    META,
    PATH_STRUCTURE_ITEM,
    SCHEMA_ITEM,
    TITLE_ITEM,
    dataset_graph,
    legend_item,
)
from .names import validate_dataset_name
from .packing import pack
from .paths import PathStructure, default_path_structure
from .schema import Schema
from . import _columns
from .types import column_encoder

if TYPE_CHECKING:
    import pandas
    import pyarrow

__all__ = [
    "SchemaLike",
    "as_schema",
    "check_alter",
    "create",
    "open_table",
    "drop",
    "tables_in",
    "list_tables",
    "load_table",
    "import_dataframe",
    "import_arrow",
    "TableWriter",
    "RowEncoder",
    "Prepared",
]

SchemaLike = Any
"""A schema: a :class:`Schema`, a list of ``schema.json`` column dicts, or JSON text."""

_WRITERS: "weakref.WeakKeyDictionary[Transaction, dict[str, TableWriter]]" = weakref.WeakKeyDictionary()

# Type changes a schema change may make without rewriting rows: every value stored under
# the old type must still be a valid stored value of the new one.
_TEXT_LIKE = {"date", "time", "timestamp", "interval", "numeric", "text"}


def as_schema(schema: SchemaLike) -> Schema:
    """A :class:`Schema` from any :data:`SchemaLike` (validated strictly), normalised as
    Kart writes a new ``schema.json``."""
    if isinstance(schema, Schema):
        result = schema
    elif isinstance(schema, (str, bytes)):
        result = Schema.from_json(schema)
    else:
        result = Schema.from_dicts(list(schema) if not isinstance(schema, list) else schema)
    for col in result.columns:
        col.check(strict=True)
    return result.normalised()


def _compatible_type(old, new) -> bool:
    if old.data_type == new.data_type:
        return True
    if new.data_type == "float" and old.data_type == "integer":
        return True
    return new.data_type == "text" and old.data_type in _TEXT_LIKE


def check_alter(table: str, old: Schema, new: Schema) -> None:
    """Raise :class:`SchemaError` unless ``old`` can become ``new`` without rewriting a
    row: the primary key (columns, order, types) stays, and each type change keeps every
    stored value valid (same type with other extra info, integer -> float, or a text-like
    type -> text)."""
    if [(c.id, c.data_type) for c in old.pk_columns] != [(c.id, c.data_type) for c in new.pk_columns]:
        raise SchemaError(
            f"table {table!r}: the primary key cannot change (it places every row); was "
            f"{[c.name for c in old.pk_columns]}, would be {[c.name for c in new.pk_columns]}"
        )
    for cid, (a, b) in old.diff(new).type_changed.items():
        if not _compatible_type(a, b):
            raise SchemaError(
                f"table {table!r}: changing {a.data_type} to {b.data_type} would need every row rewritten "
                f"(allowed: other size/length/precision, integer -> float, date/time/numeric/... -> text)",
                column=b.name,
            )


def tables_in(tx: Transaction) -> list[str]:
    """Names of the tables in a transaction's state (committed ones and those created or
    dropped in it)."""
    names = set(list_datasets(committed_source(tx)))
    for name, writer in _WRITERS.get(tx, {}).items():
        if writer.dropped:
            names.discard(name)
        else:
            names.add(name)
    return sorted(names)


def list_tables(readable: Any) -> list[str]:
    """Names of the tables in a view (``repo.at(ref)``) or a write transaction.

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="add") as tx:
    ...     _ = create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
    ...     list_tables(tx)
    ['t']
    >>> list_tables(repo.at("main")); repo.close()
    ['t']
    """
    if isinstance(readable, Transaction):
        return tables_in(readable)
    return list_datasets(readable.table_tuples)


def create(tx: Transaction, name: str, schema: SchemaLike, *, title: str | None = None,
           description: str | None = None, path_structure: PathStructure | None = None,
           crs: Mapping[str, str] | None = None) -> TableWriter:
    """Create table ``name`` with ``schema`` (Kart ``schema.json`` columns) in the
    transaction; returns its writer (the same one ``tx.table(name)`` gives).

    ``path_structure`` defaults to Kart's choice (``int`` scheme for one integer key,
    ``msgpack/hash`` otherwise); ``crs`` maps CRS identifiers to WKT definitions.
    """
    validate_dataset_name(name)
    folded = name.casefold()
    for existing in tables_in(tx):
        if existing.casefold() == folded:
            raise TableExistsError(name, existing)
    schema = as_schema(schema)
    if not schema.pk_columns:
        raise SchemaError(f"table {name!r} needs a primary key (set primaryKeyIndex 0 on a column)")
    ps = path_structure or default_path_structure([c.data_type for c in schema.pk_columns])
    if ps.scheme == "int" and [c.data_type for c in schema.pk_columns] != ["integer"]:
        raise SchemaError(f"table {name!r}: the int path scheme needs one integer primary key column")
    graph = dataset_graph(name)
    meta: dict[str, Any] = {SCHEMA_ITEM: schema.dumps().decode("utf-8"),
                            PATH_STRUCTURE_ITEM: ps.dumps().decode("utf-8"),
                            legend_item(schema.legend.name): schema.legend.dumps()}
    if title is not None:
        meta[TITLE_ITEM] = str(title)
    if description is not None:
        meta[DESCRIPTION_ITEM] = str(description)
    for ident, wkt in (crs or {}).items():
        meta[f"crs/{ident}.wkt"] = str(wkt)
    for item, value in meta.items():
        put(tx, graph, item, META, value)
    writer = TableWriter(tx, DatasetState(name, meta), created=True)
    _WRITERS.setdefault(tx, {})[name] = writer
    return writer


def open_table(tx: Transaction, name: str) -> TableWriter:
    """The writer of table ``name`` in this transaction (one per table per transaction)."""
    writers = _WRITERS.setdefault(tx, {})
    writer = writers.get(name)
    if writer is None or writer.dropped:
        if writer is not None:
            raise TableNotFoundError(name, "(dropped in this transaction)")
        state = find_dataset(committed_source(tx), name)
        if state is None:
            raise TableNotFoundError(name, f"on branch {tx.branch!r}")
        writer = TableWriter(tx, state, created=False)
        writers[name] = writer
    return writer


def drop(tx: Transaction, name: str) -> int:
    """Remove table ``name`` (every quad of its graph); returns how many quads."""
    writer = open_table(tx, name)
    return writer._drop()


class Prepared:
    """Rows encoded and checked, not yet staged: ``rows`` maps feature path to ``(pk,
    blob, cells in schema order)``."""

    def __init__(self, rows: dict[str, tuple[tuple, bytes, list]], where: dict[str, str]) -> None:
        self.rows = rows
        self._where = where

    def where_of(self, path: str) -> str:
        return self._where.get(path, "")

    def __len__(self) -> int:
        return len(self.rows)


_ENCODE_BATCH = 8192
COMPILED = True
"""Whether rows are encoded by the compiled encoder (tests turn it off for the reference)."""


def column_checks(columns: Sequence[Any], codes: Mapping[str, int], other: int) -> tuple[list, list, list, list]:
    """What the compiled readers of values (``_columns.encode_rows``, ``parse_fields``)
    check of each column, as :func:`~.types.column_encoder`'s fast paths do: its kind
    (``codes`` by data type: integer, a 64-bit float, text, boolean, and the others they
    know; ``other`` for the rest), its integer range, its text length (-1: none)."""
    kinds, lows, highs, lengths = [], [], [], []
    for column in columns:
        t, info = column.data_type, column.extra_type_info
        kind, low, high, length = codes.get(t, other), 0, 0, -1
        if t == "integer":
            size = min(info.get("size") or 64, 64)
            low, high = -(2 ** (size - 1)), 2 ** (size - 1) - 1
        elif t == "float" and info.get("size") == 32:
            kind = other
        elif t == "text":
            length = info.get("length") or -1
        kinds.append(kind)
        lows.append(low)
        highs.append(high)
        lengths.append(length)
    return kinds, lows, highs, lengths


def _compiled_plan(schema: Schema, encoders: list[Any]) -> tuple:
    """The arguments after the rows of :func:`._columns.encode_rows` for a schema."""
    codes = {"integer": _columns.INT, "float": _columns.FLOAT, "text": _columns.TEXT, "boolean": _columns.BOOL}
    header = b"\x92" + pack(schema.legend.name)
    non_pk = [i for i, c in enumerate(schema.columns) if c.pk_index is None]
    pk = [schema.columns.index(c) for c in schema.pk_columns]
    return (schema.column_names, *column_checks(schema.columns, codes, _columns.OTHER), encoders, pk, non_pk, header)


class RowEncoder:
    """Turns rows (dicts of Python or stored values by column name) into Kart feature
    blobs of one schema, naming the table, column and value of any bad input."""

    def __init__(self, table: str, schema: Schema, path_structure: PathStructure) -> None:
        self.table = table
        self.schema = schema
        self.path_structure = path_structure
        self.legend_name = schema.legend.name
        self.columns = schema.columns
        self.names = frozenset(schema.column_names)
        self.non_pk_index = [i for i, c in enumerate(schema.columns) if c.pk_index is None]
        self.pk_index = [schema.columns.index(c) for c in schema.pk_columns]
        self._encoders = [(c.name, column_encoder(c)) for c in schema.columns]
        self._compiled = _compiled_plan(schema, [encode for _, encode in self._encoders])

    def _check_names(self, row: Mapping[str, Any]) -> None:
        if not isinstance(row, Mapping):
            raise TypeError(f"table {self.table!r}: a row is a mapping of column name to value, not {type(row).__name__}")
        if row.keys() <= self.names:
            return
        for key in row:
            if key not in self.names:
                raise RowValueError(self.table, str(key), row[key],
                                    f"is for no column of the table (columns: {', '.join(self.schema.column_names)})")

    def _bad_value(self, e: ColumnValueError, row: Mapping[str, Any]) -> RowValueError:
        return RowValueError(self.table, e.column, e.value, e.reason, pk=self.given_pk(row))

    def cells(self, row: Mapping[str, Any], *, only_given: bool = False) -> dict[str, Any]:
        """Stored values by column name (all columns, missing ones null; or only those
        ``row`` names)."""
        if not only_given:
            return dict(zip(self.schema.column_names, self.values(row)))
        self._check_names(row)
        try:
            return {name: encode(row[name]) for name, encode in self._encoders if name in row}
        except ColumnValueError as e:
            raise self._bad_value(e, row) from None

    def values(self, row: Mapping[str, Any]) -> list[Any]:
        """The stored values of a full row in schema order (missing columns null)."""
        self._check_names(row)
        get = row.get
        try:
            return [encode(get(name)) for name, encode in self._encoders]
        except ColumnValueError as e:
            raise self._bad_value(e, row) from None

    def given_pk(self, row: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The primary key as ``row`` gives it (unchecked), for naming the row in an
        error; None if a key column is missing."""
        if not all(c.name in row for c in self.schema.pk_columns):
            return None
        return tuple(row[c.name] for c in self.schema.pk_columns)

    def pk_of(self, stored: Mapping[str, Any]) -> tuple[Any, ...]:
        pk = []
        for col in self.schema.pk_columns:
            value = stored.get(col.name)
            if value is None:
                raise RowValueError(self.table, col.name, None, "is null, but it is part of the primary key")
            pk.append(value)
        return tuple(pk)

    def encode(self, row: Mapping[str, Any]) -> tuple[str, tuple[Any, ...], bytes, list[Any]]:
        """``(feature path, pk, blob, cells)`` of a full row."""
        pk, blob, cells = self._encode_values(row)
        return self._path(pk), pk, blob, cells

    def _encode_values(self, row: Mapping[str, Any]) -> tuple[tuple[Any, ...], bytes, list[Any]]:
        """``(pk, blob, cells)`` of a full row (its path is made apart)."""
        cells = self.values(row)
        pk = tuple([cells[i] for i in self.pk_index])
        if None in pk:
            pk = self.pk_of(dict(zip(self.schema.column_names, cells)))  # raises, naming the column
        return pk, encode_feature(self.legend_name, [cells[i] for i in self.non_pk_index]), cells

    def _path(self, pk: tuple[Any, ...]) -> str:
        try:
            return self.path_structure.encode_path(pk)
        except PrimaryKeyError as e:
            raise RowValueError(self.table, self.schema.pk_columns[0].name, pk, str(e)) from None

    def prepare(self, rows: Iterable[Mapping[str, Any]], *, where: Any = None) -> Prepared:
        """Encode every row (all or nothing); duplicate keys are :class:`RowExistsError`.
        ``where(i)`` names the i-th row's source (e.g. ``"a.csv, line 3"``) in errors."""
        with gc_paused():  # encoded rows are many small lists and tuples, none in a cycle
            return self._prepare(rows, where)

    def _prepare(self, rows: Iterable[Mapping[str, Any]], where: Any) -> Prepared:
        # Rows in batches through the compiled encoder (_columns.encode_rows); a row it
        # leaves goes through _encode_values, which encodes it or names what is wrong.
        encoded: list[tuple[tuple, bytes, list]] = []
        source = iter(rows)
        while batch := list(islice(source, _ENCODE_BATCH)):
            fast = _columns.encode_rows(batch, *self._compiled) if COMPILED else [None] * len(batch)
            for row, found in zip(batch, fast):
                if found is None:
                    try:
                        found = self._encode_values(row)
                    except RowValueError as e:
                        raise self._placed(e, where, len(encoded)) from None
                encoded.append(found)
        # The paths in one batch (in C for keys of integers and strings); a key the
        # compiled codec leaves goes through encode_path, which names what is wrong.
        paths = self.path_structure.codec.paths([pk for pk, _, _ in encoded])
        out: dict[str, tuple[tuple, bytes, list]] = {}
        places: dict[str, str] = {}
        for i, (path, found) in enumerate(zip(paths, encoded)):
            if path is None:
                try:
                    path = self._path(found[0])
                except RowValueError as e:
                    raise self._placed(e, where, i) from None
            if path in out:
                raise RowExistsError(self.table, found[0], where(i) if where else "")
            out[path] = found
            if where is not None:
                places[path] = where(i)
        return Prepared(out, places)

    def _placed(self, error: RowValueError, where: Any, i: int) -> RowValueError:
        """``error`` naming where the i-th row came from (when ``where`` tells)."""
        if where is None:
            return error
        return RowValueError(self.table, error.column, error.value, f"{error.reason} ({where(i)})", pk=error.pk)


class TableWriter:
    """A table inside a write transaction: reads see the transaction's own writes.

    Rows are dicts by column name holding Python values (or stored values: ``"2020-01-01"``
    for a date is accepted too). A compound primary key is a tuple.
    """

    def __init__(self, tx: Transaction, state: DatasetState, *, created: bool) -> None:
        self.tx = tx
        self.name = state.name
        self.graph = state.graph
        self.state = state
        self.created = created
        self.dropped = False
        self._committed = committed_source(tx)
        self._fallback = legend_finder(tx.repo.storage, self.graph, tx._require_open)
        # feature path -> (blob at the head, blob now); None: no row.
        self._touched: dict[str, tuple[bytes | None, bytes | None]] = {}
        self._set_schema(state.schema)

    def _set_schema(self, schema: Schema) -> None:
        self.schema = schema
        self.path_structure = self.state.path_structure
        self.reader = RowReader(schema, self.state.legends, self._fallback, self.name)
        self._legend_name = schema.legend.name
        self._non_pk = schema.non_pk_columns
        self.encoder = RowEncoder(self.name, schema, self.path_structure)

    def __repr__(self) -> str:
        return f"<TableWriter {self.name!r} on {self.tx.branch!r} {self.schema!r}>"

    # -- reading ------------------------------------------------------------------------
    def _committed_blob(self, path: str) -> bytes | None:
        if self.created:
            return None
        found = None
        for quad in self._committed((self.graph, path, FEATURE, Var("o"))):
            found = quad[3]
        return found

    def _current(self, path: str) -> bytes | None:
        touched = self._touched.get(path)
        if touched is not None:
            return touched[1]
        return self._committed_blob(path)

    def _current_many(self, paths: list[str], heads: dict[str, list[bytes]] | None = None) -> dict[str, bytes | None]:
        """:meth:`_current` of many paths, those the transaction has not touched looked up
        at the head in one batch (``heads`` gets the blobs each of those holds there)."""
        found = {path: touched[1] for path in paths if (touched := self._touched.get(path)) is not None}
        untouched = [path for path in paths if path not in found]
        if untouched and not self.created:
            for path, blobs in self.tx.committed_table_blobs(self.graph, untouched).items():
                found[path] = blobs[-1] if blobs else None
                if heads is not None:
                    heads[path] = blobs
        return found

    def get(self, pk: Any, *, python: bool = True) -> dict[str, Any] | None:
        """The row with this primary key as it stands in the transaction, or None."""
        return row_by_key(self, pk, self._current, python)

    def __contains__(self, pk: Any) -> bool:
        key = pk_tuple(self.schema, pk, self.name)
        return self._current(self.path_structure.encode_path(key)) is not None

    def features(self) -> Iterator[tuple[str, bytes]]:
        """``(path, blob)`` of every row in the transaction's state."""
        touched = self._touched
        if not self.created:
            for _, path, _, blob in self._committed((self.graph, Var("s"), FEATURE, Var("o"))):
                if path not in touched:
                    yield path, blob
        for path, (_, blob) in list(touched.items()):
            if blob is not None:
                yield path, blob

    def rows(self, *, python: bool = True) -> Iterator[dict[str, Any]]:
        """Every row as it stands in the transaction, in primary-key order (a generator)."""
        read = self.reader.python if python else self.reader.stored
        for path, blob in in_key_order(self.features()):
            yield read(path, blob)

    def __len__(self) -> int:
        return sum(1 for _ in self.features())

    def as_table(self) -> Table:
        """A read-only :class:`Table` over the committed state (without this
        transaction's writes)."""
        return Table(self._committed, self.state, self._fallback)

    # -- encoding -----------------------------------------------------------------------
    def encode(self, row: Mapping[str, Any]) -> tuple[str, tuple[Any, ...], bytes]:
        """``(feature path, pk, blob)`` of a full row (missing columns are null), validated."""
        path, pk, blob, _cells = self.encoder.encode(row)
        return path, pk, blob

    def _stage(self, path: str, old: bytes | None, new: bytes | None) -> None:
        if old == new:
            return
        touched = self._touched.get(path)
        head = touched[0] if touched is not None else old
        if old is not None:
            remove(self.tx, self.graph, path, FEATURE, old)
        if new is not None:
            put(self.tx, self.graph, path, FEATURE, new)
        self._touched[path] = (head, new)

    def _stage_many(self, plan: list[tuple[str, bytes | None, bytes | None]], heads: dict[str, list[bytes]]) -> None:
        """:meth:`_stage` of many ``(path, old, new)`` (each path once), staged in batches:
        the old blobs removed, then the new put; those whose state at the head ``heads``
        tells (the blobs at the paths looked up there) staged as known."""
        touched, graph = self._touched, self.graph
        for path, old, new in plan:
            if old != new:
                before = touched.get(path)
                touched[path] = (before[0] if before is not None else old, new)
        changed = [(path, old, new) for path, old, new in plan if old != new]
        gone = [(path, old) for path, old, _ in changed if old is not None]
        held = [path in heads and old in heads[path] for path, old in gone]
        remove_many(self.tx, [(graph, path, FEATURE, old) for (path, old), known in zip(gone, held) if known], held=True)
        remove_many(self.tx, [(graph, path, FEATURE, old) for (path, old), known in zip(gone, held) if not known])
        made = [(path, new) for path, _, new in changed if new is not None]
        absent = [path in heads and new not in heads[path] for path, new in made]
        put_many(self.tx, [(graph, path, FEATURE, new) for (path, new), known in zip(made, absent) if known], absent=True)
        put_many(self.tx, [(graph, path, FEATURE, new) for (path, new), known in zip(made, absent) if not known])

    # -- row writes ---------------------------------------------------------------------
    def insert(self, row: Mapping[str, Any]) -> None:
        """Add a row; :class:`RowExistsError` if its primary key is taken."""
        path, pk, blob = self.encode(row)
        if self._current(path) is not None:
            raise RowExistsError(self.name, pk)
        self._stage(path, None, blob)

    def upsert(self, row: Mapping[str, Any]) -> None:
        """Insert the row, or replace the row with its primary key (missing columns null)."""
        path, _pk, blob = self.encode(row)
        self._stage(path, self._current(path), blob)

    def update(self, row: Mapping[str, Any]) -> None:
        """Change the cells ``row`` names of the existing row with its primary key (other
        cells keep their values); :class:`RowNotFoundError` if there is no such row."""
        given = self.encoder.cells(row, only_given=True)
        pk = self.encoder.pk_of(given)
        path = self.path_structure.encode_path(pk)
        old = self._current(path)
        if old is None:
            raise RowNotFoundError(self.name, pk)
        before = self.reader.stored(path, old, pk)
        after = {**before, **given}
        if pack(list(before.values())) == pack(list(after.values())):
            return  # no cell changes: the row keeps its blob
        self._stage(path, old, encode_feature(self._legend_name, [after[c.name] for c in self._non_pk]))

    def delete(self, pk: Any) -> None:
        """Remove the row with this primary key; :class:`RowNotFoundError` if absent."""
        key = pk_tuple(self.schema, pk, self.name)
        path = self.path_structure.encode_path(key)
        old = self._current(path)
        if old is None:
            raise RowNotFoundError(self.name, key)
        self._stage(path, old, None)

    def insert_many(self, rows: Iterable[Mapping[str, Any]] | Prepared, *, where: Any = None) -> int:
        """Insert many rows, all or nothing: every row is encoded and checked (values,
        duplicate keys within ``rows`` and against the table) before any is staged.
        ``where(i)`` may name the source of the i-th row (0-based) for error messages,
        e.g. a file and line; ``rows`` may be :meth:`RowEncoder.prepare`'s result.
        Returns how many rows were inserted."""
        prepared = rows if isinstance(rows, Prepared) else self.encoder.prepare(rows, where=where)
        heads: dict[str, list[bytes]] = {}
        self.check_absent(prepared, heads)
        touched, graph = self._touched, self.graph
        tuples, new = [], []
        for path, (_pk, blob, _cells) in prepared.rows.items():
            before = touched.get(path)
            touched[path] = (None if before is None else before[0], blob)
            (new if path in heads else tuples).append((graph, path, FEATURE, blob))
        put_many(self.tx, tuples)
        put_many(self.tx, new, absent=True)  # looked up: no row at the head
        return len(prepared.rows)

    def check_absent(self, prepared: Prepared, heads: dict[str, list[bytes]] | None = None) -> None:
        """:class:`RowExistsError` if the table already holds a key of ``prepared``, looked
        up in one batch (``heads``: as :meth:`_current_many` fills it)."""
        if self.created and not self._touched:
            return
        for path, blob in self._current_many(list(prepared.rows), heads).items():
            if blob is not None:
                pk = prepared.rows[path][0]
                raise RowExistsError(self.name, pk, prepared.where_of(path), held=True)

    def replace_rows(self, rows: Iterable[Mapping[str, Any]] | Prepared, *, where: Any = None) -> dict[str, int]:
        """Make the table hold exactly ``rows``: insert the new, delete the missing, and
        rewrite only rows whose cells changed (an unchanged row keeps its blob, and so its
        old legend). All or nothing, like :meth:`insert_many`. Returns counts of
        ``inserted``, ``updated``, ``deleted`` and ``unchanged``."""
        return self._merge_rows(rows, where, delete_missing=True)

    def upsert_rows(self, rows: Iterable[Mapping[str, Any]] | Prepared, *, where: Any = None) -> dict[str, int]:
        """Insert the rows whose keys are new and rewrite those whose cells changed; rows
        ``rows`` does not name stay. All or nothing; counts as :meth:`replace_rows`."""
        return self._merge_rows(rows, where, delete_missing=False)

    def _merge_rows(self, rows: Iterable[Mapping[str, Any]] | Prepared, where: Any, *,
                    delete_missing: bool) -> dict[str, int]:
        prepared = rows if isinstance(rows, Prepared) else self.encoder.prepare(rows, where=where)
        incoming = dict(prepared.rows)
        counts = {"inserted": 0, "updated": 0, "deleted": 0, "unchanged": 0}
        plan: list[tuple[str, bytes | None, bytes | None]] = []
        heads: dict[str, list[bytes]] = {}
        existing = self.features() if delete_missing else (
            (path, blob) for path, blob in self._current_many(list(incoming), heads).items() if blob is not None)
        for path, blob in list(existing):
            new = incoming.pop(path, None)
            if new is None:
                plan.append((path, blob, None))
                counts["deleted"] += 1
                continue
            pk, new_blob, cells = new
            if blob == new_blob or pack(list(self.reader.stored(path, blob, pk).values())) == pack(cells):
                counts["unchanged"] += 1
                continue
            plan.append((path, blob, new_blob))
            counts["updated"] += 1
        for path, (_pk, blob, _cells) in incoming.items():
            plan.append((path, None, blob))
            counts["inserted"] += 1
        self._stage_many(plan, heads)
        return counts

    def to_pandas(self) -> Any:
        """The rows as they stand in this transaction, as a typed pandas DataFrame."""
        return to_dataframe(self)

    def to_arrow(self) -> Any:
        """The rows as they stand in this transaction, as a typed pyarrow Table."""
        # imported here, not with the module: pyarrow is optional (datae[spark]), and
        # arrow_batches says so (MissingDependencyError) as it is imported
        from .arrow_batches import to_arrow

        return to_arrow(self)

    def write_pandas(self, df: Any, *, mode: str = "insert", add_columns: bool = False) -> dict[str, int]:
        """Write a DataFrame's rows: ``insert`` (a key held already is an error), ``upsert``
        or ``replace`` (the table then holds exactly them). A column the table lacks is a
        :class:`ColumnNotFoundError` (a misspelt name would otherwise become a new
        column), unless ``add_columns``. All or nothing; returns the counts."""
        self._check_columns([str(c) for c in df.columns], add_columns)
        return import_dataframe(self.tx, self.name, df, mode=mode)

    def write_arrow(self, table: Any, *, mode: str = "insert", add_columns: bool = False) -> dict[str, int]:
        """Write a pyarrow Table's rows, as :meth:`write_pandas`."""
        self._check_columns(list(table.column_names), add_columns)
        return import_arrow(self.tx, self.name, table, mode=mode)

    def _check_columns(self, names: list[str], add_columns: bool) -> None:
        if add_columns:
            return
        for name in names:
            if name not in self.encoder.names:
                raise ColumnNotFoundError(self.name, name, self.schema.column_names,
                                          "(write_pandas(..., add_columns=True) adds it)")

    def write_feature(self, path: str, blob: bytes | None) -> None:
        """Put a Kart feature blob at ``path`` as it is (None removes it), for importers
        that keep Kart's bytes. The blob must name a legend the dataset has."""
        if blob is not None:
            self.reader.stored(path, blob)  # checks the blob, its legend and the path's pk
        self._stage(path, self._current(path), blob)

    # -- schema -------------------------------------------------------------------------
    def alter(self, new_schema: SchemaLike) -> bool:
        """Change the schema (add, drop, rename, reorder columns, change types): writes
        ``schema.json`` and the new legend, never a row. Old rows read through the new
        schema by column id. Returns False if the schema did not change.
        :class:`SchemaError` if the change would need rows rewritten (see
        :func:`check_alter`)."""
        new = as_schema(new_schema)
        if new == self.schema and new.column_ids == self.schema.column_ids:
            return False  # the same columns (key order or explicit nulls aside)
        check_alter(self.name, self.schema, new)
        old_text = self.state.meta[SCHEMA_ITEM]
        new_text = new.dumps().decode("utf-8")
        remove(self.tx, self.graph, SCHEMA_ITEM, META, old_text)
        put(self.tx, self.graph, SCHEMA_ITEM, META, new_text)
        self.state.meta[SCHEMA_ITEM] = new_text
        legend = new.legend
        item = legend_item(legend.name)
        if item not in self.state.meta:
            put(self.tx, self.graph, item, META, legend.dumps())
            self.state.meta[item] = legend.dumps()
            self.state.legends[legend.name] = legend
        self.state.schema = new
        self._set_schema(new)
        return True

    def set_meta(self, item: str, value: str | bytes | None) -> None:
        """Set (or with None remove) a meta item such as ``title`` or ``description``.
        ``schema.json``, ``path-structure.json`` and legends are not set this way."""
        if item in (SCHEMA_ITEM, PATH_STRUCTURE_ITEM) or item.startswith("legend/"):
            raise SchemaError(f"table {self.name!r}: {item} is managed by the table (use alter())")
        old = self.state.meta.get(item)
        if old is not None:
            remove(self.tx, self.graph, item, META, old)
            del self.state.meta[item]
        if value is not None:
            put(self.tx, self.graph, item, META, value)
            self.state.meta[item] = value

    @property
    def title(self) -> str | None:
        return self.state.title

    @property
    def description(self) -> str | None:
        return self.state.description

    def _drop(self) -> int:
        n = 0
        for item, value in list(self.state.meta.items()):
            remove(self.tx, self.graph, item, META, value)
            n += 1
        for item, value in list(self.state.attachments.items()):
            remove(self.tx, self.graph, item, ATTACHMENT, value)
            n += 1
        for path, blob in list(self.features()):
            self._stage(path, blob, None)
            n += 1
        self.dropped = True
        return n


def load_table(tx: Transaction, name: str, columns: Sequence[ColumnSpec], rows: Iterable[Mapping[str, Any]], *,
               pk: Sequence[str] | None = None, replace: bool = False, where: Callable[[int], str] | None = None,
               title: str | None = None, description: str | None = None, schema: Any = None,
               crs: Mapping[str, str] | None = None, mode: str | None = None) -> dict[str, int]:
    """Load ``rows`` into table ``name``: create it (``schema`` if given, else from
    ``columns`` and ``pk``) or evolve it to the source's columns, then, by ``mode``:
    ``insert`` the rows (a key the table holds is an error), ``upsert`` them (new keys
    inserted, changed rows rewritten, others kept) or ``replace`` (the table holds exactly
    them; ``replace=True`` is the same). All rows are encoded and checked before anything
    is staged. Returns counts (``inserted``, ``updated``, ``deleted``, ``unchanged``)."""
    mode = load_mode(mode, replace)
    replace = mode == "replace"
    try:
        writer = open_table(tx, name)
    except TableNotFoundError:
        writer = None
    if writer is None:
        new = as_schema(schema) if schema is not None else make_schema(name, columns, list(pk or []))
        ps = default_path_structure([c.data_type for c in new.pk_columns])
        prepared = RowEncoder(name, new, ps).prepare(rows, where=where)
        writer = create(tx, name, new, title=title, description=description, path_structure=ps, crs=crs)
        return {"inserted": writer.insert_many(prepared), "updated": 0, "deleted": 0, "unchanged": 0}
    check_pk(name, writer.schema, pk)
    target = as_schema(schema) if schema is not None else evolve_schema(name, writer.schema, columns, drop_missing=replace)
    prepared = RowEncoder(name, target, writer.path_structure).prepare(rows, where=where)
    if mode == "insert":
        writer.check_absent(prepared)  # before the schema change: all or nothing
    writer.alter(target)
    if title is not None and title != writer.title:
        writer.set_meta("title", title)
    if description is not None and description != writer.description:
        writer.set_meta("description", description)
    if mode == "replace":
        return writer.replace_rows(prepared)
    if mode == "upsert":
        return writer.upsert_rows(prepared)
    return {"inserted": writer.insert_many(prepared), "updated": 0, "deleted": 0, "unchanged": 0}


def import_dataframe(tx: Transaction, name: str, df: pandas.DataFrame, *, pk: str | Sequence[str] | None = None,
                     schema: Any = None, replace: bool = False, title: str | None = None,
                     description: str | None = None, mode: str | None = None) -> dict[str, int]:
    """Load a DataFrame into table ``name`` (created with primary key ``pk``, or evolved
    to the frame's columns); like :func:`load_table`: all or nothing, ``mode``
    insert (the default), upsert or replace."""
    pk_list = [pk] if isinstance(pk, str) else list(pk or [])
    try:
        existing: Schema | None = open_table(tx, name).schema
    except TableNotFoundError:
        existing = None
    df = integers_held_as_floats(existing, df)
    return load_table(tx, name, dataframe_columns(df), dataframe_rows(df), pk=pk_list, replace=replace, schema=schema,
                      where=lambda i: f"DataFrame row {i}", title=title, description=description, mode=mode)


def import_arrow(tx: Transaction, name: str, table: pyarrow.Table, **options: Any) -> dict[str, int]:
    """Load an Arrow table into table ``name``, as :func:`import_dataframe` (the same
    options); columns are typed from the Arrow schema through pandas' dtypes."""
    return import_dataframe(tx, name, arrow_frame(table), **options)
