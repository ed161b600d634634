"""Physical plans kept for the queries a source answers again: the same query text is
parsed once (the parser's cache gives the same :class:`~query.algebra.Query` object) and
planned once per source.

A plan's compiled expressions hold their query's :class:`~query.expressions.ExprContext`
(its NOW, blank-node scopes, deadline, memory budget, EXISTS hook), so a plan and its
context are lent to one run at a time: :meth:`PlanCache.take` hands out an idle one (its
context reset for the new run, see :meth:`ExprContext.reset`), and :meth:`PlanCache.give`
takes it back when the run's solutions are all read or let go. Two runs at once (two
threads of a server, two results read in turn) get two plans.

The plans live in the source's ``statistics`` dict (fstore keeps one per view: a commit's
plans and estimates die with the view) under one key, at most :data:`PLANS_KEPT` queries,
the least recently used dropped. Plans over other sources than the query's (``CHANGES``,
``VERSIONS``: the versions of a pattern) are not kept.

>>> from query.source import MemorySource
>>> from query import execute
>>> source = MemorySource([(None, IRI("urn:a"), IRI("urn:p"), IRI("urn:b"))])
>>> source.statistics = {}
>>> text = "SELECT ?o WHERE { ?s <urn:p> ?o }"
>>> [list(execute(source, text)) == [{"o": IRI("urn:b")}] for _ in range(2)]
[True, True]
>>> len(source.statistics[PLANS])
1
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import fields, is_dataclass
from typing import Any

from nstore.terms import IRI  # noqa: F401 - used by the doctest

from .planner import PlanNode, SourcesPlan

__all__ = ["PlanCache", "PLANS", "PLANS_KEPT", "IDLE_KEPT"]

PLANS = "plans"
"""The key of a source's ``statistics`` dict under which its plans are kept."""

PLANS_KEPT = 64
"""Queries whose plans a source keeps (the least recently run dropped)."""

IDLE_KEPT = 4
"""Idle plans kept per query: as many runs at once as a busy server makes."""

_LOCK = threading.Lock()


class PlanCache:
    """The plans a source keeps, by query (see the module docstring); a no-op for a
    source without a ``statistics`` dict."""

    def __init__(self, source: Any) -> None:
        statistics = getattr(source, "statistics", None)
        self._plans: OrderedDict | None = None
        if isinstance(statistics, dict):
            with _LOCK:
                self._plans = statistics.setdefault(PLANS, OrderedDict())

    def take(self, query: Any) -> tuple[Any, PlanNode] | None:
        """An idle ``(context, plan)`` of ``query``, or None (plan it)."""
        if self._plans is None:
            return None
        with _LOCK:
            entry = self._plans.get(id(query))
            if entry is None or entry[0] is not query or not entry[1]:
                return None
            self._plans.move_to_end(id(query))
            ctx, plan = entry[1].pop()
        ctx.reset()
        return ctx, plan

    def give(self, query: Any, ctx: Any, plan: PlanNode) -> None:
        """Keep ``plan`` (made for ``query`` with ``ctx``) for a later run."""
        if self._plans is None or not reusable(plan):
            return
        with _LOCK:
            entry = self._plans.get(id(query))
            if entry is None or entry[0] is not query:  # a new query, or another at a reused id
                entry = self._plans[id(query)] = (query, [])
                if len(self._plans) > PLANS_KEPT:
                    self._plans.popitem(last=False)
            if len(entry[1]) < IDLE_KEPT:
                entry[1].append((ctx, plan))


def reusable(plan: PlanNode) -> bool:
    """Whether a plan reads only its own source (no ``CHANGES`` or ``VERSIONS`` part,
    whose sources are other views)."""
    if type(plan) is SourcesPlan:
        return False
    for field in fields(plan):
        value = getattr(plan, field.name)
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, PlanNode) and is_dataclass(item) and not reusable(item):
                return False
    return True
