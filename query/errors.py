"""Typed errors of the query layer; each says what was wrong and where.

>>> err = QuerySyntaxError("unexpected '}'", line=3, column=7, token="}", expected=["'.'", "a variable"])
>>> str(err)
"line 3, column 7: unexpected '}' (expected '.' or a variable)"
>>> err.line, err.column
(3, 7)
"""

from __future__ import annotations

from typing import Sequence

from nstore.errors import DataeError
from nstore.terms import numeric_functions

__all__ = [
    "EvalError",
    "numeric",
    "make_numeric",
    "QueryError",
    "QuerySyntaxError",
    "UnknownPrefixError",
    "UnsupportedFeatureError",
    "QueryEvaluationError",
    "QueryTooComplexError",
    "QueryTimeoutError",
    "ResultTooLargeError",
    "IntermediateTooLargeError",
    "ValueTooLongError",
    "MemoryLimitError",
    "UpdateError",
    "ReadOnlyGraphError",
    "LoadError",
]


class QueryError(DataeError):
    """Base class of every error the query layer raises on purpose."""


class QuerySyntaxError(QueryError, ValueError):
    """The query text is not valid (in the covered subset of) SPARQL 1.1.

    ``line`` and ``column`` are 1-based; ``token`` is the offending text (None at the end of
    the input) and ``expected`` lists what the parser would have accepted there.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        token: str | None = None,
        expected: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.token = token
        self.expected = list(expected)
        where = f"line {line}, column {column}: " if line is not None else ""
        wanted = ""
        if self.expected:
            shown = self.expected[:12]
            more = f" (+{len(self.expected) - 12} more)" if len(self.expected) > 12 else ""
            wanted = " (expected " + (", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]) + more + ")"
        super().__init__(f"{where}{message}{wanted}")


class UnknownPrefixError(QuerySyntaxError):
    """A prefixed name uses a prefix no PREFIX declaration defines."""

    def __init__(self, prefix: str, *, line: int | None = None, column: int | None = None) -> None:
        self.prefix = prefix
        super().__init__(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)", line=line, column=column, token=prefix + ":")


class UnsupportedFeatureError(QueryError, NotImplementedError):
    """Valid SPARQL that datae does not evaluate (e.g. SERVICE); ``feature`` names it."""

    def __init__(self, feature: str, detail: str = "") -> None:
        self.feature = feature
        super().__init__(f"{feature} is not supported by datae" + (f": {detail}" if detail else ""))


class QueryEvaluationError(QueryError):
    """The query is well-formed but cannot be evaluated (e.g. a bad argument to execute)."""


class QueryTooComplexError(QueryError):
    """The query nests deeper (groups, parentheses, function calls, paths) than datae
    evaluates, or is too long a chain for it: refused before it runs, rather than
    exhausting Python's stack.

    >>> str(QueryTooComplexError("nesting depth 300 exceeds 100 (line 1, column 312)"))
    'the query is too complex: nesting depth 300 exceeds 100 (line 1, column 312)'
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"the query is too complex: {detail}")


class QueryTimeoutError(QueryEvaluationError):
    """A query ran past its time limit and was stopped; ``seconds`` is the limit (None when
    the deadline was given without one).

    >>> str(QueryTimeoutError(0.5)), str(QueryTimeoutError(None))
    ('the query ran past its time limit of 0.5 s and was stopped', 'the query ran past its time limit and was stopped')
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        limit = "" if seconds is None else f" of {seconds:g} s"
        super().__init__(f"the query ran past its time limit{limit} and was stopped")


class ResultTooLargeError(QueryEvaluationError):
    """A query's result has more rows than allowed."""


class IntermediateTooLargeError(ResultTooLargeError):
    """An operator that holds rows in memory (ORDER BY, GROUP BY, DISTINCT, a hash join's
    table, MINUS) would hold more than allowed; ``limit`` is the cap, ``operator`` its name."""

    def __init__(self, operator: str, limit: int) -> None:
        self.operator = operator
        self.limit = limit
        super().__init__(f"{operator} holds more than {limit:,} rows (the limit on rows held in memory); "
                         "narrow the query or raise the limit (max_held_rows, --max-held-rows)")


