"""The Kartothek layout of an export, and reading it back with pyarrow alone.

Export format version :data:`FORMAT_VERSION` (``datae.export_format`` in every metadata
file). A storage location ``ROOT`` (a directory or a bucket prefix) holds one Kartothek
dataset per exported table, named by the table (:func:`table_identifier`), each with the
single table ``table`` that plateau (the maintained Kartothek) reads::

    ROOT/<dataset>.by-dataset-metadata.json                     the current version: written last
    ROOT/<dataset>/table/_common_metadata                       empty Parquet: schema + b'pandas'
    ROOT/<dataset>/table/<col>=<value>/<file-uuid>.parquet      partitioned data
    ROOT/<dataset>/table/<file-uuid>.parquet                    unpartitioned data
    ROOT/<dataset>/indices/<col>/<timestamp>.by-dataset-index.parquet

Every data file is its own partition, labelled by its path below ``table/`` without the
suffix (``graph=urn%3Ag1/0c5d…``). Partition columns are not in the data files (readers
rebuild them from the path, typed by ``_common_metadata``); names and values are
URL-encoded, null is ``__HIVE_DEFAULT_PARTITION__`` (Spark, Hive and pyarrow read it as
null; plateau, which has no null partition value, as that string). An index file has the
indexed column and ``partition`` (``list<string>`` of labels).

A dataset's metadata file names the files of its current version; a later export writes
new partitions and replaces the metadata file (temporary file + rename), so a reader sees
one version whole. Files of older versions stay until removed (plateau's
``garbage_collect_dataset``).

>>> table_identifier("roads"), table_identifier("hydro/soundings 2")
('roads', 'hydro_soundings_2-9a5f80c8')
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Collection, Mapping
from urllib.parse import quote, unquote

from .errors import ExportError, require

pa = require("pyarrow", "the Kartothek export")
pq = require("pyarrow.parquet", "the Kartothek export")
pafs = require("pyarrow.fs", "the Kartothek export")

__all__ = [
    "FORMAT_VERSION",
    "METADATA_VERSION",
    "METADATA_SUFFIX",
    "INDEX_SUFFIX",
    "NULL_PARTITION",
    "DATA_TABLE",
    "PARTITION_TYPES",
    "Location",
    "location",
    "store_url",
    "table_identifier",
    "metadata_key",
    "common_metadata_key",
    "with_pandas_metadata",
    "nullable_integer_dtypes",
    "partition_segment",
    "label_key",
    "list_datasets",
    "load_metadata",
    "find_metadata",
    "table_files",
    "table_schema",
    "partition_columns",
    "read_table",
    "read_index",
    "verify_dataset",
]

# 1: one dataset holding every table (plateau could not read it); 2: the pandas metadata
# (in _common_metadata only) left integer columns with nulls to pandas' float64
FORMAT_VERSION = 3
METADATA_VERSION = 4
METADATA_SUFFIX = ".by-dataset-metadata.json"
INDEX_SUFFIX = ".by-dataset-index.parquet"
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
DATA_TABLE = "table"  # plateau >= 4 reads datasets of one table; "table" is its default name
_SAFE_NAME = re.compile(r"[A-Za-z0-9+\-_]+")
# Not booleans: plateau rebuilds a partition value with numpy's bool("false"), which is True.
PARTITION_TYPES = ("string", "large_string", "int8", "int16", "int32", "int64", "date32[day]")


# -- where the datasets live --------------------------------------------------------------

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

    @property
    def is_local(self) -> bool:
        return isinstance(self.filesystem, pafs.LocalFileSystem)


def location(dest: str | os.PathLike | Location, filesystem: Any = None) -> Location:
    """Resolve ``dest`` (a local path, a URI such as ``s3://bucket/x`` or ``file:///x``, or
    a path on ``filesystem``: a ``pyarrow.fs.FileSystem`` or an fsspec filesystem)."""
    if isinstance(dest, Location):
        return dest
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
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    return PyFileSystem(FSSpecHandler(filesystem))


def store_url(dest: str | os.PathLike | Location) -> str:
    """The minimalkv / storefact URL of a local export, for plateau's readers
    (``plateau.io.eager.read_table("quads", store_url(dest))``)."""
    where = location(dest)
    if not where.is_local:
        raise ExportError(f"{where.uri}: give plateau a minimalkv store for this filesystem yourself "
                          f"(store_url knows local directories only)")
    return "hfs://" + where.root


def table_identifier(name: str) -> str:
    """A table's dataset name (letters, digits, ``+ - _``, as Kartothek uuids are): the
    name itself when it is one, else the name with other characters as ``_`` and a hash
    suffix."""
    if _SAFE_NAME.fullmatch(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9+\-_]", "_", name) + "-" + digest


def metadata_key(dataset: str) -> str:
    """The key of a dataset's metadata file below its storage location."""
    return dataset + METADATA_SUFFIX


