# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of :mod:`nstore.terms`: the checks a term passes to enter the store,
pyoxigraph's terms made datae values a batch at a time (:class:`Converter`), and N-Quads
and N-Triples read straight into datae values (:class:`LineReader`).

An import spent most of its parse time in Python per term: an attribute read, a type test
and a dict look-up for each of the four terms of a quad, a regex per new IRI, a call of
``IRI.__init__`` per new IRI. Here each of those is a C step. The pure-Python code in
:mod:`nstore.terms` (``valid_iri``, ``valid_lang``, ``from_oxigraph``, the slow path of
``check_quad_terms``) and pyoxigraph's parser stay the definitions:
tests/nstore/test_terms_compiled.py and tests/fstore/test_rdf_lines.py compare this module
with them on generated input.

Nothing here imports pyoxigraph: :class:`Converter` is handed its classes by its caller,
so ``import nstore`` still does not load it.
"""

from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject_GenericSetAttr, PyObject_Hash
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ

__all__ = ["iri_ok", "lang_ok", "QuadCheck", "Converter", "LineReader"]


cdef extern from "Python.h":
    # A tuple's item, borrowed: the quad check reads four without unpacking.
    PyObject* PyTuple_GET_ITEM(object, Py_ssize_t)
    object PyType_GenericAlloc(type, Py_ssize_t)
    object PyLong_FromString(const char*, char**, int)


cdef inline bint _bad_iri_char(Py_UCS4 c) noexcept nogil:
    """A character RFC 3987 refuses anywhere in an IRI (``%`` is decided by the caller):
    the regex class ``_NOT_IRI`` of nstore.terms, less ``%``."""
    if c <= 0x20:
        return True
    if c < 0x7f:
        return c == 0x3c or c == 0x3e or c == 0x22 or c == 0x7b or c == 0x7d or c == 0x7c \
            or c == 0x5c or c == 0x5e or c == 0x60  # < > " { } | \ ^ `
    if c <= 0x9f:
        return True  # DEL and the C1 controls
    if 0xd800 <= c <= 0xdfff:
        return True  # surrogates (a str can hold a lone one)
    return (0xfdd0 <= c <= 0xfdef) or c == 0xfffe or c == 0xffff  # non-characters


cdef inline bint _hex(Py_UCS4 c) noexcept nogil:
    return (0x30 <= c <= 0x39) or (0x41 <= c <= 0x46) or (0x61 <= c <= 0x66)


cdef inline bint _alpha(Py_UCS4 c) noexcept nogil:
    return (0x41 <= c <= 0x5a) or (0x61 <= c <= 0x7a)


cdef inline bint _alnum(Py_UCS4 c) noexcept nogil:
    return _alpha(c) or (0x30 <= c <= 0x39)


cpdef bint iri_ok(str text):
    """Whether ``text`` is an absolute IRI: ``nstore.terms.valid_iri`` (the regex) in C.

    >>> iri_ok("http://example.org/a%20b"), iri_ok("example.org/a"), iri_ok("urn:a%2")
    (True, False, False)
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 1
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 c
    if n == 0 or not _alpha(PyUnicode_READ(kind, data, 0)):
        return False
    # The scheme: its characters are not ':' and all allowed after it, so the first ':'
    # ends it wherever the regex's backtracking would.
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 0x3a:
            break
        if not (_alnum(c) or c == 0x2b or c == 0x2e or c == 0x2d):  # + . -
            return False
        i += 1
    if i == n:
        return False
    i += 1
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 0x25:  # '%' only as %XX
            if i + 2 >= n or not _hex(PyUnicode_READ(kind, data, i + 1)) or not _hex(PyUnicode_READ(kind, data, i + 2)):
                return False
            i += 3
            continue
        if _bad_iri_char(c):
            return False
        i += 1
    return True


