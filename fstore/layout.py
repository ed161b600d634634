"""Where each part of a repository lives in its one ordered keyspace (``docs/format.md``).

A repository holds two versioned **spaces** of n-tuples with the same machinery (change
records, materialised heads) and one shared term dictionary: ``QUADS``, the RDF dataset,
and ``TABLES``, the rows, schemas and legends of tables (Kart datasets), so that no table
tuple is ever read as a quad. A commit records changes in both; its id hashes the records
of each space, marked by the space.

>>> QUADS.records, TABLES.records
(('h',), ('th',))
"""

from __future__ import annotations

from dataclasses import dataclass

from nstore.pack import pack

__all__ = ["Space", "QUADS", "TABLES", "SPACES", "DICTIONARY", "FORMAT_KEY", "CURRENT_BRANCH_KEY"]

FORMAT_KEY = pack("datae", "format")
CURRENT_BRANCH_KEY = pack("datae", "current-branch")
DICTIONARY = pack(("d",))


@dataclass(frozen=True)
class Space:
    """The keys of one versioned space: its change records' and snapshots' n-tuple store
    prefixes, the tags of its snapshot metadata (``pack(meta, k)``) and of each branch's
    snapshot (``pack(branch, name)``), and the byte the commit id puts before each of its
    records."""

    name: str
    records: tuple[str, ...]
    snapshots: tuple[str, ...]
    meta: str
    branch: str
    mark: bytes


QUADS = Space("quads", ("h",), ("s",), "S", "B", b"")
TABLES = Space("tables", ("th",), ("ts",), "TS", "TB", b"\xff")  # no packed item starts with 0xff
SPACES = (QUADS, TABLES)
