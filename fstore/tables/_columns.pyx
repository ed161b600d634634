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
from libc.stdlib cimport calloc, free, realloc
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_AsUnsignedLongLong
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_GET_LENGTH

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
from libc.string cimport memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize, PyByteArray_GET_SIZE

__all__ = ["decode_values", "encode_rows", "parse_fields", "guess_fields", "text_keys", "SKIP", "INT", "FLOAT", "BOOL", "TEXT", "OTHER",
           "TEXT_FIELD", "INT_FIELD", "FLOAT_FIELD", "BOOL_FIELD", "DATE_FIELD", "OTHER_FIELD"]

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


# -- rows -> feature blobs (the compiled half of RowEncoder.prepare) ---------------------------

OTHER = 5
"""A column whose cells go through its Python encoder (:func:`encode_rows`)."""


cdef struct Buffer:
    unsigned char* data
    Py_ssize_t size
    Py_ssize_t used


cdef int _grow(Buffer* b, Py_ssize_t more) except -1:
    cdef Py_ssize_t size
    cdef unsigned char* data
    if b.used + more <= b.size:
        return 0
    size = max(2 * b.size, b.used + more + 64)
    data = <unsigned char*>realloc(b.data, size)
    if data == NULL:
        raise MemoryError()
    b.data, b.size = data, size
    return 0


cdef inline void _byte(Buffer* b, unsigned char value) noexcept:
    b.data[b.used] = value
    b.used += 1


cdef inline void _big_endian(Buffer* b, unsigned long long value, int size) noexcept:
    cdef int k
    for k in range(size):
        b.data[b.used + k] = <unsigned char>(value >> (8 * (size - 1 - k)))
    b.used += size


cdef inline void _length_header(Buffer* b, Py_ssize_t length, unsigned char code8) noexcept:
    """A str or bin header of 8, 16 or 32 bits (codes ``code8`` and the two after it)."""
    if length < 256:
        _byte(b, code8); _big_endian(b, <unsigned long long>length, 1)
    elif length < 65536:
        _byte(b, code8 + 1); _big_endian(b, <unsigned long long>length, 2)
    else:
        _byte(b, code8 + 2); _big_endian(b, <unsigned long long>length, 4)


cdef int _pack_value(Buffer* b, object value) except -1:
    """Kart's msgpack of one stored value (``packing.pack``): 1 when packed, 0 for a kind
    left to Python (a geometry, json, an integer past 64 bits, a lone surrogate)."""
    cdef long long v
    cdef unsigned long long u
    cdef int overflow
    cdef double d
    cdef Py_ssize_t length
    cdef const char* text
    cdef object kind = type(value)
    _grow(b, 9)
    if value is None:
        _byte(b, 0xc0)
    elif kind is bool:
        _byte(b, 0xc3 if value is True else 0xc2)
    elif kind is int:
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow < 0:
            return 0
        if overflow > 0:
            try:
                u = PyLong_AsUnsignedLongLong(value)
            except OverflowError:
                return 0
            _byte(b, 0xcf); _big_endian(b, u, 8)
        elif 0 <= v < 128:
            _byte(b, <unsigned char>v)
        elif v >= 0:
            if v < 256:
                _byte(b, 0xcc); _big_endian(b, <unsigned long long>v, 1)
            elif v < 65536:
                _byte(b, 0xcd); _big_endian(b, <unsigned long long>v, 2)
            elif v < 4294967296:
                _byte(b, 0xce); _big_endian(b, <unsigned long long>v, 4)
            else:
                _byte(b, 0xcf); _big_endian(b, <unsigned long long>v, 8)
        elif v >= -32:
            _byte(b, <unsigned char>(<signed char>v))
        elif v >= -128:
            _byte(b, 0xd0); _big_endian(b, <unsigned long long>v, 1)
        elif v >= -32768:
            _byte(b, 0xd1); _big_endian(b, <unsigned long long>v, 2)
        elif v >= -2147483648:
            _byte(b, 0xd2); _big_endian(b, <unsigned long long>v, 4)
        else:
            _byte(b, 0xd3); _big_endian(b, <unsigned long long>v, 8)
    elif kind is float:
        d = value
        memcpy(&u, &d, 8)
        _byte(b, 0xcb); _big_endian(b, u, 8)
    elif kind is str:
        try:
            text = PyUnicode_AsUTF8AndSize(value, &length)
        except UnicodeEncodeError:
            return 0
        _grow(b, length + 5)
        if length < 32:
            _byte(b, <unsigned char>(0xa0 | length))
        else:
            _length_header(b, length, 0xd9)
        memcpy(b.data + b.used, text, length)
        b.used += length
    elif kind is bytes:
        length = PyBytes_GET_SIZE(value)
        _grow(b, length + 5)
        _length_header(b, length, 0xc4)
        memcpy(b.data + b.used, PyBytes_AS_STRING(value), length)
        b.used += length
    else:
        return 0
    return 1


