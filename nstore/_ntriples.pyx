# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of the N-Triples term syntax of :mod:`nstore.terms`: many quads
written as N-Quads (or N-Triples) lines into one buffer.

An export spent a Python call, an f-string and a ``str.replace`` chain per term, then
joined and encoded the lines. Here each quad's terms are copied (and UTF-8 encoded, with
the N-Triples escapes) straight from the str objects into one C buffer, and a batch of
lines becomes one bytes object. The text is exactly :func:`nstore.terms.quad_line`'s,
encoded as UTF-8 (the tests compare the two): IRIs, strings, blank nodes, literals,
integers and booleans are written here; any other value (floats, decimals, dates, bytes,
subclasses) goes through ``term_to_ntriples``, the one place that knows its lexical form.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject_Str
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy

from .terms import BNode, IRI, Literal, term_to_ntriples

__all__ = ["LineWriter", "GraphMismatch"]


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    uint32_t PyUnicode_READ(int kind, void* data, Py_ssize_t index)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    bint PyTuple_CheckExact(object value)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND


# The types written here; module-level C references, so a test is a pointer comparison.
cdef object _IRI = IRI
cdef object _BNODE = BNode
cdef object _LITERAL = Literal
cdef object _TO_TEXT = term_to_ntriples

cdef bytes _INTEGER = b"^^<http://www.w3.org/2001/XMLSchema#integer>"
cdef bytes _BOOLEAN = b"^^<http://www.w3.org/2001/XMLSchema#boolean>"


class GraphMismatch(Exception):
    """Raised by a one-graph :class:`LineWriter` at the first quad of a second graph:
    ``args`` are the first graph and the other one (the caller names them)."""


cdef struct Buffer:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _reserve(Buffer* out, Py_ssize_t extra) except -1:
    cdef Py_ssize_t wanted = out.size + extra
    if wanted <= out.capacity:
        return 0
    cdef Py_ssize_t capacity = out.capacity * 2 if out.capacity else 1 << 16
    if capacity < wanted:
        capacity = wanted
    cdef char* grown = <char*>realloc(out.data, capacity)
    if grown == NULL:
        raise MemoryError()
    out.data = grown
    out.capacity = capacity
    return 0


cdef inline int _raw(Buffer* out, const char* data, Py_ssize_t size) except -1:
    _reserve(out, size)
    memcpy(out.data + out.size, data, size)
    out.size += size
    return 0


cdef inline int _byte(Buffer* out, char c) except -1:
    _reserve(out, 1)
    out.data[out.size] = c
    out.size += 1
    return 0


# N-Triples' five escapes in a literal (those of ``_escape_string``): the letter after the
# backslash for each ASCII character that has one, else 0.
cdef char _ESCAPE[128]
for _c in range(128):
    _ESCAPE[_c] = 0
_ESCAPE[0x5C], _ESCAPE[0x22], _ESCAPE[0x0A], _ESCAPE[0x0D], _ESCAPE[0x09] = 0x5C, 0x22, 0x6E, 0x72, 0x74


cdef inline char* _put(char* at, uint32_t c, bint escape) noexcept:
    """Code point ``c`` as UTF-8 at ``at`` (escaped if ``escape``); the end, or NULL for a
    surrogate, which has no UTF-8."""
    if c < 0x80:
        if escape and _ESCAPE[c]:
            at[0] = 0x5C
            at[1] = _ESCAPE[c]
            return at + 2
        at[0] = <char>c
        return at + 1
    if c < 0x800:
        at[0] = <char>(0xC0 | (c >> 6))
        at[1] = <char>(0x80 | (c & 0x3F))
        return at + 2
    if c < 0x10000:
        if 0xD800 <= c <= 0xDFFF:
            return NULL
        at[0] = <char>(0xE0 | (c >> 12))
        at[1] = <char>(0x80 | ((c >> 6) & 0x3F))
        at[2] = <char>(0x80 | (c & 0x3F))
        return at + 3
    at[0] = <char>(0xF0 | (c >> 18))
    at[1] = <char>(0x80 | ((c >> 12) & 0x3F))
    at[2] = <char>(0x80 | ((c >> 6) & 0x3F))
    at[3] = <char>(0x80 | (c & 0x3F))
    return at + 4


