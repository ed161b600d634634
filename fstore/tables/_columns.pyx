# cython: boundscheck=False, wraparound=False
"""Kart feature blobs decoded into Arrow column buffers, in C: no Python object per cell.

A blob is ``msgpack([legend name, [values]])`` (Kart's rules, :mod:`.packing`). For a
chunk of blobs that all name one legend, :func:`decode_values` reads every value of the
kinds it knows straight into buffers laid out as Arrow lays out its arrays: a validity
bitmap (bit set: not null) and the values (64-bit integers, 64-bit floats, a bitmap of
booleans, or 64-bit offsets into UTF-8 bytes). Anything else (another legend in the
chunk, a value of another type than its column's, an extension type) makes it answer
None, and the caller reads that chunk its usual way (``RowReader.stored_columns``), which
stays the reference and the reporter of bad values.

>>> import msgpack, struct
>>> blobs = [msgpack.packb(["L", [i, None if i == 1 else f"t{i}", i * 0.5]]) for i in range(3)]
>>> (valid, ints), (tvalid, offsets, data), (fvalid, floats) = decode_values(blobs, [INT, TEXT, FLOAT])
>>> struct.unpack("3q", ints), struct.unpack("4q", offsets), bytes(data), bytes(tvalid), struct.unpack("3d", floats)
((0, 1, 2), (0, 2, 2, 4), b't0t2', b'\\x05', (0.0, 0.5, 1.0))
>>> decode_values([msgpack.packb(["L", ["text"]])], [INT]) is None
True
"""

from libc.stdint cimport int64_t, uint64_t, uint32_t, uint16_t, uint8_t, int8_t, int16_t, int32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize, PyByteArray_GET_SIZE

__all__ = ["decode_values", "SKIP", "INT", "FLOAT", "BOOL", "TEXT"]

SKIP, INT, FLOAT, BOOL, TEXT = 0, 1, 2, 3, 4


cdef struct Cursor:
    const unsigned char* data
    Py_ssize_t size
    Py_ssize_t pos


cdef inline bint _need(Cursor* c, Py_ssize_t n) noexcept:
    return c.pos + n <= c.size


cdef inline uint64_t _be(const unsigned char* p, int n) noexcept:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n):
        v = (v << 8) | p[i]
    return v


cdef int _array_header(Cursor* c, Py_ssize_t* count) noexcept:
    """Read an array header: 0 on success, -1 if not an array."""
    cdef unsigned char b
    if not _need(c, 1):
        return -1
    b = c.data[c.pos]
    if 0x90 <= b <= 0x9f:
        count[0] = b & 0x0f
        c.pos += 1
        return 0
    if b == 0xdc and _need(c, 3):
        count[0] = <Py_ssize_t>_be(c.data + c.pos + 1, 2)
        c.pos += 3
        return 0
    if b == 0xdd and _need(c, 5):
        count[0] = <Py_ssize_t>_be(c.data + c.pos + 1, 4)
        c.pos += 5
        return 0
    return -1


cdef int _str(Cursor* c, Py_ssize_t* start, Py_ssize_t* length) noexcept:
    """Read a str: 0 on success (its bytes at data[start:start+length]), -1 if not a str."""
    cdef unsigned char b
    cdef Py_ssize_t n, head
    if not _need(c, 1):
        return -1
    b = c.data[c.pos]
    if 0xa0 <= b <= 0xbf:
        n, head = b & 0x1f, 1
    elif b == 0xd9 and _need(c, 2):
        n, head = c.data[c.pos + 1], 2
    elif b == 0xda and _need(c, 3):
        n, head = <Py_ssize_t>_be(c.data + c.pos + 1, 2), 3
    elif b == 0xdb and _need(c, 5):
        n, head = <Py_ssize_t>_be(c.data + c.pos + 1, 4), 5
    else:
        return -1
    if not _need(c, head + n):
        return -1
    start[0], length[0] = c.pos + head, n
    c.pos += head + n
    return 0


