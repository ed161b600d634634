"""Refusing queries nested too deeply to evaluate, before lark or the engine recurse.

The parser's tree transformer, the translation to algebra, the planner and the executor
all recurse over the query's structure, so a query nested a few hundred levels deep
would exhaust Python's stack (RecursionError) somewhere inside them. :func:`check_nesting`
counts brackets (``{`` ``(`` ``[``) in one regular-expression pass that skips strings,
IRIs and comments, and refuses text deeper than :data:`MAX_NESTING` with a
:class:`~query.errors.QueryTooComplexError` saying where; :func:`guard_recursion` turns a
RecursionError that a long flat chain still provokes into the same typed error.

>>> check_nesting("SELECT * WHERE { { ?s ?p ?o } }")
>>> check_nesting("SELECT * WHERE " + "{" * 300 + " ?s ?p ?o " + "}" * 300)
Traceback (most recent call last):
...
query.errors.QueryTooComplexError: the query is too complex: nesting depth 101 exceeds 100 (line 1, column 116)
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from .errors import QueryTooComplexError

__all__ = ["MAX_NESTING", "check_nesting", "bracket_depth", "guard_recursion"]

MAX_NESTING = 100
"""The deepest bracket nesting a query may have. Measured: nested groups failed at 170
levels, ``FILTER EXISTS`` at 130 (Python's default recursion limit of 1,000 frames), so
100 leaves room for the engine's own frames."""

# Strings and IRIs first, so that brackets inside them are not counted; a ``<`` that does
# not open an IRI (a comparison) matches nothing but itself and is skipped.
_TOKENS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
                     r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\x00-\x20]*>|#[^\n]*'
                     r'|[{(\[]|[})\]]', re.DOTALL)
_OPEN = frozenset("{([")


def check_nesting(text: str, limit: int = MAX_NESTING) -> None:
    """A :class:`QueryTooComplexError` if brackets nest deeper than ``limit`` in ``text``."""
    if text.count("{") + text.count("(") + text.count("[") > limit:  # else it cannot: skip the scan
        bracket_depth(text, limit)


def bracket_depth(text: str, limit: int = MAX_NESTING) -> int:
    """The deepest bracket nesting of ``text`` (strings, IRIs and comments skipped);
    a :class:`QueryTooComplexError` as soon as it passes ``limit``.

    >>> bracket_depth('ASK { FILTER(STR(<urn:a(>) = "((") }')
    3
    """
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if len(token) != 1:
            continue
        if token in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > limit:
                    line = text.count("\n", 0, match.start()) + 1
                    column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
                    raise QueryTooComplexError(f"nesting depth {depth} exceeds {limit} (line {line}, column {column})")
        elif depth:
            depth -= 1
    return deepest


@contextmanager
def guard_recursion(what: str) -> Iterator[None]:
    """Turn a RecursionError inside the block into a :class:`QueryTooComplexError`
    (``what`` says which stage ran out of stack: parsing or evaluation).

    >>> with guard_recursion("evaluating"):
    ...     raise RecursionError("maximum recursion depth exceeded")
    Traceback (most recent call last):
    ...
    query.errors.QueryTooComplexError: the query is too complex: evaluating it ran out of Python stack (a long chain of UNION, MINUS, FILTER, ||, &&, +, path steps or triple patterns?)
    """
    try:
        yield
    except RecursionError:
        raise QueryTooComplexError(f"{what} it ran out of Python stack "
                                   "(a long chain of UNION, MINUS, FILTER, ||, &&, +, path steps or triple patterns?)") from None
