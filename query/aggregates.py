"""Aggregate accumulators: COUNT, SUM, MIN, MAX, AVG, SAMPLE, GROUP_CONCAT (SPARQL 1.1, 18.5).

One accumulator per group and aggregate; ``add`` takes each solution's value (or
:data:`ERROR` when the expression failed) and ``result`` gives the aggregate, raising
:class:`~query.errors.EvalError` when it has none (the variable then stays unbound).

COUNT skips errors and unbound values; SUM and AVG become errors if any value is not a
number; MIN and MAX use the ORDER BY order and skip errors; GROUP_CONCAT joins the lexical
forms of literals.

>>> from query.algebra import Aggregate, Var
>>> acc = new_accumulator(Aggregate("SUM", Var("x")))
>>> for n in ("1", "2"): acc.add(Literal(n, XSD_INTEGER))
>>> acc.result()
Literal('3', datatype='http://www.w3.org/2001/XMLSchema#integer')
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from decimal import Decimal
from typing import Any

from .algebra import Aggregate
from .errors import EvalError, IntermediateTooLargeError, ValueTooLongError, make_numeric, numeric
from .expressions import arithmetic, order_key
from .limits import TAKE_EVERY, VALUE_OVERHEAD, Memory, row_size, value_size
from nstore.terms import DEC, FLT, INT, XSD_INTEGER, Literal, to_float32

__all__ = ["new_accumulator", "ERROR", "Accumulator", "Budget"]

ERROR = object()
_ZERO = Literal("0", XSD_INTEGER)


class Budget:
    """The values the accumulators of one GROUP BY may keep between them (DISTINCT's
    sets, GROUP_CONCAT's parts): the groups are capped by ``max_held_rows``, but one group
    can keep a value per solution, so these count against the same cap (``limit``; None:
    any), and their bytes against the query's ``memory`` (a :class:`query.limits.Memory`;
    ``held`` is what they took, which GROUP BY gives back when done). The one value MIN,
    MAX or SAMPLE keeps per group counts its bytes only (:meth:`change`).

    >>> from query.algebra import Var
    >>> acc = new_accumulator(Aggregate("COUNT", Var("x"), distinct=True), Budget(2))
    >>> for n in ("1", "2", "2", "3"): acc.add(Literal(n, XSD_INTEGER))
    Traceback (most recent call last):
    ...
    query.errors.IntermediateTooLargeError: COUNT(DISTINCT) holds more than 2 rows (the limit on rows held in memory); narrow the query or raise the limit (max_held_rows, --max-held-rows)
    """

    __slots__ = ("left", "limit", "memory", "held", "pending", "max_length")

    def __init__(self, limit: int | None, memory: Memory | None = None) -> None:
        self.limit = limit
        self.left = limit if limit is not None else sys.maxsize
        self.memory = memory
        self.held = 0  # taken from memory
        self.pending = 0  # counted, taken TAKE_EVERY bytes at a time (and by settle)
        length = memory.max_value_length if memory is not None else None
        self.max_length = length if length is not None else sys.maxsize

    def take(self, operator: str, size: int = 0) -> None:
        """Account for one more value kept, of ``size`` bytes (an error past either cap)."""
        self.left -= 1
        if self.left < 0:
            raise IntermediateTooLargeError(operator, self.limit)
        self.change(operator, size)

    def change(self, operator: str, size: int) -> None:
        """Account for ``size`` more bytes (or fewer, when negative) in the value an
        accumulator keeps in place of another: MIN, MAX and SAMPLE keep one value per group
        (the group is the row counted), of any length up to ``max_value_length``."""
        self.pending += size
        if self.pending >= TAKE_EVERY:
            self.settle(operator)

    def settle(self, operator: str) -> None:
        """Take what was counted from the query's memory (when GROUP BY's input ends)."""
        pending, self.pending = self.pending, 0
        if self.memory is not None:
            self.held += pending
            self.memory.take(pending, operator)


class Accumulator(ABC):
    """Base: DISTINCT filtering; subclasses implement ``_add`` and ``result``. The values
    a DISTINCT set keeps count against ``budget`` (None: no cap)."""

    __slots__ = ("seen", "budget", "name")

    def __init__(self, distinct: bool) -> None:
        self.seen: set | None = set() if distinct else None
        self.budget: Budget | None = None  # set by new_accumulator
        self.name = ""

    def add(self, value: Any) -> None:
        if self.seen is not None:
            if value in self.seen:
                return
            budget = self.budget
            if budget is not None:
                size = 0
                if budget.memory is not None:  # COUNT(DISTINCT *) keeps solutions
                    size = row_size(dict(value)) if type(value) is frozenset else value_size(value)
                budget.take(f"{self.name}(DISTINCT)", size)
            self.seen.add(value)
        self._add(value)

    @abstractmethod
    def _add(self, value: Any) -> None:
        """Take one value of the group."""

    @abstractmethod
    def result(self) -> Any:
        """The aggregate of the values taken."""


class _Count(Accumulator):
    __slots__ = ("n",)

    def __init__(self, distinct: bool) -> None:
        super().__init__(distinct)
        self.n = 0

    def add(self, value: Any) -> None:
        if value is ERROR or value is None:
            return
        if self.seen is None:
            self.n += 1  # _add, without the calls (COUNT runs once per solution)
        else:
            super().add(value)

    def _add(self, value: Any) -> None:
        self.n += 1

    def result(self) -> Literal:
        return Literal(str(self.n), XSD_INTEGER)


class _Sum(Accumulator):
    """SUM with SPARQL's type promotion, accumulated as a native number (no literal per
    value); the same steps as ``arithmetic("+", total, value)``, float rounding included."""

    __slots__ = ("kind", "value", "n", "failed")

    def __init__(self, distinct: bool) -> None:
        super().__init__(distinct)
        self.kind = INT
        self.value: Any = 0
        self.n = 0
        self.failed = False

    def add(self, value: Any) -> None:
        if value is ERROR or value is None:
            self.failed = True
            return
        if self.seen is None:
            self._add(value)
        else:
            super().add(value)

    def _add(self, value: Any) -> None:
        if self.failed:
            return
        try:
            kb, vb = numeric(value)
        except EvalError:
            self.failed = True
            return
        ka, va = self.kind, self.value
        kind = ka if ka > kb else kb
        try:
            if kind == INT:
                total = va + vb
            elif kind == DEC:
                total = (va if isinstance(va, Decimal) else Decimal(va)) + (vb if isinstance(vb, Decimal) else Decimal(vb))
                if not total.is_finite():
                    self.failed = True
                    return
            else:
                total = float(va) + float(vb)
                if kind == FLT:
                    total = to_float32(total)
        except (ArithmeticError, ValueError):  # decimal's Overflow too: the sum is an error
            self.failed = True
            return
        self.kind, self.value = kind, total
        self.n += 1

    @property
    def total(self) -> Literal:
        return make_numeric(self.kind, self.value)

    def result(self) -> Literal:
        if self.failed:
            raise EvalError()
        return self.total


class _Avg(_Sum):
    __slots__ = ()

    def result(self) -> Literal:
        if self.failed:
            raise EvalError()
        if self.n == 0:
            return _ZERO
        return arithmetic("/", self.total, Literal(str(self.n), XSD_INTEGER))


class _Extreme(Accumulator):
    __slots__ = ("best", "best_key", "sign")

    def __init__(self, distinct: bool, sign: int) -> None:
        super().__init__(distinct)
        self.best: Any = None
        self.best_key: Any = None
        self.sign = sign

    def add(self, value: Any) -> None:
        if value is ERROR or value is None:
            return
        super().add(value)

    def _add(self, value: Any) -> None:
        key = order_key(value)
        best = self.best
        if best is None or (key < self.best_key if self.sign < 0 else key > self.best_key):
            budget = self.budget
            if budget is not None and budget.memory is not None:  # the kept value's bytes: the new in, the old out
                budget.change(self.name, value_size(value) - (0 if best is None else value_size(best)))
            self.best, self.best_key = value, key

    def result(self) -> Any:
        if self.best is None:
            raise EvalError()
        return self.best


class _Sample(Accumulator):
    __slots__ = ("value",)

    def __init__(self, distinct: bool) -> None:
        super().__init__(False)  # DISTINCT does not change which value is a sample
        self.value: Any = None

    def _add(self, value: Any) -> None:
        if self.value is None and value is not ERROR and value is not None:
            budget = self.budget
            if budget is not None and budget.memory is not None:
                budget.change(self.name, value_size(value))
            self.value = value

    def result(self) -> Any:
        if self.value is None:
            raise EvalError()
        return self.value


class _GroupConcat(Accumulator):
    __slots__ = ("parts", "langs", "separator", "failed", "length")

    def __init__(self, distinct: bool, separator: str) -> None:
        super().__init__(distinct)
        self.parts: list[str] = []
        self.langs: set = set()
        self.separator = separator
        self.failed = False
        self.length = -len(separator)  # of the result: the parts and the separators between them

    def add(self, value: Any) -> None:
        if value is ERROR or value is None:
            return
        super().add(value)

    def _add(self, value: Any) -> None:
        if type(value) is not Literal:
            self.failed = True
            return
        budget = self.budget
        if budget is not None:
            length = len(value.lexical)
            self.length += len(self.separator) + length
            if self.length > budget.max_length:
                raise ValueTooLongError("GROUP_CONCAT", self.length, budget.max_length)
            if self.seen is None:  # with DISTINCT the set counts
                size = VALUE_OVERHEAD + length
                lang = value.lang
                if lang is not None and lang not in self.langs:  # kept once, in langs
                    size += len(lang)
                budget.take("GROUP_CONCAT", size)
        self.parts.append(value.lexical)
        self.langs.add(value.lang)

    def result(self) -> Literal:
        if self.failed:
            raise EvalError()
        text = self.separator.join(self.parts)
        if len(self.langs) == 1:
            lang = next(iter(self.langs))
            if lang:
                return Literal(text, lang=lang)
        return Literal(text)


def new_accumulator(aggregate: Aggregate, budget: Budget | None = None) -> Accumulator:
    """A fresh accumulator for one group (the values it keeps count against ``budget``)."""
    accumulator = _new(aggregate)
    accumulator.budget = budget
    accumulator.name = aggregate.name
    return accumulator


def _new(aggregate: Aggregate) -> Accumulator:
    name = aggregate.name
    distinct = aggregate.distinct
    if name == "COUNT":
        return _Count(distinct)
    if name == "SUM":
        return _Sum(distinct)
    if name == "AVG":
        return _Avg(distinct)
    if name == "MIN":
        return _Extreme(distinct, -1)
    if name == "MAX":
        return _Extreme(distinct, 1)
    if name == "SAMPLE":
        return _Sample(distinct)
    if name == "GROUP_CONCAT":
        return _GroupConcat(distinct, aggregate.separator)
    raise ValueError(f"unknown aggregate {name}")
