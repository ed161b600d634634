"""Datasets in Kartothek layout on any filesystem: written streaming, committed atomically.

A dataset in a storage location ``ROOT`` (a directory or a bucket prefix) is::

    ROOT/<uuid>/<table>/_common_metadata                        empty Parquet: the schema
    ROOT/<uuid>/<table>/<col>=<value>/<file-uuid>.parquet        partitioned data
    ROOT/<uuid>/<table>/<file-uuid>.parquet                      unpartitioned data
    ROOT/<uuid>/indices/<col>/<timestamp>.by-dataset-index.parquet
    ROOT/<uuid>.by-dataset-metadata.json                        written last: the commit

Every data file is its own partition: its label is its path below the table without the
suffix (``graph=urn%3Ag1/0c5d…``), which is the key in ``partitions`` and the value in
indices. A partition's ``files`` maps the table name to the file. Partition columns are
not stored in the data files (readers rebuild them from the path; the column's type is in
``_common_metadata``); names and values are URL-encoded and a null value is written
``__HIVE_DEFAULT_PARTITION__``, as Spark, Hive and pyarrow read it. An index file has the
indexed column (typed as in the table) and ``partition`` (``list<string>`` of labels).

Atomicity: the metadata file is written to a temporary name inside ``<uuid>/`` and moved
to its final name last, so a reader sees the whole dataset or none; a crash leaves files
that no metadata file names (``DatasetWriter.abort`` removes them on an error).

Spec deviation, on purpose: Kartothek asks that all partitions list the same tables. That
holds for a dataset of one table; when several tables are exported, each is partitioned
on its own (quads by graph, a table by one of its columns), so a partition lists only the
table its file belongs to. :func:`read_table` (and Spark, through ``fstore.spark``) read
one table at a time.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import quote

from .errors import ExportError, require

pa = require("pyarrow", "the Kartothek export")
pq = require("pyarrow.parquet", "the Kartothek export")
pafs = require("pyarrow.fs", "the Kartothek export")
pc = require("pyarrow.compute", "the Kartothek export")

__all__ = [
    "METADATA_VERSION",
    "METADATA_SUFFIX",
    "NULL_PARTITION",
    "Location",
    "DatasetWriter",
    "TableResult",
    "location",
    "table_identifier",
    "list_datasets",
    "load_metadata",
    "table_files",
    "table_schema",
    "partition_columns",
    "read_table",
    "read_index",
    "verify_dataset",
]

METADATA_VERSION = 4
METADATA_SUFFIX = ".by-dataset-metadata.json"
INDEX_SUFFIX = ".by-dataset-index.parquet"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
ROWS_PER_FILE = 1 << 20
_SAFE_NAME = re.compile(r"[A-Za-z0-9+\-_]+")
_PARTITION_TYPES = ("string", "large_string", "int8", "int16", "int32", "int64", "bool", "date32[day]")


# -- where the dataset lives --------------------------------------------------------------

@dataclass(frozen=True)
class Location:
    """A storage location: a pyarrow filesystem, the root path on it, and the root as a URI
    that Spark (or another engine) can read."""

    filesystem: Any
    root: str
    uri: str

    def path(self, key: str) -> str:
        return f"{self.root.rstrip('/')}/{key}" if self.root else key

    def url(self, key: str) -> str:
        return f"{self.uri.rstrip('/')}/{key}"


def location(dest: str | os.PathLike, filesystem: Any = None) -> Location:
    """Resolve ``dest`` (a local path, a URI such as ``s3://bucket/x`` or ``file:///x``, or
    a path on ``filesystem``: a ``pyarrow.fs.FileSystem`` or an fsspec filesystem)."""
    dest = os.fspath(dest)
    if filesystem is not None:  # dest is a path on it, or a URI whose path part is
        fs = _as_arrow_fs(filesystem)
        root = (dest.split("://", 1)[1] if "://" in dest else dest).rstrip("/")
        return Location(fs, root, dest.rstrip("/") if "://" in dest else root)
    if "://" not in dest:
        root = os.path.abspath(dest)
        return Location(pafs.LocalFileSystem(), root, "file://" + root)
    try:
        fs, root = pafs.FileSystem.from_uri(dest)
        return Location(fs, root.rstrip("/"), dest.rstrip("/"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
        try:
            import fsspec  # type: ignore[import-not-found]
        except ImportError:
            raise ExportError(
                f"{dest}: pyarrow cannot open this URI ({exc}) and fsspec is not installed to try it"
            ) from None
        fs, root = fsspec.core.url_to_fs(dest)
        return Location(_as_arrow_fs(fs), root.rstrip("/"), dest.rstrip("/"))


def _as_arrow_fs(filesystem: Any) -> Any:
    if isinstance(filesystem, pafs.FileSystem):
        return filesystem
    try:
        from pyarrow.fs import FSSpecHandler, PyFileSystem
    except ImportError as exc:  # pragma: no cover - pyarrow always has them
        raise ExportError(f"cannot use {filesystem!r}: {exc}") from None
    return PyFileSystem(FSSpecHandler(filesystem))


def table_identifier(name: str) -> str:
    """A table name usable in Kartothek paths (letters, digits, ``+ - _``): the name itself
    when it is one, else the name with other characters as ``_`` and a hash suffix
    (``hydro/soundings 2`` -> ``hydro_soundings_2-3b1e0c2a``)."""
    if _SAFE_NAME.fullmatch(name) and name != "indices":
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9+\-_]", "_", name) + "-" + digest


def _segment(value: Any) -> str:
    if value is None:
        return NULL_PARTITION
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, _dt.date):
        text = value.isoformat()
    else:
        text = str(value)
    return quote(text, safe="")


# -- writing ------------------------------------------------------------------------------

@dataclass
class TableResult:
    """What :meth:`DatasetWriter.write_table` wrote."""

    name: str
    identifier: str
    rows: int = 0
    files: list[str] = field(default_factory=list)
    partition_on: tuple[str, ...] = ()


@dataclass
class _OpenFile:
    label: str
    key: str
    stream: Any
    writer: Any
    buffer: list = field(default_factory=list)
    buffered: int = 0
    rows: int = 0
    index_values: dict[str, set] = field(default_factory=dict)


class DatasetWriter:
    """Writes one dataset: :meth:`write_table` for each table, then :meth:`commit` (or
    :meth:`abort`). Memory stays bounded: at most ``max_open_files`` Parquet writers,
    each buffering at most one row group, plus the indices (one entry per distinct value of
    an indexed column and file)."""

    def __init__(self, where: Location, dataset_uuid: str | None = None, *, compression: str = "snappy",
                 row_group_size: int = 65_536, rows_per_file: int = ROWS_PER_FILE, max_open_files: int = 32) -> None:
        self.location = where
        self.uuid = dataset_uuid or _uuid.uuid4().hex
        if not _SAFE_NAME.fullmatch(self.uuid):
            raise ExportError(f"dataset uuid {self.uuid!r} may only hold letters, digits, '+', '-' and '_'")
        self.compression = compression
        self.row_group_size = row_group_size
        self.rows_per_file = rows_per_file
        self.max_open_files = max_open_files
        self.partitions: dict[str, dict[str, dict[str, str]]] = {}
        self.tables: dict[str, TableResult] = {}
        self.index_types: dict[str, Any] = {}
        self.indices: dict[str, dict[Any, set[str]]] = {}
        self.partition_keys: list[str] = []
        self._committed = False
        fs = where.filesystem
        for key in (self.uuid, self.uuid + METADATA_SUFFIX):
            if fs.get_file_info(where.path(key)).type != pafs.FileType.NotFound:
                raise ExportError(f"{where.url(key)} already exists: pick another dataset uuid")
        fs.create_dir(where.path(self.uuid), recursive=True)

    # -- tables ------------------------------------------------------------------------

    def write_table(self, name: str, schema: Any, batches: Iterable[Any], *, partition_on: Sequence[str] = (),
                    indices: Sequence[str] = (), progress: Callable[[str, int], None] | None = None) -> TableResult:
        """Stream record batches of ``schema`` into table ``name``: partitioned on the
        columns ``partition_on``, indexing the columns ``indices`` (those it has)."""
        if self._committed:
            raise ExportError("the dataset is committed; start a new DatasetWriter")
        identifier = table_identifier(name)
        if identifier in {t.identifier for t in self.tables.values()}:
            raise ExportError(f"table {name!r} is written twice")
        partition_on = tuple(partition_on)
        for column in partition_on:
            if column not in schema.names:
                raise ExportError(f"table {name!r} has no column {column!r} to partition on (columns: {', '.join(schema.names)})")
            kind = str(schema.field(column).type)
            if kind not in _PARTITION_TYPES:
                raise ExportError(f"table {name!r}: cannot partition on {column!r} of type {kind} "
                                  f"(only strings, integers, booleans and dates)")
        for column in partition_on:
            if column not in self.partition_keys:
                self.partition_keys.append(column)
        indexed = [c for c in indices if c in schema.names]
        for column in indexed:
            arrow_type = schema.field(column).type
            known = self.index_types.setdefault(column, arrow_type)
            if not _same_index_type(known, arrow_type):
                raise ExportError(f"index {column!r}: table {name!r} has it as {arrow_type}, another table as {known}")
            self.indices.setdefault(column, {})
        result = TableResult(name, identifier, partition_on=partition_on)
        self.tables[name] = result
        base = f"{self.uuid}/{identifier}"
        fs = self.location.filesystem
        fs.create_dir(self.location.path(base), recursive=True)
        with fs.open_output_stream(self.location.path(f"{base}/_common_metadata")) as out:
            pq.write_table(schema.empty_table(), out, compression=self.compression)
        data_schema = pa.schema([f for f in schema if f.name not in partition_on], metadata=schema.metadata)
        table_writer = _TableWriter(self, result, base, data_schema, partition_on, indexed)
        try:
            for batch in batches:
                if batch.num_rows:
                    table_writer.add(batch)
                    result.rows += batch.num_rows
                if progress is not None:
                    progress(name, result.rows)
            table_writer.close_all()
        except BaseException:
            table_writer.close_all(flush=False)
            raise
        return result

    # -- indices and commit ------------------------------------------------------------

    def _write_indices(self) -> dict[str, str]:
        written = {}
        stamp = quote(_dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds"),
                      safe="")
        for column, entries in self.indices.items():
            arrow_type = self.index_types[column]
            if pa.types.is_large_string(arrow_type):
                arrow_type = pa.string()
            keys = list(entries)
            table = pa.table({
                column: pa.array(keys, type=arrow_type),
                "partition": pa.array([sorted(entries[k]) for k in keys], type=pa.list_(pa.string())),
            })
            key = f"{self.uuid}/indices/{quote(column, safe='')}/{stamp}{INDEX_SUFFIX}"
            self.location.filesystem.create_dir(self.location.path(key.rsplit("/", 1)[0]), recursive=True)
            with self.location.filesystem.open_output_stream(self.location.path(key)) as out:
                pq.write_table(table, out, compression=self.compression)
            written[column] = key
        return written

    def commit(self, metadata: Mapping[str, str] | None = None) -> str:
        """Write the indices, then the metadata file (last, atomically); returns its key."""
        if self._committed:
            raise ExportError("the dataset is already committed")
        meta = {str(k): str(v) for k, v in (metadata or {}).items()}
        meta["datae.tables"] = json.dumps({t.identifier: t.name for t in self.tables.values()}, sort_keys=True)
        meta["datae.rows"] = json.dumps({t.identifier: t.rows for t in self.tables.values()}, sort_keys=True)
        meta["datae.partition_on"] = json.dumps({t.identifier: list(t.partition_on) for t in self.tables.values()},
                                                sort_keys=True)
        document = {
            "dataset_metadata_version": METADATA_VERSION,
            "dataset_uuid": self.uuid,
            "metadata": meta,
            "partitions": self.partitions,
            "partition_keys": list(self.partition_keys),
            "indices": self._write_indices(),
        }
        data = json.dumps(document, indent=1, sort_keys=False).encode("utf-8")
        fs = self.location.filesystem
        final = self.location.path(self.uuid + METADATA_SUFFIX)
        pending = self.location.path(f"{self.uuid}/_metadata-pending.json")
        with fs.open_output_stream(pending) as out:
            out.write(data)
        try:
            fs.move(pending, final)
        except (pa.ArrowNotImplementedError, NotImplementedError):
            with fs.open_output_stream(final) as out:
                out.write(data)
            fs.delete_file(pending)
        self._committed = True
        return self.uuid + METADATA_SUFFIX

    def abort(self) -> None:
        """Remove what this writer wrote (best effort; never the metadata of a commit)."""
        if self._committed:
            return
        try:
            self.location.filesystem.delete_dir(self.location.path(self.uuid))
        except (OSError, pa.ArrowException):
            pass


def _same_index_type(a: Any, b: Any) -> bool:
    strings = (pa.string(), pa.large_string())
    return a == b or (a in strings and b in strings)


class _TableWriter:
    """The open files of one table: one per partition value, buffered per row group."""

    def __init__(self, dataset: DatasetWriter, result: TableResult, base: str, schema: Any,
                 partition_on: tuple[str, ...], indexed: list[str]) -> None:
        self.dataset = dataset
        self.result = result
        self.base = base
        self.schema = schema
        self.partition_on = partition_on
        self.indexed = indexed
        self.open: dict[tuple, _OpenFile] = {}  # insertion order = least recently used first
        self.buffered = 0

    def add(self, batch: Any) -> None:
        if not self.partition_on:
            self._append((), batch)
            return
        order = pc.sort_indices(batch, sort_keys=[(c, "ascending") for c in self.partition_on])
        batch = batch.take(order)
        keys = list(zip(*(batch.column(c).to_pylist() for c in self.partition_on)))
        start = 0
        for i in range(1, len(keys) + 1):
            if i == len(keys) or keys[i] != keys[start]:
                part = batch.slice(start, i - start)
                self._append(keys[start], part.drop_columns(list(self.partition_on)), part)
                start = i

    def _append(self, key: tuple, batch: Any, full: Any = None) -> None:
        handle = self.open.pop(key, None)
        if handle is None:
            handle = self._open(key)
        self.open[key] = handle  # most recently used last
        for column in self.indexed:
            values = (full if full is not None else batch).column(column)
            seen = handle.index_values.setdefault(column, set())
            seen.update(pc.unique(values).to_pylist())
        handle.buffer.append(batch)
        handle.buffered += batch.num_rows
        self.buffered += batch.num_rows
        if handle.buffered >= self.dataset.row_group_size:
            self._flush(handle)
        if handle.rows >= self.dataset.rows_per_file:
            self._close(key)
        if len(self.open) > self.dataset.max_open_files:
            self._close(next(iter(self.open)))
        while self.buffered > 4 * self.dataset.row_group_size:
            self._flush(max(self.open.values(), key=lambda h: h.buffered))

    def _open(self, key: tuple) -> _OpenFile:
        name = _uuid.uuid4().hex
        parts = [f"{quote(c, safe='')}={_segment(v)}" for c, v in zip(self.partition_on, key)]
        label = "/".join(parts + [name])
        path = f"{self.base}/{label}.parquet"
        where = self.dataset.location
        if parts:
            where.filesystem.create_dir(where.path(path.rsplit("/", 1)[0]), recursive=True)
        stream = where.filesystem.open_output_stream(where.path(path))
        writer = pq.ParquetWriter(stream, self.schema, compression=self.dataset.compression)
        handle = _OpenFile(label, path, stream, writer)
        self.dataset.partitions[label] = {"files": {self.result.identifier: path}}
        self.result.files.append(path)
        for column, value in zip(self.partition_on, key):
            if column in self.indexed:
                handle.index_values.setdefault(column, set()).add(value)
        return handle

    def _flush(self, handle: _OpenFile) -> None:
        if handle.buffer:
            table = pa.Table.from_batches(handle.buffer, schema=self.schema)
            handle.writer.write_table(table, row_group_size=max(table.num_rows, 1))
            handle.rows += table.num_rows
            self.buffered -= handle.buffered
            handle.buffer, handle.buffered = [], 0

    def _close(self, key: tuple, flush: bool = True) -> None:
        handle = self.open.pop(key)
        if flush:
            self._flush(handle)
        handle.writer.close()
        handle.stream.close()
        indices = self.dataset.indices
        for column, values in handle.index_values.items():
            entries = indices[column]
            for value in values:
                entries.setdefault(value, set()).add(handle.label)

    def close_all(self, flush: bool = True) -> None:
        for key in list(self.open):
            try:
                self._close(key, flush)
            except Exception:
                if flush:
                    raise


# -- reading ------------------------------------------------------------------------------

def list_datasets(where: Location) -> list[str]:
    """The uuids of the committed datasets in a storage location."""
    selector = pafs.FileSelector(where.root, allow_not_found=True, recursive=False)
    names = [info.base_name for info in where.filesystem.get_file_info(selector)]
    return sorted(n[: -len(METADATA_SUFFIX)] for n in names if n.endswith(METADATA_SUFFIX))


def load_metadata(where: Location, dataset_uuid: str | None = None) -> dict[str, Any]:
    """The metadata document of a dataset (the only one in the location when no uuid)."""
    if dataset_uuid is None:
        found = list_datasets(where)
        if len(found) != 1:
            raise ExportError(f"{where.uri} holds {len(found)} datasets ({', '.join(found) or 'none'}): name one")
        dataset_uuid = found[0]
    path = where.path(dataset_uuid + METADATA_SUFFIX)
    try:
        with where.filesystem.open_input_stream(path) as stream:
            return json.loads(stream.read())
    except FileNotFoundError:
        raise ExportError(f"no dataset {dataset_uuid!r} in {where.uri} (no {dataset_uuid}{METADATA_SUFFIX})") from None


def _identifier(document: Mapping[str, Any], table: str) -> str:
    tables = json.loads(document.get("metadata", {}).get("datae.tables", "{}"))
    if table in tables:
        return table
    for identifier, name in tables.items():
        if name == table:
            return identifier
    raise ExportError(f"dataset {document['dataset_uuid']} has no table {table!r} (tables: {', '.join(tables.values())})")


def table_files(document: Mapping[str, Any], table: str) -> list[tuple[str, str]]:
    """``(label, key)`` of every data file of a table, in label order."""
    identifier = _identifier(document, table)
    return sorted((label, p["files"][identifier]) for label, p in document["partitions"].items()
                  if identifier in p["files"])


def table_schema(where: Location, document: Mapping[str, Any], table: str) -> Any:
    """A table's full Arrow schema (partition columns included), from ``_common_metadata``."""
    key = f"{document['dataset_uuid']}/{_identifier(document, table)}/_common_metadata"
    with where.filesystem.open_input_file(where.path(key)) as stream:
        return pq.read_schema(stream)


