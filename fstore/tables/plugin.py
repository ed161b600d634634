"""The tables plug-in (see :mod:`fstore.plugins`): what a repository opened with it
(the default) calls for tables — ``View.table``, ``Transaction.table``, the
``Repository.table_*`` methods — and the merger of dataset graphs, cell by cell. They are
named by reference, so opening a store imports only this module and :mod:`.mapping`; the
table modules load when a table is first read, written, diffed or merged.

>>> from fstore.plugins import Plugins
>>> plugins = Plugins()
>>> register(plugins)
>>> plugins.provided("open_table").__module__, plugins.graph_mergers
('fstore.tables.store', [<DeferredMerger fstore.tables.row_merge:TableMerger>])
"""

from __future__ import annotations

from ..plugins import Plugins
from .mapping import is_dataset_graph

__all__ = ["register"]


def register(plugins: Plugins) -> None:
    """Register the table functions and the table merger with a repository's plug-ins."""
    for name, module in (("table_at", "access"), ("open_table", "store"), ("table_diff", "changes"),
                         ("table_log", "changes"), ("table_blame", "changes"), ("table_diffs", "changes")):
        plugins.provide(name, f"fstore.tables.{module}:{name}")
    plugins.add_graph_merger("fstore.tables.row_merge:TableMerger", claims=is_dataset_graph)
