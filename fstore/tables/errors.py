"""Typed errors of the table codec (Kart Datasets V2/V3); each says what was wrong and where.

Every class derives from :class:`nstore.errors.DataeError`, and also from the built-in
exception a Python user would expect (``ValueError`` for bad input, ``TypeError`` for a
value of the wrong type), so ``except ValueError`` keeps working.

>>> from fstore.tables.names import validate_dataset_name
>>> try:
...     validate_dataset_name("a:b")
... except DatasetNameError as e:
...     (e.name, e.rule)
('a:b', 'forbidden-character')
"""

from __future__ import annotations

from typing import Any

from nstore.errors import DataeError

__all__ = [
    "TablesError",
    "DatasetNameError",
    "SchemaError",
    "LegendError",
    "PathStructureError",
    "PrimaryKeyError",
    "FeatureError",
    "ColumnValueError",
    "GeometryError",
    "KartRepoError",
    "KartVersionError",
    "ExportTargetError",
    "NoTablesError",
    "TableNotFoundError",
    "ColumnNotFoundError",
    "TableExistsError",
    "RowExistsError",
    "RowNotFoundError",
    "RowValueError",
    "TableImportError",
    "DatasetCorruptError",
]


class TablesError(DataeError):
    """Base class of every error raised by :mod:`fstore.tables`."""


class DatasetNameError(TablesError, ValueError):
    """A dataset name breaks one of Kart's naming rules.

    ``name`` is the offending name and ``rule`` a short tag of the rule broken (e.g.
    ``"empty"``, ``"control-character"``, ``"forbidden-character"``, ``"leading-slash"``,
    ``"trailing-slash"``, ``"empty-component"``, ``"reserved-name"``, ``"dot-component"``,
    ``"trailing-space"``, ``"case-conflict"``, ``"not-utf8"``).
    """

    def __init__(self, name: str, rule: str, message: str) -> None:
        self.name = name
        self.rule = rule
        super().__init__(f"invalid dataset name {name!r} ({rule}): {message}")


class SchemaError(TablesError, ValueError):
    """A ``schema.json`` (or one column of it) is invalid. ``column`` names the column
    (its name, or its index when it has none yet), ``None`` for whole-schema problems."""

    def __init__(self, message: str, *, column: str | int | None = None) -> None:
        self.column = column
        where = f"column {column!r}: " if column is not None else ""
        super().__init__(f"invalid schema: {where}{message}")


class LegendError(TablesError, ValueError):
    """A legend blob is malformed, or a legend name does not match its content."""


class PathStructureError(TablesError, ValueError):
    """A ``path-structure.json`` is invalid (unknown scheme or encoding, branches that the
    encoding cannot express, levels out of range)."""


class PrimaryKeyError(TablesError, TypeError):
    """Primary-key values do not fit the dataset: wrong count, or a type the path scheme
    cannot encode (the ``int`` scheme takes exactly one integer). A ``TypeError``, as in
    Kart."""

    def __init__(self, pk_values: Any, message: str) -> None:
        self.pk_values = pk_values
        super().__init__(f"primary key {pk_values!r}: {message}")


class FeatureError(TablesError, ValueError):
    """A feature blob is malformed, names an unknown legend, or its values do not match
    its legend. ``path`` is the feature's path when known."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        where = f" at {path}" if path else ""
        super().__init__(f"bad feature{where}: {message}")


class ColumnValueError(TablesError, ValueError):
    """A value does not fit its column: wrong type, out of range, too long, unparsable.
    ``column``, ``value`` and ``reason`` say which, what and why."""

    def __init__(self, column: str, value: Any, reason: str) -> None:
        self.column = column
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:57] + "..." + shown[-57:]
        super().__init__(f"column {column!r}: value {shown} {reason}")


class GeometryError(TablesError, ValueError):
    """Bytes are not a valid GeoPackage geometry or WKB, or WKT cannot be parsed.
    ``offset`` is the byte (or character) position of the problem when known."""

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        self.offset = offset
        where = f" at offset {offset}" if offset is not None else ""
        super().__init__(f"invalid geometry{where}: {message}")


class KartRepoError(TablesError):
    """A Kart repository cannot be read: missing git dir, unknown ref or commit, a
    dataset whose meta items are missing or corrupt. ``where`` says what was read."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{message}")