class ValueTooLongError(ResultTooLargeError):
    """A function (``CONCAT``, ``REPLACE``, ``GROUP_CONCAT``...) would make a value longer
    than allowed; ``function`` names it, ``length`` is the length it would have (characters
    of a string) and ``limit`` the cap. Refused before the value is made.

    >>> str(ValueTooLongError("CONCAT", 33_554_432, 16_777_216))
    'CONCAT would make a value of 33,554,432 characters, more than 16,777,216 (the limit on the length of a value); narrow the query or raise the limit (max_value_length, --max-value-length)'
    """

    def __init__(self, function: str, length: int, limit: int) -> None:
        self.function = function
        self.length = length
        self.limit = limit
        super().__init__(f"{function} would make a value of {length:,} characters, more than {limit:,} (the limit on "
                         "the length of a value); narrow the query or raise the limit (max_value_length, --max-value-length)")


class MemoryLimitError(IntermediateTooLargeError):
    """The values a query holds (in the rows of its sorts, groups, DISTINCT, hash tables,
    result, or one solution's own values) would take more bytes than allowed; ``operator``
    names what would hold them and ``limit`` is the cap in bytes.

    >>> str(MemoryLimitError("ORDER BY", 1_000_000))
    'ORDER BY would hold more than 1,000,000 bytes of values (the limit on the memory a query holds); narrow the query or raise the limit (max_held_bytes, --max-held-bytes)'
    """

    def __init__(self, operator: str, limit: int) -> None:
        self.operator = operator
        self.limit = limit
        ResultTooLargeError.__init__(self, f"{operator} would hold more than {limit:,} bytes of values (the limit on the "
                                     "memory a query holds); narrow the query or raise the limit (max_held_bytes, "
                                     "--max-held-bytes)")


class UpdateError(QueryError):
    """An update cannot be applied (e.g. its target is a tag or a commit rather than a
    branch, or ``CREATE`` names a graph that already has quads); nothing is committed."""


class ReadOnlyGraphError(UpdateError):
    """An update would write to a table's graph (``<urn:datae:dataset:NAME>``), which SPARQL
    reads through the Direct Mapping but cannot change: write tables with ``datae table`` or
    ``fstore.tables``. ``graph`` is the graph and ``operation`` the update operation."""

    def __init__(self, graph: object, operation: str) -> None:
        self.graph = graph
        self.operation = operation
        super().__init__(f"{operation}: {graph} is a table graph, read-only in SPARQL "
                         "(change the table with `datae table` or fstore.tables); nothing was committed")


class LoadError(UpdateError):
    """``LOAD <file:...>`` cannot run: loading is off (no directory allowed), the file lies
    outside the allowed directory (after symlinks and ``..``), cannot be read, or is not
    valid RDF (``line`` and ``column`` then say where). The message names the IRI and
    never quotes the file, which may be anyone's: LOAD must not become a way to read it.

    >>> str(LoadError("file:///etc/passwd", "loading files is off"))
    'LOAD <file:///etc/passwd>: loading files is off'
    """

    def __init__(self, iri: str, reason: str, *, line: int | None = None, column: int | None = None) -> None:
        self.iri = iri
        self.line = line
        self.column = column
        super().__init__(f"LOAD <{iri}>: {reason}")


# -- SPARQL's error value ---------------------------------------------------------------------


class EvalError(Exception):
    """A SPARQL expression error (type error, unbound variable...): FILTER treats it as
    false, BIND leaves the variable unbound. Not a :class:`QueryError`: it never leaves
    the engine."""


# The numeric ladder as SPARQL's operators take it: ``numeric(term)`` gives ``(kind, value)``
# of a numeric literal, ``make_numeric(kind, value)`` its literal; where there is none, each
# raises EvalError (nstore.terms.numeric_functions: one call each, no wrapper).
numeric, make_numeric = numeric_functions(EvalError)
