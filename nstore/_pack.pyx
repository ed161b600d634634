# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of :meth:`nstore.store.NStore.packed`: a column of values packed in
one C loop (``docs/format.md``, "Tuple packing").

IRIs, strings, ``None``, booleans, integers that fit 64 bits and doubles are packed here;
every other value (literals, decimals, dates, long integers, NaN) goes to the Python
packer ``slow``, which stays the reference (``tests/nstore/test_pack_column.py`` compares
the two on every kind of value). IRIs and strings are cached by their text as
``NStore.packed`` caches them, in the same dicts.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.math cimport isnan
from libc.string cimport memchr, memcpy

from .terms import IRI

__all__ = ["pack_column"]

cdef object _IRI = IRI


cdef bytes _escaped(unsigned char code, object text):
    """``code``, the UTF-8 of ``text`` with each 00 written 00 ff, then 00 (None if the
    text is not valid Unicode: the slow packer names it)."""
    cdef Py_ssize_t size, zeros = 0, i, pos
    cdef const char* data
    cdef const char* hit
    cdef bytes out
    cdef char* target
    try:
        data = PyUnicode_AsUTF8AndSize(text, &size)
    except UnicodeEncodeError:
        return None
    hit = <const char*>memchr(data, 0, size)
    while hit != NULL:
        zeros += 1
        hit = <const char*>memchr(hit + 1, 0, size - (hit + 1 - data))
    out = PyBytes_FromStringAndSize(NULL, size + zeros + 2)
    target = PyBytes_AS_STRING(out)
    target[0] = <char>code
    if zeros == 0:
        memcpy(target + 1, data, size)
        pos = 1 + size
    else:
        pos = 1
        for i in range(size):
            target[pos] = data[i]
            pos += 1
            if data[i] == 0:
                target[pos] = <char>0xFF
                pos += 1
    target[pos] = 0
    return out


cdef bytes _integer(long long value):
    cdef unsigned long long magnitude, body
    cdef int size = 0, i
    cdef unsigned char buffer[9]
    if value == 0:
        return b"\x14"
    magnitude = <unsigned long long>value if value > 0 else (<unsigned long long>(-(value + 1))) + 1
    body = magnitude
    while body:
        size += 1
        body >>= 8
    if value > 0:
        body = magnitude
        buffer[0] = 0x14 + size
    else:  # value + 256^size - 1 (modulo 2^64: the mask is 256^size - 1)
        body = (<unsigned long long>value) + ((~(<unsigned long long>0)) >> (64 - 8 * size))
        buffer[0] = 0x14 - size
    for i in range(size):
        buffer[size - i] = <unsigned char>(body & 0xFF)
        body >>= 8
    return PyBytes_FromStringAndSize(<const char*>buffer, size + 1)


cdef bytes _double(double value):
    cdef unsigned long long bits
    cdef unsigned char buffer[9]
    cdef int i
    memcpy(&bits, &value, 8)
    if bits >> 63:
        bits = ~bits
    else:
        bits ^= (<unsigned long long>1) << 63
    buffer[0] = 0x21
    for i in range(8):
        buffer[8 - i] = <unsigned char>(bits & 0xFF)
        bits >>= 8
    return PyBytes_FromStringAndSize(<const char*>buffer, 9)


def pack_column(list values, object slow, dict iris, dict strings, Py_ssize_t limit, Py_ssize_t cache_limit) -> list:
    """The packed form of each value (``slow(value)`` for the kinds packed in Python); IRIs
    (by their text in ``iris``) and strings (in ``strings``) packing to at most ``limit``
    bytes are cached, each cache cleared when it passes ``cache_limit`` entries.

    >>> from nstore.pack import pack_value
    >>> pack_column([None, "a", 7, -1, True, 1.5], pack_value, {}, {}, 100, 10)
    [b'\\x00', b'\\x02a\\x00', b'\\x15\\x07', b'\\x13\\xfe', b"'", b'!\\xbf\\xf8\\x00\\x00\\x00\\x00\\x00\\x00']
    """
    cdef Py_ssize_t n = len(values), i
    cdef list out = [None] * n
    cdef object value, kind, text, packed
    cdef long long number
    cdef int overflow
    cdef double real
    for i in range(n):
        value = values[i]
        kind = type(value)
        packed = None
        if value is None:
            packed = b"\x00"
        elif kind is _IRI:
            text = value.value
            packed = iris.get(text)
            if packed is None:
                packed = _escaped(0x40, text)
                if packed is not None and len(packed) <= limit:
                    if len(iris) > cache_limit:
                        iris.clear()
                    iris[text] = packed
        elif kind is str:
            packed = strings.get(value)
            if packed is None:
                packed = _escaped(0x02, value)
                if packed is not None and len(packed) <= limit:
                    if len(strings) > cache_limit:
                        strings.clear()
                    strings[value] = packed
        elif kind is bool:
            packed = b"\x27" if value else b"\x26"
        elif kind is int:
            number = PyLong_AsLongLongAndOverflow(value, &overflow)
            if not overflow:
                packed = _integer(number)
        elif kind is float:
            real = value
            if not isnan(real):
                packed = _double(real)
        if packed is None:
            packed = slow(value)
        out[i] = packed
    return out
