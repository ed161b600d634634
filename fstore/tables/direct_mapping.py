"""A table as RDF: the W3C Direct Mapping (https://www.w3.org/TR/rdb-direct-mapping/).

This module owns the IRI scheme and the literal of every column type; it only converts
(SPARQL reads tables through it, see :mod:`fstore.tables.sparql_graphs`). With the base IRI
``urn:datae:dataset:`` and a table ``NAME`` (percent-encoded as :func:`.mapping.dataset_graph`
does, ``/`` kept since dataset names are paths):

==========================  ==============================================================
table IRI (rdf:type class)  ``<urn:datae:dataset:NAME>``, the same IRI as the table's graph
row IRI                     ``<urn:datae:dataset:NAME/ID=7>``; a compound key:
                            ``<urn:datae:dataset:NAME/a=1;b=x>`` (key columns in key order)
column predicate            ``<urn:datae:dataset:NAME#COLUMN>``
==========================  ==============================================================

Column names and key values in IRIs are percent-encoded as the Direct Mapping says (every
character but ``A-Z a-z 0-9 - . _ ~`` and non-ASCII letters as ``%HH`` of its UTF-8 bytes);
a key value is written in the lexical form of its canonical literal. A row has the triple
``<row> rdf:type <table>`` and one triple per non-null cell; a null cell has none. Literals
by column type (:data:`DATATYPES`): ``integer`` xsd:integer, ``float`` xsd:double,
``numeric`` xsd:decimal, ``boolean`` xsd:boolean, ``text`` a plain (xsd:string) literal,
``date`` xsd:date, ``time`` xsd:time, ``timestamp`` xsd:dateTime (``Z`` for a UTC column),
``interval`` xsd:duration (weeks written as days), ``blob`` xsd:hexBinary (upper case, as
R2RML maps binary columns), ``geometry`` GeoSPARQL ``geo:wktLiteral`` (ISO WKT, prefixed
``<http://www.opengis.net/def/crs/EPSG/0/N>`` when the column's CRS is ``EPSG:N``), and
``json`` ``rdf:JSON`` (the JSON text with sorted keys and no spaces).

>>> from fstore.tables.schema import Schema
>>> s = Schema.from_dicts([
...     {"id": "a", "name": "ID", "dataType": "integer", "primaryKeyIndex": 0},
...     {"id": "b", "name": "fname", "dataType": "text"},
...     {"id": "c", "name": "born", "dataType": "date"}])
>>> m = DirectMapping("People", s)
>>> m.row_iri((7,))
IRI('urn:datae:dataset:People/ID=7')
>>> for t in m.triples((7,), [7, "Bob", "1990-02-01"]): print(*t)
<urn:datae:dataset:People/ID=7> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <urn:datae:dataset:People>
<urn:datae:dataset:People/ID=7> <urn:datae:dataset:People#ID> "7"^^<http://www.w3.org/2001/XMLSchema#integer>
<urn:datae:dataset:People/ID=7> <urn:datae:dataset:People#fname> "Bob"
<urn:datae:dataset:People/ID=7> <urn:datae:dataset:People#born> "1990-02-01"^^<http://www.w3.org/2001/XMLSchema#date>
>>> m.key_of(IRI("urn:datae:dataset:People/ID=7")), m.key_of(IRI("urn:datae:dataset:People/ID=07"))
((7,), None)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

from nstore.terms import RDF_NS, XSD, double_lexical, decimal_lexical

from nstore.terms import IRI, Literal
from .geometry import Geometry
from .mapping import GRAPH_PREFIX, dataset_graph
from .schema import Column, Schema
from .types import Interval

__all__ = [
    "BASE",
    "RDF_TYPE",
    "DATATYPES",
    "WKT_LITERAL",
    "RDF_JSON",
    "DirectMapping",
    "percent_encode",
    "cell_literal",
]

BASE = GRAPH_PREFIX
"""The base IRI of the Direct Mapping: a table's IRI is this followed by its name."""

RDF_TYPE = IRI(RDF_NS + "type")
WKT_LITERAL = IRI("http://www.opengis.net/ont/geosparql#wktLiteral")
RDF_JSON = IRI(RDF_NS + "JSON")
_EPSG = "http://www.opengis.net/def/crs/EPSG/0/"

