"""Snapshots of the store for Apache Spark and any Parquet reader.

* :mod:`.terms` — quads as typed columns (pure Python)
* :mod:`.arrow` — the Arrow schemas, and the store / a table streamed as record batches
* :mod:`.sparktypes` — Kart and Arrow types as Spark SQL types (JSON form; no pyspark)
* :mod:`.kartothek` — writing and reading a dataset in Kartothek layout (any filesystem)
* :mod:`.snapshot` — :func:`~.snapshot.export_snapshot`: a commit as a Kartothek dataset
* :mod:`.spark` — the DataFrame functions (``fstore.spark`` re-exports them)

pyarrow and pyspark are optional (``pip install 'datae[spark]'``): importing ``fstore`` or
this package imports neither; the modules that need them import them.
"""

from .errors import ExportError, MissingDependencyError

__all__ = ["ExportError", "MissingDependencyError"]
