"""pandas DataFrames (and Arrow tables) in and out of tables: the conversions, below the
store (pandas and pyarrow are imported only when used; :func:`.store.import_dataframe`
and ``TableWriter.write_pandas`` load a frame with them).

Column types follow the dtypes: ``int8/16/32/64`` (and pandas' nullable ``Int*``) are
integers of that size, ``float32/64`` floats, ``bool``/``boolean`` booleans,
``datetime64`` timestamps (UTC when tz-aware), ``string`` text; ``object`` columns are typed
from their values (str, bytes, Decimal, date, time, Geometry…). Missing values (``None``,
``NaN``, ``NaT``, ``pd.NA``) are NULL. The index is ignored: name the primary-key column(s).
:func:`to_dataframe` gives one column per schema column, with Python values (``object``
columns) for types pandas has no dtype for.

>>> import tempfile, fstore, pandas as pd
>>> from fstore.tables.store import import_dataframe
>>> repo = fstore.open(tempfile.mkdtemp())
>>> df = pd.DataFrame({"code": ["NZ-AUK", "NZ-WGN"], "name": ["Auckland", "Wellington"], "pop": [1.7e6, None]})
>>> with repo.transaction("main", message="import") as tx:
...     import_dataframe(tx, "regions", df, pk="code")
{'inserted': 2, 'updated': 0, 'deleted': 0, 'unchanged': 0}
>>> out = to_dataframe(repo.at("main").table("regions")).sort_values("code")
>>> out["name"].tolist(), out["pop"].isna().tolist()
(['Auckland', 'Wellington'], [False, True])
>>> repo.close()
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from nstore.bulk import gc_paused

from ..errors import ExportError, MissingDependencyError
from .ingest import ColumnSpec, infer_value_type
from .types import STORED_AS_PYTHON, decode_value

if TYPE_CHECKING:
    import pandas
    import pyarrow

    from .schema import Schema

__all__ = ["dataframe_columns", "dataframe_rows", "integers_held_as_floats", "arrow_frame", "to_dataframe",
           "stored_columns", "stored_column_chunks", "table_feature_chunks", "feature_chunks"]


def _spec(name: str, series: Any) -> ColumnSpec:
    import pandas as pd

    dtype = series.dtype
    kind = getattr(dtype, "kind", "O")
    if pd.api.types.is_bool_dtype(dtype):
        return name, "boolean", {}
    if pd.api.types.is_integer_dtype(dtype):
        return name, "integer", {"size": 8 * dtype.itemsize}
    if pd.api.types.is_float_dtype(dtype):
        return name, "float", {"size": 32 if dtype.itemsize == 4 else 64}
    if pd.api.types.is_datetime64_any_dtype(dtype):
        aware = getattr(dtype, "tz", None) is not None
        return name, "timestamp", ({"timezone": "UTC"} if aware else {})
    if pd.api.types.is_string_dtype(dtype) and kind != "O":
        return name, "text", {}
    if pd.api.types.infer_dtype(series, skipna=True) == "string":  # all str (or missing): pandas' C loop
        return name, "text", {}
    return (name, *infer_value_type(series.tolist()))


def dataframe_columns(df: pandas.DataFrame) -> list[ColumnSpec]:
    """The Kart column specs of a DataFrame's columns."""
    return [_spec(str(name), df[name]) for name in df.columns]


def _python(value: Any) -> Any:
    import pandas as pd

    if value is None:
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):
        return value.item()  # numpy scalars
    return value


def dataframe_rows(df: pandas.DataFrame) -> Iterator[dict[str, Any]]:
    """A DataFrame's rows as dicts of Python values by column name (missing values None),
    made a column at a time."""
    names = [str(c) for c in df.columns]
    columns = [_column_values(df.iloc[:, i]) for i in range(len(names))]
    for values in zip(*columns):
        yield dict(zip(names, values))


def _column_values(series: Any) -> list[Any]:
    """:func:`_python` of each value of a column: numpy integers and booleans are Python
    ones already in ``tolist()`` (pandas' C loop), floats need only NaN made None."""
    import numpy as np

    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return series.tolist()
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return [None if value != value else value for value in series.tolist()]
    return [_python(value) for value in series]


def integers_held_as_floats(schema: Schema | None, df: pandas.DataFrame) -> pandas.DataFrame:
    """``df`` with each float column bound for an integer column of ``schema`` (the
    existing table's; None: a new table, ``df`` as it is), whose values
    are all whole numbers or missing, made ``Int64``: pandas turns an integer column with
    a missing value into floats (NaN), and a null key should be reported as null, not
    ``2.0`` as "not an int". Other values stay, and are reported as they are."""
    import pandas as pd

    if schema is None:
        return df
    out = df
    for label in df.columns:
        col = schema.by_name(str(label)) if str(label) in schema.column_names else None
        series = df[label]
        if col is None or col.data_type != "integer" or not pd.api.types.is_float_dtype(series.dtype):
            continue
        present = series.dropna()
        whole = bool((present == present.round()).all() and (present.abs() < 2**53).all())
        if whole:
            out = df.copy() if out is df else out
            out[label] = series.astype("Int64")
    return out