cdef int _text(Buffer* out, str text, bint escape) except -1:
    """``text`` as UTF-8, with N-Triples' escapes if ``escape``. A lone surrogate has no
    UTF-8: ``str.encode`` raises the very error the pure-Python writer raises."""
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef char* at
    _reserve(out, length * 4)  # the most a code point takes: 4 bytes, or 2 escaped
    if not escape and PyUnicode_IS_ASCII(text):  # IRIs, labels, tags: a copy
        memcpy(out.data + out.size, data, length)
        out.size += length
        return 0
    at = out.data + out.size
    # One loop per storage width, so the width is not tested per character.
    if kind == PyUnicode_1BYTE_KIND:
        for i in range(length):
            at = _put(at, (<uint8_t*>data)[i], escape)
    elif kind == PyUnicode_2BYTE_KIND:
        for i in range(length):
            at = _put(at, (<uint16_t*>data)[i], escape)
            if at == NULL:
                text.encode("utf-8")  # raises UnicodeEncodeError
                raise UnicodeError("a surrogate in a term")  # not reached: encode raised
    else:
        for i in range(length):
            at = _put(at, (<uint32_t*>data)[i], escape)
            if at == NULL:
                text.encode("utf-8")
                raise UnicodeError("a surrogate in a term")
    out.size = at - out.data
    return 0


# The ASCII characters a term's text cannot hold in N-Triples: an IRI (IRIREF) none of
# ``\x00-\x20 <>"{}|^`\\``, a blank node label or a language tag nothing but letters,
# digits and ``_ . : -``. Written raw, one of them would let a malformed term read back as
# other terms (``IRI("urn:a> <urn:b")``, ``BNode("x <urn:g>")``): a strict writer refuses
# the term instead.
cdef char _NOT_IN_IRI[128]
cdef char _NOT_IN_NAME[128]
for _c in range(128):
    _NOT_IN_IRI[_c] = _c <= 0x20 or chr(_c) in '<>"{}|^`\\'
    _NOT_IN_NAME[_c] = not (chr(_c).isalnum() or chr(_c) in "_.:-")


cdef int _check(object term, str text, const char* refused) except -1:
    """Raise ValueError if ``text`` (part of ``term``) holds an ASCII character ``refused``
    marks."""
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef uint32_t c
    for i in range(length):
        c = PyUnicode_READ(kind, data, i)
        if c < 128 and refused[c]:
            raise ValueError(f"{term!r} cannot be written in N-Triples syntax: {chr(c)!r} at position {i} of {text!r}")
    return 0


cdef int _integer(Buffer* out, object value) except -1:
    cdef int overflow = 0
    cdef long long number = PyLong_AsLongLongAndOverflow(value, &overflow)
    cdef char digits[24]
    cdef int n = 24
    cdef unsigned long long magnitude
    _byte(out, b'"')
    if overflow:
        _text(out, <str>PyObject_Str(value), False)  # str() as to_rdf writes it (its digit limit too)
    else:
        magnitude = <unsigned long long>(-(number + 1)) + 1 if number < 0 else <unsigned long long>number
        while True:
            n -= 1
            digits[n] = <char>(48 + magnitude % 10)
            magnitude //= 10
            if magnitude == 0:
                break
        if number < 0:
            n -= 1
            digits[n] = b'-'
        _raw(out, digits + n, 24 - n)
    _byte(out, b'"')
    _raw(out, _INTEGER, len(_INTEGER))
    return 0


