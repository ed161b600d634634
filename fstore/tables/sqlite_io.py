"""SQLite and GeoPackage tables in and out (with the standard library's ``sqlite3``).

Import maps declared column types to Kart types as Kart's GeoPackage importer does
(``INTEGER``/``BIGINT`` 64-bit, ``MEDIUMINT`` 32, ``SMALLINT`` 16, ``TINYINT`` 8, ``REAL``/
``DOUBLE`` float 64, ``FLOAT`` float 32, ``TEXT(n)``/``VARCHAR(n)`` text of length n,
``BLOB``, ``BOOLEAN``, ``DATE``, ``DATETIME``/``TIMESTAMP``, ``TIME``, ``NUMERIC(p,s)``/
``DECIMAL(p,s)``, and the GeoPackage geometry types); a column without a declared type gets
its type from its values. The primary key is the table's own (``PRIMARY KEY``) or ``pk``.
In a GeoPackage, the geometry column's type and CRS come from ``gpkg_geometry_columns``
and ``gpkg_spatial_ref_sys`` (``geometryCRS`` ``EPSG:4326`` and ``meta/crs/EPSG:4326.wkt``),
geometries are normalised to Kart's form (little-endian, srs_id 0, Kart's envelope rules),
and datetimes are UTC.

Export writes one table (``.gpkg`` files get the GeoPackage metadata tables: spatial
reference systems, contents, geometry columns).

>>> import sqlite3, tempfile, os, fstore
>>> d = tempfile.mkdtemp(); db = os.path.join(d, "src.sqlite")
>>> con = sqlite3.connect(db)
>>> _ = con.execute("CREATE TABLE towns (fid INTEGER PRIMARY KEY, name TEXT(50), pop MEDIUMINT)")
>>> _ = con.execute("INSERT INTO towns VALUES (1, 'Ōtaki', 6000), (2, 'Levin', NULL)"); con.commit(); con.close()
>>> repo = fstore.open(os.path.join(d, "repo"))
>>> with repo.transaction("main", message="import") as tx:
...     import_sqlite(tx, "towns", db)
{'inserted': 2, 'updated': 0, 'deleted': 0, 'unchanged': 0}
>>> t = repo.at("main").table("towns")
>>> [(c.name, c.data_type, c.extra_type_info) for c in t.schema]
[('fid', 'integer', {'size': 64}), ('name', 'text', {'length': 50}), ('pop', 'integer', {'size': 32})]
>>> export_sqlite(t, os.path.join(d, "out.gpkg"))
2
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..progress import Progress, counted
from .errors import ColumnValueError, TableImportError
from .geometry import Geometry
from .ingest import ColumnSpec, infer_value_type
from .store import load_table
from .schema import Column, Schema
from .types import GEOMETRY_TYPES

if TYPE_CHECKING:
    from ..transaction import Transaction

__all__ = ["sqlite_columns", "import_sqlite", "export_sqlite", "sql_type"]

_TYPE_RE = re.compile(r"\s*([A-Za-z ]+?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")
_INT_SIZES = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 32, "INT": 64, "INTEGER": 64, "BIGINT": 64}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", (name,)).fetchone() is not None


def _map_type(declared: str, source: str, column: str) -> tuple[str, dict] | None:
    """Kart type of a declared SQLite type, None when undeclared."""
    if not declared.strip():
        return None
    m = _TYPE_RE.fullmatch(declared)
    if not m:
        return "text", {}
    base = m.group(1).strip().upper()
    n = int(m.group(2)) if m.group(2) else None
    scale = int(m.group(3)) if m.group(3) else None
    if base in _INT_SIZES:
        return "integer", {"size": _INT_SIZES[base]}
    if base in ("REAL", "DOUBLE", "DOUBLE PRECISION"):
        return "float", {"size": 64}
    if base == "FLOAT":
        return "float", {"size": 32}
    if base in ("BOOLEAN", "BOOL"):
        return "boolean", {}
    if base in ("TEXT", "VARCHAR", "CHAR", "CHARACTER", "NVARCHAR", "CLOB", "STRING"):
        return "text", ({"length": n} if n else {})
    if base == "BLOB":
        return "blob", ({"length": n} if n else {})
    if base == "JSON":
        return "json", {}
    if base == "DATE":
        return "date", {}
    if base in ("DATETIME", "TIMESTAMP"):
        return "timestamp", {}
    if base == "TIME":
        return "time", {}
    if base in ("NUMERIC", "DECIMAL"):
        extra = {}
        if n:
            extra["precision"] = n
        if scale is not None:
            extra["scale"] = scale
        return "numeric", extra
    if base in GEOMETRY_TYPES:
        return "geometry", {"geometryType": base}
    return "text", {}


def sqlite_columns(con: sqlite3.Connection, table: str, source: str = "") -> tuple[list[ColumnSpec], list[str], dict[str, str]]:
    """``(column specs, primary-key columns, crs definitions)`` of a SQLite / GeoPackage
    table. Columns without a declared type are typed from their values."""
    info = con.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
    if not info:
        raise TableImportError(source, f"has no table {table!r}")
    gpkg = _has_table(con, "gpkg_geometry_columns")
    geometry: dict[str, tuple[str, str | None, str | None]] = {}
    if gpkg:
        for column, type_name, srs_id, z, m in con.execute(
                "SELECT column_name, geometry_type_name, srs_id, z, m FROM gpkg_geometry_columns WHERE table_name = ?",
                (table,)):
            ident, wkt = None, None
            row = con.execute("SELECT organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys "
                              "WHERE srs_id = ?", (srs_id,)).fetchone()
            if row is not None and srs_id not in (0, -1):
                ident, wkt = f"{row[0].upper()}:{row[1]}", row[2]
            suffix = ("Z" if z == 1 else "") + ("M" if m == 1 else "")
            geometry[column] = (type_name.upper() + (" " + suffix if suffix else ""), ident, wkt)
    specs: list[ColumnSpec] = []
    pk = [name for _, name, *_rest in sorted((r for r in info if r[5]), key=lambda r: r[5])]
    crs: dict[str, str] = {}
    for _cid, name, declared, _notnull, _default, _pk in info:
        if name in geometry:
            gtype, ident, wkt = geometry[name]
            extra = {"geometryType": gtype}
            if ident:
                extra["geometryCRS"] = ident
                crs[ident] = wkt
            specs.append((name, "geometry", extra))
            continue
        mapped = _map_type(declared or "", source, name)
        if mapped is None:
            values = (v for (v,) in con.execute(f"SELECT {_quote(name)} FROM {_quote(table)}"))
            mapped = infer_value_type(values)
        if mapped[0] == "timestamp" and gpkg:
            mapped = ("timestamp", {"timezone": "UTC"})
        specs.append((name, *mapped))
    return specs, pk, crs


def _convert(spec: ColumnSpec, value: Any) -> Any:
    name, t, extra = spec
    if value is None:
        return None
    if t == "boolean" and isinstance(value, int):
        return bool(value)
    if t == "geometry" and isinstance(value, (bytes, bytearray, memoryview)):
        return Geometry(bytes(value)).normalise() if bytes(value[:2]) == b"GP" else bytes(value)
    if t == "timestamp" and isinstance(value, str):
        try:
            parsed = _dt.datetime.fromisoformat(value.replace(" ", "T"))
        except ValueError:
            return value
        if parsed.tzinfo is not None and extra.get("timezone") != "UTC":
            return value
        return parsed
    if t == "json" and isinstance(value, str):
        return json.loads(value)
    if t == "float" and isinstance(value, int):
        return float(value)
    if t == "text" and not isinstance(value, str):
        return str(value)
    return value


def _rows(con: sqlite3.Connection, table: str, specs: list[ColumnSpec], source: str,
          lines: list[int]) -> Iterator[dict[str, Any]]:
    names = ", ".join(_quote(s[0]) for s in specs)
    for rowid, *values in con.execute(f"SELECT rowid, {names} FROM {_quote(table)}"):
        row = {}
        for spec, value in zip(specs, values):
            try:
                row[spec[0]] = _convert(spec, value)
            except (ColumnValueError, ValueError) as e:
                raise TableImportError(source, f"value {value!r:.80} cannot be read ({e})", line=rowid, column=spec[0],
                                       value=value) from None
        lines.append(rowid)
        yield row


def import_sqlite(tx: Transaction, name: str, path: str | os.PathLike[str], table: str | None = None, *,
                  pk: str | Sequence[str] | None = None, replace: bool = False, title: str | None = None,
                  description: str | None = None, mode: str | None = None,
                  progress: Progress | None = None) -> dict[str, int]:
    """Load table ``table`` of a SQLite database or GeoPackage (default: its only table)
    into table ``name``; like :func:`~.store.load_table` (all or nothing; ``mode``
    insert, upsert or replace). Errors name the
    file, the row (its rowid, as ``line``) and the column. ``progress`` hears the rows
    read (:mod:`fstore.progress`, phase ``"read"``)."""
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise TableImportError(source, "no such file")
    con = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        table = table or _only_table(con, source)
        specs, table_pk, crs = sqlite_columns(con, table, source)
        pk_list = [pk] if isinstance(pk, str) else list(pk or table_pk)
        lines: list[int] = []
        where = lambda i: f"{source}, table {table!r}, rowid {lines[i]}"  # noqa: E731
        if title is None and _has_table(con, "gpkg_contents"):
            row = con.execute("SELECT identifier, description FROM gpkg_contents WHERE table_name = ?", (table,)).fetchone()
            if row is not None:
                title = title or row[0] or None
                description = description or row[1] or None
        rows = _rows(con, table, specs, source, lines)
        if progress is not None:
            rows = counted(rows, "read", progress, None)
        return load_table(tx, name, specs, rows, pk=pk_list, replace=replace,
                          where=where, title=title, description=description, crs=crs, mode=mode)
    except sqlite3.DatabaseError as e:
        raise TableImportError(source, f"cannot be read as SQLite ({e})") from None
    finally:
        con.close()


def _only_table(con: sqlite3.Connection, source: str) -> str:
    if _has_table(con, "gpkg_contents"):
        names = [r[0] for r in con.execute("SELECT table_name FROM gpkg_contents WHERE data_type IN ('features', 'attributes')")]
    else:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    if len(names) != 1:
        raise TableImportError(source, f"holds {len(names)} tables ({', '.join(names) or 'none'}): name the one to import")
    return names[0]


def sql_type(col: Column) -> str:
    """The SQLite / GeoPackage declared type of a Kart column."""
    t, info = col.data_type, col.extra_type_info
    if t == "integer":
        return {8: "TINYINT", 16: "SMALLINT", 32: "MEDIUMINT"}.get(info.get("size"), "INTEGER")
    if t == "float":
        return "FLOAT" if info.get("size") == 32 else "REAL"
    if t in ("text", "blob"):
        base = "TEXT" if t == "text" else "BLOB"
        return f"{base}({info['length']})" if info.get("length") else base
    if t == "numeric":
        p, s = info.get("precision"), info.get("scale")
        return f"NUMERIC({p},{s or 0})" if p else "NUMERIC"
    if t == "geometry":
        return (info.get("geometryType") or "GEOMETRY").split()[0]
    return {"boolean": "BOOLEAN", "date": "DATE", "timestamp": "DATETIME", "time": "TIME", "interval": "TEXT",
            "json": "JSON"}[t]


def _to_sql(col: Column, value: Any) -> Any:
    """A stored value as SQLite takes it: geometry as GeoPackage bytes, a json value as
    its JSON text."""
    if value is None:
        return None
    if col.data_type == "json":
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    if isinstance(value, Geometry):
        return bytes(value)
    return value


def export_sqlite(table: Any, path: str | os.PathLike[str], name: str | None = None, *, gpkg: bool | None = None) -> int:
    """Write a table (``view.table(name)``) into a SQLite database or GeoPackage (chosen
    by ``gpkg``, else by a ``.gpkg`` suffix), replacing a table of the same name; returns
    rows written."""
    dest = os.fspath(path)
    gpkg = dest.lower().endswith(".gpkg") if gpkg is None else gpkg
    sql_name = name or table.name.replace("/", "_")
    schema: Schema = table.schema
    con = sqlite3.connect(dest)
    try:
        with con:
            if gpkg:
                _gpkg_setup(con, table, sql_name)
            con.execute(f"DROP TABLE IF EXISTS {_quote(sql_name)}")
            cols = ", ".join(f"{_quote(c.name)} {sql_type(c)}" for c in schema.columns)
            pk = ", ".join(_quote(c.name) for c in schema.pk_columns)
            con.execute(f"CREATE TABLE {_quote(sql_name)} ({cols}, PRIMARY KEY ({pk}))")
            marks = ", ".join("?" for _ in schema.columns)
            columns = schema.columns
            n = 0

            def rows() -> Iterator[list[Any]]:
                nonlocal n
                for row in table.rows(python=False):
                    n += 1
                    yield [_to_sql(c, row[c.name]) for c in columns]

            con.executemany(f"INSERT INTO {_quote(sql_name)} VALUES ({marks})", rows())
        return n
    finally:
        con.close()


def _gpkg_setup(con: sqlite3.Connection, table: Any, sql_name: str) -> None:
    con.execute("PRAGMA application_id = 1196444487")  # "GPKG"
    con.execute("PRAGMA user_version = 10300")
    con.execute("CREATE TABLE IF NOT EXISTS gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, "
                "organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, "
                "description TEXT)")
    con.execute("CREATE TABLE IF NOT EXISTS gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, "
                "identifier TEXT UNIQUE, description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT "
                "(strftime('%Y-%m-%dT%H:%M:%fZ','now')), min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER)")
    con.execute("CREATE TABLE IF NOT EXISTS gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, "
                "geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL, "
                "PRIMARY KEY (table_name, column_name))")
    con.executemany("INSERT OR IGNORE INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)", [
        ("Undefined cartesian SRS", -1, "NONE", -1, "undefined", None),
        ("Undefined geographic SRS", 0, "NONE", 0, "undefined", None),
    ])
    crs = table.state.crs() if hasattr(table, "state") else {}
    geoms = table.schema.geometry_columns
    srs_id = 0
    for col in geoms:
        ident = col.extra_type_info.get("geometryCRS")
        if ident and ":" in ident and ident.split(":", 1)[1].isdigit():
            org, code = ident.split(":", 1)
            srs_id = int(code)
            con.execute("INSERT OR REPLACE INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)",
                        (ident, srs_id, org, srs_id, crs.get(ident, "undefined"), None))
        gtype = (col.extra_type_info.get("geometryType") or "GEOMETRY").split()
        dims = gtype[1] if len(gtype) > 1 else ""
        con.execute("DELETE FROM gpkg_geometry_columns WHERE table_name = ?", (sql_name,))
        con.execute("INSERT INTO gpkg_geometry_columns VALUES (?, ?, ?, ?, ?, ?)",
                    (sql_name, col.name, gtype[0], srs_id, int("Z" in dims), int("M" in dims)))
    con.execute("INSERT OR REPLACE INTO gpkg_contents (table_name, data_type, identifier, description, srs_id) "
                "VALUES (?, ?, ?, ?, ?)", (sql_name, "features" if geoms else "attributes",
                                           getattr(table, "title", None) or sql_name,
                                           getattr(table, "description", None) or "", srs_id if geoms else None))
