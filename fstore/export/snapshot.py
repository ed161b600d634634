"""Export a commit (or the changes between two) as Kartothek datasets, one per table.

``export_snapshot(repo, ref, dest)`` writes the quads (dataset ``quads``) and each Kart
table (a dataset named by the table) to the storage location ``dest``. Exporting again
into the same location adds a new version to each dataset: only the partitions whose rows
changed since the commit of the current version are written, the others are kept by
reference. ``export_changes(repo, a, b, dest)`` writes the change rows (see
:mod:`.changes`) the same way.

>>> import tempfile, fstore
>>> from fstore import IRI
>>> from fstore.export.kartothek import location, read_table
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 42)
>>> out = tempfile.mkdtemp()
>>> result = export_snapshot(repo, "main", out, indices=["predicate"])   # quads by graph
>>> result.tables["quads"].rows, result.commit_id == repo.head("main")
(1, True)
>>> read_table(location(out), "quads").column("object_int").to_pylist()
[42]
>>> with repo.transaction("main", message="n") as tx:
...     fstore.add(tx, IRI("urn:h"), IRI("urn:s"), IRI("urn:p"), 43)
>>> again = export_snapshot(repo, "main", out, indices=["predicate"])
>>> again.tables["quads"].version, again.tables["quads"].reused, len(again.tables["quads"].files)
(2, 1, 1)
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..ops.diff import diff_seqs
from ..errors import UnknownRefError
from ..tables.access import view_source
from ..tables.dataset import list_datasets
from .arrow import BATCH_SIZE, QUADS_SCHEMA, table_arrow_schema, table_batches, table_crs, view_quad_batches
from .changes import quad_change_batches, table_change_batches
from .dataset_writer import DatasetWriter, TableResult
from .errors import ExportError, require
from .kartothek import (
    FORMAT_VERSION,
    Location,
    find_metadata,
    location,
    metadata_key,
    partition_columns,
    table_identifier,
    table_schema,
)
from .terms import describe_node

pafs = require("pyarrow.fs", "the Kartothek export")

__all__ = ["ExportResult", "export_snapshot", "export_changes", "table_names", "QUADS_TABLE", "repository_name"]

QUADS_TABLE = "quads"
QUADS_PARTITION = ("graph",)  # one partition per graph: a change rewrites only its graphs
Progress = Callable[[str, int], None]


@dataclass
class ExportResult:
    """What an export wrote: per table (``tables[name]``) its dataset, version, rows and
    files; the storage location and the source commit."""

    location: Location
    commit_id: str | None
    tables: dict[str, TableResult]
    metadata: dict[str, str]

    def metadata_url(self, table: str = QUADS_TABLE) -> str:
        """The URI of a table's metadata file."""
        return self.location.url(self.tables[table].metadata_key)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables.values())


@dataclass
class _Source:
    """One dataset to write: its table, Arrow schema, partitioning, the batches of the
    whole table, the partition keys whose rows changed since a commit (those a new version
    rewrites; None: it cannot tell) and, when it can read less than the whole table for
    them, the batches holding at least the rows of the partitions that changed since a
    commit."""

    name: str
    schema: Any
    partition_on: tuple[str, ...]
    batches: Callable[[], Iterable[Any]]
    changed_keys: Callable[[str], set[tuple]] | None
    changed_batches: Callable[[str], Iterable[Any]] | None = None  # a superset of the changed partitions' rows


def repository_name(repo: Any) -> str:
    """A repository's name: the last component of its path."""
    return os.path.basename(os.path.normpath(repo.path))


def table_names(view: Any) -> list[str]:
    """The Kart tables (datasets) of a view, sorted."""
    return list_datasets(view_source(view))


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


def _quads_by_graph(partition_on: Any, quads_table: str) -> bool:
    """Whether the quads take their default partitioning (by graph): unless
    ``partition_on`` is empty (nothing partitioned) or names the quads' own."""
    if isinstance(partition_on, Mapping):
        return quads_table not in partition_on
    return partition_on is None or bool(partition_on)


