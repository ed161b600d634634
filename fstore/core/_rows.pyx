# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of a scan of a table's rows (``fstore.core.rows.RowStore.scan``): the
record key each snapshot entry names, and each alive body's feature blob, one C loop a
block (``docs/format.md``, "Rows"). The Python loop of ``RowStore.scan`` stays the
reference for what these give (``tests/fstore/test_rows.py`` compares the two)."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_AsUnsignedLongLong
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH
from libc.string cimport memcmp, memcpy

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

__all__ = ["entry_records", "join_blobs", "PathCodec", "Splitter"]


cdef inline Py_ssize_t _small_int_length(unsigned char code):
    """Bytes of a packed integer of up to 8 bytes, its code included (-1: not one)."""
    if 0x14 <= code <= 0x1C:
        return 1 + code - 0x14
    if 0x0C <= code < 0x14:
        return 1 + 0x14 - code
    return -1


def entry_records(list keys, list values, Py_ssize_t skip, Py_ssize_t lead, bytes record_prefix, bytes alive):
    """For snapshot entries (``keys``, ``values``): the key of the record each names when it
    names one, ``(seq, 0)`` (``record_prefix ‖ key[skip:] ‖ value ‖ alive``), in entry
    order; each entry's row key (the key after ``lead`` bytes and the count of values);
    and the positions of the entries naming anything else (no record key for them).

    >>> entry_records([b"P\\x15\\x01\\x15\\x05\\x15\\x01\\x15\\x07"], [b"\\x15\\x03"], 3, 5, b"R", b"\\x15\\x01")
    ([b'R\\x15\\x05\\x15\\x01\\x15\\x07\\x15\\x03\\x15\\x01'], [b'\\x15\\x07'], [])
    """
    cdef Py_ssize_t n = len(keys), i, key_size, value_size, head, prefix_size = PyBytes_GET_SIZE(record_prefix)
    cdef Py_ssize_t alive_size = PyBytes_GET_SIZE(alive), count_size
    cdef list records = [], row_keys = [None] * n, several = []
    cdef bytes key, value, record
    cdef const unsigned char* v
    cdef char* out
    for i in range(n):
        key = keys[i]
        value = values[i]
        key_size = PyBytes_GET_SIZE(key)
        value_size = PyBytes_GET_SIZE(value)
        count_size = _small_int_length(<unsigned char>PyBytes_AS_STRING(key)[lead]) if lead < key_size else -1
        if count_size < 0 or lead + count_size > key_size:
            raise ValueError(f"row snapshot key {key[:60].hex()} has no count of values at byte {lead}")
        row_keys[i] = key[lead + count_size:]
        v = <const unsigned char*>PyBytes_AS_STRING(value)
        if value_size < 2 or not (0x15 <= v[0] <= 0x1C) or value_size != v[0] - 0x13:
            several.append(i)
            continue
        head = key_size - skip
        record = PyBytes_FromStringAndSize(NULL, prefix_size + head + value_size + alive_size)
        out = PyBytes_AS_STRING(record)
        memcpy(out, PyBytes_AS_STRING(record_prefix), prefix_size)
        memcpy(out + prefix_size, PyBytes_AS_STRING(key) + skip, head)
        memcpy(out + prefix_size + head, PyBytes_AS_STRING(value), value_size)
        memcpy(out + prefix_size + head + value_size, PyBytes_AS_STRING(alive), alive_size)
        records.append(record)
    return records, row_keys, several


def join_blobs(list bodies, list heads):
    """Each alive body's feature blob, ``heads[ordinal - 1] ‖ values`` (``heads``: ``92`` and
    each legend header, by ordinal), or None when one body is missing or has an ordinal
    past one byte or unknown (the caller's loop names it).

    >>> join_blobs([b"\\x01\\x91\\x05"], [b"\\x92\\xa1a"])
    [b'\\x92\\xa1a\\x91\\x05']
    """
    cdef Py_ssize_t n = len(bodies), i, size, head_size, known = len(heads)
    cdef list blobs = [None] * n
    cdef object body
    cdef bytes head, blob
    cdef unsigned char ordinal
    cdef char* out
    for i in range(n):
        body = bodies[i]
        if body is None:
            return None
        size = PyBytes_GET_SIZE(body)
        if size < 1:
            return None
        ordinal = <unsigned char>PyBytes_AS_STRING(body)[0]
        if ordinal == 0 or ordinal >= 0x80 or ordinal > known:
            return None
        head = heads[ordinal - 1]
        head_size = PyBytes_GET_SIZE(head)
        blob = PyBytes_FromStringAndSize(NULL, head_size + size - 1)
        out = PyBytes_AS_STRING(blob)
        memcpy(out, PyBytes_AS_STRING(head), head_size)
        memcpy(out + head_size, PyBytes_AS_STRING(body) + 1, size - 1)
        blobs[i] = blob
    return blobs