cdef struct Checks:
    int* kind
    long long* low
    long long* high
    Py_ssize_t* limit


cdef Checks _checks(list kinds, list lows, list highs, list lengths) except *:
    """Each column's kind and checks (its range, its length) in C arrays."""
    cdef Py_ssize_t width = len(kinds), j
    cdef Checks checks
    checks.kind = <int*>calloc(width + 1, sizeof(int))
    checks.low = <long long*>calloc(width + 1, sizeof(long long))
    checks.high = <long long*>calloc(width + 1, sizeof(long long))
    checks.limit = <Py_ssize_t*>calloc(width + 1, sizeof(Py_ssize_t))
    if checks.kind == NULL or checks.low == NULL or checks.high == NULL or checks.limit == NULL:
        _free_checks(&checks)
        raise MemoryError()
    for j in range(width):
        checks.kind[j], checks.low[j], checks.high[j], checks.limit[j] = kinds[j], lows[j], highs[j], lengths[j]
    return checks


cdef void _free_checks(Checks* checks) noexcept:
    free(checks.kind); free(checks.low); free(checks.high); free(checks.limit)


cdef object _cell(object value, int kind, long long low, long long high, Py_ssize_t length, object encoder):
    """A cell's stored value: itself when its exact type passes the column's check
    (:func:`~.types.column_encoder`'s fast checks), else what its Python encoder gives
    (which raises for a bad value)."""
    cdef long long v
    cdef int overflow
    if value is None:
        return None
    if kind == INT and type(value) is int:
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if not overflow and low <= v <= high:
            return value
    elif kind == FLOAT and type(value) is float:
        return value
    elif kind == TEXT and type(value) is str:
        if length < 0 or PyUnicode_GET_LENGTH(value) <= length:
            return value
    elif kind == BOOL and type(value) is bool:
        return value
    return encoder(value)


