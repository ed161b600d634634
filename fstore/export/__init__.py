"""Snapshots of the store for Apache Spark and any Parquet reader.

* :mod:`.terms` — quads as typed columns (pure Python)
* :mod:`.arrow` — the Arrow schemas, and the store / a table streamed as record batches
  (a table typed and converted by :mod:`fstore.tables.arrow_types` / ``arrow_batches``)
* :mod:`.sparktypes` — Kart and Arrow types as Spark SQL types (JSON form; no pyspark)
* :mod:`.changes` — the changes between two commits as typed rows (a change data feed)
* :mod:`.kartothek` — the Kartothek layout (one dataset per table) and reading it back
* :mod:`.dataset_writer` — writing one version of a dataset, committed atomically
* :mod:`.snapshot` — :func:`~.snapshot.export_snapshot` / :func:`~.snapshot.export_changes`:
  a commit, or the changes between two, as datasets that plateau, Spark and pyarrow read
* :mod:`fstore.spark` — the DataFrame functions (imports pyspark)

pyarrow and pyspark are optional (``pip install 'datae[spark]'``): importing ``fstore`` or
this package imports neither; the modules that need them import them.
"""

from .errors import ExportError, MissingDependencyError

__all__ = ["ExportError", "MissingDependencyError"]
