"""The store as Arrow record batches: quads, changes between commits, and Kart tables.

Everything here streams: an iterator of quads or rows goes in, record batches of at most
``batch_size`` rows come out, and only one batch is held at a time.

Quads (:data:`QUADS_SCHEMA`) have the columns of :mod:`fstore.export.terms`. A Kart table
gets one Arrow field per column of its :class:`~fstore.tables.schema.Schema`, typed as
:mod:`fstore.tables.arrow_types` says (the one Kart-to-Arrow mapping, which ``to_arrow``
uses too), its values converted by :mod:`fstore.tables.arrow_batches`; this module
re-exports their functions and adds :func:`row_batches`, for rows given as dicts.

>>> from fstore.tables import Schema
>>> s = Schema.from_dicts([{"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 16},
...                        {"id": "b", "name": "price", "dataType": "numeric", "precision": 6, "scale": 2}])
>>> from decimal import Decimal
>>> [b.num_rows for b in row_batches(s, ({"fid": i, "price": Decimal(i)} for i in range(5)), batch_size=2)]
[2, 2, 1]
"""

from __future__ import annotations

from itertools import islice
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from nstore import Var
from nstore.collector import paused_gc

from .. import api
from ..core.storage import Snapshot
from ..tables.arrow_batches import BATCH_SIZE, column_batch, column_plan, table_batches, typed_array
from ..tables.arrow_types import field_metadata, kart_arrow_type, kart_field, table_arrow_schema, table_crs
from .errors import ExportError, require
from .terms import DECIMAL_PRECISION, DECIMAL_SCALE, QUAD_COLUMNS, packed_quad_columns, quad_columns

pa = require("pyarrow", "the Arrow export")

__all__ = [
    "BATCH_SIZE",
    "QUADS_SCHEMA",
    "CHANGES_SCHEMA",
    "CHANGE_COLUMNS",
    "CHANGE_FIELDS",
    "CHANGE_TYPE",
    "FROM_COMMIT",
    "TO_COMMIT",
    "change_schema",
    "chunks",
    "paused_gc",
    "view_quads",
    "quad_batch",
    "quad_batches",
    "view_quad_batches",
    "change_batches",
    "kart_arrow_type",
    "kart_field",
    "table_arrow_schema",
    "row_batches",
    "column_batch",
    "column_plan",
    "table_batches",
    "table_crs",
    "field_metadata",
]

_STRING_FIELDS = {"object": pa.large_string()}
_QUAD_TYPES = {
    "object_int": pa.int64(),
    "object_double": pa.float64(),
    "object_decimal": pa.decimal128(DECIMAL_PRECISION, DECIMAL_SCALE),
    "object_bool": pa.bool_(),
    "object_date": pa.date32(),
    "object_datetime": pa.timestamp("us", tz="UTC"),
    "object_datetime_local": pa.timestamp("us"),
}
_QUAD_DOCS = {
    "graph": "graph name (IRI value, blank node label; null: the default graph)",
    "subject": "subject (IRI value or blank node label)",
    "predicate": "predicate IRI",
    "object": "object: IRI value, blank node label or literal lexical form",
    "object_kind": "iri, bnode or literal",
    "datatype": "datatype IRI of a literal object",
    "language": "language tag of a literal object",
}

QUADS_SCHEMA = pa.schema(
    [
        pa.field(
            name,
            _QUAD_TYPES.get(name, _STRING_FIELDS.get(name, pa.string())),
            nullable=True,
            metadata={"comment": _QUAD_DOCS[name]} if name in _QUAD_DOCS else None,
        )
        for name in QUAD_COLUMNS
    ],
    metadata={"datae.table": "quads"},
)

# Change rows as Delta Lake's change data feed has them: the row's own columns, plus
# the kind of change and the two commits compared.
CHANGE_TYPE, FROM_COMMIT, TO_COMMIT = "_change_type", "_from_commit", "_to_commit"
CHANGE_FIELDS = (
    pa.field(CHANGE_TYPE, pa.string(), nullable=False,
             metadata={"comment": "insert, delete, update_preimage or update_postimage"}),
    pa.field(FROM_COMMIT, pa.string(), metadata={"comment": "the commit compared from"}),
    pa.field(TO_COMMIT, pa.string(), metadata={"comment": "the commit compared to"}),
)
CHANGE_COLUMNS = (CHANGE_TYPE, FROM_COMMIT, TO_COMMIT) + QUAD_COLUMNS


def change_schema(schema: Any) -> Any:
    """The schema of a table's change rows: :data:`CHANGE_FIELDS`, then ``schema``'s."""
    return pa.schema(list(CHANGE_FIELDS) + list(schema), metadata=schema.metadata)


CHANGES_SCHEMA = change_schema(QUADS_SCHEMA)
_QUAD_CHANGE = {"+": "insert", "-": "delete"}


def chunks(items: Iterable[Any], size: int, convert: Callable[[list], Any] = list) -> Iterator[Any]:
    """``convert(chunk)`` for consecutive lists of at most ``size`` items; reading a chunk
    and converting it run with the garbage collector paused (never across a ``yield``)."""
    if size < 1:
        raise ExportError(f"batch size must be at least 1, not {size}")
    iterator = iter(items)
    while True:
        with paused_gc():
            chunk = list(islice(iterator, size))
            if not chunk:
                return
            result = convert(chunk) if convert is not list else chunk
        yield result


