"""Record batches of a table built from its feature blobs in compiled code
(:mod:`._columns`): the values of integer, float, boolean and text columns (and dates and
decimals, which Kart stores as text) go from the blobs into Arrow buffers with no Python
object per cell. A chunk it does not take — features of several legends, a value of
another type than its column's, a column of another kind (geometry, blob, json, time,
timestamp, interval), a value Arrow would refuse — is read the reference way
(:func:`.arrow_batches.column_batch` over ``RowReader.stored_columns``), which then also
names any bad value. The two give equal batches (``tests/fstore/test_tables_columnar.py``).

>>> import fstore, fstore.tables as tables, tempfile
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
...                                 {"id": "v", "name": "v", "dataType": "text"}])
...     _ = t.insert_many([{"k": 1, "v": "one"}, {"k": 2, "v": None}])
>>> from fstore.tables.arrow_batches import table_batches
>>> table = repo.at("main").table("t")
>>> [batch.to_pylist() for batch in table_batches(table)] == [columnar_batch(table.reader, batch.schema,
...     *next(table.feature_chunks(10))).to_pylist() for batch in table_batches(table)]
True
>>> [batch.to_pylist() for batch in table_batches(table)]
[[{'k': 1, 'v': 'one'}, {'k': 2, 'v': None}]]
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import require
from . import _columns
from .errors import FeatureError, LegendError
from .packing import unpack

pa = require("pyarrow", "the Arrow form of a table")

__all__ = ["columnar_batch"]


def _kind(field_type: Any) -> int | None:
    """The compiled decoder's kind for an Arrow field type (None: not one it takes)."""
    if pa.types.is_boolean(field_type):
        return _columns.BOOL
    if pa.types.is_integer(field_type):
        return _columns.INT
    if pa.types.is_floating(field_type):
        return _columns.FLOAT
    if pa.types.is_string(field_type) or pa.types.is_large_string(field_type) \
            or pa.types.is_date32(field_type) or pa.types.is_decimal(field_type):
        return _columns.TEXT  # dates and decimals as Kart stores them, cast by Arrow after
    return None


def columnar_batch(reader: Any, arrow_schema: Any, paths: Sequence[str], blobs: list[bytes]) -> Any:
    """The record batch of these features (one chunk of a table read by ``reader``, a
    :class:`~.dataset.RowReader`), or None when the compiled path does not take them."""
    if not blobs:
        return None
    try:
        legend, layout = reader.plan(unpack(blobs[0])[0])
    except (FeatureError, LegendError, IndexError, KeyError, TypeError):  # the reference path names it
        return None
    positions = dict(layout)  # column name -> position in pk values + legend values (None: absent)
    pk_count = len(legend.pk_columns)
    value_count = len(legend.column_ids) - pk_count
    kinds = [_columns.SKIP] * value_count
    for field in arrow_schema:
        at = positions.get(field.name)
        if at is not None and at >= pk_count:
            kind = _kind(field.type)
            if kind is None:
                return None
            kinds[at - pk_count] = kind
    decoded = _columns.decode_values(blobs, kinds)
    if decoded is None:
        return None
    n = len(blobs)
    text_key = _text_key(paths, pk_count, arrow_schema, positions)
    pks = None if text_key is not None or not pk_count else reader.bulk_pks(paths)
    if text_key is None and pk_count and (pks is None or set(map(type, pks)) != {list} or set(map(len, pks)) != {pk_count}):
        return None
    arrays = []
    try:
        for field in arrow_schema:
            at = positions.get(field.name)
            if at is None:
                arrays.append(pa.nulls(n, type=field.type))
            elif text_key is not None and at == 0:
                arrays.append(_array(field.type, _columns.TEXT, text_key, n))
            elif at < pk_count:
                arrays.append(pa.array([pk[at] for pk in pks], type=field.type))  # type: ignore[union-attr]
            else:
                arrays.append(_array(field.type, kinds[at - pk_count], decoded[at - pk_count], n))
    except (pa.ArrowException, OverflowError):  # a value out of its field's range or type
        return None  # read this chunk the reference way, which names the value
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


def _text_key(paths: Any, pk_count: int, arrow_schema: Any, positions: dict) -> tuple | None:
    """The key column's Arrow buffers straight from the rows' packed keys
    (:func:`._columns.text_keys`), for a table keyed by one text column read by key; None
    otherwise (the keys are then decoded into values)."""
    keys = getattr(paths, "keys", None)
    if pk_count != 1 or type(keys) is not list:
        return None
    field = next((f for f in arrow_schema if positions.get(f.name) == 0), None)
    if field is None or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
        return None
    return _columns.text_keys(keys)


def _array(field_type: Any, kind: int, buffers: tuple, n: int) -> Any:
    """One column's Arrow array from the decoder's buffers, cast to the field's type
    (safely: an integer out of the field's range, a date that is not one, raise)."""
    validity = pa.py_buffer(buffers[0])
    if kind == _columns.TEXT:
        array = pa.Array.from_buffers(pa.large_string(), n, [validity, pa.py_buffer(buffers[1]), pa.py_buffer(buffers[2])])
        array.validate(full=True)  # the text is UTF-8, as a msgpack str must be
    else:
        base = {_columns.INT: pa.int64(), _columns.FLOAT: pa.float64(), _columns.BOOL: pa.bool_()}[kind]
        array = pa.Array.from_buffers(base, n, [validity, pa.py_buffer(buffers[1])])
    return array if array.type == field_type else array.cast(field_type)
