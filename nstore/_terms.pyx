# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled half of :mod:`nstore.terms`: the checks a term passes to enter the store,
and pyoxigraph's terms made datae values, a batch at a time.

An import spent most of its parse time in Python per term: an attribute read, a type test
and a dict look-up for each of the four terms of a quad, a regex per new IRI, a call of
``IRI.__init__`` per new IRI. Here each of those is a C step. The pure-Python code in
:mod:`nstore.terms` (``valid_iri``, ``valid_lang``, ``from_oxigraph``, the slow path of
``check_quad_terms``) stays the definition, and tests/nstore/test_terms_compiled.py
compares this module with it on generated input.

Nothing here imports pyoxigraph: :class:`Converter` is handed its classes by its caller,
so ``import nstore`` still does not load it.
"""

from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject_GenericSetAttr, PyObject_Hash
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_READ, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH

__all__ = ["iri_ok", "lang_ok", "QuadCheck", "Converter"]


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


cdef object _XSD_INTEGER_TEXT = "http://www.w3.org/2001/XMLSchema#integer"
cdef object _XSD_STRING_TEXT = "http://www.w3.org/2001/XMLSchema#string"
cdef object _VALUE = "value"
cdef object _HASH = "_hash"
cdef object _LEXICAL = "lexical"
cdef object _DATATYPE = "datatype"
cdef object _LANG = "lang"


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

    cdef inline object _new(self, type kind):
        # kind.__new__(kind) without the attribute look-up and the call: the empty
        # instance object.__new__ would make (IRI, BNode and Literal define no __new__)
        # (the tp_alloc of every class defined in Python)
        return PyType_GenericAlloc(kind, 0)

    cdef object _iri(self, str value):
        iri = self.iris.get(value)
        if iri is None:
            # IRI(value), without IRI.__init__'s checks (value is a str from pyoxigraph)
            # and its two object.__setattr__ calls: the slots set directly, the hash as
            # IRI.__init__ computes it.
            iri = self._new(self.iri_type)
            PyObject_GenericSetAttr(iri, _VALUE, value)
            PyObject_GenericSetAttr(iri, _HASH, PyObject_Hash(value) ^ 0x1D1)
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
                    lowered = self.langs[language] = language.lower()
                literal = self._new(self.literal_type)
                PyObject_GenericSetAttr(literal, _LEXICAL, term.value)
                PyObject_GenericSetAttr(literal, _DATATYPE, None)
                PyObject_GenericSetAttr(literal, _LANG, lowered)
                PyObject_GenericSetAttr(literal, _HASH, None)
                return literal
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
            bnode = self._new(self.bnode_type)
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
