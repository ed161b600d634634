"""RDF terms that datae stores as first-class values (IRIs, literals and blank nodes), and
everything every layer needs to know about them, in one place: XSD and RDF datatype names,
lexical forms and their values (the numeric promotion ladder included), the canonical form
that turns a literal into the Python value it stands for and back (``canonical``,
``to_rdf``), the checks a term passes to enter the store, one term in N-Triples syntax both
ways, and pyoxigraph's terms (loaded on first use: ``import nstore`` does not pay for it).

Terms are plain immutable values (not ``str`` subclasses), so ``IRI("x") != "x"`` and a
set of tuples never confuses an IRI with a string of the same text. A literal that a
Python value stands for exactly (``to_rdf`` of the value gives the same term back) compares
and hashes equal to that value, so what a program wrote reads back equal to it:
``Literal("7", XSD_INTEGER) == 7`` but ``Literal("07", XSD_INTEGER) != 7``.

>>> IRI("http://example.org/a")
IRI('http://example.org/a')
>>> Literal("chat", lang="FR")
Literal('chat', lang='fr')
>>> Literal("a", datatype=XSD_STRING) == Literal("a") == "a"
True
>>> Literal("7", XSD_INTEGER) == 7, hash(Literal("7", XSD_INTEGER)) == hash(7)
(True, True)
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
import struct
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Union

from ._terms import Converter, LineReader, QuadCheck, iri_ok, lang_ok
from .errors import DataeError, InvalidTermError, PackError

__all__ = [
    # the model
    "IRI", "BNode", "Literal", "Value", "DEFAULT_GRAPH",
    # names
    "XSD", "RDF_NS", "XSD_STRING", "RDF_LANGSTRING", "XSD_INTEGER", "XSD_BOOLEAN", "XSD_DOUBLE", "XSD_DECIMAL",
    "XSD_DATE", "XSD_DATETIME", "XSD_BASE64", "XSD_FLOAT", "XSD_TIME", "XSD_DAYTIMEDURATION",
    # canonical form: literals and Python values
    "canonical", "to_rdf", "check_value", "ALREADY_CANONICAL", "double_lexical", "decimal_lexical",
    # lexical forms and the numeric ladder
    "INT", "DEC", "FLT", "DBL", "INTEGER_TYPES", "NUMERIC_TYPES", "NUMERIC_KINDS", "TRUE", "FALSE",
    "INTEGER_LEXICAL", "DECIMAL_LEXICAL", "DOUBLE_LEXICAL", "DATE_LEXICAL", "DATETIME_LEXICAL",
    "parse_numeric", "parse_boolean", "numeric_value", "numeric_functions", "make_numeric", "to_float32", "boolean",
    "is_string_literal", "datatype_of",
    # validation
    "is_valid_iri", "check_iri", "check_term", "check_quad_terms", "first_unchecked", "is_valid_term", "valid_iri",
    "valid_lang",
    "MAX_DIGITS",
    # N-Triples syntax and pyoxigraph terms
    "TermSyntaxError", "term_to_ntriples", "quad_line", "parse_term", "format_term", "to_oxigraph", "from_oxigraph",
    "oxigraph_converter", "line_reader",
]


class IRI:
    """An IRI reference, such as ``IRI("https://schema.org/name")``."""

    __slots__ = ("value", "_hash")
    value: str

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"IRI value must be str, not {type(value).__name__}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "_hash", hash(value) ^ 0x1D1)

    def __setattr__(self, name, value):
        raise AttributeError("IRI is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is IRI and other.value == self.value

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: IRI) -> bool:
        if type(other) is not IRI:
            return NotImplemented
        return self.value < other.value

    def __repr__(self) -> str:
        return f"IRI({self.value!r})"

    def __str__(self) -> str:
        return f"<{self.value}>"

    def __reduce__(self):
        return (IRI, (self.value,))


class BNode:
    """A blank node label, such as ``BNode("b0")``; labels are kept as given."""

    __slots__ = ("id",)
    id: str

    def __init__(self, id: str) -> None:
        if not isinstance(id, str):
            raise TypeError(f"BNode id must be str, not {type(id).__name__}")
        object.__setattr__(self, "id", id)

    def __setattr__(self, name, value):
        raise AttributeError("BNode is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is BNode and other.id == self.id

    def __hash__(self) -> int:
        return hash((BNode, self.id))

    def __lt__(self, other: BNode) -> bool:
        if type(other) is not BNode:
            return NotImplemented
        return self.id < other.id

    def __repr__(self) -> str:
        return f"BNode({self.id!r})"

    def __str__(self) -> str:
        return f"_:{self.id}"

    def __reduce__(self):
        return (BNode, (self.id,))


XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_STRING = IRI(XSD + "string")
_NOT_VALUES = (IRI, BNode)  # terms that no Python value stands for
RDF_LANGSTRING = IRI(RDF_NS + "langString")


class Literal:
    """An RDF literal: a lexical form with a datatype IRI or a language tag.

    As in RDF 1.1, ``xsd:string`` is the datatype of a literal without one, so it is
    stored as ``datatype=None``; a language-tagged literal has ``datatype=None`` and a
    lower-cased ``lang`` (tags compare case-insensitively).
    """

    __slots__ = ("lexical", "datatype", "lang", "_hash", "_num")
    lexical: str
    datatype: IRI | None
    lang: str | None

    def __init__(self, lexical: str, datatype: IRI | str | None = None, lang: str | None = None) -> None:
        if not isinstance(lexical, str):
            raise TypeError(f"Literal lexical form must be str, not {type(lexical).__name__}")
        if isinstance(datatype, str):
            datatype = IRI(datatype)
        elif datatype is not None and type(datatype) is not IRI:
            raise TypeError(f"Literal datatype must be IRI or None, not {type(datatype).__name__}")
        if lang is not None:
            if not isinstance(lang, str) or not lang:
                raise ValueError(f"invalid language tag {lang!r}")
            if datatype is not None and datatype != RDF_LANGSTRING:
                raise InvalidTermError(lexical, f"a literal has a language tag or a datatype, not both: @{lang} and {datatype}")
            lang = lang.lower()
            datatype = None
        elif datatype == XSD_STRING:
            datatype = None
        object.__setattr__(self, "lexical", lexical)
        object.__setattr__(self, "datatype", datatype)
        object.__setattr__(self, "lang", lang)
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_num", None)  # (kind, value) once known: see numeric_value

    def __setattr__(self, name, value):
        raise AttributeError("Literal is immutable")

    @property
    def value(self) -> Any:
        """The Python value this literal stands for exactly (``str``, ``int``, ``float``,
        ``bool``, ``Decimal``, ``date``, ``datetime``, ``bytes``), or the literal itself
        when none does (a language tag, another datatype, a non-canonical lexical form).

        >>> Literal("42", XSD_INTEGER).value, Literal("chat", lang="fr").value
        (42, Literal('chat', lang='fr'))
        """
        return canonical(self)

    def _key(self) -> tuple[str, str, str]:
        return (self.lexical, self.datatype.value if self.datatype else "", self.lang or "")

    def __eq__(self, other: object) -> bool:
        if type(other) is Literal:
            return other._key() == self._key()
        if type(other) in _NOT_VALUES or other is None:
            return False
        if self.lang is None and self.datatype is None:  # the common case: a plain string
            return isinstance(other, str) and self.lexical == other
        try:
            return to_rdf(other) == self  # equal only as the very same RDF term
        except TypeError:
            return NotImplemented
        except ValueError:  # an int too long to write out: no literal of the store is one
            return False

    def __hash__(self) -> int:
        # Computed on first use: most literals a query makes are never hashed, and finding
        # the Python value parses the lexical form. A literal equal to a Python value must
        # hash as that value does; NaN hashes by identity in Python, so it hashes by its key.
        cached = self._hash
        if cached is None:
            native = canonical(self)  # the literal itself when no Python value stands for it
            if native is self or (type(native) is float and native != native):
                cached = hash(self._key())
            else:
                cached = hash(native)
            object.__setattr__(self, "_hash", cached)
        return cached

    def __lt__(self, other: Literal) -> bool:
        if type(other) is not Literal:
            return NotImplemented
        return self._key() < other._key()

    def __repr__(self) -> str:
        extra = ""
        if self.datatype is not None:
            extra = f", datatype={self.datatype.value!r}"
        if self.lang is not None:
            extra = f", lang={self.lang!r}"
        return f"Literal({self.lexical!r}{extra})"

    def __str__(self) -> str:
        return term_to_ntriples(self)

    def __reduce__(self):
        return (_literal, self._key())


def _literal(lexical: str, datatype: str, lang: str) -> Literal:
    return Literal(lexical, datatype or None, lang or None)


# -- XSD values: the one conversion between literals and Python values ---------------------

XSD_INTEGER = IRI(XSD + "integer")
XSD_BOOLEAN = IRI(XSD + "boolean")
XSD_DOUBLE = IRI(XSD + "double")
XSD_DECIMAL = IRI(XSD + "decimal")
XSD_DATE = IRI(XSD + "date")
XSD_DATETIME = IRI(XSD + "dateTime")
XSD_BASE64 = IRI(XSD + "base64Binary")
XSD_FLOAT = IRI(XSD + "float")
XSD_TIME = IRI(XSD + "time")
XSD_DAYTIMEDURATION = IRI(XSD + "dayTimeDuration")

def canonical(value: Any) -> Any:
    """The stored form of a value: a literal that a Python value represents exactly (``to_rdf``
    of that value gives the literal back, same lexical form) becomes that value; any other
    literal stays a Literal, so every lexical form round-trips. Every NaN becomes one NaN."""
    if type(value) is float:
        return _NAN if value != value else value  # every NaN is the one term "NaN"^^xsd:double
    if type(value) is not Literal or value.lang is not None:
        return value
    datatype = value.datatype
    if datatype is None:
        return value.lexical
    parse = _PARSERS.get(datatype)
    if parse is None:
        return value
    try:
        native = parse(value.lexical)
    except (ValueError, ArithmeticError, LookupError, binascii.Error):
        return value
    return native if to_rdf(native) == value else value


_NAN = float("nan")
"""The one NaN the store holds: NaNs of other bit patterns (payloads, a sign) are the same
RDF term, so they are stored as this one and found by it."""


def _parse_double(lexical: str) -> float:
    special = {"NaN": _NAN, "INF": float("inf"), "-INF": float("-inf")}
    return special[lexical] if lexical in special else float(lexical)


def _parse_date(lexical: str) -> _dt.date:
    return _dt.date.fromisoformat(lexical)


# Candidate values only, the fastest parse of each type: canonical keeps a value only if
# to_rdf writes the very same literal back, so these may be lenient (``int("1_0")``) where
# the lexical rules (parse_numeric, parse_boolean) may not.
_PARSERS = {
    XSD_INTEGER: int,
    XSD_BOOLEAN: lambda lexical: _BOOLEANS[lexical],  # "1" gives True, whose literal is "true": kept as written
    XSD_DOUBLE: _parse_double,
    XSD_DECIMAL: Decimal,
    XSD_DATE: _parse_date,
    XSD_DATETIME: _dt.datetime.fromisoformat,
    XSD_BASE64: lambda lexical: base64.b64decode(lexical, validate=True),
}


def to_rdf(value: Any) -> IRI | Literal | BNode | None:
    """The RDF term of a stored value (None stays None: the default graph)."""
    kind = type(value)
    if kind in (IRI, Literal, BNode) or value is None:
        return value
    if kind is str:
        return _exact(Literal(value), value)
    if kind is bool:
        return _exact(Literal("true" if value else "false", XSD_BOOLEAN), value)
    if kind is int:
        literal = _exact(Literal(str(value), XSD_INTEGER), value)
        object.__setattr__(literal, "_num", (INT, value))
        return literal
    if kind is float:
        literal = Literal(double_lexical(value), XSD_DOUBLE)
        return literal if value != value else _exact(literal, value)  # NaN hashes by its key
    if kind is Decimal:
        return _exact(Literal(decimal_lexical(value), XSD_DECIMAL), value)
    if kind is _dt.datetime:
        return _exact(Literal(value.isoformat(), XSD_DATETIME), value)
    if kind is _dt.date:
        return _exact(Literal(value.isoformat(), XSD_DATE), value)
    if kind is bytes:
        return _exact(Literal(base64.b64encode(value).decode("ascii"), XSD_BASE64), value)
    for base in (bool, int, float, str, bytes, Decimal):  # subclasses (IntEnum, str enums...)
        if isinstance(value, base):
            return to_rdf(base(value))
    raise TypeError(f"no RDF term for a {type(value).__name__}: {value!r:.80}")


def _exact(literal: Literal, value: Any) -> Literal:
    """``literal``, given the hash of the Python value it stands for exactly (what its
    ``__hash__`` would find by parsing its lexical form again)."""
    object.__setattr__(literal, "_hash", hash(value))
    return literal


def double_lexical(value: float) -> str:
    """The canonical xsd:double lexical form (``1.5E0``, ``1.0E20``, ``NaN``, ``-INF``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    exp = int(exponent or 0)
    # Normalise to one digit before the point: 123.5 -> 1.235E2.
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    digits, _, fraction = mantissa.partition(".")
    all_digits = (digits + fraction).lstrip("0")
    if not all_digits:
        return f"{sign}0.0E0"
    exp += len(digits) - 1
    leading_zeros = len(digits + fraction) - len((digits + fraction).lstrip("0"))
    exp -= leading_zeros
    all_digits = all_digits.rstrip("0") or "0"
    head, tail = all_digits[0], all_digits[1:] or "0"
    return f"{sign}{head}.{tail}E{exp}"


def decimal_lexical(value: Decimal) -> str:
    """The canonical xsd:decimal lexical form: no trailing zeros, at least one fraction digit
    (``1.5``, ``3.0``, ``-0.25``) — the form that survives packing, which drops trailing
    zeros. Exact: ``normalize()`` would round to the context's 28 digits."""
    if value.is_zero():
        return "0.0"
    text = format(value, "f")
    if "." not in text:
        return text + ".0"
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


Value = Union[str, int, float, bool, bytes, Decimal, _dt.date, _dt.datetime, IRI, Literal, BNode, None]
"""What a quad item can be: a Python value a literal stands for exactly, or an RDF term."""

DEFAULT_GRAPH = None
"""The default graph of a dataset is written as graph None (it sorts before every name)."""

# Not float: a NaN of any bit pattern is stored as the one NaN (canonical).
ALREADY_CANONICAL = frozenset({IRI, str, int, type(None), BNode, bool, bytes, Decimal, _dt.date, _dt.datetime})
_STORABLE = (str, int, float, bytes, Decimal, _dt.date, IRI, Literal, BNode)


def check_value(value: Any, where: str) -> Any:
    """Return ``value`` in canonical form, or raise ``PackError`` naming ``where`` it was.

    >>> check_value(Literal("5", XSD_INTEGER), "object"), check_value(IRI("urn:a"), "subject")
    (5, IRI('urn:a'))
    """
    if type(value) in ALREADY_CANONICAL:
        return value
    if isinstance(value, _STORABLE):
        return canonical(value)
    raise PackError(f"{where}: a quad cannot hold a {type(value).__name__} ({value!r:.80})")


# -- lexical forms: what each XSD datatype accepts, and the value it stands for ------------------
#
# Numbers climb SPARQL's promotion ladder integer < decimal < float < double (INT, DEC, FLT,
# DBL). The whitespace around a number is not part of it (XSD's "collapse" facet).

INT, DEC, FLT, DBL = 0, 1, 2, 3

# The integer types derived from xsd:decimal, with their bounds (None: unbounded).
_INTEGER_BOUNDS: dict[str, tuple[int | None, int | None]] = {
    "integer": (None, None),
    "nonPositiveInteger": (None, 0),
    "negativeInteger": (None, -1),
    "long": (-(1 << 63), (1 << 63) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "short": (-(1 << 15), (1 << 15) - 1),
    "byte": (-128, 127),
    "nonNegativeInteger": (0, None),
    "unsignedLong": (0, (1 << 64) - 1),
    "unsignedInt": (0, (1 << 32) - 1),
    "unsignedShort": (0, (1 << 16) - 1),
    "unsignedByte": (0, 255),
    "positiveInteger": (1, None),
}
_BOUNDS = {XSD + name: bounds for name, bounds in _INTEGER_BOUNDS.items() if bounds != (None, None)}

NUMERIC_KINDS: dict[str, int] = {XSD + name: INT for name in _INTEGER_BOUNDS}
NUMERIC_KINDS.update({XSD + "decimal": DEC, XSD + "float": FLT, XSD + "double": DBL})
"""The rung of each numeric datatype, by its IRI text (what columns and packed items hold)."""

INTEGER_TYPES = frozenset(IRI(XSD + name) for name in _INTEGER_BOUNDS)
_KIND_OF: dict[IRI, int] = {IRI(text): kind for text, kind in NUMERIC_KINDS.items()}
NUMERIC_TYPES = frozenset(_KIND_OF)
_TYPE_OF_KIND = {INT: XSD_INTEGER, DEC: XSD_DECIMAL, FLT: XSD_FLOAT, DBL: XSD_DOUBLE}

TRUE = Literal("true", XSD_BOOLEAN)
FALSE = Literal("false", XSD_BOOLEAN)
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False}

# The lexical forms as ``match`` checks them (anchored at the end): xsd:integer, xsd:decimal,
# xsd:double and xsd:float; xsd:date and xsd:dateTime with their parts as groups (year, month,
# day[, hour, minute, second], time zone). Compiled on first use (``__getattr__``), so that
# ``import nstore`` does not pay for patterns only queries and exports need.
_LEXICAL_PATTERNS = {
    "INTEGER_LEXICAL": r"[+-]?[0-9]+\Z",
    "DECIMAL_LEXICAL": r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z",
    "DOUBLE_LEXICAL": r"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z",
    "DATE_LEXICAL": r"(-?\d{4,})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?\Z",
    "DATETIME_LEXICAL": r"(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?\Z",
}
_compiled: dict[str, re.Pattern] = {}
_NUMBER_PATTERNS: list[re.Pattern] = []  # by kind: INT, DEC, FLT, DBL (parse_numeric fills it)


def _lexical_pattern(name: str) -> re.Pattern:
    compiled = _compiled.get(name)
    if compiled is None:
        compiled = _compiled[name] = re.compile(_LEXICAL_PATTERNS[name])
    return compiled


def __getattr__(name: str) -> Any:
    """``INTEGER_LEXICAL``, ``DATE_LEXICAL``...: compiled when first imported (PEP 562).

    >>> from nstore.terms import DATE_LEXICAL
    >>> DATE_LEXICAL.match("2024-02-29Z").groups()
    ('2024', '02', '29', 'Z')
    """
    if name in _LEXICAL_PATTERNS:
        compiled = globals()[name] = _lexical_pattern(name)
        return compiled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _number_patterns() -> list[re.Pattern]:
    _NUMBER_PATTERNS[:] = [_lexical_pattern(name) for name in
                           ("INTEGER_LEXICAL", "DECIMAL_LEXICAL", "DOUBLE_LEXICAL", "DOUBLE_LEXICAL")]
    return _NUMBER_PATTERNS


def parse_boolean(lexical: str) -> bool | None:
    """The value of an xsd:boolean lexical form (``true``, ``false``, ``1``, ``0``), else None.

    >>> parse_boolean("1"), parse_boolean("yes")
    (True, None)
    """
    return _BOOLEANS.get(lexical)


def parse_numeric(lexical: str, kind: int, datatype: str) -> Any:
    """The value of a numeric lexical form of ``datatype`` (its IRI text, of rung ``kind``),
    or None if it is not valid for the type (a derived integer type's bounds included).

    >>> parse_numeric(" 42 ", INT, XSD + "integer"), parse_numeric("-1", INT, XSD + "unsignedInt")
    (42, None)
    """
    text = lexical.strip()
    if (_NUMBER_PATTERNS or _number_patterns())[kind].match(text) is None:
        return None
    if kind == INT:
        try:
            value = int(text)
        except ValueError:  # past Python's 4,300 digits: no value here, as the store holds none
            return None
        bounds = _BOUNDS.get(datatype)
        if bounds is not None:
            low, high = bounds
            if (low is not None and value < low) or (high is not None and value > high):
                return None
        return value
    if kind == DEC:
        return Decimal(text)
    value = float(text.replace("INF", "inf"))
    return to_float32(value) if kind == FLT else value


_NUMERIC_CACHE: dict[Literal, tuple[int, Any] | None] = {}
_CACHE_LIMIT = 1 << 16


def _known_numeric(term: Literal, found: tuple[int, Any]) -> None:
    """Remember on the literal itself the ``(kind, value)`` it holds (a literal made from
    the value, whose lexical form needs no parsing), as :func:`numeric_value` finds it."""
    object.__setattr__(term, "_num", found)


def numeric_value(term: object) -> tuple[int, Any] | None:
    """``(kind, value)`` of a numeric literal; None for anything else (including an
    ill-typed literal such as ``"x"^^xsd:integer``). Remembered per literal: a query
    compares the same few literals over and over.

    >>> numeric_value(Literal("42", XSD_INTEGER)), numeric_value(Literal("1.50", XSD_DECIMAL))
    ((0, 42), (1, Decimal('1.50')))
    >>> numeric_value(Literal("x", XSD_INTEGER)) is None, numeric_value(IRI("urn:a")) is None
    (True, True)
    """
    if type(term) is not Literal or term.datatype is None:
        return None
    if type(term) is Literal and term._num is not None:
        return term._num
    found = _NUMERIC_CACHE.get(term, False)
    return _numeric_of(term) if found is False else found


def _numeric_of(term: Literal) -> tuple[int, Any] | None:
    """:func:`numeric_value` of a literal not in the cache yet, remembered."""
    kind = _KIND_OF.get(term.datatype)
    found = None
    if kind is not None:
        value = parse_numeric(term.lexical, kind, term.datatype.value)
        if value is not None:
            found = (kind, value)
    if len(_NUMERIC_CACHE) > _CACHE_LIMIT:
        _NUMERIC_CACHE.clear()
    _NUMERIC_CACHE[term] = found
    return found


def numeric_functions(error: type[Exception]) -> tuple[Callable[[object], tuple[int, Any]], Callable[[int, Any], Literal]]:
    """``(numeric, make_numeric)`` for a layer that names "no value" with its own exception:
    ``numeric(term)`` is :func:`numeric_value` raising ``error()`` where that gives None,
    and ``make_numeric(kind, value)`` the literal of ``kind`` holding ``value`` in canonical
    form, raising ``error()`` where there is none (a decimal that is not a finite number).
    Built per layer rather than wrapped, because they run once per value an expression
    computes: the query engine's are one call each, raising SPARQL's error value.

    >>> numeric, make = numeric_functions(LookupError)
    >>> numeric(Literal("42", XSD_INTEGER)), make(DEC, Decimal("3") / Decimal("2"))
    ((0, 42), Literal('1.5', datatype='http://www.w3.org/2001/XMLSchema#decimal'))
    >>> numeric(Literal("x", XSD_INTEGER))
    Traceback (most recent call last):
    LookupError
    """
    cache = _NUMERIC_CACHE

    def numeric(term: object) -> tuple[int, Any]:
        if type(term) is not Literal or term.datatype is None:
            raise error()
        found = term._num
        if found is not None:
            return found
        found = cache.get(term, False)
        if found is False:
            found = _numeric_of(term)
        if found is None:
            raise error()
        return found

    def make_numeric(kind: int, value: Any) -> Literal:
        if kind == INT:
            value = int(value)
            literal = Literal(str(value), XSD_INTEGER)
            _known_numeric(literal, (INT, value))  # str() of an int parses back to it
            return literal
        if kind == DEC:
            if not isinstance(value, Decimal):
                try:
                    value = Decimal(value)
                except (InvalidOperation, TypeError, ValueError):
                    raise error(f"no xsd:decimal for {value!r:.80}") from None
            if not value.is_finite():
                raise error(f"no xsd:decimal for {value!r:.80}")
            return Literal(decimal_lexical(value), XSD_DECIMAL)
        if kind == FLT:
            return Literal(_float_lexical(to_float32(float(value))), XSD_FLOAT)
        return Literal(double_lexical(float(value)), XSD_DOUBLE)

    return numeric, make_numeric


def to_float32(value: float) -> float:
    """Round a Python float to the nearest IEEE single (xsd:float)."""
    try:
        return struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _float_lexical(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        return double_lexical(value)
    # The shortest decimal that rounds back to the same single-precision value.
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if to_float32(float(text)) == value:
            return double_lexical(float(text))
    return double_lexical(value)


_, make_numeric = numeric_functions(ValueError)
make_numeric.__doc__ = """A literal of the given numeric kind holding ``value`` in canonical form;
``ValueError`` for a decimal that is not a finite number.

>>> make_numeric(DEC, Decimal("3") / Decimal("2"))
Literal('1.5', datatype='http://www.w3.org/2001/XMLSchema#decimal')
>>> make_numeric(DBL, 1e20)
Literal('1.0E20', datatype='http://www.w3.org/2001/XMLSchema#double')
"""


def boolean(value: bool) -> Literal:
    """``"true"^^xsd:boolean`` or ``"false"^^xsd:boolean``."""
    return TRUE if value else FALSE


def is_string_literal(term: object) -> bool:
    """A simple literal or xsd:string (RDF 1.1 makes them the same term)."""
    return type(term) is Literal and term.datatype is None and term.lang is None


def datatype_of(term: Literal) -> IRI:
    """The datatype IRI of a literal (xsd:string or rdf:langString when none is stored).

    >>> datatype_of(Literal("chat", lang="fr")).value
    'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString'
    """
    if term.datatype is not None:
        return term.datatype
    return RDF_LANGSTRING if term.lang is not None else XSD_STRING


# -- validation: what a term must be to enter the store --------------------------------------
#
# The constructors above accept any text, because nstore holds any value and a read must
# never fail on what a store already holds; the versioned store checks each term where it
# enters: fstore.add and add_many with check_quad_terms, merge resolutions with check_term.
# Both are here, sharing one bound on integers and one cache of valid IRIs, so every
# writer refuses the same terms with the same messages.

MAX_DIGITS = 4300
"""The most digits an integer or decimal may have: CPython's default limit on writing an
int out (``sys.int_info.default_max_str_digits``), so any Python can print every value."""

_INT_LIMIT = 10**MAX_DIGITS
_SAFE_BITS = 14_280  # 2**14280 < 10**4300: shorter ints need no comparison with _INT_LIMIT

# RFC 3987 in one pass: a scheme, then any characters but spaces, controls (C0, DEL, C1),
# surrogates, non-characters and <>"{}|\^`, with % only as the start of %XX.
_NOT_IRI = '\\x00-\\x20<>"{}|\\\\^`\\x7f-\\x9f\\ud800-\\udfff\\ufdd0-\\ufdef\\ufffe\\uffff%'
_IRI = re.compile(f"[A-Za-z][A-Za-z0-9+.\\-]*:[^{_NOT_IRI}]*(?:%[0-9A-Fa-f]{{2}}[^{_NOT_IRI}]*)*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_CHAR = re.compile(f"[{_NOT_IRI[:-1]}]|%(?![0-9A-Fa-f]{{2}})")
_LANG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")


# IRIs already found valid: graphs, predicates and classes recur in nearly every quad of a
# load, and a set lookup costs a tenth of the regex. Cleared when full, to bound memory.
_SEEN_IRIS: set[str] = set()
_SEEN_LIMIT = 1 << 17


def _new_valid_iri(text: str) -> bool:
    """Whether ``text`` (not in the cache) is a valid IRI; remembered if it is."""
    if not iri_ok(text):  # valid_iri in C
        return False
    if len(_SEEN_IRIS) >= _SEEN_LIMIT:
        _SEEN_IRIS.clear()
    _SEEN_IRIS.add(text)
    return True


def is_valid_iri(text: str) -> bool:
    """Whether ``text`` is an absolute IRI (as :func:`check_iri` checks), remembered: a
    test for hot paths, a set lookup for an IRI seen before.

    >>> is_valid_iri("urn:a"), is_valid_iri("a b")
    (True, False)
    """
    return text in _SEEN_IRIS or _new_valid_iri(text)


def check_iri(text: str, where: str = "") -> None:
    """Raise :class:`InvalidTermError` unless ``text`` is an absolute IRI as RFC 3987
    writes one (a scheme; no spaces, controls or ``<>"{}|\\^```; ``%`` only in ``%XX``).

    >>> check_iri("http://example.org/a%20b")
    >>> check_iri("example.org/a")
    Traceback (most recent call last):
    nstore.errors.InvalidTermError: IRI('example.org/a') is not a valid term: an IRI needs a scheme ...
    """
    if not is_valid_iri(text):
        raise InvalidTermError(IRI(text), _iri_fault(text), where)


valid_iri = _IRI.fullmatch
"""``valid_iri(text)`` is a match (truthy) if ``text`` is an absolute IRI, else None: the
definition, as one regex (``check_iri`` says what is wrong). The checks of the store run
its C twin ``nstore._terms.iri_ok``; tests/nstore/test_terms_compiled.py holds them equal."""


def _iri_fault(text: str) -> str:
    """What is wrong with ``text`` as an IRI (called once ``_IRI`` refused it)."""
    if _SCHEME.match(text) is None:
        return ("an IRI needs a scheme (http:, urn:, ...): the store holds absolute IRIs only "
                "(resolve a relative one against a base first)")
    bad = _BAD_CHAR.search(text)
    if bad is None:
        return "not an IRI (RFC 3987)"
    if bad.group() == "%":
        return f"'%' at position {bad.start()} does not start a %XX escape (RFC 3987)"
    return f"{bad.group()!r} at position {bad.start()} is not allowed in an IRI (RFC 3987)"


valid_lang = _LANG.fullmatch
"""``valid_lang(tag)`` is a match if ``tag`` has the syntax of a BCP 47 language tag (the
definition; the store's checks run its C twin ``nstore._terms.lang_ok``)."""


def _check_digits(value: int | Decimal, where: str) -> None:
    """Refuse a number whose canonical lexical form would need more than MAX_DIGITS digits."""
    if type(value) is int:
        if value.bit_length() <= _SAFE_BITS or -_INT_LIMIT < value < _INT_LIMIT:
            return
        raise InvalidTermError(value, f"an xsd:integer has at most {MAX_DIGITS} digits", where)
    if not value.is_finite():
        raise InvalidTermError(value, "an xsd:decimal is finite (no NaN or infinity)", where)
    _, digits, exponent = value.as_tuple()
    written = max(len(digits) + exponent, 1) + max(-exponent, 1)  # digits of the plain form
    if written > MAX_DIGITS:
        raise InvalidTermError(value, f"an xsd:decimal is written with at most {MAX_DIGITS} digits, this one needs {written}", where)


def _check_literal(value: Literal, where: str) -> None:
    if value.lang is not None and not lang_ok(value.lang):
        raise InvalidTermError(value, f"{value.lang!r} is not a language tag (BCP 47: letters, then -subtags)", where)
    if value.datatype is not None:
        if value.datatype == RDF_LANGSTRING:
            raise InvalidTermError(value, "an rdf:langString literal needs a language tag", where)
        datatype = value.datatype.value
        if not is_valid_iri(datatype):
            raise InvalidTermError(value, f"its datatype {datatype!r}: {_iri_fault(datatype)}", where)


def check_term(value: Any, where: str = "") -> None:
    """Raise :class:`InvalidTermError` (naming ``value``, what is wrong and ``where`` it was
    given) unless ``value`` may enter the store as a term: None (where a term is required),
    an IRI breaking RFC 3987, a literal with a bad language tag or datatype, an integer or
    a decimal too long to write out. Other values pass (their types are checked on packing).

    >>> check_term(IRI("urn:isbn:0451450523")); check_term(10**100); check_term("any text")
    >>> check_term(None, "quad object")
    Traceback (most recent call last):
    nstore.errors.InvalidTermError: quad object: None is not a valid term: ...
    """
    kind = type(value)
    if kind is IRI:
        check_iri(value.value, where)
    elif kind is int or kind is Decimal:
        _check_digits(value, where)
    elif kind is Literal:
        _check_literal(value, where)
    elif value is None:
        raise InvalidTermError(None, "a term is required here (None stands only for the default graph)", where)


# Types whose every value is a valid term: check_term checks nothing more of them.
_ALWAYS_VALID = frozenset({str, float, bool, bytes, _dt.date, _dt.datetime, BNode})
_POSITIONS = ("graph", "subject", "predicate", "object")


def check_quad_terms(quad: tuple, what: str = "quad") -> tuple:
    """Return ``quad`` (graph, subject, predicate, object) if each item may enter the store
    as a term, else raise :class:`InvalidTermError` naming the item, its position and what
    is wrong (:func:`check_term`); the graph may be None (the default graph). Writes check
    what they add; reads and removals take any value, so quads stored before these checks
    can still be found and removed.

    >>> check_quad_terms((None, IRI("urn:a"), IRI("urn:p"), 1))
    (None, IRI('urn:a'), IRI('urn:p'), 1)
    >>> check_quad_terms((None, IRI("urn:a"), IRI("urn:p"), None))
    Traceback (most recent call last):
    nstore.errors.InvalidTermError: quad object: None is not a valid term: ...
    """
    # The common quad (IRIs, then a plain value, an IRI, a short int or a literal) decided
    # in C, as check_term would: a bulk load pays a set lookup per IRI, a C scan per new
    # IRI, no Python call per item. Anything else goes through check_term, which names
    # what is wrong.
    if _quad_passes(quad):
        return quad
    g, s, p, o = quad  # four items (a ValueError otherwise), before any is checked
    for position, value in zip(_POSITIONS, quad):
        if value is not None or position != "graph":
            check_term(value, f"{what} {position}")
    return quad


_QUAD_CHECK = QuadCheck(_SEEN_IRIS, _SEEN_LIMIT, IRI, Literal, RDF_LANGSTRING.value, _ALWAYS_VALID)
_quad_passes = _QUAD_CHECK.check


def first_unchecked(quads: list, start: int = 0) -> int:
    """The index of the first quad in ``quads[start:]`` that is not canonical (a tuple of
    four :data:`ALREADY_CANONICAL` values, or whose object literal the C loop puts in
    canonical form in place: a plain string, a language-tagged literal, an ``xsd:integer``)
    and valid as :func:`check_quad_terms` decides (``len(quads)`` if none): what a bulk load
    runs through the Python path, one C loop deciding the rest.

    >>> quads = [(None, IRI("urn:a"), IRI("urn:p"), Literal("7", XSD_INTEGER)), (None, IRI("urn:a"), IRI("urn:p"), 1.5)]
    >>> first_unchecked(quads), quads[0]
    (1, (None, IRI('urn:a'), IRI('urn:p'), 7))
    """
    return _QUAD_CHECK.passing(quads, start, ALREADY_CANONICAL, XSD_INTEGER)


def is_valid_term(term: object) -> bool:
    """Whether ``term`` may enter the store: the check every write makes
    (:func:`check_term`: an absolute RFC 3987 IRI, a literal with a well-formed language
    tag and datatype). A SPARQL template quad holding any other term is left out, as SPARQL
    leaves out one that "would not be valid RDF" (1.1 Query 16.2.1, Update 3.1.3).

    >>> is_valid_term(IRI("urn:a")), is_valid_term(IRI("not an iri")), is_valid_term(Literal("x", lang="e n"))
    (True, False, False)
    """
    # IRIs are most of what a template gets, and most were seen before: a set lookup
    if type(term) is IRI:
        return is_valid_iri(term.value)
    try:
        check_term(term)
    except InvalidTermError:
        return False
    return True


# -- N-Triples syntax: one term as text, and back ----------------------------------------------
#
# Written here directly: making a pyoxigraph term for each value costs several times more
# than the text (SPARQL's TSV results, the command line). Files are written a batch of quads
# at a time by the compiled twin of quad_line, nstore._ntriples.LineWriter; these functions
# stay its oracle (tests/nstore/test_ntriples.py): a change here is a change there.


class TermSyntaxError(DataeError, ValueError):
    """A term's text is not valid N-Triples / Turtle term syntax, or stands for no term the
    store holds (an RDF-star triple)."""


def _escape_string(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )


def term_to_ntriples(term: Any) -> str:
    """A term, or a stored value (``"x"``, ``7``: :func:`to_rdf`), in N-Triples syntax
    (``<iri>``, ``_:b``, ``"x"@en``, ``"1"^^<...>``).

    >>> term_to_ntriples(Literal('say "hi"\\n', lang="en"))
    '"say \\\\"hi\\\\"\\\\n"@en'
    >>> term_to_ntriples(7)
    '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'
    """
    kind = type(term)
    if kind is IRI:
        return f"<{term.value}>"
    if kind is str:  # a plain literal as stored: most objects
        return f'"{_escape_string(term)}"'
    if kind is BNode:
        return f"_:{term.id}"
    if kind is Literal:
        text = f'"{_escape_string(term.lexical)}"'
        if term.lang:
            return f"{text}@{term.lang}"
        if term.datatype is not None:
            return f"{text}^^<{term.datatype.value}>"
        return text
    if term is None:
        raise TypeError("not an RDF term: None")
    return term_to_ntriples(to_rdf(term))


def quad_line(subject: Any, predicate: Any, object: Any, graph: Any = None) -> str:
    """One N-Quads line of terms or stored values (an N-Triples line when ``graph`` is
    None, the default graph).

    >>> quad_line(IRI("urn:s"), IRI("urn:p"), 1, IRI("urn:g"))
    '<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> <urn:g> .\\n'
    """
    terms = f"{term_to_ntriples(subject)} {term_to_ntriples(predicate)} {term_to_ntriples(object)}"
    return f"{terms} {term_to_ntriples(graph)} .\n" if graph is not None else f"{terms} .\n"


def format_term(value: Any) -> str:
    """A stored value in N-Triples syntax ('' for the default graph).

    >>> format_term(42), format_term("a"), format_term(None)
    ('"42"^^<http://www.w3.org/2001/XMLSchema#integer>', '"a"', '')
    """
    return "" if value is None else term_to_ntriples(value)


_BARE_IRI = r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*$"
# One term as term_to_ntriples writes it: <IRI> (group 1), _:label (2), or "lexical form"
# (3) with a language tag (4) or a datatype IRI (5). Kept as text, compiled by re's cache:
# the command line and the rare literal in a node column parse a few terms, not files.
_NT_IRI = r'<([^<>"{}|^`\\\x00-\x20]*)>'
_NT_TERM = (_NT_IRI + r'|_:([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)'
            r'|"((?:[^"\\\n\r]|\\[tbnrf"\'\\])*)"(?:@([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)|\^\^' + _NT_IRI + ")?")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _ntriples_term(text: str) -> IRI | BNode | Literal | None:
    """The term ``text`` is in the N-Triples syntax :func:`term_to_ntriples` writes, if it
    is one and may enter the store (:func:`is_valid_term`), else None."""
    match = re.fullmatch(_NT_TERM, text)
    if match is None:
        return None
    iri, label, lexical, lang, datatype = match.groups()
    if iri is not None:
        term: IRI | BNode | Literal = IRI(iri)
    elif label is not None:
        return BNode(label)
    else:
        if "\\" in lexical:
            lexical = re.sub(r"\\(.)", lambda escape: _ECHAR[escape.group(1)], lexical)
        term = Literal(lexical, datatype, lang)
    return term if is_valid_term(term) else None


def parse_term(text: str, what: str = "term") -> Any:
    """The stored value of one term in N-Triples syntax, as :func:`term_to_ntriples` writes
    it and the store holds it; else in Turtle syntax as pyoxigraph reads it (``42``,
    ``true``, ``'single quotes'``; a bare absolute IRI is taken as ``<IRI>``).
    :class:`TermSyntaxError` names ``what`` the text was meant to be.

    >>> parse_term("<https://schema.org/name>", "predicate")
    IRI('https://schema.org/name')
    >>> parse_term("https://schema.org/name", "predicate")
    IRI('https://schema.org/name')
    >>> parse_term('"chat"@fr', "object"), parse_term("42", "object"), parse_term("_:b0")
    (Literal('chat', lang='fr'), 42, BNode('b0'))
    """
    text = text.strip()
    if re.match(_BARE_IRI, text) and not text.startswith("_:"):
        text = f"<{text}>"
    term = _ntriples_term(text)
    if term is not None:
        return canonical(term)
    ox = _ox or _pyoxigraph()
    try:
        (quad,) = list(ox.parse(f"<urn:datae:s> <urn:datae:p> {text} .".encode(), ox.RdfFormat.TURTLE))
    except (SyntaxError, ValueError) as exc:
        raise TermSyntaxError(f"invalid {what} {text!r}: {exc}") from None
    return from_oxigraph(quad.object)


# -- pyoxigraph terms: for files in other syntaxes, and for tests against Oxigraph ---------------

_ox: Any = None  # pyoxigraph once a function here needed it: ``import nstore`` does not load it


def _pyoxigraph() -> Any:
    global _ox
    import pyoxigraph  # here, not at the top: most uses of nstore never convert a term

    _ox = pyoxigraph
    return pyoxigraph


def from_oxigraph(term: Any) -> Any:
    """The stored value of a pyoxigraph term (a literal a Python value stands for exactly
    becomes that value; the default graph becomes None).

    >>> import pyoxigraph as ox
    >>> from_oxigraph(ox.Literal("5", datatype=ox.NamedNode(XSD + "integer"))), from_oxigraph(ox.DefaultGraph())
    (5, None)
    """
    ox = _ox or _pyoxigraph()

    kind = type(term)
    if kind is ox.NamedNode:
        return IRI(term.value)
    if kind is ox.Literal:
        language = term.language
        if language:
            return Literal(term.value, lang=language)
        return canonical(Literal(term.value, term.datatype.value))
    if kind is ox.BlankNode:
        return BNode(term.value)
    if kind is ox.DefaultGraph:
        return None
    raise TermSyntaxError(f"datae stores IRIs, literals and blank nodes, not {kind.__name__} ({term})")


def oxigraph_converter(memo: int = 1 << 18) -> Converter:
    """:func:`from_oxigraph` for a file's quads, in C, a batch at a time: an IRI met again
    is the same object (up to ``memo`` distinct ones remembered), plain strings,
    language-tagged literals and canonical integers are made without a Python call, other
    literals go through :func:`from_oxigraph`.

    >>> import pyoxigraph as ox
    >>> quads = iter(ox.parse(b'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .', ox.RdfFormat.N_TRIPLES))
    >>> oxigraph_converter().batch(quads, 1000, True, None)
    [(None, IRI('urn:s'), IRI('urn:p'), 1)]
    """
    return Converter(_ox or _pyoxigraph(), (IRI, BNode, Literal), from_oxigraph, memo)


# Datatypes pyoxigraph's parsers refuse on a literal without a language tag (and direction).
_TAGGED_ONLY = frozenset({RDF_NS + "langString", RDF_NS + "dirLangString"})


def line_reader(stream: Any, dataset: bool, keep_graphs: bool, graph: Any,
                fallback: Callable[[bytes, int], list], memo: int = 1 << 18) -> LineReader:
    """The quads of an N-Quads (``dataset``) or N-Triples binary ``stream``, read in C a
    batch at a time (``.batch(size)``): what pyoxigraph's parser and
    :func:`oxigraph_converter` would give, for a fraction of the time. Each distinct IRI
    (but those of a plain form every RFC 3987 parser takes, checked in C), language tag
    and typed literal is checked once with pyoxigraph's own constructors; a line of
    another form (an escape in an IRI, a comment, an error...) is handed to
    ``fallback(line, line_number)``, which parses it with pyoxigraph. Each quad is in
    ``graph`` unless ``keep_graphs``.

    >>> import io
    >>> reader = line_reader(io.BytesIO(b'<urn:s> <urn:p> "chat"@FR <urn:g> .\\n'), True, True, None, None)
    >>> reader.batch(100), reader.batch(100)
    ([(IRI('urn:g'), IRI('urn:s'), IRI('urn:p'), Literal('chat', lang='fr'))], [])
    """
    ox = _ox or _pyoxigraph()

    def iri(text: str) -> IRI | None:
        try:
            ox.NamedNode(text)  # pyoxigraph's parser checks an IRI with the same code
        except ValueError:
            return None
        return IRI(text)

    def lang(tag: str) -> str | None:
        try:
            ox.Literal("", language=tag)
        except ValueError:  # refused, or a tag with a direction (en--ltr): the fallback reads it
            return None
        return tag.lower()

    def typed(lexical: str, datatype: IRI) -> Any:
        if datatype.value in _TAGGED_ONLY:
            return None
        return from_oxigraph(ox.Literal(lexical, datatype=ox.NamedNode(datatype.value)))

    return LineReader(stream, dataset, keep_graphs, graph, (iri, BNode, lang, typed), (IRI, Literal), fallback, memo)


def to_oxigraph(value: Any) -> Any:
    """The pyoxigraph term of a stored value or term (None: the default graph).

    >>> to_oxigraph(Literal("chat", lang="fr"))
    <Literal value=chat language=fr>
    >>> to_rdf(from_oxigraph(to_oxigraph(Literal("05", XSD_INTEGER))))
    Literal('05', datatype='http://www.w3.org/2001/XMLSchema#integer')
    """
    ox = _ox or _pyoxigraph()

    term = to_rdf(value)
    if term is None:
        return ox.DefaultGraph()
    if type(term) is IRI:
        return ox.NamedNode(term.value)
    if type(term) is BNode:
        return ox.BlankNode(term.id)
    if term.lang is not None:
        return ox.Literal(term.lexical, language=term.lang)
    if term.datatype is not None:
        return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype.value))
    return ox.Literal(term.lexical)
