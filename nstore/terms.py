"""RDF terms that datae stores as first-class values: IRIs, literals and blank nodes.

They are plain immutable values (not ``str`` subclasses), so ``IRI("x") != "x"`` and a
set of tuples never confuses an IRI with a string of the same text.

>>> IRI("http://example.org/a")
IRI('http://example.org/a')
>>> Literal("chat", lang="FR")
Literal('chat', lang='fr')
>>> Literal("a", datatype=XSD_STRING) == Literal("a")
True
"""

from __future__ import annotations

__all__ = ["IRI", "BNode", "Literal", "XSD_STRING", "RDF_LANGSTRING"]


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


XSD_STRING = IRI("http://www.w3.org/2001/XMLSchema#string")
RDF_LANGSTRING = IRI("http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")


class Literal:
    """An RDF literal: a lexical form with a datatype IRI or a language tag.

    As in RDF 1.1, ``xsd:string`` is the datatype of a literal without one, so it is
    stored as ``datatype=None``; a language-tagged literal has ``datatype=None`` and a
    lower-cased ``lang`` (tags compare case-insensitively).
    """

    __slots__ = ("lexical", "datatype", "lang", "_hash")
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
                raise ValueError(f"a literal has a language tag or a datatype, not both: {datatype!r}")
            lang = lang.lower()
            datatype = None
        elif datatype == XSD_STRING:
            datatype = None
        object.__setattr__(self, "lexical", lexical)
        object.__setattr__(self, "datatype", datatype)
        object.__setattr__(self, "lang", lang)
        object.__setattr__(self, "_hash", hash((lexical, datatype, lang)))

    def __setattr__(self, name, value):
        raise AttributeError("Literal is immutable")

    def _key(self) -> tuple[str, str, str]:
        return (self.lexical, self.datatype.value if self.datatype else "", self.lang or "")

    def __eq__(self, other: object) -> bool:
        return type(other) is Literal and other._key() == self._key()

    def __hash__(self) -> int:
        return self._hash

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
        escaped = (
            self.lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        )
        if self.lang is not None:
            return f'"{escaped}"@{self.lang}'
        if self.datatype is not None:
            return f'"{escaped}"^^{self.datatype}'
        return f'"{escaped}"'

    def __reduce__(self):
        return (_literal, self._key())


def _literal(lexical: str, datatype: str, lang: str) -> Literal:
    return Literal(lexical, datatype or None, lang or None)
