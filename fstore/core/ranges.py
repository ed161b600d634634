"""Ranges of object values that a read can scan instead of filtering every match.

A SPARQL comparison such as ``FILTER(?age >= 30 && ?age < 32)`` holds only for numbers, and
fstore stores a number as an int, a float or a Decimal when its literal is canonical, and as
a Literal otherwise (``"030"^^xsd:integer``, ``xsd:int``...). :class:`NumericRange` turns
the bounds into byte spans of the packed object: each of those types in order, plus every
Literal, so the span scan returns a superset of the matches that the comparison itself
still decides. It never drops a match, and it reads only the keys in range.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> age = fstore.IRI("urn:age")
>>> with repo.transaction("main", message="ages") as tx:
...     for who, years in [("ann", 31), ("bob", 45.5), ("cy", 52)]:
...         fstore.add(tx, None, fstore.IRI("urn:" + who), age, years)
>>> view = repo.at("main")
>>> [q[3].value for q in fstore.quads(view, None, fstore.Var("s"), age, fstore.Var("o"), within=NumericRange(40, 50))]
[45.5]
>>> repo.close()
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Union

from nstore.errors import PatternError
from nstore.dictionary import KIND_OF
from nstore.pack import TERMREF_CODE, BlobRef, type_span, value_span
from nstore.terms import Literal

__all__ = ["NumericRange", "Number"]

Number = Union[int, float, Decimal]
_LITERAL_REFS = (bytes([TERMREF_CODE + KIND_OF[Literal]]), bytes([TERMREF_CODE + KIND_OF[Literal] + 1]))


@dataclass(frozen=True)
class NumericRange:
    """The numbers from ``low`` to ``high`` (None: unbounded), each bound included or not."""

    low: Number | None = None
    high: Number | None = None
    include_low: bool = True
    include_high: bool = True

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            bound = getattr(self, name)
            if bound is not None and type(bound) not in (int, float, Decimal):
                raise PatternError(f"NumericRange {name} is a number (int, float or Decimal) or None, not {bound!r:.80}")

    def holds(self, packed: bytes) -> bool:
        """Whether a packed value lies in :meth:`spans` (what a span scan returns)."""
        spans = self.spans()
        return spans is None or any(start <= packed < end for start, end in spans)

    def spans(self) -> list[tuple[bytes, bytes]] | None:
        """Ascending packed-byte spans ``[start, end)`` that hold every stored value inside
        the range (and some outside it), or None when the bounds cannot be turned into
        spans (a float overflow): then every value must be read."""
        low, high = self.low, self.high
        if _is_nan(low) or _is_nan(high):
            return []  # every comparison with NaN is false
        try:
            # Literals: numbers in a non-canonical form, packed (0x42) or as the dictionary's
            # references to literals; BlobRefs: values too long for a key.
            spans = [self._ints(), self._floats(), self._decimals(), type_span(Literal), type_span(BlobRef), _LITERAL_REFS]
        except OverflowError:
            return None
        return sorted(span for span in spans if span is not None and span[0] < span[1])

    def _ints(self) -> tuple[bytes, bytes] | None:
        low = high = None
        if self.low is not None and not math.isinf(self.low):
            low = math.ceil(self.low) if self.include_low else math.floor(self.low) + 1
        elif self.low is not None and self.low > 0:
            return None  # low is +inf
        if self.high is not None and not math.isinf(self.high):
            high = math.floor(self.high) if self.include_high else math.ceil(self.high) - 1
        elif self.high is not None and self.high < 0:
            return None  # high is -inf
        if low is not None and high is not None and low > high:
            return None
        return type_span(int) if low is None and high is None else value_span(low, high)

    def _floats(self) -> tuple[bytes, bytes]:
        # Widened by one step each side: float(bound) may round inwards, and 0.0 == -0.0.
        low = None if self.low is None else math.nextafter(float(self.low), -math.inf)
        high = None if self.high is None else math.nextafter(float(self.high), math.inf)
        return type_span(float) if low is None and high is None else value_span(low, high)

    def _decimals(self) -> tuple[bytes, bytes] | None:
        if any(bound is not None and math.isinf(bound) for bound in (self.low, self.high)):
            return type_span(Decimal)  # rare: the float span is narrow enough
        low = None if self.low is None else Decimal(self.low)
        high = None if self.high is None else Decimal(self.high)
        return type_span(Decimal) if low is None and high is None else value_span(low, high)


def _is_nan(bound: Number | None) -> bool:
    return bound is not None and bound != bound