def arrow_frame(table: pyarrow.Table, *, as_read: bool = False) -> pandas.DataFrame:
    """An Arrow table as a DataFrame whose integer and boolean columns take pandas'
    nullable dtypes, so a null stays a null and an integer column stays integer, and dates
    are ``datetime.date`` objects; with ``as_read``, texts take pandas' ``string``, as
    :func:`to_dataframe` gives a table read."""
    import pandas as pd
    import pyarrow as pa

    mapping = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
               pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    if as_read:
        mapping.update({pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()})
    return table.to_pandas(types_mapper=mapping.get)  # dates as datetime.date objects: the default


def to_dataframe(table: Any) -> pandas.DataFrame:
    """The table's rows as a DataFrame in primary-key order (one column per schema column,
    in schema order); integer columns become nullable ``Int64``, floats ``float64``,
    booleans ``boolean``, texts ``string``, timestamps ``datetime64``; other types hold
    their Python values."""
    import pandas as pd

    columns = table.schema.columns
    if {col.data_type for col in columns} <= _EXACT_IN_ARROW:
        arrow = _arrow_read(table)
        if arrow is not None:
            return arrow_frame(arrow, as_read=True)
    stored = stored_columns(table)
    # Each column made with its dtype at once: through a float column first, a null beside
    # an integer past 2**53 would round it.
    df = pd.DataFrame({col.name: _column_array(pd, col, values) for col, values in zip(columns, stored)},
                      columns=[c.name for c in columns])
    # Storage order follows the order values entered the store, which differs between
    # stores holding the same rows: key order makes equal tables equal frames.
    keys = [c.name for c in table.schema.pk_columns]
    return df.sort_values(keys, kind="stable", ignore_index=True) if keys and len(df) > 1 else df


# The column types whose Arrow array (Table.to_arrow, read in C) converts to the pandas
# column to_dataframe makes of the stored values, value for value: the others (numeric as
# Decimal, times, intervals, blobs, geometries, json) are made from the stored values.
_EXACT_IN_ARROW = frozenset({"integer", "float", "boolean", "text", "date"})


def _arrow_read(table: Any) -> pyarrow.Table | None:
    """The table read as Arrow, or None where pyarrow is not installed or a value does
    not fit its Arrow type (the stored values then make the frame, as they always can)."""
    try:
        return table.to_arrow()
    except (MissingDependencyError, ExportError):
        return None


def stored_columns(table: Any) -> list[list[Any]]:
    """Every row's stored values of ``table`` (a :class:`~.dataset.Table` or a writer),
    one list per schema column in schema order: the columnar read behind
    :func:`to_dataframe`."""
    found: list[list[Any]] | None = None
    for columns in stored_column_chunks(table, sys.maxsize):  # one, or a few: the rows read by key, then the rest
        if found is None:
            found = columns
        else:
            for column, more in zip(found, columns):
                column.extend(more)
    return found if found is not None else [[] for _ in table.schema.columns]


def stored_column_chunks(table: Any, size: int, *, geometry_bytes: bool = False) -> Iterator[list[list[Any]]]:
    """The columnar read in chunks of at most ``size`` rows (each a list per schema
    column of stored values; ``geometry_bytes``: geometries as their GeoPackage bytes),
    for a reader that streams, such as the Parquet export."""
    read = table.reader.stored_columns
    chunks = table_feature_chunks(table, size)
    while True:
        with gc_paused():  # a million lists that form no cycle: collections would walk them all
            chunk = next(chunks, None)
            if chunk is None:
                return
            columns = read(*chunk, geometry_bytes=geometry_bytes)
        yield columns


def _column_array(pd: Any, col: Any, stored: list[Any]) -> Any:
    """One column of stored values as a pandas array of the column's dtype."""
    dtype = _dtype(col)
    if dtype is None:
        if col.data_type not in STORED_AS_PYTHON:
            stored = [None if v is None else decode_value(col, v) for v in stored]
        return pd.Series(stored, dtype="object")
    if dtype.startswith("datetime64"):
        values = [None if v is None else decode_value(col, v) for v in stored]
        return pd.Series(values, dtype=dtype)  # straight to microseconds: nanoseconds end in 2262
    return pd.array(stored, dtype=dtype)


def _dtype(col: Any) -> str | None:
    """The pandas dtype of a schema column (None: Python objects)."""
    kind, size = col.data_type, col.extra_type_info.get("size")
    if kind == "integer":
        return {8: "Int8", 16: "Int16", 32: "Int32"}.get(size, "Int64")
    if kind == "float":
        return "float32" if size == 32 else "float64"
    if kind == "boolean":
        return "boolean"
    if kind == "text":
        return "string"
    if kind == "timestamp":
        return "datetime64[us, UTC]" if col.extra_type_info.get("timezone") else "datetime64[us]"
    return None


def table_feature_chunks(table: Any, size: int) -> Iterator[tuple[list[str], list[bytes]]]:
    """A table's features (a :class:`~.dataset.Table` or a writer) ``size`` at a time, as
    ``(paths, blobs)``: read in bulk at a commit, chunked here for a writer."""
    chunked = getattr(table, "feature_chunks", None)  # a writer has none: its features chunked here
    return chunked(size) if chunked is not None else feature_chunks(table.features(), size)


def feature_chunks(features: Iterable[tuple[str, bytes]], size: int) -> Iterator[tuple[list[str], list[bytes]]]:
    """``(path, blob)`` pairs ``size`` at a time, as ``(paths, blobs)``."""
    iterator = iter(features)
    while True:
        chunk = list(islice(iterator, size))
        if not chunk:
            return
        yield [path for path, _ in chunk], [blob for _, blob in chunk]