def encode_rows(list rows, list names, list kinds, list lows, list highs, list lengths, list encoders,
                list pk_index, list non_pk_index, bytes header):
    """``(pk, blob, cells)`` of each row (a dict by column name), as
    ``RowEncoder._encode_values`` gives them, or None for a row left to it: one that is
    not a dict, names a column the table lacks, has a null key value, or has a cell that
    its encoder refuses or that packs only in Python (it then raises, or encodes, as it
    always did). ``kinds`` per column: :data:`INT` (``lows``/``highs``: its range),
    :data:`FLOAT`, :data:`TEXT` (``lengths``: its limit, -1 none), :data:`BOOL`, or
    :data:`OTHER` (the encoder's result); ``header``: the blob's bytes before its values'
    array (``92`` and the legend name).

    >>> rows = encode_rows([{"k": 1, "v": "a"}], ["k", "v"], [INT, TEXT], [-9, 0], [9, 0], [-1, -1],
    ...                    [None, None], [0], [1], b"\\x92\\xa1L")
    >>> rows[0][0], rows[0][1].hex(), rows[0][2]
    ((1,), '92a14c91a161', [1, 'a'])
    """
    cdef Py_ssize_t n = len(rows), width = len(names), i, j, present, count_values = len(non_pk_index)
    cdef Py_ssize_t count_pk = len(pk_index)
    cdef list out = [None] * n, cells
    cdef object row, value, key_value
    cdef tuple pk
    cdef Buffer buffer
    cdef Checks checks = _checks(kinds, lows, highs, lengths)
    cdef bint failed
    buffer.data, buffer.size, buffer.used = NULL, 0, 0
    try:
        for i in range(n):
            row = rows[i]
            if type(row) is not dict:
                continue
            cells = [None] * width
            present = 0
            failed = False
            for j in range(width):
                value = (<dict>row).get(names[j])
                if value is None:
                    if names[j] in <dict>row:
                        present += 1
                    continue
                present += 1
                try:
                    cells[j] = _cell(value, checks.kind[j], checks.low[j], checks.high[j], checks.limit[j], encoders[j])
                except Exception:  # the Python encoder names it when the row is encoded there
                    failed = True
                    break
            if failed or present != len(<dict>row):
                continue
            pk = PyTuple_New(count_pk)
            for j in range(count_pk):
                key_value = cells[<Py_ssize_t>pk_index[j]]
                if key_value is None:
                    failed = True
                    break
                Py_INCREF(key_value)
                PyTuple_SET_ITEM(pk, j, key_value)
            if failed:
                continue
            buffer.used = 0
            _grow(&buffer, PyBytes_GET_SIZE(header) + 5)
            memcpy(buffer.data, PyBytes_AS_STRING(header), PyBytes_GET_SIZE(header))
            buffer.used = PyBytes_GET_SIZE(header)
            if count_values < 16:
                _byte(&buffer, <unsigned char>(0x90 | count_values))
            elif count_values < 65536:
                _byte(&buffer, 0xdc); _big_endian(&buffer, <unsigned long long>count_values, 2)
            else:
                _byte(&buffer, 0xdd); _big_endian(&buffer, <unsigned long long>count_values, 4)
            for j in range(count_values):
                if not _pack_value(&buffer, cells[<Py_ssize_t>non_pk_index[j]]):
                    failed = True
                    break
            if failed:
                continue
            out[i] = (pk, PyBytes_FromStringAndSize(<const char*>buffer.data, buffer.used), cells)
        return out
    finally:
        _free_checks(&checks)
        free(buffer.data)


# -- CSV fields -> values (the compiled half of csv_io's parse) ------------------------------

TEXT_FIELD, INT_FIELD, FLOAT_FIELD, BOOL_FIELD, DATE_FIELD, OTHER_FIELD = 0, 1, 2, 3, 4, 5
"""How :func:`parse_fields` reads a column's fields (any field it does not read so goes to
the column's Python parser)."""