def _target(dest: str | os.PathLike, filesystem: Any) -> Location:
    """The storage location, refused when it is a file."""
    where = location(dest, filesystem)
    if where.filesystem.get_file_info(where.root).type == pafs.FileType.File:
        raise ExportError(f"cannot export to {where.uri}: it is a file, not a directory")
    return where


def _resolve(repo: Any, ref: str) -> str | None:
    try:
        return repo.resolve(ref)
    except UnknownRefError as exc:
        raise UnknownRefError(f"{exc.args[0] if exc.args else ref} (exporting {repository_name(repo)} at "
                              f"{repo.path})") from None


def _changed_graphs(repo: Any, a: str, b: str | None) -> list[Any]:
    """The graphs (as stored; None the default graph) holding a quad that changed from
    commit ``a`` to ``b``: O(changes). Read from the stored diff, not ``repo.diff``: its
    RDF terms name no stored graph when the graph is a plain value (the string "g1" comes
    back as ``Literal("g1")``), and reading such a graph would find no quads."""
    with repo.storage.read() as snapshot:
        changes = diff_seqs(snapshot, snapshot.resolve(a), snapshot.resolve(b))
        graphs = {quad[0] for _, quad in changes}
    return sorted(graphs, key=lambda g: (g is not None, repr(g)))


def _changed_keys(batches: Iterable[Any], partition_on: tuple[str, ...]) -> set[tuple]:
    """The partition keys of a table's change rows (``{()}`` when unpartitioned and
    anything changed)."""
    keys: set[tuple] = set()
    for batch in batches:
        if batch.num_rows:
            columns = [batch.column(c).to_pylist() for c in partition_on]
            keys.update(zip(*columns) if partition_on else [()])
    return keys


def _graph_keys(graphs: Iterable[Any]) -> set[tuple]:
    """The partition keys (by graph) of stored graphs: the ``graph`` column's text, as
    the quads' batches write it."""
    return {(describe_node(graph)[0],) for graph in graphs}


def _quads_source(repo: Any, view: Any, commit_id: str | None, name: str, partition_on: tuple[str, ...],
                  batch_size: int) -> _Source:
    """The quads' dataset. Partitioned by graph, the graphs changed since a commit give
    both the keys to rewrite and the quads to read, so the diff runs once (per commit)
    and no change row is built; otherwise the keys come from the change rows."""
    whole = functools.partial(view_quad_batches, view, batch_size)
    if partition_on != QUADS_PARTITION:
        return _Source(name, QUADS_SCHEMA, partition_on, whole, lambda old: _changed_keys(
            quad_change_batches(repo, old, commit_id, batch_size)[1], partition_on))
    changed = functools.lru_cache(maxsize=None)(lambda old: _changed_graphs(repo, old, commit_id))
    return _Source(name, QUADS_SCHEMA, partition_on, whole, lambda old: _graph_keys(changed(old)),
                   lambda old: view_quad_batches(view, batch_size, changed(old)))


def _rewrite(repo: Any, where: Location, source: _Source, indices: Sequence[str], previous: Mapping[str, Any] | None,
             commit_id: str | None) -> set[tuple] | None:
    """The partition keys the new version of a dataset rewrites, or None for all: all
    when there is no previous version made the same way (format, schema, partitioning,
    indices) from a commit this repository has."""
    if previous is None or source.changed_keys is None:
        return None
    meta = previous.get("metadata", {})
    if meta.get("datae.table") != source.name:
        raise ExportError(f"{where.url(metadata_key(previous['dataset_uuid']))} holds table "
                          f"{meta.get('datae.table')!r}, not {source.name!r}: export to another location")
    old_commit = meta.get("datae.source_commit")
    if (meta.get("datae.export_format") != str(FORMAT_VERSION) or not old_commit or commit_id is None
            or tuple(partition_columns(previous)) != source.partition_on
            or sorted(previous.get("indices", {})) != sorted(c for c in indices if c in source.schema.names)):
        return None
    old_schema = table_schema(where, previous)
    if not old_schema.remove_metadata().equals(source.schema.remove_metadata()) or \
            (old_schema.metadata or {}).get(b"kart.schema.json") != (source.schema.metadata or {}).get(b"kart.schema.json"):
        return None
    try:
        repo.resolve(old_commit)
    except UnknownRefError:
        return None
    return source.changed_keys(old_commit)


