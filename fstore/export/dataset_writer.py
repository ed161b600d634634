"""Writing one version of one dataset in Kartothek layout (see :mod:`.kartothek`).

:class:`DatasetWriter` streams record batches into new partitions, keeps the partitions of
the previous version that it is not told to rewrite (by reference, as Kartothek's update
does), and commits by writing the indices, the schema and finally the metadata file
(temporary file, then an atomic rename). :meth:`DatasetWriter.abort` removes every file it
wrote; until the commit, readers see only the previous version.

>>> import tempfile, pyarrow as pa
>>> from fstore.export.kartothek import location, read_table
>>> where = location(tempfile.mkdtemp())
>>> schema = pa.schema([("k", pa.string()), ("v", pa.int64())])
>>> w = DatasetWriter(where, "t", schema, partition_on=("k",))
>>> w.write([pa.record_batch([["a", "b"], [1, 2]], schema=schema)]).rows
2
>>> _ = w.commit({})
>>> read_table(where, "t").sort_by("k").column("v").to_pylist()
[1, 2]
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence
from urllib.parse import quote

from .errors import ExportError, require
from .kartothek import (
    DATA_TABLE,
    FORMAT_VERSION,
    INDEX_SUFFIX,
    METADATA_VERSION,
    PARTITION_TYPES,
    Location,
    common_metadata_key,
    label_key,
    metadata_key,
    partition_segment,
    read_index,
    table_schema,
    with_pandas_metadata,
)

pa = require("pyarrow", "the Kartothek export")
pq = require("pyarrow.parquet", "the Kartothek export")
pafs = require("pyarrow.fs", "the Kartothek export")
pc = require("pyarrow.compute", "the Kartothek export")

__all__ = ["ROWS_PER_FILE", "DatasetWriter", "TableResult"]

ROWS_PER_FILE = 1 << 20


@dataclass
class TableResult:
    """What one dataset version holds: ``rows`` in all, ``files`` written by this export,
    ``reused`` partitions kept from the previous version, its ``version`` number."""

    name: str
    dataset_uuid: str
    rows: int = 0
    files: list[str] = field(default_factory=list)
    reused: int = 0
    partition_on: tuple[str, ...] = ()
    version: int = 1
    metadata_key: str = ""

    @property
    def identifier(self) -> str:
        return self.dataset_uuid


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
    """Writes one version of dataset ``dataset``: :meth:`write` the batches, then
    :meth:`commit` (or :meth:`abort`).

    ``previous``: the current metadata document of the dataset, same schema, partitioning
    and indices (else pass None: everything is written anew). ``rewrite``: the partition
    keys (tuples of ``partition_on`` values; ``()`` when unpartitioned) whose rows
    changed: their old partitions are dropped, rows of other keys are skipped, and the
    other old partitions are kept. None: rewrite every key.

    Memory stays bounded: at most ``max_open_files`` Parquet writers, at most four row
    groups buffered across them, plus the indices (one entry per distinct value and file).
    """

    def __init__(self, where: Location, dataset: str, schema: Any, *, partition_on: Sequence[str] = (),
                 indices: Sequence[str] = (), previous: Mapping[str, Any] | None = None,
                 rewrite: Collection[tuple] | None = None, name: str | None = None, compression: str = "snappy",
                 row_group_size: int = 65_536, rows_per_file: int = ROWS_PER_FILE, max_open_files: int = 32) -> None:
        self.location = where
        self.uuid = dataset
        self.schema = schema
        self.partition_on = tuple(partition_on)
        self.indexed = [c for c in indices if c in schema.names]
        self.compression = compression
        self.row_group_size = row_group_size
        self.rows_per_file = rows_per_file
        self.max_open_files = max_open_files
        self.rewrite = None if rewrite is None else set(rewrite)
        self.result = TableResult(name or dataset, dataset, partition_on=self.partition_on)
        self.written: list[str] = []  # every key this writer wrote, for abort
        self.partitions: dict[str, dict[str, dict[str, str]]] = {}
        self.index_entries: dict[str, dict[Any, set[str]]] = {c: {} for c in self.indexed}
        self._committed = False
        for column in self.partition_on:
            if column not in schema.names:
                raise ExportError(f"table {self.result.name!r} has no column {column!r} to partition on "
                                  f"(columns: {', '.join(schema.names)})")
            kind = str(schema.field(column).type)
            if kind not in PARTITION_TYPES:
                raise ExportError(f"table {self.result.name!r}: cannot partition on {column!r} of type {kind} "
                                  f"(only strings, integers and dates)")
        fs = where.filesystem
        self._fresh = fs.get_file_info(where.path(dataset)).type == pafs.FileType.NotFound
        self.previous = previous
        if previous is not None:
            self._keep(previous)
        # each data file carries its own pandas metadata: plateau and pandas read a file's types from it
        self.data_schema = with_pandas_metadata(
            pa.schema([f for f in schema if f.name not in self.partition_on], metadata=schema.metadata))

    # -- the previous version ------------------------------------------------------------

    def _keep(self, previous: Mapping[str, Any]) -> None:
        meta = previous.get("metadata", {})
        self.result.version = int(meta.get("datae.version", "0")) + 1
        if self.rewrite is None:
            return
        kept_rows = int(meta.get("datae.rows", "0"))
        for label, partition in previous["partitions"].items():
            if label_key(label, self.schema, self.partition_on) in self.rewrite:
                key = partition["files"][DATA_TABLE]
                with self.location.filesystem.open_input_file(self.location.path(key)) as stream:
                    kept_rows -= pq.ParquetFile(stream).metadata.num_rows
            else:
                self.partitions[label] = partition
        self.result.rows = kept_rows
        self.result.reused = len(self.partitions)
        for column in self.indexed:
            if self.partitions:
                for value, labels in read_index(self.location, previous, column).items():
                    kept = set(labels) & self.partitions.keys()
                    if kept:
                        self.index_entries[column][value] = kept

    # -- data ----------------------------------------------------------------------------

    def write(self, batches: Iterable[Any], progress: Callable[[str, int], None] | None = None) -> TableResult:
        """Stream record batches of the schema into new partitions (only rows of keys to
        rewrite, when told); ``progress(table, rows)`` after each batch."""
        if self._committed:
            raise ExportError(f"dataset {self.uuid!r} is committed; start a new DatasetWriter")
        self.location.filesystem.create_dir(self.location.path(f"{self.uuid}/{DATA_TABLE}"), recursive=True)
        table_writer = _TableWriter(self)
        try:
            for batch in batches:
                if batch.num_rows:
                    self.result.rows += table_writer.add(batch)
                if progress is not None:
                    progress(self.result.name, self.result.rows)
            table_writer.close_all()
        except BaseException:
            table_writer.close_all(flush=False)
            raise
        return self.result

    def _output(self, key: str) -> Any:
        self.written.append(key)
        return self.location.filesystem.open_output_stream(self.location.path(key))

    # -- commit --------------------------------------------------------------------------

    def _write_indices(self) -> dict[str, str]:
        written = {}
        stamp = quote(_dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds"),
                      safe="")
        for column, entries in self.index_entries.items():
            arrow_type = self.schema.field(column).type
            if pa.types.is_large_string(arrow_type):
                arrow_type = pa.string()
            keys = list(entries)
            # pandas metadata: plateau reads an index through pandas (an integer index with a
            # null would be float64 there, and 2**53 + 1 the same key as 2**53)
            schema = with_pandas_metadata(pa.schema([(column, arrow_type), ("partition", pa.list_(pa.string()))]))
            table = pa.table([pa.array(keys, type=arrow_type),
                              pa.array([sorted(entries[k]) for k in keys], type=pa.list_(pa.string()))], schema=schema)
            key = f"{self.uuid}/indices/{quote(column, safe='')}/{stamp}{INDEX_SUFFIX}"
            self.location.filesystem.create_dir(self.location.path(key.rsplit("/", 1)[0]), recursive=True)
            with self._output(key) as out:
                pq.write_table(table, out, compression=self.compression)
            written[column] = key
        return written

    def _replace(self, key: str, data: bytes) -> None:
        """Write ``key`` through a temporary file renamed over it: a reader sees the old
        content or the new, whole."""
        fs, where = self.location.filesystem, self.location
        pending = f"{self.uuid}/_pending-{_uuid.uuid4().hex}"
        with self._output(pending) as out:
            out.write(data)
        if where.is_local:
            os.replace(where.path(pending), where.path(key))
        else:
            try:
                fs.move(where.path(pending), where.path(key))
            except (pa.ArrowNotImplementedError, NotImplementedError):
                with fs.open_output_stream(where.path(key)) as out:
                    out.write(data)
                fs.delete_file(where.path(pending))
        self.written.remove(pending)

    def _write_schema(self) -> None:
        # a partition value is never null (see _TableWriter._open), and plateau rebuilds it with numpy's type
        full = with_pandas_metadata(self.schema, never_null=self.partition_on)
        if self.previous is not None:
            try:
                if table_schema(self.location, self.previous).equals(full, check_metadata=True):
                    return
            except FileNotFoundError:
                pass
        buffer = pa.BufferOutputStream()
        pq.write_metadata(full, buffer)
        self._replace(common_metadata_key(self.uuid), buffer.getvalue().to_pybytes())

    def commit(self, metadata: Mapping[str, str]) -> str:
        """Write the indices, the schema, then the metadata file (last, atomically);
        returns the metadata file's key."""
        if self._committed:
            raise ExportError(f"dataset {self.uuid!r} is already committed")
        meta = {str(k): str(v) for k, v in metadata.items()}
        meta.update({
            "datae.export_format": str(FORMAT_VERSION),
            "datae.table": self.result.name,
            "datae.rows": str(self.result.rows),
            "datae.version": str(self.result.version),
            "datae.partitions_written": str(len(self.result.files)),
            "datae.partitions_reused": str(self.result.reused),
        })
        document = {
            "dataset_metadata_version": METADATA_VERSION,
            "dataset_uuid": self.uuid,
            "metadata": meta,
            "partitions": dict(sorted(self.partitions.items())),
            "partition_keys": list(self.partition_on),
            "indices": self._write_indices(),
        }
        self._write_schema()
        self._replace(metadata_key(self.uuid), json.dumps(document, indent=1).encode("utf-8"))
        self._committed = True
        self.result.metadata_key = metadata_key(self.uuid)
        return self.result.metadata_key

    def abort(self) -> None:
        """Remove every file this writer wrote (best effort); nothing once committed."""
        if self._committed:
            return
        fs, where = self.location.filesystem, self.location
        if self._fresh:
            keys = [self.uuid]
        else:
            keys = self.written
        for key in keys:
            try:
                if key == self.uuid:
                    fs.delete_dir(where.path(key))
                else:
                    fs.delete_file(where.path(key))
            except (OSError, pa.ArrowException):
                pass


