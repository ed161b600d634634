"""Numeric ranges a BGP step's filters put on its object variable, for range scans.

A filter placed after a step, such as ``?age >= 30`` or ``40 > ?age``, compares the step's
object with a numeric constant. The conjunction of such filters is a
:class:`fstore.NumericRange` the source may scan instead of reading every object: the
filters still run on what it returns, so the range only has to hold every solution they
keep (see :mod:`fstore.core.ranges`).

>>> from nstore.terms import Literal, XSD_INTEGER
>>> age, thirty, n32 = Var("age"), Literal("30", XSD_INTEGER), Literal("32", XSD_INTEGER)
>>> conjuncts = [Op(">=", (age, thirty)), Op(">", (n32, age))]  # ?age >= 30 && 32 > ?age
>>> object_range(Triple(Var("s"), IRI("http://ex/age"), age), conjuncts)
NumericRange(low=30, high=32, include_low=True, include_high=False)
"""

from __future__ import annotations

from typing import Any, Iterable

from fstore import NumericRange

from .algebra import Op, Triple, Var
from nstore.terms import IRI  # noqa: F401 - IRI is used by the doctest
from .errors import EvalError, numeric

__all__ = ["object_range"]

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def object_range(triple: Triple, filters: Iterable[Any]) -> NumericRange | None:
    """The range the comparisons among ``filters`` (conjuncts) put on the triple's object
    variable, or None if they put none (or the object is not a variable of its own)."""
    o = triple.o
    if type(o) is not Var or o in (triple.s, triple.p):
        return None
    low = high = None
    include_low = include_high = True
    for expr in filters:
        bound = _comparison(expr, o)
        if bound is None:
            continue
        op, value = bound
        if op in (">", ">=", "=") and (low is None or value > low or (value == low and op == ">")):
            low, include_low = value, op != ">"
        if op in ("<", "<=", "=") and (high is None or value < high or (value == high and op == "<")):
            high, include_high = value, op != "<"
    if low is None and high is None:
        return None
    return NumericRange(low, high, include_low, include_high)


def _comparison(expr: Any, var: Var) -> tuple[str, Any] | None:
    """``(op, number)`` if ``expr`` is ``var op number`` (or ``number op var``)."""
    if type(expr) is not Op or expr.op not in _FLIPPED or len(expr.args) != 2:
        return None
    left, right = expr.args
    if left == var and type(right) is not Var:
        op, constant = expr.op, right
    elif right == var and type(left) is not Var:
        op, constant = _FLIPPED[expr.op], left
    else:
        return None
    try:
        _, value = numeric(constant)
    except EvalError:
        return None
    return op, value
