"""A Kart table in Arrow terms: each column's Arrow type and field, the table's schema.

The one mapping of Kart types to Arrow types, used by ``Table.to_arrow`` and by the Parquet
/ Spark export (``fstore.export``, which imports it from here):

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
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..errors import ExportError, require
from .types import DECIMAL_PRECISION, DECIMAL_SCALE

pa = require("pyarrow", "the Arrow form of a table")

__all__ = ["kart_arrow_type", "field_metadata", "kart_field", "table_arrow_schema", "table_crs"]


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


def table_crs(table: Any) -> dict[str, str]:
    """The CRS definitions stored with a table (``{}`` when it has none)."""
    state = getattr(table, "state", None)
    return dict(state.crs()) if state is not None and hasattr(state, "crs") else {}
