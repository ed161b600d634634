"""The store as Arrow record batches: quads, changes between commits, and Kart tables.

Everything here streams: an iterator of quads or rows goes in, record batches of at most
``batch_size`` rows come out, and only one batch is held at a time.

Quads (:data:`QUADS_SCHEMA`) have the columns of :mod:`fstore.export.terms`. A Kart table
gets one Arrow field per column of its :class:`~fstore.tables.schema.Schema`:

===========  ===============================================  ==========================
Kart type    Arrow type                                       Spark type
===========  ===============================================  ==========================
boolean      bool                                             BooleanType
integer      int8 / int16 / int32 / int64 (by ``size``)       ByteType .. LongType
float        float32 / float64 (by ``size``)                  FloatType / DoubleType
numeric      decimal128(precision, scale)                     DecimalType(p, s)
text         large_string                                     StringType
blob         large_binary                                     BinaryType
date         date32                                           DateType
time         time64[us]                                       TimeType(6)
timestamp    timestamp[us] (tz UTC with ``timezone: UTC``)    TimestampNTZType / TimestampType
interval     string (ISO 8601 duration, ``P1Y2M3DT4H5M6S``)   StringType
geometry     large_binary: ISO WKB, little-endian             BinaryType
json         large_string: the value's JSON text              StringType
===========  ===============================================  ==========================

``numeric`` without a precision is DECIMAL(38, scale or 18) (Spark's widest); with a
precision over 38 it is text. ``interval`` is text because no Arrow / Spark interval type
holds years and months together with days and seconds and can be stored in Parquet. Each
field's metadata keeps the Kart column (``kart.id``, ``kart.dataType``,
``kart.primaryKeyIndex``, ``kart.<extra type info>``); a geometry field also has ``crs``
(its ``geometryCRS``), ``crs_wkt`` (the CRS definition, when known), ``geometry_type`` and
``encoding: WKB``. The schema's metadata keeps ``kart.schema.json``.

>>> from fstore.tables import Schema
>>> s = Schema.from_dicts([{"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 16},
...                        {"id": "b", "name": "price", "dataType": "numeric", "precision": 6, "scale": 2}])
>>> table_arrow_schema(s).types
[DataType(int16), Decimal128Type(decimal128(6, 2))]
>>> from decimal import Decimal
>>> [b.num_rows for b in row_batches(s, ({"fid": i, "price": Decimal(i)} for i in range(5)), batch_size=2)]
[2, 2, 1]
"""

from __future__ import annotations

import datetime as _dt
import json
from decimal import Decimal
from itertools import islice
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from nstore.collector import paused_gc

from ..tables.geometry import gpkg_to_wkb
from ..tables.types import decode_value
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

BATCH_SIZE = 65_536

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
    from .. import Var, quads

    return quads(view, Var("g"), Var("s"), Var("p"), Var("o"))


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
        arrays.append(_array(values, field, "quads"))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def view_quad_batches(view: Any, batch_size: int = BATCH_SIZE, graphs: Iterable[Any] | None = None) -> Iterator[Any]:
    """Record batches (:data:`QUADS_SCHEMA`) of every quad of a view (only those of
    ``graphs`` if given: graph names as stored, None the default graph), read as packed
    keys and turned into columns from their bytes
    (:func:`~fstore.export.terms.packed_quad_columns`): the same batches as
    ``quad_batches(view_quads(view))``, at a fraction of the cost."""
    from .. import Var

    storage = view.repo.storage
    with storage.read() as tx:
        reader = storage.reader(tx, view.seq)
        decode = storage.quads.decoder(tx, False)
        if graphs is None:
            _, rows = reader.packed((Var("g"), Var("s"), Var("p"), Var("o")))
        else:
            rows = _graph_rows(storage.quads, tx, reader, graphs)

        def batch(chunk: list) -> Any:
            return _columns_batch(packed_quad_columns(chunk, decode), len(chunk), QUADS_SCHEMA, {})

        yield from chunks(rows, batch_size, batch)


def _graph_rows(history: Any, tx: Any, reader: Any, graphs: Iterable[Any]) -> Iterator[list[bytes]]:
    """The packed ``[graph, subject, predicate, object]`` items of each graph's quads
    (a prefix scan per graph: a graph's key item is the same in every key)."""
    from .. import Var

    for graph in graphs:
        items = history.encode(tx, [graph])
        if items is None:
            continue  # no key names this graph: it holds no quad
        graph_item = history.item_bytes(items)[0]
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


# -- Kart tables --------------------------------------------------------------------------

