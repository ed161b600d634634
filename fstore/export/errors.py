"""Typed errors of the Spark / Parquet export: defined in :mod:`fstore.errors`, since the
tables' own Arrow code (``fstore.tables.arrow_types``, below the export) raises them too."""

from __future__ import annotations

from ..errors import ExportError, MissingDependencyError, require

__all__ = ["ExportError", "MissingDependencyError", "require"]
