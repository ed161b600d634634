# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of :meth:`nstore.store.NStore.packed`: a column of values packed in
one C loop (``docs/format.md``, "Tuple packing").

IRIs, strings, ``None``, booleans, integers that fit 64 bits and doubles are packed here;
every other value (literals, decimals, dates, long integers, NaN) goes to the Python
packer ``slow``, which stays the reference (``tests/nstore/test_pack_compiled.py`` compares
the two on every kind of value). IRIs and strings are cached by their text as
``NStore.packed`` caches them, in the same dicts.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.math cimport isnan
from libc.string cimport memchr, memcpy, memset

from .terms import IRI

__all__ = ["pack_column", "term_refs", "term_parts", "split_items", "split_rows", "canonical_sum", "framed", "record_sums",
           "unpack_scalars"]

cdef object _IRI = IRI


cdef bytes _escaped(unsigned char code, object text):
    """``code``, the UTF-8 of ``text`` with each 00 written 00 ff, then 00 (None if the
    text is not valid Unicode: the slow packer names it)."""
    cdef Py_ssize_t size
    cdef const char* data
    try:
        data = PyUnicode_AsUTF8AndSize(text, &size)
    except UnicodeEncodeError:
        return None
    return _escaped_data(code, data, size)


cdef bytes _escaped_data(unsigned char code, const char* data, Py_ssize_t size):
    """``code``, ``data`` with each 00 written 00 ff, then 00."""
    cdef Py_ssize_t zeros = 0, i, pos
    cdef const char* hit
    cdef bytes out
    cdef char* target
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


cdef object _cached(dict cache, object text, unsigned char code, Py_ssize_t limit, Py_ssize_t cache_limit):
    """The escaped packing of ``text`` under ``code`` from ``cache``, or made and kept there
    if at most ``limit`` bytes (the cache cleared past ``cache_limit`` entries)."""
    cdef object packed = cache.get(text)
    if packed is None:
        packed = _escaped(code, text)
        if packed is not None and len(packed) <= limit:
            if len(cache) > cache_limit:
                cache.clear()
            cache[text] = packed
    return packed


