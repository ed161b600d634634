"""Export a commit as a Kartothek dataset: the quads, and Kart tables with their types.

>>> import tempfile, fstore
>>> from fstore import IRI
>>> from fstore.export.kartothek import location, read_table
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 42)
>>> out = tempfile.mkdtemp()
>>> result = export_snapshot(repo, "main", out, partition_on=["graph"], indices=["predicate"])
>>> result.tables["quads"].rows, result.metadata["datae.source_commit"] == repo.head("main")
(1, True)
>>> read_table(location(out), "quads").column("object_int").to_pylist()
[42]
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .arrow import (
    BATCH_SIZE,
    CHANGES_SCHEMA,
    QUADS_SCHEMA,
    change_batches,
    row_batches,
    table_arrow_schema,
    view_quad_batches,
)
from .errors import ExportError
from .kartothek import METADATA_SUFFIX, DatasetWriter, Location, TableResult, location

__all__ = ["ExportResult", "export_snapshot", "export_changes", "table_names", "open_table", "QUADS_TABLE", "repository_name"]

QUADS_TABLE = "quads"
Progress = Callable[[str, int], None]


@dataclass
class ExportResult:
    """What :func:`export_snapshot` wrote: the dataset's uuid, its metadata file (key below
    the storage location and full URI), the source commit, and rows and files per table."""

    dataset_uuid: str
    location: Location
    metadata_key: str
    commit_id: str | None
    tables: dict[str, TableResult]
    metadata: dict[str, str]

    @property
    def metadata_url(self) -> str:
        return self.location.url(self.metadata_key)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables.values())


def repository_name(repo: Any) -> str:
    """A repository's name: the last component of its path."""
    return os.path.basename(os.path.normpath(repo.path))


def table_names(view: Any) -> list[str]:
    """The Kart tables (datasets) of a view, sorted."""
    from ..tables.access import view_source
    from ..tables.dataset import list_datasets

    return list_datasets(view_source(view))


def open_table(view: Any, name: str) -> tuple[Any, Iterable[Mapping[str, Any]], dict[str, str]]:
    """``(schema, rows, crs definitions)`` of table ``name`` at a view, through
    ``view.table(name)`` (rows are streamed, with Kart's stored values: the export turns
    them into Arrow values itself, whole columns at a time where it can)."""
    table = view.table(name)
    state = getattr(table, "state", None)
    crs = state.crs() if state is not None and hasattr(state, "crs") else {}
    return table.schema, table.rows(python=False), dict(crs)


def _partitioning(partition_on: Any, names: Sequence[str], columns: Mapping[str, Sequence[str]]) -> dict[str, tuple]:
    if partition_on is None:
        return {}
    if isinstance(partition_on, Mapping):
        unknown = set(partition_on) - set(names)
        if unknown:
            raise ExportError(f"partition_on names tables that are not exported: {', '.join(sorted(unknown))}")
        return {name: tuple([cols] if isinstance(cols, str) else cols) for name, cols in partition_on.items()}
    cols = (partition_on,) if isinstance(partition_on, str) else tuple(partition_on)
    chosen = {name: cols for name in names if all(c in columns[name] for c in cols)}
    if cols and not chosen:
        raise ExportError(f"no exported table has the column(s) {', '.join(cols)} to partition on")
    return chosen


