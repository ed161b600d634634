"""Typed errors of the Spark / Parquet export."""

from __future__ import annotations

from ..errors import FstoreError

__all__ = ["ExportError", "MissingDependencyError", "require"]


class ExportError(FstoreError, ValueError):
    """An export could not be written as asked; the message names the table, column, value
    or file concerned."""


class MissingDependencyError(FstoreError, ImportError):
    """An optional dependency of the export (pyarrow, pyspark) is not installed."""


def require(module: str, purpose: str):
    """Import ``module`` or raise :class:`MissingDependencyError` saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs {module.split('.')[0]}, which is not installed: pip install 'datae[spark]' ({exc})"
        ) from None
