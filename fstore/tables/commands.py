"""Plain functions behind a ``datae table import | export | show | schema | diff | log |
blame`` command line: each takes an open repository and returns data or text to print.

>>> import tempfile, os, fstore
>>> d = tempfile.mkdtemp(); path = os.path.join(d, "towns.csv")
>>> _ = open(path, "w").write("fid,name\\n1,Ōtaki\\n")
>>> repo = fstore.open(os.path.join(d, "repo"))
>>> table_import(repo, path, pk="fid")["towns"]["inserted"]
1
>>> print(table_show(repo, "main", "towns"))
fid  name
---  -----
1    Ōtaki
(1 row)
>>> table_list(repo, "main")
['towns']
>>> repo.close()
"""

from __future__ import annotations

import heapq
import json
import math
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..files import is_gzipped, without_gz
from ..progress import Progress
from .changes import TableDiff, table_blame, table_diff, table_log
from .csv_io import export_csv, format_stored, import_csv
from .dataset import key_order, list_datasets
from .errors import ExportTargetError, TableImportError
from .store import import_dataframe
from .kart_export import export_kart_tree
from .kart_import import import_kart
from .kart_repo_export import export_kart_repo
from .sqlite_io import export_sqlite, import_sqlite

if TYPE_CHECKING:
    from ..repository import Repository

__all__ = [
    "detect_format",
    "table_import",
    "table_export",
    "table_export_kart",
    "table_list",
    "table_show",
    "table_schema",
    "table_diff_text",
    "table_changes_lines",
    "table_log_text",
    "table_blame_text",
    "import_dataframe",
]

_SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def detect_format(path: str) -> str:
    """``"kart"`` (a Kart repository or V3 tree directory), ``"csv"``, ``"gpkg"`` or
    ``"sqlite"``, from the path."""
    lower = path.lower()
    if os.path.isdir(path) or lower.endswith("/"):
        return "kart"
    if lower.endswith((".csv", ".csv.gz")):
        return "csv"
    if lower.endswith(".gpkg"):
        return "gpkg"
    if lower.endswith(_SQLITE_SUFFIXES):
        return "sqlite"
    raise TableImportError(path, "unknown format: use a .csv (.csv.gz), .gpkg, .sqlite/.db file or a Kart "
                                 "repository directory")


def _branch(repo: Repository, branch: str | None) -> str:
    return branch or getattr(repo, "current_branch", None) or "main"