# -- feature tuples -> rows (the compiled half of RowStore.split_many) -----------------------

cdef signed char _B64[256]
cdef int _init_b64():
    cdef int i
    cdef bytes alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for i in range(256):
        _B64[i] = -1
    for i in range(64):
        _B64[<unsigned char>alphabet[i]] = i
    return 0
_init_b64()

cdef class PathCodec:
    """A path rule (``rowcodec.PathRule``) in C: the feature paths of primary keys
    (:meth:`paths`, as ``rowcodec.feature_path`` gives them) for keys of integers and
    strings, and the check that a path is the one its key gives (for :class:`Splitter`).
    Any other key it leaves (None) for the Python functions, which stay the reference."""

    cdef bint int_scheme, hex_digits
    cdef long long branches, modulus
    cdef Py_ssize_t levels, group, key_limit
    cdef bytes alphabet
    cdef object sha256, pack_column, pack_value

    def __init__(self, str scheme, long long branches, Py_ssize_t levels, str alphabet, Py_ssize_t group,
                 Py_ssize_t key_limit):
        import hashlib
        from nstore._pack import pack_column
        from nstore.pack import pack_value
        self.pack_column, self.pack_value = pack_column, pack_value
        self.key_limit = key_limit
        self.int_scheme = scheme == "int"
        self.hex_digits = len(alphabet) == 16
        self.branches, self.levels, self.group = branches, levels, group
        self.modulus = branches ** levels if self.int_scheme else 1
        self.alphabet = alphabet.encode("ascii")
        self.sha256 = hashlib.sha256

    def keys(self, list paths):
        """``(count of values, packed key)`` of the row at each path (``rowcodec.key_of``),
        or None where the Python function decides."""
        cdef Py_ssize_t n = len(paths), i
        cdef list out = [None] * n
        cdef object path
        for i in range(n):
            path = paths[i]
            if type(path) is str:
                out[i] = self._key(path)
        return out

    cdef object _key(self, str path):
        cdef Py_ssize_t size, slash, name_size, raw_size
        cdef const char* text
        cdef unsigned char raw[384]
        cdef list pk
        cdef bytes key
        try:
            text = PyUnicode_AsUTF8AndSize(path, &size)
        except UnicodeEncodeError:  # a lone surrogate: no row's path
            return None
        if size != PyUnicode_GET_LENGTH(path):  # not ASCII
            return None
        slash = size - 1
        while slash >= 0 and text[slash] != 47:  # '/'
            slash -= 1
        name_size = size - slash - 1
        if name_size <= 0 or name_size % 4 or name_size // 4 * 3 > 384:
            return None
        raw_size = _b64_decode(<const unsigned char*>text + slash + 1, name_size, raw)
        if raw_size < 0:
            return None
        pk = _scalars(raw, raw_size)
        if pk is None:
            return None
        key = b"".join(self.pack_column(pk, self.pack_value, {}, {}, self.key_limit, 0))
        if PyBytes_GET_SIZE(key) > self.key_limit or not self._directories_are(pk, raw, raw_size, text, slash):
            return None
        return len(pk), key

    def paths(self, list pks):
        """The path of each key (a tuple or list of values), or None where the Python
        function decides (a value neither an integer of 64 bits nor a string, more than
        15 values, or an int-scheme key that is not one integer)."""
        cdef Py_ssize_t n = len(pks), i
        cdef list out = [None] * n
        for i in range(n):
            out[i] = self._path(pks[i])
        return out

    cdef object _path(self, object pk):
        cdef unsigned char raw[400]
        cdef char path[64 + 600]
        cdef Py_ssize_t raw_size, count = self.levels * self.group, at, name_size
        if type(pk) is not tuple and type(pk) is not list:
            return None
        raw_size = _packed_scalars(pk, raw, 400)
        if raw_size < 0 or count > 64 or (raw_size + 2) // 3 * 4 > 600 - 2:
            return None
        if not self._directories(pk, raw, raw_size, path):
            return None
        at = count + self.levels - 1
        path[at] = 47  # '/'
        name_size = _b64_encode(raw, raw_size, <unsigned char*>path + at + 1)
        return PyUnicode_DecodeASCII(path, at + 1 + name_size, NULL)

    cdef bint _directories(self, object pk, const unsigned char* raw, Py_ssize_t raw_size, char* out) except -1:
        """The rule's directories (``A/A/A/B``) for a key into ``out``: False when the int
        scheme meets anything but one integer."""
        cdef char chars[64]
        cdef char encoded[32]
        cdef Py_ssize_t count = self.levels * self.group, k, at, level
        cdef long long v, q, r, base = len(self.alphabet)
        cdef unsigned long long u
        cdef int overflow
        cdef bytes digest
        cdef const unsigned char* d
        cdef object value
        if count > 64:
            return False
        if self.int_scheme:
            if len(pk) != 1 or type(pk[0]) is not int:
                return False
            value = pk[0]
            v = PyLong_AsLongLongAndOverflow(value, &overflow)
            if overflow > 0:  # past int64: unsigned arithmetic (a uint64 key)
                u = PyLong_AsUnsignedLongLong(value)
                r = <long long>((u // <unsigned long long>self.branches) % <unsigned long long>self.modulus)
            elif overflow < 0:
                return False
            else:
                q = v // self.branches  # Cython keeps Python's floor division and modulo
                r = q % self.modulus
            for k in range(count - 1, -1, -1):
                chars[k] = self.alphabet[r % base]
                r //= base
        else:
            digest = self.sha256(PyBytes_FromStringAndSize(<const char*>raw, raw_size)).digest()
            if self.hex_digits:
                d = <const unsigned char*>PyBytes_AS_STRING(digest)
                for k in range(count):
                    chars[k] = b"0123456789abcdef"[(d[k >> 1] >> 4) if k % 2 == 0 else (d[k >> 1] & 15)]
            else:  # URL-safe base64 of the digest's first 20 bytes: 27 characters and "="
                if count > 28:
                    return False
                _b64_encode(<const unsigned char*>PyBytes_AS_STRING(digest), 20, <unsigned char*>encoded)
                memcpy(chars, encoded, count)
        at = 0
        for level in range(self.levels):
            if level:
                out[at] = 47
                at += 1
            memcpy(out + at, chars + level * self.group, self.group)
            at += self.group
        return True

    cdef bint _directories_are(self, list pk, const unsigned char* raw, Py_ssize_t raw_size, const char* text,
                               Py_ssize_t slash) except -1:
        cdef char expected[64 + 16]
        if self.levels * self.group > 64 or slash != self.levels * self.group + self.levels - 1:
            return False
        return self._directories(pk, raw, raw_size, expected) and memcmp(expected, text, slash) == 0


cdef class Splitter(PathCodec):
    """Feature tuples of one table split into rows in C, as ``RowStore.split`` does for
    the tuples it takes (``rowcodec.key_of``: a canonical URL-safe base64 file name of a
    minimal msgpack array of integers and strings, under the rule's directories; a blob
    framed ``92 ‖ str legend name ‖ values``). Anything else it leaves (None) for the
    Python splitter, which stays the reference (``tests/fstore/test_rows.py``)."""

    cdef object register, row_type
    cdef dict ordinals
    cdef int table

    def __init__(self, int table, str scheme, long long branches, Py_ssize_t levels, str alphabet, Py_ssize_t group,
                 Py_ssize_t key_limit, dict ordinals, object register, object row_type):
        PathCodec.__init__(self, scheme, branches, levels, alphabet, group, key_limit)
        self.table = table
        self.ordinals, self.register, self.row_type = ordinals, register, row_type

    def split(self, list paths, list blobs):
        """The row of each ``(path, blob)``, or None where the Python splitter decides."""
        cdef Py_ssize_t n = len(paths), i
        cdef list out = [None] * n
        cdef object path, blob
        for i in range(n):
            path, blob = paths[i], blobs[i]
            if type(path) is str and type(blob) is bytes:
                out[i] = self._row(path, blob)
        return out

    cdef object _row(self, str path, bytes blob):
        cdef Py_ssize_t size, head
        cdef bytes header, body
        cdef object ordinal, found = self._key(path)
        if found is None:
            return None
        head = _legend_header(blob)
        if head == 0:
            return None
        header = blob[1:head]
        ordinal = self.ordinals.get(header)
        if ordinal is None:
            ordinal = self.register(header)
            if ordinal is None or not (0 < ordinal < 0x80):
                return None
        elif not (0 < ordinal < 0x80):
            return None
        size = PyBytes_GET_SIZE(blob) - head
        body = PyBytes_FromStringAndSize(NULL, 1 + size)
        PyBytes_AS_STRING(body)[0] = <char><int>ordinal
        memcpy(PyBytes_AS_STRING(body) + 1, PyBytes_AS_STRING(blob) + head, size)
        return tuple.__new__(self.row_type, (self.table, found[0], found[1], body))


cdef Py_ssize_t _b64_decode(const unsigned char* text, Py_ssize_t size, unsigned char* out) noexcept:
    """Canonical padded URL-safe base64 (what ``rowcodec.filename`` writes) decoded into
    ``out``: its length, or -1 for any other text (padding, characters, unused bits)."""
    cdef Py_ssize_t i, n = 0, pad = 0
    cdef int a, b, c, d
    if size >= 1 and text[size - 1] == 61:
        pad = 2 if size >= 2 and text[size - 2] == 61 else 1
    for i in range(0, size, 4):
        a, b = _B64[text[i]], _B64[text[i + 1]]
        c = _B64[text[i + 2]] if not (i + 4 == size and pad == 2) else 0
        d = _B64[text[i + 3]] if not (i + 4 == size and pad >= 1) else 0
        if a < 0 or b < 0 or c < 0 or d < 0:
            return -1
        out[n] = <unsigned char>((a << 2) | (b >> 4))
        out[n + 1] = <unsigned char>(((b & 15) << 4) | (c >> 2))
        out[n + 2] = <unsigned char>(((c & 3) << 6) | d)
        n += 3
    if pad == 2:
        if b & 15:
            return -1
    elif pad == 1:
        if c & 3:
            return -1
    return n - pad


cdef list _scalars(const unsigned char* raw, Py_ssize_t size):
    """The integers and strings of a minimal msgpack fixarray (as ``msgpack.packb`` writes
    them, ``use_bin_type``), or None for anything else."""
    cdef Py_ssize_t count, pos = 1, k, length, head
    cdef list out
    cdef unsigned char b
    cdef unsigned long long u
    cdef long long v
    if size < 1 or not (0x90 <= raw[0] <= 0x9f):
        return None
    count = raw[0] & 0x0f
    if count == 0:
        return None
    out = []
    for k in range(count):
        if pos >= size:
            return None
        b = raw[pos]
        if b <= 0x7f:
            out.append(<long>b)
            pos += 1
        elif b >= 0xe0:
            out.append(<long>(<signed char>b))
            pos += 1
        elif 0xcc <= b <= 0xcf:
            length = 1 << (b - 0xcc)
            if pos + 1 + length > size:
                return None
            u = _be(raw + pos + 1, length)
            if u < (<unsigned long long>1 << (4 * length)) * (length > 1) + 128 * (length == 1):
                return None  # a shorter form exists
            out.append(u)
            pos += 1 + length
        elif 0xd0 <= b <= 0xd3:
            length = 1 << (b - 0xd0)
            if pos + 1 + length > size:
                return None
            v = _signed(raw + pos + 1, length)
            if v >= -32 or (length > 1 and v >= -(<long long>1 << (4 * length - 1))):
                return None  # not negative past a shorter form's range
            out.append(v)
            pos += 1 + length
        else:
            if 0xa0 <= b <= 0xbf:
                length, head = b & 0x1f, 1
            elif b == 0xd9 and pos + 1 < size:
                length, head = raw[pos + 1], 2
                if length < 32:
                    return None
            elif b == 0xda and pos + 2 < size:
                length, head = <Py_ssize_t>_be(raw + pos + 1, 2), 3
                if length < 256:
                    return None
            else:
                return None  # str32 (no key holds one), floats, bin, nil, booleans
            if pos + head + length > size:
                return None
            try:
                out.append(PyUnicode_DecodeUTF8(<const char*>raw + pos + head, length, NULL))
            except UnicodeDecodeError:
                return None
            pos += head + length
    return out if pos == size else None


cdef inline unsigned long long _be(const unsigned char* p, Py_ssize_t n) noexcept:
    cdef unsigned long long v = 0
    cdef Py_ssize_t i
    for i in range(n):
        v = (v << 8) | p[i]
    return v


cdef inline long long _signed(const unsigned char* p, Py_ssize_t n) noexcept:
    cdef unsigned long long u = _be(p, n)
    if n < 8 and u >> (8 * n - 1):
        return <long long>(u | (~0ULL << (8 * n)))
    return <long long>u


cdef Py_ssize_t _legend_header(bytes blob) noexcept:
    """``rowcodec.legend_header`` of a blob."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(blob)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(blob), size, start
    cdef unsigned char b
    if n < 2 or p[0] != 0x92:
        return 0
    b = p[1]
    if 0xa0 <= b <= 0xbf:
        size, start = b - 0xa0, 2
    elif b == 0xd9 and n >= 3:
        size, start = p[2], 3
    elif b == 0xda and n >= 4:
        size, start = <Py_ssize_t>_be(p + 2, 2), 4
    elif b == 0xdb and n >= 6:
        size, start = <Py_ssize_t>_be(p + 2, 4), 6
    else:
        return 0
    return start + size if start + size <= n else 0


cdef Py_ssize_t _packed_scalars(object pk, unsigned char* out, Py_ssize_t limit) except -2:
    """``msgpack.packb(list(pk), use_bin_type=True)`` into ``out`` for a key of up to 15
    integers (64 bits) and strings: its length, or -1 for any other key (or past ``limit``)."""
    cdef Py_ssize_t n = len(pk), k, at = 1, length, head
    cdef object value
    cdef long long v
    cdef unsigned long long u
    cdef int overflow
    cdef const char* text
    if n == 0 or n > 15:
        return -1
    out[0] = <unsigned char>(0x90 | n)
    for k in range(n):
        value = pk[k]
        if type(value) is int:
            if at + 9 > limit:
                return -1
            v = PyLong_AsLongLongAndOverflow(value, &overflow)
            if overflow < 0:
                return -1
            if overflow > 0:
                try:
                    u = PyLong_AsUnsignedLongLong(value)
                except OverflowError:  # past 64 bits: the Python function names it
                    return -1
                at = _put(out, at, 0xcf, u, 8)
            elif 0 <= v < 128:
                out[at] = <unsigned char>v
                at += 1
            elif v >= 0:
                if v < 256:
                    at = _put(out, at, 0xcc, <unsigned long long>v, 1)
                elif v < 65536:
                    at = _put(out, at, 0xcd, <unsigned long long>v, 2)
                elif v < 4294967296:
                    at = _put(out, at, 0xce, <unsigned long long>v, 4)
                else:
                    at = _put(out, at, 0xcf, <unsigned long long>v, 8)
            elif v >= -32:
                out[at] = <unsigned char>(<signed char>v)
                at += 1
            elif v >= -128:
                at = _put(out, at, 0xd0, <unsigned long long>v, 1)
            elif v >= -32768:
                at = _put(out, at, 0xd1, <unsigned long long>v, 2)
            elif v >= -2147483648:
                at = _put(out, at, 0xd2, <unsigned long long>v, 4)
            else:
                at = _put(out, at, 0xd3, <unsigned long long>v, 8)
        elif type(value) is str:
            try:
                text = PyUnicode_AsUTF8AndSize(value, &length)
            except UnicodeEncodeError:  # a lone surrogate: msgpack refuses it too
                return -1
            if length < 32:
                out[at] = <unsigned char>(0xa0 | length)
                head = 1
            elif length < 256:
                out[at], out[at + 1] = 0xd9, <unsigned char>length
                head = 2
            elif length < 65536:
                out[at], out[at + 1], out[at + 2] = 0xda, <unsigned char>(length >> 8), <unsigned char>length
                head = 3
            else:
                return -1
            if at + head + length > limit:
                return -1
            memcpy(out + at + head, text, length)
            at += head + length
        else:
            return -1
    return at


cdef inline Py_ssize_t _put(unsigned char* out, Py_ssize_t at, unsigned char code, unsigned long long value,
                            Py_ssize_t size) noexcept:
    cdef Py_ssize_t k
    out[at] = code
    for k in range(size):
        out[at + 1 + k] = <unsigned char>(value >> (8 * (size - 1 - k)))
    return at + 1 + size


cdef Py_ssize_t _b64_encode(const unsigned char* raw, Py_ssize_t size, unsigned char* out) noexcept:
    """Padded URL-safe base64 of ``raw`` into ``out`` (``rowcodec.filename``): its length."""
    cdef const char* digits = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    cdef Py_ssize_t i, n = 0
    cdef unsigned int chunk
    for i in range(0, size - size % 3, 3):
        chunk = (raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2]
        out[n], out[n + 1], out[n + 2], out[n + 3] = digits[chunk >> 18], digits[(chunk >> 12) & 63], \
            digits[(chunk >> 6) & 63], digits[chunk & 63]
        n += 4
    if size % 3 == 1:
        chunk = raw[size - 1] << 16
        out[n], out[n + 1], out[n + 2], out[n + 3] = digits[chunk >> 18], digits[(chunk >> 12) & 63], 61, 61
        n += 4
    elif size % 3 == 2:
        chunk = (raw[size - 2] << 16) | (raw[size - 1] << 8)
        out[n], out[n + 1], out[n + 2], out[n + 3] = digits[chunk >> 18], digits[(chunk >> 12) & 63], \
            digits[(chunk >> 6) & 63], 61
        n += 4
    return n