cdef int _term(Buffer* out, object value, bint strict) except -1:
    """One term, as ``term_to_ntriples`` writes it; ``strict`` refuses an IRI, a label or a
    language tag that would not read back as one token (:func:`_check`)."""
    cdef object kind = type(value)
    cdef object extra
    if kind is _IRI:
        if strict:
            _check(value, value.value, _NOT_IN_IRI)
        _byte(out, b'<')
        _text(out, value.value, False)
        _byte(out, b'>')
    elif kind is str:
        _byte(out, b'"')
        _text(out, <str>value, True)
        _byte(out, b'"')
    elif kind is _LITERAL:
        _byte(out, b'"')
        _text(out, value.lexical, True)
        _byte(out, b'"')
        extra = value.lang
        if extra:
            if strict:
                _check(value, extra, _NOT_IN_NAME)
            _byte(out, b'@')
            _text(out, extra, False)
        else:
            extra = value.datatype
            if extra is not None:
                if strict:
                    _check(value, extra.value, _NOT_IN_IRI)
                _raw(out, b"^^<", 3)
                _text(out, extra.value, False)
                _byte(out, b'>')
    elif kind is _BNODE:
        if strict:
            _check(value, value.id, _NOT_IN_NAME)
        _raw(out, b"_:", 2)
        _text(out, value.id, False)
    elif kind is int:
        _integer(out, value)
    elif kind is bool:
        if value:
            _raw(out, b'"true"', 6)
        else:
            _raw(out, b'"false"', 7)
        _raw(out, _BOOLEAN, len(_BOOLEAN))
    else:  # every other value (None raises there, as it does in quad_line)
        _text(out, _TO_TEXT(value), False)
    return 0


cdef class LineWriter:
    """N-Quads lines (``graphs``) or N-Triples lines (the graph left out) of quads
    ``(graph, subject, predicate, object)``, a batch at a time. With ``one_graph``, the
    first quad's graph is the only one allowed: a quad in another raises
    :class:`GraphMismatch` (the lines of that batch are dropped). With ``strict``, a term
    whose text would not read back as the one term (an IRI with a space, a label with a
    ``<``: none that the store's checks let in) raises ValueError; without, it is written
    as ``quad_line`` writes it.

    >>> writer = LineWriter(graphs=True)
    >>> quads = iter([(IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 'a "b"'), (None, BNode("x"), IRI("urn:p"), 7)])
    >>> writer.lines(quads, 10)
    b'<urn:s> <urn:p> "a \\\\"b\\\\"" <urn:g> .\\n_:x <urn:p> "7"^^<http://www.w3.org/2001/XMLSchema#integer> .\\n'
    >>> writer.lines(quads, 10), writer.written
    (b'', 2)
    """

    cdef Buffer _out
    cdef readonly bint graphs
    cdef readonly bint one_graph
    cdef readonly bint strict
    cdef readonly Py_ssize_t written  # lines made so far
    cdef object _first
    cdef bint _seen

    def __cinit__(self, bint graphs=True, bint one_graph=False, bint strict=False):
        self.graphs = graphs
        self.one_graph = one_graph
        self.strict = strict
        self.written = 0
        self._seen = False
        self._first = None
        _reserve(&self._out, 1 << 16)

    def __dealloc__(self):
        free(self._out.data)

    def lines(self, quads, Py_ssize_t limit) -> bytes:
        """The lines of the next ``limit`` quads of the iterator ``quads`` as UTF-8 bytes
        (``b""`` once it is exhausted)."""
        cdef Buffer* out = &self._out
        cdef Py_ssize_t count = 0
        cdef bint strict = self.strict
        cdef object quad, graph, subject, predicate, object_
        if limit < 1:
            raise ValueError(f"a batch holds at least one line, not {limit}")
        out.size = 0
        for quad in quads:
            if PyTuple_CheckExact(quad) and PyTuple_GET_SIZE(quad) == 4:
                graph = <object>PyTuple_GET_ITEM(quad, 0)
                subject = <object>PyTuple_GET_ITEM(quad, 1)
                predicate = <object>PyTuple_GET_ITEM(quad, 2)
                object_ = <object>PyTuple_GET_ITEM(quad, 3)
            else:
                graph, subject, predicate, object_ = quad
            if self.one_graph:
                if not self._seen:
                    self._first, self._seen = graph, True
                elif graph is not self._first and graph != self._first:
                    raise GraphMismatch(self._first, graph)
            _term(out, subject, strict)
            _byte(out, b' ')
            _term(out, predicate, strict)
            _byte(out, b' ')
            _term(out, object_, strict)
            if self.graphs and graph is not None:
                _byte(out, b' ')
                _term(out, graph, strict)
            _raw(out, b" .\n", 3)
            count += 1
            if count >= limit:
                break
        self.written += count
        return PyBytes_FromStringAndSize(out.data, out.size) if out.size else b""
