# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of :mod:`nstore.bulk`: one index's keys built and sorted in C.

A bulk load spent most of its time building each key with ``bytes.join`` and sorting the
list with Python's comparisons (each an object call). Here every key is copied once into
one buffer, the buffer's spans are sorted with ``qsort`` and ``memcmp``, and the bytes
objects are made in key order, so LMDB's append then reads them in memory order.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcmp, memcpy

__all__ = ["sorted_keys"]


cdef struct Span:
    const char* data
    Py_ssize_t size


cdef int _compare(const void* a, const void* b) noexcept nogil:
    cdef const Span* x = <const Span*>a
    cdef const Span* y = <const Span*>b
    cdef Py_ssize_t common = x.size if x.size < y.size else y.size
    cdef int order = memcmp(x.data, y.data, common)
    if order != 0:
        return order
    return (x.size > y.size) - (x.size < y.size)


def sorted_keys(bytes prefix, list columns, tuple order):
    """The keys ``prefix + columns[order[0]][i] + columns[order[1]][i] + ...`` of every
    row ``i``, sorted as LMDB orders keys (bytewise, a prefix first); each column a list
    of bytes, all of one length.

    >>> sorted_keys(b"P", [[b"b", b"a"], [b"1", b"2"]], (1, 0))
    [b'P1b', b'P2a']
    """
    cdef Py_ssize_t width = len(order)
    cdef Py_ssize_t rows = len(columns[0]) if width else 0
    cdef Py_ssize_t prefix_size = PyBytes_GET_SIZE(prefix)
    cdef Py_ssize_t total = 0, row, position, size
    cdef list ordered = [columns[number] for number in order]
    cdef list column
    cdef object item
    for column in ordered:
        if len(column) != rows:
            raise ValueError(f"columns of {rows} and {len(column)} rows")
        for item in column:
            if not PyBytes_Check(item):
                raise TypeError(f"a key item is bytes, not {type(item).__name__}")
            total += PyBytes_GET_SIZE(item)
    total += prefix_size * rows
    cdef char* arena = <char*>malloc(total if total else 1)
    cdef Span* spans = <Span*>malloc((rows if rows else 1) * sizeof(Span))
    if arena == NULL or spans == NULL:
        free(arena)
        free(spans)
        raise MemoryError()
    cdef Py_ssize_t cursor = 0
    cdef list keys
    try:
        for row in range(rows):
            spans[row].data = arena + cursor
            memcpy(arena + cursor, PyBytes_AS_STRING(prefix), prefix_size)
            cursor += prefix_size
            for position in range(width):
                item = (<list>ordered[position])[row]
                size = PyBytes_GET_SIZE(item)
                memcpy(arena + cursor, PyBytes_AS_STRING(item), size)
                cursor += size
            spans[row].size = arena + cursor - spans[row].data
        with nogil:
            qsort(spans, rows, sizeof(Span), _compare)
        keys = [None] * rows
        for row in range(rows):
            keys[row] = PyBytes_FromStringAndSize(spans[row].data, spans[row].size)
        return keys
    finally:
        free(arena)
        free(spans)