def _write(repo: Any, where: Location, sources: Sequence[_Source], indices: Sequence[str], metadata: Mapping[str, str],
           commit_id: str | None, progress: Progress | None, options: Mapping[str, Any],
           incremental: bool = True) -> dict[str, TableResult]:
    """Write a version of each source's dataset, then commit them all (metadata last);
    on any error remove what was written."""
    writers: list[DatasetWriter] = []
    try:
        for source in sources:
            dataset = table_identifier(source.name)
            previous = find_metadata(where, dataset)
            _check_kind(where, dataset, previous, metadata["datae.kind"])
            rewrite = _rewrite(repo, where, source, indices, previous, commit_id) if incremental else None
            writer = DatasetWriter(where, dataset, source.schema, partition_on=source.partition_on, indices=indices,
                                   previous=previous, rewrite=rewrite, name=source.name, **options)
            writers.append(writer)
            if rewrite is None:
                batches = source.batches()
            elif not rewrite:
                batches = iter(())
            elif source.changed_batches is not None:
                batches = source.changed_batches(previous["metadata"]["datae.source_commit"])
            else:
                batches = source.batches()  # the writer keeps only the rows of the keys to rewrite
            writer.write(batches, progress)
        for writer in writers:
            writer.commit(metadata)
    except BaseException:
        for writer in writers:
            writer.abort()
        raise
    return {w.result.name: w.result for w in writers}


def _check_kind(where: Location, dataset: str, previous: Mapping[str, Any] | None, kind: str) -> None:
    """Refuse to add a version of changes to a dataset of snapshots, or the reverse."""
    if previous is None:
        return
    found = previous.get("metadata", {}).get("datae.kind")
    if found != kind:
        raise ExportError(f"{where.url(metadata_key(dataset))} holds {found or 'another'} exports, not {kind} "
                          f"exports: write them to another location")


def _check_indices(indices: Sequence[str], columns: Mapping[str, Sequence[str]]) -> list[str]:
    wanted = list(indices or ())
    missing = [c for c in wanted if not any(c in cols for cols in columns.values())]
    if missing:
        raise ExportError(f"no exported table has the column(s) {', '.join(missing)} to index")
    return wanted


def _options(batch_size: int, compression: str, rows_per_file: int | None) -> dict[str, Any]:
    options: dict[str, Any] = {"compression": compression, "row_group_size": batch_size}
    if rows_per_file:
        options["rows_per_file"] = rows_per_file
    return options


