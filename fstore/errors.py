"""Typed errors of the versioned store, and of writing its data out as Arrow / Parquet
(:class:`ExportError`, :class:`MissingDependencyError`: raised by the table code,
``fstore.tables.arrow_types``, as by the export, ``fstore.export``, which re-exports them)."""

from __future__ import annotations

from typing import Any

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
    "ConflictsRecorded",
    "RevertConflict",
    "MergeInProgressError",
    "NoMergeInProgressError",
    "UnresolvedConflictsError",
    "UnknownConflictError",
    "MergeStaleError",
    "ResolutionError",
    "ResetRefusedError",
    "AmbiguousStoreError",
    "ExportError",
    "MissingDependencyError",
    "require",
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

    ``conflicts`` lists each one as a :class:`fstore.ops.three_way.Conflict`.
    """

    def __init__(self, conflicts: list) -> None:
        self.conflicts = conflicts
        shown = "; ".join(str(c) for c in conflicts[:5])
        more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
        super().__init__(f"{len(conflicts)} merge conflict(s): {shown}{more}")


class ConflictsRecorded(MergeConflict):
    """A merge stopped on conflicts and recorded them as the merge in progress (git's
    "Automatic merge failed"): nothing was committed; settle each conflict
    (``Repository.resolve_conflicts``) then ``merge_continue``, or ``merge_abort``. ``items`` lists
    them as :class:`fstore.ops.conflicts.ConflictItem`, each with its key."""

    def __init__(self, conflicts: list, items: list) -> None:
        self.items = items
        super().__init__(conflicts)
        self.args = (f"{self.args[0]}; the merge is in progress: resolve them and continue, or abort",)


class RevertConflict(MergeConflict):
    """A revert would undo changes that later commits changed again; nothing was written."""


class MergeInProgressError(MergeError):
    """Refused while a merge is in progress (continue or abort it first)."""


class NoMergeInProgressError(MergeError):
    """A continue, abort or resolve with no merge in progress."""


class UnresolvedConflictsError(MergeError):
    """A merge cannot be continued: ``keys`` name the conflicts still unresolved."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = list(keys)
        super().__init__(f"{len(self.keys)} unresolved conflict(s): {', '.join(self.keys)}; "
                         "resolve them first (datae resolve --ours|--theirs KEY)")


class UnknownConflictError(MergeError, KeyError):
    """No conflict of the merge in progress has that key."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MergeStaleError(MergeError):
    """The branch being merged into moved since the merge started (abort and merge again)."""


class ResolutionError(MergeError, ValueError):
    """A value given to settle a conflict does not fit it."""


class ResetRefusedError(FstoreError):
    """A reset would drop commits that no other ref reaches (``hard`` to drop them)."""


class AmbiguousStoreError(FstoreError, ValueError):
    """A folder holds a store of its own and a ``.datae`` store: ``fstore.open`` will not
    guess which one was meant (the message names both)."""


class ExportError(FstoreError, ValueError):
    """An export could not be written as asked; the message names the table, column, value
    or file concerned."""


class MissingDependencyError(FstoreError, ImportError):
    """An optional dependency of the export (pyarrow, pyspark) is not installed."""


def require(module: str, purpose: str) -> Any:
    """Import ``module`` or raise :class:`MissingDependencyError` saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs {module.split('.')[0]}, which is not installed: pip install 'datae[spark]' ({exc})"
        ) from None
