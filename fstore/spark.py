"""Snapshots of the store as Spark DataFrames.

Each function writes Parquet (a Kartothek dataset, see :mod:`fstore.export.kartothek`)
streaming from the store in bounded memory, then has Spark read the files: no data goes
through the driver's JVM or py4j, and the same code runs on a cluster when ``staging`` is
storage the executors can read (``s3a://…``, ``hdfs://…``, a shared mount). Without
``staging``, files go to a local temporary directory removed when Python exits, which only
a ``local[*]`` master can read.

* :func:`quads_dataframe` — one row per quad (columns of :mod:`fstore.export.terms`)
* :func:`table_dataframe` — a Kart table with Spark types from its schema
* :func:`changes_dataframe` — the quads added (``+``) and removed (``-``) between commits
* :func:`export_snapshot` — a commit as a dataset at a path you keep
* :func:`dataset_dataframe` — one table of a dataset written earlier
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any, Sequence

from .export.errors import ExportError, require
from .export.kartothek import DATA_TABLE, Location, load_metadata, location, table_files, table_schema
from .export.snapshot import QUADS_TABLE, ExportResult, export_changes, export_snapshot
from .export.sparktypes import spark_schema_json

require("pyspark", "fstore.spark")
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

__all__ = [
    "quads_dataframe",
    "table_dataframe",
    "changes_dataframe",
    "export_snapshot",
    "export_changes",
    "dataset_dataframe",
    "result_dataframe",
]

_TEMP_DIRS: list[str] = []


def _cleanup() -> None:
    for path in _TEMP_DIRS:
        shutil.rmtree(path, ignore_errors=True)


atexit.register(_cleanup)


def _is_local(spark: SparkSession) -> bool:
    try:
        master = spark.sparkContext.master
    except Exception:  # Spark Connect has no SparkContext: the server reads the files
        return False
    return master.startswith("local")


def _staging(spark: SparkSession, staging: str | os.PathLike | None) -> str:
    if staging is not None:
        return os.fspath(staging)
    if not _is_local(spark):
        raise ExportError(
            "this Spark master is not local, so its executors cannot read the driver's temporary files: "
            "pass staging= a directory they can read (s3a://…, hdfs://…, a shared mount)"
        )
    path = tempfile.mkdtemp(prefix="datae-spark-")
    _TEMP_DIRS.append(path)
    return path


def dataset_dataframe(spark: SparkSession, dest: str | os.PathLike | Location, table: str = QUADS_TABLE, *,
                      filesystem: Any = None) -> DataFrame:
    """The current version of one table's dataset as a DataFrame: the files its metadata
    names, read with the Spark schema of its ``_common_metadata`` (column metadata
    included), partition columns rebuilt from the paths, columns in schema order."""
    where = location(dest, filesystem)
    document = load_metadata(where, table)
    arrow_schema = table_schema(where, document)
    schema_json = spark_schema_json(arrow_schema)
    times = [f["name"] for f in schema_json["fields"] if f["type"].startswith("time(")]
    if times and not hasattr(T, "TimeType"):
        raise ExportError(f"table {table!r} has time column(s) {', '.join(times)}: Spark reads them as TimeType, "
                          f"which needs pyspark >= 4.1")
    schema = T.StructType.fromJson(schema_json)
    if times:
        spark.conf.set("spark.sql.timeType.enabled", "true")
    files = table_files(document)
    if not files:
        return spark.createDataFrame([], schema)
    base = where.url(f"{document['dataset_uuid']}/{DATA_TABLE}")
    frame = spark.read.schema(schema).option("basePath", base).parquet(*(where.url(key) for _, key in files))
    return frame.select(*[frame[f.name].alias(f.name, metadata=f.metadata) for f in schema.fields])


def result_dataframe(spark: SparkSession, result: ExportResult, table: str = QUADS_TABLE) -> DataFrame:
    """One table of what :func:`export_snapshot` or :func:`export_changes` returned."""
    return dataset_dataframe(spark, result.location, table)


def quads_dataframe(repo: Any, ref: str, spark: SparkSession, *, staging: str | os.PathLike | None = None,
                    partition_on: Sequence[str] | None = None, batch_size: int | None = None,
                    filesystem: Any = None) -> DataFrame:
    """Every quad at ``ref``: graph, subject, predicate, object (lexical form), their kinds,
    datatype, language and typed object columns (see :mod:`fstore.export.terms`)."""
    options = {"batch_size": batch_size} if batch_size else {}
    result = export_snapshot(repo, ref, _staging(spark, staging), tables=[], partition_on=partition_on,
                             filesystem=filesystem, **options)
    return result_dataframe(spark, result, QUADS_TABLE)


def table_dataframe(repo: Any, ref: str, name: str, spark: SparkSession, *,
                    staging: str | os.PathLike | None = None, partition_on: Sequence[str] | None = None,
                    batch_size: int | None = None, filesystem: Any = None) -> DataFrame:
    """Kart table ``name`` at ``ref`` (``repo.at(ref).table(name)``) with Spark types from
    its schema; geometry columns are WKB with their CRS in the column metadata."""
    options = {"batch_size": batch_size} if batch_size else {}
    result = export_snapshot(repo, ref, _staging(spark, staging), tables=[name], include_quads=False,
                             partition_on={name: partition_on} if partition_on else None,
                             filesystem=filesystem, **options)
    return result_dataframe(spark, result, name)


def changes_dataframe(repo: Any, a: str, b: str, spark: SparkSession, *, staging: str | os.PathLike | None = None,
                      batch_size: int | None = None, filesystem: Any = None) -> DataFrame:
    """The quads inserted and deleted from commit ``a`` to commit ``b``, as ``repo.diff(a,
    b)`` gives them: ``_change_type`` (``insert`` / ``delete``), ``_from_commit``,
    ``_to_commit`` and the quad's columns. (A table's changes: :func:`export_changes`
    with ``tables=[name]``, then :func:`result_dataframe`.)"""
    options = {"batch_size": batch_size} if batch_size else {}
    result = export_changes(repo, a, b, _staging(spark, staging), filesystem=filesystem, tables=[], **options)
    return result_dataframe(spark, result, QUADS_TABLE)
