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
from typing import TYPE_CHECKING, Iterable, Sequence

from nstore._pack import record_sums
from nstore.dictionary import KIND_OF
from nstore.pack import BLOBREF_CODE, TERMREF_CODE

if TYPE_CHECKING:
    from nstore.okvs import Transaction

    from .history import History

__all__ = ["EMPTY", "MODULUS", "tuple_hash", "moved", "moved_by_records", "as_hex", "from_hex", "PackedItems", "identity_sum"]

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


def moved_by_records(digest: int, records: list[bytes], mark: bytes = b"") -> tuple[int, int, int]:
    """:func:`moved` by change records (a packed tuple, then ``01`` alive or ``00`` dead)
    of the space of ``mark``: the digest after them, and how many came alive and died (the
    hashes summed in C, :func:`nstore._pack.record_sums`).

    >>> one = b"\\x40urn:a\\x00"
    >>> moved_by_records(EMPTY, [one + b"\\x01"]) == (moved(EMPTY, [one], []), 1, 0)
    True
    """
    born, dead, alive, gone = record_sums(records, mark, hashlib.sha256)
    return (digest + born - dead) % MODULUS, alive, gone


def as_hex(digest: int) -> str:
    """A digest as stored: 64 lower-case hex digits (32 bytes, big-endian)."""
    return digest.to_bytes(32, "big").hex()


def from_hex(text: str) -> int:
    return int(text, 16)


_REFS = (TERMREF_CODE, TERMREF_CODE + len(KIND_OF))  # the first bytes of dictionary ids
_BATCH = 1 << 16  # ids a batched read decodes at once: bounds its term objects


class PackedItems(dict):
    """``items[item]``: the packed value (``pack_value``, what identities join) of one key
    item of ``space`` read in ``tx``: its term's for a dictionary id, its bytes' for a
    blob reference, its own value's for an inline item. For a pass over every tuple (verify):
    a key holds items, and a term's id occurs in many keys, so each is decoded and packed
    once. A blob is not kept (a read hash-checks it every time); at ``limit`` items the
    memo starts over, so memory stays bounded on any store.

    >>> import tempfile, fstore
    >>> from nstore.pack import pack_value
    >>> quad = (None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="one") as tx:
    ...     fstore.add(tx, *quad)
    >>> with repo.storage.read() as snapshot:
    ...     space = repo.storage.quads
    ...     (items, _), = space.raw_changes_of(snapshot.tx, snapshot.head("main"))
    ...     packed = PackedItems(space, snapshot.tx)
    ...     packed.fill(items)  # optional: the ids among them read at once
    ...     [packed[item] for item in items] == [pack_value(value) for value in quad]
    True
    >>> repo.close()
    """

    def __init__(self, space: History, tx: Transaction, limit: int = 1 << 20) -> None:
        super().__init__()
        self.tx = tx
        self.value = space.value
        self.packed_many = space.dictionary.packed_many
        self.pack = space.store.packed
        self.limit = limit

    def fill(self, items: Iterable[bytes]) -> None:
        """Read the packed values of the dictionary ids among ``items`` in batches
        (``Dictionary.packed_many``: the stored packings, each block read once, no term
        decoded); the other items are made when first asked for. A missing id raises as
        that read does: the first one in ``items``."""
        refs = [item for item in dict.fromkeys(items) if item not in self and _REFS[0] <= item[0] < _REFS[1]]
        for start in range(0, len(refs), _BATCH):
            batch = refs[start:start + _BATCH]
            if len(self) + len(batch) > self.limit:
                self.clear()
            self.update(zip(batch, self.packed_many(self.tx, batch)))

    def __missing__(self, item: bytes) -> bytes:
        packed = self.pack(self.value(self.tx, item))
        if item[0] != BLOBREF_CODE:
            if len(self) >= self.limit:
                self.clear()
            self[item] = packed
        return packed


def identity_sum(rows: Iterable[Sequence[bytes]], mark: bytes, items: PackedItems) -> int:
    """The sum of ``h(t)`` (not yet reduced modulo :data:`MODULUS`) of the tuples whose
    key items are ``rows`` (each in identity order: g, s, p, o) in the space of ``mark``:
    :func:`moved` from no tuple, for rows read raw from keys."""
    join, sha256, number, item = b"".join, hashlib.sha256, int.from_bytes, items.__getitem__
    total = 0
    for row in rows:
        total += number(sha256(mark + join(map(item, row))).digest(), "big")
    return total
