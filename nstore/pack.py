"""Order-preserving, self-delimiting tuple packing (the FoundationDB tuple layer, extended).

``pack(*values)`` turns a tuple into bytes whose lexicographic order is the order of the
values, type by type; ``unpack`` is its inverse. For the types FoundationDB's tuple layer
shares (None, bytes, str, int, float, bool, UUID, nested tuples) the bytes are exactly
FoundationDB's; datae adds type codes for RDF terms, dates, datetimes, decimals and
references to content-addressed blobs. ``docs/format.md`` lists every code.

>>> pack("a", 1).hex(" ")
'02 61 00 15 01'
>>> unpack(pack("a", 1, None, (2.5, b"x")))
('a', 1, None, (2.5, b'x'))
>>> pack(1) < pack(2) < pack(256)
True
"""

from __future__ import annotations

import datetime as _dt
import re
import struct
import uuid
from decimal import Decimal
from itertools import repeat
from operator import itemgetter
from typing import Any

from .errors import PackError
from .terms import IRI, BNode, Literal

__all__ = [
    "pack", "unpack", "pack_value", "split", "find_items", "decode_item", "decode_items", "value_span", "type_span",
    "BlobRef", "TermRef", "Packed", "PackError",
]

# FoundationDB tuple-layer type codes.
NULL = 0x00
BYTES = 0x01
STRING = 0x02
NESTED = 0x05
NEG_INT_BIG = 0x0B
INT_ZERO = 0x14
POS_INT_BIG = 0x1D
FLOAT32 = 0x20
FLOAT64 = 0x21
FALSE = 0x26
TRUE = 0x27
UUID = 0x30
# datae's own type codes (unused by FoundationDB).
IRI_CODE = 0x40
BNODE_CODE = 0x41
LITERAL_CODE = 0x42
DECIMAL_NEG = 0x43
DECIMAL_ZERO = 0x44
DECIMAL_POS = 0x45
DATE_CODE = 0x46
DATETIME_NAIVE = 0x47
DATETIME_TZ = 0x48
BLOBREF_CODE = 0x4F
# Dictionary references (format 2): 0x50 + kind, then the term's id in 5 bytes big-endian.
TERMREF_CODE = 0x50
TERMREF_KINDS = 5  # IRI, BNode, str, Literal, bytes (see TermRef)
TERMREF_SIZE = 6

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_TZ = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICRO = _dt.timedelta(microseconds=1)
_SIGN64 = 1 << 63
_MASK64 = (1 << 64) - 1
_DOUBLE = struct.Struct(">d")
_SINGLE = struct.Struct(">f")
# Decimal digits of a negative decimal are stored complemented (b'0'..b'9' -> b'9'..b'0')
# and terminated by 0xff, so a longer magnitude with the same prefix sorts first.
_COMPLEMENT_DIGITS = bytes.maketrans(b"0123456789", b"9876543210")


class BlobRef:
    """A reference to a value kept in a content-addressed blob store (its sha256 digest)."""

    __slots__ = ("digest",)

    def __init__(self, digest: bytes) -> None:
        if type(digest) is not bytes or len(digest) != 32:
            raise ValueError(f"a BlobRef holds a 32-byte sha256 digest, not {digest!r}")
        self.digest = digest

    def __eq__(self, other: object) -> bool:
        return type(other) is BlobRef and other.digest == self.digest

    def __hash__(self) -> int:
        return hash((BlobRef, self.digest))

    def __repr__(self) -> str:
        return f"BlobRef({self.digest.hex()!r})"


