"""SPARQL operator semantics and expression compilation.

An expression compiles to a Python closure ``f(solution) -> term`` that raises
:class:`~query.errors.EvalError` for a SPARQL error (unbound variable, type error...).
What this module implements, after SPARQL 1.1 section 17:

* effective boolean value (:func:`query.functions.ebv`, which IF needs too);
* ``||`` and ``&&`` with the three-valued truth tables (``true || error`` is true,
  ``false && error`` is false, otherwise an error propagates);
* ``=`` as value equality for numbers, strings, booleans and dateTimes, term equality
  otherwise; ``=`` on two different literals of unknown datatypes is an error;
* numeric promotion integer < decimal < float < double, integer division giving a decimal;
* the total order of ORDER BY (:func:`order_key`): unbound < blank nodes < IRIs < literals.

>>> from query.algebra import Op, Var
>>> from nstore.terms import XSD_INTEGER, XSD_DECIMAL, XSD_DOUBLE
>>> f = compile_expr(Op(">", (Var("x"), Literal("2", XSD_INTEGER))), ExprContext())
>>> f({"x": Literal("2.5", XSD_DECIMAL)})
Literal('true', datatype='http://www.w3.org/2001/XMLSchema#boolean')
>>> filter_passes(f, {})          # ?x unbound: an error, so the FILTER rejects the row
False
>>> equal(Literal("1", XSD_INTEGER), Literal("1.0", XSD_DOUBLE))
True
"""

from __future__ import annotations

import operator as _operator

import datetime as _dt
import math
import uuid
from decimal import Decimal
from typing import Any, Callable

from nstore.terms import (
    BNode,
    DEC,
    FALSE,
    FLT,
    INT,
    IRI,
    Literal,
    NUMERIC_TYPES,
    TRUE,
    XSD_BOOLEAN,
    XSD_DATE,
    XSD_DATETIME,
    boolean,
    parse_boolean,
    to_float32,
)

from .algebra import Aggregate, Call, Exists, FunctionCall, Op, Var
from .errors import EvalError, QueryEvaluationError, make_numeric, numeric
from .functions import compile_call, compile_function, datetime_key, ebv

__all__ = [
    "ExprContext",
    "compile_expr",
    "filter_passes",
    "equal",
    "compare",
    "order_key",
    "arithmetic",
    "literal_kind",
    "EvalError",
]

Solution = dict
Compiled = Callable[[Solution], Any]

# Literal kinds for comparison: value spaces SPARQL knows how to compare.
K_NUMERIC, K_STRING, K_LANG, K_BOOLEAN, K_DATETIME, K_DATE, K_OTHER = range(7)


class ExprContext:
    """What expressions need from their query: base IRI, the query's NOW, a hook to
    evaluate EXISTS, and per-row blank-node scopes for ``BNODE(str)``."""

    def __init__(self, *, base: str | None = None, exists: Callable | None = None) -> None:
        self.base = base
        self.exists = exists
        self.reset()
        self.exists = exists

    def reset(self) -> None:
        """Start another run of the same query (a kept plan's, see :mod:`query.plan_cache`):
        a new NOW, new blank-node scopes, and no deadline, memory budget or EXISTS hook
        until the run sets its own."""
        self.exists = None
        now = _dt.datetime.now(_dt.timezone.utc)
        self.now = Literal(now.isoformat().replace("+00:00", "Z"), XSD_DATETIME)
        self.bnode_row = 0
        self.bnode_scope: dict[str, BNode] = {}
        self.bnode_counter = 0
        self.bnode_prefix = "e" + uuid.uuid4().hex[:8]
        self.deadline: Any = None  # a query.limits.Deadline: REGEX and REPLACE stop at it
        self.memory: Any = None  # a query.limits.Memory: the longest value CONCAT & co may make

    def new_row(self) -> None:
        """Start a new solution: ``BNODE("x")`` gives a new blank node from here on."""
        self.bnode_row += 1
        self.bnode_scope = {}

    def fresh_bnode(self) -> BNode:
        self.bnode_counter += 1
        return BNode(f"{self.bnode_prefix}_{self.bnode_counter}")