def export_snapshot(repo: Any, ref: str, dest: str | os.PathLike, *, tables: Sequence[str] | None = None,
                    partition_on: Sequence[str] | Mapping[str, Sequence[str]] | str | None = None,
                    indices: Sequence[str] | None = None, progress: Progress | None = None,
                    batch_size: int = BATCH_SIZE, filesystem: Any = None, compression: str = "snappy",
                    rows_per_file: int | None = None, quads_table: str = QUADS_TABLE, include_quads: bool = True,
                    incremental: bool = True) -> ExportResult:
    """Write the state at ``ref`` to the storage location ``dest``: one Kartothek dataset
    per table, each a new version of the dataset already there (metadata written last).

    * ``dest``: a local directory, a URI (``s3://…``, ``file://…``, any scheme pyarrow or
      fsspec knows) or a path on ``filesystem``.
    * ``tables``: Kart tables to export (None: all of them; ``[]``: none). The quads are
      exported as dataset ``quads_table`` unless ``include_quads`` is false.
    * ``partition_on``: column names (each table having them all is partitioned on them)
      or ``{table: [columns]}``. The quads are partitioned by ``graph`` unless this names
      theirs (``{"quads": []}``: not partitioned) or is empty (``[]``: nothing is).
    * ``indices``: columns to build secondary indices for (in every table having them).
    * ``progress``: called as ``progress(table, rows_so_far)`` after each batch.
    * ``incremental``: write only the partitions that changed since the version there
      (False: write every partition anew).

    Memory stays bounded by ``batch_size`` rows (plus the indices' distinct values).
    """
    commit_id = _resolve(repo, ref)
    view = repo.at(ref)
    where = _target(dest, filesystem)
    wanted = table_names(view) if tables is None else list(tables)
    for name in wanted:
        if name == quads_table:
            raise ExportError(f"a table is named {name!r} like the quads: pass another quads_table name")
    found: dict[str, Any] = {name: view.table(name) for name in wanted}
    schemas = {name: table_arrow_schema(t.schema, table_crs(t), name=name) for name, t in found.items()}
    if include_quads:
        schemas = {quads_table: QUADS_SCHEMA, **schemas}
    parts = _partitioning(partition_on, list(schemas), {n: s.names for n, s in schemas.items()})
    if include_quads and _quads_by_graph(partition_on, quads_table):
        parts.setdefault(quads_table, QUADS_PARTITION)
    index_columns = _check_indices(indices or (), {n: s.names for n, s in schemas.items()})

    def source(name: str) -> _Source:
        partition = parts.get(name, ())
        if name == quads_table and include_quads:
            return _quads_source(repo, view, commit_id, name, partition, batch_size)
        return _Source(name, schemas[name], partition,
                       lambda: table_batches(found[name], batch_size, arrow_schema=schemas[name]),
                       lambda old: _changed_keys(table_change_batches(repo, old, commit_id, name, batch_size)[1],
                                                 partition))

    metadata = {
        "datae.kind": "snapshot",
        "datae.source_commit": commit_id or "",
        "datae.source_ref": ref,
        "datae.repository": repository_name(repo),
        "creation_time": _dt.datetime.now(_dt.timezone.utc).isoformat(),
    }
    written = _write(repo, where, [source(n) for n in schemas], index_columns, metadata, commit_id, progress,
                     _options(batch_size, compression, rows_per_file), incremental)
    return ExportResult(where, commit_id, written, metadata)


def export_changes(repo: Any, a: str, b: str, dest: str | os.PathLike, *, tables: Sequence[str] | None = None,
                   partition_on: Sequence[str] | Mapping[str, Sequence[str]] | str | None = None,
                   indices: Sequence[str] | None = None, progress: Progress | None = None,
                   batch_size: int = BATCH_SIZE, filesystem: Any = None, compression: str = "snappy",
                   quads_table: str = QUADS_TABLE, include_quads: bool = True) -> ExportResult:
    """Write the changes from ref ``a`` to ref ``b`` to ``dest``, one dataset per table as
    :func:`export_snapshot` does (``quads``: quads inserted and deleted; a table: rows
    inserted, deleted, and updated as a pre- and a post-image; see :mod:`.changes`).
    ``tables`` None: every table at ``a`` or ``b``. Each export is a new version of the
    datasets there holding only its own changes."""
    from_id, to_id = _resolve(repo, a), _resolve(repo, b)
    where = _target(dest, filesystem)
    if tables is None:
        names = sorted(set(table_names(repo.at(a))) | set(table_names(repo.at(b))))
    else:
        names = list(tables)
    changes = {name: table_change_batches(repo, a, b, name, batch_size) for name in names}
    if include_quads:
        changes = {quads_table: quad_change_batches(repo, a, b, batch_size), **changes}
    parts = _partitioning(partition_on, list(changes), {n: s.names for n, (s, _) in changes.items()})
    index_columns = _check_indices(indices or (), {n: s.names for n, (s, _) in changes.items()})
    sources = [_Source(name, schema, parts.get(name, ()), (lambda batches=batches: batches), None)
               for name, (schema, batches) in changes.items()]
    metadata = {
        "datae.kind": "changes",
        "datae.from_commit": from_id or "",
        "datae.to_commit": to_id or "",
        "datae.source_commit": to_id or "",
        "datae.source_ref": f"{a}..{b}",
        "datae.repository": repository_name(repo),
        "creation_time": _dt.datetime.now(_dt.timezone.utc).isoformat(),
    }
    written = _write(repo, where, sources, index_columns, metadata, to_id, progress,
                     _options(batch_size, compression, None), incremental=False)
    return ExportResult(where, to_id, written, metadata)