def table_import(repo: Repository, source: str, *, name: str | None = None, branch: str | None = None,
                 pk: str | Sequence[str] | None = None, table: str | None = None, replace: bool = False,
                 message: str | None = None, author: str = "", format: str | None = None,
                 branch_prefix: str = "", mode: str | None = None,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Import a CSV, SQLite or GeoPackage table as one commit on ``branch`` (table
    ``name``, default: the file's stem; ``mode`` insert, upsert or replace), or a whole
    Kart repository (every commit; its branches under ``branch_prefix``). Without a
    prefix, into a ``branch`` (default: the current one) that has commits, Kart's history
    is grafted onto it (see :func:`import_kart`); with a prefix it stays a history of its
    own, as ``git fetch`` into a namespace would. Returns ``{table: counts}`` or, for
    Kart, ``{"commits": n, "branches": {...}, "tags": {...}}``. ``progress`` hears a
    table's rows read (:mod:`fstore.progress`), then ``("commit", rows, None)`` once
    before the commit writes them."""
    fmt = format or detect_format(source)
    if fmt == "kart":
        target = _branch(repo, branch)
        onto = target if not branch_prefix and repo.branches().get(target) is not None else None
        result = import_kart(repo, source, branch_prefix=branch_prefix, onto=onto)
        return {"commits": len(result.commits), "branches": result.branches, "tags": result.tags}
    name = name or os.path.splitext(without_gz(os.path.basename(source)))[0]
    if fmt not in ("csv", "gpkg", "sqlite"):
        raise TableImportError(source, f"unknown format {fmt!r}")
    with repo.transaction(_branch(repo, branch), message=message or f"Import {os.path.basename(source)} as {name}",
                          author=author) as tx:
        if fmt == "csv":
            counts = import_csv(tx, name, source, pk=pk, replace=replace, mode=mode, progress=progress)
        else:
            counts = import_sqlite(tx, name, source, table, pk=pk, replace=replace, mode=mode, progress=progress)
        if progress is not None:
            progress("commit", counts["inserted"] + counts["updated"] + counts["deleted"], None)
    return {name: counts}


def table_export(repo: Repository, ref: str, dest: str, *, name: str | None = None,
                 format: str | None = None) -> dict[str, int]:
    """Export table ``name`` at ``ref`` to a CSV, SQLite or GeoPackage file, or every
    table (or ``name``) as Kart V3 dataset trees under directory ``dest``. Returns
    ``{table: rows written}``. A CSV named ``.gz`` is gzip-compressed; any other format
    named ``.gz`` is refused (:class:`ExportTargetError`) before anything is written."""
    view = repo.at(ref)
    gz = is_gzipped(dest)
    if format:
        fmt = format
    elif gz:
        fmt = detect_format(without_gz(dest))  # x.sqlite.gz is a SQLite file asked for gzipped
    else:
        fmt = "kart" if dest.endswith("/") or os.path.isdir(dest) or not os.path.splitext(dest)[1] else detect_format(dest)
    if gz and fmt != "csv":
        # SQLite writes pages in place as rows go in: a database cannot be streamed into gzip
        raise ExportTargetError(dest, f"{_NOT_STREAMED[fmt]} is written in place, not as a stream, so it cannot "
                                      f"be gzip-compressed: export to {without_gz(dest)}, then compress that")
    if fmt == "kart":
        return export_kart_tree(view, dest, tables=[name] if name else None)
    if name is None:
        names = list_datasets(view.table_tuples)
        if len(names) != 1:
            raise ExportTargetError(dest, f"name the table to export (tables at {ref!r}: {', '.join(names) or 'none'})")
        name = names[0]
    t = view.table(name)
    if fmt == "csv":
        return {name: export_csv(t, dest)}
    return {name: export_sqlite(t, dest, gpkg=(fmt == "gpkg"))}


_NOT_STREAMED = {"sqlite": "a SQLite database", "gpkg": "a GeoPackage", "kart": "a Kart dataset tree (a directory)"}


def table_export_kart(repo: Repository, dest: str, *, ref: str | None = None) -> dict[str, Any]:
    """The history of ``ref`` (default: every branch and tag) as a Kart V3 repository at
    ``dest`` (:func:`export_kart_repo`). Returns ``{"commits": n, "branches": {...},
    "tags": {...}}`` (git ids)."""
    result = export_kart_repo(repo, dest, ref=ref)
    exported = {c for c in result.commits.values() if c is not None}
    return {"commits": len(exported), "branches": result.branches, "tags": result.tags}


def table_list(repo: Repository, ref: str) -> list[str]:
    """The tables at ``ref``."""
    return list_datasets(repo.at(ref).table_tuples)


def _grid(header: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _cell(value: Any, width: int = 40) -> str:
    text = format_stored(None, value)
    return text if len(text) <= width else text[: width - 1] + "…"


def typed_value(value: Any) -> Any:
    """A stored cell value as a JSON value that keeps its type: null, booleans,
    integers and finite floats as themselves, json documents as they are, blobs as hex,
    geometries as WKT, texts (and dates, times, numerics… as Kart stores them) as
    strings; a float JSON cannot hold (NaN, ±infinity) as its ``repr``.

    >>> [typed_value(v) for v in (None, True, 7, 2.5, "2020-01-02", b"\\x01", {"a": [1]})]
    [None, True, 7, 2.5, '2020-01-02', '01', {'a': [1]}]
    """
    if value is None or isinstance(value, (bool, int, str, dict, list)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return format_stored(None, value)


def _json_line(mark: str, obj: Any) -> str:
    return mark + " " + json.dumps(obj, ensure_ascii=False, allow_nan=False)


def table_show(repo: Repository, ref: str, name: str, *, limit: int | None = 20, pk: Any = None) -> str:
    """The first ``limit`` rows in primary-key order (or the row ``pk``) as a text table."""
    t = repo.at(ref).table(name)
    names = t.schema.column_names
    total = len(t)
    if pk is not None:
        row = t.get(pk, python=False)
        if row is None:
            return f"(no row with key {pk!r} in {name}: {total} row{'s' if total != 1 else ''})"
        rows = [row]
    else:
        in_key_order = _first_by_key(t.features(), limit)
        rows = [t.reader.stored(path, blob) for path, blob in in_key_order]
    body = _grid(names, [[_cell(r[n]) for n in names] for r in rows])
    more = f", showing {len(rows)}" if len(rows) < total else ""
    return f"{body}\n({total} row{'s' if total != 1 else ''}{more})"


def _first_by_key(features: Iterable[tuple[str, bytes]], limit: int | None) -> list[tuple[str, bytes]]:
    """The first ``limit`` (all if None) of ``(path, blob)`` pairs by the primary key each
    path encodes: one pass, memory O(limit)."""
    def key(feature: tuple[str, bytes]) -> bytes:
        return key_order(feature[0])

    if limit is None:
        return sorted(features, key=key)
    return heapq.nsmallest(limit, features, key=key)


def table_schema(repo: Repository, ref: str, name: str) -> str:
    """``schema.json`` at ``ref``, indented for people."""
    return json.dumps(repo.at(ref).table(name).schema.to_dicts(), indent=2, ensure_ascii=False)


def table_diff_text(repo: Repository, a: str, b: str, name: str) -> str:
    """Table ``name``'s changes from ref ``a`` to ref ``b`` as :func:`table_changes_lines`
    prints them (what ``datae table diff`` prints)."""
    return "\n".join(table_changes_lines(table_diff(repo, a, b, name, python=False)))


def table_changes_lines(diff: TableDiff) -> list[str]:
    """The one format of a table's changes, for people and scripts (``datae diff``,
    ``show`` and ``table diff``): a ``table NAME:`` line with the counts, ``schema:``
    lines, then one JSON object per row in primary-key order — ``+`` an inserted row,
    ``-`` a deleted row, ``~`` an updated row's key columns and each changed cell as
    ``[old, new]``. ``diff`` holds stored values (``python=False``); they are printed
    typed (:func:`typed_value`).

    >>> from fstore.tables.changes import RowChange
    >>> d = TableDiff("t", changes=[RowChange((1,), None, {"k": 1, "v": "a"}),
    ...                             RowChange((2,), {"k": 2, "v": "b"}, {"k": 2, "v": "c"}, {"v": ("b", "c")})],
    ...               pk_columns=["k"])
    >>> d.inserted, d.updated = [d.changes[0].new], [d.changes[1]]
    >>> print("\\n".join(table_changes_lines(d)))
    table t: 1 inserted, 1 updated, 0 deleted
    + {"k": 1, "v": "a"}
    ~ {"k": 2, "v": ["b", "c"]}
    """
    lines = [f"table {diff.table}: {len(diff.inserted)} inserted, {len(diff.updated)} updated, "
             f"{len(diff.deleted)} deleted"]
    if diff.schema:
        s = diff.schema
        for label, items in (("added", s.added), ("dropped", s.dropped), ("moved", s.reordered)):
            if items:
                lines.append(f"schema: {label} {', '.join(items)}")
        for _cid, (old, new) in s.renamed.items():
            lines.append(f"schema: renamed {old} -> {new}")
        for _cid, (old, new) in s.type_changed.items():
            lines.append(f"schema: {new.name} {old.data_type}{old.extra_type_info or ''} -> {new.data_type}{new.extra_type_info or ''}")
    for change in diff.changes:
        if change.old is None or change.new is None:
            mark, row = ("+", change.new) if change.old is None else ("-", change.old)
            lines.append(_json_line(mark, {k: typed_value(v) for k, v in row.items()}))
        else:
            keys = {k: typed_value(change.new[k]) for k in diff.pk_columns}
            cells = {k: [typed_value(o), typed_value(n)] for k, (o, n) in change.cells.items()}
            lines.append(_json_line("~", {**keys, **cells}))
    return lines


def table_log_text(repo: Repository, ref: str, name: str, pk: Any) -> str:
    """The commits that changed one row, newest first."""
    lines = []
    for e in table_log(repo, ref, name, pk, python=False):
        c = e.commit
        what = e.kind
        if e.change.cells:
            what += ": " + ", ".join(f"{k} {_cell(o)} -> {_cell(n)}" for k, (o, n) in e.change.cells.items())
        lines.append(f"{c.short_id} {c.time:%Y-%m-%d %H:%M} {c.author or '-'}  {c.message.splitlines()[0] if c.message else ''}  [{what}]")
    return "\n".join(lines) if lines else "(no changes)"


def table_blame_text(repo: Repository, ref: str, name: str, pk: Any, column: str) -> str:
    """Which commit gave the cell its value, and the value (as JSON, typed)."""
    c = table_blame(repo, ref, name, pk, column)
    if c is None:
        return "(no such row)"
    row = repo.at(ref).table(name).get(pk, python=False)
    value = json.dumps(typed_value(None if row is None else row.get(column)), ensure_ascii=False, allow_nan=False)
    return f"{c.short_id} {c.time:%Y-%m-%d %H:%M} {c.author or '-'}  {c.message.splitlines()[0] if c.message else ''}  {column}: {value}"
