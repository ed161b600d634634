"""Typed errors of the datae storage layers; every one says what was wrong and where."""

from __future__ import annotations

__all__ = [
    "DataeError",
    "PackError",
    "TransactionError",
    "ReadOnlyTransactionError",
    "TransactionClosedError",
    "TransactionTooLargeError",
    "PatternError",
    "CorruptBlobError",
    "FormatVersionError",
    "CorruptStoreError",
    "StoreFileError",
    "SettingError",
    "StoreWriteError",
    "InvalidTermError",
]


class DataeError(Exception):
    """Base class of every error datae raises on purpose."""


class PackError(DataeError, TypeError):
    """A value cannot be packed (wrong type, non-finite decimal, invalid Unicode), or
    packed bytes are malformed. A ``TypeError`` so that ``pack(object())`` fails as
    Python users expect."""


class TransactionError(DataeError):
    """A transaction was used in a way its mode or state forbids."""


class ReadOnlyTransactionError(TransactionError):
    """A write was attempted inside a read-only transaction."""


class TransactionClosedError(TransactionError):
    """The transaction was already committed or aborted (e.g. an iterator outlived it)."""


class TransactionTooLargeError(TransactionError):
    """The map filled during a transaction too large to replay after growing it."""


class PatternError(DataeError, ValueError):
    """A tuple or pattern does not fit the store (wrong arity, bad variable)."""


class CorruptBlobError(DataeError):
    """A stored blob no longer hashes to its content address."""


class FormatVersionError(DataeError):
    """The store on disk has a format version this code cannot read."""


class CorruptStoreError(DataeError):
    """The store's keys contradict each other (e.g. a key refers to a term id the
    dictionary does not hold): the file is damaged."""


class StoreFileError(CorruptStoreError):
    """The store's LMDB file cannot be opened as it is (empty, truncated, not an LMDB
    file): the message names the file and what is wrong, and nothing was written."""


class SettingError(DataeError, ValueError):
    """A setting (an option or an environment variable) has a value datae cannot use; the
    message names the setting and the value."""


class StoreWriteError(TransactionError):
    """A commit could not be written (a full disk, an I/O error): the store keeps its
    last committed state."""


class InvalidTermError(DataeError, ValueError):
    """A value is not a term the store can hold (an IRI that breaks RFC 3987, None where a
    term is required, an integer or decimal too long to write out, a malformed language
    tag). ``value`` is the value and ``reason`` what is wrong with it; the message names
    both, and where the value was given."""

    def __init__(self, value: object, reason: str, where: str = "") -> None:
        self.value = value
        self.reason = reason
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{_shown(value)} is not a valid term: {reason}")


def _shown(value: object) -> str:
    """``repr(value)`` cut to 200 characters; an int too long for ``repr`` (Python refuses
    to write out more than 4300 digits) is named by its size instead."""
    if type(value) is int and value.bit_length() > 14_000:
        return f"an integer of {value.bit_length()} bits"
    return f"{value!r:.200}"