DATATYPES: dict[str, IRI | None] = {
    "integer": IRI(XSD + "integer"),
    "float": IRI(XSD + "double"),
    "numeric": IRI(XSD + "decimal"),
    "boolean": IRI(XSD + "boolean"),
    "text": None,  # a plain literal: xsd:string
    "date": IRI(XSD + "date"),
    "time": IRI(XSD + "time"),
    "timestamp": IRI(XSD + "dateTime"),
    "interval": IRI(XSD + "duration"),
    "blob": IRI(XSD + "hexBinary"),
    "geometry": WKT_LITERAL,
    "json": RDF_JSON,
}
"""The datatype of each column type's literals (None: a plain string literal)."""

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _ucschar(code: int) -> bool:
    """RFC 3987's ucschar: the non-ASCII characters an IRI may hold unencoded."""
    if 0xA0 <= code <= 0xD7FF or 0xF900 <= code <= 0xFDCF or 0xFDF0 <= code <= 0xFFEF:
        return True
    return 0x10000 <= code <= 0xEFFFD and (code & 0xFFFF) <= 0xFFFD and not 0xE0000 <= code < 0xE1000


def percent_encode(text: str) -> str:
    """The Direct Mapping's percent-encoded form: every character but iunreserved ones
    (``A-Z a-z 0-9 - . _ ~`` and non-ASCII letters) as ``%HH`` of its UTF-8 bytes.

    >>> percent_encode("a b;c=ü/%")
    'a%20b%3Bc%3Dü%2F%25'
    """
    if all(c in _UNRESERVED for c in text):
        return text  # the common case: names and numbers
    out = []
    for c in text:
        if c in _UNRESERVED or _ucschar(ord(c)):
            out.append(c)
        else:
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
    return "".join(out)


# -------------------------------------------------------------------------------- literals


def _duration(stored: str) -> str:
    """xsd:duration has no weeks: ``P1W2D`` is written ``P9D``; seconds without trailing
    zeros."""
    i = Interval.parse(stored)
    date = "".join(f"{v}{u}" for v, u in ((i.years, "Y"), (i.months, "M"), (i.days + 7 * i.weeks, "D")) if v)
    secs = decimal_lexical(i.seconds).removesuffix(".0") if i.seconds else ""
    time = "".join(f"{v}{u}" for v, u in ((i.hours, "H"), (i.minutes, "M")) if v) + (f"{secs}S" if secs else "")
    if not date and not time:
        return "PT0S"
    return "P" + date + (f"T{time}" if time else "")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _lexical_function(col: Column) -> Callable[[Any], str]:
    """The function from a stored value of ``col`` to its canonical lexical form."""
    t = col.data_type
    if t == "integer":
        return str
    if t == "float":
        return lambda v: double_lexical(float(v))
    if t == "numeric":
        return lambda v: decimal_lexical(Decimal(v))
    if t == "boolean":
        return lambda v: "true" if v else "false"
    if t in ("text", "date", "time"):
        return str  # Kart stores these in their XSD lexical form already
    if t == "timestamp":
        if col.extra_type_info.get("timezone") == "UTC":
            return lambda v: v if v.endswith("Z") else v + "Z"
        return str
    if t == "interval":
        return _duration
    if t == "blob":
        return lambda v: bytes(v).hex().upper()
    if t == "geometry":
        crs = str(col.extra_type_info.get("geometryCRS") or "")
        prefix = f"<{_EPSG}{crs[5:]}> " if re.fullmatch(r"EPSG:\d+", crs) else ""
        return lambda v: prefix + Geometry(v).to_wkt()
    if t == "json":
        return _json
    raise ValueError(f"column {col.name!r}: no literal for dataType {t!r}")


def cell_literal(col: Column) -> Callable[[Any], Literal]:
    """The function from a stored (non-null) value of ``col`` to its RDF literal.

    >>> from fstore.tables.schema import Column
    >>> cell_literal(Column("n", "n", "numeric"))("1.50")
    Literal('1.5', datatype='http://www.w3.org/2001/XMLSchema#decimal')
    >>> cell_literal(Column("d", "d", "json"))({"b": 1, "a": [True]})
    Literal('{"a":[true],"b":1}', datatype='http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON')
    """
    lexical = _lexical_function(col)
    datatype = DATATYPES[col.data_type]
    return lambda v: Literal(lexical(v), datatype)