class TermRef:
    """A reference to a term in a store's dictionary: its kind and its id there.

    ``kind`` is the position of the term's type in :data:`TermRef.KINDS` (IRI, BNode,
    str, Literal, bytes): it is the low bits of the type code, so references of one kind
    are one contiguous span of keys (a range scan over numbers skips every IRI).

    >>> pack_value(TermRef(0, 258)).hex(" ")
    '50 00 00 00 01 02'
    >>> decode_item(pack_value(TermRef(3, 7)))
    TermRef(3, 7)
    """

    __slots__ = ("kind", "id")
    KINDS: tuple[type, ...] = (IRI, BNode, str, Literal, bytes)
    LIMIT = 1 << 40

    def __init__(self, kind: int, id: int) -> None:
        if not 0 <= kind < TERMREF_KINDS or not 0 <= id < TermRef.LIMIT:
            raise ValueError(f"a TermRef has a kind in 0..{TERMREF_KINDS - 1} and a 40-bit id, not {kind}, {id}")
        self.kind = kind
        self.id = id

    def __eq__(self, other: object) -> bool:
        return type(other) is TermRef and other.kind == self.kind and other.id == self.id

    def __hash__(self) -> int:
        return hash((TermRef, self.kind, self.id))

    def __repr__(self) -> str:
        return f"TermRef({self.kind}, {self.id})"


class Packed(bytes):
    """Bytes that already hold one packed item (e.g. a :class:`TermRef` a dictionary
    made): stores put them in keys as they are, without packing them again."""

    __slots__ = ()


def _escape(raw: bytes) -> bytes:
    return raw.replace(b"\x00", b"\x00\xff") + b"\x00"


