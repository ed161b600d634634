"""Garbage collection: drop what no ref or reflog entry reaches, then compact.

:func:`collect` runs in one write transaction (so a crash leaves the store as it was):

1. reflog entries older than the expiry are dropped (git's ``gc.reflogExpire``: a
   deleted branch's commits stay reachable for that long, 30 days by default);
2. the commits that no branch, tag, remote-tracking branch (as git keeps
   ``refs/remotes``), remaining reflog entry or merge in progress reaches are dropped
   with their change records (a long value's blob loses a reference each; one that no
   record holds any more is deleted);
3. snapshots no branch reads are dropped;
4. dictionary terms no key holds any more are dropped.

Then :func:`gc` has :func:`nstore.lmdbfile.compact` rewrite every pair in key order into full pages and
swaps the new file in atomically: LMDB reuses freed pages but never shrinks its file, so
without this a store keeps the size of its largest past.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> repo.branch("tmp")
>>> with repo.transaction("tmp", message="scratch") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "x")
>>> repo.delete_branch("tmp")
>>> report = repo.gc(expire=datetime.timedelta(0))
>>> report.commits, report.records, report.terms
(1, 1, 3)
>>> repo.close()
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

from nstore.lmdbfile import compact, exclusive

from ..core.storage import Writer
from ..core.refs import BRANCH, REMOTE, TAG
from ..core.storage import Storage

__all__ = ["GcReport", "collect", "gc", "DEFAULT_EXPIRY"]

DEFAULT_EXPIRY = datetime.timedelta(days=30)


@dataclass
class GcReport:
    """What a gc dropped, and the file's size before and after compaction."""

    commits: int = 0
    records: int = 0
    snapshots: int = 0
    terms: int = 0
    reflog_entries: int = 0
    bytes_before: int = 0
    bytes_after: int = 0


def gc(path: str | os.PathLike, map_size: int | None, expire: datetime.timedelta) -> GcReport:
    """Collect (:func:`collect`) and compact the store at ``path``, which no handle may
    hold open, in this process or another (refused before any change otherwise)."""
    with exclusive(os.fspath(path)):
        storage = Storage(path, map_size=map_size)
        try:
            with storage.write() as writer:
                report = collect(writer, expire, datetime.datetime.now(datetime.timezone.utc))
        finally:
            storage.close()
        report.bytes_before, report.bytes_after = compact(os.fspath(path))
    return report


def collect(writer: Writer, expire: datetime.timedelta, now: datetime.datetime) -> GcReport:
    """Steps 1-4 of the module doc, through ``writer``."""
    report = GcReport()
    storage, tx = writer.storage, writer.tx
    refs, commits = storage.refs, storage.commits
    report.reflog_entries = refs.expire_reflog(tx, now - expire)
    roots = [seq for kind in (BRANCH, TAG, REMOTE) for _, seq in refs.items(tx, kind) if seq is not None]
    roots += [seq for _, _, _, seq in refs.reflog(tx)]
    roots += writer.merge_roots()
    reachable: set[int] = set()
    for seq in roots:
        if seq not in reachable:
            reachable |= commits.ancestors(tx, seq)
    for seq, record in list(commits.all(tx)):
        if seq in reachable:
            continue
        for space in storage.spaces:
            report.records += space.drop_records(tx, seq)
        commits.delete(tx, seq, record["id"])
        report.commits += 1
    for space in storage.spaces:
        report.snapshots += space.heads.drop_unused(tx)
    referenced = set().union(*(space.term_ids(tx) for space in storage.spaces))
    report.terms = storage.quads.dictionary.drop_unreferenced(tx, referenced)
    return report
