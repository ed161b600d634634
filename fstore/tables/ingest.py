"""Loading rows from outside (CSV, SQLite, pandas, JSON) into a table: type inference,
schemas with stable column ids, and the rules of a load (modes, the primary key). The load
itself, all or nothing, creating or evolving the table, is :func:`.store.load_table`: it
encodes and checks every row *before* it stages anything, so bad input
(a value that does not fit, a duplicate key) leaves the transaction as it was. Loading into
an existing table keeps its column ids and types; columns new to the source are added
(:meth:`Schema.add_column`, a schema change that rewrites no row); with ``replace=True``
columns the source lacks are dropped and the rows become exactly the source's, rewriting
only rows whose cells changed.

>>> infer_text_type(["1", "", "-7"]), infer_text_type(["1.5", "2"]), infer_text_type(["2024-01-31"])
(('integer', {'size': 64}), ('float', {'size': 64}), ('date', {}))
>>> s = make_schema("t", [("code", "text", {}), ("n", "integer", {"size": 64})], pk=["code"])
>>> s.column_names, s.pk_columns[0].name
(['code', 'n'], 'code')
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from .errors import SchemaError
from .geometry import Geometry
from .schema import Column, Schema, deterministic_column_id
from .types import Interval

__all__ = [
    "ColumnSpec",
    "infer_text_type",
    "TextTypeGuess",
    "infer_value_type",
    "make_schema",
    "evolve_schema",
    "check_pk",
    "load_mode",
    "LOAD_MODES",
]

ColumnSpec = tuple[str, str, dict]
"""``(name, dataType, extra type info)``."""

# ASCII digits only: Python's \d and int() also take other scripts' digits ("٣" is 3),
# which would turn such a column into numbers no other tool reads the same way.
_INT_RE = re.compile(r"[+-]?\d+", re.ASCII)
_FLOAT_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan|infinity)", re.I | re.ASCII)
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_TIMESTAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?", re.ASCII)
_BOOL = {"true", "false"}
_INT64 = 2**63


def _is_date(text: str) -> bool:
    if not _DATE_RE.fullmatch(text):
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


_TEXT_KINDS = (("integer", {"size": 64}), ("float", {"size": 64}), ("boolean", {}), ("date", {}), ("timestamp", {}))


class TextTypeGuess:
    """The narrowest Kart type of one column's texts, seen one at a time (a CSV import
    guesses every column in one pass, in memory that does not grow with the file).

    >>> guess = TextTypeGuess()
    >>> for text in ["1", "", "2.5"]:
    ...     guess.add(text)
    >>> guess.result()
    ('float', {'size': 64})
    """

    __slots__ = ("kinds",)

    def __init__(self) -> None:
        self.kinds = {kind for kind, _ in _TEXT_KINDS}

    def add(self, text: str | None) -> None:
        kinds = self.kinds
        if not kinds or not text:
            return
        if "integer" in kinds and not (
                (text.isascii() and text.isdigit() and len(text) < 19)  # the common case, without a regex
                or (_INT_RE.fullmatch(text) and -_INT64 <= int(text) < _INT64)):
            kinds.discard("integer")
        if "float" in kinds and not _FLOAT_RE.fullmatch(text):
            kinds.discard("float")
        if "boolean" in kinds and text.lower() not in _BOOL:
            kinds.discard("boolean")
        if "date" in kinds and not _is_date(text):
            kinds.discard("date")
        if "timestamp" in kinds and not (_TIMESTAMP_RE.fullmatch(text) and _is_date(text[:10])):
            kinds.discard("timestamp")

    def result(self) -> tuple[str, dict]:
        """``(dataType, extra type info)``: text when no narrower type fits."""
        for kind, extra in _TEXT_KINDS:
            if kind in self.kinds:
                return kind, dict(extra)
        return "text", {}


def infer_text_type(values: Iterable[str]) -> tuple[str, dict]:
    """The narrowest Kart type all non-empty texts fit: integer (64-bit), float,
    boolean (``true``/``false``), date, timestamp, else text. Empty texts are nulls."""
    guess = TextTypeGuess()
    for text in values:
        guess.add(text)
        if not guess.kinds:
            break
    return guess.result()


_JSON_MIX = frozenset({"json", "boolean", "integer", "float", "text"})


def infer_value_type(values: Iterable[Any]) -> tuple[str, dict]:
    """The Kart type of Python values (all of one kind; None ignored): bool, int, float,
    str, bytes, Decimal, date, datetime, time, timedelta/Interval, Geometry; dicts and
    lists (mixed with bools, numbers and strs) are json."""
    found: set[str] = set()
    for v in values:
        if v is None or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, bool):
            found.add("boolean")
        elif isinstance(v, int):
            found.add("integer")
        elif isinstance(v, float):
            found.add("float")
        elif isinstance(v, Geometry):
            found.add("geometry")
        elif isinstance(v, (bytes, bytearray, memoryview)):
            found.add("blob")
        elif isinstance(v, Decimal):
            found.add("numeric")
        elif isinstance(v, _dt.datetime):
            found.add("timestamp")
        elif isinstance(v, _dt.date):
            found.add("date")
        elif isinstance(v, _dt.time):
            found.add("time")
        elif isinstance(v, (_dt.timedelta, Interval)):
            found.add("interval")
        elif isinstance(v, (dict, list)):
            found.add("json")
        else:
            found.add("text")
    if found == {"integer", "float"}:
        found = {"float"}
    if "json" in found and found <= _JSON_MIX:
        found = {"json"}
    if len(found) > 1:
        return "text", {}
    kind = found.pop() if found else "text"
    return kind, {"integer": {"size": 64}, "float": {"size": 64}}.get(kind, {})


def _column(table: str, spec: ColumnSpec, pk_index: int | None, salt: str) -> Column:
    name, data_type, extra = spec
    cid = deterministic_column_id(table, "\x00", name, "\x00", data_type, "\x00", salt)
    try:
        return Column.create(name, data_type, id=cid, pk_index=pk_index, **extra)
    except SchemaError:
        raise
    except TypeError as e:
        raise SchemaError(f"bad extra type info {extra!r} ({e})", column=name) from None


def make_schema(table: str, columns: Sequence[ColumnSpec], pk: Sequence[str]) -> Schema:
    """A new schema; column ids are derived from table, name and type, so loading the same
    source twice gives the same ids (and the same legends and blobs)."""
    names = [c[0] for c in columns]
    missing = [p for p in pk if p not in names]
    if missing:
        raise SchemaError(f"table {table!r}: primary key column(s) {missing} not among the columns {names}")
    if not pk:
        raise SchemaError(f"table {table!r} needs a primary key: name its column(s)")
    return Schema(_column(table, c, pk.index(c[0]) if c[0] in pk else None, "") for c in columns)


def evolve_schema(table: str, current: Schema, columns: Sequence[ColumnSpec], *, drop_missing: bool) -> Schema:
    """``current`` changed to have the source's columns, by name: existing columns keep
    their id and type; new ones are added at the end (ids salted with the current legend,
    so a column dropped and added again is a new column); with ``drop_missing`` columns
    the source lacks are dropped (primary-key columns never are)."""
    schema = current
    names = {c[0] for c in columns}
    if drop_missing:
        for col in current.columns:
            if col.name not in names and not col.is_pk:
                schema = schema.drop_column(col.name)
    for spec in columns:
        if spec[0] not in schema:
            col = _column(table, spec, None, current.legend.name)
            schema = Schema([*schema.columns, col])
    return schema


LOAD_MODES = ("insert", "upsert", "replace")


def load_mode(mode: str | None, replace: bool = False) -> str:
    """The load mode: ``mode`` (insert, upsert or replace), or ``replace`` as shorthand."""
    chosen = mode or ("replace" if replace else "insert")
    if chosen not in LOAD_MODES or (replace and chosen != "replace"):
        raise ValueError(f"load mode must be one of {', '.join(LOAD_MODES)}, not {mode!r}"
                         + (" with replace=True" if replace else ""))
    return chosen


def check_pk(name: str, schema: Schema, pk: Sequence[str] | None) -> None:
    """A key asked for an existing table must be the one it has (a table's key never
    changes): saying nothing is fine, saying something else is an error, not ignored."""
    have = [c.name for c in schema.pk_columns]
    if pk and list(pk) != have:
        raise SchemaError(f"table {name!r} has primary key {', '.join(have)}, not {', '.join(pk)} "
                          "(the key of an existing table cannot change; leave out --pk, pk= in the API)")