def partition_columns(document: Mapping[str, Any], table: str) -> list[str]:
    """The columns a table is partitioned on (read back from the paths, not the files)."""
    identifier = _identifier(document, table)
    return json.loads(document.get("metadata", {}).get("datae.partition_on", "{}")).get(identifier, [])


def read_table(where: Location, table: str, dataset_uuid: str | None = None, *, columns: list[str] | None = None,
               filter: Any = None) -> Any:
    """Read one table of a dataset with pyarrow alone (partition columns rebuilt from paths,
    typed by ``_common_metadata``): a ``pyarrow.Table`` in schema column order."""
    import pyarrow.dataset as ds

    document = load_metadata(where, dataset_uuid)
    schema = table_schema(where, document, table)
    keys = [key for _, key in table_files(document, table)]
    identifier = _identifier(document, table)
    partition_names = partition_columns(document, table)
    partitioning = None
    if partition_names:
        partitioning = ds.partitioning(pa.schema([schema.field(k) for k in partition_names]), flavor="hive")
    base = where.path(f"{document['dataset_uuid']}/{identifier}")
    if not keys:
        return schema.empty_table().select(columns or schema.names)
    dataset = ds.dataset([where.path(k) for k in keys], schema=schema, format="parquet",
                         filesystem=where.filesystem, partitioning=partitioning, partition_base_dir=base)
    return dataset.to_table(columns=columns, filter=filter).select(columns or schema.names)