def kart_arrow_type(column: Any) -> Any:
    """The Arrow type of a Kart column (see the module docstring)."""
    kind = column.data_type
    info = column.extra_type_info
    if kind == "boolean":
        return pa.bool_()
    if kind == "integer":
        return {8: pa.int8(), 16: pa.int16(), 32: pa.int32()}.get(info.get("size"), pa.int64())
    if kind == "float":
        return pa.float32() if info.get("size") == 32 else pa.float64()
    if kind == "numeric":
        precision, scale = info.get("precision"), info.get("scale")
        if precision is None:
            return pa.decimal128(DECIMAL_PRECISION, DECIMAL_SCALE if scale is None else min(scale, DECIMAL_PRECISION))
        if precision > DECIMAL_PRECISION:
            return pa.string()
        return pa.decimal128(precision, scale or 0)
    if kind == "text":
        return pa.large_string()
    if kind in ("blob", "geometry"):
        return pa.large_binary()
    if kind == "date":
        return pa.date32()
    if kind == "time":
        return pa.time64("us")
    if kind == "timestamp":
        return pa.timestamp("us", tz="UTC") if info.get("timezone") == "UTC" else pa.timestamp("us")
    if kind == "interval":
        return pa.string()
    if kind == "json":
        return pa.large_string()
    raise ExportError(f"column {column.name!r}: unknown Kart dataType {kind!r}")


def field_metadata(column: Any, crs_definitions: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Arrow / Spark field metadata that keeps a Kart column's definition."""
    meta = {"kart.id": column.id, "kart.dataType": column.data_type}
    if column.pk_index is not None:
        meta["kart.primaryKeyIndex"] = str(column.pk_index)
    for key, value in column.extra_type_info.items():
        meta[f"kart.{key}"] = value if isinstance(value, str) else json.dumps(value)
    if column.data_type == "geometry":
        meta["encoding"] = "WKB"
        info = column.extra_type_info
        if info.get("geometryType"):
            meta["geometry_type"] = info["geometryType"]
        crs = info.get("geometryCRS")
        if crs:
            meta["crs"] = crs
            wkt = (crs_definitions or {}).get(crs)
            if wkt:
                meta["crs_wkt"] = wkt
    return meta


def kart_field(column: Any, crs_definitions: Mapping[str, str] | None = None) -> Any:
    """The Arrow field of a Kart column, its definition in the field metadata."""
    return pa.field(column.name, kart_arrow_type(column), nullable=column.pk_index is None,
                    metadata=field_metadata(column, crs_definitions))


def table_arrow_schema(schema: Any, crs_definitions: Mapping[str, str] | None = None, *,
                       name: str | None = None) -> Any:
    """The Arrow schema of a Kart table (``fstore.tables.Schema``)."""
    metadata = {"kart.schema.json": schema.dumps().decode("utf-8")}
    if name is not None:
        metadata["datae.table"] = name
    return pa.schema([kart_field(c, crs_definitions) for c in schema.columns], metadata=metadata)


# Where the WKB starts in GeoPackage binary, by envelope type (header 8 bytes + doubles).
_GPKG_WKB_OFFSET = {0: 8, 1: 40, 2: 56, 3: 56, 4: 72}


def _wkb(value: bytes) -> bytes:
    """Little-endian WKB of a geometry value: the tail of Kart's GeoPackage binary when its
    WKB is little-endian already (what Kart writes; as ``gpkg_to_wkb`` returns it, without
    parsing the header twice), else ``gpkg_to_wkb``; WKB given as such stays as it is."""
    if value[:3] == b"GP\x00":
        flags = value[3]
        offset = _GPKG_WKB_OFFSET.get((flags >> 1) & 7)
        if offset is not None and not flags & 0x20 and len(value) > offset and value[offset] == 1:
            return value[offset:]  # a slice of bytes (or of a bytes subclass) is bytes
        return gpkg_to_wkb(value)
    return bytes(value)


def _wkb_array(values: list) -> Any:
    """A geometry column of GeoPackage binaries as WKB in one Arrow slice, when every
    value has the same header (flags, envelope) and little-endian WKB, as Kart writes them;
    None otherwise (then :func:`_wkb` converts each value)."""
    if not set(map(type, values)) <= _BYTES_OR_NULL:
        return None
    pc = require("pyarrow.compute", "the Arrow export")
    array = pa.array(values, type=pa.large_binary())
    heads = [h for h in pc.unique(pc.binary_slice(array, 0, 4)).to_pylist() if h is not None]
    if len(heads) != 1 or len(heads[0]) != 4 or heads[0][:3] != b"GP\x00" or heads[0][3] & 0x20:
        return None
    offset = _GPKG_WKB_OFFSET.get((heads[0][3] >> 1) & 7)
    if offset is None:
        return None
    orders = [b for b in pc.unique(pc.binary_slice(array, offset, offset + 1)).to_pylist() if b is not None]
    if orders != [b"\x01"]:
        return None
    longest = pc.max(pc.binary_length(array)).as_py() or offset
    return pc.binary_slice(array, offset, longest)  # an explicit stop: without one pyarrow 26 fails on long arrays


_BYTES_OR_NULL = frozenset({bytes, type(None)})


# Python types a column's values may have to go to pa.array unconverted.
_READY: dict[str, tuple[type, ...]] = {
    "boolean": (bool,), "integer": (int,), "float": (float, int), "text": (str,), "blob": (bytes,),
    "date": (_dt.date,), "timestamp": (_dt.datetime,), "numeric": (Decimal,),
}


def _converter(column: Any) -> Callable[[Any], Any] | None:
    """A function making one Python value (or stored value) ready for ``pa.array``, or None
    when values go in as they are."""
    kind = column.data_type

    def decoded(value: Any) -> Any:
        return decode_value(column, value) if type(value) is str else value

    if kind in ("boolean", "integer", "float", "text", "blob"):
        return None
    if kind == "geometry":
        return _wkb
    if kind == "interval":
        return str
    if kind == "json":
        return lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False)
    if kind == "numeric":
        if pa.types.is_string(kart_arrow_type(column)):
            return lambda v: v if type(v) is str else format(v, "f")
        return lambda v: Decimal(v) if type(v) is str else v
    if kind == "time":
        def time_value(value: Any) -> Any:
            value = decoded(value)
            return value.replace(tzinfo=None) if value.tzinfo is not None else value
        return time_value
    if kind in ("date", "timestamp"):
        return decoded
    raise ExportError(f"column {column.name!r}: unknown Kart dataType {kind!r}")