def _key_parser(col: Column) -> Callable[[str], Any] | None:
    """The stored key value of a canonical lexical form, for the key types whose stored
    value that form gives back exactly (a key lookup); None for the others (a numeric key
    ``1.50`` is stored as written, so ``1.5`` cannot find it: those rows are scanned)."""
    t = col.data_type
    if t == "integer":
        return lambda lex: int(lex) if re.fullmatch(r"-?[1-9][0-9]*|0", lex) else None
    if t in ("text", "date"):
        return lambda lex: lex
    if t == "boolean":
        return {"true": True, "false": False}.get
    return None


class DirectMapping:
    """The Direct Mapping of one table: its IRIs, and a row's triples from its stored
    values (schema order). Built once per table and schema; every method is cheap."""

    def __init__(self, name: str, schema: Schema) -> None:
        self.name = name
        self.schema = schema
        self.table = dataset_graph(name)
        prefix = self.table.value
        self.row_prefix = prefix + "/"
        self.columns = list(schema.columns)
        self.predicates = [IRI(prefix + "#" + percent_encode(c.name)) for c in self.columns]
        self.by_predicate = {p: i for i, p in enumerate(self.predicates)}
        self.literals = [cell_literal(c) for c in self.columns]
        self.key_columns = list(schema.pk_columns)
        self.key_positions = [self.columns.index(c) for c in self.key_columns]
        names = [percent_encode(c.name) + "=" for c in self.key_columns]
        lexicals = [_lexical_function(c) for c in self.key_columns]
        if len(names) == 1 and self.key_columns[0].data_type == "integer":
            head = self.row_prefix + names[0]
            self._row = lambda key: IRI(head + str(key[0]))  # the common key, fast
        else:
            parts = list(zip(names, lexicals))
            row_prefix = self.row_prefix
            self._row = lambda key: IRI(row_prefix + ";".join(n + percent_encode(f(v)) for (n, f), v in zip(parts, key)))
        self._names = names
        self._parsers = [_key_parser(c) for c in self.key_columns]

    def row_iri(self, key: Sequence[Any]) -> IRI:
        """The IRI of the row whose stored key values are ``key``."""
        return self._row(key)

    def key_of(self, iri: Any) -> tuple[Any, ...] | None:
        """The stored key of a row IRI of this table, None if ``iri`` is none. A well-formed
        row IRI whose key type cannot be parsed back gives ``()``: compare by scanning."""
        if type(iri) is not IRI or not iri.value.startswith(self.row_prefix):
            return None
        rest = iri.value[len(self.row_prefix):]
        parts = rest.split(";")
        if "/" in rest or "#" in rest or len(parts) != len(self._names):
            return None
        key = []
        for part, name, parse in zip(parts, self._names, self._parsers):
            if not part.startswith(name):
                return None
            if parse is None:
                return ()
            value = parse(unquote(part[len(name):]))
            if value is None:
                return None
            key.append(value)
        key_tuple = tuple(key)
        return key_tuple if self._row(key_tuple) == iri else None  # only the canonical IRI

    def key_of_cell(self, term: Any) -> tuple[Any, ...] | None:
        """For a one-column key: the stored key whose key cell is the literal ``term``;
        None if no row can have it, ``()`` if the key type cannot be parsed back (scan)."""
        if len(self.key_columns) != 1 or type(term) is not Literal:
            return None
        parse = self._parsers[0]
        if parse is None:
            return ()
        value = parse(term.lexical)
        if value is None:
            return None
        return (value,) if self.literals[self.key_positions[0]](value) == term else None

    def triples(self, key: Sequence[Any], values: Sequence[Any]) -> Iterator[tuple[IRI, IRI, Any]]:
        """The triples of one row: its type, then one per non-null cell in schema order."""
        row = self._row(key)
        yield row, RDF_TYPE, self.table
        for predicate, literal, value in zip(self.predicates, self.literals, values):
            if value is not None:
                yield row, predicate, literal(value)