class _TableWriter:
    """The open files of one dataset version: one per partition key, buffered per row
    group; rows of keys not to rewrite are skipped."""

    def __init__(self, dataset: DatasetWriter) -> None:
        self.dataset = dataset
        self.partition_on = dataset.partition_on
        self.open: dict[tuple, _OpenFile] = {}  # insertion order = least recently used first
        self.buffered = 0

    def add(self, batch: Any) -> int:
        """Buffer / write one batch; returns the rows taken."""
        wanted = self.dataset.rewrite
        if not self.partition_on:
            if wanted is not None and () not in wanted:
                return 0
            self._append((), batch)
            return batch.num_rows
        order = pc.sort_indices(batch, sort_keys=[(c, "ascending") for c in self.partition_on])
        batch = batch.take(order)
        keys = list(zip(*(batch.column(c).to_pylist() for c in self.partition_on)))
        start, taken = 0, 0
        for i in range(1, len(keys) + 1):
            if i == len(keys) or keys[i] != keys[start]:
                if wanted is None or keys[start] in wanted:
                    part = batch.slice(start, i - start)
                    self._append(keys[start], part.drop_columns(list(self.partition_on)), part)
                    taken += i - start
                start = i
        return taken

    def _append(self, key: tuple, batch: Any, full: Any = None) -> None:
        handle = self.open.pop(key, None)
        if handle is None:
            handle = self._open(key)
        self.open[key] = handle  # most recently used last
        for column in self.dataset.indexed:
            values = (full if full is not None else batch).column(column)
            handle.index_values.setdefault(column, set()).update(pc.unique(values).to_pylist())
        handle.buffer.append(batch)
        handle.buffered += batch.num_rows
        self.buffered += batch.num_rows
        dataset = self.dataset
        if handle.buffered >= dataset.row_group_size:
            self._flush(handle)
        if handle.rows >= dataset.rows_per_file:
            self._close(key)
        if len(self.open) > dataset.max_open_files:
            self._close(next(iter(self.open)))
        while self.buffered > 4 * dataset.row_group_size:
            self._flush(max(self.open.values(), key=lambda h: h.buffered))

    def _open(self, key: tuple) -> _OpenFile:
        dataset = self.dataset
        for column, value in zip(self.partition_on, key):
            kind = dataset.schema.field(column).type
            if value is None and not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
                # Kartothek has no null partition value; plateau fails on Hive's name for a number
                raise ExportError(f"table {dataset.result.name!r}: column {column!r} ({kind}) is null in some rows, "
                                  f"so it cannot be a partition column (plateau cannot read a null {kind} "
                                  f"partition): partition on a column without nulls, or on a text column")
        parts = [f"{quote(c, safe='')}={partition_segment(v)}" for c, v in zip(self.partition_on, key)]
        label = "/".join(parts + [_uuid.uuid4().hex])
        path = f"{dataset.uuid}/{DATA_TABLE}/{label}.parquet"
        where = dataset.location
        if parts:
            where.filesystem.create_dir(where.path(path.rsplit("/", 1)[0]), recursive=True)
        stream = dataset._output(path)
        writer = pq.ParquetWriter(stream, dataset.data_schema, compression=dataset.compression)
        handle = _OpenFile(label, path, stream, writer)
        dataset.partitions[label] = {"files": {DATA_TABLE: path}}
        dataset.result.files.append(path)
        for column, value in zip(self.partition_on, key):
            if column in dataset.indexed:
                handle.index_values.setdefault(column, set()).add(value)
        return handle

    def _flush(self, handle: _OpenFile) -> None:
        if handle.buffer:
            table = pa.Table.from_batches(handle.buffer, schema=self.dataset.data_schema)
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
        entries = self.dataset.index_entries
        for column, values in handle.index_values.items():
            for value in values:
                entries[column].setdefault(value, set()).add(handle.label)

    def close_all(self, flush: bool = True) -> None:
        for key in list(self.open):
            try:
                self._close(key, flush)
            except Exception:
                if flush:
                    raise