def common_metadata_key(dataset: str) -> str:
    """The key of a dataset's ``_common_metadata`` (its schema)."""
    return f"{dataset}/{DATA_TABLE}/_common_metadata"


def with_pandas_metadata(schema: Any, never_null: Collection[str] = ()) -> Any:
    """``schema`` with the ``b'pandas'`` metadata pandas writes for it (no index), which
    plateau needs in ``_common_metadata`` and plateau and pandas read from each data file;
    the field types stay as they are.

    An integer field that may hold nulls (``nullable``, not in ``never_null``) is described
    as a pandas nullable integer (``Int64``, ``UInt8`` …): without that, every reader that
    goes through pandas makes the column float64, where 0 reads as 0.0 and an integer above
    2**53 loses its value. Fields that cannot be null keep numpy's integers.

    >>> schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("n", pa.int32())])
    >>> [c["numpy_type"] for c in with_pandas_metadata(schema).pandas_metadata["columns"]]
    ['int64', 'Int32']
    """
    bare = schema.remove_metadata()
    empty = bare.empty_table().to_pandas().astype(nullable_integer_dtypes(bare, never_null))
    pandas = pa.Table.from_pandas(empty, schema=bare, preserve_index=False).schema.metadata[b"pandas"]
    return schema.with_metadata({**(schema.metadata or {}), b"pandas": pandas})


def nullable_integer_dtypes(schema: Any, never_null: Collection[str] = ()) -> dict[str, str]:
    """``{column: pandas nullable integer dtype}`` for the integer fields of ``schema`` that
    may hold nulls (``nullable`` and not in ``never_null``).

    >>> nullable_integer_dtypes(pa.schema([("a", pa.uint16()), ("b", pa.int8()), ("c", pa.string())]), ["b"])
    {'a': 'UInt16'}
    """
    return {f.name: f"{'U' if pa.types.is_unsigned_integer(f.type) else ''}Int{f.type.bit_width}"
            for f in schema if pa.types.is_integer(f.type) and f.nullable and f.name not in never_null}


def partition_segment(value: Any) -> str:
    """A partition value as it is written in a path (URL-encoded; null as Hive's name)."""
    if value is None:
        return NULL_PARTITION
    text = value.isoformat() if isinstance(value, _dt.date) else str(value)
    return quote(text, safe="")


def label_key(label: str, schema: Any, partition_on: tuple[str, ...]) -> tuple:
    """The partition values of a partition label, typed by ``schema``."""
    values = dict(part.split("=", 1) for part in label.split("/")[:-1])
    key = []
    for column in partition_on:
        text = unquote(values[quote(column, safe="")])
        kind = schema.field(column).type
        if text == NULL_PARTITION:
            key.append(None)
        elif pa.types.is_integer(kind):
            key.append(int(text))
        elif pa.types.is_date(kind):
            key.append(_dt.date.fromisoformat(text))
        else:
            key.append(text)
    return tuple(key)


# -- reading ------------------------------------------------------------------------------

def list_datasets(where: Location) -> list[str]:
    """The datasets (tables) with a committed version in a storage location."""
    selector = pafs.FileSelector(where.root, allow_not_found=True, recursive=False)
    names = [info.base_name for info in where.filesystem.get_file_info(selector)]
    return sorted(n[: -len(METADATA_SUFFIX)] for n in names if n.endswith(METADATA_SUFFIX))


def find_metadata(where: Location, dataset: str) -> dict[str, Any] | None:
    """A dataset's current metadata document, or None when it has none yet."""
    path = where.path(metadata_key(dataset))
    try:
        with where.filesystem.open_input_stream(path) as stream:
            data = stream.read()
    except FileNotFoundError:
        return None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ExportError(f"{where.url(metadata_key(dataset))} is not a metadata document: {exc}") from None


def load_metadata(where: Location, table: str) -> dict[str, Any]:
    """The current metadata document of a table's dataset (by table name or identifier)."""
    dataset = table_identifier(table)
    document = find_metadata(where, dataset)
    if document is None:
        raise ExportError(f"no dataset {dataset!r} in {where.uri} (no {metadata_key(dataset)}; "
                          f"datasets: {', '.join(list_datasets(where)) or 'none'})")
    return document