cdef int _int(Cursor* c, int64_t* out) noexcept:
    """Read an integer that fits int64: 0 on success, -1 otherwise."""
    cdef unsigned char b
    cdef uint64_t u
    if not _need(c, 1):
        return -1
    b = c.data[c.pos]
    if b <= 0x7f:
        out[0] = b
        c.pos += 1
        return 0
    if b >= 0xe0:
        out[0] = <int8_t>b
        c.pos += 1
        return 0
    if b == 0xcc and _need(c, 2):
        out[0] = c.data[c.pos + 1]; c.pos += 2; return 0
    if b == 0xcd and _need(c, 3):
        out[0] = <uint16_t>_be(c.data + c.pos + 1, 2); c.pos += 3; return 0
    if b == 0xce and _need(c, 5):
        out[0] = <uint32_t>_be(c.data + c.pos + 1, 4); c.pos += 5; return 0
    if b == 0xcf and _need(c, 9):
        u = _be(c.data + c.pos + 1, 8)
        if u > <uint64_t>9223372036854775807:
            return -1
        out[0] = <int64_t>u; c.pos += 9; return 0
    if b == 0xd0 and _need(c, 2):
        out[0] = <int8_t>c.data[c.pos + 1]; c.pos += 2; return 0
    if b == 0xd1 and _need(c, 3):
        out[0] = <int16_t><uint16_t>_be(c.data + c.pos + 1, 2); c.pos += 3; return 0
    if b == 0xd2 and _need(c, 5):
        out[0] = <int32_t><uint32_t>_be(c.data + c.pos + 1, 4); c.pos += 5; return 0
    if b == 0xd3 and _need(c, 9):
        out[0] = <int64_t>_be(c.data + c.pos + 1, 8); c.pos += 9; return 0
    return -1


cdef int _float(Cursor* c, double* out) noexcept:
    """Read a float (32 or 64 bits): 0 on success, -1 otherwise (an integer is not a
    float here: the reference path decides what an integer in a float column means)."""
    cdef unsigned char b
    cdef uint64_t bits
    cdef uint32_t bits32
    cdef float f
    if not _need(c, 1):
        return -1
    b = c.data[c.pos]
    if b == 0xcb and _need(c, 9):
        bits = _be(c.data + c.pos + 1, 8)
        memcpy(out, &bits, 8)
        c.pos += 9
        return 0
    if b == 0xca and _need(c, 5):
        bits32 = <uint32_t>_be(c.data + c.pos + 1, 4)
        memcpy(&f, &bits32, 4)
        out[0] = f
        c.pos += 5
        return 0
    return -1


cdef inline void _set_bit(unsigned char* bits, Py_ssize_t i) noexcept:
    bits[i >> 3] |= <unsigned char>(1 << (i & 7))


def decode_values(list blobs, list kinds):
    """The values of ``blobs`` (one legend, as many values each as ``kinds`` lists) as
    Arrow buffers, one entry per value index: None for :data:`SKIP`, else ``(validity,
    values)`` (:data:`INT`: int64, :data:`FLOAT`: float64, :data:`BOOL`: a bitmap) or
    ``(validity, offsets, data)`` (:data:`TEXT`: int64 offsets, UTF-8 bytes); each a
    bytearray. None when a blob does not fit (see the module doc)."""
    cdef Py_ssize_t n = len(blobs), width = len(kinds), j
    cdef Py_ssize_t bitmap = (n + 7) >> 3
    cdef list out = [], validity = [], values = [], texts = []
    cdef int kind
    if n == 0:
        return None
    for j in range(width):
        kind = kinds[j]
        if kind == SKIP:
            validity.append(None); values.append(None); texts.append(None)
            continue
        validity.append(bytearray(bitmap))
        if kind == INT or kind == FLOAT:
            values.append(bytearray(8 * n)); texts.append(None)
        elif kind == BOOL:
            values.append(bytearray(bitmap)); texts.append(None)
        elif kind == TEXT:
            values.append(bytearray(8 * (n + 1))); texts.append(bytearray(16 * n + 16))
        else:
            raise ValueError(f"unknown kind {kind!r}")
    # The loop reads and writes through C arrays: no Python object per cell.
    cdef Columns cols
    cols.width = width
    cols.kind = <int*>calloc(width + 1, sizeof(int))
    cols.valid = <unsigned char**>calloc(width + 1, sizeof(void*))
    cols.value = <unsigned char**>calloc(width + 1, sizeof(void*))
    cols.text = <unsigned char**>calloc(width + 1, sizeof(void*))
    cols.used = <Py_ssize_t*>calloc(width + 1, sizeof(Py_ssize_t))
    cols.capacity = <Py_ssize_t*>calloc(width + 1, sizeof(Py_ssize_t))
    if cols.kind == NULL or cols.valid == NULL or cols.value == NULL or cols.text == NULL or \
            cols.used == NULL or cols.capacity == NULL:
        _free(&cols)
        raise MemoryError()
    try:
        for j in range(width):
            cols.kind[j] = kinds[j]
            if cols.kind[j] == SKIP:
                continue
            cols.valid[j] = <unsigned char*>PyByteArray_AS_STRING(validity[j])
            cols.value[j] = <unsigned char*>PyByteArray_AS_STRING(values[j])
            if cols.kind[j] == TEXT:
                cols.text[j] = <unsigned char*>PyByteArray_AS_STRING(texts[j])
                cols.capacity[j] = PyByteArray_GET_SIZE(texts[j])
        if not _decode_rows(blobs, &cols, texts):
            return None
        for j in range(width):
            if cols.kind[j] == SKIP:
                out.append(None)
            elif cols.kind[j] == TEXT:
                PyByteArray_Resize(texts[j], cols.used[j])
                out.append((validity[j], values[j], texts[j]))
            else:
                out.append((validity[j], values[j]))
        return out
    finally:
        _free(&cols)


