"""Plug-ins: what packages above the versioned core (``fstore.tables``) give a store when it
opens, so that the core never imports them and importing ``fstore`` loads none of them.

A plug-in is a module with a ``register(plugins)`` function. A repository is opened with
the names of the plug-ins it uses (:data:`DEFAULT_PLUGINS`: tables) and keeps what they
registered in its :class:`Plugins` (``repo.plugins``): the functions ``View.table``,
``Transaction.table`` and the ``Repository.table_*`` methods call, by name, and the graph
mergers a merge or a revert asks (:func:`fstore.ops.three_way.graph_mergers`). Nothing is
registered by importing a module: two repositories opened with different plug-ins in one
process each see only their own.

What a plug-in registers may be named as ``"module:attribute"`` (as packaging's entry
points name objects): the module is imported when the core first calls it, so opening a
store loads none of the tables' modules until a table is read, written or merged.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> repo.plugins.provided("table_at").__module__
'fstore.tables.access'
>>> bare = fstore.open(tempfile.mkdtemp(), plugins=())
>>> bare.at("main").table("t")
Traceback (most recent call last):
...
fstore.errors.FstoreError: no plug-in of this repository provides table_at (it was opened with: none; the default, fstore.tables.plugin, provides the tables' functions)
>>> repo.close(); bare.close()
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

from .errors import FstoreError

if TYPE_CHECKING:
    from .ops.three_way import Conflict, GraphMerger, GraphResolution, MergeSides, Policy

__all__ = ["DEFAULT_PLUGINS", "Plugins", "DeferredMerger", "load_plugins", "resolve"]

DEFAULT_PLUGINS: tuple[str, ...] = ("fstore.tables.plugin",)
"""The plug-ins a repository opens with unless told otherwise: tables (Kart datasets)."""


def resolve(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names, its module imported.

    >>> resolve("fstore.errors:FstoreError").__name__
    'FstoreError'
    """
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


class DeferredMerger:
    """A graph merger whose class is named by a reference and made at its first merge:
    ``claims`` (a cheap test of a graph name) is given at once, so a store whose merges
    meet no such graph never imports the merger's module."""

    def __init__(self, reference: str, claims: Callable[[Any], bool]) -> None:
        self.reference = reference
        self.claims = claims
        self._merger: GraphMerger | None = None

    def merge(self, sides: MergeSides, graph: Any, conflicts: list[Conflict], policy: Policy) -> GraphResolution:
        if self._merger is None:
            self._merger = resolve(self.reference)()
        return self._merger.merge(sides, graph, conflicts, policy)

    def __repr__(self) -> str:
        return f"<DeferredMerger {self.reference}>"


class Plugins:
    """What the plug-ins of one open repository registered: functions the core calls by
    name (:meth:`provide`, :meth:`provided`) and graph mergers (:meth:`add_graph_merger`,
    :attr:`graph_mergers`; the first that claims a graph merges it)."""

    def __init__(self, names: Sequence[str] = ()) -> None:
        self.names = tuple(names)
        self.graph_mergers: list[GraphMerger] = []
        self._functions: dict[str, Callable[..., Any] | str] = {}

    def provide(self, name: str, function: Callable[..., Any] | str) -> None:
        """Make ``function`` (or the one a ``"module:attribute"`` reference names, imported
        at its first call) what the core calls for ``name``."""
        self._functions[name] = function

    def add_graph_merger(self, merger: GraphMerger | str, claims: Callable[[Any], bool] | None = None) -> None:
        """Let ``merger`` resolve the conflicts of the graphs it claims; a reference to a
        merger class comes with ``claims``, and the class is made at its first merge."""
        if isinstance(merger, str):
            if claims is None:
                raise FstoreError(f"graph merger {merger}: a merger given by reference needs claims")
            merger = DeferredMerger(merger, claims)
        if merger not in self.graph_mergers:
            self.graph_mergers.append(merger)

    def provided(self, name: str) -> Callable[..., Any]:
        """The function provided for ``name`` (FstoreError if no plug-in provides it)."""
        function = self.get(name)
        if function is None:
            opened = ", ".join(self.names) or "none"
            raise FstoreError(f"no plug-in of this repository provides {name} (it was opened with: {opened}; "
                              f"the default, {', '.join(DEFAULT_PLUGINS)}, provides the tables' functions)")
        return function

    def get(self, name: str) -> Callable[..., Any] | None:
        """The function provided for ``name``, or None: for what a store without the
        plug-in does without (a query asks whether a graph is a table's)."""
        function = self._functions.get(name)
        if isinstance(function, str):
            function = self._functions[name] = resolve(function)
        return function

    def __repr__(self) -> str:
        return f"<fstore.Plugins {list(self.names)!r}>"


def load_plugins(names: Sequence[str] = DEFAULT_PLUGINS) -> Plugins:
    """The plug-ins named (module names), each imported and its ``register`` called on a
    new :class:`Plugins`; a module is imported once a process (Python keeps it), so an
    open pays this only the first time."""
    plugins = Plugins(names)
    for name in names:
        importlib.import_module(name).register(plugins)
    return plugins