def column_plan(schema: Any, arrow_schema: Any) -> list[tuple[Any, Any, Any]]:
    """Per Arrow field: the field, its value converter (None: values go in as they are)
    and the Python types that need no conversion."""
    plan = []
    for field in arrow_schema:
        column = schema.by_name(field.name)
        ready = _READY.get(column.data_type) if not pa.types.is_string(field.type) else None
        plan.append((field, _converter(column), frozenset(ready or ()) | {type(None)}))
    return plan


def _column_array(field: Any, convert: Any, ready: frozenset, values: list, table: str) -> Any:
    """One column of stored (or Python) values as an Arrow array of the field's type: a
    text column of dates or decimals cast by Arrow at once, other values converted only
    when some are not of a type Arrow takes as it is."""
    cast = _cast_text(values, field)
    if cast is not None:
        return cast
    if convert is _wkb:
        sliced = _wkb_array(values)
        if sliced is not None:
            return sliced
    if convert is not None and not set(map(type, values)) <= ready:
        try:
            values = [None if v is None else convert(v) for v in values]
        except Exception as exc:
            raise ExportError(f"table {table!r}, column {field.name!r}: {exc}") from None
    return _array(values, field, table)


def column_batch(plan: Sequence[tuple[Any, Any, Any]], columns: Sequence[list], arrow_schema: Any,
                 table: str = "table", prefix: Sequence[Any] = ()) -> Any:
    """One record batch from value lists in schema order (``prefix``: ready arrays of
    leading fields, e.g. the kind of change)."""
    arrays = list(prefix) + [_column_array(field, convert, ready, values, table)
                             for (field, convert, ready), values in zip(plan, columns)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


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


def table_batches(table: Any, batch_size: int = BATCH_SIZE, *, arrow_schema: Any = None) -> Iterator[Any]:
    """Record batches of a table (``repo.at(ref).table(name)`` or a writer), read a column
    at a time (:func:`fstore.tables.frames.stored_column_chunks`): no dict per row."""
    from ..tables.frames import stored_column_chunks

    schema = table.schema
    if arrow_schema is None:
        arrow_schema = table_arrow_schema(schema, table_crs(table), name=getattr(table, "name", None))
    plan = column_plan(schema, arrow_schema)
    for columns in stored_column_chunks(table, batch_size, geometry_bytes=True):
        with paused_gc():
            batch = column_batch(plan, columns, arrow_schema, getattr(table, "name", "table"))
        yield batch


def table_crs(table: Any) -> dict[str, str]:
    """The CRS definitions stored with a table (``{}`` when it has none)."""
    state = getattr(table, "state", None)
    return dict(state.crs()) if state is not None and hasattr(state, "crs") else {}


def _cast_text(values: list, field: Any) -> Any:
    """A date or decimal column whose values are all Kart's stored text (``2020-01-02``,
    ``16.66``), cast by Arrow in one step; None for any other column, or when the cast
    fails (then each value goes through its converter, which names a bad one)."""
    kind = field.type
    if not (pa.types.is_date32(kind) or pa.types.is_decimal(kind)):
        return None
    if not set(map(type, values)) <= _TEXT_OR_NULL:
        return None
    try:
        return pa.array(values, type=pa.string()).cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


_TEXT_OR_NULL = frozenset({str, type(None)})


def _array(values: Sequence[Any], field: Any, table: str) -> Any:
    """``pa.array`` with an error that names the table, column and offending value."""
    try:
        return pa.array(values, type=field.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as exc:
        for value in values:
            try:
                pa.array([value], type=field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as one:
                raise ExportError(
                    f"table {table!r}, column {field.name!r}: value {value!r:.80} does not fit {field.type} ({one})"
                ) from None
        raise ExportError(f"table {table!r}, column {field.name!r}: {exc}") from None