# ---------------------------------------------------------------------------- values


_KINDS: dict = {}
_KINDS_LIMIT = 1 << 16


def literal_kind(term: Literal) -> tuple[int, Any]:
    """``(kind, comparable value)`` of a literal; ill-typed literals are K_OTHER.
    Memoised: the source hands out the same literal objects again and again."""
    known = term._num  # a number made from its value: no parse, no lookup
    if known is not None:
        return K_NUMERIC, known[1]
    found = _KINDS.get(term)
    if found is None:
        found = _literal_kind(term)
        if len(_KINDS) >= _KINDS_LIMIT:
            _KINDS.clear()
        _KINDS[term] = found
    return found


def _literal_kind(term: Literal) -> tuple[int, Any]:
    datatype = term.datatype
    if datatype is None:
        if term.lang is None:
            return K_STRING, term.lexical
        return K_LANG, (term.lexical, term.lang)
    if datatype in NUMERIC_TYPES:
        try:
            return K_NUMERIC, numeric(term)[1]
        except EvalError:
            return K_OTHER, None
    if datatype == XSD_BOOLEAN:
        truth = parse_boolean(term.lexical)
        return (K_BOOLEAN, truth) if truth is not None else (K_OTHER, None)
    if datatype == XSD_DATETIME:
        key = datetime_key(term)
        return (K_DATETIME, key) if key is not None else (K_OTHER, None)
    if datatype == XSD_DATE:
        key = datetime_key(term)
        return (K_DATE, key) if key is not None else (K_OTHER, None)
    return K_OTHER, None


def equal(a: Any, b: Any) -> bool:
    """SPARQL ``=``: value equality for literals of known types, term equality otherwise.

    Two different literals are an error when either has a datatype SPARQL does not know (or
    is ill-typed) and neither is language-tagged; literals of different known types are
    unequal; dateTimes with and without a timezone less than 14 hours apart are an error
    (their order is indeterminate)."""
    if type(a) is Literal and type(b) is Literal:
        ka, va = literal_kind(a)
        kb, vb = literal_kind(b)
        if ka == kb and ka != K_OTHER:
            if ka == K_LANG:
                return va[0] == vb[0] and va[1] == vb[1]
            if ka == K_DATETIME or ka == K_DATE:
                return _datetime_cmp(va, vb) == 0
            return va == vb
        if a == b:
            return True
        if ka == K_LANG or kb == K_LANG:
            return False
        if ka == K_OTHER or kb == K_OTHER:
            raise EvalError()
        return False
    return a == b


_FOURTEEN_HOURS = 14 * 3600


def _datetime_cmp(a: tuple, b: tuple) -> int:
    """Compare (seconds, has_timezone) pairs as XSD does; EvalError if indeterminate."""
    (x, tx), (y, ty) = a, b
    if tx != ty and abs(x - y) <= _FOURTEEN_HOURS:
        raise EvalError()
    return -1 if x < y else (1 if x > y else 0)


def compare(a: Any, b: Any) -> int:
    """-1, 0 or 1 for ``<``-comparable literals (numbers, strings, booleans, dateTimes);
    EvalError otherwise. NaN compares as unordered (returns 2)."""
    if type(a) is not Literal or type(b) is not Literal:
        raise EvalError()
    ka, va = literal_kind(a)
    kb, vb = literal_kind(b)
    if ka != kb or ka in (K_OTHER, K_LANG):
        if ka == K_LANG and kb == K_LANG and va[1] == vb[1]:
            va, vb = va[0], vb[0]
        else:
            raise EvalError()
    if ka == K_NUMERIC and (va != va or vb != vb):
        return 2
    if ka == K_DATETIME or ka == K_DATE:
        return _datetime_cmp(va, vb)
    if va < vb:
        return -1
    if va > vb:
        return 1
    return 0


# ---------------------------------------------------------------------------- arithmetic


