"""Typed errors of reading and writing RDF files (:mod:`fstore.rdf`, which exports them)."""

from __future__ import annotations

from nstore.errors import DataeError

__all__ = ["RdfSyntaxError", "RdfNestingError", "RdfFormatError"]


class RdfSyntaxError(DataeError, ValueError):
    """An RDF file could not be parsed; the message names the file, line and column, which
    are also ``line`` and ``column`` (1-based; None when the fault has no position)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        super().__init__(message)


class RdfFormatError(DataeError, ValueError):
    """An RDF format that is unknown, or that cannot hold the quads given (a triples format,
    such as Turtle, holds one graph)."""


class RdfNestingError(RdfSyntaxError):
    """A document nests deeper than its parser can take (see :mod:`fstore.rdf_depth`):
    refused before it is parsed, at the ``line`` and ``column`` where the level past the
    limit opens."""