def table_files(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, key)`` of every data file of a dataset version, in label order."""
    return sorted((label, p["files"][DATA_TABLE]) for label, p in document["partitions"].items())


def table_schema(where: Location, document: Mapping[str, Any]) -> Any:
    """A dataset's full Arrow schema (partition columns included), from ``_common_metadata``."""
    with where.filesystem.open_input_file(where.path(common_metadata_key(document["dataset_uuid"]))) as stream:
        return pq.read_schema(stream)


def partition_columns(document: Mapping[str, Any]) -> list[str]:
    """The columns a dataset is partitioned on (read back from the paths, not the files)."""
    return list(document.get("partition_keys") or [])


def read_table(where: Location, table: str, *, columns: list[str] | None = None, filter: Any = None) -> Any:
    """Read the current version of a table's dataset with pyarrow alone (partition columns
    rebuilt from the paths, typed by ``_common_metadata``): a ``pyarrow.Table`` in schema
    column order, without the pandas metadata."""
    import pyarrow.dataset as ds

    document = load_metadata(where, table)
    schema = table_schema(where, document)
    schema = schema.with_metadata({k: v for k, v in (schema.metadata or {}).items() if k != b"pandas"})
    keys = [key for _, key in table_files(document)]
    names = partition_columns(document)
    partitioning = ds.partitioning(pa.schema([schema.field(k) for k in names]), flavor="hive") if names else None
    if not keys:
        return schema.empty_table().select(columns or schema.names)
    dataset = ds.dataset([where.path(k) for k in keys], schema=schema, format="parquet",
                         filesystem=where.filesystem, partitioning=partitioning,
                         partition_base_dir=where.path(f"{document['dataset_uuid']}/{DATA_TABLE}"))
    return dataset.to_table(columns=columns, filter=filter).select(columns or schema.names)


def read_index(where: Location, document: Mapping[str, Any], column: str) -> dict[Any, list[str]]:
    """A secondary index: ``{value: [partition labels]}``."""
    key = document.get("indices", {}).get(column)
    if key is None:
        raise ExportError(f"dataset {document['dataset_uuid']} has no index on {column!r}")
    with where.filesystem.open_input_file(where.path(key)) as stream:
        table = pq.read_table(stream)
    return dict(zip(table.column(column).to_pylist(), table.column("partition").to_pylist()))


def verify_dataset(where: Location, table: str) -> list[str]:
    """Problems with the current version of a table's dataset (an empty list: valid):
    metadata attributes and types, every referenced file present below the dataset and
    carrying its label, ``_common_metadata`` present with pandas metadata, index files
    present and naming known partitions."""
    problems: list[str] = []
    document = load_metadata(where, table)
    uuid = document.get("dataset_uuid")
    if document.get("dataset_metadata_version") != METADATA_VERSION:
        problems.append(f"dataset_metadata_version is {document.get('dataset_metadata_version')!r}, not 4")
    if uuid != table_identifier(table):
        problems.append(f"dataset_uuid {uuid!r} does not match the file name")
    meta = document.get("metadata", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        problems.append("metadata must map strings to strings")
    if meta.get("datae.export_format") != str(FORMAT_VERSION):
        problems.append(f"datae.export_format is {meta.get('datae.export_format')!r}, not {FORMAT_VERSION}")
    fs = where.filesystem

    def exists(key: str) -> bool:
        return fs.get_file_info(where.path(key)).type == pafs.FileType.File

    base = f"{uuid}/{DATA_TABLE}/"
    for label, partition in document.get("partitions", {}).items():
        files = partition.get("files", {})
        if set(files) != {DATA_TABLE}:
            problems.append(f"partition {label}: lists tables {sorted(files)}, not [{DATA_TABLE!r}]")
            continue
        key = files[DATA_TABLE]
        if key != f"{base}{label}.parquet":
            problems.append(f"partition {label}: file {key} is not {base}{label}.parquet")
        if not exists(key):
            problems.append(f"partition {label}: file {key} is missing")
    if not exists(common_metadata_key(uuid)):
        problems.append(f"{common_metadata_key(uuid)} is missing")
    elif b"pandas" not in (table_schema(where, document).metadata or {}):
        problems.append(f"{common_metadata_key(uuid)} has no pandas metadata")
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
