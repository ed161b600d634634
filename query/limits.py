"""Bounds on a running query: a time limit, caps on the solutions it holds and returns,
and a memory budget (:class:`Memory`: the bytes of the values it holds, the length of a
value it makes).

The deadline is checked as rows come out of the store (:class:`LimitedSource` wraps a
source, :mod:`query.source`) and as they flow between the operators of a plan (the
executor's ``check``, which :func:`query.engine.prepare` sets to ``deadline.check``), so a
query stops within a few thousand rows of its deadline whatever its plan. REGEX and REPLACE take the time left as their match
timeout (:mod:`query.functions`), so a backtracking pattern stops at the deadline too.
``max_held_rows`` caps what one operator holds (:meth:`query.executor.Executor.held`);
:func:`query.engine.run_query` applies both, and :func:`collect` reads a result's rows
under the cap on the result (``max_rows``). ``max_held_bytes`` and ``max_value_length``
make the query's :class:`Memory`, which the operators that hold rows charge with the sizes
of their values (:func:`row_size`) and the string functions consult before making a value.
docs/query.md, "Limits", has the whole story.

>>> from query import MemorySource, IRI, Literal, execute
>>> quads = [(None, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(str(i))) for i in range(10)]
>>> limits = Limits(timeout=5.0, max_rows=3)
>>> source = LimitedSource(MemorySource(quads), limits.deadline())
>>> collect(execute(source, "SELECT * WHERE { ?s ?p ?o }"), limits)
Traceback (most recent call last):
...
query.errors.ResultTooLargeError: the result has more than 3 rows (the limit)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from nstore.terms import IRI, BNode, Literal

from .errors import MemoryLimitError, QueryTimeoutError, ResultTooLargeError, ValueTooLongError
from .results import Result

__all__ = ["MAX_HELD_ROWS", "MAX_HELD_BYTES", "MAX_VALUE_LENGTH", "VALUE_OVERHEAD", "TAKE_EVERY", "Limits", "Deadline", "Memory",
           "LimitedSource", "QueryTimeoutError", "ResultTooLargeError", "collect", "value_size", "row_size"]

_CHECK_EVERY = 1024

MAX_HELD_ROWS = 2_000_000
"""The default cap on rows one operator holds: about 1 GB of solutions of a few
variables, and a minute or more of sorting in Python, beyond which a query is more
likely a mistake (a cross product) than a need."""

MAX_HELD_BYTES = 1 << 30
"""The default budget of one query's held values, in bytes as :func:`value_size` counts
them (1 GiB): 2,000,000 held rows of five values of 40 characters are 720 MB; a budget
that real queries meet only where ``max_held_rows`` would stop them too."""

MAX_VALUE_LENGTH = 1 << 24
"""The default cap on the length of a value a function makes (16 Mi characters): far
beyond any label, text or GROUP_CONCAT a query needs, and 26 doublings of a one-character
string by CONCAT (the attack this stops) get no further than 24."""

TAKE_EVERY = 1 << 16
"""Bytes an operator counts on its own before it takes them from the query's budget in
one step (fewer calls; a query overshoots its budget by at most this, per operator)."""

VALUE_OVERHEAD = 32
"""Bytes counted per value besides its text: a row of many empty values still costs
memory (a term object and its slot in the row), and counts."""


@dataclass(frozen=True)
class Limits:
    """``timeout`` seconds (None: none), ``max_rows`` solutions or triples in the result
    (None: any; :func:`collect` applies it), ``max_held_rows`` rows held in memory by
    one operator: ORDER BY, GROUP BY, DISTINCT, a hash join's table, MINUS (None: any),
    ``max_held_bytes`` bytes of the values a query holds (its operators' rows, one
    solution's values, the result :func:`collect` reads) and ``max_value_length``
    characters of a value a function makes (None: any; see :class:`Memory`)."""

    timeout: float | None = 30.0
    max_rows: int | None = 100_000
    max_held_rows: int | None = MAX_HELD_ROWS
    max_held_bytes: int | None = MAX_HELD_BYTES
    max_value_length: int | None = MAX_VALUE_LENGTH

    def deadline(self) -> Deadline:
        return Deadline(None if self.timeout is None else time.monotonic() + self.timeout, self.timeout)

    def memory(self) -> Memory | None:
        """A fresh :class:`Memory` for one query (None: neither memory limit is set)."""
        if self.max_held_bytes is None and self.max_value_length is None:
            return None
        return Memory(self.max_held_bytes, self.max_value_length)


@dataclass(frozen=True)
class Deadline:
    """When a query must stop (``monotonic`` seconds; None: never)."""

    at: float | None
    seconds: float | None

    def check(self) -> None:
        """A :class:`QueryTimeoutError` if the deadline has passed."""
        if self.at is not None and time.monotonic() > self.at:
            raise QueryTimeoutError(self.seconds)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline); a
        :class:`QueryTimeoutError` if none are (a REGEX timeout must be positive).

        >>> Deadline(None, None).remaining() is None, 0 < Limits(timeout=5.0).deadline().remaining() <= 5
        (True, True)
        """
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise QueryTimeoutError(self.seconds)
        return left


def value_size(value: Any) -> int:
    """The bytes a value is counted as holding: the characters of its text (a literal's
    lexical form with its datatype IRI or language tag, an IRI, a blank node's label, a
    stored string or bytes) plus :data:`VALUE_OVERHEAD`; a number or date only the
    overhead. A literal's datatype counts even when it is XSD's: STRDT can make one of any
    length, and telling the two apart would cost more than counting.

    >>> value_size(Literal("abc")), value_size(Literal("abc", lang="en")), value_size(IRI("urn:x")), value_size(7)
    (35, 37, 37, 32)
    >>> value_size(Literal("1", "http://www.w3.org/2001/XMLSchema#integer"))
    73
    """
    kind = type(value)
    if kind is IRI:
        return VALUE_OVERHEAD + len(value.value)
    if kind is Literal:
        return VALUE_OVERHEAD + _literal_text(value)
    if kind is str or kind is bytes:
        return VALUE_OVERHEAD + len(value)
    if kind is BNode:
        return VALUE_OVERHEAD + len(value.id)
    return VALUE_OVERHEAD


def row_size(row: dict) -> int:
    """The bytes a solution is counted as holding: its values' :func:`value_size`.

    >>> row_size({"s": IRI("urn:x"), "o": Literal("abc")})
    72
    """
    size = VALUE_OVERHEAD * len(row)
    for value in row.values():
        kind = type(value)  # value_size, inlined: this runs once per held row
        if kind is IRI:
            size += len(value.value)
        elif kind is Literal:
            size += len(value.lexical)
            if value.datatype is not None:
                size += len(value.datatype.value)
            elif value.lang is not None:
                size += len(value.lang)
        elif kind is str or kind is bytes:
            size += len(value)
        elif kind is BNode:
            size += len(value.id)
    return size


def _literal_text(literal: Literal) -> int:
    """The characters of a literal: its lexical form and its datatype IRI or language tag
    (a literal has one or neither).

    >>> _literal_text(Literal("abc")), _literal_text(Literal("abc", lang="en")), _literal_text(Literal("1", "urn:t"))
    (3, 5, 6)
    """
    if literal.datatype is not None:
        return len(literal.lexical) + len(literal.datatype.value)
    if literal.lang is not None:
        return len(literal.lexical) + len(literal.lang)
    return len(literal.lexical)


class Memory:
    """One query's memory budget: the bytes of values its operators hold between them
    (``max_held_bytes``; None: any) and the longest value a function may make
    (``max_value_length`` characters; None: any).

    An operator that holds rows takes their :func:`row_size` as it keeps them and gives it
    back when it lets them go (a sort or DISTINCT when done; a hash table lasts the query,
    or the CHANGES / VERSIONS part that built it). A solution that grows past what is left
    (a chain of BINDs) is refused by :meth:`check`; a function that would make a too-long
    value by :meth:`check_length`, before it makes it.

    >>> memory = Memory(100, 10)
    >>> memory.take(60, "ORDER BY"); memory.check(40, "BIND"); memory.give(60); memory.held
    0
    >>> memory.take(101, "DISTINCT")
    Traceback (most recent call last):
    ...
    query.errors.MemoryLimitError: DISTINCT would hold more than 100 bytes of values (the limit on the memory a query holds); narrow the query or raise the limit (max_held_bytes, --max-held-bytes)
    """

    __slots__ = ("limit", "held", "max_value_length")

    def __init__(self, max_held_bytes: int | None = MAX_HELD_BYTES, max_value_length: int | None = MAX_VALUE_LENGTH) -> None:
        self.limit = max_held_bytes
        self.max_value_length = max_value_length
        self.held = 0

    def take(self, size: int, operator: str) -> None:
        """Hold ``size`` more bytes: a :class:`MemoryLimitError` past the budget (the
        bytes stay counted: the query stops)."""
        self.held += size
        if self.limit is not None and self.held > self.limit:
            raise MemoryLimitError(operator, self.limit)

    def give(self, size: int) -> None:
        """Let ``size`` bytes go (what a finished operator held)."""
        self.held -= size

    def check(self, size: int, operator: str) -> None:
        """A :class:`MemoryLimitError` if ``size`` more bytes would not fit (nothing taken)."""
        if self.limit is not None and self.held + size > self.limit:
            raise MemoryLimitError(operator, self.limit)

    def check_length(self, length: int, function: str) -> None:
        """A :class:`ValueTooLongError` if ``function`` may not make a value of ``length``."""
        if self.max_value_length is not None and length > self.max_value_length:
            raise ValueTooLongError(function, length, self.max_value_length)


class LimitedSource:
    """``source`` with ``deadline`` checked every 1,024 rows it yields (and at every
    lookup a prepared pattern makes); everything else is ``source``'s own. A source that
    filters inside its own scans (table graphs) is asked for a copy that checks there too
    (``source.checked(check)``), so a scan that yields nothing still stops."""

    def __init__(self, source: Any, deadline: Deadline) -> None:
        checked = getattr(source, "checked", None)
        if checked is not None:
            source = checked(deadline.check)
        self._source = source
        self._deadline = deadline
        self._ids: _CheckedIds | None = None
        if hasattr(source, "prepare"):
            self.prepare = self._prepare

    def __getattr__(self, name: str) -> Any:
        return getattr(self._source, name)

    def match(self, pattern: tuple, *within: Any) -> Iterator[dict]:
        return self._checked(self._source.match(pattern, *within))

    def _prepare(self, pattern: tuple) -> Callable[..., Iterator[dict]]:
        lookup = self._source.prepare(pattern)

        def run(*values: Any) -> Iterator[dict]:
            self._deadline.check()
            return self._checked(lookup(*values))

        return run

    def ids(self) -> Any:
        """The source's reads on ids (``query.id_bgp``), their scans and lookups checked
        as :meth:`match` and prepared reads are; None if the source has none."""
        ids = getattr(self._source, "ids", None)
        found = ids() if ids is not None else None
        if found is None:
            return None
        if self._ids is None or self._ids.ids is not found:
            self._ids = _CheckedIds(found, self._checked, self._deadline.check)
        return self._ids

    def _checked(self, rows: Iterator[Any]) -> Iterator[Any]:
        check = self._deadline.check
        check()
        for count, row in enumerate(rows, 1):
            if count % _CHECK_EVERY == 0:
                check()
            yield row


class _CheckedIds:
    """A source's reads on ids with the deadline checked at every lookup and as rows come."""

    def __init__(self, ids: Any, checked: Callable[[Iterator[Any]], Iterator[Any]], check: Callable[[], None]) -> None:
        self.ids = ids
        self.encode = ids.encode
        self.decode = ids.decode
        self.known_count = ids.known_count  # one read or one per predicate: nothing to check
        self.predicate_counts = ids.predicate_counts
        self._checked = checked
        self._check = check

    def scan(self, pattern: tuple, within: Any = None) -> tuple[tuple[int, ...], Iterator[list]]:
        positions, rows = self.ids.scan(pattern, within)
        return positions, self._checked(rows)

    def prepare(self, pattern: tuple) -> tuple[tuple[int, ...], Callable[[Any], Iterator[list]]]:
        positions, run = self.ids.prepare(pattern)
        checked = self._checked

        def read(values: Any) -> Iterator[list]:
            return checked(run(values))

        return positions, read


def collect(result: Result, limits: Limits, deadline: Deadline | None = None) -> Result:
    """``result``, its rows (or triples) read now under ``limits``: at most ``max_rows`` of
    them, and the bytes of their values within ``max_held_bytes`` (the rows a result
    keeps are held like a sort's)."""
    deadline = deadline or limits.deadline()
    cap = limits.max_rows
    if result.form in ("CONSTRUCT", "DESCRIBE"):
        if cap is not None and len(result.triples) > cap:
            raise ResultTooLargeError(f"the result has more than {cap} triples (the limit)")
        return result
    if result.form != "SELECT":
        return result
    budget = limits.max_held_bytes
    held = 0
    for count, row in enumerate(result, 1):  # the result keeps the rows it reads
        if cap is not None and count > cap:
            raise ResultTooLargeError(f"the result has more than {cap} rows (the limit)")
        if budget is not None:
            held += row_size(row)
            if held > budget:
                raise MemoryLimitError("the result", budget)
        if count % _CHECK_EVERY == 0:
            deadline.check()
    return result
