"""State digests: an order-independent hash of everything a commit holds.

The digest of a state is the sum, modulo 2^256, of one sha256 per tuple alive in it, over
both spaces: ``h(t) = sha256(mark || identity(t))`` read as a big-endian integer, where
``identity`` is the tuple's stored values packed one after another (``pack_value`` of
each, the bytes a change record starts with) and ``mark`` is its space's mark (none for
quads, ``ff`` for table tuples). A sum does not depend on the order tuples came in, so
two stores holding the same quads and rows have the same digest whatever their histories,
and a commit's digest is its parent's plus the tuples it added less those it removed:
O(its changes). Each commit id covers its digest (``docs/format.md``).

>>> one, two = b"\\x40urn:a\\x00", b"\\x40urn:b\\x00"
>>> moved(moved(EMPTY, [one], []), [two], []) == moved(EMPTY, [two, one], [])
True
>>> moved(moved(EMPTY, [one, two], []), [], [one]) == moved(EMPTY, [two], [])
True
>>> len(as_hex(EMPTY))
64
"""

from __future__ import annotations

import hashlib
from typing import Iterable

__all__ = ["EMPTY", "MODULUS", "tuple_hash", "moved", "as_hex", "from_hex"]

MODULUS = 1 << 256
EMPTY = 0
"""The digest of a state with no tuples."""


def tuple_hash(marked_identity: bytes) -> int:
    """``h(t)`` of one tuple, given ``mark || identity(t)``."""
    return int.from_bytes(hashlib.sha256(marked_identity).digest(), "big")


def moved(digest: int, born: Iterable[bytes], dead: Iterable[bytes]) -> int:
    """The digest after the tuples ``born`` (``mark || identity`` each) came alive and the
    tuples ``dead`` died; each must not be alive, or be alive, before (the caller knows)."""
    total = digest
    for marked in born:
        total += tuple_hash(marked)
    for marked in dead:
        total -= tuple_hash(marked)
    return total % MODULUS


def as_hex(digest: int) -> str:
    """A digest as stored: 64 lower-case hex digits (32 bytes, big-endian)."""
    return digest.to_bytes(32, "big").hex()


def from_hex(text: str) -> int:
    return int(text, 16)