def export_snapshot(repo: Any, ref: str, dest: str | os.PathLike, *, tables: Sequence[str] | None = None,
                    partition_on: Sequence[str] | Mapping[str, Sequence[str]] | str | None = None,
                    indices: Sequence[str] | None = None, progress: Progress | None = None,
                    batch_size: int = BATCH_SIZE, filesystem: Any = None, dataset_uuid: str | None = None,
                    compression: str = "snappy", rows_per_file: int | None = None,
                    quads_table: str = QUADS_TABLE, include_quads: bool = True) -> ExportResult:
    """Write the state at ``ref`` to ``dest`` as a Kartothek dataset and return what was
    written. The metadata file is written last, so a crash leaves no dataset.

    * ``dest``: a local directory, a URI (``s3://…``, ``file://…``, any scheme pyarrow or
      fsspec knows) or a path on ``filesystem``.
    * ``tables``: Kart tables to export (None: all of them; ``[]``: none). The quads are
      always exported, as table ``quads_table``.
    * ``partition_on``: column names (each table having them all is partitioned on them,
      e.g. ``["graph"]`` for quads) or ``{table: [columns]}``.
    * ``indices``: columns to build secondary indices for (in every table having them).
    * ``progress``: called as ``progress(table, rows_written_so_far)`` after each batch.

    Memory stays bounded by ``batch_size`` rows (plus the indices' distinct values).
    """
    view = repo.at(ref)
    commit_id = view.commit_id
    wanted = table_names(view) if tables is None else list(tables)
    names = ([quads_table] if include_quads else []) + wanted
    sources: dict[str, tuple[Any, Any, Any]] = {}
    columns: dict[str, Sequence[str]] = {}
    if include_quads:
        columns[quads_table] = QUADS_SCHEMA.names
    for name in wanted:
        if name == quads_table:
            raise ExportError(f"a table is named {name!r} like the quads: pass another quads_table name")
        schema, rows, crs = open_table(view, name)
        arrow_schema = table_arrow_schema(schema, crs, name=name)
        sources[name] = (schema, rows, arrow_schema)
        columns[name] = arrow_schema.names
    parts = _partitioning(partition_on, names, columns)
    index_columns = list(indices or ())
    missing = [c for c in index_columns if not any(c in cols for cols in columns.values())]
    if missing:
        raise ExportError(f"no exported table has the column(s) {', '.join(missing)} to index")

    where = location(dest, filesystem)
    writer = DatasetWriter(where, dataset_uuid, compression=compression, row_group_size=batch_size,
                           **({"rows_per_file": rows_per_file} if rows_per_file else {}))
    try:
        if include_quads:
            writer.write_table(quads_table, QUADS_SCHEMA, view_quad_batches(view, batch_size),
                               partition_on=parts.get(quads_table, ()), indices=index_columns, progress=progress)
        for name in wanted:
            schema, rows, arrow_schema = sources[name]
            batches = row_batches(schema, rows, batch_size, arrow_schema=arrow_schema, table=name)
            writer.write_table(name, arrow_schema, batches, partition_on=parts.get(name, ()),
                               indices=index_columns, progress=progress)
        metadata = {
            "datae.source_commit": commit_id or "",
            "datae.source_ref": ref,
            "datae.repository": repository_name(repo),
            "creation_time": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        }
        key = writer.commit(metadata)
    except BaseException:
        writer.abort()
        raise
    return ExportResult(writer.uuid, where, key, commit_id, writer.tables, dict(metadata))


def export_changes(repo: Any, a: str, b: str, dest: str | os.PathLike, *, table: str = "changes",
                   partition_on: Sequence[str] | None = None, indices: Sequence[str] | None = None,
                   progress: Progress | None = None, batch_size: int = BATCH_SIZE, filesystem: Any = None,
                   dataset_uuid: str | None = None, compression: str = "snappy") -> ExportResult:
    """Write the delta from commit ``a`` to commit ``b`` (``repo.diff(a, b)``: one row per
    quad added ``+`` or removed ``-``, with both commit ids) as a Kartothek dataset."""
    from_id, to_id = repo.resolve(a), repo.resolve(b)
    parts = {table: tuple([partition_on] if isinstance(partition_on, str) else partition_on)} if partition_on else {}
    where = location(dest, filesystem)
    writer = DatasetWriter(where, dataset_uuid, compression=compression, row_group_size=batch_size)
    try:
        batches = change_batches(repo.diff(a, b), from_id, to_id, batch_size)
        writer.write_table(table, CHANGES_SCHEMA, batches, partition_on=parts.get(table, ()),
                           indices=list(indices or ()), progress=progress)
        metadata = {
            "datae.from_commit": from_id or "",
            "datae.to_commit": to_id or "",
            "datae.source_ref": f"{a}..{b}",
            "datae.repository": repository_name(repo),
            "creation_time": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        }
        key = writer.commit(metadata)
    except BaseException:
        writer.abort()
        raise
    return ExportResult(writer.uuid, where, key, to_id, writer.tables, metadata)


def metadata_key(dataset_uuid: str) -> str:
    """The key of a dataset's metadata file below its storage location."""
    return dataset_uuid + METADATA_SUFFIX