def pack_column(list values, object slow, dict iris, dict strings, Py_ssize_t limit, Py_ssize_t cache_limit) -> list:
    """The packed form of each value (``slow(value)`` for the kinds packed in Python); IRIs
    (by their text in ``iris``) and strings (in ``strings``) packing to at most ``limit``
    bytes are cached, each cache cleared when it passes ``cache_limit`` entries.

    >>> from nstore.pack import pack_value
    >>> pack_column([None, "a", 7, -1, True, 1.5, b"\\x00b"], pack_value, {}, {}, 100, 10)
    [b'\\x00', b'\\x02a\\x00', b'\\x15\\x07', b'\\x13\\xfe', b"'", b'!\\xbf\\xf8\\x00\\x00\\x00\\x00\\x00\\x00', b'\\x01\\x00\\xffb\\x00']
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
            packed = _cached(iris, value.value, 0x40, limit, cache_limit)
        elif kind is str:
            packed = _cached(strings, value, 0x02, limit, cache_limit)
        elif kind is bytes:
            packed = _escaped_data(0x01, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
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


def term_refs(list parts, unsigned long long first) -> list:
    """The TermRef item of each packed term, numbered from ``first`` in turn: the type code
    ``0x50 + kind`` (kind by the term's own type code: IRI 0, blank node 1, string 2,
    literal 3, bytes 4) then the id in 5 bytes big-endian (``docs/format.md``, "Items").

    >>> term_refs([b"\\x40urn:a\\x00", b"\\x02x\\x00"], 7)
    [b'P\\x00\\x00\\x00\\x00\\x07', b'R\\x00\\x00\\x00\\x00\\x08']
    """
    cdef Py_ssize_t n = len(parts), i, j
    cdef list out = [None] * n
    cdef bytes part, item
    cdef unsigned char* target
    cdef unsigned long long number
    cdef int kind, code
    if first + n > (<unsigned long long>1) << 40:
        raise OverflowError(f"term ids past 2^40 ({first} + {n})")
    for i in range(n):
        part = <bytes>parts[i]
        code = part[0] if len(part) else -1
        if code == 0x40:
            kind = 0
        elif code == 0x41:
            kind = 1
        elif code == 0x02:
            kind = 2
        elif code == 0x42:
            kind = 3
        elif code == 0x01:
            kind = 4
        else:
            raise ValueError(f"{part[:40]!r} is not a packed term the dictionary holds")
        item = PyBytes_FromStringAndSize(NULL, 6)
        target = <unsigned char*>PyBytes_AS_STRING(item)
        target[0] = 0x50 + kind
        number = first + i
        for j in range(5, 0, -1):
            target[j] = number & 0xFF
            number >>= 8
        out[i] = item
    return out


def term_parts(object parts) -> list:
    """The distinct packed terms the dictionary holds among ``parts`` (IRIs, blank nodes,
    strings, literals, bytes: not the inline numbers and dates), in first-seen order.

    >>> term_parts([b"\\x40a\\x00", b"\\x15\\x01", b"\\x40a\\x00", b"\\x02b\\x00"])
    [b'@a\\x00', b'\\x02b\\x00']
    """
    cdef dict seen = {}
    cdef object part
    cdef const char* data
    cdef unsigned char code
    for part in parts:
        if not PyBytes_Check(part) or PyBytes_GET_SIZE(part) == 0:
            raise TypeError(f"a packed term is non-empty bytes, not {part!r:.40}")
        code = <unsigned char>PyBytes_AS_STRING(part)[0]
        if code == 0x40 or code == 0x41 or code == 0x02 or code == 0x42 or code == 0x01:
            seen[part] = None
    return list(seen)


cdef extern from "Python.h":
    Py_hash_t _Py_HashBytes(const void* data, Py_ssize_t size)


cdef Py_ssize_t _escaped_end(const unsigned char* data, Py_ssize_t pos, Py_ssize_t size) except -2:
    """Just past the 00 that ends the escaped string starting at ``pos`` (-1: none)."""
    while pos < size:
        if data[pos] == 0:
            if pos + 1 < size and data[pos + 1] == 0xFF:
                pos += 2
                continue
            return pos + 1
        pos += 1
    return -1


cdef Py_ssize_t _item_end(const unsigned char* data, Py_ssize_t pos, Py_ssize_t size) except -2:
    """Just past the packed item starting at ``pos`` (-1: it does not end inside
    ``size`` bytes, or its type code is not one keys hold)."""
    cdef unsigned char code
    cdef Py_ssize_t length, i, end
    if pos >= size:
        return -1
    code = data[pos]
    if code == 0x01 or code == 0x02 or code == 0x40 or code == 0x41:
        end = _escaped_end(data, pos + 1, size)
    elif 0x14 <= code <= 0x1C:
        end = pos + 1 + code - 0x14
    elif 0x0C <= code <= 0x13:
        end = pos + 1 + 0x14 - code
    elif code == 0x00 or code == 0x26 or code == 0x27 or code == 0x44:
        end = pos + 1
    elif code == 0x21:
        end = pos + 9
    elif code == 0x20:
        end = pos + 5
    elif code == 0x30:
        end = pos + 17
    elif code == 0x4F:
        end = pos + 33
    elif 0x50 <= code <= 0x54:
        end = pos + 6
    elif code == 0x42:
        end = _escaped_end(data, pos + 1, size)
        if end >= 0:
            end = _escaped_end(data, end, size)
        if end >= 0:
            end = _escaped_end(data, end, size)
    elif code == 0x1D or code == 0x0B:  # an integer of more than 8 bytes, its length first
        if pos + 1 >= size:
            return -1
        length = data[pos + 1] if code == 0x1D else data[pos + 1] ^ 0xFF
        if length == 0xFF:  # past 254 bytes: the length in the next 8 bytes
            if pos + 10 > size:
                return -1
            length = 0
            for i in range(8):
                length = (length << 8) | (data[pos + 2 + i] if code == 0x1D else data[pos + 2 + i] ^ 0xFF)
            end = pos + 10 + length
        else:
            end = pos + 2 + length
    elif code == 0x46 or code == 0x47:  # a date or naive datetime: one integer
        end = _item_end(data, pos + 1, size)
    elif code == 0x48:  # an aware datetime: two integers
        end = _item_end(data, pos + 1, size)
        if end >= 0:
            end = _item_end(data, end, size)
    elif code == 0x43 or code == 0x45:  # a decimal: its exponent, then digits up to ff / 00
        end = _item_end(data, pos + 1, size)
        while end >= 0 and end < size and data[end] != (0xFF if code == 0x43 else 0x00):
            end += 1
        end = end + 1 if 0 <= end < size else -1
    else:
        return -1
    return end if 0 <= end <= size else -1


cpdef list split_items(bytes key, Py_ssize_t skip, Py_ssize_t count):
    """The packed items of ``key`` after ``skip`` bytes, ``count`` of them (as
    :func:`nstore.pack.split` gives them; ValueError if they do not fill the key).

    >>> split_items(b"P\\x15\\x07\\x02ab\\x00\\x14", 1, 3)
    [b'\\x15\\x07', b'\\x02ab\\x00', b'\\x14']
    """
    cdef const unsigned char* data = <const unsigned char*>PyBytes_AS_STRING(key)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(key), pos = skip, end, i
    cdef list items = []
    for i in range(count):
        end = _item_end(data, pos, size)
        if end < 0:
            raise ValueError(f"item {i} at byte {pos} of {key[:60].hex()} is not a packed item")
        items.append(key[pos:end])
        pos = end
    if pos != size:
        raise ValueError(f"{size - pos} bytes after the {count} items of {key[:60].hex()}")
    return items


def canonical_sum(list keys, list values, Py_ssize_t skip, tuple perm, object blob_refs):
    """For keys of one index (``skip`` bytes of prefix, then the items of a tuple in the
    order ``perm``): the sum modulo 2^64 of a hash of each tuple's items in tuple order and
    its value, so that every index of an intact store sums the same; or ``(key, what is
    wrong)`` for the first key that is not such a tuple. ``blob_refs`` (a list, or None)
    gets each blob reference item (verify counts them).

    >>> canonical_sum([b"P\\x15\\x01\\x15\\x02"], [b""], 1, (0, 1), None) == canonical_sum([b"Q\\x15\\x02\\x15\\x01"], [b""], 1, (1, 0), None)
    True
    """
    cdef Py_ssize_t n = len(perm), row, slot, pos, end, size, total_size, value_size
    cdef Py_ssize_t starts[64]
    cdef Py_ssize_t ends[64]
    cdef Py_ssize_t order[64]
    cdef unsigned char buffer[4096]
    cdef const unsigned char* data
    cdef unsigned long long total = 0
    cdef object key, value
    if n > 64:
        raise ValueError(f"{n} items")
    for slot in range(n):
        order[slot] = perm[slot]
    for row in range(len(keys)):
        key = keys[row]
        value = values[row]
        data = <const unsigned char*>PyBytes_AS_STRING(key)
        size = PyBytes_GET_SIZE(key)
        pos = skip
        for slot in range(n):
            end = _item_end(data, pos, size)
            if end < 0:
                return key, f"not packed items at byte {pos}"
            starts[order[slot]] = pos
            ends[order[slot]] = end
            if blob_refs is not None and data[pos] == 0x4F:
                blob_refs.append(key[pos:end])
            pos = end
        if pos != size:
            return key, f"{size - pos} bytes after its {n} items"
        value_size = PyBytes_GET_SIZE(value)
        if size - skip + value_size > 4096:
            return key, "longer than a key"
        total_size = 0
        for slot in range(n):
            memcpy(buffer + total_size, data + starts[slot], ends[slot] - starts[slot])
            total_size += ends[slot] - starts[slot]
        memcpy(buffer + total_size, PyBytes_AS_STRING(value), value_size)
        total += <unsigned long long>_Py_HashBytes(buffer, total_size + value_size)
    return total


def split_rows(list pairs, Py_ssize_t skip, Py_ssize_t count) -> list:
    """The packed items of the key of each ``(key, value)`` pair after ``skip`` bytes, as
    :func:`split_items` gives them, for a batch of keys a scan read.

    >>> split_rows([(b"P\\x15\\x07\\x14", b"")], 1, 2)
    [[b'\\x15\\x07', b'\\x14']]
    """
    cdef Py_ssize_t n = len(pairs), row
    cdef list out = [None] * n
    for row in range(n):
        out[row] = split_items(<bytes>(<tuple>pairs[row])[0], skip, count)
    return out


def framed(list parts, bytes mark=b"") -> bytes:
    """Each part as a 4-byte big-endian length, then ``mark`` and the part (the length
    counts both), one after another: what a hash of many records takes in one update.

    >>> framed([b"ab", b""], b"\\xff")
    b'\\x00\\x00\\x00\\x03\\xffab\\x00\\x00\\x00\\x01\\xff'
    """
    cdef Py_ssize_t n = len(parts), i, total = 0, size, pos = 0
    cdef Py_ssize_t mark_size = PyBytes_GET_SIZE(mark)
    cdef object part
    cdef bytes out
    cdef unsigned char* target
    for i in range(n):
        part = parts[i]
        if not PyBytes_Check(part):
            raise TypeError(f"a part is bytes, not {type(part).__name__}")
        total += 4 + mark_size + PyBytes_GET_SIZE(part)
    out = PyBytes_FromStringAndSize(NULL, total)
    target = <unsigned char*>PyBytes_AS_STRING(out)
    for i in range(n):
        part = parts[i]
        size = mark_size + PyBytes_GET_SIZE(part)
        if size > 0xFFFFFFFF:
            raise OverflowError(f"a part of {size} bytes")
        target[pos] = (size >> 24) & 0xFF
        target[pos + 1] = (size >> 16) & 0xFF
        target[pos + 2] = (size >> 8) & 0xFF
        target[pos + 3] = size & 0xFF
        memcpy(target + pos + 4, PyBytes_AS_STRING(mark), mark_size)
        memcpy(target + pos + 4 + mark_size, PyBytes_AS_STRING(part), PyBytes_GET_SIZE(part))
        pos += 4 + size
    return out


def record_sums(list records, bytes mark, object sha256):
    """For change records (a packed tuple, then ``01`` alive or ``00`` dead): the sums
    modulo 2^256 of ``sha256(mark + tuple)`` read big-endian over the alive records and
    over the dead ones, and how many of each: what a state digest moves by (its hashes
    from ``sha256``, hashlib's, called once a record; the sums in C).

    >>> import hashlib
    >>> born, dead, alive, gone = record_sums([b"a\\x01", b"b\\x00"], b"", hashlib.sha256)
    >>> born == int.from_bytes(hashlib.sha256(b"a").digest(), "big"), dead > 0, alive, gone
    (True, True, 1, 1)
    """
    cdef unsigned long long sums[2][4]
    cdef unsigned long long limb, carry, word
    cdef Py_ssize_t counts[2]
    cdef Py_ssize_t i, n = len(records), size, mark_size = PyBytes_GET_SIZE(mark)
    cdef int side, j, k
    cdef object record, data, digest
    cdef const unsigned char* hashed
    cdef char* target
    memset(sums, 0, sizeof(sums))
    counts[0] = counts[1] = 0
    for i in range(n):
        record = records[i]
        if not PyBytes_Check(record) or PyBytes_GET_SIZE(record) == 0:
            raise TypeError(f"a record is non-empty bytes, not {record!r:.40}")
        size = PyBytes_GET_SIZE(record) - 1
        side = 0 if (<const unsigned char*>PyBytes_AS_STRING(record))[size] == 1 else 1
        data = PyBytes_FromStringAndSize(NULL, mark_size + size)
        target = PyBytes_AS_STRING(data)
        memcpy(target, PyBytes_AS_STRING(mark), mark_size)
        memcpy(target + mark_size, PyBytes_AS_STRING(record), size)
        digest = sha256(data).digest()
        hashed = <const unsigned char*>PyBytes_AS_STRING(digest)
        carry = 0
        for j in range(4):  # limb j holds bits 64j.. of the sum: digest bytes 24-8j .. 31-8j
            word = 0
            for k in range(8):
                word = (word << 8) | hashed[24 - 8 * j + k]
            limb = sums[side][j] + word
            sums[side][j] = limb + carry
            carry = 1 if (limb < word or (carry and sums[side][j] == 0)) else 0
        counts[side] += 1
    return (_as_int(sums[0]), _as_int(sums[1]), counts[0], counts[1])


cdef object _as_int(unsigned long long* limbs):
    cdef object high = limbs[3], upper = limbs[2], lower = limbs[1], low = limbs[0]  # as Python ints
    return (high << 192) | (upper << 128) | (lower << 64) | low


cdef object _scalar(const unsigned char* data, Py_ssize_t* at, Py_ssize_t size):
    """The scalar packed at ``at[0]`` (None, bytes, str, an int of up to 8 bytes, a double,
    a bool), ``at[0]`` moved past it; ``_NOT_SCALAR`` for anything else."""
    cdef Py_ssize_t pos = at[0], end, width, i
    cdef unsigned char code
    cdef unsigned long long body = 0, bits = 0
    cdef double real
    cdef bytes raw
    if pos >= size:
        return _NOT_SCALAR
    code = data[pos]
    pos += 1
    if code == 0x00:
        at[0] = pos
        return None
    if code == 0x26 or code == 0x27:
        at[0] = pos
        return code == 0x27
    if 0x0C <= code <= 0x1C:
        width = code - 0x14 if code >= 0x14 else 0x14 - code
        if pos + width > size:
            return _NOT_SCALAR
        for i in range(width):
            body = (body << 8) | data[pos + i]
        at[0] = pos + width
        if code >= 0x14:
            return body
        # value = body - (256^width - 1): minus the magnitude, which fits 64 bits
        return -<object>((~(<unsigned long long>0) >> (64 - 8 * width)) - body)
    if code == 0x21:
        if pos + 8 > size:
            return _NOT_SCALAR
        for i in range(8):
            bits = (bits << 8) | data[pos + i]
        bits = bits ^ ((<unsigned long long>1) << 63) if bits >> 63 else ~bits
        memcpy(&real, &bits, 8)
        at[0] = pos + 8
        return real
    if code == 0x01 or code == 0x02:
        end = pos
        while True:
            hit = <const unsigned char*>memchr(data + end, 0, size - end)
            if hit == NULL:
                return _NOT_SCALAR
            end = hit - data
            if end + 1 < size and data[end + 1] == 0xFF:
                end += 2
                continue
            break
        raw = PyBytes_FromStringAndSize(<const char*>data + pos, end - pos)
        if b"\x00\xff" in raw:
            raw = raw.replace(b"\x00\xff", b"\x00")
        at[0] = end + 1
        return raw if code == 0x01 else raw.decode("utf-8")
    return _NOT_SCALAR


cdef object _NOT_SCALAR = object()


def unpack_scalars(list keys, Py_ssize_t skip):
    """Each key's values after ``skip`` bytes as a list (what :func:`nstore.pack.unpack`
    gives, as a list), for keys of scalars alone: None, bytes, str, integers of up to 8
    bytes, doubles and booleans; None when a key holds anything else (unpack it in Python).

    >>> from nstore.pack import pack
    >>> unpack_scalars([b"P" + pack(1, "a\\x00b", -300, None, 1.5, True, b"x")], 1)
    [[1, 'a\\x00b', -300, None, 1.5, True, b'x']]
    >>> unpack_scalars([b"P" + pack((1, 2))], 1) is None
    True
    """
    cdef Py_ssize_t n = len(keys), k, size, pos
    cdef list out = [None] * n, values
    cdef bytes key
    cdef const unsigned char* data
    cdef object value
    for k in range(n):
        key = keys[k]
        data = <const unsigned char*>PyBytes_AS_STRING(key)
        size = PyBytes_GET_SIZE(key)
        pos = skip
        values = []
        while pos < size:
            try:
                value = _scalar(data, &pos, size)
            except UnicodeDecodeError:
                return None
            if value is _NOT_SCALAR:
                return None
            values.append(value)
        out[k] = values
    return out
