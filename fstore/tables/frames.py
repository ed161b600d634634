"""pandas DataFrames in and out of tables (pandas is imported only when used).

Column types follow the dtypes: ``int8/16/32/64`` (and pandas' nullable ``Int*``) are
integers of that size, ``float32/64`` floats, ``bool``/``boolean`` booleans,
``datetime64`` timestamps (UTC when tz-aware), ``string`` text; ``object`` columns are typed
from their values (str, bytes, Decimal, date, time, Geometry…). Missing values (``None``,
``NaN``, ``NaT``, ``pd.NA``) are NULL. The index is ignored: name the primary-key column(s).
:func:`to_dataframe` gives one column per schema column, with Python values (``object``
columns) for types pandas has no dtype for.

>>> import tempfile, fstore, pandas as pd
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

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .ingest import ColumnSpec, infer_value_type, load_table

if TYPE_CHECKING:
    import pandas

    from ..transaction import Transaction

__all__ = ["dataframe_columns", "import_dataframe", "to_dataframe"]


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


def _rows(df: pandas.DataFrame, names: list[str]) -> Iterator[dict[str, Any]]:
    for values in df.itertuples(index=False, name=None):
        yield {name: _python(v) for name, v in zip(names, values)}


def import_dataframe(tx: Transaction, name: str, df: pandas.DataFrame, *, pk: str | Sequence[str] | None = None,
                     schema: Any = None, replace: bool = False, title: str | None = None,
                     description: str | None = None) -> dict[str, int]:
    """Load a DataFrame into table ``name`` (created with primary key ``pk``, or evolved
    to the frame's columns); like :func:`~.ingest.load_table`: all or nothing."""
    names = [str(c) for c in df.columns]
    pk_list = [pk] if isinstance(pk, str) else list(pk or [])
    return load_table(tx, name, dataframe_columns(df), _rows(df, names), pk=pk_list, replace=replace, schema=schema,
                      where=lambda i: f"DataFrame row {i}", title=title, description=description)


def to_dataframe(table: Any, *, python: bool = True) -> pandas.DataFrame:
    """The table's rows as a DataFrame (one column per schema column, in schema order);
    integer columns become nullable ``Int64``, floats ``float64``, booleans ``boolean``."""
    import pandas as pd

    columns = table.schema.columns
    names = [c.name for c in columns]
    data: dict[str, list[Any]] = {n: [] for n in names}
    for row in table.rows(python=python):
        for n in names:
            data[n].append(row[n])
    frame = pd.DataFrame(data, columns=names)
    for col in columns:
        if col.data_type == "integer":
            frame[col.name] = frame[col.name].astype("Int64")
        elif col.data_type == "float":
            frame[col.name] = frame[col.name].astype("float64")
        elif col.data_type == "boolean":
            frame[col.name] = frame[col.name].astype("boolean")
    return frame
