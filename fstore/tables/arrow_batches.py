"""A Kart table's values as Arrow record batches, typed by :mod:`.arrow_types`: stored
values read a column at a time and converted only where Arrow cannot take them as they are
(dates and decimals stored as text cast by Arrow at once, geometries as little-endian WKB
sliced out of GeoPackage binary). ``Table.to_arrow`` and the Parquet / Spark export
(``fstore.export``) both build their batches here.

>>> from decimal import Decimal
>>> from fstore.tables import Schema
>>> s = Schema.from_dicts([{"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 16},
...                        {"id": "b", "name": "price", "dataType": "numeric", "precision": 6, "scale": 2}])
>>> arrow_schema = table_arrow_schema(s)
>>> column_batch(column_plan(s, arrow_schema), [[1, 2], ["1.50", Decimal(2)]], arrow_schema).to_pylist()
[{'fid': 1, 'price': Decimal('1.50')}, {'fid': 2, 'price': Decimal('2.00')}]
"""

from __future__ import annotations

import datetime as _dt
import json
from decimal import Decimal
from typing import Any, Callable, Iterator, Sequence

from nstore.collector import paused_gc

from ..errors import ExportError, require
from .arrow_types import kart_arrow_type, table_arrow_schema, table_crs
from .columnar import columnar_batch
from .frames import table_feature_chunks
from .geometry import gpkg_to_wkb
from .types import decode_value

pa = require("pyarrow", "the Arrow form of a table")

__all__ = ["BATCH_SIZE", "COLUMNAR", "column_plan", "column_batch", "table_batches", "typed_array", "to_arrow"]

BATCH_SIZE = 65_536
"""Rows in a record batch: enough to amortise the per-batch cost, one batch held at a time."""
COLUMNAR = True
"""Whether chunks go through the compiled decoder first (:mod:`.columnar`); False reads
every chunk the reference way (what the differential tests compare it with)."""


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
    pc = require("pyarrow.compute", "the Arrow form of a table")
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
    return typed_array(values, field, table)


def column_batch(plan: Sequence[tuple[Any, Any, Any]], columns: Sequence[list], arrow_schema: Any,
                 table: str = "table", prefix: Sequence[Any] = ()) -> Any:
    """One record batch from value lists in schema order (``prefix``: ready arrays of
    leading fields, e.g. the kind of change)."""
    arrays = list(prefix) + [_column_array(field, convert, ready, values, table)
                             for (field, convert, ready), values in zip(plan, columns)]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def table_batches(table: Any, batch_size: int = BATCH_SIZE, *, arrow_schema: Any = None) -> Iterator[Any]:
    """Record batches of a table (``repo.at(ref).table(name)`` or a writer): each chunk of
    features decoded into Arrow buffers in compiled code (:mod:`.columnar`), or, for a
    chunk that path does not take, read a column at a time
    (``RowReader.stored_columns``): no dict per row either way."""
    schema = table.schema
    if arrow_schema is None:
        arrow_schema = table_arrow_schema(schema, table_crs(table), name=getattr(table, "name", None))
    plan = column_plan(schema, arrow_schema)
    reader, name = table.reader, getattr(table, "name", "table")
    for paths, blobs in table_feature_chunks(table, batch_size):
        with paused_gc():
            batch = columnar_batch(reader, arrow_schema, paths, blobs) if COLUMNAR else None
            if batch is None:
                batch = column_batch(plan, reader.stored_columns(paths, blobs, geometry_bytes=True), arrow_schema, name)
        yield batch


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


def typed_array(values: Sequence[Any], field: Any, table: str) -> Any:
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


def to_arrow(table: Any) -> pa.Table:
    """The table's rows as an Arrow table in primary-key order, typed from the schema as
    the Parquet export writes them (:mod:`.arrow_types`, :func:`table_batches`:
    ``large_string`` text, ``decimal128`` numerics, WKB geometries, the Kart column in each
    field's metadata)."""
    schema = table_arrow_schema(table.schema, table_crs(table), name=getattr(table, "name", None))
    result = pa.Table.from_batches(list(table_batches(table, arrow_schema=schema)), schema=schema)
    keys = [(c.name, "ascending") for c in table.schema.pk_columns]
    if not keys or result.num_rows < 2 or _ascending(result, keys):
        return result
    return result.sort_by(keys)  # as to_dataframe


def _ascending(result: pa.Table, keys: list[tuple[str, str]]) -> bool:
    """Whether a table is in the order of its one key column already (a table read at a
    snapshot comes in key order): then sorting it would only copy it."""
    if len(keys) != 1:
        return False
    column = result.column(keys[0][0])
    if column.null_count:
        return False
    pc = require("pyarrow.compute", "the Arrow form of a table")
    try:
        return bool(pc.all(pc.less(column.slice(0, len(column) - 1), column.slice(1))).as_py())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return False  # a key type pc.less does not take: sort_by orders it (or names why not)
