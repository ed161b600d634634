"""The tables plug-in (see :mod:`fstore.plugins`): what a repository opened with it
(the default) calls for tables — ``View.table``, ``Transaction.table``, the
``Repository.table_*`` methods — and the merger of dataset graphs, cell by cell.

>>> from fstore.plugins import Plugins
>>> plugins = Plugins()
>>> register(plugins)
>>> plugins.provided("open_table").__module__, type(plugins.graph_mergers[0]).__name__
('fstore.tables.store', 'TableMerger')
"""

from __future__ import annotations

from ..plugins import Plugins
from .access import table_at
from .changes import table_blame, table_diff, table_diffs, table_log
from .row_merge import TableMerger
from .store import open_table

__all__ = ["register"]


def register(plugins: Plugins) -> None:
    """Register the table functions and the table merger with a repository's plug-ins."""
    for name, function in (("table_at", table_at), ("open_table", open_table), ("table_diff", table_diff),
                           ("table_log", table_log), ("table_blame", table_blame), ("table_diffs", table_diffs)):
        plugins.provide(name, function)
    plugins.add_graph_merger(TableMerger())