def read_index(where: Location, document: Mapping[str, Any], column: str) -> dict[Any, list[str]]:
    """A secondary index: ``{value: [partition labels]}``."""
    key = document.get("indices", {}).get(column)
    if key is None:
        raise ExportError(f"dataset {document['dataset_uuid']} has no index on {column!r}")
    with where.filesystem.open_input_file(where.path(key)) as stream:
        table = pq.read_table(stream)
    return dict(zip(table.column(column).to_pylist(), table.column("partition").to_pylist()))


def verify_dataset(where: Location, dataset_uuid: str | None = None) -> list[str]:
    """Problems with a committed dataset (an empty list: it is valid): metadata attributes
    and types, every referenced file present and prefixed by the uuid, one
    ``_common_metadata`` per table, index files present and naming known partitions."""
    problems: list[str] = []
    document = load_metadata(where, dataset_uuid)
    uuid = document.get("dataset_uuid")
    if document.get("dataset_metadata_version") != METADATA_VERSION:
        problems.append(f"dataset_metadata_version is {document.get('dataset_metadata_version')!r}, not 4")
    if not isinstance(uuid, str) or (dataset_uuid and uuid != dataset_uuid):
        problems.append(f"dataset_uuid {uuid!r} does not match the file name")
    meta = document.get("metadata", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        problems.append("metadata must map strings to strings")
    fs = where.filesystem

    def exists(key: str) -> bool:
        return fs.get_file_info(where.path(key)).type == pafs.FileType.File

    tables = set()
    for label, partition in document.get("partitions", {}).items():
        for table, key in partition.get("files", {}).items():
            tables.add(table)
            if not key.startswith(f"{uuid}/{table}/") or not key.endswith(".parquet"):
                problems.append(f"partition {label}: file {key} is not <uuid>/{table}/....parquet")
            elif key[len(f"{uuid}/{table}/"): -len(".parquet")] != label:
                problems.append(f"partition {label}: file {key} does not carry its label")
            if not exists(key):
                problems.append(f"partition {label}: file {key} is missing")
    for table in sorted(tables | set(json.loads(meta.get("datae.tables", "{}")))):
        if not exists(f"{uuid}/{table}/_common_metadata"):
            problems.append(f"table {table}: {uuid}/{table}/_common_metadata is missing")
    labels = set(document.get("partitions", {}))
    for column, key in document.get("indices", {}).items():
        if not isinstance(key, str) or not exists(key):
            problems.append(f"index {column}: file {key} is missing")
            continue
        if not key.startswith(f"{uuid}/indices/{quote(column, safe='')}/") or not key.endswith(INDEX_SUFFIX):
            problems.append(f"index {column}: file {key} is not <uuid>/indices/<column>/<timestamp>{INDEX_SUFFIX}")
        for value, parts in read_index(where, document, column).items():
            unknown = set(parts) - labels
            if unknown:
                problems.append(f"index {column}: value {value!r} names unknown partitions {sorted(unknown)}")
    return problems