# -- quads --------------------------------------------------------------------------------

def view_quads(view: Any) -> Iterator[tuple]:
    """Every quad of a view (``repo.at(ref)``), streamed with ``fstore.quads``."""
    return api.quads(view, Var("g"), Var("s"), Var("p"), Var("o"))


def quad_batch(quads: Sequence[Sequence[Any]], schema: Any = QUADS_SCHEMA, **constants: Any) -> Any:
    """One record batch of quads; ``constants`` fill extra leading columns of ``schema``
    (e.g. ``op`` for changes) with one value each, or a list of values."""
    return _columns_batch(quad_columns(quads), len(quads), schema, constants)


def _columns_batch(columns: Mapping[str, list], rows: int, schema: Any, constants: Mapping[str, Any]) -> Any:
    arrays = []
    for field in schema:
        if field.name in columns:
            values = columns[field.name]
        else:
            value = constants[field.name]
            values = value if isinstance(value, list) else [value] * rows
        arrays.append(typed_array(values, field, "quads"))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def view_quad_batches(view: Any, batch_size: int = BATCH_SIZE, graphs: Iterable[Any] | None = None) -> Iterator[Any]:
    """Record batches (:data:`QUADS_SCHEMA`) of every quad of a view (only those of
    ``graphs`` if given: graph names as stored, None the default graph), read as packed
    keys and turned into columns from their bytes
    (:func:`~fstore.export.terms.packed_quad_columns`): the same batches as
    ``quad_batches(view_quads(view))``, at a fraction of the cost."""
    with view.repo.storage.read() as snapshot:
        reader = snapshot.reader(view.seq)
        decode = snapshot.quads.decoder(snapshot.tx, False)  # the dictionary: an nstore-level read
        if graphs is None:
            _, rows = reader.packed((Var("g"), Var("s"), Var("p"), Var("o")))
        else:
            rows = _graph_rows(snapshot, reader, graphs)

        def batch(chunk: list) -> Any:
            return _columns_batch(packed_quad_columns(chunk, decode), len(chunk), QUADS_SCHEMA, {})

        yield from chunks(rows, batch_size, batch)


def _graph_rows(snapshot: Snapshot, reader: Any, graphs: Iterable[Any]) -> Iterator[list[bytes]]:
    """The packed ``[graph, subject, predicate, object]`` items of each graph's quads
    (a prefix scan per graph: a graph's key item is the same in every key)."""
    for graph in graphs:
        items = snapshot.quads.encode(snapshot.tx, [graph])  # the dictionary's ids: an nstore-level read
        if items is None:
            continue  # no key names this graph: it holds no quad
        graph_item = snapshot.quads.item_bytes(items)[0]
        _, rows = reader.packed((graph, Var("s"), Var("p"), Var("o")))
        for row in rows:
            yield [graph_item, *row]


def quad_batches(quads: Iterable[Sequence[Any]], batch_size: int = BATCH_SIZE) -> Iterator[Any]:
    """Record batches (:data:`QUADS_SCHEMA`) of a stream of quads."""
    return chunks(quads, batch_size, quad_batch)


def change_batches(changes: Iterable[tuple[str, Sequence[Any]]], from_commit: str | None, to_commit: str | None,
                   batch_size: int = BATCH_SIZE) -> Iterator[Any]:
    """Record batches (:data:`CHANGES_SCHEMA`) of ``(op, quad)`` pairs as ``repo.diff``
    gives them: ``+`` is an ``insert``, ``-`` a ``delete``."""
    def batch(chunk: list) -> Any:
        return quad_batch([quad for _, quad in chunk], CHANGES_SCHEMA,
                          **{CHANGE_TYPE: [_QUAD_CHANGE[op] for op, _ in chunk],
                             FROM_COMMIT: from_commit, TO_COMMIT: to_commit})

    return chunks(changes, batch_size, batch)


# -- Kart tables (typed and converted by fstore.tables.arrow_types / arrow_batches) ------

def row_batches(schema: Any, rows: Iterable[Mapping[str, Any]], batch_size: int = BATCH_SIZE, *,
                crs_definitions: Mapping[str, str] | None = None, arrow_schema: Any = None,
                table: str = "table") -> Iterator[Any]:
    """Record batches of a Kart table: ``rows`` are dicts (column name -> Python value, as
    ``table.rows()`` / ``KartDataset.rows()`` give; stored values are accepted too)."""
    if arrow_schema is None:
        arrow_schema = table_arrow_schema(schema, crs_definitions, name=table)
    plan = column_plan(schema, arrow_schema)

    def batch(chunk: list) -> Any:
        columns = []
        for field, _, _ in plan:
            try:
                columns.append(list(map(itemgetter(field.name), chunk)))
            except KeyError:
                raise ExportError(f"table {table!r}: a row has no column {field.name!r}") from None
        return column_batch(plan, columns, arrow_schema, table)

    return chunks(rows, batch_size, batch)
