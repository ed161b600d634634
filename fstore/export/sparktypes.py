"""Arrow (and so Kart) types as Spark SQL types, in Spark's JSON form — no pyspark needed.

``pyspark.sql.types.StructType.fromJson(spark_schema_json(arrow_schema))`` gives the
DataFrame schema; field metadata (a Kart column's definition, a geometry's CRS) is carried
over as Spark column metadata.

>>> from fstore.tables import Column
>>> [kart_spark_type(Column.create("n", "integer", size=s)) for s in (8, 16, 32, 64)]
['byte', 'short', 'integer', 'long']
>>> kart_spark_type(Column.create("p", "numeric", precision=10, scale=5))
'decimal(10,5)'
>>> kart_spark_type(Column.create("t", "timestamp", timezone="UTC")), kart_spark_type(Column.create("t", "timestamp"))
('timestamp', 'timestamp_ntz')
"""

from __future__ import annotations

from typing import Any

from .errors import ExportError, require

pa = require("pyarrow", "the Spark type mapping")

__all__ = ["spark_type", "spark_field", "spark_schema_json", "kart_spark_type", "kart_spark_field"]


def spark_type(arrow_type: Any) -> str:
    """Spark's JSON name of the type a Parquet column of ``arrow_type`` reads as."""
    t = pa.types
    if t.is_boolean(arrow_type):
        return "boolean"
    if t.is_int8(arrow_type):
        return "byte"
    if t.is_int16(arrow_type):
        return "short"
    if t.is_int32(arrow_type):
        return "integer"
    if t.is_int64(arrow_type):
        return "long"
    if t.is_float32(arrow_type):
        return "float"
    if t.is_float64(arrow_type):
        return "double"
    if t.is_decimal(arrow_type):
        if arrow_type.precision > 38:
            raise ExportError(f"Spark decimals hold at most 38 digits, not {arrow_type}")
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return "string"
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return "binary"
    if t.is_date32(arrow_type):
        return "date"
    if t.is_time64(arrow_type):
        return "time(6)"
    if t.is_timestamp(arrow_type):
        return "timestamp" if arrow_type.tz is not None else "timestamp_ntz"
    if t.is_dictionary(arrow_type):
        return spark_type(arrow_type.value_type)
    raise ExportError(f"no Spark type for Arrow type {arrow_type}")


def spark_field(field: Any) -> dict[str, Any]:
    """Spark's JSON form of one Arrow field (metadata kept as strings)."""
    metadata = {k.decode("utf-8"): v.decode("utf-8") for k, v in (field.metadata or {}).items()}
    return {"name": field.name, "type": spark_type(field.type), "nullable": field.nullable, "metadata": metadata}


def spark_schema_json(schema: Any) -> dict[str, Any]:
    """Spark's JSON form of an Arrow schema (``StructType.fromJson`` reads it)."""
    return {"type": "struct", "fields": [spark_field(f) for f in schema]}


def kart_spark_type(column: Any) -> str:
    """The Spark type of a Kart column (see :mod:`fstore.tables.arrow_types`)."""
    from .arrow import kart_arrow_type

    return spark_type(kart_arrow_type(column))


def kart_spark_field(column: Any, crs_definitions: dict[str, str] | None = None) -> dict[str, Any]:
    """The Spark field (JSON form) of a Kart column, its definition in the metadata."""
    from .arrow import kart_field

    return spark_field(kart_field(column, crs_definitions))
