"""The tables plug-in (see :mod:`fstore.plugins`): what a repository opened with it
(the default) calls for tables — ``View.table``, ``Transaction.table``, the
``Repository.table_*`` methods, the query source's table graphs — and the merger of dataset graphs, cell by cell. They are
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
    # The query source's table graphs (fstore.query_source): the test of a graph name is
    # asked at every query, so it is given at once; the graphs load when a query names one.
    plugins.provide("is_table_graph", is_dataset_graph)
    plugins.provide("table_graphs", "fstore.tables.sparql_graphs:TableGraphs")
    plugins.provide("table_graph_changes", "fstore.tables.sparql_graphs:graph_changes")
    plugins.add_graph_merger("fstore.tables.row_merge:TableMerger", claims=is_dataset_graph)