cdef inline bint _digits(const char* p, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    if n <= 0:
        return False
    for i in range(n):
        if not (48 <= p[i] <= 57):
            return False
    return True


cdef inline bint _lower_is(const char* p, Py_ssize_t n, const char* word, Py_ssize_t size) noexcept:
    cdef Py_ssize_t i
    if n != size:
        return False
    for i in range(n):
        if (p[i] | 0x20) != word[i]:
            return False
    return True


cdef bint _valid_date(const char* p) noexcept:
    """``YYYY-MM-DD`` (ASCII digits) of a day ``date.fromisoformat`` takes (year 1 on)."""
    cdef int year, month, day, last
    if not (_digits(p, 4) and p[4] == 45 and _digits(p + 5, 2) and p[7] == 45 and _digits(p + 8, 2)):
        return False
    year = (p[0] - 48) * 1000 + (p[1] - 48) * 100 + (p[2] - 48) * 10 + (p[3] - 48)
    month = (p[5] - 48) * 10 + (p[6] - 48)
    day = (p[8] - 48) * 10 + (p[9] - 48)
    if year < 1 or month < 1 or month > 12 or day < 1:
        return False
    if month == 2:
        last = 29 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 28
    elif month in (4, 6, 9, 11):
        last = 30
    else:
        last = 31
    return day <= last


cdef object _field(str text, int kind, long long low, long long high, Py_ssize_t length, object parser):
    """A CSV field's value for its column: read here when its text is in the plain form
    of its kind (``-12``, ``3.25``, ``true``, ``2020-01-31``, text within its length), else
    what the column's parser gives (which raises for a bad field)."""
    cdef Py_ssize_t size, start
    cdef const char* p
    cdef long long v
    cdef int overflow
    cdef object value
    if kind == TEXT_FIELD:
        if length < 0 or PyUnicode_GET_LENGTH(text) <= length:
            return text
        return parser(text)
    if kind == OTHER_FIELD or PyUnicode_GET_LENGTH(text) > 40:
        return parser(text)
    try:
        p = PyUnicode_AsUTF8AndSize(text, &size)
    except UnicodeEncodeError:
        return parser(text)
    if kind == INT_FIELD:
        start = 1 if size > 0 and p[0] == 45 else 0
        if size - start <= 18 and _digits(p + start, size - start):
            value = int(text)
            v = PyLong_AsLongLongAndOverflow(value, &overflow)
            if not overflow and low <= v <= high:
                return value
    elif kind == FLOAT_FIELD:
        start = 1 if size > 0 and p[0] == 45 else 0
        if _plain_decimal(p + start, size - start):
            return float(text)
    elif kind == BOOL_FIELD:  # _boolean: true, false, 1 or 0 in any case
        if _lower_is(p, size, b"true", 4) or size == 1 and p[0] == 49:
            return True
        if _lower_is(p, size, b"false", 5) or size == 1 and p[0] == 48:
            return False
    elif kind == DATE_FIELD:
        if size == 10 and _valid_date(p):
            return text
    return parser(text)


cdef bint _plain_decimal(const char* p, Py_ssize_t n) noexcept:
    """Digits, or digits, a point and digits."""
    cdef Py_ssize_t i, point = -1
    if n <= 0:
        return False
    for i in range(n):
        if p[i] == 46 and point < 0:
            point = i
        elif not (48 <= p[i] <= 57):
            return False
    return point != 0 and point != n - 1


def parse_fields(list records, list names, list kinds, list lows, list highs, list lengths, list parsers):
    """Each record (a list of CSV fields, one a column) as a dict of column name to value,
    as ``csv_io``'s column parsers give them (``""`` is None), or None for a record with a
    field its parser refuses (the caller parses it again to name the field).

    >>> parse_fields([["1", "x", ""]], ["a", "b", "c"], [INT_FIELD, TEXT_FIELD, TEXT_FIELD],
    ...              [-9, 0, 0], [9, 0, 0], [-1, -1, -1], [int, str, str])
    [{'a': 1, 'b': 'x', 'c': None}]
    """
    cdef Py_ssize_t n = len(records), width = len(names), i, j
    cdef list out = [None] * n, record
    cdef dict row
    cdef object text
    cdef Checks checks = _checks(kinds, lows, highs, lengths)
    try:
        for i in range(n):
            record = records[i]
            if len(record) != width:
                continue
            row = {}
            try:
                for j in range(width):
                    text = record[j]
                    if type(text) is not str:
                        raise TypeError(text)
                    row[names[j]] = None if PyUnicode_GET_LENGTH(text) == 0 else \
                        _field(text, checks.kind[j], checks.low[j], checks.high[j], checks.limit[j], parsers[j])
            except Exception:  # the caller's parse names the field
                continue
            out[i] = row
        return out
    finally:
        _free_checks(&checks)


# -- CSV fields -> the narrowest type of each column (the compiled half of TextTypeGuess) -----

cdef tuple _KIND_NAMES = ("integer", "float", "boolean", "date", "timestamp")


cdef int _mask_of(set kinds):
    cdef int mask = 0, bit
    for bit in range(5):
        if _KIND_NAMES[bit] in kinds:
            mask |= 1 << bit
    return mask


cdef set _kinds_of(int mask):
    return {_KIND_NAMES[bit] for bit in range(5) if mask & (1 << bit)}


cdef int _kinds_kept(str text) except -2:
    """The kinds (a mask of integer 1, float 2, boolean 4, date 8, timestamp 16) a field in a
    plain form leaves a column (what ``TextTypeGuess.add`` keeps of them), or -1 for any
    other field (the Python guess reads it)."""
    cdef Py_ssize_t size
    cdef const char* p
    if PyUnicode_GET_LENGTH(text) > 40:
        return -1
    try:
        p = PyUnicode_AsUTF8AndSize(text, &size)
    except UnicodeEncodeError:
        return -1
    if _digits(p, size):
        return 1 | 2 if size < 19 else -1  # a longer one: int64 or not, Python tells
    if _plain_decimal(p, size):  # with its point (not all digits)
        return 2
    if _lower_is(p, size, b"true", 4) or _lower_is(p, size, b"false", 5):
        return 4
    if size == 10 and _valid_date(p):
        return 8
    return -1


def guess_fields(list records, list index, list guesses):
    """Add the fields ``records[r][index[k]]`` to ``guesses[k]`` (``TextTypeGuess``), as its
    ``add`` would one by one: a field in a plain form (digits, a decimal, true or false, a
    date) narrows the guess in C, any other goes to ``add``."""
    cdef Py_ssize_t n = len(records), width = len(index), i, k, column
    cdef int kept
    cdef int* masks = <int*>calloc(width + 1, sizeof(int))
    cdef object text, guess
    cdef list record
    if masks == NULL:
        raise MemoryError()
    try:
        for k in range(width):
            masks[k] = _mask_of(guesses[k].kinds)
        for i in range(n):
            record = records[i]
            for k in range(width):
                if masks[k] == 0:
                    continue
                text = record[<Py_ssize_t>index[k]]
                if type(text) is not str or PyUnicode_GET_LENGTH(text) == 0:
                    if type(text) is not str:
                        guess = guesses[k]
                        guess.kinds = _kinds_of(masks[k])
                        guess.add(text)
                        masks[k] = _mask_of(guess.kinds)
                    continue
                kept = _kinds_kept(text)
                if kept >= 0:
                    masks[k] &= kept
                else:
                    guess = guesses[k]
                    guess.kinds = _kinds_of(masks[k])
                    guess.add(text)
                    masks[k] = _mask_of(guess.kinds)
        for k in range(width):
            guesses[k].kinds = _kinds_of(masks[k])
    finally:
        free(masks)


# -- packed keys -> an Arrow text column ---------------------------------------------------------

def text_keys(list keys):
    """The keys (``nstore.pack`` of one string each: ``02``, its UTF-8 with each 00 written
    00 ff, ``00``) as Arrow text buffers ``(validity, offsets, data)`` like
    :func:`decode_values` gives, or None when one key is anything else.

    >>> import struct
    >>> valid, offsets, data = text_keys([b"\\x02ab\\x00", b"\\x02\\x00\\xffc\\x00"])
    >>> bytes(data), struct.unpack("3q", offsets), valid[0] & 3
    (b'ab\\x00c', (0, 2, 4), 3)
    """
    cdef Py_ssize_t n = len(keys), i, size, k, used = 0
    cdef bytearray validity = bytearray(b"\xff" * ((n + 7) >> 3)), offsets = bytearray(8 * (n + 1))
    cdef bytearray data
    cdef const unsigned char* p
    cdef unsigned char* out
    cdef int64_t offset
    cdef object key
    cdef Py_ssize_t total = 0
    for i in range(n):
        key = keys[i]
        if type(key) is not bytes:
            return None
        total += PyBytes_GET_SIZE(key)
    data = bytearray(total)
    out = <unsigned char*>PyByteArray_AS_STRING(data)
    for i in range(n):
        key = keys[i]
        p = <const unsigned char*>PyBytes_AS_STRING(key)
        size = PyBytes_GET_SIZE(key)
        if size < 2 or p[0] != 0x02 or p[size - 1] != 0x00:
            return None
        k = 1
        while k < size - 1:
            if p[k] == 0x00:
                if p[k + 1] != 0xff:  # an unescaped 00 before the end: not one string
                    return None
                out[used] = 0
                used += 1
                k += 2
            else:
                out[used] = p[k]
                used += 1
                k += 1
        if k != size - 1:
            return None
        offset = used
        memcpy(PyByteArray_AS_STRING(offsets) + 8 * (i + 1), &offset, 8)
    PyByteArray_Resize(data, used)
    return validity, offsets, data