class KartVersionError(KartRepoError, ValueError):
    """A Kart repository whose repository structure version datae cannot read (it reads
    Datasets V2 and V3). ``version`` is what the repository says, ``where`` its git dir."""

    def __init__(self, version: str, *, where: str) -> None:
        self.version = version
        KartRepoError.__init__(self, f"unsupported Kart repository version {version!r} (datae reads versions 2 and 3)",
                               where=where)


class ExportTargetError(TablesError, ValueError):
    """An export cannot be written at ``path``: it is a file, or a directory that is not
    empty (``reason`` says which); nothing was written."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot export to {path}: {reason}")


class NoTablesError(TablesError, ValueError):
    """A ref whose history holds no table, so there is nothing to export. ``ref`` names it."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(f"no tables in the history of {ref!r}: nothing to export")


class TableNotFoundError(TablesError, KeyError):
    """No table (dataset) of that name at the commit or in the transaction. ``table`` is the
    name asked for."""

    def __init__(self, table: str, where: str = "") -> None:
        self.table = table
        at = f" {where}" if where else ""
        super().__init__(f"no table named {table!r}{at}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ColumnNotFoundError(TablesError, KeyError):
    """A column asked for by name is not in the table's schema (at ``where``, e.g. a
    ref). ``table``, ``column`` and ``columns`` (the names that do exist) say which."""

    def __init__(self, table: str, column: str, columns: list[str] | tuple[str, ...], where: str = "") -> None:
        self.table = table
        self.column = column
        self.columns = tuple(columns)
        at = f" {where}" if where else ""
        super().__init__(f"table {table!r} has no column {column!r}{at} (columns: {', '.join(self.columns)})")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class TableExistsError(TablesError, ValueError):
    """A table of that name (or one differing only by case) already exists."""

    def __init__(self, table: str, existing: str | None = None) -> None:
        self.table = table
        self.existing = existing or table
        clash = "" if self.existing == table else f" (as {self.existing!r}, which differs only by case)"
        super().__init__(f"table {table!r} already exists{clash}")


class RowExistsError(TablesError, ValueError):
    """``insert`` of a primary key the table already holds (a duplicate primary key)."""

    def __init__(self, table: str, pk: tuple[Any, ...], where: str = "", *, held: bool = False) -> None:
        self.table = table
        self.pk = pk
        at = f" ({where})" if where else ""
        if held:  # an import of rows the table has: what upsert and replace are for
            super().__init__(f"table {table!r} holds primary key {_pk_text(pk)} already{at}: to change existing rows, "
                             "import in upsert mode (--upsert) or replace mode (--replace)")
        else:
            super().__init__(f"table {table!r}: duplicate primary key {_pk_text(pk)}{at}")


class RowNotFoundError(TablesError, KeyError):
    """``update`` or ``delete`` of a primary key the table does not hold."""

    def __init__(self, table: str, pk: tuple[Any, ...]) -> None:
        self.table = table
        self.pk = pk
        super().__init__(f"table {table!r}: no row with primary key {_pk_text(pk)}")

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RowValueError(ColumnValueError):
    """A value of a row written to a table does not fit its column. A
    :class:`ColumnValueError` that also names the table (and the row's primary key when
    known)."""

    def __init__(self, table: str, column: str, value: Any, reason: str, *, pk: tuple[Any, ...] | None = None) -> None:
        self.table = table
        self.pk = pk
        ColumnValueError.__init__(self, column, value, reason)
        row = f", row {_pk_text(pk)}" if pk is not None else ""
        self.args = (f"table {table!r}{row}: {self.args[0]}",)


class TableImportError(TablesError, ValueError):
    """Bad input while importing a file or frame into a table: ``source`` (file name),
    ``line`` (1-based, the header is line 1), ``column`` and ``value`` say where and what."""

    def __init__(self, source: str, reason: str, *, line: int | None = None, column: str | None = None,
                 value: Any = None, table: str | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.value = value
        self.table = table
        self.reason = reason
        where = source + (f", line {line}" if line is not None else "") + (f", column {column!r}" if column else "")
        into = f" (into table {table!r})" if table else ""
        super().__init__(f"{where}: {reason}{into}")


class DatasetCorruptError(TablesError, ValueError):
    """The quads of a dataset graph do not form a valid dataset (e.g. two schema.json
    objects, or a feature naming a legend that is nowhere)."""

    def __init__(self, table: str, message: str) -> None:
        self.table = table
        super().__init__(f"table {table!r}: {message}")


def _pk_text(pk: Any) -> str:
    if isinstance(pk, tuple) and len(pk) == 1:
        return repr(pk[0])
    return repr(pk)