def _encode_str(value: str) -> bytes:
    try:
        return _escape(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise PackError(f"cannot pack str {value!r}: not valid Unicode ({exc.reason})") from None


def _encode_int(value: int) -> bytes:
    if value == 0:
        return b"\x14"
    if value > 0:
        size = (value.bit_length() + 7) // 8
        body = value.to_bytes(size, "big")
        if size <= 8:
            return bytes((INT_ZERO + size,)) + body
        if size < 255:
            return bytes((POS_INT_BIG, size)) + body
        # Beyond FoundationDB's 254-byte limit: 0xff then an 8-byte length keeps order.
        return bytes((POS_INT_BIG, 0xFF)) + size.to_bytes(8, "big") + body
    size = ((-value).bit_length() + 7) // 8
    body = (value + (1 << (8 * size)) - 1).to_bytes(size, "big")
    if size <= 8:
        return bytes((INT_ZERO - size,)) + body
    if size < 255:
        return bytes((NEG_INT_BIG, size ^ 0xFF)) + body
    return bytes((NEG_INT_BIG, 0x00)) + (size ^ _MASK64).to_bytes(8, "big") + body


def _encode_float(value: float) -> bytes:
    bits = int.from_bytes(_DOUBLE.pack(value), "big")
    bits = bits ^ _MASK64 if bits & _SIGN64 else bits | _SIGN64
    return b"\x21" + bits.to_bytes(8, "big")


def _encode_decimal(value: Decimal) -> bytes:
    if not value.is_finite():
        raise PackError(f"cannot pack Decimal {value!r}: only finite decimals are ordered")
    if value.is_zero():
        return b"\x44"
    # Strip trailing zeros by hand: Decimal.normalize() rounds to the context precision
    # (28 digits) and overflows past its exponent limits, which would lose or reject values.
    sign, digits, exponent = value.as_tuple()
    text = "".join(map(str, digits)).rstrip("0").encode("ascii")
    adjusted = len(digits) + exponent  # value = 0.d1d2... * 10**adjusted
    if sign == 0:
        return b"\x45" + _encode_int(adjusted) + text + b"\x00"
    return b"\x43" + _encode_int(-adjusted) + text.translate(_COMPLEMENT_DIGITS) + b"\xff"


def _encode_datetime(value: _dt.datetime) -> bytes:
    offset = value.utcoffset()
    if offset is None:
        return b"\x47" + _encode_int((value - _EPOCH) // _MICRO)
    if offset % _dt.timedelta(seconds=1):
        # The format keeps whole seconds of offset; truncating would change the value read back.
        raise PackError(f"cannot pack datetime {value!r}: its UTC offset {offset} is not whole seconds")
    micros = (value - _EPOCH_TZ) // _MICRO
    return b"\x48" + _encode_int(micros) + _encode_int(offset // _dt.timedelta(seconds=1))


def _encode_nested(value: tuple | list) -> bytes:
    parts = [b"\x05"]
    for item in value:
        parts.append(b"\x00\xff" if item is None else _encode(item))
    parts.append(b"\x00")
    return b"".join(parts)


def _encode_literal(value: Literal) -> bytes:
    datatype = value.datatype.value if value.datatype is not None else ""
    return b"\x42" + _encode_str(value.lexical) + _encode_str(datatype) + _encode_str(value.lang or "")


_ENCODERS = {
    type(None): lambda v: b"\x00",
    bytes: lambda v: b"\x01" + _escape(v),
    bytearray: lambda v: b"\x01" + _escape(bytes(v)),
    str: lambda v: b"\x02" + _encode_str(v),
    bool: lambda v: b"\x27" if v else b"\x26",
    int: _encode_int,
    float: _encode_float,
    tuple: _encode_nested,
    list: _encode_nested,
    uuid.UUID: lambda v: b"\x30" + v.bytes,
    IRI: lambda v: b"\x40" + _encode_str(v.value),
    BNode: lambda v: b"\x41" + _encode_str(v.id),
    Literal: _encode_literal,
    Decimal: _encode_decimal,
    _dt.date: lambda v: b"\x46" + _encode_int(v.toordinal()),
    _dt.datetime: _encode_datetime,
    BlobRef: lambda v: b"\x4f" + v.digest,
    TermRef: lambda v: bytes([TERMREF_CODE + v.kind]) + v.id.to_bytes(5, "big"),
    Packed: bytes,
}

# Subclasses are matched in this order: bool before int, datetime before date.
_SUBCLASS_ORDER = (bool, int, float, str, bytes, tuple, list, _dt.datetime, _dt.date, Decimal, uuid.UUID)


def _encode(value: Any) -> bytes:
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        for base in _SUBCLASS_ORDER:
            if isinstance(value, base):
                encoder = _ENCODERS[base]
                break
        else:
            raise PackError(f"cannot pack a value of type {type(value).__name__}: {value!r:.80}")
    return encoder(value)


def pack_value(value: Any) -> bytes:
    """Pack one value; ``pack(a, b) == pack_value(a) + pack_value(b)``."""
    return _encode(value)


def pack(*values: Any) -> bytes:
    """Pack values into order-preserving bytes.

    >>> pack(b"foo\\x00bar").hex(" ")
    '01 66 6f 6f 00 ff 62 61 72 00'
    """
    return b"".join([_encode(value) for value in values])


# ---------------------------------------------------------------------------- decoding


def _terminated_end(data: bytes, pos: int) -> int:
    """Index of the 0x00 that ends the escaped byte string starting at pos."""
    end = data.find(b"\x00", pos)
    while end != -1 and end + 1 < len(data) and data[end + 1] == 0xFF:
        end = data.find(b"\x00", end + 2)
    if end == -1:
        raise PackError(f"truncated packed data: unterminated string at byte {pos}")
    return end


def _decode_escaped(data: bytes, pos: int) -> tuple[bytes, int]:
    end = _terminated_end(data, pos)
    raw = data[pos:end]
    if b"\x00\xff" in raw:
        raw = raw.replace(b"\x00\xff", b"\x00")
    return raw, end + 1


def _decode_text(data: bytes, pos: int) -> tuple[str, int]:
    raw, pos = _decode_escaped(data, pos)
    return raw.decode("utf-8"), pos


def _decode_int(data: bytes, code: int, pos: int) -> tuple[int, int]:
    if code == INT_ZERO:
        return 0, pos
    if INT_ZERO < code < POS_INT_BIG:
        end = pos + code - INT_ZERO
        return int.from_bytes(data[pos:end], "big"), end
    if NEG_INT_BIG < code < INT_ZERO:
        size = INT_ZERO - code
        end = pos + size
        return int.from_bytes(data[pos:end], "big") - (1 << (8 * size)) + 1, end
    if code == POS_INT_BIG:
        size = data[pos]
        pos += 1
        if size == 0xFF:
            size = int.from_bytes(data[pos : pos + 8], "big")
            pos += 8
        return int.from_bytes(data[pos : pos + size], "big"), pos + size
    size = data[pos] ^ 0xFF
    pos += 1
    if size == 0xFF:
        size = int.from_bytes(data[pos : pos + 8], "big") ^ _MASK64
        pos += 8
    if pos + size > len(data):
        # Check before computing 1 << 8*size: a corrupt length would exhaust memory.
        raise PackError(f"truncated packed data: a {size}-byte integer at byte {pos} runs past the end")
    return int.from_bytes(data[pos : pos + size], "big") - (1 << (8 * size)) + 1, pos + size


def _decode_decimal(data: bytes, code: int, pos: int) -> tuple[Decimal, int]:
    if code == DECIMAL_ZERO:
        return Decimal(0), pos
    adjusted, pos = _decode_int(data, data[pos], pos + 1)
    if code == DECIMAL_POS:
        end = data.index(b"\x00", pos)
        digits = data[pos:end].decode("ascii")
        sign = ""
    else:
        adjusted = -adjusted
        end = data.index(b"\xff", pos)
        digits = data[pos:end].translate(_COMPLEMENT_DIGITS).decode("ascii")
        sign = "-"
    if not digits.isdigit():
        raise PackError(f"malformed decimal digits {digits!r:.40} at byte {pos}")
    # The Decimal constructor is exact; normalize() would round to the context precision.
    return Decimal(f"{sign}{digits}E{adjusted - len(digits)}"), end + 1


def _decode(data: bytes, pos: int, nested: bool = False) -> tuple[Any, int]:
    code = data[pos]
    pos += 1
    if code == STRING:
        return _decode_text(data, pos)
    if NEG_INT_BIG <= code <= POS_INT_BIG:
        return _decode_int(data, code, pos)
    if code == IRI_CODE:
        text, pos = _decode_text(data, pos)
        return IRI(text), pos
    if code == LITERAL_CODE:
        lexical, pos = _decode_text(data, pos)
        datatype, pos = _decode_text(data, pos)
        lang, pos = _decode_text(data, pos)
        return Literal(lexical, datatype or None, lang or None), pos
    if code == NULL:
        return None, pos
    if code == BYTES:
        return _decode_escaped(data, pos)
    if code == FLOAT64:
        bits = int.from_bytes(data[pos : pos + 8], "big")
        bits = bits ^ _SIGN64 if bits & _SIGN64 else bits ^ _MASK64
        return _DOUBLE.unpack(bits.to_bytes(8, "big"))[0], pos + 8
    if code == FLOAT32:
        bits = int.from_bytes(data[pos : pos + 4], "big")
        bits = bits ^ 0x80000000 if bits & 0x80000000 else bits ^ 0xFFFFFFFF
        return _SINGLE.unpack(bits.to_bytes(4, "big"))[0], pos + 4
    if code == FALSE:
        return False, pos
    if code == TRUE:
        return True, pos
    if code == NESTED:
        items = []
        while True:
            if data[pos] == 0x00:
                if pos + 1 < len(data) and data[pos + 1] == 0xFF:
                    items.append(None)
                    pos += 2
                    continue
                return tuple(items), pos + 1
            item, pos = _decode(data, pos, nested=True)
            items.append(item)
    if code == UUID:
        return uuid.UUID(bytes=data[pos : pos + 16]), pos + 16
    if code == BNODE_CODE:
        text, pos = _decode_text(data, pos)
        return BNode(text), pos
    if DECIMAL_NEG <= code <= DECIMAL_POS:
        return _decode_decimal(data, code, pos)
    if code == DATE_CODE:
        ordinal, pos = _decode_int(data, data[pos], pos + 1)
        return _dt.date.fromordinal(ordinal), pos
    if code == DATETIME_NAIVE:
        micros, pos = _decode_int(data, data[pos], pos + 1)
        return _EPOCH + micros * _MICRO, pos
    if code == DATETIME_TZ:
        micros, pos = _decode_int(data, data[pos], pos + 1)
        offset, pos = _decode_int(data, data[pos], pos + 1)
        zone = _dt.timezone(_dt.timedelta(seconds=offset))
        # Build the local time directly: going through UTC overflows near datetime.min/max.
        return (_EPOCH + (micros + offset * 1_000_000) * _MICRO).replace(tzinfo=zone), pos
    if code == BLOBREF_CODE:
        return BlobRef(data[pos : pos + 32]), pos + 32
    if TERMREF_CODE <= code < TERMREF_CODE + TERMREF_KINDS:
        if pos + 5 > len(data):
            raise PackError(f"truncated term reference at byte {pos - 1}")
        return TermRef(code - TERMREF_CODE, int.from_bytes(data[pos : pos + 5], "big")), pos + 5
    raise PackError(f"unknown type code 0x{code:02x} at byte {pos - 1}")


# What malformed input makes the decoders raise: index past the end, bad UTF-8 or
# ordinals (ValueError), out-of-range dates (OverflowError) and decimal syntax
# (ArithmeticError), and deeply nested tuples (RecursionError).
_MALFORMED = (IndexError, ValueError, ArithmeticError, RecursionError, struct.error)


def _malformed(exc: Exception, data: bytes, pos: int) -> PackError:
    """The PackError for bytes that failed to decode at ``pos`` (a PackError as it is)."""
    if isinstance(exc, PackError):
        return exc
    return PackError(f"malformed packed data at byte {pos}: {data[pos:pos + 16]!r}")


def decode_item(data: bytes) -> Any:
    """Decode bytes holding exactly one packed value (one item of ``split``)."""
    code = data[0] if data else None
    # Fast paths for the commonest items: the item is whole, so its last byte ends it and
    # every NUL before must be escaped (else the general path reports the fault).
    if (code == IRI_CODE or code == STRING or code == BYTES or code == BNODE_CODE) and data[-1] == 0:
        raw = data[1:-1]
        if b"\x00" in raw:
            if raw.count(b"\x00") != raw.count(b"\x00\xff"):
                raw = None
            else:
                raw = raw.replace(b"\x00\xff", b"\x00")
        if raw is not None and code == BYTES:
            return raw
        text = _utf8(raw) if raw is not None else None  # None: the general path reports it
        if text is not None:
            return IRI(text) if code == IRI_CODE else text if code == STRING else BNode(text)
    elif code == BLOBREF_CODE and len(data) == 33:
        return BlobRef(data[1:])
    elif code == LITERAL_CODE and data[-1] == 0:
        parts = data[1:-1].split(b"\x00")
        if len(parts) == 3:
            try:
                lexical, datatype, lang = [part.decode("utf-8") for part in parts]
                return Literal(lexical, datatype or None, lang or None)
            except (UnicodeDecodeError, ValueError, TypeError):
                pass
    try:
        value, _ = _decode(data, 0)
    except _MALFORMED as exc:
        if isinstance(exc, PackError):
            raise
        raise PackError(f"malformed packed item: {data[:16]!r}") from None
    return value


def decode_items(items: list[bytes]) -> list[Any]:
    """:func:`decode_item` of many items. When all are byte strings, or all text, each
    step runs over the whole list in C (``map`` of ``bytes`` methods): no Python call per
    item; any other mix goes item by item.

    >>> decode_items([pack_value(b"a\\x00b"), pack_value(b"")]), decode_items([pack_value("x"), pack_value(1)])
    ([b'a\\x00b', b''], ['x', 1])
    """
    codes = set(map(_first, items))
    if len(codes) == 1 and codes <= {BYTES, STRING} and set(map(_last, items)) == {0}:
        raws = list(map(_inner, items))
        # whole items: every NUL inside is escaped as 00 ff (else the general path reports it)
        if list(map(bytes.count, raws, repeat(b"\x00"))) == list(map(bytes.count, raws, repeat(b"\x00\xff"))):
            raws = list(map(bytes.replace, raws, repeat(b"\x00\xff"), repeat(b"\x00")))
            if BYTES in codes:
                return raws
            try:
                return list(map(bytes.decode, raws))
            except UnicodeDecodeError:
                pass
    return [decode_item(item) for item in items]


_first, _last, _inner = itemgetter(0), itemgetter(-1), itemgetter(slice(1, -1))


def unpack(data: bytes) -> tuple:
    """Inverse of ``pack``: the tuple of values packed in ``data``."""
    values = []
    pos = 0
    end = len(data)
    try:
        while pos < end:
            value, pos = _decode(data, pos)
            values.append(value)
    except _MALFORMED as exc:
        raise _malformed(exc, data, pos) from None
    if pos != end:
        raise PackError(f"truncated packed data: item at byte {pos} runs past the end")
    return tuple(values)


def _utf8(raw: bytes) -> str | None:
    """``raw`` decoded as UTF-8, or None if it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _item_end(data: bytes, pos: int) -> int:
    """Index just past the packed item starting at ``pos``, without decoding it."""
    code = data[pos]
    if code in (STRING, BYTES, IRI_CODE, BNODE_CODE):
        return _terminated_end(data, pos + 1) + 1
    if INT_ZERO <= code < POS_INT_BIG:
        return pos + 1 + code - INT_ZERO
    if NEG_INT_BIG < code < INT_ZERO:
        return pos + 1 + INT_ZERO - code
    if code in (NULL, FALSE, TRUE, DECIMAL_ZERO):
        return pos + 1
    if code == FLOAT64:
        return pos + 9
    if code == LITERAL_CODE:
        end = _terminated_end(data, pos + 1)
        end = _terminated_end(data, end + 1)
        return _terminated_end(data, end + 1) + 1
    if code == BLOBREF_CODE:
        return pos + 33
    if TERMREF_CODE <= code < TERMREF_CODE + TERMREF_KINDS:
        return pos + TERMREF_SIZE
    return _decode(data, pos)[1]


# The first and last type codes of each type whose packing keeps its values in order.
_TYPE_CODES: dict[type, tuple[int, int]] = {
    int: (NEG_INT_BIG, POS_INT_BIG),
    float: (FLOAT64, FLOAT64),
    Decimal: (DECIMAL_NEG, DECIMAL_POS),
    str: (STRING, STRING),
    bytes: (BYTES, BYTES),
    IRI: (IRI_CODE, IRI_CODE),
    Literal: (LITERAL_CODE, LITERAL_CODE),
    _dt.date: (DATE_CODE, DATE_CODE),
    BlobRef: (BLOBREF_CODE, BLOBREF_CODE),  # long values of any type, by hash
    TermRef: (TERMREF_CODE, TERMREF_CODE + TERMREF_KINDS - 1),
}


def type_span(kind: type) -> tuple[bytes, bytes]:
    """The byte span ``[start, end)`` holding every packed value of type ``kind``.

    >>> start, end = type_span(int)
    >>> start <= pack_value(-10 ** 30) < pack_value(10 ** 30) < end
    True
    """
    try:
        first, last = _TYPE_CODES[kind]
    except KeyError:
        raise PackError(f"no ordered span for values of type {kind.__name__}") from None
    return bytes([first]), bytes([last + 1])


def value_span(low: Any = None, high: Any = None, *, include_low: bool = True, include_high: bool = True) -> tuple[bytes, bytes]:
    """The byte span ``[start, end)`` of the packed values of one type between ``low`` and
    ``high`` (None: unbounded on that side), for range scans: packing keeps the order of
    ints, floats (NaN aside), Decimals, str, bytes and dates among themselves.

    >>> start, end = value_span(30, 32, include_high=False)
    >>> [start <= pack_value(n) < end for n in (29, 30, 31, 32)]
    [False, True, True, False]
    """
    if low is None and high is None:
        raise PackError("a value span needs a low or a high bound")
    kind = type(low if low is not None else high)
    if low is not None and high is not None and type(high) is not kind:
        raise PackError(f"the bounds of a span have one type, not {type(low).__name__} and {type(high).__name__}")
    block_start, block_end = type_span(kind)
    # Every key holding the item continues with a type code below 0xff, so item + 0xff
    # lies past all of them and before the next greater item.
    start = block_start if low is None else pack_value(low) + (b"" if include_low else b"\xff")
    end = block_end if high is None else pack_value(high) + (b"\xff" if include_high else b"")
    return start, max(start, end)


def split(data: bytes, start: int = 0, count: int | None = None) -> list[bytes]:
    """Split packed bytes into the packed bytes of each item (for decoding with a cache).

    Given ``count``, the number of items the caller knows ``data`` holds, one regular
    expression splits it in C; keys of a store always have a known count.

    >>> split(pack("a", 1, None), count=3)
    [b'\\x02a\\x00', b'\\x15\\x01', b'\\x00']
    """
    if count is not None:
        items = find_items(data, start)
        # The catch-all takes the rest at the first item the expression does not cover
        # (a big int, a nested tuple): exact if that is the last item, else too few items.
        if len(items) == count:
            return items
    items = []
    end = len(data)
    pos = start
    try:
        while pos < end:
            nxt = _item_end(data, pos)
            items.append(data[pos:nxt])
            pos = nxt
    except _MALFORMED as exc:
        raise _malformed(exc, data, pos) from None
    return items


def _items_expression() -> re.Pattern[bytes]:
    """One alternative per type code of ``_item_end``, the rest by a catch-all (see split)."""
    text = rb"[^\x00]*(?:\x00\xff[^\x00]*)*\x00"  # an escaped string and its terminator
    fixed_ints = [bytes([INT_ZERO + n]) + rb"[\x00-\xff]{%d}" % n for n in range(1, 9)]
    fixed_ints += [bytes([INT_ZERO - n]) + rb"[\x00-\xff]{%d}" % n for n in range(1, 9)]
    integer = rb"(?:\x14|" + rb"|".join(re.escape(i[:1]) + i[1:] for i in fixed_ints) + rb")"
    alternatives = [
        rb"[\x01\x02\x40\x41]" + text,
        rb"\x42" + text + text + text,
        integer,
        rb"[\x00\x26\x27\x44]",
        rb"\x20[\x00-\xff]{4}",
        rb"\x21[\x00-\xff]{8}",
        rb"\x30[\x00-\xff]{16}",
        rb"\x45" + integer + rb"[0-9]*\x00",
        rb"\x43" + integer + rb"[0-9]*\xff",
        rb"\x46" + integer,
        rb"\x47" + integer,
        rb"\x48" + integer + integer,
        rb"\x4f[\x00-\xff]{32}",
        rb"[\x50-\x54][\x00-\xff]{5}",
        rb"[\x00-\xff]+",
    ]
    return re.compile(b"|".join(alternatives))


find_items = _items_expression().findall
"""``find_items(data, start)``: the first step of :func:`split` with ``count``, for hot
loops: exact when it returns as many items as ``data`` holds, else call ``split``."""