cdef struct Columns:
    Py_ssize_t width
    int* kind
    unsigned char** valid
    unsigned char** value
    unsigned char** text
    Py_ssize_t* used
    Py_ssize_t* capacity


cdef void _free(Columns* cols) noexcept:
    free(cols.kind); free(cols.valid); free(cols.value); free(cols.text); free(cols.used); free(cols.capacity)


cdef bint _decode_rows(list blobs, Columns* cols, list texts) except -1:
    """Every blob's values into the columns' buffers: True, or False when one does not fit."""
    cdef Py_ssize_t n = len(blobs), width = cols.width, row, j, count, start, length, header_end = -1, size
    cdef Cursor c
    cdef object blob
    cdef const unsigned char* first = NULL
    cdef int kind
    cdef int64_t iv, offset
    cdef double fv
    cdef unsigned char b
    for row in range(n):
        blob = blobs[row]
        if type(blob) is not bytes:
            return False
        c.data = <const unsigned char*>PyBytes_AS_STRING(blob)
        c.size = PyBytes_GET_SIZE(blob)
        c.pos = 0
        if _array_header(&c, &count) or count != 2 or _str(&c, &start, &length):
            return False
        # One legend for the chunk: the bytes up to the values' array are the first blob's.
        if row == 0:
            header_end = c.pos
            first = c.data
        elif c.pos != header_end or memcmp(c.data, first, header_end) != 0:
            return False
        if _array_header(&c, &count) or count != width:
            return False
        for j in range(width):
            kind = cols.kind[j]
            if kind == SKIP:
                if _skip(&c):
                    return False
                continue
            b = c.data[c.pos] if c.pos < c.size else 0
            if b == 0xc0:  # nil
                c.pos += 1
                if kind == TEXT:
                    offset = cols.used[j]
                    memcpy(cols.value[j] + 8 * (row + 1), &offset, 8)
                continue
            if kind == INT:
                if _int(&c, &iv):
                    return False
                memcpy(cols.value[j] + 8 * row, &iv, 8)
            elif kind == FLOAT:
                if _float(&c, &fv):
                    return False
                memcpy(cols.value[j] + 8 * row, &fv, 8)
            elif kind == BOOL:
                if b == 0xc3:
                    _set_bit(cols.value[j], row)
                elif b != 0xc2:
                    return False
                c.pos += 1
            else:  # TEXT
                if _str(&c, &start, &length):
                    return False
                if cols.used[j] + length > cols.capacity[j]:
                    size = max(2 * cols.capacity[j], cols.used[j] + length)
                    PyByteArray_Resize(texts[j], size)
                    cols.text[j] = <unsigned char*>PyByteArray_AS_STRING(texts[j])
                    cols.capacity[j] = size
                memcpy(cols.text[j] + cols.used[j], c.data + start, length)
                cols.used[j] += length
                offset = cols.used[j]
                memcpy(cols.value[j] + 8 * (row + 1), &offset, 8)
            _set_bit(cols.valid[j], row)
        if c.pos != c.size:
            return False
    return True


cdef int _skip(Cursor* c) noexcept:
    """Step over one value of any type but containers and extensions: 0, or -1."""
    cdef unsigned char b
    cdef int64_t iv
    cdef double fv
    cdef Py_ssize_t start, length
    if not _need(c, 1):
        return -1
    b = c.data[c.pos]
    if b == 0xc0 or b == 0xc2 or b == 0xc3:
        c.pos += 1
        return 0
    if _int(c, &iv) == 0 or _float(c, &fv) == 0 or _str(c, &start, &length) == 0:
        return 0
    if b == 0xc4 and _need(c, 2):
        length = c.data[c.pos + 1]
        if not _need(c, 2 + length):
            return -1
        c.pos += 2 + length
        return 0
    return -1
