"""A term dictionary: each distinct IRI, blank node, string, literal or byte string is stored
once under a short id, and index keys hold the 6-byte :class:`~nstore.pack.TermRef` of it.

Numbers, booleans, dates and datetimes are not in the dictionary: their packing keeps their
order, so they stay inline in keys and a range of them is one scan. :meth:`Dictionary.encode`
returns such a value unchanged and anything else as the packed TermRef (a
:class:`~nstore.pack.Packed`, which stores put in keys as it is).

Keys (under the dictionary's ``prefix``; the format is in ``docs/format.md``):

* ``prefix + b"t" + pack_value(term)`` -> the TermRef item, for terms packing to at most
  :data:`INLINE_TERM` bytes; longer ones under ``prefix + b"h" + sha256(pack_value(term))``;
* ``prefix + b"i" + TermRef item`` -> ``pack_value(term)``;
* ``prefix + b"n"`` -> the next id, 8 bytes big-endian (ids are never reused).

Ids assigned in a write transaction are cached only once it commits, so an aborted one
leaves no trace in this process either.

>>> import tempfile
>>> from nstore import okvs
>>> from nstore.terms import IRI
>>> db = okvs.open(tempfile.mkdtemp())
>>> words = Dictionary(b"D")
>>> with db.transaction(write=True) as tx:
...     ref = words.encode(tx, IRI("urn:a"), create=True)
...     ref.hex(" "), words.encode(tx, 7, create=True), words.decode(tx, ref)
('50 00 00 00 00 00', 7, IRI('urn:a'))
>>> with db.transaction() as tx:
...     words.encode(tx, IRI("urn:b"), create=False) is ABSENT
True
>>> db.close()
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any, Iterable, Iterator

from .errors import CorruptStoreError
from .okvs import Transaction
from .pack import TERMREF_CODE, Packed, decode_item, pack_value
from .terms import IRI, BNode, Literal

__all__ = ["Dictionary", "INLINE_TERM", "KIND_OF", "ABSENT"]

# The TermRef kind of each type the dictionary holds; every other value stays inline.
KIND_OF: dict[type, int] = {IRI: 0, BNode: 1, str: 2, Literal: 3, bytes: 4}
INLINE_TERM = 400  # longest packed term keyed by itself (keys hold at most 511 bytes)
_CACHE_LIMIT = 1 << 20
ABSENT = type("Absent", (), {"__repr__": lambda self: "ABSENT", "__slots__": ()})()
"""What :meth:`Dictionary.encode` returns for a term it does not hold."""


class Dictionary:
    """The term dictionary under the key prefix ``prefix`` (see the module docstring)."""

    def __init__(self, prefix: bytes) -> None:
        self.prefix = prefix
        self._term_key = prefix + b"t"
        self._hash_key = prefix + b"h"
        self._id_key = prefix + b"i"
        self._next_key = prefix + b"n"
        self._refs: dict[Any, Packed] = {}  # committed: term -> TermRef item
        # Per open write transaction: the ids it assigned and its next id, published to
        # the caches above when it commits.
        self._fresh: weakref.WeakKeyDictionary[Transaction, dict] = weakref.WeakKeyDictionary()

    def key_of(self, term: Any) -> bytes:
        """The key under which a term's id is found."""
        packed = pack_value(term)
        if len(packed) <= INLINE_TERM:
            return self._term_key + packed
        return self._hash_key + hashlib.sha256(packed).digest()

    def encode(self, tx: Transaction, value: Any, *, create: bool) -> Any:
        """What stands in keys for ``value``: the value itself if it is stored inline, else
        its TermRef item; for a term not in the dictionary, a new id if ``create`` (in a
        write transaction), else :data:`ABSENT` (no key can hold it)."""
        kind = KIND_OF.get(type(value))
        if kind is None:
            return value
        ref = self._refs.get(value)
        if ref is not None:
            return ref
        fresh = self._fresh.get(tx) if tx.write else None
        if fresh is not None:
            ref = fresh["refs"].get(value)
            if ref is not None:
                return ref
        key = self.key_of(value)
        found = tx.get(key)
        if found is not None:
            ref = Packed(found)
            self._remember(value, ref)
            return ref
        if not create:
            return ABSENT
        return self._assign(tx, value, kind, key)

    def encode_many(self, tx: Transaction, values: Iterable[Any]) -> dict[Any, Any]:
        """:meth:`encode` with ``create=True`` of the terms among many values at once (a
        write transaction): ``{term: its TermRef item}`` for every value of a dictionary
        kind (others stand for themselves; they are left out, as Python's ``1 == 1.0 ==
        True`` would mix them up as keys), new terms given ids in one batch whose keys are
        written in key order."""
        found: dict[Any, Any] = {}
        wanted: dict[Any, None] = {}
        refs = self._refs
        fresh = self._fresh.get(tx)
        fresh_refs = fresh["refs"] if fresh is not None else {}
        for value in values:
            if type(value) not in KIND_OF or value in found or value in wanted:
                continue
            ref = refs.get(value) or fresh_refs.get(value)
            if ref is not None:
                found[value] = ref
            else:
                wanted[value] = None
        new: list[tuple[Any, bytes, bytes]] = []  # (term, key, packed term)
        # A dictionary empty when this transaction started holds only what it assigned.
        get = tx.get if self._fresh_state(tx)["first"] else (lambda key: None)
        for value in wanted:
            packed = pack_value(value)
            key = self._term_key + packed if len(packed) <= INLINE_TERM else self._hash_key + hashlib.sha256(packed).digest()
            stored = get(key)
            if stored is not None:
                found[value] = ref = Packed(stored)
                self._remember(value, ref)
            else:
                new.append((value, key, packed))
        if new:
            fresh = self._fresh_state(tx)
            number = fresh["next"]
            by_term, by_id = [], []
            for value, key, packed in new:
                item = bytes([TERMREF_CODE + KIND_OF[type(value)]]) + number.to_bytes(5, "big")
                number += 1
                by_term.append((key, item))
                by_id.append((self._id_key + item, packed))
                found[value] = ref = Packed(item)
                fresh["refs"][value] = ref
                fresh["terms"][item] = value
            fresh["next"] = number
            # One ascending batch ("h" < "i" < "t" keys): appended whole into a new dictionary.
            tx.set_many(sorted(by_term + by_id), ascending=True)
            tx.set(self._next_key, number.to_bytes(8, "big"))
        return found

    def _fresh_state(self, tx: Transaction) -> dict:
        """What ``tx`` assigned so far, and its next id (read once per transaction)."""
        fresh = self._fresh.get(tx)
        if fresh is None:
            stored = tx.get(self._next_key)
            first = int.from_bytes(stored, "big") if stored else 0
            fresh = {"next": first, "first": first, "refs": {}, "terms": {}}
            self._fresh[tx] = fresh
            tx.on_commit(lambda: self._publish(fresh))
        return fresh

    def _assign(self, tx: Transaction, value: Any, kind: int, key: bytes) -> Packed:
        fresh = self._fresh_state(tx)
        number = fresh["next"]
        fresh["next"] = number + 1
        item = bytes([TERMREF_CODE + kind]) + number.to_bytes(5, "big")
        ref = Packed(item)
        tx.set(key, item)
        tx.set(self._id_key + item, pack_value(value))
        tx.set(self._next_key, fresh["next"].to_bytes(8, "big"))
        fresh["refs"][value] = ref
        fresh["terms"][item] = value
        return ref

    def _publish(self, fresh: dict) -> None:
        for value, ref in fresh["refs"].items():
            self._remember(value, ref)

    def _remember(self, value: Any, ref: Packed) -> None:
        if len(self._refs) >= _CACHE_LIMIT:
            self._refs.clear()
        self._refs[value] = ref

    def decode(self, tx: Transaction, item: bytes) -> Any:
        """The term a TermRef item stands for (any other item decoded as it is); one read
        of the dictionary: readers cache by item themselves (see :meth:`is_fresh`)."""
        if not TERMREF_CODE <= item[0] < TERMREF_CODE + len(KIND_OF):
            return decode_item(item)
        if tx.write:
            fresh = self._fresh.get(tx)
            if fresh is not None and item in fresh["terms"]:
                return fresh["terms"][item]
        packed = tx.get(self._id_key + item)
        if packed is None:
            raise CorruptStoreError(f"term id {item.hex()} is in a key but not in the dictionary")
        return decode_item(packed)

    def is_fresh(self, tx: Transaction, item: bytes) -> bool:
        """Whether ``item`` is an id that ``tx`` assigned (and an abort would take back)."""
        fresh = self._fresh.get(tx) if tx.write else None
        return fresh is not None and item in fresh["terms"]

    def entries(self, tx: Transaction) -> Iterator[tuple[bytes, Any]]:
        """Every ``(TermRef item, term)`` stored, in id-key order (for verify and stats)."""
        start = self._id_key
        for key, packed in tx.range(start, start + b"\xff"):
            yield key[len(start):], decode_item(packed)
