"""Kart's eleven data types: how each value is stored in a feature, converted to and from
Python, and checked against its column's extra type info.

===========  ======================================  ==============================
dataType     stored in the feature (msgpack)         Python value
===========  ======================================  ==============================
boolean      bool                                    ``bool``
blob         bin                                     ``bytes``
date         str ``YYYY-MM-DD``                      ``datetime.date``
float        float64 (an int is accepted)            ``float``
geometry     ext 71: GeoPackage binary               :class:`~.geometry.Geometry`
integer      int                                     ``int``
interval     str ISO 8601 duration ``PnYnMnDTnHnMnS``  :class:`Interval`
json         the JSON value itself (map, array, str,    ``dict`` / ``list`` / ``str`` /
             int, float, bool, nil)                     ``int`` / ``float`` / ``bool``
numeric      str ``123`` / ``-1.50``                 ``decimal.Decimal``
text         str                                     ``str``
time         str ``hh:mm:ss[.ffffff]``               ``datetime.time``
timestamp    str ``YYYY-MM-DDThh:mm:ss[.ffffff]``    ``datetime.datetime``
===========  ======================================  ==============================

Fractions of a second are written only when non-zero, without trailing zeros. A
``timestamp`` column with ``"timezone": "UTC"`` stores UTC without a suffix and reads back
as an aware UTC datetime; V2-era values with a ``Z`` suffix are accepted on read. Extra
type info is checked on write: integer ``size`` (8/16/32/64 bits, signed), float ``size``
32 (range), text ``length`` (characters), blob ``length`` (bytes), numeric ``precision``
and ``scale``, timestamp ``timezone``, geometry ``geometryType`` (the base type; Z/M are
not enforced, as Kart does not enforce them either).

``json`` is not among the eleven types of the Kart Datasets V3 seed: it is datae's
extension for JSON documents. A json cell holds any JSON value, stored in the feature as
that value (maps with their keys sorted, so equal documents are equal blobs); dicts and
lists are refused by every other type.

>>> encode_value(ColumnType("doc", "json"), {"b": [1, 2.5, None], "a": True})
{'a': True, 'b': [1, 2.5, None]}
>>> encode_value(ColumnType("n", "integer"), {"a": 1})
Traceback (most recent call last):
...
fstore.tables.errors.ColumnValueError: column 'n': value {'a': 1} is a dict; only a json column holds dicts and lists

>>> col = ColumnType("price", "numeric", {"precision": 6, "scale": 2})
>>> encode_value(col, Decimal("12.50"))
'12.50'
>>> decode_value(col, '12.50')
Decimal('12.50')
>>> encode_value(ColumnType("t", "time", {}), _dt.time(18, 19, 20, 500000))
'18:19:20.5'
>>> encode_value(ColumnType("n", "integer", {"size": 8}), 300)
Traceback (most recent call last):
...
fstore.tables.errors.ColumnValueError: column 'n': value 300 does not fit in a signed 8-bit integer (-128 to 127)
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from . import wkb as _wkb
from .errors import ColumnValueError, GeometryError
from .geometry import Geometry

__all__ = [
    "DATA_TYPES",
    "EXTRA_TYPE_INFO",
    "GEOMETRY_TYPES",
    "INTEGER_SIZES",
    "FLOAT_SIZES",
    "DECIMAL_PRECISION",
    "DECIMAL_SCALE",
    "ColumnLike",
    "ColumnType",
    "Interval",
    "encode_value",
    "column_encoder",
    "STORED_AS_PYTHON",
    "decode_value",
    "validate_stored",
]

DATA_TYPES = (
    "boolean",
    "blob",
    "date",
    "float",
    "geometry",
    "integer",
    "interval",
    "json",
    "numeric",
    "text",
    "time",
    "timestamp",
)

# Which extra type info keys each data type may carry (in Kart's canonical order).
EXTRA_TYPE_INFO: dict[str, tuple[str, ...]] = {
    "boolean": (),
    "blob": ("length",),
    "date": (),
    "float": ("size",),
    "geometry": ("geometryType", "geometryCRS"),
    "integer": ("size",),
    "interval": (),
    "json": (),
    "numeric": ("precision", "scale"),
    "text": ("length",),
    "time": (),
    "timestamp": ("timezone",),
}

# Types whose stored value is already the Python value (decode_value returns it as is).
STORED_AS_PYTHON = frozenset({"boolean", "integer", "text", "blob", "float", "geometry", "json"})

INTEGER_SIZES = (8, 16, 32, 64)
FLOAT_SIZES = (32, 64)
# Out of the store, as Arrow / Parquet (fstore.tables.arrow_types, fstore.export), a numeric
# column without a precision, and a quad's xsd:decimal object, are DECIMAL(38, 18): the
# most digits Arrow's decimal128 holds, and Spark's default scale for them.
DECIMAL_PRECISION, DECIMAL_SCALE = 38, 18
GEOMETRY_TYPES = ("GEOMETRY",) + tuple(_wkb.TYPE_NAMES[k] for k in sorted(_wkb.TYPE_NAMES))

_JSON_MAX_DEPTH = 100
_MSGPACK_INT_MIN, _MSGPACK_INT_MAX = -(2**63), 2**64 - 1
_FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME_RE = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z?)")
_TIMESTAMP_RE = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z?)")
_NUMERIC_RE = re.compile(r"-?\d+(?:\.\d+)?")
_INTERVAL_RE = re.compile(
    r"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?"
)


class ColumnLike(Protocol):
    """What the value functions need of a column: its name, data type and extra type
    info (``schema.Column`` provides these)."""

    @property
    def name(self) -> str: ...

    @property
    def data_type(self) -> str: ...

    @property
    def extra_type_info(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ColumnType:
    """A stand-alone :class:`ColumnLike`, handy outside a schema."""

    name: str
    data_type: str
    extra_type_info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Interval:
    """An ISO 8601 duration as Kart stores it: years, months, weeks, days, hours, minutes
    and (possibly fractional) seconds, none negative.

    >>> Interval.parse("P1Y2M3DT4H5M6.5S")
    Interval(years=1, months=2, weeks=0, days=3, hours=4, minutes=5, seconds=Decimal('6.5'))
    >>> str(Interval(days=4, hours=3, minutes=2, seconds=Decimal(1)))
    'P4DT3H2M1S'
    >>> Interval.from_timedelta(_dt.timedelta(seconds=10)).isoformat()
    'PT10S'
    """

    years: int = 0
    months: int = 0
    weeks: int = 0
    days: int = 0
    hours: int = 0
    minutes: int = 0
    seconds: Decimal = Decimal(0)

    def __post_init__(self) -> None:
        if not isinstance(self.seconds, Decimal):
            object.__setattr__(self, "seconds", Decimal(str(self.seconds)))
        for name in ("years", "months", "weeks", "days", "hours", "minutes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Interval.{name} must be a non-negative int, not {v!r}")
        if not self.seconds.is_finite() or self.seconds < 0:
            raise ValueError(f"Interval.seconds must be a non-negative number, not {self.seconds!r}")

    @classmethod
    def parse(cls, text: str) -> "Interval":
        """Parse ``PnYnMnWnDTnHnMnS`` (every part optional); raise ``ValueError``."""
        m = _INTERVAL_RE.fullmatch(text) if isinstance(text, str) else None
        if not m or text.endswith("T"):
            raise ValueError(f"not an ISO 8601 duration (PnYnMnDTnHnMnS): {text!r}")
        y, mo, w, d, h, mi, s = m.groups()
        return cls(
            int(y or 0), int(mo or 0), int(w or 0), int(d or 0), int(h or 0), int(mi or 0), Decimal(s or 0)
        )

    def isoformat(self) -> str:
        """The ISO 8601 form, only non-zero parts; ``PT0S`` for a zero interval."""
        date = "".join(
            f"{v}{u}" for v, u in ((self.years, "Y"), (self.months, "M"), (self.weeks, "W"), (self.days, "D")) if v
        )
        secs = format(self.seconds, "f") if self.seconds else ""
        time = "".join(f"{v}{u}" for v, u in ((self.hours, "H"), (self.minutes, "M")) if v)
        time += f"{secs}S" if secs else ""
        if not date and not time:
            return "PT0S"
        return "P" + date + (f"T{time}" if time else "")

    __str__ = isoformat

    def to_timedelta(self) -> _dt.timedelta:
        """As a ``timedelta``; ``ValueError`` if it has years or months (no fixed length)."""
        if self.years or self.months:
            raise ValueError(f"{self} has years or months, which have no fixed length")
        whole = int(self.seconds)
        micro = int((self.seconds - whole) * 1_000_000)
        return _dt.timedelta(
            weeks=self.weeks,
            days=self.days,
            hours=self.hours,
            minutes=self.minutes,
            seconds=whole,
            microseconds=micro,
        )

    @classmethod
    def from_timedelta(cls, td: _dt.timedelta) -> "Interval":
        """Days, hours, minutes and seconds of a non-negative ``timedelta``."""
        if td < _dt.timedelta(0):
            raise ValueError(f"negative durations cannot be stored: {td!r}")
        hours, rest = divmod(td.seconds, 3600)
        minutes, secs = divmod(rest, 60)
        seconds = Decimal(f"{secs}.{td.microseconds:06d}".rstrip("0")) if td.microseconds else Decimal(secs)
        return cls(days=td.days, hours=hours, minutes=minutes, seconds=seconds)


def _fail(col: ColumnLike, value: Any, reason: str) -> ColumnValueError:
    return ColumnValueError(col.name, value, reason)


def _format_time(t: _dt.time) -> str:
    s = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if t.microsecond:
        s += ("." + f"{t.microsecond:06d}").rstrip("0")
    return s


def _parse_time(col: ColumnLike, text: str) -> _dt.time:
    m = _TIME_RE.fullmatch(text)
    if not m:
        raise _fail(col, text, "is not an ISO 8601 time (hh:mm:ss[.ffffff])")
    h, mi, s, frac, z = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        return _dt.time(int(h), int(mi), int(s), micro, tzinfo=_dt.timezone.utc if z else None)
    except ValueError as e:
        raise _fail(col, text, f"is not a valid time ({e})") from None


def _signed_bits(n: int) -> int:
    return (n + 1).bit_length() + 1 if n < 0 else n.bit_length() + 1


def _numeric_text(col: ColumnLike, value: Any) -> str:
    if isinstance(value, bool):
        raise _fail(col, value, "is a bool, not a number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(col, value, "is not finite; numeric stores decimal numbers")
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _fail(col, value, "is not finite; numeric stores decimal numbers")
        text = format(value, "f")
        return "0" if text in ("-0",) else text
    if isinstance(value, str):
        if not _NUMERIC_RE.fullmatch(value):
            raise _fail(col, value, "is not a decimal number like 123 or -123.45")
        return value
    raise _fail(col, value, f"is a {type(value).__name__}, not a number for a numeric column")


def _check_numeric(col: ColumnLike, text: str) -> None:
    info = col.extra_type_info
    precision, scale = info.get("precision"), info.get("scale")
    digits = text.lstrip("-")
    whole, _, frac = digits.partition(".")
    whole = whole.lstrip("0")
    if scale is not None and len(frac) > scale:
        raise _fail(col, text, f"has {len(frac)} digits after the point, more than scale {scale}")
    if precision is not None and len(whole) > precision - (scale or 0):
        raise _fail(col, text, f"has too many digits for numeric({precision},{scale or 0})")


def _check_geometry_type(col: ColumnLike, geom: Geometry) -> None:
    wanted = col.extra_type_info.get("geometryType")
    if not wanted:
        return
    base = wanted.split()[0].upper()
    if base == "GEOMETRY":
        return
    kind, _z, _m = geom.geometry_type()
    actual = _wkb.TYPE_NAMES[kind]
    if actual != base:
        raise _fail(col, geom, f"is a {actual}, but the column holds {wanted}")


def _json_value(col: ColumnLike, value: Any, depth: int = 0) -> Any:
    """``value`` as a stored JSON value: dict keys sorted, tuples as lists; raise
    :class:`ColumnValueError` for anything JSON cannot hold (NaN, non-str keys, bytes…)."""
    if depth > _JSON_MAX_DEPTH:
        raise _fail(col, value, f"is nested deeper than {_JSON_MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a plain str, also of a str subclass (an enum's value)
    if isinstance(value, int):
        if not _MSGPACK_INT_MIN <= value <= _MSGPACK_INT_MAX:
            raise _fail(col, value, "is an integer outside the 64-bit range a json value can hold")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(col, value, "is not finite; JSON has no NaN or infinity")
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(col, v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        bad = next((k for k in value if not isinstance(k, str)), None)
        if bad is not None:
            raise _fail(col, value, f"has the key {bad!r}; JSON object keys are strings")
        return {k: _json_value(col, value[k], depth + 1) for k in sorted(value)}
    raise _fail(col, value, f"holds a {type(value).__name__}, which is not a JSON value")


def encode_value(col: ColumnLike, value: Any) -> Any:
    """Convert a Python value (or an already-stored value) to what Kart stores for
    ``col``, checking it against the column's type and extra type info. ``None`` stays
    ``None``. Raises :class:`ColumnValueError` naming the column, value and reason."""
    if value is None:
        return None
    t = col.data_type
    info = col.extra_type_info
    if t == "json":
        return _json_value(col, value)
    if isinstance(value, (dict, list)):
        raise _fail(col, value, f"is a {type(value).__name__}; only a json column holds dicts and lists")
    if t == "boolean":
        if not isinstance(value, bool):
            raise _fail(col, value, f"is a {type(value).__name__}, not a bool")
        return value
    if t == "integer":
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise _fail(col, value, f"is a {type(value).__name__}, not an int")
        value = int(value.__index__())
    elif t == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if hasattr(value, "__float__") and not isinstance(value, (str, bytes, Decimal)):
                value = float(value)
            else:
                raise _fail(col, value, f"is a {type(value).__name__}, not a float")
        value = float(value)
    elif t == "text":
        if not isinstance(value, str):
            raise _fail(col, value, f"is a {type(value).__name__}, not a str")
    elif t == "blob":
        if not isinstance(value, (bytes, bytearray, memoryview)) or isinstance(value, Geometry):
            raise _fail(col, value, f"is a {type(value).__name__}, not bytes")
        value = bytes(value)
    elif t == "date":
        if isinstance(value, _dt.datetime):
            raise _fail(col, value, "is a datetime; a date column stores only the date")
        if isinstance(value, _dt.date):
            value = value.isoformat()
    elif t == "time":
        if isinstance(value, _dt.time):
            if value.utcoffset():
                raise _fail(col, value, "has a non-UTC timezone; time columns store no timezone")
            value = _format_time(value)
        elif isinstance(value, str) and value.endswith("Z"):
            value = value[:-1]
    elif t == "timestamp":
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None and value.utcoffset() is not None:
                if info.get("timezone") != "UTC":
                    raise _fail(col, value, "is timezone-aware, but the column has no timezone (set timezone UTC)")
                value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            value = value.date().isoformat() + "T" + _format_time(value.time())
        elif isinstance(value, _dt.date):
            raise _fail(col, value, "is a date; a timestamp needs a datetime")
        elif isinstance(value, str) and value.endswith("Z"):
            if info.get("timezone") != "UTC":
                raise _fail(col, value, "is in UTC (Z), but the column has no timezone")
            value = value[:-1]
    elif t == "interval":
        if isinstance(value, _dt.timedelta):
            try:
                value = Interval.from_timedelta(value).isoformat()
            except ValueError as e:
                raise _fail(col, value, str(e)) from None
        elif isinstance(value, Interval):
            value = value.isoformat()
    elif t == "numeric":
        value = _numeric_text(col, value)
    elif t == "geometry":
        value = _to_geometry(col, value)
    else:
        raise _fail(col, value, f"has unknown dataType {t!r}")
    validate_stored(col, value)
    return value


def column_encoder(col: ColumnLike) -> Callable[[Any], Any]:
    """``encode_value`` for one column, made once: values of the common exact types
    (an int in range, a float, a str within its length, a bool, an ISO date text) pass
    through checks chosen for the column's type, and anything else goes to
    :func:`encode_value`, so every value gets the same result or the same error. Why: a
    bulk import calls it once a cell, and looking up the type and its extra type info
    per cell was most of an import's time.

    >>> enc = column_encoder(ColumnType("n", "integer", {"size": 8}))
    >>> enc(7), enc(None)
    (7, None)
    >>> enc(300)
    Traceback (most recent call last):
    ...
    fstore.tables.errors.ColumnValueError: column 'n': value 300 does not fit in a signed 8-bit integer (-128 to 127)
    """
    t = col.data_type
    info = col.extra_type_info
    slow = encode_value

    if t == "integer":
        size = info.get("size")
        low, high = (-(2 ** (size - 1)), 2 ** (size - 1) - 1) if size else (None, None)
        if low is None:
            def encode(value: Any) -> Any:
                return value if type(value) is int else slow(col, value)
        else:
            def encode(value: Any) -> Any:
                return value if type(value) is int and low <= value <= high else slow(col, value)
    elif t == "float" and info.get("size") != 32:
        def encode(value: Any) -> Any:
            return value if type(value) is float else slow(col, value)
    elif t == "text":
        length = info.get("length")
        if length:
            def encode(value: Any) -> Any:
                return value if type(value) is str and len(value) <= length else slow(col, value)
        else:
            def encode(value: Any) -> Any:
                return value if type(value) is str else slow(col, value)
    elif t == "boolean":
        def encode(value: Any) -> Any:
            return value if type(value) is bool else slow(col, value)
    elif t == "date":
        match, parse = _DATE_RE.fullmatch, _dt.date.fromisoformat

        def encode(value: Any) -> Any:
            if type(value) is str and match(value):
                try:
                    parse(value)
                    return value
                except ValueError:
                    pass
            return slow(col, value)
    else:
        def encode(value: Any) -> Any:
            return slow(col, value)
    return encode


def _to_geometry(col: ColumnLike, value: Any) -> Geometry:
    try:
        if isinstance(value, Geometry):
            geom = value
        elif isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value)
            geom = Geometry(raw) if raw[:2] == b"GP" else Geometry.from_wkb(raw)
        elif isinstance(value, str):
            text = value.strip()
            if re.fullmatch(r"[0-9a-fA-F]+", text):
                geom = Geometry.from_hex_wkb(text)
            else:
                geom = Geometry.from_wkt(text)
        else:
            raise _fail(col, value, f"is a {type(value).__name__}, not a geometry (GeoPackage bytes, WKB or WKT)")
        return geom.validate().normalise()
    except GeometryError as e:
        raise _fail(col, value, f"is not a valid geometry ({e})") from None


def validate_stored(col: ColumnLike, value: Any) -> None:
    """Check a stored (msgpack-level) value against ``col``, like Kart's
    ``find_column_violation``; raise :class:`ColumnValueError`."""
    if value is None:
        return
    t = col.data_type
    info = col.extra_type_info
    if t == "json":
        _json_value(col, value)
        return
    expected = {
        "boolean": (bool,),
        "blob": (bytes,),
        "date": (str,),
        "float": (float, int),
        "geometry": (Geometry,),
        "integer": (int,),
        "interval": (str,),
        "numeric": (str,),
        "text": (str,),
        "time": (str,),
        "timestamp": (str,),
    }.get(t)
    if expected is None:
        raise _fail(col, value, f"has unknown dataType {t!r}")
    if type(value) not in expected:
        raise _fail(col, value, f"is stored as {type(value).__name__}, which does not match dataType {t}")
    if t == "integer":
        size = info.get("size")
        if size and _signed_bits(value) > size:
            bound = 2 ** (size - 1)
            raise _fail(col, value, f"does not fit in a signed {size}-bit integer ({-bound} to {bound - 1})")
    elif t == "float":
        if info.get("size") == 32 and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
            raise _fail(col, value, "is out of range for a 32-bit float")
    elif t in ("text", "blob"):
        length = info.get("length")
        if length and len(value) > length:
            unit = "characters" if t == "text" else "bytes"
            raise _fail(col, value, f"is {len(value)} {unit} long, over the limit of {length} {unit}")
    elif t == "date":
        if not _DATE_RE.fullmatch(value):
            raise _fail(col, value, "is not an ISO 8601 date (YYYY-MM-DD)")
        try:
            _dt.date.fromisoformat(value)
        except ValueError as e:
            raise _fail(col, value, f"is not a valid date ({e})") from None
    elif t == "time":
        _parse_time(col, value)
    elif t == "timestamp":
        m = _TIMESTAMP_RE.fullmatch(value)
        if not m:
            raise _fail(col, value, "is not an ISO 8601 timestamp (YYYY-MM-DDThh:mm:ss[.ffffff])")
        try:
            _dt.date.fromisoformat(m.group(1))
        except ValueError as e:
            raise _fail(col, value, f"is not a valid date ({e})") from None
        _parse_time(col, m.group(2))
    elif t == "interval":
        try:
            Interval.parse(value)
        except ValueError as e:
            raise _fail(col, value, str(e)) from None
    elif t == "numeric":
        if not _NUMERIC_RE.fullmatch(value):
            raise _fail(col, value, "is not a decimal number like 123 or -123.45")
        _check_numeric(col, value)
    elif t == "geometry":
        _check_geometry_type(col, value)


def decode_value(col: ColumnLike, value: Any) -> Any:
    """Convert a stored value to its Python value (see the table above). Raises
    :class:`ColumnValueError` if a stored text value cannot be parsed."""
    if value is None:
        return None
    t = col.data_type
    if t in ("boolean", "integer", "text", "blob", "float", "json"):
        return value
    if t == "geometry":
        return value if isinstance(value, Geometry) else Geometry(value)
    if not isinstance(value, str):
        raise _fail(col, value, f"is stored as {type(value).__name__}, not as text, for dataType {t}")
    if t == "date":
        try:
            return _dt.date.fromisoformat(value)
        except ValueError as e:
            raise _fail(col, value, f"is not a valid date ({e})") from None
    if t == "time":
        return _parse_time(col, value)
    if t == "timestamp":
        m = _TIMESTAMP_RE.fullmatch(value)
        if not m:
            raise _fail(col, value, "is not an ISO 8601 timestamp (YYYY-MM-DDThh:mm:ss[.ffffff])")
        try:
            date = _dt.date.fromisoformat(m.group(1))
        except ValueError as e:
            raise _fail(col, value, f"is not a valid date ({e})") from None
        time = _parse_time(col, m.group(2))
        utc = m.group(3) == "Z" or col.extra_type_info.get("timezone") == "UTC"
        return _dt.datetime.combine(date, time, tzinfo=_dt.timezone.utc if utc else None)
    if t == "numeric":
        try:
            return Decimal(value)
        except InvalidOperation:
            raise _fail(col, value, "is not a decimal number") from None
    if t == "interval":
        try:
            return Interval.parse(value)
        except ValueError as e:
            raise _fail(col, value, str(e)) from None
    raise _fail(col, value, f"has unknown dataType {t!r}")