def arithmetic(op: str, a: Any, b: Any) -> Literal:
    """``a op b`` for numeric literals with type promotion."""
    ka, va = numeric(a)
    kb, vb = numeric(b)
    kind = ka if ka > kb else kb
    if op == "/" and kind == INT:
        kind = DEC
    try:
        if kind == INT:
            if op == "+":
                return make_numeric(INT, va + vb)
            if op == "-":
                return make_numeric(INT, va - vb)
            return make_numeric(INT, va * vb)
        if kind == DEC:
            da = va if isinstance(va, Decimal) else Decimal(va)
            db = vb if isinstance(vb, Decimal) else Decimal(vb)
            if op == "+":
                result = da + db
            elif op == "-":
                result = da - db
            elif op == "*":
                result = da * db
            else:
                if db == 0:
                    raise EvalError()
                result = da / db
            return make_numeric(DEC, result)
        fa, fb = float(va), float(vb)
        if op == "+":
            result = fa + fb
        elif op == "-":
            result = fa - fb
        elif op == "*":
            result = fa * fb
        else:
            if fb == 0:
                if fa == 0 or fa != fa:
                    result = float("nan")
                else:
                    result = math.copysign(float("inf"), fa) * math.copysign(1.0, fb)
            else:
                result = fa / fb
        if kind == FLT:
            result = to_float32(result)
        return make_numeric(kind, result)
    # ArithmeticError: decimal's Overflow, InvalidOperation and DivisionByZero, float's
    # OverflowError; each a SPARQL evaluation error (the value is unbound), never a crash
    except (ArithmeticError, ValueError):
        raise EvalError() from None


def _negate(a: Any) -> Literal:
    kind, value = numeric(a)
    return make_numeric(kind, -value)


# ---------------------------------------------------------------------------- ordering


def order_key(term: Any) -> tuple:
    """A sort key giving SPARQL's ORDER BY order: unbound, blank nodes, IRIs, literals;
    literals by value where ``<`` compares them (numbers, strings, dateTimes...)."""
    if term is None:
        return (0,)
    kind = type(term)
    if kind is BNode:
        return (1, term.id)
    if kind is IRI:
        return (2, term.value)
    lk, value = literal_kind(term)
    if lk == K_NUMERIC:
        if value != value:  # NaN sorts before every number
            return (3, 0, 0, 0, term.lexical)
        return (3, 0, 1, value, term.datatype.value, term.lexical)
    if lk == K_STRING:
        return (3, 1, term.lexical)
    if lk == K_LANG:
        return (3, 2, term.lexical, term.lang)
    if lk == K_BOOLEAN:
        return (3, 3, value)
    if lk in (K_DATETIME, K_DATE):
        return (3, 4 if lk == K_DATETIME else 5, value[0], term.lexical)
    return (3, 6, term.datatype.value if term.datatype else "", term.lexical)


# ---------------------------------------------------------------------------- compilation


def filter_passes(compiled: Compiled, solution: Solution) -> bool:
    """Whether a FILTER keeps the solution: the EBV of the expression, errors being false."""
    try:
        return ebv(compiled(solution))
    except EvalError:
        return False


def compile_expr(expr: Any, ctx: ExprContext, graph: Any = None) -> Compiled:
    """Compile an algebra expression into ``f(solution) -> term`` (raising EvalError).

    ``graph`` is the active graph where the expression stands (EXISTS evaluates its
    pattern there)."""
    kind = type(expr)
    if kind is Var:
        name = expr.name

        def variable(sol: Solution) -> Any:
            value = sol.get(name)
            if value is None:
                raise EvalError()
            return value

        return variable
    if kind in (IRI, Literal, BNode):
        return lambda sol: expr
    if kind is Op:
        return _compile_op(expr, ctx, graph)
    if kind is Call:
        return compile_call(expr, ctx, lambda e, c: compile_expr(e, c, graph))
    if kind is FunctionCall:
        return compile_function(expr, ctx, lambda e, c: compile_expr(e, c, graph))
    if kind is Exists:
        pattern = expr.pattern
        negated = expr.negated
        if ctx.exists is None:
            raise QueryEvaluationError("EXISTS needs an executor")
        exists = ctx.exists

        def exists_fn(sol: Solution) -> Literal:
            found = exists(pattern, sol, graph)
            return boolean(found != negated)

        return exists_fn
    if kind is Aggregate:
        raise QueryEvaluationError(f"aggregate {expr} used outside SELECT, HAVING or ORDER BY of a grouped query")
    raise QueryEvaluationError(f"cannot evaluate {expr!r}")


