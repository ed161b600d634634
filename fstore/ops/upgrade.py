"""Upgrading a store written in an older format (``datae upgrade``, ``fstore.upgrade``).

Format 6 keeps the regular feature tuples of tables as rows by table and primary key
(``fstore.core.rows``), not as dictionary terms in the generic n-tuple stores; the upgrade
moves them (their records and snapshot keys) and drops the terms nothing names any more.
Format 5 keeps with every snapshot its quads counted by graph and predicate (the query
planner's estimates); format 4 did not. Format 4 keeps the dictionary, the change records
and the snapshots of both spaces in prefix-compressed blocks (``nstore.blocks``); format 3
held the same keys as one LMDB pair each. So the upgrade is a rewrite of the file: every
pair in key order (a format-3 store's blocked keyspaces turned into blocks as they stream
past), the format key set to the current one; then, in the new file, the rows are made and
every snapshot's counts are taken from the quads it holds. It runs as a compaction does (:func:`nstore.lmdbfile.compact`):
the new file is written beside the old one, flushed, completed and **verified** (every
check of ``datae verify``) before it replaces the old one in one rename; a crash, a full
disk or a failed check leaves the old file as it was. A second compaction then leaves out
the pages the completion freed.

>>> import tempfile, fstore
>>> path = tempfile.mkdtemp()
>>> fstore.open(path).close()
>>> upgrade(path).upgraded
False
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator

from nstore import okvs
from nstore.blocks import Blocks, into_blocks
from nstore.errors import CorruptStoreError, FormatVersionError
from nstore.lmdbfile import compact, exclusive

from ..core.layout import BLOCKED, FORMAT_KEY
from ..core.storage import FORMAT_VERSION, UPGRADABLE, Storage
from .verify import verify

__all__ = ["upgrade", "UpgradeReport", "UPGRADABLE"]


@dataclass
class UpgradeReport:
    """What :func:`upgrade` did: the format the store held, whether it was rewritten, and
    the file's bytes before and after."""

    version: int
    upgraded: bool
    bytes_before: int = 0
    bytes_after: int = 0


def upgrade(path: str | os.PathLike, map_size: int | None = None) -> UpgradeReport:
    """Rewrite the store at ``path`` in the current format if it holds an older one (see
    the module doc); no handle may have it open. A store in the current format is left
    alone; one in a format this datae cannot upgrade raises :class:`FormatVersionError`,
    one whose rewrite fails verify raises :class:`IntegrityError` naming the problems, both
    leaving the file as it was."""
    directory = os.fspath(path)
    with exclusive(directory):
        db = okvs.open(directory, map_size=map_size)
        try:
            with db.transaction() as tx:
                stored = tx.get(FORMAT_KEY)
        finally:
            db.close()
        version = int(stored) if stored is not None and stored.isdigit() else -1
        if version == FORMAT_VERSION:
            return UpgradeReport(version, False)
        if version not in UPGRADABLE:
            shown = stored.decode(errors="replace") if stored is not None else "none"
            raise FormatVersionError(f"{directory} holds datae format {shown}; this datae upgrades formats "
                                     f"{', '.join(map(str, sorted(UPGRADABLE)))} to {FORMAT_VERSION}")
        before, after = compact(directory, transform=_rewrite_from(version), finish=_completed)
        # The rows replaced the feature tuples' dictionary terms and index keys inside the
        # new file, which LMDB keeps the freed pages of: a second copy leaves them out.
        after = compact(directory)[1]
    return UpgradeReport(version, True, before, after)


def _rewrite_from(version: int) -> Callable[[Iterator[tuple[bytes, bytes]]], Iterator[tuple[bytes, bytes]]]:
    """The rewrite of a store's pairs from format ``version`` (3, 4 or 5) into the current one."""

    def rewrite(pairs: Iterator[tuple[bytes, bytes]]) -> Iterator[tuple[bytes, bytes]]:
        if version == 3:
            pairs = into_blocks(pairs, [Blocks.under(prefix) for prefix in BLOCKED])
        for key, value in pairs:
            yield key, (str(FORMAT_VERSION).encode() if key == FORMAT_KEY else value)

    return rewrite


def _completed(directory: str) -> None:
    """Move the tables' regular feature tuples into rows (format 6), drop the dictionary
    terms no key names any more, count the quads of every snapshot (format 5's counts), all
    in one write transaction, then verify the rewritten store."""
    storage = Storage(directory)
    try:
        with storage.write() as writer:
            if storage.tables.adopt_rows(writer.tx):
                referenced = set().union(*(space.term_ids(writer.tx) for space in storage.spaces))
                storage.quads.dictionary.drop_unreferenced(writer.tx, referenced)
            for space in storage.spaces:
                space.heads.recount(writer.tx)
        with storage.read() as snapshot:
            problems = verify(snapshot)
    finally:
        storage.close()
    if problems:
        raise CorruptStoreError(f"the store upgraded to format {FORMAT_VERSION} fails verify, so the old file was kept: "
                             + "; ".join(problems[:5]))
