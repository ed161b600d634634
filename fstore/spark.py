"""Spark DataFrames of the store (needs ``pip install 'datae[spark]'``).

>>> import fstore.spark                                            # doctest: +SKIP
>>> df = fstore.spark.quads_dataframe(repo, "main", spark)         # doctest: +SKIP
>>> df.groupBy("predicate").count().show()                         # doctest: +SKIP

See :mod:`fstore.export.spark` and ``docs/spark.md``.
"""

from .export.spark import (
    changes_dataframe,
    dataset_dataframe,
    export_changes,
    export_snapshot,
    quads_dataframe,
    result_dataframe,
    table_dataframe,
)

__all__ = [
    "quads_dataframe",
    "table_dataframe",
    "changes_dataframe",
    "export_snapshot",
    "export_changes",
    "dataset_dataframe",
    "result_dataframe",
]