cpdef bint lang_ok(str tag):
    """Whether ``tag`` has the syntax of a BCP 47 language tag: ``nstore.terms.valid_lang``
    (``[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*``) in C.

    >>> lang_ok("de-CH"), lang_ok("en-"), lang_ok("123")
    (True, False, False)
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(tag), i = 0, run = 0
    cdef int kind = PyUnicode_KIND(tag)
    cdef void* data = PyUnicode_DATA(tag)
    cdef Py_UCS4 c
    cdef bint first = True
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 0x2d:  # '-' ends a subtag, which may not be empty
            if run == 0:
                return False
            first = False
            run = 0
        elif _alpha(c) or (not first and 0x30 <= c <= 0x39):
            run += 1
            if run > 8:
                return False
        else:
            return False
        i += 1
    return run > 0


cdef object _literal_value(object literal, object integer):
    """The canonical form of a Literal object in the common cases, as
    ``nstore.terms.canonical`` gives it (None: ask that function): no datatype and no
    language, its string; a language, itself; ``xsd:integer`` with the digits Python
    writes for a 64-bit int, that int."""
    cdef object lexical = literal.lexical
    cdef object datatype = literal.datatype
    cdef Py_ssize_t size, i
    cdef Py_UCS4 c
    if literal.lang is not None:
        return literal if datatype is None and type(lexical) is str else None
    if datatype is None:
        return lexical if type(lexical) is str else None
    if datatype != integer or type(lexical) is not str:
        return None
    size = PyUnicode_GET_LENGTH(lexical)
    if size == 0 or size > 18:
        return None
    i = 1 if PyUnicode_READ(PyUnicode_KIND(lexical), PyUnicode_DATA(lexical), 0) == u'-' else 0
    if i == size or (PyUnicode_READ(PyUnicode_KIND(lexical), PyUnicode_DATA(lexical), i) == u'0' and size - i > 1):
        return None
    if i and size == 2 and PyUnicode_READ(PyUnicode_KIND(lexical), PyUnicode_DATA(lexical), 1) == u'0':
        return None  # "-0" is not how 0 is written
    for i in range(i, size):
        c = PyUnicode_READ(PyUnicode_KIND(lexical), PyUnicode_DATA(lexical), i)
        if c < u'0' or c > u'9':
            return None
    return int(lexical)


cdef class QuadCheck:
    """The common quad of a load decided in C, as ``check_quad_terms`` decides it: IRIs
    for subject and predicate (and graph, or None), an object that is always valid, an
    IRI, a short int, or a literal with a well-formed language tag or a valid datatype IRI
    (not ``langstring``, rdf:langString's text). An IRI passes
    if it is in ``seen`` (the valid IRIs of nstore.terms, shared with is_valid_iri) or
    :func:`iri_ok` finds it valid, and is then remembered there (``seen`` cleared past
    ``limit``, as nstore.terms does). ``check(quad)`` is False for anything else: the
    caller's Python path then decides, and names what is wrong.
    """

    cdef set seen
    cdef Py_ssize_t limit
    cdef type iri_type, literal_type
    cdef frozenset always_valid
    cdef str langstring

    def __init__(self, set seen, Py_ssize_t limit, type iri_type, type literal_type, str langstring,
                 frozenset always_valid):
        self.seen = seen
        self.langstring = langstring
        self.limit = limit
        self.iri_type = iri_type
        self.literal_type = literal_type
        self.always_valid = always_valid

    cdef inline bint _iri(self, object term):
        if type(term) is not self.iri_type:
            return False
        value = term.value
        if type(value) is not str:
            return False
        if value in self.seen:
            return True
        if not iri_ok(value):
            return False
        if len(self.seen) >= self.limit:
            self.seen.clear()
        self.seen.add(value)
        return True

    def passing(self, list quads, Py_ssize_t start, frozenset canonical, object integer) -> int:
        """The index of the first quad from ``start`` that is not a tuple of four values
        of ``canonical`` types passing :meth:`check` (``len(quads)`` if all are): a batch
        of a bulk load checked in one C loop. On the way, a quad whose object is a literal
        that stands for a Python value in the common way (no datatype: a string; the
        datatype ``integer`` and the canonical digits of a 64-bit int: an int) is replaced
        in ``quads`` by the quad holding that value, as ``nstore.terms.canonical`` would
        make it; a language-tagged literal is canonical as it is."""
        cdef Py_ssize_t i, n = len(quads)
        cdef object quad, o, kind, value
        for i in range(start, n):
            quad = quads[i]
            if type(quad) is not tuple or len(<tuple>quad) != 4:
                return i
            if (type(<object>PyTuple_GET_ITEM(quad, 0)) not in canonical or type(<object>PyTuple_GET_ITEM(quad, 1)) not in canonical
                    or type(<object>PyTuple_GET_ITEM(quad, 2)) not in canonical):
                return i
            o = <object>PyTuple_GET_ITEM(quad, 3)
            kind = type(o)
            if kind is self.literal_type:
                value = _literal_value(o, integer)
                if value is None:
                    return i
                if value is not o:
                    quad = (<object>PyTuple_GET_ITEM(quad, 0), <object>PyTuple_GET_ITEM(quad, 1),
                            <object>PyTuple_GET_ITEM(quad, 2), value)
            elif kind not in canonical:
                return i
            if not self.check(quad):
                return i
            if quad is not quads[i]:
                quads[i] = quad
        return n

    cpdef bint check(self, object quad):
        """Whether ``quad`` (a tuple of four) passes without the Python path."""
        cdef int overflow = 0
        if type(quad) is not tuple or len(<tuple>quad) != 4:
            return False
        g = <object>PyTuple_GET_ITEM(quad, 0)
        o = <object>PyTuple_GET_ITEM(quad, 3)
        if not (self._iri(<object>PyTuple_GET_ITEM(quad, 2)) and self._iri(<object>PyTuple_GET_ITEM(quad, 1))):
            return False
        if g is not None and not self._iri(g):
            return False
        kind = type(o)
        if kind is str or kind in self.always_valid:
            return True
        if kind is self.iri_type:
            return self._iri(o)
        if kind is int:
            PyLong_AsLongLongAndOverflow(o, &overflow)
            return overflow == 0  # a longer int is left to the Python path's bound on digits
        if kind is self.literal_type:
            lang = o.lang
            if lang is not None and not (type(lang) is str and lang_ok(lang)):
                return False
            datatype = o.datatype
            return datatype is None or (self._iri(datatype) and datatype.value != self.langstring)
        return False


cdef inline object _empty(type kind):
    """``kind.__new__(kind)`` without the attribute look-up and the call: the empty instance
    object.__new__ makes (IRI, BNode and Literal define no ``__new__``; PyType_GenericAlloc
    is the tp_alloc of every class defined in Python)."""
    return PyType_GenericAlloc(kind, 0)


cdef object _new_iri(type iri_type, str value):
    """``IRI(value)`` without ``IRI.__init__``'s type check (``value`` is a str) and its two
    ``object.__setattr__`` calls: the slots set directly, the hash as ``__init__`` computes it."""
    iri = _empty(iri_type)
    PyObject_GenericSetAttr(iri, "value", value)
    PyObject_GenericSetAttr(iri, "_hash", PyObject_Hash(value) ^ 0x1D1)
    return iri


cdef object _new_tagged(type literal_type, str lexical, str lang):
    """``Literal(lexical, lang=lang)`` of a lower-cased tag, its slots set directly."""
    literal = _empty(literal_type)
    PyObject_GenericSetAttr(literal, "lexical", lexical)
    PyObject_GenericSetAttr(literal, "datatype", None)
    PyObject_GenericSetAttr(literal, "lang", lang)
    PyObject_GenericSetAttr(literal, "_hash", None)
    PyObject_GenericSetAttr(literal, "_num", None)
    return literal


cdef object _XSD_INTEGER_TEXT = "http://www.w3.org/2001/XMLSchema#integer"
cdef object _XSD_STRING_TEXT = "http://www.w3.org/2001/XMLSchema#string"


cdef object _canonical_int(str lexical):
    """The int an xsd:integer lexical form of at most 18 characters stands for exactly
    (``str(int(lexical)) == lexical``: no sign but '-', no leading zero, no '-0'), else
    None. Longer forms are left to nstore.terms.canonical (Python's digit limit)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(lexical), i = 0
    cdef int kind = PyUnicode_KIND(lexical)
    cdef void* data = PyUnicode_DATA(lexical)
    cdef Py_UCS4 c
    cdef char digits[20]
    if n == 0 or n > 18:
        return None
    if PyUnicode_READ(kind, data, 0) == 0x2d:  # '-'
        if n == 1:
            return None
        digits[0] = b'-'
        i = 1
    if PyUnicode_READ(kind, data, i) == 0x30 and (n - i > 1 or i == 1):  # "01", "-0", "-01"
        return None
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if not (0x30 <= c <= 0x39):
            return None
        digits[i] = <char>c
        i += 1
    digits[n] = 0
    return PyLong_FromString(digits, NULL, 10)


cdef class Converter:
    """pyoxigraph quads made datae quads ``(graph, subject, predicate, object)``, as
    ``nstore.terms.from_oxigraph`` makes each term, a batch at a time.

    A file repeats its graphs, predicates, types and subjects, so an IRI met again is the
    same object (a dict look-up, not a new IRI; the dict cleared past ``memo`` entries).
    Plain strings, language-tagged literals and canonical xsd:integer forms are made here;
    any other term goes to ``fallback`` (``from_oxigraph``, which raises for an RDF-star
    triple). ``ox`` is the pyoxigraph module, ``terms`` the classes ``(IRI, BNode,
    Literal)``.
    """

    cdef dict iris, langs
    cdef Py_ssize_t memo
    cdef type iri_type, bnode_type, literal_type
    cdef type named_node, ox_literal, blank_node, default_graph
    cdef object fallback, error

    def __init__(self, ox, tuple terms, fallback, Py_ssize_t memo):
        self.iris = {}
        self.langs = {}
        self.memo = memo
        self.iri_type, self.bnode_type, self.literal_type = terms
        self.named_node = ox.NamedNode
        self.ox_literal = ox.Literal
        self.blank_node = ox.BlankNode
        self.default_graph = ox.DefaultGraph
        self.fallback = fallback
        self.error = None

    cdef object _iri(self, str value):
        iri = self.iris.get(value)
        if iri is None:
            iri = _new_iri(self.iri_type, value)
            if len(self.iris) >= self.memo:
                self.iris.clear()
            self.iris[value] = iri
        return iri

    cdef object term(self, object term):
        """The datae value of one pyoxigraph term."""
        kind = type(term)
        if kind is self.named_node:
            return self._iri(term.value)
        if kind is self.ox_literal:
            language = term.language
            if language is not None:
                # Literal(value, lang=language): the tag lower-cased once per distinct tag
                lowered = self.langs.get(language)
                if lowered is None:
                    if len(self.langs) >= 1024:  # a file of ever new tags keeps no more
                        self.langs.clear()
                    lowered = self.langs[language] = language.lower()
                return _new_tagged(self.literal_type, term.value, lowered)
            datatype = term.datatype.value
            if datatype == _XSD_STRING_TEXT:
                return term.value
            if datatype == _XSD_INTEGER_TEXT:
                value = _canonical_int(term.value)
                if value is not None:
                    return value
            return self.fallback(term)
        if kind is self.default_graph:
            return None
        if kind is self.blank_node:
            bnode = _empty(self.bnode_type)
            PyObject_GenericSetAttr(bnode, "id", term.value)
            return bnode
        return self.fallback(term)

    def batch(self, object quads, Py_ssize_t size, bint keep_graphs, object graph):
        """The next ``size`` quads of the iterator ``quads`` (fewer at its end: an empty
        list when it is done), each in ``graph`` unless ``keep_graphs``.

        An exception raised by the iterator or a term after some quads of a batch were made
        is raised by the next call instead, so a caller sees every quad before it first,
        as it would one quad at a time.
        """
        cdef list out = []
        cdef Py_ssize_t n = 0
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        try:
            for quad in quads:  # an iterator: a later call goes on where this one stopped
                out.append((self.term(quad.graph_name) if keep_graphs else graph, self.term(quad.subject),
                            self.term(quad.predicate), self.term(quad.object)))
                n += 1
                if n == size:
                    break
        except Exception as exc:
            if not out:
                raise
            self.error = exc
        return out


# -- N-Quads and N-Triples read in C -------------------------------------------------------
#
# pyoxigraph's parser makes a Rust term, then a Python object for each term and each of its
# strings, which the Converter then turns into another: most of an import's parse. A line
# of N-Quads is simple enough to read here directly, finding each repeated IRI by its bytes
# (no object made for it at all). Only lines of the common form are read here; any other
# line (an escape in an IRI, a comment, a non-ASCII blank node label, an error) is handed to
# ``fallback``, which parses it with pyoxigraph: what pyoxigraph takes and refuses, and its
# error messages, stay the definition, and tests/fstore/test_rdf_lines.py compares the two.


cdef struct Entry:
    uint64_t hash
    char* key  # NULL: a free slot
    Py_ssize_t size
    PyObject* value


cdef inline uint64_t _fnv(const char* data, Py_ssize_t size) noexcept nogil:
    """A hash of ``size`` bytes: FNV-1a over 8-byte words, then the last bytes."""
    cdef uint64_t h = 14695981039346656037ULL ^ <uint64_t>size
    cdef uint64_t word
    cdef Py_ssize_t i = 0
    while i + 8 <= size:
        memcpy(&word, data + i, 8)
        h = (h ^ word) * 1099511628211ULL
        i += 8
    while i < size:
        h = (h ^ <unsigned char>data[i]) * 1099511628211ULL
        i += 1
    # FNV's multiplications carry differences only upwards: mixed down (murmur3's
    # finalizer), so that the table's low bits spread IRIs that differ in their last bytes
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef class _Spans:
    """Values by the bytes that wrote them in a file (an open-addressing table in C): a
    look-up makes no Python object. Emptied when it holds ``limit`` values, so memory stays
    bounded whatever the file."""

    cdef Entry* slots
    cdef Py_ssize_t capacity, count, limit

    def __cinit__(self, Py_ssize_t limit):
        self.limit = limit
        self.capacity = 1024
        self.count = 0
        self.slots = <Entry*>calloc(self.capacity, sizeof(Entry))
        if self.slots == NULL:
            raise MemoryError()

    def __dealloc__(self):
        self._empty()
        free(self.slots)

    cdef void _empty(self) noexcept:
        cdef Py_ssize_t i
        for i in range(self.capacity):
            if self.slots[i].key != NULL:
                free(self.slots[i].key)
                Py_XDECREF(self.slots[i].value)
                self.slots[i].key = NULL
        self.count = 0

    cdef PyObject* find(self, const char* data, Py_ssize_t size, uint64_t h) noexcept:
        cdef Py_ssize_t mask = self.capacity - 1, i = <Py_ssize_t>(h & <uint64_t>mask)
        cdef Entry* entry
        while True:
            entry = &self.slots[i]
            if entry.key == NULL:
                return NULL
            if entry.hash == h and entry.size == size and memcmp(entry.key, data, size) == 0:
                return entry.value
            i = (i + 1) & mask

    cdef int _place(self, Entry* slots, Py_ssize_t capacity, Entry entry) noexcept:
        cdef Py_ssize_t mask = capacity - 1, i = <Py_ssize_t>(entry.hash & <uint64_t>mask)
        while slots[i].key != NULL:
            i = (i + 1) & mask
        slots[i] = entry
        return 0

    cdef int put(self, const char* data, Py_ssize_t size, uint64_t h, object value) except -1:
        cdef Entry entry
        cdef Entry* grown
        cdef Py_ssize_t i
        if self.count >= self.limit:
            self._empty()
        if (self.count + 1) * 2 > self.capacity:
            grown = <Entry*>calloc(self.capacity * 2, sizeof(Entry))
            if grown == NULL:
                raise MemoryError()
            for i in range(self.capacity):
                if self.slots[i].key != NULL:
                    self._place(grown, self.capacity * 2, self.slots[i])
            free(self.slots)
            self.slots = grown
            self.capacity *= 2
        entry.key = <char*>malloc(size + 1)
        if entry.key == NULL:
            raise MemoryError()
        memcpy(entry.key, data, size)
        entry.hash = h
        entry.size = size
        entry.value = <PyObject*>value
        Py_INCREF(value)
        self._place(self.slots, self.capacity, entry)
        self.count += 1
        return 0


cdef object _NO = object()  # a line this reader leaves to the fallback
cdef bytes _XSD_STRING_BYTES = b"http://www.w3.org/2001/XMLSchema#string"
cdef bytes _XSD_INTEGER_BYTES = b"http://www.w3.org/2001/XMLSchema#integer"
cdef Py_ssize_t _CHUNK = 1 << 20


cdef inline bint _blank(char c) noexcept nogil:
    return c == b' ' or c == b'\t'


cdef inline bint _label_char(char c) noexcept nogil:
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or (b'0' <= c <= b'9') or c == b'_' or c == b'-' or c == b'.'


cdef inline int _hex_value(char c) noexcept nogil:
    if 0x30 <= c <= 0x39:  # 0-9
        return c - 0x30
    if 0x61 <= c <= 0x66:  # a-f
        return c - 0x61 + 10
    if 0x41 <= c <= 0x46:  # A-F
        return c - 0x41 + 10
    return -1


cdef inline bint _unreserved_or_delim(char c) noexcept nogil:
    """RFC 3987's unreserved and sub-delims ASCII characters, ':' and '@': what a path, a
    query and a fragment hold besides '/', '?', '%XX' (and non-ASCII characters)."""
    return (b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or (b'0' <= c <= b'9') or c == b'-' or c == b'.' \
        or c == b'_' or c == b'~' or c == b'!' or c == b'$' or c == b'&' or c == b"'" or c == b'(' \
        or c == b')' or c == b'*' or c == b'+' or c == b',' or c == b';' or c == b'=' or c == b':' or c == b'@'


cdef bint _plain_iri(const char* p, Py_ssize_t n) noexcept nogil:
    """Whether the bytes of an IRI are of a form every RFC 3987 parser takes (pyoxigraph's
    included): ASCII, a scheme, an optional authority of a host name (letters, digits, '.'
    and '-') and a port of digits, then path, query and fragment characters (one '#').
    False says only "not this form": pyoxigraph then decides."""
    cdef Py_ssize_t i = 1
    cdef char c
    cdef bint fragment = False
    if n == 0 or not ((b'a' <= p[0] <= b'z') or (b'A' <= p[0] <= b'Z')):
        return False
    while i < n and p[i] != b':':
        c = p[i]
        if not ((b'a' <= c <= b'z') or (b'A' <= c <= b'Z') or (b'0' <= c <= b'9') or c == b'+' or c == b'-' or c == b'.'):
            return False
        i += 1
    if i == n:
        return False
    i += 1
    if i + 1 < n and p[i] == b'/' and p[i + 1] == b'/':
        i += 2
        if i == n or not ((b'a' <= p[i] <= b'z') or (b'A' <= p[i] <= b'Z') or (b'0' <= p[i] <= b'9')):
            return False  # an empty host, user information, an IP literal: pyoxigraph decides
        while i < n and ((b'a' <= p[i] <= b'z') or (b'A' <= p[i] <= b'Z') or (b'0' <= p[i] <= b'9') or p[i] == b'.' or p[i] == b'-'):
            i += 1
        if i < n and p[i] == b':':
            i += 1
            if i == n or not (b'0' <= p[i] <= b'9'):
                return False
            while i < n and b'0' <= p[i] <= b'9':
                i += 1
        if i < n and p[i] != b'/' and p[i] != b'?' and p[i] != b'#':
            return False
    while i < n:
        c = p[i]
        if c == b'%':
            if i + 2 >= n or _hex_value(p[i + 1]) < 0 or _hex_value(p[i + 2]) < 0:
                return False
            i += 3
            continue
        if c == b'#':
            if fragment:
                return False
            fragment = True
        elif not (_unreserved_or_delim(c) or c == b'/' or c == b'?'):
            return False
        i += 1
    return True


cdef class LineReader:
    """The quads of an N-Quads (``dataset``) or N-Triples file, read from the binary
    ``stream`` a batch at a time, as pyoxigraph then :class:`Converter` would give them.

    ``make`` is ``(iri, bnode, lang, typed)``, each called once per distinct text: ``iri``
    the IRI of a text (None if pyoxigraph refuses it), ``bnode`` the blank node of a label,
    ``lang`` the lower-cased tag (None if refused), ``typed`` the value of a lexical form
    and a datatype IRI (None if refused). ``fallback(line, number)`` gives the quads of
    one line this reader leaves to pyoxigraph, or raises; then :meth:`rest` gives the
    file's bytes from that line on, for pyoxigraph to read as it would have read them in
    the whole file (its error may name a later line: a missing dot is found at the next
    token). ``types`` are the
    classes ``(IRI, Literal)``; each quad is in ``graph`` unless ``keep_graphs``.
    """

    cdef object stream, fallback, graph, make_iri, make_bnode, make_lang, make_typed, error
    cdef type literal_type, iri_type
    cdef bint dataset, keep, eof
    cdef bytes data
    cdef Py_ssize_t pos, end, line, fallback_pos, fallback_line
    cdef _Spans iris, bnodes, langs, typed
    cdef char* text  # a literal's lexical form with its escapes resolved
    cdef Py_ssize_t text_size

    def __init__(self, stream, bint dataset, bint keep_graphs, graph, tuple make, tuple types, fallback,
                 Py_ssize_t memo):
        self.stream = stream
        self.dataset = dataset
        self.keep = keep_graphs
        self.graph = graph
        self.make_iri, self.make_bnode, self.make_lang, self.make_typed = make
        self.iri_type, self.literal_type = types
        self.fallback = fallback
        self.error = None
        self.eof = False
        self.data = b""
        self.pos = self.end = 0
        self.line = 0
        self.fallback_pos = self.fallback_line = 0
        self.iris = _Spans(memo)
        self.bnodes = _Spans(memo)
        self.langs = _Spans(1024)
        self.typed = _Spans(memo)
        self.text_size = 256
        self.text = <char*>malloc(self.text_size)
        if self.text == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.text)

    cdef bint _refill(self) except -1:
        """Bytes ending with a whole line in ``data[pos:end]``; False at the end of the file."""
        while True:
            chunk = self.stream.read(_CHUNK)
            rest = self.data[self.pos:]
            self.pos = 0
            if not chunk:
                self.eof = True
                self.data = rest
                self.end = len(rest)
                return self.end > 0
            self.data = rest + chunk
            self.end = self.data.rfind(b"\n") + 1
            if self.end > 0:
                return True

    def batch(self, Py_ssize_t size):
        """The next quads, at least ``size`` unless the file ends first (an empty list at
        its end). An error after some quads of a batch is raised by the next call."""
        cdef list out = []
        cdef const char* base
        cdef const char* start
        cdef const char* stop
        cdef const char* newline
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        try:
            while len(out) < size:
                if self.pos >= self.end:
                    if self.eof or not self._refill():
                        break
                base = PyBytes_AS_STRING(self.data)
                start = base + self.pos
                newline = <const char*>memchr(start, b'\n', self.end - self.pos)
                stop = newline if newline != NULL else base + self.end
                self.pos = (stop - base) + 1 if newline != NULL else self.end
                self.line += 1
                if stop > start and (stop - 1)[0] == b"\r":
                    stop -= 1
                quad = self._quad(start, stop)
                if quad is None:  # a blank line
                    continue
                if quad is _NO:
                    self.fallback_pos = start - base
                    self.fallback_line = self.line
                    out += self.fallback(PyBytes_FromStringAndSize(start, stop - start), self.line)
                else:
                    out.append(quad)
        except Exception as exc:
            if not out:
                raise
            self.error = exc
        return out

    def rest(self):
        """``(bytes, number)``: the bytes read from the stream from the start of the last
        line handed to the fallback on, and that line's number; the stream holds the rest."""
        return self.data[self.fallback_pos:], self.fallback_line

    cdef object _quad(self, const char* p, const char* e):
        """The quad of one line, None for a blank line, _NO for one left to the fallback."""
        cdef const char* c = p
        while c < e and _blank(c[0]):
            c += 1
        if c == e:
            return None
        s = self._node(&c, e)
        if s is _NO:
            return _NO
        pred = self._iri(&c, e) if c < e and c[0] == b'<' else _NO
        if pred is _NO or not self._gap(&c, e):
            return _NO
        o = self._object(&c, e)
        if o is _NO:
            return _NO
        g = None
        if self.dataset and c < e and c[0] != b'.':
            g = self._node(&c, e)
            if g is _NO:
                return _NO
        while c < e and _blank(c[0]):
            c += 1
        if c == e or c[0] != b'.':
            return _NO
        c += 1
        while c < e and _blank(c[0]):
            c += 1
        if c != e:
            return _NO  # a comment, or more after the dot
        return (g if self.keep else self.graph, s, pred, o)

    cdef bint _gap(self, const char** c, const char* e) noexcept:
        """Past the blanks after a term: False if there are none before the next term."""
        cdef const char* q = c[0]
        while q < e and _blank(q[0]):
            q += 1
        if q == c[0] and q < e and q[0] != b'<' and q[0] != b'"' and q[0] != b'_' and q[0] != b'.':
            return False
        c[0] = q
        return True

    cdef object _node(self, const char** c, const char* e):
        """An IRI or a blank node (a subject or a graph), the cursor past it and its blanks."""
        if c[0] < e and c[0][0] == b'<':
            node = self._iri(c, e)
        elif c[0] + 2 < e and c[0][0] == b'_' and c[0][1] == b':':
            node = self._bnode(c, e)
        else:
            return _NO
        if node is not _NO and not self._gap(c, e):
            return _NO
        return node

    cdef object _iri(self, const char** c, const char* e):
        cdef const char* start = c[0] + 1
        cdef const char* close = <const char*>memchr(start, b'>', e - start)
        cdef PyObject* found
        if close == NULL or memchr(start, b'\\', close - start) != NULL:
            return _NO  # an escape: pyoxigraph resolves it
        h = _fnv(start, close - start)
        found = self.iris.find(start, close - start, h)
        if found != NULL:
            c[0] = close + 1
            return <object>found
        if _plain_iri(start, close - start):
            iri = _new_iri(self.iri_type, PyUnicode_DecodeUTF8(start, close - start, NULL))
        else:
            try:
                text = PyUnicode_DecodeUTF8(start, close - start, NULL)
            except UnicodeDecodeError:
                return _NO
            iri = self.make_iri(text)
            if iri is None:
                return _NO
        self.iris.put(start, close - start, h, iri)
        c[0] = close + 1
        return iri

    cdef object _bnode(self, const char** c, const char* e):
        cdef const char* start = c[0] + 2
        cdef const char* q = start
        cdef PyObject* found
        if not (_label_char(q[0]) and q[0] != b'-' and q[0] != b'.'):
            return _NO
        while q < e and _label_char(q[0]):
            q += 1
        if q < e and <unsigned char>q[0] >= 0x80:
            return _NO  # a non-ASCII label character: pyoxigraph reads the label
        while (q - 1)[0] == b'.':  # a label does not end with '.': that dot ends the statement
            q -= 1
        h = _fnv(start, q - start)
        found = self.bnodes.find(start, q - start, h)
        if found != NULL:
            node = <object>found
        else:
            node = self.make_bnode(PyUnicode_DecodeUTF8(start, q - start, NULL))
            self.bnodes.put(start, q - start, h, node)
        c[0] = q
        return node

    cdef object _object(self, const char** c, const char* e):
        cdef const char* q
        cdef const char* token
        cdef const char* dt
        cdef PyObject* found
        if c[0] < e and c[0][0] != b'"':
            return self._node(c, e)
        token = c[0]
        lexical = self._string(c, e)
        if lexical is _NO:
            return _NO
        q = c[0]
        if q < e and q[0] == b'@':
            q += 1
            start = q
            while q < e and (_alnum(q[0]) or q[0] == b'-'):
                q += 1
            h = _fnv(start, q - start)
            found = self.langs.find(start, q - start, h)
            if found != NULL:
                lang = <object>found
            else:
                lang = self.make_lang(PyUnicode_DecodeUTF8(start, q - start, NULL))
                if lang is None:
                    return _NO
                self.langs.put(start, q - start, h, lang)
            c[0] = q
            value = _new_tagged(self.literal_type, lexical, lang)
        elif q + 2 < e and q[0] == b'^' and q[1] == b'^' and q[2] == b'<':
            dt = q + 3
            c[0] = q + 2
            datatype = self._iri(c, e)
            if datatype is _NO:
                return _NO
            size = c[0] - 1 - dt
            if size == len(_XSD_STRING_BYTES) and memcmp(dt, PyBytes_AS_STRING(_XSD_STRING_BYTES), size) == 0:
                value = lexical
            else:
                value = None
                if size == len(_XSD_INTEGER_BYTES) and memcmp(dt, PyBytes_AS_STRING(_XSD_INTEGER_BYTES), size) == 0:
                    value = _canonical_int(lexical)
                if value is None:
                    h = _fnv(token, c[0] - token)
                    found = self.typed.find(token, c[0] - token, h)
                    if found != NULL:
                        value = <object>found
                    else:
                        value = self.make_typed(lexical, datatype)
                        if value is None:
                            return _NO
                        self.typed.put(token, c[0] - token, h, value)
        else:
            value = lexical
        if not self._gap(c, e):
            return _NO
        return value

    cdef object _string(self, const char** c, const char* e):
        """The lexical form of a quoted literal, escapes resolved (_NO for a form the
        fallback is to read), the cursor past its closing quote."""
        cdef const char* q = c[0] + 1
        cdef const char* start = q
        cdef Py_ssize_t n = 0, digits, k
        cdef int d
        cdef unsigned int code
        cdef char x
        while q < e and q[0] != b'"' and q[0] != b'\\' and q[0] != b'\r':
            q += 1
        if q < e and q[0] == b'"':  # no escape: decoded where it stands
            c[0] = q + 1
            try:
                return PyUnicode_DecodeUTF8(start, q - start, NULL)
            except UnicodeDecodeError:
                return _NO
        q = start
        while q < e and q[0] != b'"':
            if n + 4 > self.text_size:
                self._grow(n + 4)
            x = q[0]
            if x == b'\r':
                return _NO
            if x != b'\\':
                self.text[n] = x
                n += 1
                q += 1
                continue
            if q + 1 >= e:
                return _NO
            x = q[1]
            q += 2
            if x == b't':
                self.text[n] = b'\t'
            elif x == b'b':
                self.text[n] = b'\b'
            elif x == b'n':
                self.text[n] = b'\n'
            elif x == b'r':
                self.text[n] = b'\r'
            elif x == b'f':
                self.text[n] = b'\f'
            elif x == b'"' or x == b"'" or x == b'\\':
                self.text[n] = x
            elif x == b'u' or x == b'U':
                digits = 4 if x == b'u' else 8
                if q + digits > e:
                    return _NO
                code = 0
                for k in range(digits):
                    d = _hex_value(q[k])
                    if d < 0:
                        return _NO
                    code = code * 16 + d
                q += digits
                if (0xD800 <= code <= 0xDFFF) or code > 0x10FFFF:
                    return _NO
                n += _utf8(code, self.text + n)
                continue
            else:
                return _NO
            n += 1
        if q >= e:
            return _NO
        c[0] = q + 1
        try:
            return PyUnicode_DecodeUTF8(self.text, n, NULL)
        except UnicodeDecodeError:
            return _NO

    cdef int _grow(self, Py_ssize_t need) except -1:
        cdef char* grown
        while self.text_size < need:
            self.text_size *= 2
        grown = <char*>realloc(self.text, self.text_size)
        if grown == NULL:
            raise MemoryError()
        self.text = grown
        return 0


cdef inline Py_ssize_t _utf8(unsigned int code, char* out) noexcept nogil:
    if code < 0x80:
        out[0] = <char>code
        return 1
    if code < 0x800:
        out[0] = <char>(0xC0 | (code >> 6))
        out[1] = <char>(0x80 | (code & 0x3F))
        return 2
    if code < 0x10000:
        out[0] = <char>(0xE0 | (code >> 12))
        out[1] = <char>(0x80 | ((code >> 6) & 0x3F))
        out[2] = <char>(0x80 | (code & 0x3F))
        return 3
    out[0] = <char>(0xF0 | (code >> 18))
    out[1] = <char>(0x80 | ((code >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((code >> 6) & 0x3F))
    out[3] = <char>(0x80 | (code & 0x3F))
    return 4
