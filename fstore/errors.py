"""Typed errors of the versioned store."""

from __future__ import annotations

from nstore.errors import DataeError

__all__ = [
    "FstoreError",
    "UnknownRefError",
    "AmbiguousRefError",
    "InvalidRefNameError",
    "RefExistsError",
    "RefInUseError",
    "ReadOnlyViewError",
    "MergeError",
    "MergeConflict",
]


class FstoreError(DataeError):
    """Base class of the versioned store's errors."""


class UnknownRefError(FstoreError, KeyError):
    """No branch, tag or commit answers to this name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class AmbiguousRefError(FstoreError, KeyError):
    """A commit-id prefix matches more than one commit."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidRefNameError(FstoreError, ValueError):
    """A branch or tag name breaks git's ref-name rules."""


class RefExistsError(FstoreError):
    """A branch or tag of that name already exists."""


class RefInUseError(FstoreError):
    """A branch cannot be deleted while it is the current branch."""


class ReadOnlyViewError(FstoreError):
    """A write was attempted through a read-only view of a commit."""


class MergeError(FstoreError):
    """A merge cannot be made (e.g. a branch into itself, or no common history)."""


class MergeConflict(FstoreError):
    """Both sides changed the objects of the same (graph, subject, predicate) differently.

    ``conflicts`` lists each one as a :class:`fstore.merge.Conflict`.
    """

    def __init__(self, conflicts: list) -> None:
        self.conflicts = conflicts
        shown = "; ".join(str(c) for c in conflicts[:5])
        more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
        super().__init__(f"{len(conflicts)} merge conflict(s): {shown}{more}")
