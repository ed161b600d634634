"""Feature blobs: one table row as Kart stores it, and reading it back through any schema.

A feature blob is ``msgpack([legend_name, [non-pk values in legend order]])``; the
primary-key values live only in the feature's path. Reading one takes three steps:
:func:`decode_feature` splits the blob, :func:`raw_feature` zips the values with the
column ids of the legend it names (values by column id), and
:meth:`Schema.adapt <fstore.tables.schema.Schema.adapt>` lays them out as a row of the
current schema (dropped columns vanish, new columns read as ``None``).
:func:`to_python_row` / :func:`from_python_row` convert between stored values and Python
values with :mod:`fstore.tables.types`.

>>> from fstore.tables.schema import Schema
>>> s = Schema.from_json('[{"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},'
...                      ' {"id": "v", "name": "name", "dataType": "text"}]')
>>> pk, blob = encode_row(s, {"fid": 7, "name": "Ōtaki"})
>>> pk, decode_feature(blob) == (s.legend.name, ["Ōtaki"])
((7,), True)
>>> read_row(blob, pk, {s.legend.name: s.legend}, s)
{'fid': 7, 'name': 'Ōtaki'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

from .errors import FeatureError, LegendError
from .packing import pack, unpack
from .schema import Legend, Schema
from .types import decode_value, encode_value, validate_stored

__all__ = [
    "LegendSource",
    "encode_feature",
    "decode_feature",
    "raw_feature",
    "read_row",
    "encode_raw",
    "encode_row",
    "to_python_row",
    "from_python_row",
]

LegendSource = Union[Mapping[str, Legend], Callable[[str], Legend]]
"""Where to find legends by name: a mapping, or a function raising ``KeyError``."""


def encode_feature(legend_name: str, non_pk_values: Sequence[Any]) -> bytes:
    """The feature blob ``msgpack([legend_name, [values]])``; values must already be
    stored values (see :func:`fstore.tables.types.encode_value`)."""
    try:
        return pack([legend_name, list(non_pk_values)])
    except (TypeError, UnicodeEncodeError) as e:  # a lone surrogate is no UTF-8 text
        raise FeatureError(f"values cannot be stored ({e})") from None


def decode_feature(blob: bytes | memoryview, *, path: str | None = None) -> tuple[str, list[Any]]:
    """Split a feature blob into ``(legend_name, non_pk_values)``."""
    value = unpack(blob, where=path)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], list)
    ):
        raise FeatureError(f"expected [legend_name, [values]], got {value!r:.200}", path=path)
    return value[0], value[1]


def _legend(legends: LegendSource, name: str, path: str | None) -> Legend:
    try:
        return legends[name] if isinstance(legends, Mapping) else legends(name)
    except KeyError:
        raise FeatureError(f"names legend {name!r}, which the dataset does not have", path=path) from None


def raw_feature(
    blob: bytes | memoryview,
    pk_values: Sequence[Any],
    legends: LegendSource,
    *,
    path: str | None = None,
) -> dict[str, Any]:
    """The feature's stored values keyed by column id, through the legend it names."""
    name, values = decode_feature(blob, path=path)
    legend = _legend(legends, name, path)
    try:
        return legend.raw_dict(list(pk_values), values)
    except LegendError as e:
        raise FeatureError(str(e), path=path) from None


def read_row(
    blob: bytes | memoryview,
    pk_values: Sequence[Any],
    legends: LegendSource,
    schema: Schema,
    *,
    path: str | None = None,
) -> dict[str, Any]:
    """The feature as a row of ``schema`` (stored values by column name)."""
    return schema.adapt(raw_feature(blob, pk_values, legends, path=path))


def encode_raw(legend: Legend, raw: Mapping[str, Any]) -> tuple[tuple[Any, ...], bytes]:
    """``(pk_values, blob)`` for stored values keyed by column id; ids the legend lacks are
    ignored, ids it has but ``raw`` lacks are stored as ``None``."""
    pk_values, non_pk_values = legend.split(raw)
    return pk_values, encode_feature(legend.name, non_pk_values)


def encode_row(schema: Schema, row: Mapping[str, Any], *, validate: bool = True) -> tuple[tuple[Any, ...], bytes]:
    """``(pk_values, blob)`` for a row of stored values keyed by column name, written with
    the schema's legend. With ``validate``, each value is checked against its column and
    primary-key values may not be ``None``."""
    raw = schema.to_raw(row)
    if validate:
        for col in schema.columns:
            validate_stored(col, raw[col.id])
        for col in schema.pk_columns:
            if raw[col.id] is None:
                raise FeatureError(f"primary key column {col.name!r} is null")
    return encode_raw(schema.legend, raw)


def to_python_row(schema: Schema, row: Mapping[str, Any]) -> dict[str, Any]:
    """Stored values (by column name) to Python values (date, Decimal, Interval…)."""
    return {c.name: decode_value(c, row.get(c.name)) for c in schema.columns}


def from_python_row(schema: Schema, row: Mapping[str, Any]) -> dict[str, Any]:
    """Python values (by column name) to stored values, each validated against its
    column (see :func:`fstore.tables.types.encode_value`). Missing columns are ``None``."""
    names = set(schema.column_names)
    unknown = [k for k in row if k not in names]
    if unknown:
        raise FeatureError(f"row has unknown column(s) {', '.join(map(repr, unknown))}")
    return {c.name: encode_value(c, row.get(c.name)) for c in schema.columns}
