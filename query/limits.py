"""Bounds on a running query: a time limit and a cap on the solutions it returns.

The deadline is checked as rows come out of the store (:class:`LimitedSource` wraps a
source, :mod:`query.source`) and as they flow between the operators of a plan (the
executor's ``check``, which :func:`query.engine.prepare` sets to ``deadline.check``), so a
query stops within a few thousand rows of its deadline whatever its plan. REGEX and REPLACE take the time left as their match
timeout (:mod:`query.functions`), so a backtracking pattern stops at the deadline too.
``max_held_rows`` caps what one operator holds (:meth:`query.executor.Executor.held`);
:func:`query.engine.run_query` applies both, and :func:`collect` reads a result's rows
under the cap on the result (``max_rows``). docs/query.md, "Limits", has the whole story.

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

from .errors import QueryTimeoutError, ResultTooLargeError
from .results import Result

__all__ = ["MAX_HELD_ROWS", "Limits", "Deadline", "LimitedSource", "QueryTimeoutError", "ResultTooLargeError", "collect"]

_CHECK_EVERY = 1024

MAX_HELD_ROWS = 2_000_000
"""The default cap on rows one operator holds: about 1 GB of solutions of a few
variables, and a minute or more of sorting in Python, beyond which a query is more
likely a mistake (a cross product) than a need."""


@dataclass(frozen=True)
class Limits:
    """``timeout`` seconds (None: none), ``max_rows`` solutions or triples in the result
    (None: any; :func:`collect` applies it) and ``max_held_rows`` rows held in memory by
    one operator: ORDER BY, GROUP BY, DISTINCT, a hash join's table, MINUS (None: any)."""

    timeout: float | None = 30.0
    max_rows: int | None = 100_000
    max_held_rows: int | None = MAX_HELD_ROWS

    def deadline(self) -> Deadline:
        return Deadline(None if self.timeout is None else time.monotonic() + self.timeout, self.timeout)


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

    def _checked(self, rows: Iterator[dict]) -> Iterator[dict]:
        check = self._deadline.check
        check()
        for count, row in enumerate(rows, 1):
            if count % _CHECK_EVERY == 0:
                check()
            yield row


def collect(result: Result, limits: Limits, deadline: Deadline | None = None) -> Result:
    """``result``, its rows (or triples) read now under ``limits``."""
    deadline = deadline or limits.deadline()
    cap = limits.max_rows
    if result.form in ("CONSTRUCT", "DESCRIBE"):
        if cap is not None and len(result.triples) > cap:
            raise ResultTooLargeError(f"the result has more than {cap} triples (the limit)")
        return result
    if result.form != "SELECT":
        return result
    for count, _ in enumerate(result, 1):  # the result keeps the rows it reads
        if cap is not None and count > cap:
            raise ResultTooLargeError(f"the result has more than {cap} rows (the limit)")
        if count % _CHECK_EVERY == 0:
            deadline.check()
    return result