_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
_TESTS = {"<": _operator.lt, ">": _operator.gt, "<=": _operator.le, ">=": _operator.ge}


def _against_number(op: str, args: tuple, general: Compiled) -> Compiled | None:
    """A fast ``?x < 30`` (a variable against a numeric constant): a number compares
    directly; anything else (an error, a string, NaN) goes to ``general``."""
    a, b = args
    if type(a) is Literal and type(b) is Var:
        a, b, op = b, a, _FLIPPED[op]
    if type(a) is not Var or type(b) is not Literal:
        return None
    kind, constant = literal_kind(b)
    if kind != K_NUMERIC or constant != constant:
        return None
    name = a.name
    test = _TESTS[op]

    def against_number(sol: Solution) -> Literal:
        term = sol.get(name)
        if type(term) is Literal:
            found = literal_kind(term)
            if found[0] == K_NUMERIC and found[1] == found[1]:
                return TRUE if test(found[1], constant) else FALSE
        return general(sol)

    return against_number


def _compile_op(expr: Op, ctx: ExprContext, graph: Any) -> Compiled:
    op = expr.op
    args = [compile_expr(a, ctx, graph) for a in expr.args]
    if op == "||":
        left, right = args

        def or_(sol: Solution) -> Literal:
            try:
                lv = ebv(left(sol))
            except EvalError:
                lv = None
            if lv is True:
                return TRUE
            rv = ebv(right(sol))  # an error here is the result (false||E, E||E)
            if rv:
                return TRUE
            if lv is None:
                raise EvalError()
            return FALSE

        return or_
    if op == "&&":
        left, right = args

        def and_(sol: Solution) -> Literal:
            try:
                lv = ebv(left(sol))
            except EvalError:
                lv = None
            if lv is False:
                return FALSE
            rv = ebv(right(sol))
            if not rv:
                return FALSE
            if lv is None:
                raise EvalError()
            return TRUE

        return and_
    if op == "!":
        (arg,) = args
        return lambda sol: FALSE if ebv(arg(sol)) else TRUE
    if op in ("=", "!="):
        left, right = args
        if op == "=":
            return lambda sol: boolean(equal(left(sol), right(sol)))
        return lambda sol: boolean(not equal(left(sol), right(sol)))
    if op in ("<", ">", "<=", ">="):
        left, right = args
        accept = {"<": (-1,), ">": (1,), "<=": (-1, 0), ">=": (1, 0)}[op]
        general = lambda sol: boolean(compare(left(sol), right(sol)) in accept)  # noqa: E731
        return _against_number(op, expr.args, general) or general
    if op in ("+", "-", "*", "/"):
        left, right = args
        return lambda sol: arithmetic(op, left(sol), right(sol))
    if op == "u-":
        (arg,) = args
        return lambda sol: _negate(arg(sol))
    if op == "u+":
        (arg,) = args

        def plus(sol: Solution) -> Literal:
            value = arg(sol)
            numeric(value)
            return value

        return plus
    if op in ("IN", "NOT IN"):
        tested, options = args[0], args[1:]
        negated = op == "NOT IN"

        def in_(sol: Solution) -> Literal:
            value = tested(sol)
            error = False
            for option in options:
                try:
                    if equal(value, option(sol)):
                        return FALSE if negated else TRUE
                except EvalError:
                    error = True
            if error:
                raise EvalError()
            return TRUE if negated else FALSE

        return in_
    raise QueryEvaluationError(f"unknown operator {op}")

