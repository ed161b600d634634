"""Quads and patterns checked before the store reads or writes them: arity, each value in
canonical form, ``Var`` / ``Param`` where a pattern allows them (typed errors otherwise).

Every path into a view or transaction goes through these: ``fstore.api``'s functions,
``Repository``'s reads, the query adapter (``fstore.query_source``) and the tables. This
module imports neither the views, the transactions nor ``fstore.api``, so all of them can
import it.

>>> from fstore import IRI, Var
>>> prepare_pattern((None, Var("s"), IRI("urn:p"), 1.5))
(None, Var('s'), IRI('urn:p'), 1.5)
>>> prepare_quad((None, IRI("urn:a"), IRI("urn:p")))
Traceback (most recent call last):
...
nstore.errors.PatternError: a quad has 4 items (graph, subject, predicate, object), not 3: (None, IRI('urn:a'), IRI('urn:p'))
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from nstore import Var
from nstore.errors import PatternError
from nstore.store import Param
from nstore.terms import ALREADY_CANONICAL as _CANONICAL
from nstore.terms import IRI, check_quad_terms, check_value, first_unchecked

from .core.layout import Quad
from .core.ranges import NumericRange

__all__ = ["prepare_quad", "prepare_new_quad", "prepare_new_quads", "prepare_pattern", "check_within", "check_cap", "params_checked"]

_CANONICAL_OR_VAR = _CANONICAL | {Var}
_NAMES = ("graph", "subject", "predicate", "object")


def prepare_quad(values: Sequence[Any], what: str = "quad") -> Quad:
    """Check a quad's arity and put each value in canonical form (typed errors otherwise).

    >>> prepare_quad((None, IRI("urn:a"), IRI("urn:p"), 2))
    (None, IRI('urn:a'), IRI('urn:p'), 2)
    """
    if len(values) != 4:
        raise PatternError(f"a {what} has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    g, s, p, o = values
    if type(g) in _CANONICAL and type(s) in _CANONICAL and type(p) in _CANONICAL and type(o) in _CANONICAL:
        return (g, s, p, o)  # the common case, without a call per value
    return tuple(check_value(v, f"{what} {name}") for v, name in zip(values, _NAMES))  # type: ignore[return-value]


def prepare_new_quad(values: Sequence[Any], what: str = "quad") -> Quad:
    """A quad to add: :func:`prepare_quad`, then each item checked as a term
    (``nstore.terms.check_quad_terms``: ``InvalidTermError`` naming the bad one).

    >>> prepare_new_quad((None, IRI("urn:a"), IRI("urn:p"), "x"))
    (None, IRI('urn:a'), IRI('urn:p'), 'x')
    """
    return check_quad_terms(prepare_quad(values, what), what)


def prepare_new_quads(quads: list[Any], what: str = "quad") -> list[Quad]:
    """:func:`prepare_new_quad` of each quad of a batch: one C loop passes the quads that
    are canonical and valid already (:func:`nstore.terms.first_unchecked`), the others go
    through :func:`prepare_new_quad` (which canonicalises them or names what is wrong).

    >>> prepare_new_quads([(None, IRI("urn:a"), IRI("urn:p"), 1), [None, IRI("urn:a"), IRI("urn:p"), 2]])
    [(None, IRI('urn:a'), IRI('urn:p'), 1), (None, IRI('urn:a'), IRI('urn:p'), 2)]
    """
    prepared = list(quads)  # first_unchecked puts literals in canonical form in place
    start, end = 0, len(prepared)
    while (start := first_unchecked(prepared, start)) < end:
        prepared[start] = prepare_new_quad(prepared[start], what)
        start += 1
    return prepared


def prepare_pattern(values: Sequence[Any], params: bool = False) -> tuple:
    """Like :func:`prepare_quad`, letting any position be a ``Var`` (or a ``Param`` if
    ``params``: a pattern for ``fstore.prepare``).

    >>> prepare_pattern((None, Param(), IRI("urn:p"), Var("o")), params=True)
    (None, Param(), IRI('urn:p'), Var('o'))
    """
    if len(values) != 4:
        raise PatternError(f"a pattern has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    for value in values:
        if type(value) not in _CANONICAL_OR_VAR:
            break
    else:
        return tuple(values)  # the common case, without a call per value
    if not params and any(type(v) is Param for v in values):
        raise PatternError(f"Param() marks a value given later, in a pattern for fstore.prepare; this read takes values or Var: {tuple(values)!r:.200}")
    return tuple(v if type(v) in (Var, Param) else check_value(v, f"pattern {name}") for v, name in zip(values, _NAMES))


def check_within(pattern: Sequence[Any], within: NumericRange | None) -> None:
    """Refuse a numeric range ``within`` for a read whose object is not a ``Var`` (the
    range restricts the object).

    >>> check_within((None, Var("s"), IRI("urn:p"), 3), NumericRange(0, 5))
    Traceback (most recent call last):
    ...
    nstore.errors.PatternError: within= restricts the object, so the object must be a Var, not 3
    """
    if within is not None and type(pattern[3]) is not Var:
        raise PatternError(f"within= restricts the object, so the object must be a Var, not {pattern[3]!r:.80}")


def check_cap(cap: int) -> None:
    """Refuse a negative ``cap`` for an estimate (``min(count, cap)``).

    >>> check_cap(-1)
    Traceback (most recent call last):
    ...
    ValueError: cap must be >= 0, not -1
    """
    if cap < 0:
        raise ValueError(f"cap must be >= 0, not {cap}")


def params_checked(read: Callable[..., Iterator[Quad]]) -> Callable[..., Iterator[Quad]]:
    """``read`` (a view's or transaction's ``_prepare``) with the values of its params
    put in canonical form first (``PackError`` naming a bad one): what ``fstore.prepare``
    returns, and what the query adapter's prepared reads call.

    >>> read = params_checked(lambda *values: iter([values]))
    >>> list(read(IRI("urn:a"), 1.0))
    [(IRI('urn:a'), 1.0)]
    """

    def checked(*values: Any) -> Iterator[Quad]:
        for value in values:
            if type(value) not in _CANONICAL:
                return read(*[check_value(v, "param") for v in values])
        return read(*values)

    return checked
