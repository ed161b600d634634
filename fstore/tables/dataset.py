"""Reading a dataset back from its quads: meta items, schema, legends, and rows.

:func:`load_dataset` gathers a dataset's meta quads (see :mod:`.mapping`) into a
:class:`DatasetState`; :class:`RowReader` turns feature blobs into rows of the *current*
schema by column id (values of dropped columns vanish, new columns read as ``None``);
:class:`Table` is what ``view.table(name)`` returns: ``schema``, ``get(pk)``, ``rows()``
(a generator) and ``len()``.

>>> import tempfile, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="add") as tx:
...     t = tables.create(tx, "towns", [
...         {"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
...         {"id": "n", "name": "name", "dataType": "text"}])
...     t.insert({"fid": 1, "name": "Ōtaki"})
>>> view_table = repo.at("main").table("towns")
>>> view_table.get(1), len(view_table), list(view_table.rows())
({'fid': 1, 'name': 'Ōtaki'}, 1, [{'fid': 1, 'name': 'Ōtaki'}])
>>> repo.close()
"""

from __future__ import annotations

import binascii
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

from nstore import Var
from nstore.pack import pack as pack_key

from ..core.history import Quad
from .frames import feature_chunks, to_dataframe
from .errors import DatasetCorruptError, FeatureError, LegendError, PrimaryKeyError, SchemaError, TableNotFoundError
from .mapping import (
    ATTACHMENT,
    FEATURE,
    LEGEND_PREFIX,
    META,
    PATH_STRUCTURE_ITEM,
    SCHEMA_ITEM,
    dataset_graph,
    dataset_name,
    object_bytes,
)
from .packing import unpack, unpack_many
from .paths import LEGACY, PathStructure, decode_filename
from .schema import Legend, Schema
from .types import STORED_AS_PYTHON, decode_value, encode_value

__all__ = [
    "Source",
    "LegendLookup",
    "DatasetState",
    "RowReader",
    "Table",
    "load_dataset",
    "find_dataset",
    "list_datasets",
    "pk_tuple",
    "pk_of_path",
    "key_order",
    "in_key_order",
]

Source = Callable[[tuple], Iterator[Quad]]
"""A function yielding the quads alive at some state that match a pattern (values or
``Var``): ``view.table_tuples``, or a transaction's committed state."""

LegendLookup = Callable[[str], Legend]
"""Finds a legend by name anywhere (legends are content-addressed); raises ``KeyError``."""



