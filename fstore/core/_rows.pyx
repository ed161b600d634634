# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of a scan of a table's rows (``fstore.core.rows.RowStore.scan``): the
record key each snapshot entry names, and each alive body's feature blob, one C loop a
block (``docs/format.md``, "Rows"). The Python loop of ``RowStore.scan`` stays the
reference for what these give (``tests/fstore/test_rows.py`` compares the two)."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.string cimport memcpy

__all__ = ["entry_records", "join_blobs"]


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
