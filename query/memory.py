"""An indexed in-memory source: what CHANGES and VERSIONS evaluate their patterns over.

:class:`IndexedSource` holds quads (stored fstore values or RDF terms; graph None is the
default graph) and answers a pattern with one dictionary lookup: for each set of bound
positions it builds, on first use, a hash index from their values to the quads. Values are
normalised the way a store's source (``fstore.query_source``) reads them (``42`` and
``"42"^^xsd:integer`` are one term), so a query gives the same answer over either source.

>>> from query.algebra import Var
>>> from nstore.terms import IRI
>>> src = IndexedSource([(None, IRI("urn:a"), IRI("urn:p"), 1), (None, IRI("urn:b"), IRI("urn:p"), 2)])
>>> [b["s"] for b in src.match((None, Var("s"), IRI("urn:p"), Var("o")))]
[IRI('urn:a'), IRI('urn:b')]
>>> src.count((None, Var("s"), Var("p"), 2)), len(src)
(1, 2)
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Iterable, Iterator

from nstore.terms import BNode, IRI, Literal, canonical, to_rdf

from .algebra import Var

__all__ = ["IndexedSource", "term_of"]


_TERM_TYPES = (IRI, Literal, BNode)
_TERM_CACHE: dict = {}


def _to_term(value: Any) -> Any:
    """The RDF term of a stored value (memoised: numbers and strings repeat a lot)."""
    kind = type(value)
    if kind in _TERM_TYPES or value is None:
        return value
    key = (kind, value)  # the type keeps 1, 1.0 and True apart
    term = _TERM_CACHE.get(key)
    if term is None:
        if len(_TERM_CACHE) > 1 << 16:
            _TERM_CACHE.clear()
        term = _TERM_CACHE[key] = to_rdf(value)
    return term


def term_of(value: Any) -> Any:
    """The RDF term of a stored value or of a query constant (canonical form)."""
    if value is None:
        return None
    return _to_term(canonical(value))


class IndexedSource:
    """Quads in memory, indexed per set of bound positions (see the module docstring)."""

    def __init__(self, quads: Iterable[tuple]) -> None:
        self.quads: list[tuple] = list(dict.fromkeys(tuple(term_of(v) for v in quad) for quad in quads))
        self._indices: dict[tuple, dict] = {}
        self._graphs: list | None = None

    def __len__(self) -> int:
        return len(self.quads)

    def _index(self, positions: tuple) -> dict:
        index = self._indices.get(positions)
        if index is None:
            index = {}
            for quad in self.quads:
                index.setdefault(tuple([quad[i] for i in positions]), []).append(quad)
            self._indices[positions] = index
        return index

    def _candidates(self, pattern: tuple) -> list:
        positions = tuple(i for i, item in enumerate(pattern) if type(item) is not Var)
        if not positions:
            return self.quads
        key = tuple([term_of(pattern[i]) for i in positions])
        return self._index(positions).get(key, [])

    def match(self, pattern: tuple) -> Iterator[dict]:
        slots = [(i, item.name) for i, item in enumerate(pattern) if type(item) is Var]
        repeated = len({name for _, name in slots}) != len(slots)
        for quad in self._candidates(pattern):
            binding: dict = {}
            if repeated:
                for i, name in slots:
                    value = quad[i]
                    if binding.setdefault(name, value) != value:
                        break
                else:
                    yield binding
            else:
                for i, name in slots:
                    binding[name] = quad[i]
                yield binding

    def count(self, pattern: tuple) -> int:
        return sum(1 for _ in self.match(pattern))

    def estimate(self, pattern: tuple, cap: int) -> int:
        return sum(1 for _ in islice(self.match(pattern), cap))

    def graphs(self) -> list:
        if self._graphs is None:
            self._graphs = [g for g in dict.fromkeys(q[0] for q in self.quads) if g is not None]
        return self._graphs
