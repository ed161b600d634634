"""Where each part of a repository lives in its one ordered keyspace (``docs/format.md``).

A repository holds two versioned **spaces** of n-tuples with the same machinery (change
records, materialised heads) and one shared term dictionary: ``QUADS``, the RDF dataset,
and ``TABLES``, the rows, schemas and legends of tables (Kart datasets), so that no table
tuple is ever read as a quad. A commit records changes in both; its id hashes the records
of each space, marked by the space.

Keys start with a packed tuple (``02`` a string, ``05`` a nested tuple) except the spaces'
n-tuple stores and the dictionary, which have one-byte prefixes of their own from ``90``:
their keys are the most numerous, so each saves four or five bytes a key. The prefixes
ascend in the order a commit writes (dictionary, records, snapshot), so the first load
into a new store appends every batch and LMDB fills its pages.

>>> DICTIONARY, QUADS.records, QUADS.snapshots, TABLES.records
(b'\x90', b'\x91', b'\x92', b'\x93')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nstore.pack import pack

__all__ = ["Quad", "Space", "QUADS", "TABLES", "SPACES", "BLOCKED", "DICTIONARY", "ROW_RECORDS", "ROW_SNAPSHOTS", "FORMAT_KEY", "CURRENT_BRANCH_KEY",
           "REQUEST", "REQUEST_MIRROR", "MERGE_STATE_KEY", "MERGE_CONFLICT", "MERGE_RESOLUTION", "MERGE_PREFIX", "SCRATCH"]

Quad = tuple[Any, Any, Any, Any]  # (graph, subject, predicate, object), or a table tuple in the same shape
FORMAT_KEY = pack("datae", "format")
CURRENT_BRANCH_KEY = pack("datae", "current-branch")
DICTIONARY = b"\x90"
# Merge requests (fstore.sync.merge_requests): repository metadata, in no commit. ``pack(REQUEST, n)`` is
# this store's request n; ``pack(REQUEST_MIRROR, remote, n)`` a read-only copy of a remote's,
# made by fetch.
REQUEST = "q"
REQUEST_MIRROR = "Q"
# A merge stopped on conflicts (optional keys, absent unless a merge is in progress; see
# fstore.ops.merge_state): its state, each conflict by key, and each resolution by key.
MERGE_PREFIX = pack("merge")
MERGE_STATE_KEY = pack("merge", "state")
MERGE_CONFLICT = pack("merge", "conflict")
MERGE_RESOLUTION = pack("merge", "resolution")
# The intents of a large write transaction, spilled from memory (fstore.transaction.Staged):
# ``SCRATCH + pack(space name) + packed quad``, keys of that one LMDB write transaction's
# scratch table (a file of its own, nstore.okvs.SCRATCH_PREFIX, removed when it ends), never of the store.
SCRATCH = pack("scratch")


@dataclass(frozen=True)
class Space:
    """The keys of one versioned space: its change records' and snapshots' n-tuple store
    prefixes, the tags of its snapshot metadata (``pack(meta, k)``), of each branch's
    snapshot (``pack(branch, name)``) and of each snapshot's counts (``pack(counts, k, kind)``,
    format 5), and the byte the commit id puts before each of its records."""

    name: str
    records: bytes
    snapshots: bytes
    meta: str
    branch: str
    mark: bytes
    counts: str


QUADS = Space("quads", b"\x91", b"\x92", "S", "B", b"", "SC")
TABLES = Space("tables", b"\x93", b"\x94", "TS", "TB", b"\xff", "TSC")  # no packed item starts with 0xff
SPACES = (QUADS, TABLES)
# The rows of tables (format 6, fstore.core.rows): their records and their snapshots, part of
# the tables space (the same tuples, ids and digests), kept by table and primary key.
ROW_RECORDS = b"\x95"
ROW_SNAPSHOTS = b"\x96"
# The keyspaces kept in prefix-compressed blocks (format 4; nstore.blocks.Blocks.under each).
BLOCKED = (DICTIONARY, QUADS.records, QUADS.snapshots, TABLES.records, TABLES.snapshots, ROW_RECORDS, ROW_SNAPSHOTS)