class DatasetState:
    """A dataset's meta items (legends included) and attachments, parsed.

    ``meta`` maps each item path (``"schema.json"``, ``"legend/<name>"``…) to its stored
    object (``str`` or ``bytes``).
    """

    def __init__(self, name: str, meta: Mapping[str, Any], attachments: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.graph = dataset_graph(name)
        self.meta = dict(meta)
        self.attachments = dict(attachments or {})
        if SCHEMA_ITEM not in self.meta:
            raise TableNotFoundError(name)
        try:
            self.schema = Schema.from_json(object_bytes(self.meta[SCHEMA_ITEM]), strict=False)
        except SchemaError as e:
            raise DatasetCorruptError(name, f"meta/schema.json: {e}") from None
        ps = self.meta.get(PATH_STRUCTURE_ITEM)
        self.path_structure = LEGACY if ps is None else PathStructure.from_json(object_bytes(ps))
        self.legends: dict[str, Legend] = {}
        for item, value in self.meta.items():
            if item.startswith(LEGEND_PREFIX):
                legend_name = item[len(LEGEND_PREFIX):]
                try:
                    self.legends[legend_name] = Legend.loads(object_bytes(value), name=legend_name)
                except LegendError as e:
                    raise DatasetCorruptError(name, str(e)) from None

    @property
    def title(self) -> str | None:
        value = self.meta.get("title")
        return value if value is None or isinstance(value, str) else object_bytes(value).decode("utf-8", "replace")

    @property
    def description(self) -> str | None:
        value = self.meta.get("description")
        return value if value is None or isinstance(value, str) else object_bytes(value).decode("utf-8", "replace")

    def crs(self) -> dict[str, str]:
        """``{identifier: WKT}`` from the ``crs/<identifier>.wkt`` items."""
        return {
            item[len("crs/"):-len(".wkt")]: object_bytes(v).decode("utf-8")
            for item, v in self.meta.items()
            if item.startswith("crs/") and item.endswith(".wkt")
        }

    def __repr__(self) -> str:
        return f"<DatasetState {self.name!r} {self.schema!r}>"


def _single_objects(name: str, quads: Iterable[Quad]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for _, subject, _, obj in quads:
        if subject in found:
            raise DatasetCorruptError(name, f"item {subject!r} holds more than one value")
        found[subject] = obj
    return found


def find_dataset(source: Source, name: str) -> DatasetState | None:
    """The dataset's state, or None if the state holds no dataset of that name."""
    graph = dataset_graph(name)
    meta = _single_objects(name, source((graph, Var("s"), META, Var("o"))))
    if SCHEMA_ITEM not in meta:
        return None
    attachments = _single_objects(name, source((graph, Var("s"), ATTACHMENT, Var("o"))))
    return DatasetState(name, meta, attachments)


def load_dataset(source: Source, name: str, where: str = "") -> DatasetState:
    """The dataset's state; :class:`TableNotFoundError` if there is none."""
    state = find_dataset(source, name)
    if state is None:
        raise TableNotFoundError(name, where)
    return state


def list_datasets(source: Source) -> list[str]:
    """Names of every dataset in a state, sorted."""
    names = []
    for graph, _, _, _ in source((Var("g"), SCHEMA_ITEM, META, Var("o"))):
        name = dataset_name(graph)
        if name is not None:
            names.append(name)
    return sorted(names)


def pk_tuple(schema: Schema, pk: Any, table: str = "") -> tuple[Any, ...]:
    """A primary key as the tuple of stored values its path encodes: a scalar for a
    one-column key, or a tuple/list; Python values (dates…) are converted."""
    values = tuple(pk) if isinstance(pk, (tuple, list)) else (pk,)
    cols = schema.pk_columns
    if len(values) != len(cols):
        raise PrimaryKeyError(values, f"table {table!r} has {len(cols)} primary key column(s) "
                                      f"({', '.join(c.name for c in cols)})")
    out = []
    for col, value in zip(cols, values):
        if value is None:
            raise PrimaryKeyError(values, f"primary key column {col.name!r} cannot be null")
        out.append(encode_value(col, value))
    return tuple(out)


def pk_of_path(path: str) -> tuple[Any, ...]:
    """The primary-key values a feature path encodes (its file name)."""
    return tuple(decode_filename(path.rsplit("/", 1)[-1]))


def key_order(path: str) -> bytes:
    """The sort key that lists feature paths in primary-key order: the key's values packed
    order-preserving (integers numerically, text by code point, a compound key column by
    column; never a TypeError). Paths themselves sort by Kart's base64, not by key.

    >>> from fstore.tables.paths import LEGACY
    >>> sorted([LEGACY.encode_path((k,)) for k in (10, 2, -1)], key=key_order) == [
    ...     LEGACY.encode_path((k,)) for k in (-1, 2, 10)]
    True
    """
    return pack_key(*pk_of_path(path))


def in_key_order(features: Iterable[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """``(path, blob)`` pairs sorted by primary key (:func:`key_order`). It holds them all:
    storage order is not key order, and a listing for people or files is read in key order."""
    return sorted(features, key=lambda feature: key_order(feature[0]))


class RowReader:
    """Reads feature blobs as rows of one schema, through whichever legend each names.

    ``legends`` gives legends by name; ``fallback`` finds any other legend (e.g. one only
    an older commit lists). Per legend, the layout of the row is worked out once.
    """

    def __init__(self, schema: Schema, legends: Mapping[str, Legend], fallback: LegendLookup | None = None,
                 table: str = "") -> None:
        self.schema = schema
        self.legends = legends
        self.fallback = fallback
        self.table = table
        self._plans: dict[str, tuple[Legend, list[tuple[str, int | None]]]] = {}
        self._decoders = [
            (c.name, None if c.data_type in STORED_AS_PYTHON else c) for c in schema.columns
        ]

    def legend(self, name: str) -> Legend:
        legend = self.legends.get(name)
        if legend is None and self.fallback is not None:
            try:
                legend = self.fallback(name)
            except KeyError:
                legend = None
        if legend is None:
            raise DatasetCorruptError(self.table, f"a feature names legend {name!r}, which is nowhere in the store")
        return legend

    def plan(self, legend_name: str) -> tuple[Legend, list[tuple[str, int | None]]]:
        """The legend ``legend_name`` and, per schema column, the column's name and its
        position in the legend's values (the primary-key values first), or None (a column
        the legend does not have)."""
        plan = self._plans.get(legend_name)
        if plan is None:
            legend = self.legend(legend_name)
            index = {cid: i for i, cid in enumerate(legend.column_ids)}
            layout = [(c.name, index.get(c.id)) for c in self.schema.columns]
            plan = (legend, layout)
            self._plans[legend_name] = plan
        return plan

    def raw(self, path: str, blob: bytes, pk: Sequence[Any] | None = None) -> dict[str, Any]:
        """Stored values by column id, as the feature's legend lists them."""
        legend_name, values = _split(blob, path)
        legend = self.legend(legend_name)
        pk = pk_of_path(path) if pk is None else pk
        try:
            return legend.raw_dict(list(pk), values)
        except LegendError as e:
            raise FeatureError(str(e), path=path) from None

    def stored(self, path: str, blob: bytes, pk: Sequence[Any] | None = None) -> dict[str, Any]:
        """The row (stored values by column name, in schema order)."""
        return dict(zip(self.schema.column_names, self.stored_values(path, blob, pk)))

    def stored_values(self, path: str, blob: bytes, pk: Sequence[Any] | None = None) -> list[Any]:
        """The row's stored values in schema order (columns its legend lacks are None)."""
        legend_name, values = _split(blob, path)
        legend, layout = self.plan(legend_name)
        if len(values) != len(legend.non_pk_columns):
            raise FeatureError(f"legend {legend_name} has {len(legend.non_pk_columns)} non-pk column(s), "
                               f"the feature {len(values)} value(s)", path=path)
        full = list(pk_of_path(path) if pk is None else pk) + values
        return [None if i is None else full[i] for _, i in layout]

    def stored_columns(self, paths: Sequence[str], blobs: Sequence[bytes], *,
                       geometry_bytes: bool = False) -> list[list[Any]]:
        """The stored values of many features, one list per schema column: what
        :meth:`stored_values` gives row by row, decoded in bulk when the features name one
        legend (their keys from the file names, and their blobs, each in one msgpack call)
        and row by row otherwise. ``geometry_bytes``: geometries as GeoPackage bytes."""
        columns = self._bulk_columns(paths, blobs, geometry_bytes)
        if columns is not None:
            return columns
        rows = [self.stored_values(path, blob) for path, blob in zip(paths, blobs)]
        return [list(column) for column in zip(*rows)] if rows else [[] for _ in self.schema.columns]

    def bulk_pks(self, paths: Sequence[str]) -> list[Any] | None:
        """The primary-key values of many feature paths, from their file names in a few C
        calls (None if one is not a packed list: read them one by one); rows read by key
        (:class:`~fstore.core.rows.KeyedPaths`) give them without a path."""
        keyed = getattr(paths, "pks", None)
        if keyed is not None:
            return keyed()
        names = "\n".join(path[path.rfind("/") + 1:] for path in paths)
        try:
            # URL-safe base64 made standard for the whole chunk at once, then decoded by C
            # calls alone (a2b_base64 stops at the padding, so each name on its own)
            keys = b"".join(map(binascii.a2b_base64, names.translate(_URLSAFE).split("\n")))
        except (binascii.Error, ValueError):
            return None
        return unpack_many(keys, len(paths))

    def _bulk_columns(self, paths: Sequence[str], blobs: Sequence[bytes], geometry_bytes: bool) -> list[list[Any]] | None:
        if not paths:
            return None
        pks = self.bulk_pks(paths)
        decoded = unpack_many(b"".join(blobs), len(blobs), geometry_bytes=geometry_bytes)
        if pks is None or decoded is None:
            return None
        if set(map(type, decoded)) != {list} or set(map(len, decoded)) != {2}:
            return None
        legend_names = set(map(itemgetter(0), decoded))
        if len(legend_names) != 1 or type(next(iter(legend_names))) is not str:
            return None
        legend, layout = self.plan(next(iter(legend_names)))
        values = list(map(itemgetter(1), decoded))
        if set(map(type, values)) != {list} or set(map(len, values)) != {len(legend.non_pk_columns)} \
                or set(map(type, pks)) != {list} or set(map(len, pks)) != {len(legend.pk_columns)}:
            return None
        full = list(zip(*pks)) + list(zip(*values)) if values[0] else list(zip(*pks))
        empty = [None] * len(paths)
        return [empty.copy() if i is None else list(full[i]) for _, i in layout]

    def python(self, path: str, blob: bytes, pk: Sequence[Any] | None = None) -> dict[str, Any]:
        """The row with Python values (date, Decimal, Interval… see :mod:`.types`)."""
        row = self.stored(path, blob, pk)
        for name, col in self._decoders:
            if col is not None:
                value = row[name]
                if value is not None:
                    row[name] = decode_value(col, value)
        return row

    def row(self, path: str, blob: bytes, pk: Sequence[Any] | None = None, *, python: bool = True) -> dict[str, Any]:
        """:meth:`python` or :meth:`stored`, as ``python`` says."""
        return self.python(path, blob, pk) if python else self.stored(path, blob, pk)

    def to_python(self, row: dict[str, Any]) -> dict[str, Any]:
        """Convert a row of stored values (by name) to Python values, in place."""
        for name, col in self._decoders:
            if col is not None and row.get(name) is not None:
                row[name] = decode_value(col, row[name])
        return row


_URLSAFE = str.maketrans("-_", "+/")
_ROWS_CHUNK = 65_536  # rows a bulk read of rows() decodes the keys of at once


def _split(blob: bytes, path: str) -> tuple[str, list[Any]]:
    value = unpack(blob, where=path)
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str) or not isinstance(value[1], list):
        raise FeatureError(f"expected [legend_name, [values]], got {value!r:.200}", path=path)
    return value[0], value[1]


class Table:
    """A table as it is at one commit (read-only): what ``view.table(name)`` returns.

    ``rows()`` streams dicts conforming to the current schema (Python values by default,
    ``python=False`` for stored values); ``get(pk)`` takes a scalar or a tuple for a
    compound key; ``len()`` counts rows (a key scan: read at a commit, no blob decoded).
    """

    def __init__(self, source: Source, state: DatasetState, fallback: LegendLookup | None = None,
                 feature_chunks: Callable[[Any, int], Iterator[tuple[Sequence[str], list[bytes]]] | None] | None = None,
                 count: Callable[[tuple], int] | None = None) -> None:
        self._source = source
        self._feature_chunks = feature_chunks
        self._count = count
        self.state = state
        self.name = state.name
        self.graph = state.graph
        self.schema = state.schema
        self.path_structure = state.path_structure
        self.reader = RowReader(state.schema, state.legends, fallback, state.name)

    @property
    def title(self) -> str | None:
        return self.state.title

    @property
    def description(self) -> str | None:
        return self.state.description

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.state.meta)

    def path_of(self, pk: Any) -> str:
        """The feature path of a primary key."""
        return self.path_structure.encode_path(pk_tuple(self.schema, pk, self.name))

    def blob(self, pk: Any) -> bytes | None:
        """The stored feature blob of a row, or None."""
        return self._blob_at(self.path_of(pk))

    def blob_at(self, path: str) -> bytes | None:
        """The stored feature blob at a feature path, or None."""
        return self._blob_at(path)

    def _blob_at(self, path: str) -> bytes | None:
        found = [q[3] for q in self._source((self.graph, path, FEATURE, Var("o")))]
        if len(found) > 1:
            raise DatasetCorruptError(self.name, f"feature {path} holds {len(found)} blobs")
        return found[0] if found else None

    def get(self, pk: Any, *, python: bool = True) -> dict[str, Any] | None:
        """The row with this primary key, or None."""
        return row_by_key(self, pk, self._blob_at, python)

    def __contains__(self, pk: Any) -> bool:
        return self.blob(pk) is not None

    def features(self) -> Iterator[tuple[str, bytes]]:
        """Stream ``(feature path, blob)`` for every row, in storage order (which is not key
        order: :meth:`rows`, :meth:`to_pandas` and ``datae table show`` sort by key)."""
        for _, path, _, blob in self._source((self.graph, Var("s"), FEATURE, Var("o"))):
            yield path, blob

    def feature_chunks(self, size: int) -> Iterator[tuple[Sequence[str], list[bytes]]]:
        """:meth:`features` ``size`` at a time, as ``(paths, blobs)``: read in bulk, rows
        in key order, when the table is read at a commit (``view.table``)."""
        found = None if self._feature_chunks is None else self._feature_chunks(self.graph, size)
        yield from feature_chunks(self.features(), size) if found is None else found

    def rows(self, *, python: bool = True) -> Iterator[dict[str, Any]]:
        """Every row as a dict of the current schema, in primary-key order (a generator
        that holds the blobs: read in bulk at a commit, the rows read by key come in key
        order and the others, if any, are merged in; else every feature is sorted)."""
        read = self.reader.python if python else self.reader.stored
        chunks = None if self._feature_chunks is None else self._feature_chunks(self.graph, _ROWS_CHUNK)
        if chunks is None:
            for path, blob in in_key_order(self.features()):
                yield read(path, blob)
            return
        keyed: list[Iterator[tuple[bytes, Any, bytes, Any]]] = []
        others: list[tuple[str, bytes]] = []
        for paths, blobs in chunks:
            pks = getattr(paths, "pks", None)
            if pks is None:
                others += zip(paths, blobs)
            else:  # paths made only for an error to name: each row's key is at hand
                keyed.append(zip(paths.keys, range(len(blobs)), blobs, pks(), [paths] * len(blobs)))
        rest = ((key_order(path), path, blob, None, None) for path, blob in in_key_order(others))
        for _, at, blob, pk, paths in heapq.merge(chain.from_iterable(keyed), rest, key=itemgetter(0)):
            if paths is None:
                yield read(at, blob)
                continue
            try:
                row = read("", blob, pk)
            except FeatureError:
                row = read(paths[at], blob, pk)  # raises again, naming the feature's path
            yield row

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame, one column per schema column with the dtype its
        type gives (:func:`.frames.to_dataframe`)."""
        return to_dataframe(self)

    def to_arrow(self) -> Any:
        """The rows as a pyarrow Table, typed from the schema."""
        # imported here, not with the module: pyarrow is optional (datae[spark]), and
        # arrow_batches says so (MissingDependencyError) as it is imported
        from .arrow_batches import to_arrow

        return to_arrow(self)

    def __len__(self) -> int:
        pattern = (self.graph, Var("s"), FEATURE, Var("o"))
        if self._count is not None:
            return self._count(pattern)
        return sum(1 for _ in self._source(pattern))

    def __repr__(self) -> str:
        return f"<Table {self.name!r} {self.schema!r}>"


def row_by_key(table: Any, pk: Any, blob_at: Callable[[str], bytes | None], python: bool) -> dict[str, Any] | None:
    """The row of ``table`` (a :class:`Table`, or a writer with the same ``schema``,
    ``path_structure`` and ``reader``) whose primary key is ``pk``, its feature blob read by
    ``blob_at(path)``; None if there is none."""
    key = pk_tuple(table.schema, pk, table.name)
    path = table.path_structure.encode_path(key)
    blob = blob_at(path)
    return None if blob is None else table.reader.row(path, blob, key, python=python)
